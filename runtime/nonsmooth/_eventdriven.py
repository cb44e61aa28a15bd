"""Event-driven (switch-model) integration of stick-slip on a moving belt.

A chain of masses riding on a belt moving at ``belt_speed`` (seed 000 eq. 5, seed 004
eqs. 2 and 7)::

    m_i x_i'' + (C x')_i + (K x)_i = N_i mu_i,       V_rel,i = x_i' - belt_speed

with, per contact (seed 004 eq. 1, seed 000 eq. 7):

* slip (V_rel,i != 0): ``mu_i = -sign(V_rel,i) mu_k,i(|V_rel,i|)``;
* stick (V_rel,i = 0 on an interval): x_i' = belt_speed, x_i'' = 0 and the friction force
  is whatever keeps it so, ``N_i mu_0 = (C x' + K x)_i``, admissible while |mu_0| <= mu_s,i.

The mass matrix is diagonal, so the force a stuck contact needs depends on positions and
velocities only.  Each phase (one combination of stuck / slipping-forward /
slipping-backward contacts) is a smooth ODE integrated by ``scipy.integrate.solve_ivp``
(DOP853) with terminal events for the transitions:

* slip -> stick: V_rel,i reaches 0; the contact sticks if the needed force is admissible,
  otherwise it slips on in the other direction (its sign is ``-sign(needed force)``);
* stick -> slip: the needed force reaches +-N_i mu_s,i; the contact slips with
  ``sign(V_rel) = -sign(needed force)``.

This replaces Hénon's inverse-integration trick of seed 004 Appendix A: scipy's event
location solves the same "where does the switching function vanish" problem on the
solver's dense output to machine precision.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy.integrate import solve_ivp

from .._roots import bracketed_root
from ..errors import InputError, ConvergenceError

__all__ = ["BeltChain", "EventDrivenResult", "integrate_stick_slip", "belt_oscillator",
           "two_mass_belt", "weakening_strengthening_belt", "stick_slip_period", "one_mass_cycle",
           "orbit_error"]

STICK = 0


@dataclass(frozen=True)
class BeltChain:
    """Masses on a moving belt with dry friction (static coefficient above kinetic).

    Parameters
    ----------
    mass : sequence of float
        Diagonal of the mass matrix (all > 0).
    damping, stiffness : (n, n) array_like
        Viscous damping and stiffness matrices.
    normal : sequence of float
        Normal force of each contact (friction force = normal * mu).
    mu_s : sequence of float
        Static friction coefficient of each contact.
    mu_k : sequence of callables
        Kinetic friction coefficient of each contact as a function of the slip speed
        ``|V_rel| >= 0`` (vectorised or scalar), e.g. ``lambda s: 0.2`` for Coulomb or
        ``lambda s: 1 / (1 + 3 s)`` (seed 004 eq. 3).  ``mu_k(0) <= mu_s`` is required.
    belt_speed : float
        Belt speed (> 0).
    """

    mass: Sequence[float]
    damping: np.ndarray
    stiffness: np.ndarray
    normal: Sequence[float]
    mu_s: Sequence[float]
    mu_k: Sequence[Callable]
    belt_speed: float

    def __post_init__(self):
        n = len(self.mass)
        object.__setattr__(self, "mass", np.asarray(self.mass, dtype=float).reshape(n))
        for name in ("damping", "stiffness"):
            arr = np.asarray(getattr(self, name), dtype=float)
            if arr.shape != (n, n):
                raise InputError(f"BeltChain.{name} must have shape ({n}, {n}) for {n} masses, got {arr.shape}")
            object.__setattr__(self, name, arr)
        for name in ("normal", "mu_s"):
            arr = np.asarray(getattr(self, name), dtype=float).reshape(-1)
            if arr.shape != (n,):
                raise InputError(f"BeltChain.{name} needs one value per mass ({n}), got {arr.size}")
            object.__setattr__(self, name, arr)
        if callable(self.mu_k):
            object.__setattr__(self, "mu_k", (self.mu_k,) * n)
        if len(self.mu_k) != n or not all(callable(f) for f in self.mu_k):
            raise InputError(f"BeltChain.mu_k needs one callable per contact ({n})")
        if np.any(self.mass <= 0):
            raise InputError("BeltChain.mass: every mass must be > 0")
        if np.any(self.normal < 0) or np.any(self.mu_s < 0):
            raise InputError("BeltChain.normal and BeltChain.mu_s must be >= 0")
        if not self.belt_speed > 0:
            raise InputError(f"BeltChain.belt_speed={self.belt_speed!r} must be > 0")
        for i, f in enumerate(self.mu_k):
            k0 = float(f(0.0))
            if not (0 <= k0 <= self.mu_s[i] * (1 + 1e-12)):
                raise InputError(f"contact {i}: mu_k(0)={k0:.6g} must lie in [0, mu_s={self.mu_s[i]:.6g}] "
                                 f"(kinetic friction at slip onset cannot exceed static friction)")

    @property
    def n(self) -> int:
        return len(self.mass)

    def needed_force(self, x, v):
        """Friction force each contact would need to stick: (C v + K x)_i (zero acceleration)."""
        return self.damping @ v + self.stiffness @ x


@dataclass
class EventDrivenResult:
    """Trajectory of an event-driven stick-slip integration.

    Attributes
    ----------
    t : ndarray (M,)
        Solver output times (phase boundaries included).
    x, v : ndarray (n, M)
        Positions and velocities.
    events : list of dict
        One per transition: ``time``, ``contact``, ``kind`` ("stick", "slip" or
        "reversal"), ``x``, ``v`` (states at the event).
    section : list of tuple
        ``(time, x, v)`` at the Poincaré section ``v_0 = 0`` crossed upwards (seed 004 §2.2).
    status : str
        "done" (reached ``t_end``), "max_events" or "failed".
    message : str
    """

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    events: list = field(default_factory=list)
    section: list = field(default_factory=list)
    status: str = "done"
    message: str = ""

    phases: list = field(default_factory=list, repr=False)

    def evaluate(self, times) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities at any times inside the integrated interval (dense output).

        Returns
        -------
        x, v : ndarray (n, len(times))
        """
        times = np.atleast_1d(np.asarray(times, dtype=float))
        starts = np.array([p[0] for p in self.phases])
        if times.size and (times.min() < starts[0] or times.max() > self.phases[-1][1]):
            raise InputError(f"times must lie in [{starts[0]:.6g}, {self.phases[-1][1]:.6g}], the integrated interval")
        idx = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(self.phases) - 1)
        n = self.x.shape[0]
        out = np.empty((2 * n, times.size))
        for k in np.unique(idx):
            sel = idx == k
            out[:, sel] = self.phases[k][2](times[sel])
        return out[:n], out[n:]

    def event_times(self, kind: str, contact: int = 0) -> np.ndarray:
        """Times of the transitions of one kind for one contact."""
        return np.array([e["time"] for e in self.events if e["kind"] == kind and e["contact"] == contact])


