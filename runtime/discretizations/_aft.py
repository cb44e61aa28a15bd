"""Harmonic balance by alternating frequency–time (AFT) on the original ODE (DESIGN §5.4).

Models whose friction law is not analytic (``Abs``, ``sign``, ``Piecewise``, ``Min``/``Max``)
have no quadratic recast: the generated module carries only the original first-order ODE
``x' = f(x, t; p)`` and its exact Jacobian (``SAMPLED = True``, contract item 10 of
``_model.py``).  They are balanced here directly on the ``n`` original states, in the
normalized time ``theta = omega t`` (seed 003 eq. (11))::

    x_i(theta) = x_i0 + sum_{k=1}^H  x_ick cos(k theta) + x_isk sin(k theta)

with the layout of ``_hbm.py`` (``Y[i*(2H+1) + k]``, k = 0 the mean, 2j-1 the cos(j theta)
and 2j the sin(j theta) coefficient; then ``omega`` for autonomous models; ``lam`` last).
The residual is, with the sign convention of :class:`~frictionkit.runtime._hbm.HBMDiscretization`,
the harmonics 0..H of

    R_i = f_i(x(theta), theta / omega; p(lam)) - omega D x_i                (D = d/dtheta)

evaluated by AFT: ``x`` is sampled on ``n_t`` equidistant points of one period, the
generated ``rhs`` is evaluated on the whole batch and ``numpy.fft.rfft`` gives the
harmonics back.  For a non-smooth law ``f(x(theta))`` is not band-limited: its harmonics
above ``n_t - H`` alias onto the balanced ones.  The error falls as ``n_t`` grows, at the
rate set by the law's smoothness, so ``n_t`` is an option (default :func:`default_n_t`:
``max(8H + 8, 64)`` for these laws, about ``4H + 8`` for analytic ones).

The Jacobian is the exact derivative of this discrete map: with ``J(theta_j)`` the generated
``jac`` on the samples, block (i, j) of ``dR/dY`` is the Toeplitz-plus-Hankel product matrix
of the discrete Fourier coefficients of ``J_ij(theta)`` (``_hbm._product_matrix``), which
needs the coefficients up to harmonic ``2H`` unaliased, hence ``n_t >= 4H + 1``.  The column
of ``lam`` is a five-point central difference of the sampled ``f`` (the generated-model
interface does not export ``df/dlam``), as shooting does with a three-point one.

Autonomous models add ``omega`` and the linear phase condition of the HBM (sin(theta)
coefficient of one state is zero); forced models take ``omega`` from the forcing-frequency
parameter, or from ``lam`` when that is continued.  ``H = 0`` gives equilibria,
``R = f(x, lam)``.

**The pointwise recast (DESIGN §5.0): the default path for analytic laws.**  The system is
not quadratic, but its ANM series exist: along the path ``Z(a) = sum_q a^q Z_q`` the states
at every sample have the series of the inverse FFT of ``U_q``, and the generated Taylor
kernel (``Model.taylor``, codegen/taylor.py) gives the order-q coefficients of every
auxiliary and of ``f`` at the samples from the recast's relations solved explicitly (no
auxiliary is truncated to H harmonics, no point condition).  :meth:`series_rhs` turns them
into the ANM's right-hand side; the Jacobian's ``lam`` column is the module's exact
``df/dlam``.  A continued forcing frequency ``lam = w`` moves the sample times
``t = theta / lam`` along the path while the samples' phases ``theta`` stay put: the module's
kernel is then generated in the forcing phase (``Model.taylor_in_phase``, codegen/taylor.py:
``f(x, theta / lam)``, so ``cos(w t) = cos(theta)`` is a fixed coefficient of each sample),
it is fed the phases, and the products ``lam D U`` of the residual add
``sum_{r=1..p-1} lam_r D U_{p-r}`` to each order as ``omega D U`` does for autonomous orbits;
the ``lam`` column is then the kernel's own order-1 coefficient (``x_1 = 0, lam_1 = 1``: the
exact ``df/dlam`` at fixed phase) minus ``D U``.  Non-analytic laws (no recast, no kernel)
and older modules whose kernel holds ``t`` fixed are continued with the pseudo-arclength
Newton engine.  Aliasing is the price: ``n_t`` (recorded in the branch's provenance)
controls it; for analytic laws it decays exponentially with ``n_t``.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model._interface import Model
from ._base import Discretization, Elimination
from ._hbm import (
    HarmonicLayout,
    _product_matrix,
    coefficients_to_samples,
    fast_length,
    samples_to_coefficients,
    shift_phase,
)
from ._pointwise import PointwiseSeries, check_anm, compiled_loop

__all__ = ["AFTDiscretization", "default_n_t"]

_FD_STEP5 = np.finfo(float).eps ** (1 / 5)


def _expm_batch(A, order: int = 14):
    """``expm`` of a stack of small matrices (..., n, n) at once: scaling by ``2^-s`` to a norm
    of at most 1/2, Taylor polynomial of degree ``order`` (remainder below ``0.5^15/15! ~
    2e-17``), then ``s`` squarings (scipy's ``expm`` loops over the stack in Python).  2 x 2
    matrices (one-degree-of-freedom oscillators) take the closed form :func:`_expm_2x2`."""
    if A.shape[-2:] == (2, 2):
        return _expm_2x2(A)
    norm = float(np.max(np.abs(A).sum(axis=-1))) if A.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    B = A / 2.0 ** s
    eye = np.broadcast_to(np.eye(A.shape[-1]), A.shape)
    E = eye + B / order
    for k in range(order - 1, 0, -1):
        E = eye + (B @ E) / k
    for _ in range(s):
        E = E @ E
    return E


def _expm_2x2(A):
    """``expm`` of a stack of 2 x 2 matrices in closed form: with ``mu = tr A / 2`` and
    ``B = A - mu I`` (trace free, so ``B^2 = q I``, ``q = B_11^2 + B_12 B_21``),
    ``exp(A) = e^mu (cosh(r) I + sinh(r)/r B)``, ``r = sqrt(q)`` (complex when ``q < 0``:
    cos and sin); ``sinh(r)/r`` by its series for ``|r| < 1e-3``."""
    mu = 0.5 * (A[..., 0, 0] + A[..., 1, 1])
    b11 = A[..., 0, 0] - mu
    q = b11 * b11 + A[..., 0, 1] * A[..., 1, 0]
    r = np.sqrt(q.astype(complex))
    small = np.abs(q) < 1e-6
    rs = np.where(small, 1.0, r)
    ch = np.where(small, 1 + q / 2 + q * q / 24, np.cosh(rs)).real
    sh = np.where(small, 1 + q / 6 + q * q / 120, np.sinh(rs) / rs).real
    e = np.exp(mu)
    E = np.empty_like(A)
    E[..., 0, 0] = e * (ch + sh * b11)
    E[..., 1, 1] = e * (ch - sh * b11)
    E[..., 0, 1] = e * sh * A[..., 0, 1]
    E[..., 1, 0] = e * sh * A[..., 1, 0]
    return E


#: the two Gauss points of a Magnus step, as fractions of the step
MAGNUS_GAUSS = np.array([0.5 - np.sqrt(3) / 6, 0.5 + np.sqrt(3) / 6])


def magnus_exponents(model, lam, t, x, h):
    """The fourth-order Magnus exponents ``Omega_k = h_k/2 (A1 + A2) + sqrt(3) h_k^2/12 [A2, A1]``
    of steps of lengths ``h`` (N,), with ``A1, A2 = df/dx`` at the two Gauss points of each
    step (Iserles and Nørsett, Phil. Trans. R. Soc. A 357, 1999; Blanes, Casas, Oteo and Ros,
    Phys. Rep. 470, 2009, eq. 253): ``t`` (2N,) the Gauss times (step-major), ``x`` (n, 2N) the
    states there.  Returns ``(A1, A2, Omega)``, each (N, n, n)."""
    n, N = model.n, np.size(h)
    J = np.asarray(model.jac(t if model.forced else np.zeros_like(t), x, lam), dtype=float)
    J = np.moveaxis(J.reshape(n, n, N, 2), (2, 3), (0, 1))             # (N, 2, n, n)
    A1, A2 = J[:, 0], J[:, 1]
    hh = np.reshape(h, (N, 1, 1))
    if n == 2:
        # the commutator of 2 x 2 matrices entry by entry: numpy's stacked matmul of 256 such
        # pairs took 110 us, the four expressions 15 us
        a, b = A1, A2
        da, db = a[:, 0, 0] - a[:, 1, 1], b[:, 0, 0] - b[:, 1, 1]
        C = np.empty_like(a)
        C[:, 0, 0] = b[:, 0, 1] * a[:, 1, 0] - a[:, 0, 1] * b[:, 1, 0]
        C[:, 1, 1] = -C[:, 0, 0]
        C[:, 0, 1] = a[:, 0, 1] * db - b[:, 0, 1] * da
        C[:, 1, 0] = b[:, 1, 0] * da - a[:, 1, 0] * db
    else:
        C = A2 @ A1 - A1 @ A2
    return A1, A2, 0.5 * hh * (A1 + A2) + (np.sqrt(3) / 12) * hh * hh * C


def ordered_product(P):
    """``P[N-1] @ ... @ P[1] @ P[0]`` (later steps act on the left) by pairwise (tree)
    multiplication: log2(N) batched products instead of N sequential ones."""
    while P.shape[0] > 1:
        if P.shape[0] % 2:
            P = np.concatenate([P[:-2], (P[-1] @ P[-2])[None]])
            continue
        P = P[1::2] @ P[0::2]
    return P[0]


def default_n_t(harmonics: int, analytic: bool = False) -> int:
    """Default number of AFT time samples (1 for equilibria).

    The samples set the aliasing: harmonics of ``f(x(theta))`` above ``n_t - H`` fold onto the
    balanced ones, and the Jacobian needs those of ``df/dx`` up to ``2H``, hence
    ``n_t >= 4H + 1`` always.

    - ``analytic`` (a law with the generated Taylor kernels, the pointwise path): the harmonics
      of ``f`` decay exponentially, so the aliased ones (above ``n_t - H``, about ``3H``) are
      far below the truncated ones (above ``H``): ``max(4H + 8, 128)`` rounded up to a fast FFT
      length (:func:`._hbm.fast_length`): 128 up to H = 30, then 180 at H = 40, 200 at
      H = 48 and 250 at H = 60.  Measured on the belt's fold of cycles (seed 000, n = 10;
      ``benchmarks/bench_auto.py``'s case), relative change against ``8H + 8`` samples:
      2.7e-9 at H = 20 and 30 (128 samples), 5e-13 at H = 40, 1e-13 at H = 48, 2e-16 at
      H = 60, each at least 30 times below the truncation error there (4e-6, 1e-7, 7e-8,
      3.8e-9, 2e-10); on the tanh x exp belt's fold (``examples/tanh_exp_belt.py``) below
      6e-16 at H = 20, 40, 60.  Fewer samples also mean fewer ANM steps: the series' range
      is bounded by the law's complex singularities at the samples that graze zero relative
      velocity (belt, H = 48: 164 steps at 200 samples, 174 at 300, 182 at 392).  Below
      H = 20 the steep law's harmonics still matter (against 240 and 336 samples: 6H + 6
      samples 2.5e-5 at H = 10 and 1.5e-6 at H = 14, 120 samples 8e-9 at both), hence the
      floor of 128.
    - otherwise (non-analytic laws, DESIGN §5.4; hand-written modules): ``max(8H + 8, 64)``,
      the aliasing decaying only algebraically.
    """
    H = int(harmonics)
    if not H:
        return 1
    if analytic:
        return fast_length(max(4 * H + 8, 128))
    return max(8 * H + 8, 64)


class AFTDiscretization(HarmonicLayout, Discretization):
    """Harmonic balance of the original ODE by alternating frequency–time, ``Z = [Y, lam]``.

    Parameters
    ----------
    model, harmonics :
        As for :class:`~frictionkit.runtime.discretizations.HBMDiscretization`, but any model
        (sampled or not) will do: only ``rhs`` and ``jac`` of the original ODE are used.
    phase_variable : str or int, optional
        The state (not an auxiliary: there are none here) whose sin(theta) coefficient the
        phase condition fixes to zero; default the first state.
    n_t : int, optional
        Number of time samples of one period, at least ``4H + 1`` (exact Jacobian);
        default :func:`default_n_t`: ``max(4H + 8, 128)`` rounded up to a fast FFT length for
        analytic laws (the pointwise path), ``max(8H + 8, 64)`` for non-analytic ones.  Raise
        it when the law is non-smooth: aliasing of the harmonics of ``f(x(theta))`` above
        ``n_t - H`` is the AFT's only approximation besides the truncation to H harmonics.

    Notes
    -----
    Implements the contract of ``_base.py``; ``has_quadratic`` is False (``quadratic``
    raises ``NotImplementedError``), ``series_rhs`` comes from the model's pointwise Taylor
    kernels where it has them (``supports_anm``: analytic laws; a continued forcing
    frequency needs the kernel in the forcing phase; DESIGN §5.0).  Work counters ``n_residuals``/``n_jacobians`` as in the HBM.
    """

    method = "aft"

    jacobian_accepts_out = True      # jacobian(Z, out=...) assembles into a given array

    def __init__(self, model: Model, harmonics: int, phase_variable=None, n_t: int | None = None):
        if not isinstance(model, Model):
            raise InputError("AFTDiscretization needs a frictionkit Model (Model(module, params))")
        if int(harmonics) != harmonics or harmonics < 0:
            raise InputError(f"harmonics = {harmonics}: the number of harmonics must be an integer >= 1 "
                             "(or 0 for equilibria)")
        self.model = model
        self.H = H = int(harmonics)
        self.nh = 2 * H + 1
        self.n = model.n
        self.N = model.n                  # the original states only: no auxiliaries
        self.forced = model.forced
        if H == 0 and self.forced:
            raise InputError(f"model {model.name!r} is forced: it has no equilibria (use harmonics >= 1)")
        if H == 0:
            if n_t not in (None, 1):
                raise InputError(f"n_t = {n_t}: equilibria (harmonics = 0) take no time samples")
            self.n_t = 1
        else:
            self.n_t = default_n_t(H, self._analytic(model)) if n_t is None else int(n_t)
            if n_t is not None and int(n_t) != n_t:
                raise InputError(f"n_t = {n_t} must be an integer")
            if self.n_t < 4 * H + 1:
                raise InputError(f"n_t = {self.n_t} < 4H+1 = {4 * H + 1}: the AFT Jacobian needs the "
                                 f"harmonics 0..2H of df/dx unaliased; raise n_t (default "
                                 f"{default_n_t(H, self._analytic(model))})")
        self.autonomous = (not self.forced) and H > 0
        self._layout(model, phase_variable, model.states, "state")
        self._k = np.arange(1, H + 1, dtype=float)
        self._ik = 1j * self._k            # -D on the (c_k, s_k) pairs read as complex numbers
        # the -omega D blocks of the Jacobian: rows of c_k (k = 1..H) of every state, and k
        self._rotation = ((np.arange(self.n)[:, None] * self.nh + 2 * np.arange(1, H + 1)[None, :] - 1).ravel(),
                          np.tile(self._k, self.n))
        self._theta = 2 * np.pi * np.arange(self.n_t) / self.n_t
        self.n_residuals = 0
        self.n_jacobians = 0
        self._series = PointwiseSeries(model, self.split, self._samples, self._kernel_times)   # series_rhs
        self._point = None             # the last point's samples and values (:meth:`_at`)
        self._basis_cache = {}         # monodromy's Fourier basis at the Gauss points
        self.elimination = self._kinematic_elimination()
        self._transformed = self._dynamic_rows()

    def _kinematic_elimination(self):
        """The identity rows of the kinematic states (contract item 18), or None.

        A state equation ``x_i' = x_j`` (``Model.kinematic``, exact) has the residual rows
        ``R_i = U_j - omega D U_i`` (the FFT of the samples of ``x_j`` gives ``U_j`` back), so
        ``J[rows of i, columns of U_j] = I``; the rest of row (i, c_k) is ``-omega k`` in column
        (i, s_k), of row (i, s_k) ``+omega k`` in column (i, c_k) (``_rotation`` in
        :meth:`jacobian`), and ``-D U_i`` in the ``omega`` column (autonomous) or the ``lam``
        column (a continued forcing frequency); the ``lam`` column is zero otherwise
        (``df_i/dlam = 0``).  Equilibria (H = 0) gain nothing: None."""
        pairs = self.model.kinematic
        if not self.H or not pairs:
            return None
        q = np.arange(self.nh)
        k = np.arange(1, self.H + 1)
        rows, cols, pair_rows, pair_cols = [], [], [], []
        for t, (i, j) in enumerate(pairs):
            rows.append(i * self.nh + q)
            cols.append(j * self.nh + q)
            base = t * self.nh
            pair_rows += [base + 2 * k - 1, base + 2 * k]       # rows c_k, s_k of state i
            pair_cols += [i * self.nh + 2 * k, i * self.nh + 2 * k - 1]   # columns s_k, c_k
        dense = [self.omega_index] if self.autonomous else [self.lam_index] if self.omega_is_lam else []
        return Elimination(np.concatenate(rows), np.concatenate(cols), np.concatenate(pair_rows),
                           np.concatenate(pair_cols), np.array(dense, dtype=int))

    def _dynamic_rows(self):
        """The states ``lo..hi-1`` whose series of ``f`` the compiled ANM loop transforms: all
        but the kinematic ones (``x_i' = x_j``: ``f_p = x_{j,p} = 0`` in the right-hand side
        of every order) at either end, so that the others stay one contiguous block."""
        kin = {i for i, _ in self.model.kinematic}
        lo, hi = 0, self.n
        while lo < hi - 1 and lo in kin:
            lo += 1
        while hi - 1 > lo and hi - 1 in kin:
            hi -= 1
        return lo, hi

    @staticmethod
    def _analytic(model):
        """Whether ``model``'s law is analytic with generated Taylor kernels (the n_t rule)."""
        return bool(model.has_taylor) and not model.sampled

    def _samples(self, U):
        return U[:, :1].copy() if self.H == 0 else coefficients_to_samples(U, self.n_t)

    def _times(self, omega):
        # forced models: t = theta / omega; autonomous ones do not depend on t
        if self.forced:
            return self._theta / omega
        return np.zeros(self.n_t)

    def _kernel_times(self, omega):
        """What the Taylor kernel takes as its ``t`` at the samples: the times (held fixed along
        an ANM step), or, for a kernel in the forcing phase, the phases ``w t = nu theta``."""
        if self.forced and self.model.taylor_in_phase:
            return self.nu * self._theta
        return self._times(omega)

    def _dfdlam_in_phase(self, x, lam):
        """Harmonics of ``df/dlam`` at fixed forcing phase (lam the forcing frequency), exact:
        the kernel's order-1 coefficient of ``f`` along ``x = x_0``, ``lam = lam_0 + a``."""
        th = self._kernel_times(None)
        X = np.zeros((2,) + x.shape)
        X[0] = x
        LAM = np.array([lam, 1.0])
        A0 = np.asarray(self.model.taylor(th, X[:1], LAM[:1], np.zeros((0, self.model.naux, x.shape[1])), 0)[0])
        F1 = self.model.taylor(th, X, LAM, A0[None], 1)[1]
        return self._to_coef(np.asarray(F1, dtype=float).reshape(self.n, self.n_t))

    def _at(self, Z):
        """The point ``Z``'s parts, samples and model values, shared by the calls at one point.

        The ANM evaluates ``residual``, ``residual_noise`` at each step's end point, then the
        next step's ``jacobian`` and series origin there: each would sample the states and
        evaluate ``f`` or ``df/dx`` again.  The last point is remembered with a copy of its
        bytes as the key, so that another ``Z``, or the same array changed in place, is a new
        point (a byte compare of ``Z``: far less than one sampling), as are changed model
        parameters.  Returns a dict with
        ``U, omega, lam, t, x``; ``f`` and ``Js`` (``rhs``, ``jac`` on the samples, shapes
        (n, n_t), (n, n, n_t)) are added by :meth:`_values` when first needed.  Read-only:
        the callers copy what they change."""
        key = np.ascontiguousarray(Z, dtype=float).tobytes()
        c = self._point
        if c is None or c["key"] != key or c["params"] != self.model.params:
            U, omega, lam = self.split(np.frombuffer(key))        # parts of the copy, not of Z
            c = self._point = dict(key=key, params=dict(self.model.params), U=U, omega=omega, lam=lam,
                                   t=self._times(omega), x=self._samples(U))
        return c

    def _values(self, Z, *names):
        """:meth:`_at` with ``f`` (``"f"``) and/or ``df/dx`` (``"Js"``) on the samples."""
        c = self._at(Z)
        if "f" in names and "f" not in c:
            c["f"] = np.asarray(self.model.rhs(c["t"], c["x"], c["lam"]), dtype=float).reshape(self.n, self.n_t)
        if "Js" in names and "Js" not in c:
            c["Js"] = np.asarray(self.model.jac(c["t"], c["x"], c["lam"]), dtype=float).reshape(
                self.n, self.n, self.n_t)
        return c

    def _f_coef(self, x, omega, lam):
        """Harmonics 0..H of ``f(x(theta), theta/omega; p(lam))`` from the samples ``x``."""
        f = np.asarray(self.model.rhs(self._times(omega), x, lam), dtype=float).reshape(self.n, self.n_t)
        return f if self.H == 0 else samples_to_coefficients(f, self.H)

    # -- contract -----------------------------------------------------------------------
    def residual(self, Z):
        """R(Z), shape (m,) (contract item 2)."""
        self.n_residuals += 1
        c = self._values(Z, "f")
        U, omega, f = c["U"], c["omega"], c["f"]
        R = self._to_coef(f)
        out = np.empty(self.m)
        if self.H:
            np.subtract(R, omega * self._deriv(U), out=out[:self.n_coef].reshape(R.shape))
        else:
            out[:self.n_coef] = R.reshape(-1)
        if self.autonomous:
            out[-1] = Z[self.phase_index]
        return out

    def residual_noise(self, Z):
        """Rounding level of each residual entry (contract item 12).

        The FFT of the sampled ``f`` carries ``~ eps max_t |terms of f_i(t)|`` in every
        harmonic of state i, far above ``eps (|J| |Z|)_k`` for the small high harmonics (and
        next to a Hopf point, where ``f`` is a small difference of large terms).  The terms'
        size is taken as ``|f_i| + sum_j |df_i/dx_j| |x_j|``; the level is four times ``eps``
        that (measured on the belt, seed 000: Newton-converged points sit at up to 1.3 times
        ``eps max_t |f_i|`` away from the Hopf point and 40-60 times it next to it)."""
        c = self._values(Z, "f", "Js")
        x = c["x"].reshape(self.n, -1)
        size = np.abs(c["f"]) + np.einsum("ijt,jt->it", np.abs(c["Js"]), np.abs(x))
        out = np.repeat(4 * np.finfo(float).eps * size.max(axis=1), self.nh)
        return np.append(out, 0.0) if self.autonomous else out

    def jacobian(self, Z, out=None):
        """dR/dZ as a dense (m, m+1) array (contract item 3), exact but for the lam column.

        ``out``: a zero-filled (m, m+1) array to assemble into (``_newton.factor_jacobian``).
        """
        self.n_jacobians += 1
        c = self._values(Z, "Js")
        U, omega, lam, x, Js = c["U"], c["omega"], c["lam"], c["x"], c["Js"]
        n, nh, H = self.n, self.nh, self.H
        J = np.zeros((self.m, self.size), order="F") if out is None else out
        # blocks constant along the orbit (a linear term) are diagonal, zero ones are skipped
        top, low = Js.max(axis=2), Js.min(axis=2)
        diag = np.arange(nh)
        if H == 0:                   # equilibria: df/dx itself (no loop over the n^2 blocks)
            J[:n, :n] = Js[:, :, 0]
        for i in range(n if H else 0):
            for j in range(n):
                if top[i, j] == low[i, j]:
                    if top[i, j] != 0.0:
                        J[i * nh + diag, j * nh + diag] = top[i, j]
                else:                # (H = 0: a single sample, always constant)
                    a = samples_to_coefficients(Js[i, j], 2 * H)
                    J[i * nh:(i + 1) * nh, j * nh:(j + 1) * nh] = _product_matrix(a, H)
        if H:
            rows_c, wk = self._rotation
            J[rows_c, rows_c + 1] -= omega * wk
            J[rows_c + 1, rows_c] += omega * wk
        # lam column: the module's exact df/dlam where it has one (the ANM's series need the
        # exact Jacobian); else a central difference of the sampled f (also through
        # t = theta/lam when the forcing frequency is continued); the step follows |lam| so
        # that small parameters (drill speed eta ~ kappa = 1e-4) are resolved
        if self.model.exact_dfdlam and not self.omega_is_lam:
            dlam = self._to_coef(np.asarray(self.model.dfdlam(c["t"], x, lam),
                                            dtype=float).reshape(self.n, self.n_t))
        elif self.omega_is_lam and self.supports_anm:
            dlam = self._dfdlam_in_phase(x, lam)
        else:
            dlam = self._dfdlam(x, omega, lam)
        if self.omega_is_lam:
            dlam = dlam - self._deriv(U)
        J[:self.n_coef, self.lam_index] = dlam.reshape(-1)
        if self.autonomous:
            J[:self.n_coef, self.omega_index] = -self._deriv(U).reshape(-1)
            J[self.n_coef, self.phase_index] = 1.0
        return J

    def _dfdlam(self, x, omega, lam):
        """Harmonics of ``df/dlam`` along the samples ``x``: five-point central difference.

        The stencil is exact for polynomials of degree <= 4 in ``lam`` (the pieces of the
        seed-004 drill law, eq. 18, are quartic), so away from a corner of the law its error
        is rounding, ``~ eps |f| / h``, with ``h = eps^(1/5) max(|lam|, 1e-6)``; a sample
        within ``2h`` of a corner mixes two pieces (only the Newton rate and the tangent's
        ``lam`` component are affected, never the solution).  Measured on the drill
        equilibrium, kappa = 1e-4, next to eta = kappa where df/deta ~ 5e-5: error 7e-9
        (three-point central difference with h = eps^(1/3) max(|lam|, 1e-6): 1e-6).
        """
        h = _FD_STEP5 * max(abs(lam), 1e-6)
        out = 0.0
        for c, s in ((8.0, 1.0), (-8.0, -1.0), (-1.0, 2.0), (1.0, -2.0)):
            lam_s = lam + s * h
            out = out + c * self._f_coef(x, lam_s if self.omega_is_lam else omega, lam_s)
        return out / (12 * h)

    @property
    def supports_anm(self) -> bool:
        """Whether the ANM can continue this system (contract item 6): the pointwise Taylor
        kernels of the recast exist (analytic laws) and hold what the samples hold fixed: the
        times, or the forcing phases when the forcing frequency itself is continued
        (``t = theta/lam`` moves; ``Model.taylor_in_phase``)."""
        return (not self.model.sampled) and self.model.has_taylor and (
            not self.omega_is_lam or self.model.taylor_in_phase)

    def quadratic(self, Z1, Z2):
        raise NotImplementedError(
            f"the AFT discretization of model {self.model.name!r} has no quadratic part (the ANM "
            "takes its right-hand side from series_rhs, where the model has Taylor kernels)")

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side of the ANM from the pointwise recast (DESIGN §5.0).

        The path ``Z(a) = sum_q a^q Z_q`` gives states ``x(theta_j; a)`` at every time
        sample; the generated Taylor kernel (``Model.taylor``) returns the order-q
        coefficients of the auxiliaries and of ``f`` at the samples, order by order.  The
        order-p coefficient of ``R`` is ``FFT(f_p) - sum_{r=0..p} omega_r D U_{p-r}``; its part
        linear in ``Z_p`` is ``J Z_p``, so the right-hand side is that coefficient with
        ``x_p = 0`` and ``lam_p = 0``: ``FFT(f_p|_{x_p=0}) - sum_{r=1..p-1} omega_r D U_{p-r}``.
        The series' buffers (``_pointwise.PointwiseSeries``) make order p cost two kernel calls.
        """
        check_anm(self, "AFT system", "the sample times", origin)
        F, om, U = self._series.f_order(terms, origin)
        p = len(terms) + 1
        out = np.empty(self.m)
        out[self.n_coef:] = 0.0
        R = out[:self.n_coef].reshape(self.n, self.nh)
        if self.H:
            samples_to_coefficients(F, self.H, out=R)
        else:
            R[...] = F
        if (self.autonomous or self.omega_is_lam) and p > 1:
            # sum_{r=1..p-1} omega_r D U_{p-r} = D W, W = sum_r omega_r U_{p-r} (D is linear;
            # a continued forcing frequency: omega_r = lam_r / nu)
            W = (om[p - 1:0:-1] @ U[1:p].reshape(p - 1, -1)).reshape(self.n, self.nh)
            # D (c_k, s_k) = (k s_k, -k c_k), i.e. -i k (c_k + i s_k) on the pairs read as complex
            pairs = R[:, 1:].view(complex)        # a view: adds into R
            pairs += self._ik * W[:, 1:].view(complex)
        return out

    def series_terms(self, origin, Z1, order: int, solve, lu=None):
        """Terms ``[Z_1..Z_order]`` of one ANM step (contract item 6): the recurrence of
        :meth:`series_rhs`, in compiled code (``_pointwise_loop.pyx``) where the model exports
        its Taylor kernel (``Model.taylor_kernel``: compiled generated models) and the step's
        LU is dense (``lu``: ``(lu, piv)``, or ``(lu, piv, reduction)`` after the engine's
        elimination of the kinematic rows, contract item 18); otherwise the Python loop of the
        contract's default.  Both leave the series' buffers as after ``series_rhs`` of the
        last order."""
        # the loop reads omega_r from Z_r: an autonomous orbit's omega, or a continued forcing
        # frequency lam (omega = lam unless a subharmonic nu != 1, left to the Python loop)
        omega_at = (self.omega_index if self.autonomous else self.lam_index if self.omega_is_lam else -1)
        kernel = (self.model.taylor_kernel() if lu is not None and order >= 2
                  and not (self.omega_is_lam and self.nu != 1) else None)
        loop = compiled_loop() if kernel is not None and self.supports_anm else None
        if loop is None:
            return super().series_terms(origin, Z1, order, solve, lu)
        c = self._series.restart(origin, order + 1, points=self._at(origin)["x"])
        T = np.empty((order, self.size))
        T[0] = Z1
        c["dirty"] = order                  # the loop writes the orders 1..order-1
        loop.orders(kernel, c["params"], c["t"], c["X"], c["LAM"], c["A"], c["U"], c["omega"], lu[0], lu[1],
                    T, 2, order, omega_at, lu[2] if len(lu) > 2 else None,
                    *self._transformed)
        c["order"] = order
        return list(T)

    def _to_coef(self, f):
        return f if self.H == 0 else samples_to_coefficients(f, self.H)

    # -- stability (contract items 14-15) --------------------------------------------------
    @property
    def floquet_route(self):
        """Orbits: the monodromy of the variational equation on the balanced orbit (cheap:
        n x n; :meth:`monodromy`); Hill's method on the same orbit is the cross-check."""
        return "monodromy" if self.H >= 1 else None

    @property
    def monodromy_order(self):
        """4: :meth:`monodromy`'s Magnus rule (contract item 28)."""
        return 4

    def monodromy(self, Z, intervals: int | None = None):
        """Monodromy matrix of the variational equation ``y' = df/dx(x(t)) y`` along the
        balanced orbit ``x(t)`` (its Fourier series, evaluated exactly at any time).

        Fourth-order Magnus integrator on ``intervals`` equal steps of one period (default
        ``n_t``): on each step ``Omega = h/2 (A1 + A2) + sqrt(3) h^2/12 [A2, A1]`` with
        ``A1, A2 = df/dx`` at the two Gauss points, the step's propagator ``expm(Omega)``
        (exact for a stiff but slowly varying Jacobian), and the period's product by pairwise
        (tree) multiplication.  Costs one batched ``jac`` call at ``2 intervals`` times and
        ``intervals`` n x n exponentials; agrees with the variational equation integrated to
        rtol 1e-12 on the seed-000 orbits W1 and W2 to 1e-6 (tests/discretizations/test_aft.py).
        """
        U, omega, lam = self.split(Z)
        T = 2 * np.pi / omega
        frac, widths, basis = self._gauss_basis(intervals)
        h = T * widths                                                  # (N,) step lengths
        t = frac * T                                                    # (2N,) Gauss points
        x = U @ basis                                                   # (n, 2N)
        _, _, Om = magnus_exponents(self.model, lam, t, x, h)
        return ordered_product(_expm_batch(Om))

    def monodromy_gradient(self, Z, left, right, intervals: int | None = None) -> np.ndarray:
        """``left^H (dM/dU_j) right`` for every Fourier coefficient ``U_j`` of the states: the
        gradient of one entry-combination of :meth:`monodromy` ``M`` by reverse-mode
        differentiation of its Magnus product (not by ``n (2H + 1)`` monodromies).

        With ``M = P_N ... P_1``, ``P_k = expm(Omega_k)``, the bilinear form's derivative is
        ``sum_k <C_k, dP_k>`` with ``C_k = conj(a_k) r_k^T``, ``r_k = P_{k-1} ... P_1 right``
        and ``a_k = P_{k+1}^T ... P_N^T conj(left)`` (``<X, Y> = sum_ab X_ab Y_ab``).  The
        adjoint of the Fréchet derivative of the exponential, ``<C, L(A, E)> = <L(A^T, C), E>``
        (Higham, *Functions of Matrices*, SIAM 2008, §3.2 and eq. 10.15: ``L(A, E)`` is the
        upper right block of ``expm([[A, E], [0, A]])``), gives the gradient in ``Omega_k``;
        the Magnus formula of :meth:`monodromy` passes it to the Jacobians ``A1, A2`` at the
        Gauss points, and central differences of ``jac`` in each state (``2 n`` batched calls)
        to the orbit's samples, hence to ``U`` through the Fourier basis.  The dependence on
        ``omega`` and ``lam`` (a few unknowns) is left to the caller.

        Parameters
        ----------
        Z : ndarray
            The orbit's unknowns.
        left, right : ndarray (n,)
            Real or complex vectors.
        intervals : int, optional
            As :meth:`monodromy` (the same ``M``).

        Returns
        -------
        ndarray (n_coef,), complex
            ``d(left^H M right)/dU`` in the order of ``Z[:n_coef]``.
        """
        U, omega, lam = self.split(Z)
        n = self.n
        T = 2 * np.pi / omega
        frac, widths, basis = self._gauss_basis(intervals)
        N = widths.size
        h = (T * widths)[:, None, None]
        t = frac * T
        x = U @ basis                                                   # (n, 2N)

        def jac_at(xs):
            A1, A2, _ = magnus_exponents(self.model, lam, t, xs, widths)
            return np.stack([A1, A2], axis=1)                           # (N, 2, n, n)

        A1, A2, Om = magnus_exponents(self.model, lam, t, x, T * widths)
        c = np.sqrt(3) / 12
        P = _expm_batch(Om)
        r = np.empty((N, n), dtype=complex)
        a = np.empty((N, n), dtype=complex)
        r[0] = right
        for k in range(1, N):
            r[k] = P[k - 1] @ r[k - 1]
        a[N - 1] = np.conj(left)
        for k in range(N - 1, 0, -1):
            a[k - 1] = P[k].T @ a[k]
        C = a[:, :, None] * r[:, None, :]                               # (N, n, n)
        # L(Om^T, C) from the 2n x 2n block exponential, real and imaginary parts of C stacked
        B = np.zeros((2 * N, 2 * n, 2 * n))
        B[:, :n, :n] = B[:, n:, n:] = np.concatenate([Om, Om]).transpose(0, 2, 1)
        B[:, :n, n:] = np.concatenate([C.real, C.imag])
        L = _expm_batch(B)[:, :n, n:]
        G = L[:N] + 1j * L[N:]                                          # gradient in Omega_k
        A1T, A2T = A1.transpose(0, 2, 1), A2.transpose(0, 2, 1)
        G1 = 0.5 * h * G + c * h * h * (A2T @ G - G @ A2T)
        G2 = 0.5 * h * G + c * h * h * (G @ A1T - A1T @ G)
        GA = np.stack([G1, G2], axis=1)                                 # (N, 2, n, n)
        gx = np.empty((n, 2 * N), dtype=complex)
        for i in range(n):
            d = 1e-6 * max(1.0, float(np.max(np.abs(x[i]))))
            xp, xm = x.copy(), x.copy()
            xp[i] += d
            xm[i] -= d
            dA = (jac_at(xp) - jac_at(xm)) / (2 * d)
            gx[i] = np.einsum("kpab,kpab->kp", GA, dA).reshape(-1)
        return (gx @ basis.T).reshape(-1)

    def _gauss_basis(self, intervals=None):
        """Fractions of the period of the two Gauss points of each step, the steps' widths
        (fractions of the period) and the Fourier basis (2H+1, 2N) there (independent of
        omega: cached).  ``intervals``: None (the ``n_t`` samples), a number of equal steps, or
        the steps' edges as fractions of the period (increasing from 0 to 1)."""
        if intervals is None or np.ndim(intervals) == 0:
            N = int(intervals or self.n_t)
            edges = np.arange(N + 1) / N
            key = ("gauss", N)
        else:
            edges = np.asarray(intervals, dtype=float)
            if edges.ndim != 1 or edges.size < 2 or edges[0] != 0 or edges[-1] != 1 or np.any(np.diff(edges) <= 0):
                raise InputError("intervals: the steps' edges must increase from 0 to 1 (fractions of the period)")
            key = ("edges", edges.tobytes())
        if self._basis_cache.get("key") != key:
            widths = np.diff(edges)
            frac = (edges[:-1, None] + MAGNUS_GAUSS[None, :] * widths[:, None]).ravel()
            k = self._k[:, None] * (2 * np.pi * frac)[None, :]
            basis = np.empty((self.nh, frac.size))
            basis[0] = 1.0
            basis[1::2], basis[2::2] = np.cos(k), np.sin(k)
            self._basis_cache = dict(key=key, value=(frac, widths, basis))
        return self._basis_cache["value"]

    # -- results ------------------------------------------------------------------------
    def unpack(self, Z):
        """Readable form of Z (contract item 7); ``path == "aft"``."""
        U, omega, lam = self.split(Z)

        def samples(n_t=256, variables=False):
            if self.H == 0:
                return np.repeat(U[:, :1], n_t, axis=1)
            return coefficients_to_samples(U, max(int(n_t), 2 * self.H + 1))

        return dict(lam=float(lam), omega=float(omega) if self.H else np.nan, coefficients=U.copy(),
                    harmonics=self.H, n_t=self.n_t, path="aft", samples=samples)

    def state_samples(self, Z, n_t=None):
        """The n states on ``n_t`` samples of one period (default the AFT grid)."""
        U, _, _ = self.split(Z)
        if self.H == 0:
            return U[:, :1].copy()
        return coefficients_to_samples(U, n_t or self.n_t)

    def from_samples(self, x_samples, omega, lam):
        """Unknown vector from samples of the n states over one period (uniform in time).

        The time origin is shifted so that the phase condition holds exactly.
        """
        x_samples = np.asarray(x_samples, dtype=float)
        if x_samples.ndim != 2 or x_samples.shape[0] != self.n:
            raise InputError(f"state samples must have shape (n={self.n}, n_t), got {x_samples.shape}")
        if self.H and x_samples.shape[1] <= 2 * self.H:
            raise InputError(f"{x_samples.shape[1]} samples of the orbit cannot give {self.H} harmonics "
                             "(need > 2H)")
        U = samples_to_coefficients(x_samples, self.H) if self.H else x_samples.mean(axis=1, keepdims=True)
        if self.autonomous:
            U = shift_phase(U, self.phase_index // self.nh)
        return self.pack(U, omega, lam)

    def on_model(self, model):
        """The same discretization (sizes, phase variable) of ``model`` (e.g. other parameter
        values; contract item 17)."""
        return AFTDiscretization(model, self.H, phase_variable=(self.phase_index // self.nh) if self.autonomous
                                 else None, n_t=self.n_t if self.H else None)

    def resize(self, Z, harmonics: int, n_t: int | None = None):
        """Same model at another harmonic count: ``(new discretization, padded/truncated Z)``.

        ``n_t`` defaults to the default of the new H or to the current oversampling ratio
        ``n_t / (2H + 1)``, whichever is larger (a raised ``n_t`` is kept in proportion).
        """
        U, omega, lam = self.split(Z)
        H2 = int(harmonics)
        if n_t is None and H2:
            n_t = default_n_t(H2, self._analytic(self.model))
            if self.H:
                n_t = max(n_t, int(np.ceil(self.n_t * (2 * H2 + 1) / self.nh)))
        U2 = np.zeros((self.n, 2 * H2 + 1))
        k = min(self.nh, 2 * H2 + 1)
        U2[:, :k] = U[:, :k]
        pv = (self.phase_index // self.nh) if self.autonomous else None
        new = AFTDiscretization(self.model, H2, phase_variable=pv, n_t=n_t if H2 else None)
        return new, new.pack(U2, omega, lam)
