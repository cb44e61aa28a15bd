"""Exact damped Coulomb stick-slip cycle of the belt oscillator (seed 000 §3).

The mass-spring-damper on a belt, seed 000 eq. (8)::

    y'' + 2 eta1 y' + omega1**2 y = F1 mu(V_r),   V_r = y' - V_b,
    F1 = F_N / M1,  eta1 = zeta1 omega1,

with Coulomb's law (seed 000 eq. 7): mu = -mu_d sign(V_r) while slipping, |mu_0| <= mu_s
while sticking.  The cycle is built step by step: the slip starts from the stick-release
state (eqs. 9a-b), is a damped oscillation about F1 mu_d / omega1**2 (eqs. 10-11), stops at
the first time t1 > 0 where y'(t1) = V_b (cycle condition), and the stick closes the cycle
at t2 (eq. 17).  Stick-slip exists iff inequality (16) is false.

Because the slip is linear, a kinetic coefficient affine in the relative velocity,
``mu = mu_d + slope * V_r`` for V_r < 0, keeps everything in closed form (the slope only
changes the damping and the centre of the slip oscillation).  ``kinetic_slope`` exposes
that generalisation; it is the exact reference for the event-driven integrator with a
velocity-dependent kinetic law.  ``kinetic_slope = 0`` is seed 000 exactly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import newton

from .._roots import bracketed_root
from ..errors import InputError, ConvergenceError

__all__ = ["BeltParameters", "CoulombCycle", "coulomb_cycle", "stick_slip_margin",
           "stick_slip_exists", "max_belt_speed", "min_normal_force"]


@dataclass(frozen=True)
class BeltParameters:
    """Parameters of the seed-000 belt oscillator (defaults: seed 000 Appendix B).

    Parameters
    ----------
    zeta : float
        Modal damping ratio zeta1 (0 <= zeta < 1).
    omega1 : float
        Natural angular frequency [rad/s].
    M1 : float
        Modal mass [kg].
    FN : float
        Normal force [N].
    Vb : float
        Belt speed [m/s] (> 0).
    mus, mud : float
        Static and dynamic (kinetic) friction coefficients, mus > mud >= 0.
    kinetic_slope : float
        Slope ``a`` of an affine kinetic law ``mu = mud + a V_r`` for V_r < 0 [s/m]; 0 is
        Coulomb (seed 000 eq. 7).  The effective slip damping ``eta1 - F1 a / 2`` must
        stay >= 0.
    """

    zeta: float = 1.3096e-3
    omega1: float = 1.2316e3
    M1: float = 6.42e-3
    FN: float = 5.0
    Vb: float = 0.2
    mus: float = 0.4
    mud: float = 0.2
    kinetic_slope: float = 0.0

    def __post_init__(self):
        checks = [
            ("zeta", 0.0 <= self.zeta < 1.0, "must satisfy 0 <= zeta < 1"),
            ("omega1", self.omega1 > 0, "must be > 0"),
            ("M1", self.M1 > 0, "must be > 0"),
            ("FN", self.FN > 0, "must be > 0 (no normal force, no friction)"),
            ("Vb", self.Vb > 0, "must be > 0 (the cycle is built for a belt moving forward)"),
            ("mud", self.mud >= 0, "must be >= 0"),
            ("mus", self.mus > self.mud, "must exceed mud (Coulomb's law with mu_s > mu_d, seed 000 eq. 7)"),
        ]
        for name, ok, what in checks:
            if not (ok and math.isfinite(getattr(self, name))):
                raise InputError(f"belt parameter {name}={getattr(self, name)!r} {what}")
        if self.eta_slip < 0:
            raise InputError(
                f"kinetic_slope={self.kinetic_slope!r} makes the slip damping negative "
                f"(eta1 - F1*slope/2 = {self.eta_slip:.4g} < 0); the exact construction needs it >= 0")

    @property
    def F1(self) -> float:
        """F_N / M1 (seed 000 eq. 8)."""
        return self.FN / self.M1

    @property
    def eta1(self) -> float:
        """zeta1 omega1 (seed 000 eq. 8)."""
        return self.zeta * self.omega1

    @property
    def eta_slip(self) -> float:
        """Damping rate of the slip oscillation: eta1 - F1 a / 2 (= eta1 for Coulomb)."""
        return self.eta1 - 0.5 * self.F1 * self.kinetic_slope

    def with_(self, **changes) -> "BeltParameters":
        """Copy with some values changed (validated again)."""
        return replace(self, **changes)


@dataclass
class CoulombCycle:
    """One period of the exact stick-slip cycle, starting at stick release (t = 0).

    Attributes
    ----------
    exists : bool
        False when inequality (16) of seed 000 holds (no stick-slip); then the timing and
        amplitude fields are NaN.
    margin : float
        ``A omega_A exp(-eta t_Y) - V_b`` (m/s): the largest relative velocity reached after
        the slip starts.  ``exists == (margin >= 0)``.
    t1, t1_undamped : float
        Stick-onset time and its undamped estimate ``(pi - 2 phi) / omega_A`` used to start
        the root-find (seed 000 §3.4 algorithm).
    period, omega : float
        ``t2`` (eq. 17) and ``2 pi / t2``.
    y0, A, phi, psi, tY : float
        Eqs. (9a), (11), (13b), (15).
    ptp, minimum, maximum, mean : dict
        Per state ``"y"`` and ``"v"`` (v = y').
    """

    params: BeltParameters
    exists: bool
    margin: float
    y0: float
    A: float
    phi: float
    psi: float
    tY: float
    t1: float = math.nan
    t1_undamped: float = math.nan
    period: float = math.nan
    omega: float = math.nan
    ptp: dict = field(default_factory=dict)
    minimum: dict = field(default_factory=dict)
    maximum: dict = field(default_factory=dict)
    mean: dict = field(default_factory=dict)

    # -- closed form of the slip phase ---------------------------------------------------
    def _slip(self, t):
        p = self.params
        eta, wA = p.eta_slip, _omega_A(p)
        e = np.exp(-eta * t)
        th = wA * t + self.phi
        y = self.A * e * np.cos(th) + _centre(p)
        v = -self.A * e * (eta * np.cos(th) + wA * np.sin(th))
        return y, v

    def sample(self, n: int = 1000):
        """Sample the cycle on ``n`` equispaced times of ``[0, period)``.

        Returns
        -------
        t, y, v : ndarray
            Time [s], displacement [m], velocity [m/s].
        """
        if not self.exists:
            raise InputError(f"no stick-slip cycle at Vb={self.params.Vb}, FN={self.params.FN} "
                             f"(seed 000 inequality 16 holds); nothing to sample")
        t = np.linspace(0.0, self.period, int(n), endpoint=False)
        y, v = self._slip(np.minimum(t, self.t1))
        stick = t >= self.t1
        y1, _ = self._slip(self.t1)
        y = np.where(stick, y1 + self.params.Vb * (t - self.t1), y)
        v = np.where(stick, self.params.Vb, v)
        return t, y, v


def _omega_A(p: BeltParameters) -> float:
    # damped pulsation of the slip oscillation (seed 000 §3.2, omega_A = omega1 sqrt(1 - zeta1^2))
    return math.sqrt(p.omega1**2 - p.eta_slip**2)


def _centre(p: BeltParameters) -> float:
    # centre of the slip oscillation: F1 mu_d / omega1^2 (seed 000 eq. 10); with the affine
    # law mu = mud + a (y' - Vb) the constant part is mud - a Vb.
    return p.F1 * (p.mud - p.kinetic_slope * p.Vb) / p.omega1**2


def _release_state(p: BeltParameters):
    # eqs. (9a), (9b): spring + damper force equals F1 mu_s at the end of the stick
    return (p.F1 * p.mus - 2.0 * p.eta1 * p.Vb) / p.omega1**2, p.Vb


def _amplitude_phase(p: BeltParameters):
    """A, phi of eq. (10) from eqs. (11a), (11b), and psi of eq. (13b)."""
    y0, v0 = _release_state(p)
    eta, wA = p.eta_slip, _omega_A(p)
    c = y0 - _centre(p)
    s = -(v0 + eta * c) / wA
    A = math.hypot(c, s)
    phi = math.atan2(s, c)
    psi = math.acos(eta / p.omega1)
    return y0, A, phi, psi


def _first_extrema(p, phi, psi):
    """First local minimum and first local maximum of y'(t) for t > 0.

    y'' vanishes where omega_A t + phi - 2 psi = pi/2 + k pi (derivative of eq. 13a).  The
    slip starts with y''(0+) = F1 (mu_d - mu_s) < 0, so the first critical point is a
    minimum and the next one, half a damped period later, the global maximum of the damped
    oscillation (its t_Y is eq. 15 when phi lies in ]-pi/2, 0[).
    """
    wA = _omega_A(p)
    base = 2.0 * psi - phi + 0.5 * math.pi
    k = math.ceil((-base) / math.pi + 1e-12)
    t_min = (base + k * math.pi) / wA
    if t_min <= 0:
        t_min += math.pi / wA
    return t_min, t_min + math.pi / wA


def stick_slip_margin(params: BeltParameters) -> float:
    """Margin of the existence test, inequality (16) of seed 000.

    Returns ``A omega_A exp(-eta1 t_Y) - V_b``: the largest velocity the slip oscillation
    reaches after its first minimum, minus the belt speed.  Stick-slip exists iff the
    margin is >= 0 (no stick-slip <=> inequality 16 <=> margin < 0).

    Parameters
    ----------
    params : BeltParameters

    Returns
    -------
    float
        Margin in m/s.
    """
    _, A, phi, psi = _amplitude_phase(params)
    _, tY = _first_extrema(params, phi, psi)
    return A * _omega_A(params) * math.exp(-params.eta_slip * tY) - params.Vb


def stick_slip_exists(params: BeltParameters) -> bool:
    """True when the damped Coulomb stick-slip cycle exists (inequality 16 of seed 000 false)."""
    return stick_slip_margin(params) >= 0.0


def coulomb_cycle(params: BeltParameters | None = None, **values) -> CoulombCycle:
    """Construct the exact damped Coulomb stick-slip cycle (seed 000 §3).

    Parameters
    ----------
    params : BeltParameters, optional
        Defaults to seed 000 Appendix B.
    **values
        Overrides, e.g. ``Vb=0.5, FN=5``.

    Returns
    -------
    CoulombCycle
        With ``exists=False`` (and NaN timings) when inequality (16) holds.

    Notes
    -----
    t1 is found by Newton's method started from the undamped estimate
    ``(pi - 2 phi) / omega_A`` (seed 000 §3.4); it is accepted only if it lies in the
    interval between the first minimum and the first maximum of y', where y' - V_b has
    exactly one root, otherwise that bracket is handed to Brent's method (``bracketed_root``).
    """
    p = (params or BeltParameters()).with_(**values)
    y0, A, phi, psi = _amplitude_phase(p)
    wA, eta = _omega_A(p), p.eta_slip
    t_min, tY = _first_extrema(p, phi, psi)
    margin = A * wA * math.exp(-eta * tY) - p.Vb
    cyc = CoulombCycle(params=p, exists=margin >= 0.0, margin=margin, y0=y0, A=A, phi=phi, psi=psi, tY=tY)
    nan_stats = {"y": math.nan, "v": math.nan}
    if not cyc.exists:
        cyc.ptp, cyc.minimum, cyc.maximum, cyc.mean = (dict(nan_stats) for _ in range(4))
        return cyc

    def g(t):  # y'(t) - y'(0), eq. (13a) minus eq. (9b)
        return cyc._slip(t)[1] - p.Vb

    def dg(t):  # y''(t) on the slip: F1 mu - 2 eta1 y' - omega1^2 y, written for the slip form
        e = math.exp(-eta * t)
        th = wA * t + phi
        return A * e * ((eta**2 - wA**2) * math.cos(th) + 2 * eta * wA * math.sin(th))

    cyc.t1_undamped = (math.pi - 2.0 * phi) / wA
    t1 = math.nan
    if margin > 0:
        try:
            t1 = newton(g, cyc.t1_undamped, fprime=dg, tol=1e-15 * tY, maxiter=50)
        except (RuntimeError, OverflowError):
            t1 = math.nan
        if not (t_min < t1 <= tY) or abs(g(t1)) > 1e-12 * p.Vb:
            t1 = bracketed_root(g, t_min, tY, xtol=1e-15 * tY, rtol=1e-15, maxiter=200)
    else:  # tangency: the stick starts exactly at the maximum of y'
        t1 = tY
    if not math.isfinite(t1):
        raise ConvergenceError(f"stick-onset time t1 not found at Vb={p.Vb}, FN={p.FN}")
    cyc.t1 = t1
    y1, _ = cyc._slip(t1)
    # eq. (17): the stick carries the mass from y(t1) back to y(0) at speed V_b
    cyc.period = t1 + (y0 - y1) / p.Vb
    cyc.omega = 2.0 * math.pi / cyc.period

    # extremes of y: the ends of the stick and the zeros of y' inside the slip
    # y' = 0  <=>  omega_A t + phi - psi = pi/2 + k pi   (eq. 13a)
    ks = np.arange(-3, math.ceil(wA * t1 / math.pi) + 3)
    tz = (0.5 * math.pi + ks * math.pi + psi - phi) / wA
    tz = tz[(tz > 0) & (tz < t1)]
    ys = np.concatenate(([y0, y1], cyc._slip(tz)[0]))
    v_min = cyc._slip(t_min)[1]
    # mean of y: closed-form integral of eq. (10) over the slip plus the affine stick
    lam = complex(-eta, wA)
    slip_int = (np.exp(1j * phi) * (np.exp(lam * t1) - 1.0) / lam).real * A + _centre(p) * t1
    stick_int = 0.5 * (y1 + y0) * (cyc.period - t1)
    cyc.minimum = {"y": float(ys.min()), "v": float(v_min)}
    cyc.maximum = {"y": float(ys.max()), "v": float(p.Vb)}
    cyc.ptp = {"y": cyc.maximum["y"] - cyc.minimum["y"], "v": p.Vb - float(v_min)}
    # y is periodic, so the mean of y' over a period is exactly zero
    cyc.mean = {"y": float((slip_int + stick_int) / cyc.period), "v": 0.0}
    return cyc


def _locate_limit(fun, lo, hi, rtol, what):
    """Bisection-grade location (Brent's method) of the sign change of ``fun`` in [lo, hi].

    Returns (inside, outside): the closest points found on the existing side (fun >= 0)
    and on the non-existing side (fun < 0), |inside - outside| <= rtol * |limit|.
    """
    if not 1e-15 <= rtol < 1e-2:
        raise InputError(f"{what}: rtol={rtol!r} must lie in [1e-15, 1e-2)")
    f_lo, f_hi = fun(lo), fun(hi)
    if not (f_lo >= 0 > f_hi or f_hi >= 0 > f_lo):
        raise ConvergenceError(f"{what}: no sign change of the stick-slip margin in [{lo:.6g}, {hi:.6g}]")
    root = bracketed_root(fun, lo, hi, xtol=1e-300, rtol=max(rtol * 0.05, 1e-15), maxiter=500)
    # step outwards until both sides are confirmed (exists / does not exist)
    h = 0.25 * rtol * abs(root)
    a, b = root - h, root + h
    for _ in range(60):
        fa, fb = fun(a), fun(b)
        if (fa >= 0) != (fb >= 0):
            inside, outside = (a, b) if fa >= 0 else (b, a)
            return inside, outside
        a, b = a - h, b + h
    raise ConvergenceError(f"{what}: could not confirm the existence limit on both sides near {root:.12g}")


def max_belt_speed(params: BeltParameters | None = None, rtol: float = 1e-9, **values):
    """Maximal belt speed V_max(F_N) of the stick-slip cycle (seed 000 §3.3).

    Located by Brent's method on the margin of inequality (16) and confirmed on both sides.

    Parameters
    ----------
    params : BeltParameters, optional
        Everything but ``Vb`` is used (seed 000 Appendix B by default).
    rtol : float
        Relative width of the final bracket (default 1e-9, below the 1e-8 asked by issue 6).
    **values
        Parameter overrides, e.g. ``FN=10``.

    Returns
    -------
    (float, float)
        ``(v_exists, v_not)``: the largest belt speed found where the cycle exists and the
        smallest where it does not; V_max lies between them.
    """
    p = (params or BeltParameters()).with_(**values)

    def fun(vb):
        return stick_slip_margin(p.with_(Vb=vb))

    lo = 1e-6 * p.F1 / p.omega1
    if fun(lo) < 0:
        raise ConvergenceError(f"stick-slip does not exist even at Vb={lo:.3g} m/s for FN={p.FN}")
    # release above the slip centre needs F1 (mus - mud) > 2 eta1 Vb, a safe upper bound
    hi = lo
    while fun(hi) >= 0:
        hi *= 2.0
        if hi > 1e12:
            raise ConvergenceError(f"no maximal belt speed found for FN={p.FN} (zeta={p.zeta})")
    return _locate_limit(fun, hi / 2.0, hi, rtol, "V_max")


def min_normal_force(params: BeltParameters | None = None, rtol: float = 1e-9, **values):
    """Minimal normal force F_min(V_b) of the stick-slip cycle (seed 000 §3.3).

    Returns
    -------
    (float, float)
        ``(f_exists, f_not)``: the smallest normal force found where the cycle exists and the
        largest where it does not.
    """
    p = (params or BeltParameters()).with_(**values)

    def fun(fn):
        return stick_slip_margin(p.with_(FN=fn))

    hi = p.FN
    while fun(hi) < 0:
        hi *= 2.0
        if hi > 1e15:
            raise ConvergenceError(f"no stick-slip up to FN={hi:.3g} N at Vb={p.Vb}")
    lo = hi
    while fun(lo) >= 0:
        lo /= 2.0
        if lo < 1e-300:
            raise ConvergenceError(f"no minimal normal force found at Vb={p.Vb}")
    return _locate_limit(fun, lo, 2.0 * lo, rtol, "F_min")