def _phase_rhs(chain: BeltChain, mode: np.ndarray):
    n = chain.n
    stuck = mode == STICK
    minv = 1.0 / chain.mass

    def rhs(t, z):
        x, v = z[:n], z[n:]
        v = np.where(stuck, chain.belt_speed, v)
        vr = v - chain.belt_speed
        fric = np.zeros(n)
        for i in range(n):
            if not stuck[i]:
                fric[i] = -mode[i] * chain.normal[i] * float(chain.mu_k[i](abs(vr[i])))
        acc = (fric - chain.damping @ v - chain.stiffness @ x) * minv
        acc[stuck] = 0.0
        return np.concatenate((v, acc))
    return rhs


def _phase_events(chain: BeltChain, mode: np.ndarray, section: bool, rhs, t_start: float):
    n = chain.n
    evs, tags = [], []
    for i in range(n):
        if mode[i] == STICK:
            lim = chain.normal[i] * chain.mu_s[i]
            for sgn in (+1, -1):
                def ev(t, z, i=i, sgn=sgn, lim=lim):
                    return chain.needed_force(z[:n], z[n:])[i] - sgn * lim
                ev.terminal = True
                ev.direction = sgn
                evs.append(ev)
                tags.append(("release", i))
        else:
            def ev(t, z, i=i):
                return z[n + i] - chain.belt_speed
            ev.terminal = True
            ev.direction = -mode[i]
            evs.append(ev)
            tags.append(("vr0", i))

            # the extremum of V_rel (acceleration zero) towards the belt speed: a crossing of
            # V_rel = 0 and back inside one solver step is invisible to sign-change event
            # detection, but the extremum between them is a transversal zero of the
            # acceleration and is always seen; the integrator then looks back for the
            # crossing on the dense output (near V_max the excursion is microseconds long)
            # (an acceleration that is exactly zero at the phase start, as when mu_k(0) = mu_s,
            # is not an extremum: report it as already past so that it does not fire)
            a_scale = 1e-9 * chain.normal[i] * max(chain.mu_s[i], 1e-300) / chain.mass[i]

            def ext(t, z, i=i, a_scale=a_scale, d=mode[i]):
                a = rhs(t, z)[n + i]
                if t == t_start and abs(a) <= a_scale:
                    return d * a_scale
                return a
            ext.terminal = True
            ext.direction = mode[i]
            evs.append(ext)
            tags.append(("extremum", i))
    if section:
        def sec(t, z):
            return z[n]
        sec.terminal = False
        sec.direction = 1
        evs.append(sec)
        tags.append(("section", 0))
    return evs, tags


