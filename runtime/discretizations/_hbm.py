"""Harmonic balance (HBM) discretization of the quadratic system of a model (DESIGN §5.1).

Every variable of the quadratic system (``_model.py``) is a truncated Fourier series in the
normalized time ``theta = omega t`` (seed 003 eq. (11))::

    u_i(theta) = u_i0 + sum_{k=1}^H  u_ick cos(k theta) + u_isk sin(k theta)

with the coefficients stored as in ``discretizations/_base.py``: ``Y[i*(2H+1) + k]`` with k = 0
the mean, k = 2j-1 the cos(j theta) and k = 2j the sin(j theta) coefficient.  Balancing the
harmonics 0..H of every row of the quadratic system (seed 000 eq. (18), seed 003 eq. (9))
gives, for variable row i,

    R_i = c0_i + lam c1_i + (L0 U)_i + lam (L1 U)_i + Q_i(U, U) + F_i - mass_i omega D U_i = 0

where ``D`` is the derivative in theta (``D: (c_k, s_k) -> (k s_k, -k c_k)``) and ``F`` the
forcing, which sits in harmonic 1.  Products are truncated to H harmonics *exactly*: both
factors are sampled on M >= 3H+1 points of one period (no aliasing of harmonics <= H, since
a product has harmonics up to 2H and harmonic k aliases to M-k), multiplied by the model's
batched ``quad`` and projected back with ``scipy.fft.rfft``.  The Jacobian of a product is a
Toeplitz-plus-Hankel block built from the Fourier coefficients of the model's ``quad_jac``
on the samples (Cochelin & Vergez 2009, ref. [6] of seed 000), assembled through the
complex exponential form where it is a plain Toeplitz matrix.

Autonomous models add the unknown ``omega`` and one linear phase condition (the sin(theta)
coefficient of one variable is zero); forced models take ``omega`` from the forcing
frequency parameter, or from ``lam`` itself when that parameter is continued.  Equilibria
are the case ``H = 0`` (no ``omega``, no phase condition), see :func:`equilibrium_discretization`.

The unknown vector is ``Z = [Y, lam]`` with ``Y = [coefficients, omega]`` (autonomous) or
``Y = coefficients`` (forced, equilibria).  ``R(Z) = C + L Z + Q(Z, Z)`` exactly: the quadratic part
is ``Q(U, U) + lam L1 U - omega mass D U`` (``omega`` unknown or equal to ``lam``), the
rest (``c0``, ``lam c1``, ``L0 U``, the forcing) is affine.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model._interface import Model
from ..model._series import taylor_remainder
from ._base import Discretization

try:
    # numpy.fft's own pocketfft gufuncs, called without numpy.fft.irfft/rfft's argument handling
    # (about 1.5 us a call, as much as a transform of a few rows of 300 samples, and the AFT
    # transforms a few times per residual): same transforms, same factors, same bits
    from numpy.fft._pocketfft_umath import irfft as _IRFFT, rfft_n_even as _RFFT_EVEN, rfft_n_odd as _RFFT_ODD
except ImportError:               # (a private module: should numpy move it, the public functions)
    _IRFFT = _RFFT_EVEN = _RFFT_ODD = None

__all__ = ["HBMDiscretization", "equilibrium_discretization", "n_samples", "fast_length",
           "coefficients_to_samples", "coefficients_at", "samples_to_coefficients", "shift_phase",
           "to_subharmonic"]


def fast_length(n: int) -> int:
    """The smallest 5-smooth integer ``2^a 3^b 5^c >= n``: the lengths at which pocketfft's
    real transforms (numpy's and scipy's) are fastest, what ``scipy.fft.next_fast_len(n,
    real=True)`` returns (a test compares the two).

    Not scipy's function: importing ``scipy.fft`` imports ``scipy.special`` (about 0.25 s of
    CPU, a tenth of a whole ``frictionkit continue``), for one integer.
    """
    n = max(int(n), 1)
    best = 1 << (n - 1).bit_length()            # the next power of two is 5-smooth
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            # the least power of two taking p35 to n or beyond
            m = p35 << (-(-n // p35) - 1).bit_length()
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


def n_samples(harmonics: int) -> int:
    """Number of time samples used for exact products: the smallest even, FFT-friendly
    (5-smooth, :func:`fast_length`) M >= 3H+1.

    3H+1 alone can be twice a prime (H = 100 gives 302 = 2 x 151), for which the FFTs of
    the ANM series are four times slower than at the next 5-smooth size (320).
    """
    m = fast_length(3 * harmonics + 1)
    while m % 2:
        m = fast_length(m + 1)
    return m


def coefficients_to_samples(coef: np.ndarray, n_t: int) -> np.ndarray:
    """Evaluate real Fourier series on ``n_t`` equidistant points of one period.

    Parameters
    ----------
    coef : ndarray, shape (..., 2H+1)
        Coefficients ``[u0, c1, s1, ..., cH, sH]`` along the last axis.
    n_t : int
        Number of samples ``theta_j = 2 pi j / n_t``, must exceed ``2H``.

    Returns
    -------
    ndarray, shape (..., n_t)
    """
    coef = np.asarray(coef, dtype=float)
    H = (coef.shape[-1] - 1) // 2
    if n_t <= 2 * H:
        raise InputError(f"n_t = {n_t} samples cannot represent {H} harmonics (need > 2H)")
    # x_j = Y_0 + 2 Re sum_k Y_k exp(i k theta_j) with Y_k = (c_k - i s_k) / 2: the pairs
    # (c_k, s_k) are stored as the (real, imaginary) pairs of a complex array, so the
    # spectrum is filled by one multiplication through a float view, and the unnormalized
    # inverse (norm="forward") needs no scaling by n_t
    spec = np.zeros(coef.shape[:-1] + (n_t // 2 + 1,), dtype=complex)
    flat = spec.view(float)
    flat[..., 0] = coef[..., 0]
    np.multiply(coef[..., 1:], _signs(H, 0.5), out=flat[..., 2:2 * H + 2])
    if _IRFFT is None:
        return np.fft.irfft(spec, n=n_t, axis=-1, norm="forward")
    return _IRFFT(spec, 1.0, out=np.empty(spec.shape[:-1] + (n_t,)))    # norm="forward": no factor


def coefficients_at(coef: np.ndarray, theta) -> np.ndarray:
    """Evaluate real Fourier series at any phases ``theta`` (radians), where
    :func:`coefficients_to_samples` needs equidistant ones.

    Parameters
    ----------
    coef : ndarray, shape (n, 2H+1)
        Coefficients ``[u0, c1, s1, ..., cH, sH]`` of each row.
    theta : array_like, shape (M,)

    Returns
    -------
    ndarray, shape (n, M)
    """
    coef = np.asarray(coef, dtype=float)
    k = np.arange(1, (coef.shape[-1] - 1) // 2 + 1)[:, None] * np.asarray(theta, dtype=float).ravel()[None, :]
    return coef[:, :1] + coef[:, 1::2] @ np.cos(k) + coef[:, 2::2] @ np.sin(k)


def samples_on_shifted_grids(coef: np.ndarray, fractions, N: int) -> np.ndarray | None:
    """Real Fourier series at ``theta = 2 pi (j + g) / N``, ``j = 0..N-1``, for each fraction
    ``g`` of ``fractions`` (the Gauss points of ``N`` equal steps): ``(n, N len(fractions))``
    ordered ``(j, g)``; None when ``N <= 2H`` (the grid does not resolve the harmonics: sum the
    series at the points, :func:`coefficients_at`).

    The shift by ``phi = 2 pi g / N`` rotates each harmonic's pair,
    ``(c_k, s_k) -> (c_k cos k phi + s_k sin k phi, s_k cos k phi - c_k sin k phi)``, and the
    rotated series on the plain grid is one inverse FFT (:func:`coefficients_to_samples`),
    where the direct sum takes ``H x N len(fractions)`` cosines and sines.

    Parameters
    ----------
    coef : ndarray, shape (n, 2H+1)
    fractions : sequence of float
    N : int

    Returns
    -------
    ndarray, shape (n, N len(fractions)), or None
    """
    coef = np.asarray(coef, dtype=float)
    n, H = coef.shape[0], (coef.shape[1] - 1) // 2
    if N <= 2 * H:
        return None
    k = np.arange(1, H + 1)
    out = np.empty((n, N, len(fractions)))
    for g, frac in enumerate(fractions):
        phi = 2 * np.pi * frac / N
        co, si = np.cos(k * phi), np.sin(k * phi)
        r = np.empty_like(coef)
        r[:, 0] = coef[:, 0]
        r[:, 1::2] = coef[:, 1::2] * co + coef[:, 2::2] * si
        r[:, 2::2] = coef[:, 2::2] * co - coef[:, 1::2] * si
        out[:, :, g] = coefficients_to_samples(r, N)
    return out.reshape(n, N * len(fractions))


def _signs(H: int, a: float) -> np.ndarray:
    """``[a, -a, a, -a, ...]`` (2H): the real/imaginary parts of ``a conj(c + i s)``."""
    out = _SIGNS.get((H, a))
    if out is None:
        out = _SIGNS[(H, a)] = np.tile([a, -a], H)
        out.flags.writeable = False
    return out


_SIGNS: dict = {}


def samples_to_coefficients(samples: np.ndarray, harmonics: int, out: np.ndarray | None = None) -> np.ndarray:
    """Fourier coefficients ``[u0, c1, s1, ...]`` of equidistant samples of one period.

    Harmonics above ``harmonics`` are dropped (``samples.shape[-1]`` must exceed 2H for
    an unaliased result).  ``out``: an array of shape ``samples.shape[:-1] + (2H+1,)`` to
    write them into (the ANM's right-hand side, order after order).
    """
    samples = np.ascontiguousarray(samples, dtype=float)   # (then so is the spectrum)
    n_t = samples.shape[-1]
    H = harmonics
    if n_t // 2 + 1 < H + 1:
        raise InputError(f"{n_t} samples cannot give {H} harmonics")
    # Y_k = (1/n_t) sum_j x_j exp(-i k theta_j) (norm="forward"): u_0 = Re Y_0 and
    # (c_k, s_k) = 2 (Re Y_k, -Im Y_k), read through a float view of Y
    if _IRFFT is None:
        spec = np.fft.rfft(samples, axis=-1, norm="forward")
    else:                       # norm="forward": the factor 1 / n_t (numpy.reciprocal(n_t))
        spec = (_RFFT_EVEN if n_t % 2 == 0 else _RFFT_ODD)(
            samples, 1.0 / n_t, out=np.empty(samples.shape[:-1] + (n_t // 2 + 1,), dtype=complex))
    if out is None:
        out = np.empty(samples.shape[:-1] + (2 * H + 1,))
    out[..., 0] = spec[..., 0].real
    np.multiply(spec[..., 1:H + 1].view(float), _signs(H, 2.0), out=out[..., 1:])
    return out


def _product_matrix(a_coef: np.ndarray, H: int) -> np.ndarray:
    """Matrix of ``b -> truncate_H(a * b)`` on real coefficients (Toeplitz + Hankel).

    ``a_coef`` holds the real coefficients ``[a0, alpha_1, beta_1, ...]`` of ``a`` up to
    harmonic ``Ha <= 2H`` (``a = a0 + sum_j alpha_j cos j theta + beta_j sin j theta``).
    With ``alpha`` extended evenly (``alpha_0 = 2 a0``) and ``beta`` oddly to negative
    indices, the products of cosines and sines give, for ``k, l = 0..H``::

        [c_k, c_l] = (alpha_{k+l} + alpha_{k-l}) / 2    [c_k, s_l] = (beta_{k+l} - beta_{k-l}) / 2
        [s_k, c_l] = (beta_{k+l} + beta_{k-l}) / 2      [s_k, s_l] = (alpha_{k-l} - alpha_{k+l}) / 2

    (``c_0`` the mean; its row is halved), i.e. a Toeplitz part (``k - l``) plus a Hankel
    part (``k + l``), read from the coefficients by two cached gathers.
    """
    Ha = min((len(a_coef) - 1) // 2, 2 * H)
    v = np.zeros(2 * (4 * H + 1))                 # [alpha_j, beta_j] for j = -2H..2H
    v[2 * H] = 2.0 * a_coef[0]
    if Ha:
        alpha, beta = a_coef[1:2 * Ha:2], a_coef[2:2 * Ha + 1:2]
        v[2 * H + 1:2 * H + 1 + Ha] = alpha
        v[2 * H - Ha:2 * H] = alpha[::-1]
        w = v[4 * H + 1:]
        w[2 * H + 1:2 * H + 1 + Ha] = beta
        w[2 * H - Ha:2 * H] = -beta[::-1]
    i_sum, i_diff, f_sum, f_diff = _product_indices(H)
    return f_sum * v.take(i_sum) + f_diff * v.take(i_diff)


_PRODUCT_INDICES: dict = {}


def _product_indices(H: int):
    """Gather indices into ``[alpha_{-2H..2H}, beta_{-2H..2H}]`` of the Hankel (``k + l``)
    and Toeplitz (``k - l``) parts of :func:`_product_matrix`, with their factors (the
    signs, the 1/2 and the halved mean row), cached per ``H``."""
    out = _PRODUCT_INDICES.get(H)
    if out is not None:
        return out
    n, off = 2 * H + 1, 2 * H
    k = np.zeros(n, dtype=int)
    k[1::2] = k[2::2] = np.arange(1, H + 1)
    sine = np.zeros(n, dtype=bool)
    sine[2::2] = True
    kr, kc = k[:, None], k[None, :]
    sr, sc = sine[:, None], sine[None, :]
    beta = sr ^ sc                                # mixed rows/columns read beta
    base = np.where(beta, 4 * H + 1, 0) + off
    i_sum = np.broadcast_to(base + kr + kc, (n, n))
    i_diff = np.broadcast_to(base + kr - kc, (n, n))
    half = np.full((n, n), 0.5)
    half[0] *= 0.5
    # [c,c]: +,+   [s,c]: +,+   [c,s]: +,-   [s,s]: -,+
    f_sum = half * np.where(sr & sc, -1.0, 1.0)
    f_diff = half * np.where(~sr & sc, -1.0, 1.0)
    out = tuple(np.ascontiguousarray(a) for a in (i_sum, i_diff, f_sum, f_diff))
    for a in out:
        a.flags.writeable = False
    _PRODUCT_INDICES[H] = out
    return out


class HarmonicLayout:
    """Unknown layout shared by the harmonic balances (HBM here, AFT in ``_aft.py``).

    Needs ``n_coef``, ``nh``, ``H``, ``_k`` (1..H), ``lam_index``, ``omega_index``,
    ``autonomous``, ``forced``, ``omega_is_lam``, ``model`` and ``size``; ``nu`` is the
    subharmonic index of the forcing (1 unless set).
    """

    nu = 1

    @property
    def floquet_route(self):
        """Periodic orbits (``H >= 1``): Hill's method gives their multipliers."""
        return "hill" if self.H >= 1 else None

    @property
    def kind(self) -> str:
        """``"equilibria"`` for ``H = 0``, else the class's ``method`` (contract item 1)."""
        return "equilibria" if self.H == 0 else self.method

    def _layout(self, model, phase_variable, names, what):
        """Set the unknown layout: ``len(names) * (2H+1)`` coefficients, then ``omega`` for an
        autonomous orbit, then ``lam`` (needs ``nh``, ``forced`` and ``autonomous``)."""
        self.omega_is_lam = self.forced and model.forcing_frequency == model.continuation
        self.phase_index = self._phase_index(model, phase_variable, names, what) if self.autonomous else None
        self.n_coef = len(names) * self.nh
        self.m = self.n_coef + (1 if self.autonomous else 0)
        self.omega_index = self.n_coef if self.autonomous else None
        self.lam_index = self.m

    def _phase_index(self, model, phase_variable, names, what):
        """Index in Z of the sin(theta) coefficient of the phase variable (fixed to 0 by the
        phase condition); ``phase_variable`` is a name among ``names`` or an index, default the
        first state."""
        pv = model.states[0] if phase_variable is None else phase_variable
        if isinstance(pv, str):
            if pv not in names:
                raise InputError(f"phase_variable {pv!r} is not a {what} of model {model.name!r}; "
                                 f"its {what}s are {', '.join(names)}")
            pv = list(names).index(pv)
        if not 0 <= int(pv) < len(names):
            raise InputError(f"phase_variable = {pv} must index a {what} (0..{len(names) - 1})")
        return int(pv) * self.nh + 2

    def split(self, Z):
        """Return ``(U (variables, 2H+1), omega, lam)`` of an unknown vector."""
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z has shape {Z.shape}; this discretization needs ({self.size},)")
        U = Z[:self.n_coef].reshape(-1, self.nh)
        lam = Z[self.lam_index]
        if self.autonomous:
            omega = Z[self.omega_index]
        elif self.omega_is_lam:
            omega = lam / self.nu
        elif self.forced:
            omega = self.model.value(self.model.forcing_frequency) / self.nu
        else:
            omega = np.nan
        return U, omega, lam

    def pack(self, U, omega, lam):
        """Inverse of :meth:`split`."""
        Z = np.zeros(self.size)
        Z[:self.n_coef] = np.asarray(U, dtype=float).reshape(-1)
        if self.autonomous:
            Z[self.omega_index] = omega
        Z[self.lam_index] = lam
        return Z

    def _deriv(self, U):
        """``D U`` along the last axis (derivative in theta)."""
        DU = np.zeros_like(U)
        if self.H:
            DU[..., 1::2] = self._k * U[..., 2::2]
            DU[..., 2::2] = -self._k * U[..., 1::2]
        return DU


class HBMDiscretization(HarmonicLayout, Discretization):
    """Harmonic balance of a model's quadratic system, unknown ``Z = [Y, lam]``.

    Parameters
    ----------
    model : Model
        The model with its fixed parameter values (``lam`` is the unknown's last entry).
    harmonics : int
        Number of harmonics H (>= 1 for periodic orbits; 0 gives equilibria).
    phase_variable : str or int, optional
        Variable whose sin(theta) coefficient is set to zero (autonomous models only);
        default the first state.
    n_t : int, optional
        Number of time samples for products, default the smallest even 5-smooth M >= 3H+1
        (:func:`n_samples`).
    subharmonic : int, optional
        Forced models: the basis frequency is ``omega_f / subharmonic`` and the forcing sits
        in harmonic ``subharmonic`` (default 1).  ``subharmonic=2`` is the "omega/2 basis"
        of period-doubled orbits (:func:`to_subharmonic`, branch switching at period
        doubling); ``unpack`` then reports the orbit's own angular frequency ``omega_f / 2``.

    Notes
    -----
    Implements the contract of ``_base.py``; ``residual``, ``jacobian`` and
    ``quadratic`` are exact (no aliasing).  Models with derivative-bilinear rows (point
    conditions, DESIGN §2) are balanced with their mean replaced by the point condition at
    ``theta = 0``; :meth:`series_rhs` then needs the series origin for the ANM.
    """

    method = "hbm"
    has_quadratic = True
    jacobian_accepts_out = True      # jacobian(Z, out=...) assembles into a given array

    def __init__(self, model: Model, harmonics: int, phase_variable=None, n_t: int | None = None,
                 subharmonic: int = 1):
        if not isinstance(model, Model):
            raise InputError("HBMDiscretization needs a frictionkit Model (Model(module, params))")
        harmonics = int(harmonics)
        if harmonics < 0:
            raise InputError(f"harmonics = {harmonics}: the number of harmonics must be >= 1 "
                             "(or 0 for equilibria)")
        if model.sampled:
            raise InputError(
                f"model {model.name!r} is sampled (a non-analytic law, no quadratic recast): "
                "use the AFT harmonic balance (AFTDiscretization) or shooting instead of the HBM")
        self.model = model
        self.H = H = harmonics
        self.nh = 2 * H + 1
        self.N = model.N
        self.n_t = int(n_t) if n_t is not None else (n_samples(H) if H else 1)
        if H and self.n_t < 3 * H + 1:
            raise InputError(f"n_t = {self.n_t} < 3H+1 = {3 * H + 1}: products would alias")
        self.forced = model.forced
        if H == 0 and self.forced:
            raise InputError(f"model {model.name!r} is forced: it has no equilibria (use harmonics >= 1)")
        self.autonomous = (not self.forced) and H > 0
        self.nu = int(subharmonic)
        if self.nu != subharmonic or self.nu < 1:
            raise InputError(f"subharmonic = {subharmonic} must be a positive integer")
        if self.nu > 1 and not self.forced:
            raise InputError(f"subharmonic = {subharmonic}: only forced models have a forcing harmonic; "
                             "a period-doubled autonomous orbit is an ordinary orbit of half the frequency")
        if self.forced and H < self.nu:
            raise InputError(f"harmonics = {H} < subharmonic = {self.nu}: the forcing harmonic is not resolved")
        self._layout(model, phase_variable, model.variables, "variable")
        ops = model.operators()
        self.ops = ops
        self.mass = np.asarray(ops["mass"], dtype=float)
        self.qc = np.asarray(ops["qc"], dtype=float)
        self.L0 = np.asarray(ops["L0"], dtype=float)
        self.L1 = np.asarray(ops["L1"], dtype=float)
        self.has_L1 = bool(np.any(self.L1))
        # constant and lam-linear right-hand sides in coefficient layout (N, nh)
        self.C_coef = np.zeros((self.N, self.nh))
        self.C1_coef = np.zeros((self.N, self.nh))
        self.C_coef[:, 0] = ops["c0"]
        self.C1_coef[:, 0] = ops["c1"]
        if self.forced:
            if H < 1:
                raise InputError("a forced model needs harmonics >= 1")
            kc, ks = 2 * self.nu - 1, 2 * self.nu          # forcing in harmonic nu
            self.C_coef[:, kc] += ops["fc0"]
            self.C_coef[:, ks] += ops["fs0"]
            self.C1_coef[:, kc] += ops["fc1"]
            self.C1_coef[:, ks] += ops["fs1"]
        # derivative operator D on one variable's coefficients
        k = np.arange(1, H + 1, dtype=float)
        self._k = k
        # which (row, col) blocks of quad_jac can be non-zero
        QK, QI, QJ = model.quadratic_terms
        self._qblocks = sorted(set(zip(map(int, QK), map(int, QI))) | set(zip(map(int, QK), map(int, QJ))))
        self._setup_point_conditions()
        self.n_residuals = 0
        self.n_jacobians = 0

    # -- derivative-bilinear rows and point conditions (DESIGN §2) --------------------
    def _setup_point_conditions(self):
        """Structure of the derivative-bilinear rows ``0 = (A u')_i + sum_t bc_t u_J u'_L``.

        In the HBM each such row is balanced like any other, with ``d/dt`` replaced by
        ``d/dtheta`` (the row is homogeneous of degree one in the time derivative, so the
        factor ``omega`` divides out and the row stays quadratic), except that its mean,
        which only fixes the integration constant, is replaced by the point condition
        ``u_r(0) - f(pc u_v(0)) = 0`` at ``theta = 0`` (Karkar, Cochelin & Vergez, JSV 2013;
        DESIGN §2), where ``u(0) = u_0 + sum_k c_k`` is linear in the coefficients.
        """
        pcs = self.model.point_conditions()
        self.dbil_rows, self.point_rows, self.has_point = pcs.dbil_rows, pcs.point_rows, pcs.present
        #: Newton's rounding floor (``_newton.correct``): a point condition of a saturated
        #: tanh/atan/exp barely determines its integration constant (ill-conditioned)
        self.noise_floor = 1e-8 if self.has_point else 0.0
        if not self.has_point:
            return
        self.A, self.bc, self.pc = pcs.A, pcs.bc, pcs.pc
        self.B_K, self.B_J, self.B_L = pcs.B_K, pcs.B_J, pcs.B_L
        self.point_funcs, self.point_args = pcs.funcs, pcs.args
        self._A_pairs = list(zip(*np.nonzero(self.A)))
        self._pvec = self.model.param_vector()
        e0 = np.zeros(self.nh)
        e0[0] = 1.0
        e0[1::2] = 1.0                     # u(theta = 0) = u_0 + sum_k c_k
        self._e0 = e0
        Dm = np.zeros((self.nh, self.nh))
        if self.H:
            kk = np.arange(1, self.H + 1)
            Dm[2 * kk - 1, 2 * kk] = kk
            Dm[2 * kk, 2 * kk - 1] = -kk
        self._Dm = Dm

    def _u_at_origin(self, U):
        """All N variables at ``theta = 0`` from the coefficients."""
        return U @ self._e0

    def _dbil_products(self, U1, DU2):
        """Samples of ``sum_t bc_t u1_J (D u2)_L`` scattered to rows ``B_K``: (N, n_t)."""
        s1 = coefficients_to_samples(U1[self.B_J], self.n_t)
        s2 = coefficients_to_samples(DU2[self.B_L], self.n_t)
        acc = np.zeros((self.N, self.n_t))
        np.add.at(acc, self.B_K, self.bc[:, None] * s1 * s2)
        return acc

    def _dbil_coef(self, U1, U2, linear=True):
        """Coefficients of the derivative-bilinear rows: ``A D U2 + trunc(bc U1_J D U2_L)``."""
        out = np.zeros((self.N, self.nh))
        if self.H == 0:
            return out
        DU2 = self._deriv(U2)
        if linear:
            out += self.A @ DU2
        if len(self.B_K):
            out += samples_to_coefficients(self._dbil_products(U1, DU2), self.H)
        return out

    def _point_series(self, origin, terms):
        """Order-p right-hand side of the point rows: ``-rho_p`` (see ``_series.py``)."""
        if origin is None:
            raise InputError("the ANM series of a model with point conditions needs the series "
                             "origin: call series_rhs(terms, origin=Z0)")
        U0, _, _ = self.split(origin)
        cols = [U0] + [self.split(t)[0] for t in terms]
        out = np.empty(len(self.point_rows))
        for k, (f, v) in enumerate(zip(self.point_funcs, self.point_args)):
            w = np.array([self.pc[k] * (Uj[v] @ self._e0) for Uj in cols])
            out[k] = -taylor_remainder(f, w)
        return out

    # -- products -------------------------------------------------------------------
    def _quad_coef(self, U1, U2):
        """Exactly truncated coefficients of ``Q(u1, u2)``."""
        if self.H == 0:
            return self.model.quad(self.qc, U1[:, :1], U2[:, :1])
        s1 = coefficients_to_samples(U1, self.n_t)
        s2 = s1 if U2 is U1 else coefficients_to_samples(U2, self.n_t)
        return samples_to_coefficients(self.model.quad(self.qc, s1, s2), self.H)

    # -- contract -------------------------------------------------------------------
    def residual(self, Z):
        """R(Z), shape (m,) (contract item 2)."""
        self.n_residuals += 1
        U, omega, lam = self.split(Z)
        R = self.C_coef + lam * self.C1_coef + self.L0 @ U + self._quad_coef(U, U)
        if self.has_L1:
            R += lam * (self.L1 @ U)
        if self.H:
            R -= omega * self.mass[:, None] * self._deriv(U)
        if self.has_point:
            R += self._dbil_coef(U, U)
            R[self.point_rows, 0] = self.model.point(self._u_at_origin(U), self._pvec)
        out = R.reshape(-1)
        if self.autonomous:
            out = np.append(out, Z[self.phase_index])
        return out

    def _stack_series_terms(self, terms):
        """Stacked coefficients ``U`` (P, N, 2H+1), ``om``, ``lam`` (P,) and samples ``S``
        (N, P, M) (and ``SD``, samples of ``D u_L`` of the derivative-bilinear rows) of the
        ANM terms, extended by the terms not yet stored (a new series restarts them)."""
        c = self.__dict__.get("_series_stack")
        n = len(terms)
        if c is None or c["n"] > n or any(x is not t for x, t in zip(c["ids"], terms[:c["n"]])):
            c = None
        M = self.n_t if self.H else 1
        dbil = self.has_point and self.H > 0 and len(self.B_K) > 0
        if c is None or c["U"].shape[0] < n:
            cap = max(32, 2 * n)
            new = dict(n=0, ids=[], U=np.zeros((cap, self.N, self.nh)), om=np.zeros(cap), lam=np.zeros(cap),
                       S=np.zeros((self.N, cap, M)),
                       SD=np.zeros((len(self.B_L), cap, M)) if dbil else None)
            if c is not None:         # grow: keep what is stored
                k = c["n"]
                new.update(n=k, ids=c["ids"])
                new["U"][:k], new["om"][:k], new["lam"][:k] = c["U"][:k], c["om"][:k], c["lam"][:k]
                new["S"][:, :k] = c["S"][:, :k]
                if dbil:
                    new["SD"][:, :k] = c["SD"][:, :k]
            c = new
            self.__dict__["_series_stack"] = c
        for k in range(c["n"], n):
            U, om, lam = self.split(terms[k])
            c["U"][k], c["om"][k], c["lam"][k] = U, om, lam
            c["S"][:, k] = coefficients_to_samples(U, self.n_t) if self.H else U[:, :1]
            if dbil:
                c["SD"][:, k] = coefficients_to_samples(self._deriv(U)[self.B_L], self.n_t)
            c["ids"].append(terms[k])
        c["n"] = n
        return c

    def quadratic(self, Z1, Z2):
        """Bilinear part Q(Z1, Z2) of R (contract item 4), not symmetrised."""
        U1, om1, lam1 = self.split(Z1)
        U2, _, _ = self.split(Z2)
        R = self._quad_coef(U1, U2)
        if self.has_L1:
            R = R + lam1 * (self.L1 @ U2)
        if self.autonomous or self.omega_is_lam:
            R = R - om1 * self.mass[:, None] * self._deriv(U2)
        if self.has_point:
            # bilinear part of the derivative-bilinear rows; the point conditions are not
            # polynomial (their series come from series_rhs), so their entries are zero
            R = R + self._dbil_coef(U1, U2, linear=False)
            R[self.point_rows, 0] = 0.0
        out = R.reshape(-1)
        if self.autonomous:
            out = np.append(out, 0.0)
        return out

    def series_rhs(self, terms, origin=None):
        """``sum_{r=1}^{p-1} Q(Z_r, Z_{p-r})`` for the ANM (contract item 5), fast.

        The coefficients, ``omega``, ``lam`` and samples of each term are stored once per
        series (recognised by identity) in stacked arrays, and every order is a handful of
        array operations: one batched ``quad`` call over the ``p - 1`` products, one FFT,
        one contraction each for the ``lam L1 U`` and ``omega D U`` products.
        """
        p = len(terms) + 1
        c = self._stack_series_terms(terms)
        N, M = self.N, c["S"].shape[2]
        S = c["S"]
        a = np.ascontiguousarray(S[:, :p - 1]).reshape(N, -1)
        b = np.ascontiguousarray(S[:, p - 2::-1]).reshape(N, -1)      # U_{p-1}, ..., U_1
        q = self.model.quad(self.qc, a, b).reshape(N, p - 1, M).sum(axis=1)
        if c["SD"] is not None:
            # sum_r bc u_J,r (D u_L)_{p-r} of the derivative-bilinear rows
            prod = np.einsum("krm,krm->km", S[self.B_J, :p - 1], c["SD"][:, p - 2::-1])
            np.add.at(q, self.B_K, self.bc[:, None] * prod)
        R = samples_to_coefficients(q, self.H) if self.H else q
        Urev = c["U"][p - 2::-1]
        # sum_r lam_r L1 U_{p-r} = L1 (sum_r lam_r U_{p-r}); same for omega_r D U_{p-r}
        if self.has_L1:
            R = R + self.L1 @ np.tensordot(c["lam"][:p - 1], Urev, axes=1)
        if self.autonomous or self.omega_is_lam:
            R = R - self.mass[:, None] * self._deriv(np.tensordot(c["om"][:p - 1], Urev, axes=1))
        if self.has_point:
            R = np.array(R)
            R[self.point_rows, 0] = self._point_series(origin, terms)
        out = R.reshape(-1)
        if self.autonomous:
            out = np.append(out, 0.0)
        return out

    def jacobian(self, Z, out=None):
        """dR/dZ as a dense (m, m+1) array (contract item 3).

        ``out``: a zero-filled (m, m+1) array to assemble into (the engines pass the first
        m rows of their bordered buffer, ``_newton.factor_jacobian``).
        """
        self.n_jacobians += 1
        U, omega, lam = self.split(Z)
        nh = self.nh
        J = np.zeros((self.m, self.size), order="F") if out is None else out   # LAPACK order
        Lin = self.L0 + lam * self.L1 if self.has_L1 else self.L0
        # linear coupling blocks: Lin[i, j] * identity
        idx = np.arange(nh)
        for i, j in zip(*np.nonzero(Lin)):
            J[i * nh + idx, j * nh + idx] += Lin[i, j]
        # product blocks from the Fourier coefficients of quad_jac on the samples
        if self._qblocks:
            if self.H == 0:
                QJ = self.model.quad_jac(self.qc, U[:, :1])[:, :, 0]
                for i, j in self._qblocks:
                    J[i, j] += QJ[i, j]
            else:
                samples = coefficients_to_samples(U, self.n_t)
                QJs = self.model.quad_jac(self.qc, samples)            # (N, N, M)
                for i, j in self._qblocks:
                    a = samples_to_coefficients(QJs[i, j], min(2 * self.H, (self.n_t - 1) // 2))
                    J[i * nh:(i + 1) * nh, j * nh:(j + 1) * nh] += _product_matrix(a, self.H)
        # - mass omega D
        if self.H:
            for i in np.nonzero(self.mass)[0]:
                b = i * nh
                rows_c = b + 2 * np.arange(1, self.H + 1) - 1
                J[rows_c, rows_c + 1] -= omega * self.mass[i] * self._k
                J[rows_c + 1, rows_c] += omega * self.mass[i] * self._k
        if self.has_point:
            self._jacobian_point_rows(J, U)
        dU_lam = self.C1_coef.copy()
        if self.has_L1:
            dU_lam += self.L1 @ U
        mDU = (self.mass[:, None] * self._deriv(U)).reshape(-1) if self.H else None
        if self.omega_is_lam:
            dU_lam = dU_lam.reshape(-1) - mDU / self.nu
        J[:self.n_coef, self.lam_index] = np.asarray(dU_lam).reshape(-1)
        if self.autonomous:
            J[:self.n_coef, self.omega_index] = -mDU
            J[self.n_coef, self.phase_index] = 1.0
        return J

    def _jacobian_point_rows(self, J, U):
        """Add the derivative-bilinear blocks and set the point-condition rows of ``J``."""
        nh = self.nh
        if self.H:
            for i, l in self._A_pairs:
                J[i * nh:(i + 1) * nh, l * nh:(l + 1) * nh] += self.A[i, l] * self._Dm
            DU = self._deriv(U)
            for k, j, l, c in zip(self.B_K, self.B_J, self.B_L, self.bc):
                # d/dU_j (U_j * DU_l) = P(DU_l);  d/dU_l (U_j * DU_l) = P(U_j) D
                J[k * nh:(k + 1) * nh, j * nh:(j + 1) * nh] += c * _product_matrix(DU[l], self.H)
                J[k * nh:(k + 1) * nh, l * nh:(l + 1) * nh] += c * (_product_matrix(U[j], self.H) @ self._Dm)
        Pj = np.asarray(self.model.point_jac(self._u_at_origin(U), self._pvec), dtype=float)
        for k, r in enumerate(self.point_rows):
            row = r * nh
            J[row, :] = 0.0
            J[row, :self.n_coef] = np.outer(Pj[k], self._e0).reshape(-1)

    def linear_part(self):
        """``(C, L)`` of ``R(Z) = C + L Z + Q(Z, Z)``, obtained exactly from R and Q."""
        Z0 = np.zeros(self.size)
        C = self.residual(Z0)
        L = self.jacobian(Z0)
        return C, L

    # -- results ----------------------------------------------------------------------
    def unpack(self, Z):
        """Readable form of Z (contract item 7)."""
        U, omega, lam = self.split(Z)
        n = self.model.n

        def samples(n_t=256, variables=False):
            rows = U if variables else U[:n]
            if self.H == 0:
                return np.repeat(rows[:, :1], n_t, axis=1)
            return coefficients_to_samples(rows, max(int(n_t), 2 * self.H + 1))

        return dict(lam=float(lam), omega=float(omega) if self.H else np.nan,
                    coefficients=U.copy(), harmonics=self.H, samples=samples)

    def state_samples(self, Z, n_t=None):
        """All N variables on ``n_t`` samples of one period (default the product grid)."""
        U, _, _ = self.split(Z)
        if self.H == 0:
            return U[:, :1].copy()
        return coefficients_to_samples(U, n_t or max(self.n_t, 64))

    def from_samples(self, u_samples, omega, lam):
        """Unknown vector from samples of all N variables over one period.

        The time origin is shifted so that the phase condition holds exactly.
        """
        U = samples_to_coefficients(u_samples, self.H)
        if self.autonomous:
            U = shift_phase(U, self.phase_index // self.nh)
        return self.pack(U, omega, lam)

    def on_model(self, model):
        """The same discretization (sizes, phase variable) of ``model`` (e.g. other parameter
        values; contract item 17)."""
        return HBMDiscretization(model, self.H, phase_variable=(self.phase_index // self.nh) if self.autonomous
                                 else None, n_t=self.n_t, subharmonic=self.nu)

    def resize(self, Z, harmonics: int):
        """Same model at another harmonic count: ``(new discretization, padded/truncated Z)``."""
        U, omega, lam = self.split(Z)
        H2 = int(harmonics)
        U2 = np.zeros((self.N, 2 * H2 + 1))
        k = min(self.nh, 2 * H2 + 1)
        U2[:, :k] = U[:, :k]
        new = HBMDiscretization(self.model, H2,
                                phase_variable=(self.phase_index // self.nh) if self.autonomous else None,
                                subharmonic=self.nu)
        return new, new.pack(U2, omega, lam)


def to_subharmonic(disc: HBMDiscretization, Z, nu: int = 2, harmonics: int | None = None):
    """The same orbit in the ``omega / nu`` basis of a forced model (DESIGN §5.5).

    Harmonic ``k`` of the ``omega`` basis is harmonic ``nu k`` of the new one; the other
    harmonics are zero, which is where a period-``nu`` orbit branches off (for ``nu = 2``
    the odd harmonics carry the period-doubling eigenvector).

    Returns
    -------
    (HBMDiscretization, ndarray)
        The discretization with ``subharmonic = nu * disc.nu`` and ``harmonics`` (default
        ``nu * disc.H``) harmonics, and the embedded unknown vector.
    """
    if not disc.forced:
        raise InputError("to_subharmonic: only forced orbits (an autonomous period-doubled orbit is "
                         "an ordinary orbit of half the frequency)")
    nu = int(nu)
    H2 = nu * disc.H if harmonics is None else int(harmonics)
    U, omega, lam = disc.split(Z)
    new = HBMDiscretization(disc.model, H2, subharmonic=nu * disc.nu)
    U2 = np.zeros((disc.N, 2 * H2 + 1))
    U2[:, 0] = U[:, 0]
    for k in range(1, min(disc.H, H2 // nu) + 1):
        U2[:, 2 * nu * k - 1] = U[:, 2 * k - 1]
        U2[:, 2 * nu * k] = U[:, 2 * k]
    return new, new.pack(U2, omega / nu, lam)


def shift_phase(U: np.ndarray, variable: int) -> np.ndarray:
    """Shift the time origin so that the sin(theta) coefficient of ``variable`` vanishes.

    The cos(theta) coefficient of that variable becomes positive (its first-harmonic
    amplitude).
    """
    U = np.array(U, dtype=float)
    H = (U.shape[-1] - 1) // 2
    c, s = U[variable, 1], U[variable, 2]
    phi = np.arctan2(s, c)          # u ~ A cos(theta - phi): shift theta -> theta + phi
    for k in range(1, H + 1):
        ck, sk = U[:, 2 * k - 1].copy(), U[:, 2 * k].copy()
        ca, sa = np.cos(k * phi), np.sin(k * phi)
        U[:, 2 * k - 1] = ck * ca + sk * sa
        U[:, 2 * k] = -ck * sa + sk * ca
    return U


def equilibrium_discretization(model: Model) -> HBMDiscretization:
    """The equilibria of a model as the ``H = 0`` case of the HBM (DESIGN §5.1)."""
    return HBMDiscretization(model, 0)
