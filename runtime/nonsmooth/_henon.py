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


def _rk4(f, s, y, ds):
    """One classical RK4 step (seed 004 eq. 23) of ``dy/ds = f(s, y)`` from ``s`` to ``s + ds``."""
    k1 = f(s, y)
    k2 = f(s + 0.5 * ds, y + 0.5 * ds * k1)
    k3 = f(s + 0.5 * ds, y + 0.5 * ds * k2)
    k4 = f(s + ds, y + ds * k3)
    return y + ds / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


@dataclass(frozen=True)
class _OneMass:
    """The one-mass chain of seed 004 Appendix A: its slip field, its two RK4 steps, its stick test."""

    m: float
    c: float
    k: float
    N: float
    lim: float          # N mu_s: the static limit of the stuck spring force
    muk: object
    Vb: float

    def acc(self, x, v, s):
        """Slip acceleration with slip direction ``s = sign(V_rel)``."""
        return (-s * self.N * float(self.muk(abs(v - self.Vb))) - self.c * v - self.k * x) / self.m

    def step_in_time(self, x, v, s, dt):
        """RK4 step of ``(x, v)`` over ``dt`` in slip direction ``s``."""
        y = _rk4(lambda t, y: np.array([y[1], self.acc(y[0], y[1], s)]), 0.0, np.array([x, v]), dt)
        return y[0], y[1]

    def step_to_belt_speed(self, x, t, v, s):
        """One RK4 step of ``(x, t)`` with ``v`` as the independent variable, from ``v`` to ``V_b``:
        ``d(x, t)/dv = (v, 1) / a(x, v)`` (eqs. 24-25)."""
        def f(v_, y):
            a = self.acc(y[0], v_, s)
            return np.array([v_ / a, 1.0 / a])
        y = _rk4(f, v, np.array([x, t]), self.Vb - v)
        return y[0], y[1]

    def direction_at_belt_speed(self, x):
        """0 if the mass stays stuck at ``x`` (``|c V_b + k x| <= N mu_s``), else the slip direction."""
        f = self.c * self.Vb + self.k * x
        return 0 if abs(f) <= self.lim else -int(np.sign(f))


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
    one = _OneMass(chain.mass[0], chain.damping[0, 0], chain.stiffness[0, 0], chain.normal[0],
                   chain.normal[0] * chain.mu_s[0], chain.mu_k[0], chain.belt_speed)
    Vb = one.Vb
    x, v, t = float(x0), float(v0), 0.0
    s = int(np.sign(v - Vb)) if v != Vb else one.direction_at_belt_speed(x)
    res = HenonResult(t=None, x=None, v=None)
    ts, xs, vs = [t], [x], [v]
    while t < t_end:
        dt = min(h, t_end - t)
        if s == 0:
            xn = x + Vb * dt
            f = one.c * Vb + one.k * xn
            if abs(f) > one.lim:
                # eq. (27): dt/dx = 1 / V_b, exact in one step
                sgn = np.sign(f)
                xs_ = (sgn * one.lim - one.c * Vb) / one.k
                t, x = t + (xs_ - x) / Vb, xs_
                s = -int(sgn)
                res.release_times.append(t)
            else:
                t, x = t + dt, xn
        else:
            xn, vn = one.step_in_time(x, v, s, dt)
            if s * (vn - Vb) < 0:
                # the step crossed V_rel = 0: redo it in v (eqs. 24-25)
                x, t = one.step_to_belt_speed(x, t, v, s)
                v = Vb
                s = one.direction_at_belt_speed(x)
                if s == 0:
                    res.stick_times.append(t)
            else:
                t, x, v = t + dt, xn, vn
        ts.append(t), xs.append(x), vs.append(v)
    res.t, res.x, res.v = np.array(ts), np.array(xs), np.array(vs)
    return res