def integrate_stick_slip(chain: BeltChain, x0, v0, t_end: float, *, t0: float = 0.0,
                         rtol: float = 1e-12, atol=None, max_events: int = 100000,
                         section: bool = False, max_step: float = np.inf) -> EventDrivenResult:
    """Integrate a belt chain through its stick and slip phases (switch model).

    Parameters
    ----------
    chain : BeltChain
    x0, v0 : array_like
        Initial positions and velocities (a contact with ``v0 == belt_speed`` starts stuck if
        its needed force is admissible).
    t_end : float
        Final time.
    rtol, atol : float
        Tolerances of DOP853.  ``atol`` defaults to ``rtol`` times the static-friction
        displacement ``N mu_s / K_ii`` for positions and ``rtol`` times the belt speed for
        velocities.
    max_events : int
        Stop (status "max_events") after this many transitions.
    section : bool
        Record the Poincaré section ``v_0 = 0`` crossed upwards.
    max_step : float
        Largest solver step.

    Returns
    -------
    EventDrivenResult
        Whatever was integrated, also when stopped early (``status`` says why).
    """
    n = chain.n
    x = np.asarray(x0, dtype=float).reshape(n).copy()
    v = np.asarray(v0, dtype=float).reshape(n).copy()
    if not t_end > t0:
        raise InputError(f"t_end={t_end!r} must exceed t0={t0!r}")
    if atol is None:
        kdiag = np.where(np.diag(chain.stiffness) > 0, np.diag(chain.stiffness), 1.0)
        xs = np.maximum(chain.normal * chain.mu_s / kdiag, np.abs(x))
        xs = np.where(xs > 0, xs, 1.0)
        atol = np.concatenate((rtol * xs, np.full(n, rtol * chain.belt_speed)))
    Vb = chain.belt_speed
    mode = np.empty(n, dtype=int)
    f = chain.needed_force(x, v)
    for i in range(n):
        vr = v[i] - Vb
        if vr != 0:
            mode[i] = int(np.sign(vr))
        elif abs(f[i]) <= chain.normal[i] * chain.mu_s[i]:
            mode[i] = STICK
        else:
            mode[i] = -int(np.sign(f[i]))
    ts, xs_, vs = [np.array([t0])], [x[:, None]], [v[:, None]]
    res = EventDrivenResult(t=None, x=None, v=None)
    t = t0
    try:
        _integrate_phases(chain, res, mode, x, v, t, t_end, rtol, atol, max_events, section, max_step,
                          ts, xs_, vs)
    except KeyboardInterrupt:
        res.status, res.message = "interrupted", "interrupted by the user; the trajectory so far is kept"
    res.t = np.concatenate(ts)
    res.x = np.concatenate(xs_, axis=1)
    res.v = np.concatenate(vs, axis=1)
    return res


