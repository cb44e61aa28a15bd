"""Floquet multipliers of periodic orbits: variational equation and collocation monodromy (DESIGN §5.5),
Liouville's formula for planar autonomous orbits."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..discretizations._aft import MAGNUS_GAUSS, _expm_batch, magnus_exponents, ordered_product
from ..discretizations._hbm import coefficients_at, coefficients_to_samples, samples_on_shifted_grids
from ..errors import ConvergenceError, InputError
from ..model._interface import Model
from ..results._result import Result


@dataclass
class FloquetResult(Result):
    """Floquet multipliers of one periodic orbit.

    Attributes
    ----------
    multipliers : ndarray, shape (n,)
        Floquet multipliers, sorted by decreasing modulus.
    exponents : ndarray or None
        Floquet exponents ``s`` (Hill's method only; ``multipliers = exp(T s)``).
    trivial_multiplier_error : float
        ``min |multiplier - 1|`` for autonomous orbits, NaN for forced ones (Liouville's
        formula, whose trivial multiplier is 1 exactly: the other's estimated error).
    stable : bool
        All non-trivial multipliers strictly inside the unit circle (within ``tol``).
    method : str
        "variational", "collocation", "hill" or "liouville" (:func:`liouville_multipliers`).
    multiplier_error : float
        Estimated error of the multipliers from the quadrature of the variational equation,
        NaN where the route gives none: a monodromy refined by Richardson's extrapolation
        (:func:`~._stability.refined_monodromy_stability`) the largest change of a multiplier
        between its two finest grids, Liouville's formula the last doubling's change.  The
        error of the orbit itself (its harmonics) is not in it: ``trivial_multiplier_error``
        shows that one.
    multipliers_compared : ndarray or None
        The less accurate multipliers ``multiplier_error`` compares ``multipliers`` with (the
        finest grid's before extrapolation; Liouville's previous doubling), None where there
        are none: :meth:`error_of` reads a test function's own error from them.
    success, status, message :
        The result convention (``status = "computed"``).
    """

    multipliers: np.ndarray
    trivial_multiplier_error: float
    stable: bool
    method: str
    exponents: np.ndarray | None = None
    monodromy: np.ndarray | None = None
    multiplier_error: float = float("nan")
    multipliers_compared: np.ndarray | None = None

    @property
    def floquet_multipliers(self) -> np.ndarray:
        return self.multipliers

    def error_of(self, fun) -> float:
        """Estimated error of ``fun(result)``, a real function of the multipliers (a test
        function of a bifurcation of cycles): its change when the multipliers are replaced by
        ``multipliers_compared``; NaN without them.  Sharper than ``multiplier_error``, the
        largest change of any multiplier, which a poorly converged one far from the test's
        can set (the 32-mode bowed string at a Neimark-Sacker point: 3.5e-7 against the
        test's own 2e-10)."""
        if self.multipliers_compared is None:
            return float("nan")
        other = np.asarray(self.multipliers_compared)
        other = other[np.argsort(-np.abs(other), kind="stable")]
        return float(abs(fun(self) - fun(dataclasses.replace(self, multipliers=other))))

    def nontrivial(self) -> np.ndarray:
        """Multipliers without the trivial one (the one closest to 1), autonomous orbits."""
        if not np.isfinite(self.trivial_multiplier_error):
            return self.multipliers.copy()
        k = int(np.argmin(np.abs(self.multipliers - 1)))
        return np.delete(self.multipliers, k)


def _result(mult, autonomous, method, tol, exponents=None, monodromy=None, error=float("nan"), compared=None):
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
                         exponents=exponents, monodromy=monodromy, multiplier_error=float(error),
                         multipliers_compared=compared)


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
        ``solve_ivp`` settings (see :func:`~frictionkit.runtime.drivers.find_periodic_orbit`).
    tol : float
        Margin for the ``stable`` flag: non-trivial multipliers must satisfy ``|mu| < 1 - tol``.

    Returns
    -------
    FloquetResult
    """
    from ..discretizations._shooting import _check_options, _Flow, _integrate

    _check_options(method, rtol, atol, 1, 1.0)
    x0 = np.asarray(x0, dtype=float).ravel()
    if x0.shape != (model.n,):
        raise InputError(f"x0 must have the {model.n} states {model.states}, got shape {x0.shape}")
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
    if disc.has_point:
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
# 4. balanced orbit: Magnus quadrature with error-controlled steps
# ---------------------------------------------------------------------------------------


def adaptive_magnus_monodromy(model: Model, lam: float, coefficients, omega: float, harmonics: int, *,
                              rtol: float = 1e-3, n_start: int = 128, max_halvings: int = 12):
    """Monodromy of the variational equation along a balanced orbit, steps chosen by the error.

    The orbit ``x(t)`` is its Fourier series (evaluated exactly at any time) and the
    variational equation ``Phi' = J(x(t)) Phi`` is integrated by the fourth-order Magnus
    method with two Gauss points, ``Omega = h/2 (A1 + A2) + sqrt(3) h^2/12 [A2, A1]``, step
    propagator ``expm(Omega)`` (Iserles and Nørsett, Phil. Trans. R. Soc. A 357, 1999; Blanes,
    Casas, Oteo and Ros, Phys. Rep. 470, 2009, eq. (253)).  Each step is compared with its two
    half steps (step doubling); the difference over 15 estimates the half steps' local error
    (order 4, Hairer, Nørsett and Wanner, Solving ODEs I, 2nd ed., §II.4).  A step is accepted
    when that estimate is below ``rtol`` (relative to the propagator's norm), with the
    Richardson-corrected propagator; otherwise it is replaced by its halves, and so on.  The
    error of the product is much smaller than the sum of the steps' (errors in the decaying
    directions are damped): on the LuGre belt of issue 26 at vb = 1, ``rtol`` = 1e-3, 1e-4
    give the multipliers to 6e-6, 6e-8 with 112, 329 steps (the uniform 128 steps of the
    AFT grid: 3.7e-3).  The
    steps are thus short where the Jacobian is large or changes fast (a LuGre bristle state
    in slip, ``|dz'/dz| = s0 |vr| / g`` of several hundred) and long elsewhere.

    Parameters
    ----------
    model : Model
        ``model.jac`` (the original ODE's Jacobian) only.
    lam, omega : float
    coefficients : array_like
        HBM coefficients of the states (layout of ``discretizations/_base.py``).
    harmonics : int
    rtol : float
        Tolerance on each step's estimated error, relative to its propagator's norm.
    n_start : int
        Equal steps to start from: at least the samples that resolve the orbit's harmonics
        (the AFT's ``n_t``).  Step doubling cannot see a feature that falls between the Gauss
        points of a step and of its halves: on the LuGre belt's stick-slip orbit at vb = 1.215,
        H = 120, 32 starting steps leave the multiplier 7.6e-3 off, 506 (``n_t``) 5.2e-4, the
        orbit's own truncation error.
    max_halvings : int
        Smallest step ``T / (n_start 2^max_halvings)``; a step still too coarse there is kept.

    Returns
    -------
    M : ndarray (n, n)
    info : dict
        ``steps`` (accepted steps), ``evaluations`` (Jacobian evaluations), ``converged``,
        ``edges`` (the accepted steps' halves as fractions of the period, 0 to 1: the partition
        on which the plain Magnus product is the half-step propagators without the Richardson
        term, ``AFTDiscretization.monodromy(Z, intervals=edges)``).
    """
    n, H = model.n, int(harmonics)
    c = np.asarray(coefficients, dtype=float)[: n * (2 * H + 1)].reshape(n, 2 * H + 1)
    T = 2 * np.pi / omega
    count = dict(evaluations=0)

    def propagators(a, h, x=None):
        t = (a[:, None] + h[:, None] * MAGNUS_GAUSS[None, :]).ravel()
        if x is None:
            x = coefficients_at(c, omega * t)
        count["evaluations"] += t.size
        return _expm_batch(magnus_exponents(model, lam, t, x, h)[2])

    a = np.arange(n_start) * (T / n_start)
    h = np.full(n_start, T / n_start)
    # the first level's Gauss points lie on equidistant grids (n_start steps and their
    # 2 n_start halves, each shifted by a Gauss point): the orbit there by inverse FFTs
    # (O(N log N)) instead of the H x 2N cosines and sines of the direct sum
    whole, halves = _on_shifted_grids(c, n_start), _on_shifted_grids(c, 2 * n_start)
    if halves is not None:
        # the whole steps and both halves in one batch (the first halves start at the even
        # grid points): one Jacobian evaluation and one exponential of 3 n_start steps instead
        # of three calls, whose fixed cost of numpy calls on small stacks dominates at the
        # belt's 128 steps
        halves = halves.reshape(n, 2 * n_start, 2)
        x = np.concatenate([whole, halves[:, 0::2].reshape(n, -1), halves[:, 1::2].reshape(n, -1)], axis=1)
        P, P1, P2 = np.split(propagators(np.concatenate([a, a, a + h / 2]),
                                         np.concatenate([h, h / 2, h / 2]), x), 3)
    else:
        P = propagators(a, h, whole)
    starts, widths, props = [], [], []
    converged = True
    for level in range(max_halvings + 1):
        if level or halves is None:
            P1, P2 = propagators(a, h / 2), propagators(a + h / 2, h / 2)
        F = P2 @ P1
        D = (F - P) / 15
        err = np.linalg.norm(D, axis=(1, 2)) / np.maximum(1.0, np.linalg.norm(F, axis=(1, 2)))
        ok = err <= rtol
        if level == max_halvings:
            converged = bool(ok.all())
            ok[:] = True
        starts.append(a[ok])
        widths.append(h[ok])
        props.append(F[ok] + D[ok])
        if ok.all():
            break
        bad = ~ok
        a = np.concatenate([a[bad], a[bad] + h[bad] / 2])
        P = np.concatenate([P1[bad], P2[bad]])
        h = np.concatenate([h[bad], h[bad]]) / 2
    order = np.argsort(np.concatenate(starts))
    M = ordered_product(np.concatenate(props)[order])
    a, h = np.concatenate(starts)[order], np.concatenate(widths)[order]
    edges = np.append(np.column_stack([a, a + h / 2]).ravel() / T, 1.0)
    edges[0] = 0.0
    return M, dict(steps=int(order.size), evaluations=count["evaluations"], converged=converged,
                       edges=edges)


def _on_shifted_grids(c, N):
    """The real Fourier series ``c`` (n, 2H+1) at the two Magnus Gauss times of each of
    :func:`adaptive_magnus_monodromy`'s ``N`` equal steps, (n, 2N) ordered ``(j, g)``; None when
    ``N <= 2H`` (the caller sums the series directly): ``_hbm.samples_on_shifted_grids``."""
    return samples_on_shifted_grids(c, MAGNUS_GAUSS, N)


# ---------------------------------------------------------------------------------------
# 5. balanced orbit of a planar autonomous system: Liouville's formula
# ---------------------------------------------------------------------------------------
#: the samples of ``tr J`` are doubled until two means give multipliers this close (relative)
LIOUVILLE_RTOL = 1e-8
#: ... up to this many times the discretization's samples
LIOUVILLE_MAX_GROWTH = 64


def liouville_multipliers(model: Model, lam: float, coefficients, omega: float, n_t: int, *,
                          tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers of a periodic orbit of a planar autonomous system (``model.n`` = 2),
    given by its Fourier coefficients, from Liouville's formula.

    The monodromy's determinant is ``exp(int_0^T tr J(x(t)) dt)`` (Liouville's formula for the
    variational equation ``Phi' = J(x(t)) Phi``); one multiplier of an autonomous orbit is 1 (the
    tangent ``x'(t)``), so the other is that determinant, real and positive: the characteristic
    exponent ``(1/T) int_0^T div f dt`` of a planar periodic orbit (Perko, Differential
    Equations and Dynamical Systems, 3rd ed., §3.4).  Nothing is integrated: the integral of the
    periodic ``tr J`` is the trapezoid rule on ``N`` equal samples of the orbit's Fourier series
    (exponentially accurate for a smooth periodic integrand), ``N`` from ``n_t`` doubled until
    two successive multipliers agree to :data:`LIOUVILLE_RTOL` (at most
    :data:`LIOUVILLE_MAX_GROWTH` ``n_t``).  Both multipliers then carry the error of the orbit
    alone; where the two of the monodromy meet (a fold of cycles: a Jordan block at 1) its
    eigenvalues lose half their digits, the determinant none.

    Seed 000's belt, default diagram (``frictionkit continue belt ... --from-hopf 1``, 186 points
    with multipliers): against the adaptive Magnus monodromy (:func:`adaptive_magnus_monodromy`)
    at ``rtol`` = 1e-10, the Magnus route at the default ``rtol`` = 1e-3 is up to 3.1e-6 off and
    this one 2.7e-8; at the fold of cycles the Magnus monodromy's two multipliers near 1 split to
    1 +- 8.3e-6 (at ``rtol`` = 1e-11) where this one is 1 to 1e-14 and the monodromy's
    determinant agrees with it to 1e-14.  The diagram's multipliers took 0.018 s of CPU
    in-process against 0.073 s for the Magnus route.

    Parameters
    ----------
    model : Model
        Two states, autonomous; ``model.jac`` only.
    lam, omega : float
    coefficients : array_like
        The orbit's Fourier coefficients (layout of ``discretizations/_base.py``: (2, 2H+1), or
        flat with the states' rows first).
    n_t : int
        The samples to start from (the discretization's own).
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``multipliers`` ``[1, det M]`` sorted by modulus; ``trivial_multiplier_error`` the
        estimated error of ``det M`` (the last doubling's change, which bounds the error once the
        trapezoid rule converges geometrically; stopped at the limit before that, as in
        ``tests/analysis/test_liouville.py``, it was up to 1.04 times below it; the trivial
        multiplier is 1 exactly, and this is the accuracy :func:`~._stability.branch_stability` compares a
        multiplier's distance from the circle with); ``method`` ``"liouville"``, or
        ``"liouville (not converged)"`` where the doublings stopped at their limit.
    """
    if model.n != 2 or model.forced:
        raise InputError(f"liouville_multipliers: an autonomous system of 2 states, not {model.n} states"
                         + (" with forcing" if model.forced else ""))
    c = np.asarray(coefficients, dtype=float)
    c = c[:2 * (c.size // 2)].reshape(2, -1) if c.ndim == 1 else c[:2]
    T = 2 * np.pi / float(omega)

    def log_det(N):
        x = coefficients_to_samples(c, N)
        J = np.asarray(model.jac(np.zeros(N), x, lam), dtype=float)
        return T * float(np.mean(J[0, 0] + J[1, 1]))

    N = max(int(n_t), c.shape[1])
    prev, N = log_det(N), 2 * N
    cur = log_det(N)
    while abs(cur - prev) > LIOUVILLE_RTOL and N < LIOUVILLE_MAX_GROWTH * int(n_t):
        prev, N = cur, 2 * N
        cur = log_det(N)
    mu = float(np.exp(cur))
    error = abs(mu - float(np.exp(prev)))
    mult = np.array([1.0, mu], dtype=complex)
    mult = mult[np.argsort(-np.abs(mult), kind="stable")]
    return FloquetResult(multipliers=mult, trivial_multiplier_error=error, stable=bool(mu < 1 - tol),
                         multiplier_error=error, multipliers_compared=np.array([1.0, np.exp(prev)], dtype=complex),
                         method="liouville" if abs(cur - prev) <= LIOUVILLE_RTOL else "liouville (not converged)")
