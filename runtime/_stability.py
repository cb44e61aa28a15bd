"""Stability of periodic orbits and criticality of Hopf points (DESIGN §5.5).

Three routes to the Floquet multipliers of a periodic orbit of the original ODE
``x' = f(x, t; p)``, all on the *original* states (no auxiliary variables, so no spurious
multipliers):

1. :func:`floquet_variational` — integrate the variational equation ``Phi' = J(x(t)) Phi``
   over one period (``_shooting``); the monodromy's eigenvalues are the multipliers.
2. :func:`floquet_collocation` — the monodromy of the collocation-discretised variational
   equation, obtained by condensing the collocation Jacobian interval by interval
   (the linearised collocation equations of interval ``i`` give the state at its end as
   ``Phi_i`` times the state at its start; ``M = Phi_{N-1} ... Phi_0``).
3. :func:`hill_multipliers` — Hill's method from HBM coefficients of the states: with
   ``y = exp(s t) sum_k c_k exp(i k omega t)``, ``|k| <= H``, the variational equation becomes
   the eigenproblem ``s c_k = sum_m Jhat_(k-m) c_m - i k omega c_k`` where ``Jhat_l`` are the
   complex Fourier coefficients of ``J(x(t))`` (a block-Toeplitz "Hill matrix").  Of its
   ``n (2H+1)`` eigenvalues the ``n`` with the smallest ``|Im s|`` are kept (Lazarus & Thomas,
   C. R. Mécanique 338, 2010), and the multipliers are ``exp(T s)``.

Every result reports ``trivial_multiplier_error``, the distance of the multiplier closest to
1 from 1 (autonomous orbits): the reliability measure of issue 4.

Criticality of a Hopf point of an equilibrium: :func:`first_lyapunov` (Kuznetsov,
"Elements of applied bifurcation theory", 3rd ed., eq. (3.20) and §8.7.2: multilinear-form
formula) with the forms ``B``, ``C`` from central finite differences of ``model.jac``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import product

import numpy as np

from ._model import Model
from .errors import ConvergenceError, InputError


@dataclass
class FloquetResult:
    """Floquet multipliers of one periodic orbit.

    Attributes
    ----------
    multipliers : ndarray, shape (n,)
        Floquet multipliers, sorted by decreasing modulus.
    exponents : ndarray or None
        Floquet exponents ``s`` (Hill's method only; ``multipliers = exp(T s)``).
    trivial_multiplier_error : float
        ``min |multiplier - 1|`` for autonomous orbits, NaN for forced ones.
    stable : bool
        All non-trivial multipliers strictly inside the unit circle (within ``tol``).
    method : str
        "variational", "collocation" or "hill".
    """

    multipliers: np.ndarray
    trivial_multiplier_error: float
    stable: bool
    method: str
    exponents: np.ndarray | None = None
    monodromy: np.ndarray | None = None

    @property
    def floquet_multipliers(self) -> np.ndarray:
        return self.multipliers

    def nontrivial(self) -> np.ndarray:
        """Multipliers without the trivial one (the one closest to 1), autonomous orbits."""
        if not np.isfinite(self.trivial_multiplier_error):
            return self.multipliers.copy()
        k = int(np.argmin(np.abs(self.multipliers - 1)))
        return np.delete(self.multipliers, k)


def _result(mult, autonomous, method, tol, exponents=None, monodromy=None):
    order = np.argsort(-np.abs(mult), kind="stable")
    mult = np.asarray(mult)[order]
    if exponents is not None:
        exponents = np.asarray(exponents)[order]
    if autonomous:
        k = int(np.argmin(np.abs(mult - 1)))
        trivial = float(abs(mult[k] - 1))
        others = np.delete(mult, k)
    else:
        trivial = float("nan")
        others = mult
    stable = bool(np.all(np.abs(others) < 1 - tol)) if others.size else True
    return FloquetResult(multipliers=mult, trivial_multiplier_error=trivial, stable=stable, method=method,
                         exponents=exponents, monodromy=monodromy)


# ---------------------------------------------------------------------------------------
# 1. variational equation
# ---------------------------------------------------------------------------------------
def floquet_variational(model: Model, lam: float, x0, T: float, *, rtol: float = 1e-12, atol: float = 1e-14,
                        method: str = "LSODA", tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers by integrating the variational equation along a known orbit.

    Parameters
    ----------
    model : Model
    lam : float
    x0 : array_like, shape (n,)
        A point of the periodic orbit at ``t = 0``.
    T : float
        Period.
    rtol, atol, method :
        ``solve_ivp`` settings (see :func:`frictionkit.runtime._shooting.find_periodic_orbit`).
    tol : float
        Margin for the ``stable`` flag: non-trivial multipliers must satisfy ``|mu| < 1 - tol``.

    Returns
    -------
    FloquetResult
    """
    from ._shooting import _Flow, _check_options, _integrate

    _check_options(method, rtol, atol, 1, 1.0)
    x0 = np.asarray(x0, dtype=float).ravel()
    if x0.shape != (model.n,):
        raise InputError(f"x0 must have the {model.n} states {model.module.STATES}, got shape {x0.shape}")
    if not T > 0:
        raise InputError(f"T={T} must be positive")
    flow = _Flow(model, lam, variational=True, sensitivity=False)
    sol = _integrate(flow, x0, float(T), method=method, rtol=rtol, atol=atol)
    _, M, _ = flow.split(sol.y[:, -1])
    return _result(np.linalg.eigvals(M), not model.forced, "variational", tol, monodromy=M)


def floquet_from_orbit(orbit, *, tol: float = 1e-6) -> FloquetResult:
    """:class:`FloquetResult` of a shooting :class:`PeriodicOrbit` (its monodromy is already known)."""
    return _result(np.linalg.eigvals(orbit.monodromy), not orbit.model.forced, "variational", tol,
                   monodromy=orbit.monodromy)


# ---------------------------------------------------------------------------------------
# 2. collocation Jacobian, condensed
# ---------------------------------------------------------------------------------------
def floquet_collocation(disc, Z, *, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers from the collocation Jacobian by condensation.

    For sub-interval ``i`` the rows of the Jacobian at its ``p`` Gauss points (all N
    variables) involve the differential variables at the interval's ``p + 1`` nodes and the
    algebraic ones at its Gauss points.  Solving them for everything but the start node gives
    the end node as ``Phi_i`` times the start node; the product of the ``Phi_i`` is the
    monodromy of the discretised variational equation (period and ``lam`` fixed).  Its
    eigenvalues converge to the Floquet multipliers at the collocation order.

    Parameters
    ----------
    disc : CollocationDiscretization
    Z : ndarray
        Converged collocation unknowns.
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``multipliers`` of the differential variables (the n states for generated models).
        Models with point conditions: the discretization's own ``monodromy`` (their point
        rows make the interval-wise condensation singular).
    """
    if getattr(disc, "has_point", False):
        M = disc.monodromy(Z)
        return _result(np.linalg.eigvals(M), disc.autonomous, "collocation", tol, monodromy=M)
    J = disc.jacobian(Z).tocoo()
    N, G, p, n_int = disc.N, disc.G, disc.degree, disc.n_intervals
    dif = np.flatnonzero(disc.differential)
    alg = np.flatnonzero(~disc.differential)
    nd, na = dif.size, alg.size
    dpos = np.full(N, -1)
    dpos[dif] = np.arange(nd)
    apos = np.full(N, -1)
    apos[alg] = np.arange(na)
    # local column layout of interval i: [inner nodes (nd*(p-1)), algebraic (na*p), end node (nd)]
    n_elim = nd * (p - 1) + na * p + nd
    keep = (J.row < N * G) & (J.col < N * G)                 # drop the phase row, omega, lam
    r, c, v = J.row[keep], J.col[keep], J.data[keep]
    interval = (r % G) // p
    local_row = (r // G) * p + (r % G) % p
    s_var, q = c // G, c % G
    is_dif = disc.differential[s_var]
    j = (q - interval * p) % G                               # local node of a differential column
    l = q - interval * p                                     # local Gauss point of an algebraic column
    A = np.zeros((n_int, N * p, n_elim))
    S = np.zeros((n_int, N * p, nd))
    start = is_dif & (j == 0)
    np.add.at(S, (interval[start], local_row[start], dpos[s_var[start]]), v[start])
    inner = is_dif & (j > 0) & (j < p)
    np.add.at(A, (interval[inner], local_row[inner], dpos[s_var[inner]] * (p - 1) + j[inner] - 1), v[inner])
    end = is_dif & (j == p)
    np.add.at(A, (interval[end], local_row[end], nd * (p - 1) + na * p + dpos[s_var[end]]), v[end])
    al = ~is_dif
    np.add.at(A, (interval[al], local_row[al], nd * (p - 1) + apos[s_var[al]] * p + l[al]), v[al])
    try:
        X = np.linalg.solve(A, -S)                          # (n_int, N*p, nd), batched
    except np.linalg.LinAlgError as exc:
        raise ConvergenceError("collocation condensation: a singular interval block") from exc
    M = np.eye(nd)
    for Phi in X[:, -nd:, :]:
        M = Phi @ M
    return _result(np.linalg.eigvals(M), disc.autonomous, "collocation", tol, monodromy=M)


# ---------------------------------------------------------------------------------------
# 3. Hill's method
# ---------------------------------------------------------------------------------------
def hbm_states_on_grid(coefficients, n: int, harmonics: int, n_t: int) -> np.ndarray:
    """Original states on ``n_t`` uniform points of one period from HBM coefficients.

    ``coefficients[i*(2H+1) + k]``: variable ``i``, k = 0 mean, 2j-1 cos(j w t), 2j sin(j w t)
    (layout of ``_discretization.py``); only the first ``n`` variables are read.
    """
    H = int(harmonics)
    c = np.asarray(coefficients, dtype=float)[: n * (2 * H + 1)].reshape(n, 2 * H + 1)
    theta = 2 * np.pi * np.arange(n_t) / n_t
    j = np.arange(1, H + 1)
    cos, sin = np.cos(np.outer(j, theta)), np.sin(np.outer(j, theta))
    return c[:, :1] + c[:, 1::2] @ cos + c[:, 2::2] @ sin


def hbm_coefficients_from_samples(samples, harmonics: int) -> np.ndarray:
    """HBM coefficients (layout of ``_discretization.py``) of uniformly sampled periodic signals.

    Parameters
    ----------
    samples : ndarray, shape (n, n_t)
        One period, endpoint excluded, ``n_t >= 2 H + 1``.
    harmonics : int

    Returns
    -------
    ndarray, shape (n * (2H+1),)
    """
    x = np.atleast_2d(np.asarray(samples, dtype=float))
    n, n_t = x.shape
    H = int(harmonics)
    if n_t < 2 * H + 1:
        raise InputError(f"{n_t} samples cannot resolve harmonics={H}: need at least 2H+1 = {2 * H + 1}")
    X = np.fft.rfft(x, axis=1) / n_t
    out = np.zeros((n, 2 * H + 1))
    out[:, 0] = X[:, 0].real
    out[:, 1::2] = 2 * X[:, 1: H + 1].real
    out[:, 2::2] = -2 * X[:, 1: H + 1].imag
    return out.ravel()


def hill_matrix(model: Model, lam: float, coefficients, omega: float, harmonics: int, *,
                n_time: int | None = None) -> np.ndarray:
    """Hill matrix ``Jhat_(k-m) - i k omega delta_km`` (complex, size n(2H+1)).

    ``J(x(t))`` of the original ODE is sampled on ``n_time`` points (default
    ``max(8H, 64)``, so that its harmonics up to ``2H`` are computed with little aliasing) and
    its Fourier coefficients by FFT.  Unknown ordering: harmonic-major, ``c[(k+H)*n + i]``.
    """
    n, H = model.n, int(harmonics)
    if H < 1:
        raise InputError(f"harmonics={harmonics} must be >= 1 for Hill's method")
    if not omega > 0:
        raise InputError(f"omega={omega} must be positive")
    n_time = int(n_time or max(8 * H, 64))
    if n_time < 4 * H + 1:
        raise InputError(f"n_time={n_time} must be at least 4H+1 = {4 * H + 1}")
    x = hbm_states_on_grid(coefficients, n, H, n_time)
    t = 2 * np.pi / omega * np.arange(n_time) / n_time
    Jt = np.asarray(model.jac(t, x, lam), dtype=float)          # (n, n, n_time)
    Jhat = np.fft.fft(Jt, axis=2) / n_time                        # Jhat[..., l] for l mod n_time
    K = 2 * H + 1
    # block (a, b) (row harmonic k = a - H, column harmonic m = b - H) is Jhat_(k-m)
    lag = (np.arange(K)[:, None] - np.arange(K)[None, :]) % n_time
    hill = Jhat[:, :, lag].transpose(2, 0, 3, 1).reshape(K * n, K * n)
    hill -= np.diag(np.repeat(1j * omega * np.arange(-H, H + 1), n))
    return hill


def _real_form(hill, n, H):
    """Similar real matrix of the complex Hill matrix (basis mean, cos, sin per harmonic).

    With complex coefficients ``c_0 = r_0``, ``c_(+-k) = (a_k -+ i b_k) / 2`` the similarity
    ``P^-1 hill P`` is real for a real ``J(t)``; its eigenvalues are the same and a real
    eigensolver is several times cheaper.
    """
    def idx(k):                                 # rows/cols of complex harmonic k
        return slice((k + H) * n, (k + H + 1) * n)

    K = 2 * H + 1
    X = np.empty_like(hill)                     # hill @ P
    X[:, 0:n] = hill[:, idx(0)]
    for k in range(1, H + 1):
        cp, cm = hill[:, idx(k)], hill[:, idx(-k)]
        X[:, (2 * k - 1) * n:(2 * k) * n] = (cp + cm) / 2
        X[:, (2 * k) * n:(2 * k + 1) * n] = 1j * (cm - cp) / 2
    Y = np.empty((K * n, K * n), dtype=complex)  # P^-1 @ X
    Y[0:n] = X[idx(0)]
    for k in range(1, H + 1):
        rp, rm = X[idx(k)], X[idx(-k)]
        Y[(2 * k - 1) * n:(2 * k) * n] = rp + rm
        Y[(2 * k) * n:(2 * k + 1) * n] = 1j * (rp - rm)
    return Y.real


def select_exponents(s, n: int, omega: float, *, rtol: float = 1e-8):
    """The ``n`` Floquet exponents kept from a Hill spectrum: smallest ``|Im s|`` first.

    A negative real multiplier ``-exp(a T)`` appears in the real Hill matrix as the
    conjugate pair ``a +- i omega/2``, two members of *one* family (they differ by
    ``i omega``); only one of them is kept, so that the next family (e.g. the second
    negative multiplier after a period doubling) is not pushed out.  A genuine complex pair
    of multipliers has ``|Im s| < omega/2`` and keeps both members.
    """
    s = np.asarray(s)
    order = np.argsort(np.abs(s.imag), kind="stable")
    chosen = []
    for k in order:
        if len(chosen) == n:
            break
        sk = s[k]
        half = abs(abs(sk.imag) - omega / 2) <= rtol * omega
        if half and any(abs(sk - np.conj(s[j])) <= rtol * max(omega, abs(sk)) for j in chosen):
            continue
        chosen.append(k)
    return s[np.array(chosen, dtype=int)]


def hill_multipliers(model: Model, lam: float, coefficients, omega: float, harmonics: int, *,
                     n_time: int | None = None, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers of an HBM orbit by Hill's method (module docstring, route 3).

    Parameters
    ----------
    model : Model
        Only ``model.jac`` (the original ODE's Jacobian) is used: no auxiliary variables.
    lam : float
    coefficients : array_like
        HBM coefficients in the layout of ``_discretization.py``; the first ``n`` variables
        (the original states) are read, so the whole HBM unknown vector may be passed.
    omega : float
        Angular frequency of the orbit.
    harmonics : int
        ``H`` of the coefficients (the Hill matrix uses the same truncation).
    n_time : int, optional
        Samples of ``J(x(t))`` for its Fourier coefficients (default ``max(8H, 64)``).
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``exponents`` are the kept Floquet exponents ``s``; ``multipliers = exp(2 pi s / omega)``.

    Notes
    -----
    The two members ``a +- i omega/2`` of one family (a negative real multiplier, e.g.
    beyond a period doubling) are counted once (:func:`select_exponents`).
    """
    hill = _real_form(hill_matrix(model, lam, coefficients, omega, harmonics, n_time=n_time), model.n,
                      int(harmonics))
    s = select_exponents(np.linalg.eigvals(hill), model.n, omega)
    T = 2 * np.pi / omega
    return _result(np.exp(T * s), not model.forced, "hill", tol, exponents=s)


# ---------------------------------------------------------------------------------------
# any discretization
# ---------------------------------------------------------------------------------------
def orbit_stability(disc, Z, *, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers of a converged orbit of any periodic discretization.

    Dispatch by the discretization: collocation -> :func:`floquet_collocation`; shooting ->
    the monodromy of its last integration at ``Z``; a Fourier (HBM) discretization, whose
    ``unpack`` gives ``coefficients`` and ``harmonics`` -> :func:`hill_multipliers`.

    Parameters
    ----------
    disc : Discretization
    Z : ndarray
        A solution (``disc.residual(Z) ~ 0``).
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
    """
    from ._collocation import CollocationDiscretization
    from ._shooting import ShootingDiscretization

    if isinstance(disc, CollocationDiscretization):
        return floquet_collocation(disc, Z, tol=tol)
    if isinstance(disc, ShootingDiscretization):
        M = disc._evaluate(Z)["M"]
        return _result(np.linalg.eigvals(M), not disc.forced, "variational", tol, monodromy=M)
    info = disc.unpack(Z) if hasattr(disc, "unpack") else {}
    if "coefficients" in info and "harmonics" in info:
        H = int(info["harmonics"])
        if H < 1:
            raise InputError("orbit_stability: an equilibrium (H = 0) has eigenvalues, not Floquet multipliers")
        coeffs = np.asarray(info["coefficients"])[: disc.model.n].ravel()
        return hill_multipliers(disc.model, info["lam"], coeffs, info["omega"], H, tol=tol)
    raise InputError(f"orbit_stability: unsupported discretization {type(disc).__name__} "
                     "(collocation, shooting or HBM)")


def multiplier_crossings(results, *, tol: float = 1e-9) -> list[tuple[int, str]]:
    """Bifurcations of cycles between consecutive orbits of a branch, from their multipliers.

    A non-trivial multiplier leaving or entering the unit circle between orbits ``i`` and
    ``i + 1`` is classified by where it crosses (DESIGN §5.5): through +1 -> ``"fold"``
    (a fold of cycles or a branch point: tell them apart by the tangent's ``lam``
    component), through -1 -> ``"pd"`` (period doubling), as a complex pair -> ``"ns"``
    (Neimark-Sacker).  The crossing point is estimated by the multiplier whose modulus is
    closest to 1 at either end.

    Parameters
    ----------
    results : sequence of FloquetResult
        Multipliers of consecutive orbits.
    tol : float
        Moduli within ``tol`` of 1 count as on the circle (no crossing).

    Returns
    -------
    list of (int, str)
        ``(i, kind)``: a crossing between orbits ``i`` and ``i + 1``.
    """
    out = []
    for i in range(len(results) - 1):
        a, b = results[i].nontrivial(), results[i + 1].nontrivial()
        na = int(np.sum(np.abs(a) > 1 + tol))
        nb = int(np.sum(np.abs(b) > 1 + tol))
        if na == nb:
            continue
        both = np.concatenate([a, b])
        mu = both[np.argmin(np.abs(np.abs(both) - 1))]
        if abs(mu.imag) > 1e-6 * max(1.0, abs(mu)) and abs(na - nb) >= 2:
            kind = "ns"
        elif mu.real > 0:
            kind = "fold"
        else:
            kind = "pd"
        out.append((i, kind))
    return out


# ---------------------------------------------------------------------------------------
# period doubling by shooting
# ---------------------------------------------------------------------------------------
def locate_period_doubling(model: Model, lam_a: float, lam_b: float, x0, T: float | None = None, *,
                           xtol: float = 1e-12, **shooting) -> dict:
    """Locate a period doubling (a multiplier through -1) between two parameter values.

    Orbits are found by shooting (warm-started from the nearest orbit already computed) and
    the test function ``min Re(multipliers) + 1`` is zeroed by Brent's method; it is
    continuous also where the multiplier comes from a complex pair that met on the negative
    real axis.

    Parameters
    ----------
    model : Model
    lam_a, lam_b : float
        Bracket: the test function must change sign between them.
    x0, T :
        Guess of the orbit at ``lam_a`` (``T`` for autonomous models only).
    xtol : float
        Absolute tolerance on ``lam``.
    **shooting
        Options of :func:`frictionkit.runtime._shooting.find_periodic_orbit`.

    Returns
    -------
    dict
        ``lam``, ``orbit`` (the period-1 orbit there), ``multiplier`` (closest to -1) and
        ``eigenvector`` (its real unit eigenvector of the monodromy).
    """
    from scipy.optimize import brentq

    from ._shooting import find_periodic_orbit

    known = {}

    def orbit_at(lam):
        if lam not in known:
            if known:
                near = known[min(known, key=lambda l: abs(l - lam))]
                guess, T_guess = near.x0, near.T
            else:
                guess, T_guess = x0, T
            known[lam] = find_periodic_orbit(model, lam, guess, None if model.forced else T_guess, **shooting)
        return known[lam]

    def test(lam):
        return float(np.min(orbit_at(lam).multipliers.real) + 1)

    fa, fb = test(lam_a), test(lam_b)
    if fa * fb > 0:
        raise InputError(f"no period doubling between lam={lam_a} and lam={lam_b}: min Re(multiplier) + 1 is "
                         f"{fa:.3g} and {fb:.3g} (same sign); widen or move the bracket")
    lam = brentq(test, lam_a, lam_b, xtol=xtol, rtol=4 * np.finfo(float).eps)
    orbit = orbit_at(lam)
    w, V = np.linalg.eig(orbit.monodromy)
    k = int(np.argmin(np.abs(w + 1)))
    vec = V[:, k].real
    return dict(lam=float(lam), orbit=orbit, multiplier=complex(w[k]), eigenvector=vec / np.linalg.norm(vec))


def switch_period_doubling(model: Model, pd: dict, delta: float, amplitude: float, **shooting):
    """Orbit of the period-doubled branch at ``lam = pd["lam"] + delta`` by shooting.

    The guess is the period-1 orbit's start plus ``+-amplitude`` times the eigenvector of
    the multiplier -1, over two base periods.  A result that is the period-1 orbit again
    (``|x(T_base) - x0|`` at the integration-noise level) is rejected.

    Parameters
    ----------
    model : Model
    pd : dict
        Result of :func:`locate_period_doubling`.
    delta : float
        Parameter offset; its sign must point to the side where the doubled orbit exists
        (the side where the period-1 orbit is unstable for a supercritical flip).
    amplitude : float
        Size of the initial displacement along the eigenvector.
    **shooting
        Options of :func:`frictionkit.runtime._shooting.find_periodic_orbit`.

    Returns
    -------
    PeriodicOrbit
        Its period is twice the base one (``omega`` half the base angular frequency).

    Raises
    ------
    ConvergenceError
        Both signs of the displacement converge back to the period-1 orbit or fail.
    """
    from ._shooting import find_periodic_orbit

    base = pd["orbit"]
    lam = pd["lam"] + float(delta)
    last = None
    for sign in (1.0, -1.0):
        guess = base.x0 + sign * float(amplitude) * pd["eigenvector"]
        try:
            if model.forced:
                orbit = find_periodic_orbit(model, lam, guess, periods=2, **shooting)
            else:
                orbit = find_periodic_orbit(model, lam, guess, 2 * base.T, **shooting)
        except ConvergenceError as exc:
            last = exc
            continue
        half = orbit.at([orbit.T / 2])[:, 0]
        scale = np.maximum(np.abs(orbit.samples(16)).max(axis=1), np.finfo(float).tiny)
        if np.max(np.abs(half - orbit.x0) / scale) > 1e-6:
            return orbit
        last = ConvergenceError("converged back to the period-1 orbit")
    raise ConvergenceError(f"no period-doubled orbit at lam={lam}: {last}; try the other sign of delta "
                           "or another amplitude")


# ---------------------------------------------------------------------------------------
# first Lyapunov coefficient
# ---------------------------------------------------------------------------------------
def _multilinear(real_form, *args):
    """Evaluate a real multilinear form on complex arguments by expanding real/imag parts."""
    parts = [(np.real(a), np.imag(a)) for a in args]
    out = np.zeros(np.shape(args[0]), dtype=complex)
    for choice in product((0, 1), repeat=len(args)):
        if any(not np.any(parts[k][c]) for k, c in enumerate(choice)):
            continue          # a zero argument: the term vanishes
        vecs = [parts[k][c] for k, c in enumerate(choice)]
        out = out + (1j ** sum(choice)) * real_form(*vecs)
    return out


def first_lyapunov(model: Model, lam: float, x_eq, *, t: float = 0.0, step: float | None = None) -> dict:
    """First Lyapunov coefficient at a Hopf point of an equilibrium of the original ODE.

    Kuznetsov's formula (Elements of applied bifurcation theory, eq. (3.20)):

        l1 = Re[ <p, C(q,q,qb)> - 2 <p, B(q, A^-1 B(q,qb))> + <p, B(qb, (2 i w0 - A)^-1 B(q,q))> ] / (2 w0)

    with ``A = df/dx`` at the equilibrium, ``A q = i w0 q``, ``A^T p = -i w0 p``,
    ``<q, q> = 1``, ``<p, q> = 1`` (``<a, b> = conj(a) . b``).  ``B(u, v)`` and
    ``C(u, v, w)`` (second and third derivatives of ``f``) come from central differences of
    ``model.jac`` along ``u`` (and ``v``) with step ``h = eps**(1/4) * scale`` (default scale
    ``max(1, |x_eq|)``; relative error about 1e-8).

    ``l1 < 0``: supercritical (a stable cycle is born); ``l1 > 0``: subcritical.  The value
    depends on the normalisation of ``q``; its sign does not.  The pair of eigenvalues closest
    to the imaginary axis (with non-zero imaginary part) is used; its real part is returned
    as ``re_lambda`` so the caller can check it is a Hopf point.

    Parameters
    ----------
    model : Model
    lam : float
        Parameter value at the Hopf point.
    x_eq : array_like, shape (n,)
        The equilibrium.
    t : float
        Time at which an (autonomous) ``jac`` is evaluated.
    step : float, optional
        Finite-difference step (absolute, along unit vectors).

    Returns
    -------
    dict
        ``l1``, ``omega0``, ``re_lambda``, ``q``, ``p``, ``criticality``
        ("supercritical" / "subcritical").
    """
    if model.forced:
        raise InputError("first_lyapunov needs an autonomous model (an equilibrium of x' = f(x))")
    x_eq = np.asarray(x_eq, dtype=float).ravel()
    n = model.n
    if x_eq.shape != (n,):
        raise InputError(f"x_eq must have the {n} states {model.module.STATES}, got shape {x_eq.shape}")
    A = np.asarray(model.jac(t, x_eq, lam), dtype=float)
    ev, V = np.linalg.eig(A)
    cand = np.flatnonzero(ev.imag > 0)
    if cand.size == 0:
        raise InputError(f"no complex eigenvalue pair of df/dx at lam={lam}: not a Hopf point")
    k = cand[np.argmin(np.abs(ev[cand].real))]
    w0 = ev[k].imag
    q = V[:, k] / np.linalg.norm(V[:, k])
    evT, W = np.linalg.eig(A.T)
    kT = np.argmin(np.abs(evT - np.conj(ev[k])))
    pvec = W[:, kT]
    pvec = pvec / np.conj(np.vdot(pvec, q))        # <p, q> = conj(p) . q = 1
    scale = max(1.0, float(np.max(np.abs(x_eq))))
    h = step or np.finfo(float).eps ** 0.25 * scale

    def jac_at(d):
        return np.asarray(model.jac(t, x_eq + d, lam), dtype=float)

    def B_real(u, v):
        return (jac_at(h * u) - jac_at(-h * u)) @ v / (2 * h)

    def C_real(u, v, w):
        return (jac_at(h * u + h * v) - jac_at(h * u - h * v) - jac_at(-h * u + h * v)
                + jac_at(-h * u - h * v)) @ w / (4 * h * h)

    def B(u, v):
        return _multilinear(B_real, u, v)

    def C(u, v, w):
        return _multilinear(C_real, u, v, w)

    qb = np.conj(q)
    b_qqb = B(q, qb)
    b_qq = B(q, q)
    term1 = np.vdot(pvec, C(q, q, qb))
    term2 = -2 * np.vdot(pvec, B(q, np.linalg.solve(A, b_qqb)))
    term3 = np.vdot(pvec, B(qb, np.linalg.solve(2j * w0 * np.eye(n) - A, b_qq)))
    l1 = float(np.real(term1 + term2 + term3) / (2 * w0))
    return dict(l1=l1, omega0=float(w0), re_lambda=float(ev[k].real), q=q, p=pvec,
                criticality="supercritical" if l1 < 0 else "subcritical")


# ---------------------------------------------------------------------------------------
# Hill's method on the HBM Jacobian of the quadratic system (consistent with the branch)
# ---------------------------------------------------------------------------------------
def _is_hbm(disc) -> bool:
    return all(hasattr(disc, a) for a in ("split", "H", "nh", "n_coef", "mass"))


def hill_multipliers_hbm(disc, Z, *, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers from the HBM Jacobian of the quadratic (recast) system.

    With ``u = exp(s t) p(theta)`` the linearised quadratic system ``mass u' = f(u)`` becomes,
    on the harmonics kept by the HBM, ``J_U p = s E p`` where ``J_U`` is the coefficient
    block of the HBM Jacobian (``dR/dU`` including ``-omega mass D``) and
    ``E = diag(mass) (x) I_(2H+1)`` (Lazarus & Thomas, C. R. Mécanique 338, 2010, on the
    HBM Jacobian).  The algebraic rows (auxiliary variables, ``mass = 0``) are condensed
    out, ``S = E_dd^-1 (J_dd - J_da J_aa^-1 J_ad)``, and of the ``n_d (2H+1)`` eigenvalues
    of ``S`` the ``n_d`` with the smallest ``|Im s|`` are kept (:func:`select_exponents`), as
    in :func:`hill_multipliers`.

    Because it linearises the very system whose branch is continued, the trivial
    multiplier is 1 to rounding (the shift ``D U`` is an exact null vector of ``J_U``) and
    a fold of the HBM branch is exactly where a second multiplier passes +1; the
    original-ODE route :func:`hill_multipliers` is the independent check (its distance of
    the trivial multiplier from 1 measures the truncation error).

    Parameters
    ----------
    disc : HBMDiscretization
        Without derivative-bilinear rows (their ``A u'`` would add to ``E``).
    Z : ndarray
        A converged HBM solution.
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``method = "hill-hbm"``; multipliers of the differential variables.
    """
    import scipy.sparse

    if not _is_hbm(disc) or disc.H < 1:
        raise InputError("hill_multipliers_hbm needs an HBM discretization with harmonics >= 1")
    kinds = tuple(disc.model.module.KINDS)
    if "derivative_bilinear" in kinds:
        raise InputError(f"model {disc.model.name!r} has derivative-bilinear rows: use hill_multipliers "
                         "(original ODE) instead")
    U, omega, _ = disc.split(Z)
    J = disc.jacobian(Z)
    J = J.toarray() if scipy.sparse.issparse(J) else np.asarray(J, dtype=float)
    nh = disc.nh
    Ju = J[:disc.n_coef, :disc.n_coef]
    mass = np.asarray(disc.mass, dtype=float)
    dif = np.flatnonzero(mass != 0)
    alg = np.flatnonzero(mass == 0)
    d = (dif[:, None] * nh + np.arange(nh)[None, :]).ravel()
    a = (alg[:, None] * nh + np.arange(nh)[None, :]).ravel()
    S = Ju[np.ix_(d, d)]
    if a.size:
        try:
            S = S - Ju[np.ix_(d, a)] @ np.linalg.solve(Ju[np.ix_(a, a)], Ju[np.ix_(a, d)])
        except np.linalg.LinAlgError as exc:
            raise ConvergenceError("hill_multipliers_hbm: the algebraic block of the HBM Jacobian is "
                                   "singular") from exc
    S = S / np.repeat(mass[dif], nh)[:, None]
    s = select_exponents(np.linalg.eigvals(S), dif.size, omega)
    T = 2 * np.pi / omega
    return _result(np.exp(T * s), disc.autonomous, "hill-hbm", tol, exponents=s)


# ---------------------------------------------------------------------------------------
# stability along a continued branch
# ---------------------------------------------------------------------------------------
def point_stability(disc, Z, *, tol: float = 1e-6, which: str = "both"):
    """Multipliers of one branch point: ``(primary, reference)`` FloquetResults.

    HBM: primary = :func:`hill_multipliers_hbm` (consistent with the branch's folds),
    reference = :func:`hill_multipliers` on the original ODE (the reliability measure);
    models with derivative-bilinear rows use the original-ODE Hill as primary and have no
    reference.  Collocation and shooting: :func:`orbit_stability`, no reference.
    ``which`` = ``"primary"`` or ``"reference"`` computes only that one (the other is None).
    """
    if _is_hbm(disc):
        if "derivative_bilinear" in tuple(disc.model.module.KINDS):
            return orbit_stability(disc, Z, tol=tol), None
        prim = hill_multipliers_hbm(disc, Z, tol=tol) if which != "reference" else None
        ref = orbit_stability(disc, Z, tol=tol) if which != "primary" else None
        return prim, ref
    return orbit_stability(disc, Z, tol=tol), None


def _largest_nontrivial(res: FloquetResult) -> float:
    nt = res.nontrivial()
    return float(np.max(np.abs(nt))) if nt.size else np.nan


def _near_one_product(res: FloquetResult) -> float:
    """``Re(mu_a mu_b) - 1`` of the two multipliers closest to 1 (autonomous), or
    ``Re(mu) - 1`` of the closest (forced): changes sign where a real multiplier passes +1,
    also at a fold where it meets the trivial one (their product stays real and smooth)."""
    mu = res.multipliers
    order = np.argsort(np.abs(mu - 1))
    if np.isfinite(res.trivial_multiplier_error) and mu.size >= 2:
        return float((mu[order[0]] * mu[order[1]]).real - 1)
    return float(mu[order[0]].real - 1)


def _pd_test(res: FloquetResult) -> float:
    return float(np.min(res.nontrivial().real) + 1)


def _ns_test(res: FloquetResult) -> float:
    nt = res.nontrivial()
    cplx = nt[np.abs(nt.imag) > 1e-9 * np.maximum(1.0, np.abs(nt))]
    return float(np.max(np.abs(cplx)) - 1) if cplx.size else np.nan


def branch_stability(branch, disc=None, *, tol: float = 1e-6, motion: bool = True, locate: bool = True,
                     counters=None, points=None, workers: int | None = None):
    """Fill the stability columns of a periodic branch and record its bifurcations of cycles.

    For every branch point the Floquet multipliers are computed (:func:`point_stability`:
    Hill's method on the HBM Jacobian for HBM branches, the condensed collocation
    monodromy for collocation, the variational monodromy for shooting).  Filled in place:

    * ``branch.stable`` (1 stable / 0 unstable), ``branch.multipliers`` (n_points, n)
      complex, ``branch.max_multiplier`` (largest non-trivial ``|mu|``),
    * ``branch.trivial_multiplier_error``: distance of the trivial multiplier from 1 by the
      original-ODE Hill method for HBM branches (the reliability measure of the truncation;
      the primary multipliers have it at rounding level), by the primary method otherwise,
    * ``branch.multiplier_agreement``: HBM only, ``|max_multiplier(HBM Hill) -
      max_multiplier(original-ODE Hill)|``,
    * ``branch.motion``: the motion label of :func:`~frictionkit.runtime._motion.classify_motion`
      for models with contacts (seed 000 eq. (26), seed 003 eqs. (7)-(8)).

    With ``locate``, multiplier crossings (:func:`multiplier_crossings`) are located along
    the branch by Brent's method on a test function, re-solving the discretization on
    hyperplanes between the two branch points (``_continuation.locate_on_branch``):

    * through +1 next to an engine fold: the fold's ``data`` gets ``crossing_param`` (the
      root of ``Re(mu_a mu_b) - 1`` of the two multipliers nearest 1), the multipliers at
      the fold and, for HBM, ``crossing_param_reference`` (the same root with the
      original-ODE Hill multipliers, searched on the nearest bracketing interval);
    * through +1 without a fold (the tangent's ``lam`` component keeps its sign): a branch
      point ``"bp"`` (unless the bordered-determinant test already recorded it there);
    * through -1: ``"pd"`` (root of ``min Re(mu) + 1``); a complex pair: ``"ns"`` (root
      of ``max |mu_complex| - 1``).

    Parameters
    ----------
    branch : Branch
        A periodic branch (``branch.discretization`` is used when ``disc`` is omitted).
    disc : Discretization, optional
    tol : float
        Margin of the stable flag (``|mu| < 1 - tol``).
    motion : bool
        Classify the motion (models declaring contacts only).
    locate : bool
        Locate bifurcations from the multiplier crossings.
    points : sequence of int, optional
        Branch indices where the multipliers are computed (increasing, first and last
        included; default all).  The continuation passes the ANM's step ends: a point in
        between inherits the stable flag of its two neighbours when they agree and no
        multiplier leaves the unit circle between them (its multiplier columns are NaN);
        otherwise every point of that step is computed.
    workers : int, optional
        Threads computing the multipliers of different points at once (the condensation
        solves run in LAPACK, outside Python's lock); default ``min(4, os.cpu_count())`` for
        harmonic balance branches, 1 otherwise.  The results do not depend on it.

    Returns
    -------
    list of FloquetResult
        The primary result of every branch point (None where not computed, see ``points``).
    """
    from ._branch import SpecialPoint
    from ._continuation import locate_on_branch

    disc = disc if disc is not None else branch.discretization
    if disc is None:
        raise InputError("branch_stability needs the branch's discretization (disc=...)")
    if branch.kind != "periodic":
        raise InputError("branch_stability: equilibrium branches carry eigenvalues, not multipliers")
    n_pts = len(branch.solutions)
    prim, refs = [None] * n_pts, [None] * n_pts

    def compute(i):
        if prim[i] is None:
            prim[i], refs[i] = point_stability(disc, branch.solutions[i], tol=tol)

    idx = sorted(set(range(n_pts)) if points is None else {int(i) for i in points} | {0, n_pts - 1})
    # threads for the harmonic balances (pure functions of Z, LAPACK-bound condensation);
    # shooting and collocation compute their multipliers one point at a time
    workers = (min(4, os.cpu_count() or 1) if _is_hbm(disc) else 1) if workers is None else max(1, int(workers))
    if workers > 1 and len(idx) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for i, res in zip(idx, pool.map(lambda i: point_stability(disc, branch.solutions[i], tol=tol), idx)):
                prim[i], refs[i] = res
    for i in idx:
        compute(i)
    stable = np.full(n_pts, np.nan)
    for a, b in zip(idx[:-1], idx[1:]):
        if b == a + 1:
            continue
        if prim[a].stable == prim[b].stable and not multiplier_crossings([prim[a], prim[b]]):
            stable[a + 1:b] = 1.0 if prim[a].stable else 0.0
        else:
            for i in range(a + 1, b):
                compute(i)
    done = [i for i in range(n_pts) if prim[i] is not None]
    n_mult = max(len(prim[i].multipliers) for i in done)
    mult = np.full((n_pts, n_mult), np.nan, dtype=complex)
    branch.max_multiplier = np.full(n_pts, np.nan)
    branch.trivial_multiplier_error = np.full(n_pts, np.nan)
    branch.multiplier_agreement = np.full(n_pts, np.nan)
    for i in done:
        p, r = prim[i], refs[i]
        mult[i, :len(p.multipliers)] = p.multipliers
        stable[i] = 1.0 if p.stable else 0.0
        branch.max_multiplier[i] = _largest_nontrivial(p)
        branch.trivial_multiplier_error[i] = (r if r is not None else p).trivial_multiplier_error
        if r is not None:
            branch.multiplier_agreement[i] = abs(_largest_nontrivial(p) - _largest_nontrivial(r))
    branch.multipliers = mult
    branch.stable = stable
    branch.stability_method = prim[done[0]].method if done else ""
    model = disc.model
    if motion and len(model.module.CONTACTS):
        from ._motion import classify_motion
        labels = []
        for Z in branch.solutions:
            info = disc.unpack(Z)
            om = info["omega"] if model.forced else None
            labels.append(classify_motion(model, info["lam"], info["samples"], omega=om).label)
        branch.motion = labels
    if not locate:
        return prim
    P = branch.solutions
    nxt = {i: j for i, j in zip(done[:-1], done[1:])}     # the next computed point

    def located(i, fun, results, stol=1e-13):
        """Root of fun(FloquetResult) between point i and the next computed one (None if no
        sign change)."""
        def test(Z):
            return fun(point_stability(disc, Z, tol=tol, which="primary")[results])
        try:
            return locate_on_branch(disc, P[i], P[nxt.get(i, i + 1)], test, counters, stol=stol)
        except (ConvergenceError, ValueError):
            return None

    # a second call replaces the points found from multipliers by the first one
    ours = ("multiplier -1", "complex pair", "multiplier +1 without a fold")
    branch.special = [sp for sp in branch.special if sp.data.get("detected_by") not in ours]
    folds = branch.special_points("fold")
    bps = branch.special_points("bp")
    new = []
    amp = np.max([np.asarray(branch.ptp[st], dtype=float) / (np.max(branch.ptp[st]) or 1.0)
                  for st in branch.states], axis=0)
    for k, kind in multiplier_crossings([prim[i] for i in done]):
        i, j = done[k], done[k + 1]
        if min(amp[i], amp[j]) <= 1e-6:
            continue     # a point at a Hopf point (zero amplitude): the multiplier is 1 there
        if kind == "fold":
            near = [f for f in folds if i - 1 <= f.index <= j]
            if near:
                f = near[0]
                # lam is quadratic in the chord coordinate at a fold: 1e-8 of the chord gives
                # lam to about 1e-16 of it; finer only chases the multipliers' noise
                Zc = located(i, _near_one_product, 0, stol=1e-8)
                if Zc is None and f.index != i:
                    Zc = located(f.index, _near_one_product, 0, stol=1e-8)
                at = point_stability(disc, f.solution, tol=tol)
                f.data.update(multipliers=at[0].multipliers,
                              crossing_param=float(Zc[-1]) if Zc is not None else np.nan)
                if at[1] is not None:
                    f.data.update(multipliers_reference=at[1].multipliers,
                                  crossing_param_reference=_reference_crossing(branch, disc, refs, i, tol,
                                                                               counters))
                continue
            near = [b for b in bps if i - 1 <= b.index <= j]
            if near:
                at = point_stability(disc, near[0].solution, tol=tol, which="primary")[0]
                near[0].data.update(multipliers=at.multipliers)
                continue
            Zc = located(i, _near_one_product, 0)
            kind_sp, detected = "bp", "multiplier +1 without a fold"
        elif kind == "pd":
            Zc = located(i, _pd_test, 0)
            kind_sp, detected = "pd", "multiplier -1"
        else:
            Zc = located(i, _ns_test, 0)
            kind_sp, detected = "ns", "complex pair"
        ok = Zc is not None
        if not ok:       # keep the better of the two bracketing points
            Zc = P[i] if abs(branch.max_multiplier[i] - 1) <= abs(branch.max_multiplier[j] - 1) else P[j]
        om = disc.unpack(Zc)["omega"]
        at = point_stability(disc, Zc, tol=tol, which="primary")[0]
        new.append(SpecialPoint(kind_sp, float(Zc[-1]), float(om), int(i), np.array(Zc),
                                data=dict(detected_by=detected, located=ok, multipliers=at.multipliers)))
    branch.special.extend(new)
    branch.special.sort(key=lambda s: s.index)
    return prim


def _reference_crossing(branch, disc, refs, i, tol, counters):
    """Parameter where the original-ODE Hill multiplier passes +1, nearest to point i."""
    from ._continuation import locate_on_branch

    have = [k for k, r in enumerate(refs) if r is not None]
    g = np.array([_near_one_product(refs[k]) for k in have])
    cand = np.flatnonzero(g[1:] * g[:-1] < 0)
    if not cand.size:
        return np.nan
    c = int(cand[np.argmin(np.abs(np.asarray(have)[cand] - i))])
    j, j2 = have[c], have[c + 1]
    try:
        Z = locate_on_branch(disc, branch.solutions[j], branch.solutions[j2],
                             lambda Z: _near_one_product(point_stability(disc, Z, tol=tol,
                                                                         which="reference")[1]), counters,
                             stol=1e-8)       # at a fold (see branch_stability)
    except (ConvergenceError, ValueError):
        return np.nan
    return float(Z[-1])