def _integrate_phases(chain, res, mode, x, v, t, t_end, rtol, atol, max_events, section, max_step, ts, xs_, vs):
    """One ``solve_ivp`` call per phase (constant ``mode``) until ``t_end``, appending to ``res``
    and to the sample lists ``ts, xs_, vs`` as it goes (so that an interrupt keeps them)."""
    n = chain.n
    just_switched = set()
    while t < t_end - 1e-14 * max(abs(t_end), 1.0):
        if len(res.events) >= max_events:
            res.status, res.message = "max_events", f"stopped after {max_events} transitions at t={t:.6g}"
            break
        rhs = _phase_rhs(chain, mode)
        evs, tags = _phase_events(chain, mode, section, rhs, t)
        t_start = t
        sol = solve_ivp(rhs, (t, t_end), np.concatenate((x, v)), method="DOP853",
                        rtol=rtol, atol=atol, events=evs, max_step=max_step, dense_output=True)
        if sol.status == -1:
            res.status, res.message = "failed", f"solve_ivp failed at t={t:.6g}: {sol.message}"
            break
        fired = _fired_events(chain, mode, sol, tags, t)
        _record_phase(res, sol, n, section, ts, xs_, vs)
        z = sol.y[:, -1]
        t, x, v = float(sol.t[-1]), z[:n].copy(), z[n:].copy()
        if sol.status != 1:
            break
        if t - t_start > 1e-12 * max(abs(t), 1.0):
            # the contacts that switched at this phase's start are exempt from the rounding-level
            # check of ``_switch`` only at that same instant: after a phase of finite length they
            # may switch again with the others (without this, of a symmetric chain's two contacts
            # that slipped together the second missed the common stick 4.3 time units later
            # when its velocity had just passed the belt's, by 2.6e-15, under one BLAS kernel)
            just_switched = set()
        just_switched = _switch(chain, res, mode, tags, fired, just_switched, t, x, v)


def _fired_events(chain, mode, sol, tags, t):
    """Indices into ``tags`` of the transitions that end the phase ``sol`` (started at ``t``).

    A fired ``extremum`` event (``_phase_events``) is replaced by the ``vr0`` crossing it
    reveals, if any: ``sol`` is then cut at that crossing, located by Brent's method on the dense
    output.
    """
    n, Vb = chain.n, chain.belt_speed
    fired = [k for k, (tag, _) in enumerate(tags) if tag != "section" and len(sol.t_events[k])]
    for k in list(fired):
        tag, i = tags[k]
        if tag != "extremum":
            continue
        fired.remove(k)
        te = sol.t[-1]

        def vr_fun(s_, i=i):
            return mode[i] * (sol.sol(s_)[n + i] - Vb)
        if vr_fun(te) >= 0:
            continue  # the extremum did not reach the belt speed: go on slipping
        # missed crossing: it lies in the last solver step (see _phase_events), or, for a
        # slip that starts at V_rel = 0, anywhere in this phase
        ta = next((a for a in (sol.t[-2] if sol.t.size > 1 else t, t) if vr_fun(a) > 0), None)
        if ta is None:
            continue  # rounding-level excursion at the slip onset, not a crossing
        tc = bracketed_root(lambda s_: vr_fun(s_), ta, te, xtol=1e-15 * max(abs(te), 1.0), rtol=1e-15)
        zc = sol.sol(tc)
        keep = sol.t < tc
        sol.t = np.append(sol.t[keep], tc)
        sol.y = np.concatenate((sol.y[:, keep], zc[:, None]), axis=1)
        return [kk for kk, (tg, ii) in enumerate(tags) if tg == "vr0" and ii == i]
    return fired


def _record_phase(res, sol, n, section, ts, xs_, vs):
    """Append the phase ``sol`` (its samples after the first, and its section crossings)."""
    res.phases.append((float(sol.t[0]), float(sol.t[-1]), sol.sol))
    ts.append(sol.t[1:])
    xs_.append(sol.y[:n, 1:])
    vs.append(sol.y[n:, 1:])
    if section:
        for te, ze in zip(sol.t_events[-1], sol.y_events[-1]):
            if te > sol.t[-1]:
                continue
            res.section.append((float(te), ze[:n].copy(), ze[n:].copy()))


