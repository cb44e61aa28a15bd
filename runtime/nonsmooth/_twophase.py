"""The two-phase dry-friction model of seed 001: explicit scheme and event-driven reference.

Seed 001 eq. (1): ``m x'' + F(x') = b(x, x', t)`` with x(0) = x0, x'(0) = 0 (eq. 2), where
the friction F is

* static phase (x' = 0 on an interval): F = b, admissible while |b| <= f_s (§2.1);
* dynamic phase: F = f_d sign(x') (eq. 5); its sub-phases (§2.4, eq. 10) run from one zero
  of x' to the next with ``m x'' = b - eps f_d``, ``eps = sign(b)`` at the sub-phase start.

Transitions (§2.2): static -> dynamic at tau_{j+1/2} = inf{t >= tau_j : |b(x_j, 0, t)| > f_s};
dynamic -> static at tau_{j+1}, the first zero of x' where |b| <= f_s.  Zeros of x' inside a
dynamic phase with |b| > f_s start a new sub-phase (times tau_j^k, k >= 1).

:func:`two_phase_explicit` is the step-by-step Euler scheme of seed 001 §3.1 (§3.1.1 for
f_s = f_d, §3.1.2 for f_s > f_d); :func:`two_phase_event_driven` integrates the same
two-phase model phase by phase with ``solve_ivp`` and root-finding, the reference the
scheme converges to (at first order in h).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp

from .._roots import bracketed_root
from ..errors import InputError

__all__ = ["TwoPhaseResult", "two_phase_explicit", "two_phase_event_driven", "shaw_forcing",
           "SHAW_P", "OrnsteinUhlenbeck", "thermal_forcing"]

#: Parameter set (P) of seed 001 §3.1.3 (after Shaw, Fig. 8 of his paper).
SHAW_P = dict(m=1.0, f_d=1.0, f_s=1.2, alpha=0.0, beta=6.0, omega=0.5)


def shaw_forcing(beta: float = 6.0, omega: float = 0.5, alpha: float = 0.0) -> Callable:
    """Shaw's harmonically forced oscillator, seed 001 eq. (23).

    ``b(x, x', t) = beta cos(omega t) - 2 alpha x' - x``.
    """
    def b(x, v, t):
        return beta * math.cos(omega * t) - 2.0 * alpha * v - x
    return b


def thermal_forcing(K: float, beta: float, temperature: Callable) -> Callable:
    """Thermal dilatation forcing of seed 001 eq. (3): ``b(x, x', t) = K (beta T(t) - x)``."""
    def b(x, v, t):
        return K * (beta * temperature(t) - x)
    return b


@dataclass
class OrnsteinUhlenbeck:
    """A sampled Ornstein-Uhlenbeck path ``dv = -theta v dt + sigma dW`` (seed 001 §3.1.4).

    Sampled exactly on a uniform grid (the OU transition is Gaussian with mean
    ``v e^{-theta dt}`` and variance ``sigma^2 (1 - e^{-2 theta dt}) / (2 theta)``) from a
    ``numpy.random.default_rng(seed)`` stream, and linearly interpolated in between, so the
    same seed gives the same path for every solver that evaluates it.

    Parameters
    ----------
    t_end, dt : float
        Horizon and grid spacing.
    seed : int
        Seed of ``numpy.random.default_rng``.
    theta, sigma, v0 : float
        Mean-reversion rate, noise intensity, initial value (seed 001: 1, 1, 0).
    """

    t_end: float
    dt: float
    seed: int = 0
    theta: float = 1.0
    sigma: float = 1.0
    v0: float = 0.0
    t: np.ndarray = field(init=False, repr=False)
    v: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if not (self.t_end > 0 and self.dt > 0 and self.theta > 0 and self.sigma >= 0):
            raise InputError("OrnsteinUhlenbeck: t_end, dt and theta must be > 0 and sigma >= 0")
        n = int(math.ceil(self.t_end / self.dt))
        rng = np.random.default_rng(self.seed)
        a = math.exp(-self.theta * self.dt)
        sd = self.sigma * math.sqrt((1 - a * a) / (2 * self.theta))
        xi = rng.standard_normal(n)
        v = np.empty(n + 1)
        v[0] = self.v0
        for k in range(n):
            v[k + 1] = a * v[k] + sd * xi[k]
        self.t = np.arange(n + 1) * self.dt
        self.v = v

    def __call__(self, t):
        return np.interp(t, self.t, self.v)


@dataclass
class TwoPhaseResult:
    """Trajectory of the two-phase model and its phase-transition times.

    Attributes
    ----------
    t, x, v : ndarray
        Samples (grid of the scheme, or solver steps plus phase boundaries).
    tau_static : list of float
        Entrance times into static phases tau_j (tau_0 = 0 if the start is static).
    tau_dynamic : list of float
        Entrance times into dynamic phases tau_{j+1/2}.
    tau_sub : list of float
        Starts of the dynamic sub-phases tau_j^k, k >= 1 (zeros of x' with |b| > f_s).
    method : str
        "explicit" or "event-driven".
    h : float
        Step of the explicit scheme (NaN for the event-driven reference).
    """

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    tau_static: list
    tau_dynamic: list
    tau_sub: list
    method: str
    h: float = math.nan
    status: str = "done"

    def phase_times(self) -> np.ndarray:
        """All static/dynamic transition times in order: tau_{1/2}, tau_1, tau_{3/2}, ..."""
        return np.sort(np.array([t for t in self.tau_static if t > 0] + list(self.tau_dynamic)))


def _check(m, f_d, f_s, t_end):
    if not m > 0:
        raise InputError(f"mass m={m!r} must be > 0")
    if not 0 <= f_d <= f_s:
        raise InputError(f"friction thresholds need 0 <= f_d <= f_s (got f_d={f_d!r}, f_s={f_s!r}); "
                         f"seed 001 treats f_s = f_d (§3.1.1) and f_s > f_d (§3.1.2)")
    if not t_end > 0:
        raise InputError(f"t_end={t_end!r} must be > 0")


def two_phase_explicit(b: Callable, m: float, f_d: float, f_s: float, x0: float, t_end: float,
                       h: float) -> TwoPhaseResult:
    """Step-by-step Euler scheme of seed 001 §3.1 (discrete two-phase model).

    ``X_{n+1} = X_n + h V_n``; with ``w = V_n + (h/m) b(X_n, V_n, t_n)``:
    ``V_{n+1} = 0`` if ``|w| <= (h/m) f_s``, else ``V_{n+1} = w - (h/m) f_d sign(w)``
    (§3.1.2; §3.1.1 is the case f_s = f_d).

    Parameters
    ----------
    b : callable ``b(x, v, t)``
        The non-friction force.
    m, f_d, f_s : float
        Mass, dynamic and static friction thresholds (forces).
    x0 : float
        Initial displacement (initial velocity 0, eq. 2).
    t_end, h : float
        Horizon and time step.

    Returns
    -------
    TwoPhaseResult
        Phase times are grid times: tau_{j+1/2} = the t_n whose update leaves V = 0, tau_{j+1}
        = the t_{n+1} where V is set to 0, both accurate to O(h).  A stop lasting a single
        step (the discrete velocity lands near zero while |b| > f_s) is reported as a
        sub-phase start, not as a static phase.
    """
    _check(m, f_d, f_s, t_end)
    if not 0 < h < t_end:
        raise InputError(f"time step h={h!r} must lie in (0, t_end)")
    n = int(round(t_end / h))
    x = np.empty(n + 1)
    v = np.empty(n + 1)
    x[0], v[0] = float(x0), 0.0
    hm = h / m
    thr_s, thr_d = hm * f_s, hm * f_d
    tau_static, tau_dynamic, tau_sub = [], [], []
    if abs(b(x0, 0.0, 0.0)) <= f_s:
        tau_static.append(0.0)
    state = {"k": 0}
    status = "done"
    try:
        _explicit_steps(b, n, h, hm, thr_s, thr_d, float(x0), x, v, tau_static, tau_dynamic, tau_sub, state)
    except KeyboardInterrupt:
        status = "interrupted"  # keep the steps computed before Ctrl-C
    done = n if status == "done" else state["k"]
    return TwoPhaseResult(t=np.arange(done + 1) * h, x=x[:done + 1], v=v[:done + 1], tau_static=tau_static,
                          tau_dynamic=tau_dynamic, tau_sub=tau_sub, method="explicit", h=h, status=status)


def _explicit_steps(b, n, h, hm, thr_s, thr_d, X, x, v, tau_static, tau_dynamic, tau_sub, state):
    """The time loop of :func:`two_phase_explicit` (state["k"] = steps completed)."""
    V = 0.0
    last_stop = -1
    for k in range(n):
        tk = k * h
        w = V + hm * b(X, V, tk)
        Xn = X + h * V
        if abs(w) <= thr_s:
            Vn = 0.0
            if V != 0.0:
                tau_static.append((k + 1) * h)
                last_stop = k + 1
        else:
            Vn = w - thr_d if w > 0 else w + thr_d
            if V == 0.0:
                if last_stop == k:
                    # a one-step stop: the discrete velocity landed within h f_s / m of zero
                    # while |b| > f_s, i.e. the scheme's image of a reversal (a sub-phase
                    # start tau_j^k), not a static phase
                    tau_sub.append(tau_static.pop())
                else:
                    tau_dynamic.append(tk)
            elif V * Vn < 0:
                tau_sub.append((k + 1) * h)
        X, V = Xn, Vn
        x[k + 1], v[k + 1] = X, V
        state["k"] = k + 1


def two_phase_event_driven(b: Callable, m: float, f_d: float, f_s: float, x0: float, t_end: float, *,
                           rtol: float = 1e-12, atol: float = 1e-13, scan_step: float = 1e-2,
                           max_step: float = 0.05) -> TwoPhaseResult:
    """Phase-by-phase integration of the two-phase model of seed 001 §2.2-2.4.

    Static phases: the first time ``|b(x_j, 0, t)| > f_s`` is bracketed on a grid of
    ``scan_step`` and located by Brent's method.  Dynamic sub-phases: ``m x'' = b - eps f_d``
    (eq. 10) by DOP853 with a terminal event at x' = 0.

    Parameters
    ----------
    b, m, f_d, f_s, x0, t_end
        As in :func:`two_phase_explicit`.
    rtol, atol, max_step : float
        Solver tolerances and largest step.
    scan_step : float
        Bracketing grid of the static-phase exit (must resolve the forcing).

    Returns
    -------
    TwoPhaseResult
    """
    _check(m, f_d, f_s, t_end)
    ts, xs, vs = [0.0], [float(x0)], [0.0]
    tau_static, tau_dynamic, tau_sub = [], [], []
    t, x = 0.0, float(x0)
    static = abs(b(x, 0.0, t)) <= f_s
    if static:
        tau_static.append(0.0)
    else:
        tau_dynamic.append(0.0)
        eps = math.copysign(1.0, b(x, 0.0, t))
    while t < t_end:
        if static:
            def excess(s, x=x):
                return abs(b(x, 0.0, s)) - f_s
            a, t_exit = t, None
            while a < t_end:
                c = min(a + scan_step, t_end)
                if excess(c) > 0:
                    t_exit = bracketed_root(excess, a, c, xtol=1e-15, rtol=1e-15) if excess(a) <= 0 else a
                    break
                a = c
            if t_exit is None:
                ts.append(t_end), xs.append(x), vs.append(0.0)
                break
            ts.append(t_exit), xs.append(x), vs.append(0.0)
            tau_dynamic.append(t_exit)
            t, static = t_exit, False
            eps = math.copysign(1.0, b(x, 0.0, t))
        # one dynamic sub-phase from v = 0
        def rhs(s, z, eps=eps):
            return [z[1], (b(z[0], z[1], s) - eps * f_d) / m]

        def stop(s, z):
            return z[1]
        stop.terminal = True
        stop.direction = -eps
        sol = solve_ivp(rhs, (t, t_end), [x, 0.0], method="DOP853", rtol=rtol, atol=atol, events=stop,
                        max_step=max_step)
        ts.extend(sol.t[1:]), xs.extend(sol.y[0, 1:]), vs.extend(sol.y[1, 1:])
        t, x = float(sol.t[-1]), float(sol.y[0, -1])
        if sol.status != 1:
            break
        vs[-1] = 0.0
        bb = b(x, 0.0, t)
        if abs(bb) <= f_s:
            tau_static.append(t)
            static = True
        else:
            tau_sub.append(t)
            eps = math.copysign(1.0, bb)
    return TwoPhaseResult(t=np.array(ts), x=np.array(xs), v=np.array(vs), tau_static=tau_static,
                          tau_dynamic=tau_dynamic, tau_sub=tau_sub, method="event-driven")
