"""Seed 004 §2.2: two blocks on a belt coupled by a spring (helpers for the Table 3 study).

The model is the zoo model ``vrande2`` (seed ``004_*.txt`` eqs. (7), (10)-(12)):

    X1'' + X1 + alpha (X1 - X2) = F1*(X1' - Vdr),  F1*(v) = -(2/pi) atan(eps v) / (1 + gamma |v|)
    X2'' + X2 + alpha (X2 - X1) = beta F1*(X2' - Vdr)

with alpha = 1.2, beta = 1.3, gamma = 3, eps = 1e5 (eq. 12) and ``|v|`` regularized as
``sqrt(v**2 + delta**2)`` as in the zoo.  This module holds what the study needs beyond the
generic runtime, each piece independent of the code it checks:

* :func:`linearization` — the Jacobian of eq. (7) at the sliding equilibrium, written by hand
  (not generated), and :func:`hopf_by_hand`, the root of its spectral abscissa;
* :func:`poincare_map` / :func:`poincare_multipliers` — the return map to the paper's
  Poincaré section ``X1' = 0`` crossed from negative to positive (seed 004 §2.2) by plain
  time integration, and its multipliers by central finite differences: an independent route
  to the non-trivial Floquet multipliers (no variational equation);
* :func:`section_points` — the paper's "period-n" count (upward crossings of the section per
  minimum period), the Poincaré points of ``X1`` (Fig. 5d), ``max |X1|`` (Fig. 5c) and the
  in/out-of-phase label (sign of the time average of ``X1' X2'``: "the masses roughly moving
  in the same direction");
* :func:`shooting_branch` — the runtime's pseudo-arclength loop
  (``engine.pseudo_arclength`` with ``engine.correct``) on the shooting system
  (:class:`~frictionkit.runtime.discretizations._shooting.ShootingDiscretization`) in scaled
  unknowns ``[x0, T / 10, Vdr / 0.01]``, recording the Floquet multipliers of every orbit
  from its monodromy, and :func:`locate_fold` (zero of the tangent's ``Vdr`` component
  between two branch points).

Why this continuation was once a private loop (issue 11): the generic engine converged only
linearly here, because the ``Vdr`` column of the shooting Jacobian came from a central
difference of ``f`` with step 6e-6, comparable to the width ``1/eps = 1e-5`` of
``atan(eps v)``, and was 3-8 % wrong; and Newton iterated on integration noise.  The
generated model now provides the exact ``df/dVdr`` (``Model.dfdlam``) and the shooting
discretization declares its noise floor ``100 rtol``; the private loop and its Newton are gone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from frictionkit.runtime import PeriodicOrbit, ShootingDiscretization
from frictionkit.runtime.discretizations import ScaledDiscretization
from frictionkit.runtime.engine import Counters, NewtonOptions, correct, pseudo_arclength, tangent_at
from frictionkit.runtime.errors import ConvergenceError, InputError
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

#: seed 004 eq. (12) and the accuracy parameter of §2.2
ALPHA, BETA, GAMMA, EPS = 1.2, 1.3, 3.0, 1e5


# ---------------------------------------------------------------------------------------
# equilibrium and Hopf points, by hand from eq. (7)
# ---------------------------------------------------------------------------------------
def friction_slope(v, eps=EPS, gamma=GAMMA, delta=1e-6):
    """``dF*/dv`` of seed 004 eq. (10), ``F*(v) = -(2/pi) atan(eps v) / (1 + gamma R)``,
    ``R = sqrt(v**2 + delta**2)`` (the zoo's regularized ``|v|``)."""
    v = float(v)
    R = np.hypot(v, delta)
    den = 1.0 + gamma * R
    return -(2 / np.pi) * (eps / (1 + (eps * v) ** 2) / den - np.arctan(eps * v) * gamma * (v / R) / den ** 2)


def linearization(Vdr, alpha=ALPHA, beta=BETA, gamma=GAMMA, eps=EPS, delta=1e-6):
    """Jacobian of seed 004 eq. (7) in ``x = [X1, X1', X2, X2']`` at the sliding equilibrium.

    At the equilibrium both relative velocities are ``-Vdr``; the friction forces enter
    through their slopes ``F*'(-Vdr)`` and ``beta F*'(-Vdr)`` (eqs. 10-11): a negative slope
    of the law against ``v`` is a positive damping.
    """
    if not Vdr > 0:
        raise InputError(f"Vdr={Vdr} must be positive (the belt drives the blocks)")
    s = friction_slope(-Vdr, eps, gamma, delta)
    return np.array([[0.0, 1.0, 0.0, 0.0],
                     [-(1 + alpha), s, alpha, 0.0],
                     [0.0, 0.0, 0.0, 1.0],
                     [alpha, 0.0, -(1 + alpha), beta * s]])


def spectral_abscissa(Vdr, **params):
    """Largest real part of the eigenvalues of :func:`linearization`."""
    return float(np.max(np.linalg.eigvals(linearization(Vdr, **params)).real))


def hopf_by_hand(lo, hi, **params):
    """Hopf point: root of the spectral abscissa of the hand-written linearization in ``[lo, hi]``.

    Returns
    -------
    dict
        ``Vdr`` and ``omegas`` (the imaginary parts of the eigenvalues there, positive ones).
    """
    fa, fb = spectral_abscissa(lo, **params), spectral_abscissa(hi, **params)
    if fa * fb > 0:
        raise InputError(f"no Hopf point in [{lo}, {hi}]: the spectral abscissa is {fa:.3g} and {fb:.3g}")
    v = brentq(lambda x: spectral_abscissa(x, **params), lo, hi, xtol=1e-16, rtol=1e-15)
    ev = np.linalg.eigvals(linearization(v, **params))
    return dict(Vdr=float(v), omegas=np.sort(ev.imag[ev.imag > 0]))


# ---------------------------------------------------------------------------------------
# Poincaré section X1' = 0 (upward), seed 004 §2.2
# ---------------------------------------------------------------------------------------
def _ode(model, lam):
    p = model.param_vector(lam)
    return (lambda t, x: model.module.rhs(t, x, p)), (lambda t, x: model.module.jac(t, x, p))


def _refine_on_section(fun, x):
    """One Newton step in time onto ``V1 = 0`` (``dt = -V1 / V1'``) from a state near it."""
    f = fun(0.0, x)
    return x - f * (x[1] / f[1])


def poincare_map(model, lam, q, crossings=1, t_max=200.0, *, rtol=1e-12, atol=1e-14):
    """Return map of the section ``X1' = 0``, ``X1'' > 0`` after ``crossings`` crossings.

    Parameters
    ----------
    model : Model
        ``vrande2`` (states ``X1, X1', X2, X2'``).
    lam : float
        ``Vdr``.
    q : array_like, shape (3,)
        Point of the section ``(X1, X2, X2')`` (``X1' = 0``).
    crossings : int
        Upward crossings to wait for (the paper's ``n`` of a period-n orbit).
    t_max : float
        Give up after this time.

    Returns
    -------
    (ndarray (3,), float)
        The image point and the return time.
    """
    fun, jac = _ode(model, lam)
    x0 = np.array([q[0], 0.0, q[1], q[2]], dtype=float)

    def ev(t, x):
        return x[1]
    ev.direction = 1
    ev.terminal = True
    kw = dict(method="LSODA", jac=jac, rtol=rtol, atol=atol)
    x, t_total = x0, 0.0
    for _ in range(int(crossings)):
        # step off the section first so that the crossing at the start is not counted
        sol = solve_ivp(fun, (0.0, 1e-3), x, **kw)
        x, t_total = sol.y[:, -1], t_total + 1e-3
        sol = solve_ivp(fun, (0.0, t_max - t_total), x, events=ev, **kw)
        if sol.t_events[0].size == 0:
            raise ConvergenceError(f"no return to the section X1' = 0 within t_max={t_max} at Vdr={lam}")
        te = float(sol.t_events[0][0])
        # the event state comes from the dense output: integrate the last step again, to te
        # exactly, from the integrator's last accepted point before it
        k = int(np.searchsorted(sol.t, te)) - 1
        k = max(0, min(k, sol.t.size - 1))
        if sol.t[k] >= te:
            k = max(0, k - 1)
        seg = solve_ivp(fun, (sol.t[k], te), sol.y[:, k], **kw)
        x = _refine_on_section(fun, seg.y[:, -1])
        t_total += te
    return np.array([x[0], x[2], x[3]]), t_total


def attractor_on_section(model, lam, x_init, t_end, crossings=1, *, rtol=1e-9, atol=1e-12):
    """A shooting guess from a simulation: the state at the last upward crossing of the
    section ``X1' = 0`` within ``[0, t_end]`` and the time back to the ``crossings``-th
    previous crossing (the period of a period-``crossings`` orbit)."""
    fun, jac = _ode(model, lam)

    def ev(t, x):
        return x[1]
    ev.direction = 1
    sol = solve_ivp(fun, (0.0, t_end), np.asarray(x_init, float), method="LSODA", jac=jac, rtol=rtol, atol=atol,
                    events=ev)
    te, ye = sol.t_events[0], sol.y_events[0]
    if te.size <= crossings:
        raise ConvergenceError(f"fewer than {crossings + 1} upward crossings of X1' = 0 in [0, {t_end}] at Vdr={lam}")
    return ye[-1], te[-1] - te[-1 - crossings]


def to_section(model, lam, x0, T, *, rtol=1e-12, atol=1e-14):
    """Point of a periodic orbit on the section ``X1' = 0`` upward, as ``(X1, X2, X2')``."""
    fun, jac = _ode(model, lam)

    def ev(t, x):
        return x[1]
    ev.direction = 1
    sol = solve_ivp(fun, (0.0, 1.05 * T), np.asarray(x0, float), method="LSODA", jac=jac, rtol=rtol, atol=atol,
                    events=ev)
    te = sol.t_events[0]
    if te.size == 0:
        raise ConvergenceError(f"the orbit never crosses X1' = 0 upwards at Vdr={lam}")
    seg = solve_ivp(fun, (0.0, float(te[0])), np.asarray(x0, float), method="LSODA", jac=jac, rtol=rtol,
                    atol=atol)
    x = _refine_on_section(fun, seg.y[:, -1])
    return np.array([x[0], x[2], x[3]])


def poincare_multipliers(model, lam, q, crossings, *, h=1e-5, rtol=1e-12, atol=1e-14, t_max=200.0,
                         central=True):
    """Eigenvalues of the Jacobian of the ``crossings``-fold return map at ``q`` (central or,
    with ``central=False``, forward differences, step ``h``): the non-trivial Floquet
    multipliers of the orbit through ``q``, computed without any variational equation.

    Returns
    -------
    (ndarray (3,), ndarray (3,))
        Multipliers sorted by decreasing modulus, and the map's defect ``P(q) - q``.
    """
    q = np.asarray(q, dtype=float)
    P0, _ = poincare_map(model, lam, q, crossings, t_max, rtol=rtol, atol=atol)
    D = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        Pp, _ = poincare_map(model, lam, q + e, crossings, t_max, rtol=rtol, atol=atol)
        if central:
            Pm, _ = poincare_map(model, lam, q - e, crossings, t_max, rtol=rtol, atol=atol)
            D[:, j] = (Pp - Pm) / (2 * h)
        else:
            D[:, j] = (Pp - P0) / h
    mu = np.linalg.eigvals(D)
    return mu[np.argsort(-np.abs(mu))], P0 - q


@dataclass
class SectionInfo:
    """Poincaré data of one periodic orbit (seed 004 Fig. 5c-d).

    Attributes
    ----------
    n : int
        Upward crossings of ``X1' = 0`` per period (the paper's period-n).
    points : ndarray (n,)
        ``X1`` at those crossings (Fig. 5d).
    max_abs_X1 : float
        ``max_t |X1|`` (Fig. 5c).
    phase : int
        +1 "in phase" (time average of ``X1' X2'`` positive), -1 "out of phase".
    """

    n: int
    points: np.ndarray
    max_abs_X1: float
    phase: int


def section_points(model, lam, x0, T, *, rtol=1e-11, atol=1e-13):
    """:class:`SectionInfo` of the orbit ``(x0, T)`` by one integration with events."""
    fun, jac = _ode(model, lam)

    def up(t, x):
        return x[1]
    up.direction = 1

    def ext(t, x):
        return x[1]
    # integrate over [0, T + d]: a crossing at c in (0, d] is counted once, at c + T
    d = 1e-3 * T
    sol = solve_ivp(fun, (0.0, T + d), np.asarray(x0, float), method="LSODA", jac=jac, rtol=rtol, atol=atol,
                    events=[up, ext], dense_output=True)
    te = sol.t_events[0]
    keep = te[(te > d) & (te <= T + d)]
    pts = sol.sol(keep)[0] if keep.size else np.zeros(0)
    ex = sol.y_events[1]
    cand = np.concatenate([np.abs(sol.y[0]), np.abs(ex[:, 0]) if len(ex) else np.zeros(0)])
    tt = np.linspace(0.0, T, 4001)
    v = sol.sol(tt)
    phase = 1 if np.trapezoid(v[1] * v[3], tt) > 0 else -1
    return SectionInfo(n=int(keep.size), points=np.sort(pts), max_abs_X1=float(cand.max()), phase=phase)


# ---------------------------------------------------------------------------------------
# pseudo-arclength continuation of shooting orbits
# ---------------------------------------------------------------------------------------
@dataclass
class ShootingBranch:
    """Orbits of a shooting continuation run.

    Attributes
    ----------
    Z : ndarray (N, n + 2)
        ``[x0, T, Vdr]`` per orbit.
    tangents : ndarray (N, n + 2)
        Unit tangents in scaled unknowns.
    multipliers : ndarray (N, n) complex
        Floquet multipliers (monodromy eigenvalues), sorted by decreasing modulus.
    status, message : str
    """

    Z: np.ndarray
    tangents: np.ndarray
    multipliers: np.ndarray
    status: str = ""
    message: str = ""
    options: dict = field(default_factory=dict)

    @property
    def lam(self):
        return self.Z[:, -1]

    @property
    def T(self):
        return self.Z[:, -2]

    def nontrivial(self, i):
        mu = self.multipliers[i]
        return np.delete(mu, int(np.argmin(np.abs(mu - 1))))

    @property
    def stable(self):
        return np.array([bool(np.all(np.abs(self.nontrivial(i)) < 1 - 1e-6)) for i in range(len(self.Z))])

    @property
    def pd_test(self):
        """``min Re(mu) + 1`` over the non-trivial multipliers (zero at a flip)."""
        return np.array([float(np.min(self.nontrivial(i).real) + 1) for i in range(len(self.Z))])

    def fold_indices(self):
        """``i`` where the tangent's ``Vdr`` component changes sign between orbits ``i, i+1``."""
        s = np.sign(self.tangents[:, -1])
        return [int(i) for i in np.flatnonzero(s[1:] * s[:-1] < 0)]

    def pd_indices(self):
        g = self.pd_test
        return [int(i) for i in np.flatnonzero(g[1:] * g[:-1] < 0)]

    def orbit(self, i, model):
        n = model.n
        return PeriodicOrbit(x0=self.Z[i, :n].copy(), T=float(self.Z[i, n]), lam=float(self.Z[i, -1]),
                             monodromy=None, multipliers=self.multipliers[i], ptp=None, residual=float("nan"),
                             iterations=0, model=model,
                             options=dict(method="LSODA", rtol=self.options.get("rtol", 1e-10),
                                          atol=self.options.get("atol", 1e-12)))


def _scaled_disc(model, rtol, atol, lam_scale=0.01, T_scale=10.0):
    """The shooting system in unknowns ``[x0, T / T_scale, Vdr / lam_scale]`` (so that a step
    moves state, period and parameter by comparable amounts)."""
    n = model.n
    S = np.ones(n + 2)
    S[n], S[n + 1] = T_scale, lam_scale
    return ScaledDiscretization(ShootingDiscretization(model, rtol=rtol, atol=atol), S)


def _monodromy(sc, Y):
    n = sc.disc.n
    return np.asarray(sc.disc.jacobian(sc.from_scaled(Y)))[:n, :n] + np.eye(n)


def _correct(sc, Y, border, value=None, max_iter=10):
    """The runtime's Newton (``engine.correct``) on the scaled shooting system, converged when
    the update is below the integration-noise floor ``100 rtol`` (``sc.noise_floor``): by
    quadratic convergence the error is then far below the integration's own."""
    return correct(sc, Y, border, value, max_iter=max_iter, xtol=sc.noise_floor)


class _Recorder:
    """Engine recorder (``engine._recorder`` protocol) of a shooting run: the orbits, their
    tangents and Floquet multipliers; stops outside ``[lam_min, lam_max]`` or after ``max_steps``."""

    def __init__(self, sc, lam_min, lam_max, max_steps, progress):
        self.sc, self.bounds, self.max_steps, self.progress = sc, (lam_min, lam_max), max_steps, progress
        self.counters = Counters()
        self.Z, self.tangents, self.multipliers = [], [], []
        self.status, self.message, self.done = "max_steps", "", False

    def note_det_sign(self, Z, t, sign):
        pass

    def add(self, Y, t, step_length=None):
        mu = np.linalg.eigvals(_monodromy(self.sc, Y))
        Z = self.sc.from_scaled(Y)
        self.Z.append(Z)
        self.tangents.append(np.array(t))
        self.multipliers.append(mu)
        if self.progress is not None and len(self.Z) > 1:
            self.progress(Z, mu)
        lam_min, lam_max = self.bounds
        if not lam_min <= Z[-1] <= lam_max:
            self.status, self.message = "range", f"left [{lam_min}, {lam_max}] at Vdr={Z[-1]:.8g}"
            self.done = True
        elif len(self.Z) > self.max_steps:
            self.done = True


def shooting_branch(model, orbit: PeriodicOrbit, lam_min, lam_max, direction=1.0, *, ds=0.05, ds_min=1e-5,
                    ds_max=0.5, max_lam_step=2e-3, max_steps=200, rtol=1e-10, atol=1e-12, lam_scale=0.01,
                    T_scale=10.0, max_angle=20.0, progress=None) -> ShootingBranch:
    """Pseudo-arclength continuation of the shooting orbit ``orbit`` in ``Vdr``.

    Unknowns ``Y = [x0, T / T_scale, Vdr / lam_scale]`` (so that a step moves state, period
    and parameter by comparable amounts), equations: periodicity and the phase condition
    ``X1'(0) = 0`` (:class:`ShootingDiscretization`, phase state 0), plus the arclength
    condition.  Floquet multipliers of every orbit are the eigenvalues of its monodromy.

    Parameters
    ----------
    model : Model
    orbit : PeriodicOrbit
        Starting orbit (converged).
    lam_min, lam_max : float
        Stop outside this range.
    direction : float
        Sign of the first step in ``Vdr``.
    ds, ds_min, ds_max : float
        Initial, smallest and largest step (scaled Euclidean norm).
    max_lam_step : float
        Largest change of ``Vdr`` per step (keeps the multipliers densely sampled).
    max_steps : int
    rtol, atol : float
        Integration tolerances of the shooting residual.
    max_angle : float
        Reject a step whose tangent turns by more than this many degrees.
    progress : callable, optional
        ``progress(Z, multipliers)`` after every accepted step.

    Returns
    -------
    ShootingBranch
        ``status`` is ``"range"``, ``"max_steps"`` or ``"failed"`` (with ``message``).
    """
    if not lam_min < lam_max:
        raise InputError(f"lam_min={lam_min} must be below lam_max={lam_max}")
    sc = _scaled_disc(model, rtol, atol, lam_scale, T_scale)
    n = model.n
    e = np.zeros(n + 2)
    e[-1] = 1.0
    Y, _ = _correct(sc, sc.to_scaled(sc.disc.from_orbit(orbit)), e)
    t = tangent_at(sc, Y, e * np.sign(direction))
    rec = _Recorder(sc, lam_min, lam_max, max_steps, progress)
    rec.add(Y, t)
    # step control of the engine; the Vdr step in scaled units (Vdr / lam_scale)
    opts = NewtonOptions(step=min(ds, ds_max), min_step=ds_min, target_iterations=5, max_step=ds_max, max_lam_step=max_lam_step / lam_scale,
                         max_angle=max_angle, max_correction=1.0, newton_xtol=sc.noise_floor, max_newton_iterations=10,
                         max_steps=max_steps)
    try:
        pseudo_arclength(sc, Y, t, opts, rec)
    except ConvergenceError as exc:
        rec.status, rec.message = "failed", f"at Vdr={rec.Z[-1][-1]:.8g}: {exc}"
    Ms = [m[np.argsort(-np.abs(m))] for m in rec.multipliers]
    return ShootingBranch(Z=np.array(rec.Z), tangents=np.array(rec.tangents), multipliers=np.array(Ms),
                          status=rec.status, message=rec.message,
                          options=dict(rtol=rtol, atol=atol, lam_scale=lam_scale, T_scale=T_scale))


def locate_fold(model, branch: ShootingBranch, i, *, xtol=1e-10, rtol=None, atol=None):
    """Fold of cycles between orbits ``i`` and ``i + 1`` of ``branch``: the zero of the tangent's
    ``Vdr`` component along the branch (Brent's method on the arclength between the two orbits).

    xtol : float
        Tolerance on the scaled arclength.
    rtol, atol : float, optional
        Integration tolerances (default: the branch's).

    Returns
    -------
    dict
        ``lam``, ``Z`` (the orbit ``[x0, T, Vdr]`` at the fold) and ``multipliers``.
    """
    rtol = branch.options["rtol"] if rtol is None else rtol
    atol = branch.options["atol"] if atol is None else atol
    sc = _scaled_disc(model, rtol, atol, branch.options["lam_scale"], branch.options["T_scale"])
    S = sc.scale
    Ya, Yb = branch.Z[i] / S, branch.Z[i + 1] / S
    chord = Yb - Ya
    L = np.linalg.norm(chord)
    u = chord / L
    ta = branch.tangents[i]
    cache = {}

    def point(s):
        if s not in cache:
            Y, _ = _correct(sc, Ya + s * chord, u, u @ (Ya + s * chord))
            cache[s] = (Y, tangent_at(sc, Y, ta))
        return cache[s]

    def g(s):
        return float(point(s)[1][-1]) if 0 < s < 1 else float(branch.tangents[i if s == 0 else i + 1][-1])

    s = brentq(g, 0.0, 1.0, xtol=xtol / max(L, 1e-300))
    Y, _ = point(s) if 0 < s < 1 else (Ya if s == 0 else Yb, None)
    mu = np.linalg.eigvals(_monodromy(sc, Y))
    return dict(lam=float(Y[-1] * S[-1]), Z=Y * S, multipliers=mu[np.argsort(-np.abs(mu))])


def _pd_value(mu):
    mu = np.asarray(mu)
    nt = np.delete(mu, int(np.argmin(np.abs(mu - 1))))
    return float(np.min(nt.real) + 1)


def locate_flip(model, branch: ShootingBranch, i, *, rtol=1e-10, atol=1e-12, xtol=1e-8):
    """Flip (a multiplier through -1) between orbits ``i`` and ``i + 1`` of ``branch``.

    Brent's method on ``min Re(mu) + 1`` of the monodromy, each orbit corrected at fixed
    ``Vdr`` by Newton from the interpolation of the known orbits on either side (the same noise-floor-aware
    corrector as :func:`shooting_branch`; ``find_periodic_orbit``'s damped Newton stalls on
    this stiff problem, see the module docstring).

    Returns
    -------
    dict
        ``lam``, ``Z`` (``[x0, T, Vdr]``), ``multiplier`` (closest to -1), ``eigenvector``
        (its real unit eigenvector of the monodromy), ``multipliers``.
    """
    sc = _scaled_disc(model, rtol, atol, branch.options["lam_scale"], branch.options["T_scale"])
    S = sc.scale
    e = np.zeros(S.size)
    e[-1] = 1.0
    known = {float(branch.Z[i, -1]): branch.Z[i] / S, float(branch.Z[i + 1, -1]): branch.Z[i + 1] / S}
    solved = {}

    def orbit(lam):
        if lam not in solved:
            # guess: linear interpolation between the nearest known orbits on either side
            ls = np.array(sorted(known))
            j = int(np.clip(np.searchsorted(ls, lam), 1, ls.size - 1))
            la, lb = ls[j - 1], ls[j]
            w = (lam - la) / (lb - la)
            guess = (1 - w) * known[la] + w * known[lb]
            guess[-1] = lam / S[-1]
            Y, _ = _correct(sc, guess, e, guess[-1])
            known[lam] = Y
            solved[lam] = (Y, np.linalg.eigvals(_monodromy(sc, Y)))
        return solved[lam]

    lam = brentq(lambda l: _pd_value(orbit(l)[1]), branch.Z[i, -1], branch.Z[i + 1, -1], xtol=xtol)
    Y, _ = orbit(lam)
    w, V = np.linalg.eig(_monodromy(sc, Y))
    k = int(np.argmin(np.abs(w + 1)))
    v = V[:, k].real
    t = tangent_at(sc, Y, branch.tangents[i])
    return dict(lam=float(lam), Z=Y * S, multiplier=complex(w[k]), eigenvector=v / np.linalg.norm(v),
                multipliers=w[np.argsort(-np.abs(w))], tangent=t, scale=S)


def switch_flip(model, flip, s, *, rtol=1e-8, atol=1e-10, lam_scale=0.01, T_scale=10.0) -> PeriodicOrbit:
    """First orbit of the period-doubled branch at a flip, by a branch-switching step.

    The period-1 orbit run twice (period ``2T``) is a solution of the doubled problem, and
    at the flip the doubled branch leaves it tangent to the flip eigenvector ``v`` (with
    ``Vdr`` changing only quadratically).  The new orbit is the solution of the doubled
    shooting problem on the hyperplane ``b . (Y - Y_flip) = s`` (``Vdr`` free), ``b`` the
    eigenvector ``[v, 0, 0]`` made orthogonal to the period-1 branch's tangent, so that the
    hyperplane does not cut the period-1 branch near the flip.

    Parameters
    ----------
    flip : dict
        Result of :func:`locate_flip`.
    s : float
        Offset along the eigenvector (its sign picks one of the two symmetric half-branches).

    Returns
    -------
    PeriodicOrbit
        Period ``~ 2T``; ``multipliers`` from its monodromy (``monodromy`` is set).
    """
    n = model.n
    sc = _scaled_disc(model, rtol, atol, lam_scale, T_scale)
    Z = np.array(flip["Z"], dtype=float)
    Z[n] *= 2
    Y0 = Z / sc.scale
    # the period-1 tangent in the doubled problem's scaled unknowns (T doubles)
    t = np.array(flip["tangent"], dtype=float) * flip["scale"] / sc.scale
    t[n] *= 2
    t /= np.linalg.norm(t)
    border = np.zeros(n + 2)
    border[:n] = flip["eigenvector"]
    border -= (border @ t) * t
    border /= np.linalg.norm(border)
    Y, _ = _correct(sc, Y0 + s * border, border, border @ Y0 + s, max_iter=15)
    # reject the period-1 orbit run twice: x(T) must differ from x(0)
    M = _monodromy(sc, Y)
    Zn = Y * sc.scale
    mu = np.linalg.eigvals(M)
    orbit = PeriodicOrbit(x0=Zn[:n], T=float(Zn[n]), lam=float(Zn[-1]), monodromy=M,
                          multipliers=mu[np.argsort(-np.abs(mu))], ptp=None, residual=float("nan"), iterations=0,
                          model=model, options=dict(method="LSODA", rtol=rtol, atol=atol))
    half = orbit.at([orbit.T / 2])[:, 0]
    if np.max(np.abs(half - orbit.x0)) < 1e-6:
        raise ConvergenceError(f"switching at Vdr={flip['lam']} converged back to the period-1 orbit; "
                               "increase |s|")
    return orbit