def _switch(chain, res, mode, tags, fired, just_switched, t, x, v):
    """Apply the transitions at ``t`` to ``mode`` (and ``v``) in place, record them in ``res``
    and return the contacts that switched."""
    n, Vb = chain.n, chain.belt_speed
    # scipy keeps only the first terminal event of a step: contacts that switch at the
    # same instant (symmetric chains) are picked up here, within rounding
    fired_contacts = {tags[k][1] for k in fired} | just_switched
    f_now = chain.needed_force(x, np.where(mode == STICK, Vb, v))
    for i in range(n):
        if i in fired_contacts:
            continue
        lim = chain.normal[i] * chain.mu_s[i]
        if mode[i] != STICK and abs(v[i] - Vb) <= 1e-12 * Vb:
            fired.append(tags.index(("vr0", i)))
        elif mode[i] == STICK and abs(f_now[i]) >= lim * (1 - 1e-12) and lim > 0:
            fired.append(tags.index(("release", i)))
    for k in fired:
        tag, i = tags[k]
        if tag == "vr0":
            v[i] = Vb
            f = chain.needed_force(x, np.where(mode == STICK, Vb, v))
            if abs(f[i]) <= chain.normal[i] * chain.mu_s[i]:
                mode[i] = STICK
                kind = "stick"
            else:
                mode[i] = -int(np.sign(f[i]))
                kind = "reversal"
        else:
            f = chain.needed_force(x, v)
            mode[i] = -int(np.sign(f[i]))
            kind = "slip"
        res.events.append(dict(time=t, contact=i, kind=kind, x=x.copy(), v=v.copy()))
    return {tags[k][1] for k in fired}


def belt_oscillator(params=None, mu_k: Callable | None = None, **values) -> BeltChain:
    """The seed-000 belt oscillator (eq. 5) as a one-mass :class:`BeltChain`.

    Per unit modal mass: ``y'' + 2 zeta omega1 y' + omega1**2 y = (FN / M1) mu``.

    Parameters
    ----------
    params : BeltParameters, optional
        Seed 000 Appendix B by default; ``**values`` override fields.
    mu_k : callable, optional
        Kinetic coefficient as a function of the slip speed |V_rel|; default Coulomb
        ``mud``, or, with ``params.kinetic_slope = a``, ``mud - a |V_rel|`` (that is
        ``mud + a V_rel`` for V_rel < 0, the affine law of the exact construction).
    """
    from ._coulomb import BeltParameters
    p = (params or BeltParameters()).with_(**values)
    if mu_k is None:
        mud, a = p.mud, p.kinetic_slope
        # V_rel < 0 while slipping: mu = mud + a V_rel = mud - a |V_rel|
        mu_k = (lambda s: mud - a * s) if a else (lambda s: mud)
    return BeltChain(mass=[1.0], damping=[[2 * p.eta1]], stiffness=[[p.omega1**2]], normal=[p.F1],
                     mu_s=[p.mus], mu_k=[mu_k], belt_speed=p.Vb)


def two_mass_belt(belt_speed: float, alpha: float = 1.2, beta: float = 1.3, gamma: float = 3.0,
                  mu_k: Callable | None = None) -> BeltChain:
    """The nondimensional 2-DOF block-on-belt model of seed 004 eqs. (7)-(9), (12).

    ``X_i'' + X_i + alpha (X_i - X_j) = F_i*`` with ``|F_1*| <= 1``, ``|F_2*| <= beta`` in
    stick and ``F_i* = -N_i sign(V_rel,i) / (1 + gamma |V_rel,i|)`` in slip (N = 1, beta).
    """
    if mu_k is None:
        def mu_k(s):
            return 1.0 / (1.0 + gamma * s)
    K = np.array([[1 + alpha, -alpha], [-alpha, 1 + alpha]])
    return BeltChain(mass=[1.0, 1.0], damping=np.zeros((2, 2)), stiffness=K, normal=[1.0, beta],
                     mu_s=[1.0, 1.0], mu_k=[mu_k, mu_k], belt_speed=belt_speed)


def weakening_strengthening_belt(driving_velocity: float, mu_d: float = 0.5, mu_st: float = 1.0,
                                 v0: float = 0.5, mu_v: float = 0.0, xi: float = 0.05) -> BeltChain:
    """The dimensionless mass-on-moving-belt model of seed 002 eqs. (2)-(5).

    ``x'' + 2 xi x' + x = F`` with ``|F| <= mu_st`` in stick and
    ``F = -sign(v_rel) mu(|v_rel|)``, ``mu(s) = mu_d + (mu_st - mu_d) exp(-s / v0) + mu_v s / v0``
    (eq. 3) in slip; displacements in units of N / k, time in 1 / omega_n.  Defaults: seed 002
    eq. (16) with mu_st / mu_d = 2, v0 = 0.5, xi = 0.05.
    """
    if not v0 > 0:
        raise InputError(f"reference velocity v0={v0!r} must be > 0")

    def mu_k(s):
        return mu_d + (mu_st - mu_d) * np.exp(-s / v0) + mu_v * s / v0
    return BeltChain(mass=[1.0], damping=[[2.0 * xi]], stiffness=[[1.0]], normal=[1.0], mu_s=[mu_st],
                     mu_k=[mu_k], belt_speed=driving_velocity)


