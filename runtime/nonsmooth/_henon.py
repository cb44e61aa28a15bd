"""Hénon's method for one-mass stick-slip: fixed-step RK4 with inverted switching steps.

Seed 004 Appendix A (after Hénon, Physica D 5, 1982): the state equation is integrated with
the classical fourth-order Runge-Kutta scheme (eq. 23).  When a step crosses a switching
surface, the step is repeated with the switching variable as the independent variable, so
that one RK4 step lands exactly on the surface:

* slip -> stick: ``V_rel`` crosses 0; integrate ``d(x, t)/dv = (v, 1) / a(x, v)`` (eqs. 24-25)
  from v_i to the belt speed;
* stick -> slip: the stuck spring force reaches the static limit; with x' = V_b in stick,
  ``dt/dx = 1 / V_b`` (eqs. 26-27) lands on ``x*`` where ``|c V_b + k x*| = N mu_s``.

It is a second, independent way (fixed step, order 4) to the same transitions the
event-driven integrator (:mod:`._eventdriven`) finds with scipy's event location, used to
cross-check it.  Like any fixed-step crossing detection, it misses a V_rel excursion that
starts and ends within one step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

__all__ = ["HenonResult", "henon_stick_slip"]


@dataclass
class HenonResult:
    """Fixed-step trajectory and the transition times found by Hénon's inversion."""

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    stick_times: list = field(default_factory=list)
    release_times: list = field(default_factory=list)


def henon_stick_slip(chain, x0: float, v0: float, t_end: float, h: float) -> HenonResult:
    """Integrate a one-mass :class:`BeltChain` with RK4 and Hénon's trick (seed 004 App. A).

    Parameters
    ----------
    chain : BeltChain
        One mass.
    x0, v0 : float
        Initial state (``v0 == belt_speed`` starts stuck if admissible).
    t_end, h : float
        Horizon and RK4 step.

    Returns
    -------
    HenonResult
    """
    if chain.n != 1:
        raise InputError("henon_stick_slip handles one-mass chains (seed 004 Appendix A)")
    if not 0 < h < t_end:
        raise InputError(f"step h={h!r} must lie in (0, t_end)")
    m, c, k = chain.mass[0], chain.damping[0, 0], chain.stiffness[0, 0]
    N, mus, muk, Vb = chain.normal[0], chain.mu_s[0], chain.mu_k[0], chain.belt_speed
    lim = N * mus

    def acc(x, v, s):  # slip acceleration with slip direction s = sign(V_rel)
        return (-s * N * float(muk(abs(v - Vb))) - c * v - k * x) / m

    def rk4_time(x, v, s, dt):
        def f(x, v):
            return v, acc(x, v, s)
        k1 = f(x, v)
        k2 = f(x + 0.5 * dt * k1[0], v + 0.5 * dt * k1[1])
        k3 = f(x + 0.5 * dt * k2[0], v + 0.5 * dt * k2[1])
        k4 = f(x + dt * k3[0], v + dt * k3[1])
        return (x + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
                v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))

    def rk4_velocity(x, t, v, dv, s):
        # eq. (25): y = (x, t) with v as the independent variable, dy/dv = (v, 1) / a
        def f(v, x):
            a = acc(x, v, s)
            return v / a, 1.0 / a
        k1 = f(v, x)
        k2 = f(v + 0.5 * dv, x + 0.5 * dv * k1[0])
        k3 = f(v + 0.5 * dv, x + 0.5 * dv * k2[0])
        k4 = f(v + dv, x + dv * k3[0])
        return (x + dv / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
                t + dv / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))

    x, v, t = float(x0), float(v0), 0.0
    if v != Vb:
        s = int(np.sign(v - Vb))
    else:
        f = c * Vb + k * x
        s = 0 if abs(f) <= lim else -int(np.sign(f))
    res = HenonResult(t=None, x=None, v=None)
    ts, xs, vs = [t], [x], [v]
    while t < t_end:
        dt = min(h, t_end - t)
        if s == 0:
            xn = x + Vb * dt
            f = c * Vb + k * xn
            if abs(f) > lim:
                # eq. (27): dt/dx = 1 / V_b, exact in one step
                sgn = np.sign(f)
                xs_ = (sgn * lim - c * Vb) / k
                t, x = t + (xs_ - x) / Vb, xs_
                s = -int(sgn)
                res.release_times.append(t)
            else:
                t, x = t + dt, xn
        else:
            xn, vn = rk4_time(x, v, s, dt)
            if s * (vn - Vb) < 0:
                # the step crossed V_rel = 0: redo it in v (eqs. 24-25)
                x, t = rk4_velocity(x, t, v, Vb - v, s)
                v = Vb
                f = c * Vb + k * x
                if abs(f) <= lim:
                    s = 0
                    res.stick_times.append(t)
                else:
                    s = -int(np.sign(f))
            else:
                t, x, v = t + dt, xn, vn
        ts.append(t), xs.append(x), vs.append(v)
    res.t, res.x, res.v = np.array(ts), np.array(xs), np.array(vs)
    return res
