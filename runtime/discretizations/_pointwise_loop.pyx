# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The per-order loop of the AFT's pointwise ANM series, compiled (DESIGN §5.0, issue 12).

The same recurrence as ``Discretization.series_terms`` running ``AFTDiscretization.series_rhs``
order by order (``_base.py``, ``_aft.py``, ``_pointwise.py``), with no Python between the steps
of an order but numpy's two FFTs: for p = first..last, with ``Z_{p-1}`` known,

1. ``U_{p-1}, omega_{p-1}, lam_{p-1}`` from ``Z_{p-1}``; ``X_{p-1}`` = inverse FFT of ``U_{p-1}``
   (``_hbm.coefficients_to_samples``: ``Y_k = (c_k - i s_k) / 2``, ``norm="forward"``);
2. the Taylor kernel (the model's ``fk_taylor``, through its capsule) at order p-1 gives the
   auxiliaries ``A_{p-1}``, at order p (``x_p = lam_p = 0``) gives ``f_p``;
3. ``R_p`` = harmonics 0..H of ``f_p`` (``_hbm.samples_to_coefficients``:
   ``(c_k, s_k) = 2 (Re, -Im) Y_k``) ``- D W``, ``W = sum_{r=1..p-1} omega_r U_{p-r}`` (autonomous);
4. ``w = [J; t^T]^-1 [-R_p; 0]`` by LAPACK's dgetrs on the step's LU, ``Z_p = w - (w . Z_1) Z_1``
   (``engine/_anm.py``); when the engine eliminated the kinematic rows (``engine/_bordered.py``,
   ``_Reduction``), the right-hand side is reduced before and the solution expanded after the
   dgetrs on the Schur complement (:func:`_solve_reduced`), as ``_Reduction.solve`` does.

The arithmetic is done in the same order as the NumPy path (the same FFTs, the same products),
but for the sum ``W`` and the dot product, whose BLAS summation order may differ: the two
agree to rounding (tests/discretizations/test_pointwise_loop.py).
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pycapsule cimport PyCapsule_GetPointer
from scipy.linalg.cython_blas cimport ddot, dgemv
from scipy.linalg.cython_lapack cimport dgetrs

import numpy
from numpy.fft import irfft, rfft

# numpy.fft's own pocketfft gufuncs, without numpy.fft.irfft/rfft's argument handling (the same
# transforms and factors, the same bits), or None: the harmonic transforms' (_hbm.py) choice
from frictionkit.runtime.discretizations._hbm import (_IRFFT as _irfft, _RFFT_EVEN as _rfft_even,
                                                      _RFFT_ODD as _rfft_odd)

ctypedef void (*taylor_t)(const double *p, const double *t, Py_ssize_t ts, const double *X,
                          const double *LAM, const double *A, double *Sk, double *F, double **rows,
                          Py_ssize_t k, Py_ssize_t M) noexcept nogil

#: the capsule name of the kernel signature above (codegen/templates/cython_module.pyx.j2)
CAPSULE = b"frictionkit.fk_taylor.v1"


cdef int _solve_reduced(double[::1] rhs, double[::1, :] lu, int[::1] ipiv, int[::1] rows, int[::1] cols,
                        int[::1] o_rows, int[::1] o_cols, int[::1] pair_rows, int[::1] ppos,
                        int[::1] dpos, double[::1, :] C, double[::1] pv, double[:, ::1] Bd,
                        double[::1] br, double[::1] bo) noexcept nogil:
    """``rhs <- K^-1 rhs`` through the Schur complement's LU (``_Reduction.solve``):
    ``x_o = S^-1 (b_o - C b_r)``, ``x_c = b_r - Bd x_o[dpos] - pv * x_o[ppos]``; dgetrs's info."""
    cdef Py_ssize_t i, j, q
    cdef int k = <int>rows.shape[0], no = <int>o_rows.shape[0], one = 1, info = 0
    cdef char trans = b"N"
    cdef double minus = -1.0, plus = 1.0
    for q in range(k):
        br[q] = rhs[rows[q]]
    for i in range(no):
        bo[i] = rhs[o_rows[i]]
    dgemv(&trans, &no, &k, &minus, &C[0, 0], &no, &br[0], &one, &plus, &bo[0], &one)
    dgetrs(&trans, &no, &one, &lu[0, 0], &no, &ipiv[0], &bo[0], &no, &info)
    for q in range(k):
        for j in range(dpos.shape[0]):
            br[q] -= Bd[q, j] * bo[dpos[j]]
    for q in range(pair_rows.shape[0]):
        br[pair_rows[q]] -= pv[q] * bo[ppos[q]]
    for i in range(no):
        rhs[o_cols[i]] = bo[i]
    for q in range(k):
        rhs[cols[q]] = br[q]
    return info


def orders(capsule, params, t, X, LAM, A, U, om, lu, piv, T, Py_ssize_t first, Py_ssize_t last,
           Py_ssize_t omega_index, red=None, Py_ssize_t lo=0, Py_ssize_t hi=-1):
    """Fill ``T[first-1..last-1]`` (``Z_first..Z_last``) and the series' buffers.

    (About 100 lines: the four stages of an order share a dozen typed views of the buffers,
    which helper functions would have to take again; the stages are numbered as above.)

    Parameters
    ----------
    capsule : PyCapsule
        The model's Taylor kernel (``Model.taylor_kernel``).
    params, t : ndarray
        Parameter vector and sample times (``PointwiseSeries`` buffers: ``params``, ``t``).
    X, LAM, A, U, om : ndarray
        The series' buffers (n, M), (), (NAUX, M), (n, 2H+1), () per order, C-contiguous, orders
        ``0..first-2`` filled, zeros from ``first - 1`` on, at least ``last + 1`` orders; orbits
        or equilibria (one coefficient, one "sample": the states themselves).
    lu, piv : ndarray
        ``scipy.linalg.lu_factor`` of the bordered matrix (m+1, m+1), Fortran order; ``piv``
        0-based (converted here to LAPACK's 1-based); with ``red``, of its Schur complement.
    T : ndarray (last, m+1)
        ``T[p-1] = Z_p``; rows ``0..first-2`` given.
    first, last : int
        The orders to compute, ``2 <= first <= last``.
    omega_index : int
        Position of ``omega`` in ``Z`` (autonomous orbits), or -1 (forced: no ``omega`` products).
    red : dict, optional
        The elimination behind a reduced LU (``engine/_bordered._Bordered.reduction``).
    lo, hi : int, optional
        The states ``lo..hi-1`` whose ``f_p`` is transformed (default all, ``hi = -1``); the
        others must be kinematic (``x_i' = x_j``, ``Model.kinematic``): their ``f_p`` is
        ``x_{j,p} = 0``, so are their harmonics, and the forward FFT skips them.
    """
    cdef taylor_t kernel = <taylor_t>PyCapsule_GetPointer(capsule, CAPSULE)
    cdef double[::1] pv = params, tv = t, lamv = LAM, omv = om
    cdef double[:, :, ::1] Xv = X, Av = A, Uv = U
    cdef double[::1, :] luv = lu
    cdef double[:, ::1] Tv = T
    cdef Py_ssize_t n = Xv.shape[1], M = Xv.shape[2], naux = Av.shape[1], nh = Uv.shape[2]
    cdef Py_ssize_t size = Tv.shape[1], m = size - 1, n_coef = n * nh
    cdef Py_ssize_t ts = 0 if tv.shape[0] == 1 else 1
    if hi < 0:
        hi = n
    cdef Py_ssize_t p, i, j, r, q
    cdef int N = <int>size, one = 1, info = 0
    cdef char trans = b"N"
    cdef double d, k
    cdef double *Ur
    cdef bint reduced = red is not None
    cdef Py_ssize_t n_lu = size if not reduced else red["o_rows"].shape[0]
    if not (2 <= first <= last < Xv.shape[0] and Tv.shape[0] >= last and luv.shape[0] == n_lu
            and luv.shape[1] == n_lu and n_coef <= size and (nh >= 3 and M >= nh or nh == M == 1)
            and 0 <= lo < hi <= n):
        raise ValueError(f"orders: inconsistent shapes (orders {first}..{last}, buffers {X.shape}, "
                         f"T {T.shape}, LU {lu.shape})")
    cdef int[::1] ipiv = numpy.asarray(piv, dtype=numpy.intc) + 1
    # the elimination (``red``), prefixed e_: pv and rows name the parameters and the kernel's rows
    cdef int[::1] e_rows, e_cols, e_orows, e_ocols, e_prows, e_ppos, e_dpos
    cdef double[::1, :] e_C
    cdef double[::1] e_pv, e_br, e_bo
    cdef double[:, ::1] e_Bd
    if reduced:
        e_rows, e_cols, e_orows, e_ocols = red["rows"], red["cols"], red["o_rows"], red["o_cols"]
        e_prows, e_ppos, e_dpos = red["pair_rows"], red["ppos"], red["dpos"]
        e_C, e_pv, e_Bd = red["C"], red["pv"], red["Bd"]
        e_br, e_bo = numpy.empty(e_rows.shape[0]), numpy.empty(n_lu)
    spec_in = numpy.zeros((n, M // 2 + 1), dtype=complex)    # bins above H stay zero
    spec_out = numpy.empty((hi - lo, M // 2 + 1), dtype=complex)
    F = numpy.empty((n, M))
    F_fwd = F[lo:hi]          # the rows transformed (contiguous)
    cdef double[:, ::1] si = spec_in.view(float), so = spec_out.view(float)
    cdef double[:, ::1] Fv = F
    cdef double[:, ::1] scratch = numpy.empty((max(naux, 1), M))
    cdef double[::1] rhs = numpy.empty(size), W = numpy.empty(n_coef)
    cdef double[::1] Z1 = Tv[0]
    forward = None if _irfft is None else _rfft_even if M % 2 == 0 else _rfft_odd
    inv_M = 1.0 / M           # numpy.fft's factor for norm="forward": numpy.reciprocal(M)
    cdef double **rows = <double **>PyMem_Malloc(((last + 1) * naux + 1) * sizeof(double *))
    if rows == NULL:
        raise MemoryError("orders: no memory for the Taylor kernel's row table")
    try:
        for p in range(first, last + 1):
            # 1. Z_{p-1} -> U, omega, lam; X_{p-1} by the inverse FFT
            for i in range(n):
                for j in range(nh):
                    Uv[p - 1, i, j] = Tv[p - 2, i * nh + j]
            omv[p - 1] = Tv[p - 2, omega_index] if omega_index >= 0 else omv[0]
            lamv[p - 1] = Tv[p - 2, m]
            if nh == 1:                                 # equilibria: one "sample", no FFT
                for i in range(n):
                    Xv[p - 1, i, 0] = Uv[p - 1, i, 0]
            else:
                for i in range(n):
                    si[i, 0] = Uv[p - 1, i, 0]
                    for j in range(1, nh, 2):
                        si[i, j + 1] = Uv[p - 1, i, j] * 0.5
                        si[i, j + 2] = Uv[p - 1, i, j + 1] * -0.5
                if _irfft is not None:
                    _irfft(spec_in, 1.0, out=X[p - 1])          # norm="forward": no factor
                else:
                    irfft(spec_in, M, -1, "forward", out=X[p - 1])
            # 2. auxiliaries of order p-1 (into A[p-1]), then f_p with x_p = lam_p = 0
            with nogil:
                kernel(&pv[0], &tv[0], ts, &Xv[0, 0, 0], &lamv[0], &Av[0, 0, 0], &Av[p - 1, 0, 0],
                       &Fv[0, 0], rows, p - 1, M)
                kernel(&pv[0], &tv[0], ts, &Xv[0, 0, 0], &lamv[0], &Av[0, 0, 0], &scratch[0, 0],
                       &Fv[0, 0], rows, p, M)
            # 3. harmonics of f_p, minus D W; the rows beyond the balance (phase) are zero
            if nh == 1:
                for i in range(n):
                    rhs[i] = Fv[i, 0]
            else:
                if forward is not None:
                    forward(F_fwd, inv_M, out=spec_out)          # norm="forward": 1 / M
                else:
                    rfft(F_fwd, None, -1, "forward", out=spec_out)
                for i in range(n):
                    if i < lo or i >= hi:                       # kinematic: f_p = 0
                        for j in range(nh):
                            rhs[i * nh + j] = 0.0
                        continue
                    rhs[i * nh] = so[i - lo, 0]
                    for j in range(1, nh, 2):
                        rhs[i * nh + j] = so[i - lo, j + 1] * 2.0
                        rhs[i * nh + j + 1] = so[i - lo, j + 2] * -2.0
            for i in range(n_coef, size):
                rhs[i] = 0.0
            if omega_index >= 0:
                for q in range(n_coef):
                    W[q] = 0.0
                for r in range(1, p):
                    Ur = &Uv[r, 0, 0]                   # U_r (n, 2H+1) is contiguous
                    for q in range(n_coef):
                        W[q] += omv[p - r] * Ur[q]
                for i in range(n):
                    for j in range(1, nh, 2):
                        k = (j + 1) // 2
                        rhs[i * nh + j] = rhs[i * nh + j] - k * W[i * nh + j + 1]
                        rhs[i * nh + j + 1] = rhs[i * nh + j + 1] + k * W[i * nh + j]
            for i in range(m):
                rhs[i] = -rhs[i]
            # 4. the bordered solve on the step's LU, then orthogonal to Z_1
            with nogil:
                if reduced:
                    info = _solve_reduced(rhs, luv, ipiv, e_rows, e_cols, e_orows, e_ocols, e_prows, e_ppos,
                                          e_dpos, e_C, e_pv, e_Bd, e_br, e_bo)
                else:
                    dgetrs(&trans, &N, &one, &luv[0, 0], &N, &ipiv[0], &rhs[0], &N, &info)
                d = ddot(&N, &rhs[0], &one, &Z1[0], &one)
                for i in range(size):
                    Tv[p - 1, i] = rhs[i] - d * Z1[i]
            if info:
                raise ValueError(f"orders: dgetrs argument {-info} is illegal")
    finally:
        PyMem_Free(rows)