def stick_slip_period(chain: BeltChain, x0=None, v0=None, cycles: int = 2, rtol: float = 1e-12,
                      t_max: float | None = None):
    """Period of a one-mass stick-slip cycle from consecutive stick releases.

    For one mass the state at stick release is unique (x fixed by the static limit, v = belt
    speed), so any trajectory that sticks once is exactly periodic afterwards and the time
    between two releases is the period.

    Returns
    -------
    period : float
    result : EventDrivenResult
    """
    if chain.n != 1:
        raise InputError("stick_slip_period handles one-mass chains; use the Poincaré section for more")
    # default start: at rest relative to the belt at x = 0 (stuck if admissible), which lies in
    # the basin of the cycle (a start at rest in the lab frame may lie in the basin of the
    # stable sliding equilibrium instead)
    x0 = np.zeros(1) if x0 is None else x0
    v0 = np.full(1, chain.belt_speed) if v0 is None else v0
    w = np.sqrt(chain.stiffness[0, 0] / chain.mass[0])
    t_max = t_max if t_max is not None else 500 * 2 * np.pi / w
    res = integrate_stick_slip(chain, x0, v0, t_max, rtol=rtol, max_events=2 * cycles + 4)
    rel = res.event_times("slip", 0)
    if len(rel) < 2:
        raise ConvergenceError(f"fewer than two stick releases before t={res.t[-1]:.6g}: "
                               f"no stick-slip cycle found ({res.status}: {res.message})")
    return float(rel[-1] - rel[-2]), res


def one_mass_cycle(chain: BeltChain, n_samples: int = 200, start: str = "xmax", rtol: float = 1e-12):
    """The stick-slip cycle of a one-mass chain, sampled over one period.

    Parameters
    ----------
    chain : BeltChain
        One mass.
    n_samples : int
        Samples at ``t_start + i P / n_samples``, i = 0 .. n_samples - 1.
    start : {"xmax", "release"}
        Phase origin: the maximum of x (v = 0 crossed downwards; the origin used for the
        seed 004 Table 1 comparison) or the stick release.

    Returns
    -------
    period : float
    t, x, v : ndarray (n_samples,)
        Times measured from the origin, positions, velocities.
    """
    period, res = stick_slip_period(chain, rtol=rtol)
    release = [e for e in res.events if e["kind"] == "slip"][-1]
    one = integrate_stick_slip(chain, release["x"], release["v"], 2.0 * period, rtol=rtol)
    t0 = 0.0
    if start == "xmax":
        grid = np.linspace(0.0, period, 4001)
        _, vg = one.evaluate(grid)
        k = np.nonzero((vg[0, :-1] > 0) & (vg[0, 1:] <= 0))[0]
        if k.size == 0:
            raise ConvergenceError("the cycle has no maximum of x with v = 0 (it never moves backwards)")
        t0 = bracketed_root(lambda s: one.evaluate(s)[1][0, 0], grid[k[0]], grid[k[0] + 1], xtol=1e-15, rtol=1e-15)
    elif start != "release":
        raise InputError(f"start={start!r}: use 'xmax' or 'release'")
    t = np.arange(int(n_samples)) * period / int(n_samples)
    x, v = one.evaluate(t0 + t)
    return period, t, x[0], v[0]


def orbit_error(x, v, period, x_ref, v_ref, period_ref) -> float:
    """Relative distance between two sampled periodic orbits, seed 004 eq. (5).

    ``e = sqrt((sum (x - x_ref)^2 + sum (v - v_ref)^2 + (P - P_ref)^2)
    / (sum x_ref^2 + sum v_ref^2 + P_ref^2))`` with both orbits sampled at N points
    ``i P / N`` of their own period from the same phase origin.
    """
    x, v, x_ref, v_ref = (np.asarray(a, dtype=float) for a in (x, v, x_ref, v_ref))
    if not (x.shape == v.shape == x_ref.shape == v_ref.shape):
        raise InputError("orbit_error: all sample arrays must have the same shape")
    num = np.sum((x - x_ref) ** 2) + np.sum((v - v_ref) ** 2) + (period - period_ref) ** 2
    den = np.sum(x_ref**2) + np.sum(v_ref**2) + period_ref**2
    return float(np.sqrt(num / den))
