"""The monodromy of a structural orbit in a few dense products (DESIGN §6, issue 24).

:meth:`CondensedAFTDiscretization.monodromy` propagates the ``n = n_lin + n_z`` columns of the
identity through the ``N`` steps of its exponential collocation integrator one step at a time
(``N`` passes over an ``n_lin x n`` complex array).  The same discrete map has a closed form
that needs no such passes.  With the step maps of :meth:`variational_steps`, the stage
right-hand sides ``y_l = [CE xi_l; z_l ...]`` of all the steps solve one block lower-triangular
system: unrolling ``xi_(l+1) = E xi_l + bB Pf_l y_l`` and ``z_(l+1) = z_l + Pz_l y_l``,

    xi_l = E^l xi_0 + sum_(j<l) E^(l-1-j) bB Pf_j y_j,     z_l = z_0 + sum_(j<l) Pz_j y_j,

so ``(I - L) y = Y0`` with the blocks ``L_lj = [Gamma_(l-1-j) Pf_j; Pz_j ...]`` for ``j < l``,
``Gamma_d = CE diag(E^d) bB`` (the contacts' response to the contacts ``d`` steps later: the
structure's Markov parameters, O(N x modes) in all), and ``Y0_l = [CE E^l xi_0; z_0 ...]``.
Then ``xi_N = E^N xi_0 + sum_l E^(N-1-l) bB Pf_l y_l`` and ``z_N = z_0 + sum_l Pz_l y_l``.
The monodromy is the same matrix to rounding (the same integrator, summed in another order),
from one triangular solve with ``n`` right-hand sides and one product of size ``n_lin x N s
n_F x n`` (level-3 BLAS), instead of ``N`` steps of level-2 work.

Its cost is ``O(p^2 n + n_lin p n)`` with ``p = N s (n_in + n_z)`` (the stage unknowns of all
the steps) and its memory ``p^2`` complex numbers: used where ``p`` is at most
``MAX_STAGE_UNKNOWNS`` and the structure has at least ``MIN_STATES`` states (smaller ones are
as fast step by step).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

#: the closed form is used from this many states of the reduced system on (measured on the bowed
#: string, H = 48, n_t = 200, one core: at 128 states 46 ms against 36 ms step by step, at 512
#: states 0.18 s against 0.72 s)
MIN_STATES = 256
#: at most this many stage unknowns of all the steps (the triangular matrix is p x p complex:
#: 2048 -> 67 MB)
MAX_STAGE_UNKNOWNS = 2048

#: multipliers by ARPACK (the leading ones only) from this many states on; below, dense eig
#: (bowed string, 512 states, one core: 0.06 s for the 16 leading ones against 0.33 s for all)
MIN_STATES_LEADING = 256
#: the leading multipliers are complete down to this modulus: every multiplier on or outside
#: the unit circle is among them, which is all the stability flags, the crossings and the test
#: functions of the bifurcations of cycles read (a lightly damped structure has many just
#: inside: the bowed string at 512 states has 52 above 0.9, 12 above 0.99)
LEADING_FLOOR = 0.99
#: ARPACK's relative accuracy of the Ritz values (``eigs(tol=...)``; its default 0 asks for the
#: rounding level): far below any multiplier tolerance (``multiplier_rtol``, 1e-3 by default,
#: and the crossings' 1e-9 margin), for about half the products: the bowed string's monodromy
#: at 512 states (three orbits of its branch), 616-788 products with 0, 367-436 with 1e-10, the
#: multipliers above 0.99 within 2e-13 of numpy's eigvals either way, all 16 within 5e-9
ARPACK_TOL = 1e-10
#: ARPACK's Krylov basis (``eigs(ncv=...)``), at least ``2 k + 1``: a wider basis restarts less
#: often; the same two orbits of the 512-state string, k = 16: 451 and 491 products (27 and 28 ms
#: of CPU) with the default 33 vectors, 281 and 327 (18 and 22 ms) with 64, every Ritz value
#: within 3e-9 of numpy's eigvals either way; 96 vectors or k = 32 with 128 were no faster
ARPACK_NCV = 64

#: the monodromy is applied to vectors (:class:`MonodromyOperator`, never formed) and its leading
#: multipliers found by ARPACK from this many states on.  ARPACK needs about 500 products for the
#: bowed string's 16 leading multipliers at 512 states (its spectrum hugs the unit circle), so
#: the operator costs 500 x O(intervals x states) against O(intervals x states^2) for the matrix:
#: at 512 states (H = 48, 200 steps, one core) 0.44 s against 0.16 s (closed form) + 0.12 s
#: (ARPACK on the matrix).  The operator's memory is linear in the states (the matrix's and the
#: closed form's are not)
MIN_STATES_OPERATOR = 2048
#: the monodromy matrix by chunks of steps from this many states on (bowed string, H = 48, one
#: core: equal at 32 states, 1.8 times faster than step by step at 128)
MIN_STATES_CHUNKS = 64
#: steps of the integrator per chunk of :class:`MonodromyOperator` (its per-chunk setup grows
#: like the square of it, the Python overhead of a product like ``intervals / CHUNK``)
CHUNK = 16

__all__ = ["structured_monodromy", "leading_multipliers", "MonodromyOperator"]


def applies(disc) -> bool:
    """True where :func:`structured_monodromy` is cheaper than stepping (see the module notes;
    :func:`chunks_apply` is cheaper still)."""
    st = disc.st
    p = disc.n_t * 3 * (st.n_in + st.n_z)                # 3 Gauss stages per step
    return st.n_lin + st.n_z >= MIN_STATES and p <= MAX_STAGE_UNKNOWNS


def chunks_apply(disc) -> bool:
    """True where the monodromy matrix is cheaper by chunks of steps (:class:`MonodromyOperator`
    on the identity) than step by step: ``MIN_STATES_CHUNKS`` states or more."""
    return disc.st.n_lin + disc.st.n_z >= MIN_STATES_CHUNKS


def _powers(E, k):
    """``E^l`` for ``l = 0..k`` of the diagonal step propagator ``E`` (m2,): (k + 1, m2) complex."""
    out = np.empty((k + 1, E.size), dtype=complex)
    out[0] = 1.0
    np.cumprod(np.broadcast_to(E, (k, E.size)), axis=0, out=out[1:])
    return out


def structured_monodromy(disc, Z, intervals: int | None = None) -> np.ndarray:
    """Monodromy of the whole reduced system along the orbit ``Z`` of a condensed harmonic
    balance, by the block-triangular closed form of the module notes: the matrix of
    ``disc.monodromy(Z, intervals)`` (same integrator), in the states of ``model.states``.

    Parameters
    ----------
    disc : CondensedAFTDiscretization
    Z : ndarray
        A converged orbit.
    intervals : int, optional
        Steps of the integrator over the period (default ``disc.n_t``).

    Returns
    -------
    ndarray (n, n)
    """
    st = disc.st
    v = disc.variational_steps(Z, intervals)
    E, CE, bB, Pf, Pz, N, size, ns = v["E"], v["CE"], v["bB"], v["Pf"], v["Pz"], v["N"], v["size"], v["s"]
    a, b = CE.shape[0], bB.shape[1]
    m2, nz = st.n_lin, st.n_z
    n, p = m2 + nz, N * size
    Epow = _powers(E, N)                                         # E^l, l = 0..N
    # the structure's Markov parameters Gamma_d = CE diag(E^d) bB, d = 0..N-2
    Gam = (CE[None, :, :] * Epow[:N - 1, None, :]) @ bB         # (N-1, a, b)
    L = np.zeros((N, size, N, size), dtype=complex)
    rows, cols = np.tril_indices(N, -1)
    L[rows, :a, cols, :] = np.matmul(Gam[rows - 1 - cols], Pf[cols])
    if nz:
        L[rows, a:, cols, :] = np.tile(Pz[cols], (1, ns, 1))
    ImL = np.eye(p, dtype=complex) - L.reshape(p, p)
    del L
    # initial conditions: the unit vectors of the states, xi_0 = V^-1 x_0
    Vinv = st.from_states(np.eye(m2))
    if np.count_nonzero(Vinv) < 0.1 * Vinv.size:          # modal data: 2 x 2 blocks
        Vinv_t = scipy.sparse.csr_array(Vinv.T)
        right = lambda A: (Vinv_t @ A.T).T                       # noqa: E731  A @ Vinv
    else:
        right = lambda A: A @ Vinv                               # noqa: E731
    Y0 = np.zeros((N, size, n), dtype=complex)
    Y0[:, :a, :m2] = right((CE[None, :, :] * Epow[:N, None, :]).reshape(N * a, m2)).reshape(N, a, m2)
    if nz:
        Y0[:, a:, m2:] = np.tile(np.eye(nz), (ns, 1))
    Y = scipy.linalg.solve_triangular(ImL, Y0.reshape(p, n), lower=True, unit_diagonal=True,
                                      check_finite=False).reshape(N, size, n)
    F = np.matmul(Pf, Y).reshape(N * b, n)                    # the stage forces of every step
    S = (Epow[N - 1::-1].T[:, :, None] * bB[:, None, :]).reshape(m2, N * b)     # E^(N-1-l) bB
    Xi = S @ F
    Xi[:, :m2] += Epow[N][:, None] * Vinv
    M = np.empty((n, n))
    M[:m2] = st.to_states(Xi).real
    if nz:
        Zs = np.einsum("lzs,lsn->zn", Pz, Y)
        Zs[:, m2:] += np.eye(nz)
        M[m2:] = Zs.real
    return M


def operator_applies(disc) -> bool:
    """True where :class:`MonodromyOperator` and ARPACK are the cheaper route to the leading
    multipliers (``MIN_STATES_OPERATOR`` states or more)."""
    return disc.st.n_lin + disc.st.n_z >= MIN_STATES_OPERATOR


class MonodromyOperator(scipy.sparse.linalg.LinearOperator):
    """The monodromy of a structural orbit as a linear operator on the states of
    ``model.states``: ``M @ v`` without the ``n x n`` matrix.

    The same integrator as :meth:`CondensedAFTDiscretization.monodromy` (the steps of
    :meth:`~CondensedAFTDiscretization.variational_steps`), its ``N`` steps taken ``c`` at a
    time (``c = CHUNK``).  Within a chunk starting at step ``l0`` from ``(xi_s, z_s)``, the stage
    right-hand sides of its steps solve the block-triangular system of the module notes
    restricted to the chunk, ``(I - L_c) y = [CE E^i xi_s; z_s ...]_(i<c)`` (its blocks
    ``Gamma_(i-1-j) Pf_(l0+j)`` and ``Pz_(l0+j)``, ``j < i``), and the chunk ends at

        xi_e = E^c xi_s + sum_i E^(c-1-i) bB Pf_(l0+i) y_i,      z_e = z_s + sum_i Pz_(l0+i) y_i.

    The maps ``[Pf; Pz] (I - L_c)^-1`` of every chunk (size ``c s (n_in + n_z)``: independent of
    the modes) are formed once; the matrices ``[CE E^i]_(i<c)`` and ``[E^(c-1-i) bB]_(i<c)`` are
    the same for every chunk (``c s n_in x n_lin`` and ``n_lin x c s n_F``).  A product therefore
    costs ``O(N s (n_in + n_F) n_lin)`` operations, linear in the number of modes, in ``N / c``
    passes of a few level-2 products (``c = N`` is the closed form of
    :func:`structured_monodromy`, ``c = 1`` the stepping of ``monodromy(method="steps")``), and
    its memory is ``O(c s (n_in + n_F) n_lin)``.  With ARPACK (:func:`leading_multipliers`) it
    gives the leading multipliers of a structure of any size at a cost linear in its modes.

    Parameters
    ----------
    disc : CondensedAFTDiscretization
    Z : ndarray
        A converged orbit.
    intervals : int, optional
        Steps of the integrator over the period (default ``disc.n_t``).
    chunk : int, optional
        Steps per chunk (default ``CHUNK``).
    """

    def __init__(self, disc, Z, intervals: int | None = None, chunk: int | None = None):
        st = disc.st
        v = disc.variational_steps(Z, intervals)
        E, CE, bB, Pf, Pz, N, size, ns = v["E"], v["CE"], v["bB"], v["Pf"], v["Pz"], v["N"], v["size"], v["s"]
        self._st, self._m2, self._nz = st, st.n_lin, st.n_z
        n = st.n_lin + st.n_z
        super().__init__(dtype=np.dtype(float), shape=(n, n))
        c = max(1, min(int(chunk or CHUNK), N))
        a, b, m2, nz = CE.shape[0], bB.shape[1], st.n_lin, st.n_z
        Epow = _powers(E, c)                                        # E^i, i = 0..c
        Gam = (CE[None, :, :] * Epow[:max(c - 1, 0), None, :]) @ bB   # Gamma_d, d = 0..c-2
        self._C0 = (CE[None, :, :] * Epow[:c, None, :]).reshape(c * a, m2)       # [CE E^i]_i
        self._chunks = []
        for l0 in range(0, N, c):
            cc = min(c, N - l0)
            p = cc * size
            L = np.zeros((cc, size, cc, size), dtype=complex)
            rows, cols = np.tril_indices(cc, -1)
            L[rows, :a, cols, :] = np.matmul(Gam[rows - 1 - cols], Pf[l0 + cols])
            if nz:
                L[rows, a:, cols, :] = np.tile(Pz[l0 + cols], (1, ns, 1))
            # [blockdiag(Pf_l); Pz_l ...] (I - L_c)^-1 by one triangular solve of its transpose
            out = np.zeros((cc * b + nz, cc, size), dtype=complex)
            for i in range(cc):
                out[i * b:(i + 1) * b, i, :] = Pf[l0 + i]
                if nz:
                    out[cc * b:, i, :] = Pz[l0 + i]
            ImL = np.eye(p, dtype=complex) - L.reshape(p, p)
            K = scipy.linalg.solve_triangular(ImL.T, out.reshape(-1, p).T, lower=False, unit_diagonal=True,
                                              check_finite=False).T.reshape(-1, cc, size)
            Kw = np.ascontiguousarray(K[:, :, :a]).reshape(-1, cc * a)          # on [CE E^i xi_s]_i
            Kz = K[:, :, a:].reshape(K.shape[0], cc * ns, nz).sum(axis=1) if nz else None   # on z_s
            S = self._S(Epow, bB, cc) if cc < c or l0 == 0 else self._chunks[0][3]
            self._chunks.append((cc, Kw, Kz, S, Epow[cc] if cc == c else Epow[cc].copy()))
        self._a, self._b = a, b
        self._real = self._real_form(st, E, CE, bB, c)

    def _real_form(self, st, E, CE, bB, c):
        """The chunks in real arithmetic on one mode of every conjugate pair, or None.

        The structure is real: its poles come in conjugate pairs (``lambda_j = conj
        lambda_i``) with conjugate columns of ``CE`` and rows of ``bB``, and the modal
        coordinates of real states are then conjugate too, ``xi_j = conj xi_i``, at every
        step (the recursion maps such vectors to such vectors: the stage inputs ``[CE E^i] xi``
        and the stage forces are real).  So the ``k`` of each pair is propagated alone, its
        real and imaginary parts apart, and the stage inputs are ``Re(sum_k w_k C0_k xi_k)``
        with ``w_k = 2`` for a pair, 1 for a real pole: a quarter of the real operations of
        the complex products on all the modes.  None (the complex products of ``_matmat``)
        when a pole, column or row has no conjugate partner to 1e-12 relative, or the
        chunks' maps are not real to that tolerance.
        """
        partner = st.conjugate_partner()
        if partner is None:
            return None
        n = partner.size

        def conjugate(A, axis):                    # A's entries of the partners are conjugate
            B = np.take(A, partner, axis=axis)
            return np.abs(B - np.conj(A)).max(initial=0.0) <= 1e-12 * max(np.abs(A).max(initial=0.0), 1e-300)

        x = np.cos(np.arange(n) * 0.7 + 0.3)      # a generic real vector of the linear states
        if not (conjugate(CE, 1) and conjugate(bB, 0) and conjugate(st.from_states(x), 0)):
            return None
        for cc, Kw, Kz, S, Ec in self._chunks:
            for K in (Kw, Kz):
                if K is not None and np.abs(K.imag).max(initial=0.0) > 1e-12 * max(np.abs(K).max(initial=0.0), 1e-300):
                    return None
        keep = np.flatnonzero(partner >= np.arange(n))                   # one of every pair
        w = np.where(partner[keep] == keep, 1.0, 2.0)
        C0 = self._C0[:, keep] * w[None, :]
        chunks = []
        for cc, Kw, Kz, S, Ec in self._chunks:
            Sk = S[keep]
            chunks.append((cc, np.ascontiguousarray(Kw.real), None if Kz is None else np.ascontiguousarray(Kz.real),
                           np.ascontiguousarray(Sk.real), np.ascontiguousarray(Sk.imag),
                           Ec[keep].real.copy(), Ec[keep].imag.copy()))
        return dict(keep=keep, partner=partner, C0r=np.ascontiguousarray(C0.real),
                    C0i=np.ascontiguousarray(C0.imag), chunks=chunks)

    @staticmethod
    def _S(Epow, bB, cc):
        """``[E^(cc-1-i) bB]_(i<cc)``, shape (n_lin, cc n_F-columns)."""
        return (Epow[cc - 1::-1].T[:, :, None] * bB[:, None, :]).reshape(bB.shape[0], cc * bB.shape[1])

    def matrix(self) -> np.ndarray:
        """The monodromy matrix: the operator applied to the identity (its modal coordinates on
        one mode of every pair computed once per structure, ``identity_pairs``, and the states
        from the pairs by ``states_from_pairs``): the 256-mode bowed string on 400 steps, the
        operator and its matrix 49.6 ms against 56.4 ms with that work done each time (medians
        of 9 alternated runs)."""
        return self._matmat(np.eye(self.shape[0]), identity=True)

    def _matmat(self, X, identity=False):
        X = np.asarray(X)
        if self._real is not None and not np.iscomplexobj(X):
            return self._matmat_real(X, identity)
        st, m2, nz, a, b = self._st, self._m2, self._nz, self._a, self._b
        xi = st.from_states(X[:m2].astype(complex))
        z = X[m2:].astype(complex)
        for cc, Kw, Kz, S, Ec in self._chunks:
            G = Kw @ (self._C0[:cc * a] @ xi)
            if nz:
                G += Kz @ z
                z = z + G[cc * b:]
            xi = Ec[:, None] * xi + S @ G[:cc * b]
        out = np.empty(X.shape, dtype=float)
        out[:m2] = st.to_states(xi).real
        out[m2:] = z.real
        return out

    def _matmat_real(self, X, identity=False):
        """:meth:`_matmat` on one mode of every conjugate pair, in real arithmetic
        (:meth:`_real_form`); ``identity``: ``X`` is the identity."""
        st, m2, nz, a, b, r = self._st, self._m2, self._nz, self._a, self._b, self._real
        if identity:
            xr0, xm0 = st.identity_pairs()
            xr, xm = np.zeros((xr0.shape[0], X.shape[1])), np.zeros((xr0.shape[0], X.shape[1]))
            xr[:, :m2], xm[:, :m2] = xr0, xm0
        else:
            xi = st.from_states(X[:m2])[r["keep"]]
            xr, xm = np.ascontiguousarray(xi.real), np.ascontiguousarray(xi.imag)
        z = np.array(X[m2:], dtype=float)
        C0r, C0i = r["C0r"], r["C0i"]
        for cc, Kw, Kz, Sr, Si, Er, Ei in r["chunks"]:
            w = C0r[:cc * a] @ xr - C0i[:cc * a] @ xm             # the stage inputs (real)
            G = Kw @ w
            if nz:
                G += Kz @ z
                z = z + G[cc * b:]
            F = G[:cc * b]
            xr, xm = (Er[:, None] * xr - Ei[:, None] * xm + Sr @ F,
                      Er[:, None] * xm + Ei[:, None] * xr + Si @ F)
        out = np.empty(X.shape, dtype=float)
        out[:m2] = st.states_from_pairs(xr, xm)
        out[m2:] = z
        return out

    def _matvec(self, x):
        return self._matmat(np.asarray(x).reshape(-1, 1)).reshape(-1)


def leading_multipliers(M, floor: float = LEADING_FLOOR, k: int = 16,
                        min_states: int = MIN_STATES_LEADING, start=None, with_start: bool = False):
    """The eigenvalues of the monodromy ``M`` of largest modulus, every one above ``floor``.

    Only the multipliers near or outside the unit circle decide stability and bifurcations.
    A lightly damped structure has most of its multipliers inside but close to the circle
    (the bowed string, 512 states: 296 above 0.5, 52 above 0.9), so ARPACK (``scipy.sparse.linalg.eigs``,
    ``which="LM"``, implicitly restarted Arnoldi; Lehoucq, Sorensen and Yang, ARPACK Users'
    Guide, SIAM 1998) computes the ``k`` of largest modulus, and ``k`` is doubled until the
    smallest returned modulus is below ``floor``: the set is then complete above it (every
    eigenvalue of larger modulus than a returned one is returned).  Below
    ``MIN_STATES_LEADING`` states, or when ``k`` would reach half the matrix, the dense
    ``numpy.linalg.eigvals`` (all of them) is the cheaper route.  ``M`` may be a
    ``scipy.sparse.linalg.LinearOperator`` (:class:`MonodromyOperator`, or a combination of
    such): ARPACK then runs on its products at any size, and only the dense fallback forms it.

    Parameters
    ----------
    start : ndarray (n,), optional
        ARPACK's start vector (default a fixed one, ``ones / sqrt(n)``: reproducible
        multipliers): the ``start`` returned for a matrix close to ``M`` (the finer grid's
        monodromy of :func:`~frictionkit.runtime.analysis._stability.refined_monodromy_stability`),
        which lies in the leading eigenvectors' span and halves ARPACK's products (the bowed
        string at 512 states, four orbits of its branch: 102 to 146 products against 266 to
        378 from the fixed vector).  Used only for such a partner: a start vector poor in an
        eigenvector lets ARPACK miss its eigenvalue.
    with_start : bool
        Also return a start vector for a matrix close to ``M``: the sum of the real and
        imaginary parts of the returned eigenvalues' eigenvectors, normalised (None from the
        dense route).

    Returns
    -------
    ndarray (complex)
        Sorted by decreasing modulus: all eigenvalues for small matrices, else the leading ones
        (at least every one of modulus >= ``floor``, and one below it).  With ``with_start``,
        ``(multipliers, start)``.
    """
    operator = isinstance(M, scipy.sparse.linalg.LinearOperator)
    if not operator:
        M = np.asarray(M, dtype=float)
    n = M.shape[0]
    v_next = None
    if n < min_states and not operator:
        mu = np.linalg.eigvals(M)
    else:
        v0 = np.ones(n) / np.sqrt(n) if start is None else np.asarray(start, dtype=float)
        k = max(2, int(k))
        mu = None
        while 2 * k < n:
            try:
                out = scipy.sparse.linalg.eigs(M, k=k, which="LM", v0=v0, return_eigenvectors=with_start,
                                               tol=ARPACK_TOL, ncv=min(n - 1, max(2 * k + 1, ARPACK_NCV)))
            except scipy.sparse.linalg.ArpackNoConvergence:
                break                           # (dense below)
            vals = out[0] if with_start else out
            if np.abs(vals).min() < floor:
                mu = vals
                if with_start:
                    v = out[1].real.sum(axis=1) + out[1].imag.sum(axis=1)
                    norm = float(np.linalg.norm(v))
                    v_next = v / norm if norm > 0 and np.all(np.isfinite(v)) else None
                break
            k *= 2
        if mu is None:
            mu = np.linalg.eigvals(M.matmat(np.eye(n)) if operator else M)
    mu = mu[np.argsort(-np.abs(mu), kind="stable")]
    return (mu, v_next) if with_start else mu
