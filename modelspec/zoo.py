"""The model zoo: every seed system, declared exactly as a user would.

``ZOO`` maps a model name to ``(builder, continuation parameters shipped in generated/)``.
"""
from __future__ import annotations

import sympy as sp

from . import laws
from .errors import ModelSpecError
from .spec import ModelSpec


def belt() -> ModelSpec:
    """Seed 000 eqs. (5)-(6): y'' + 2 zeta omega1 y' + omega1**2 y = (FN/M1) mu_n(y' - Vb).

    Defaults: seed 000 Appendix B (n = 10).
    """
    m = ModelSpec("belt", "mass-spring-damper on a moving belt with the regularized law mu_n (seed 000)",
                  time_unit="s")
    zeta = m.parameter("zeta", 1.3096e-3, doc="modal damping ratio zeta_1")
    omega1 = m.parameter("omega1", 1.2316e3, unit="rad/s", doc="natural pulsation omega_1")
    M1 = m.parameter("M1", 6.42e-3, unit="kg", doc="modal mass", positive=True)
    FN = m.parameter("FN", 5.0, unit="N", doc="normal force")
    Vb = m.parameter("Vb", 0.2, unit="m/s", doc="belt speed")
    mus = m.parameter("mus", 0.4, doc="static friction coefficient")
    mud = m.parameter("mud", 0.2, doc="dynamic friction coefficient")
    eps = m.parameter("eps", 1e-4, doc="modulus smoothing parameter epsilon", positive=True)
    n = m.parameter("n", 10.0, doc="regularization parameter", positive=True)
    y, v = m.second_order("y", velocity="v", unit="m", velocity_unit="m/s", doc="modal displacement")
    Vr = m.define("Vr", v - Vb)
    mu = m.friction("belt", laws.regularized, Vr, mus=mus, mud=mud, eps=eps, n=n)
    m.ode(v, -2 * zeta * omega1 * v - omega1**2 * y + FN / M1 * mu)
    return m


def shaw() -> ModelSpec:
    """Shaw's harmonically forced friction oscillator, seed 001 eq. (23) with (P), regularized.

    ``m x'' = beta cos(w t) - 2 alpha x' - x + FN mu_n(x')`` with seed 001's parameter set
    (P): m = 1, f_d = 1, f_s = 1.2, alpha = 0, beta = 6, w = 1/2; the Coulomb law is replaced
    by the regularized law of seed 000 eq. (2) with mus = f_s, mud = f_d (unit normal load).
    A small damping ``alpha`` default keeps periodic orbits isolated.
    """
    m = ModelSpec("shaw", "harmonically forced dry-friction oscillator (seed 001 eq. 23), regularized")
    mass = m.parameter("m", 1.0, doc="mass", positive=True)
    alpha = m.parameter("alpha", 0.0, doc="damping (seed 001 (P): 0)")
    beta = m.parameter("beta", 6.0, doc="forcing amplitude")
    w = m.parameter("w", 0.5, unit="rad/s", doc="forcing angular frequency")
    fs = m.parameter("fs", 1.2, doc="static friction coefficient")
    fd = m.parameter("fd", 1.0, doc="dynamic friction coefficient")
    eps = m.parameter("eps", 1e-4, doc="modulus smoothing parameter", positive=True)
    n = m.parameter("n", 10.0, doc="regularization parameter", positive=True)
    m.forcing(w)
    x, v = m.second_order("x", velocity="v")
    mu = m.friction("ground", laws.regularized, v, mus=fs, mud=fd, eps=eps, n=n)
    m.ode(v, beta * sp.cos(w * m.t) - 2 * alpha * v - x + mu, mass=mass)
    return m


def _seed002_parameters(m):
    """The parameters of seed 002 eq. (5) with the law of eq. (3), defaults of eq. (16)."""
    return (m.parameter("xi", 0.05, doc="damping ratio"),
            m.parameter("vd", 1.0, doc="dimensionless belt (driving) velocity"),
            m.parameter("mud", 0.5, doc="dynamic friction coefficient"),
            m.parameter("mus", 1.0, doc="static friction coefficient mu_st"),
            m.parameter("muv", 0.0, doc="strengthening coefficient mu_v"),
            m.parameter("v0", 0.5, doc="reference velocity"))


def weakstrong() -> ModelSpec:
    """Seed 002 eq. (5) with the weakening–strengthening law of eq. (3), dimensionless.

    ``x'' + 2 xi x' + x = F``, ``F = -mu(v_rel) sign(v_rel)``, ``v_rel = x' - vd``, with
    ``|v_rel|`` regularized as ``sqrt(v_rel**2 + delta**2)`` (sign(v) = v/|v|).  Defaults:
    seed 002 eq. (16) (mu_d = 0.5, mu_st/mu_d = 2, v0 = 0.5, mu_v = 0); ``xi`` as in §3.
    """
    m = ModelSpec("weakstrong", "belt oscillator with the weakening-strengthening law (seed 002)")
    xi, vd, mud, mus, muv, v0 = _seed002_parameters(m)
    delta = m.parameter("delta", 1e-3, doc="|v| smoothing", positive=True)
    x, v = m.second_order("x", velocity="v")
    vrel = m.define("vrel", v - vd)
    F = m.friction("belt", laws.weakening_strengthening, vrel, mus=mus, mud=mud, muv=muv, v0=v0, delta=delta)
    m.ode(v, -2 * xi * v - x + F)
    return m


def weakstrong_slip() -> ModelSpec:
    """The seed-002 model on its backward-slip branch ``v_rel = x' - v_d < 0`` (no |v|).

    ``x'' + 2 xi x' + x = mu_d + (mu_st - mu_d) exp(-s / v0) + mu_v s / v0`` with
    ``s = v_d - x' = |v_rel|`` (seed 002 eqs. 2, 3, 5 with ``sign(v_rel) = -1``).  Exact for
    every orbit that never reaches ``v_rel = 0``, i.e. the unstable sliding cycles of Fig. 3;
    its Hopf point is exactly ``v_lw`` of eq. (9).  Not shipped in ``generated/`` (used by
    the seed-002 reproduction, ``examples/seeds/seed002.py``).
    """
    m = ModelSpec("weakstrong_slip", "seed 002 eq. (5) on the slip branch v_rel < 0 of the law (eq. 3)")
    xi, vd, mud, mus, muv, v0 = _seed002_parameters(m)
    x, v = m.second_order("x", velocity="v")
    s = vd - v
    m.ode(v, -2 * xi * v - x + mud + (mus - mud) * sp.exp(-s / v0) + muv * s / v0)
    return m


def vrande1() -> ModelSpec:
    """Seed 004 eqs. (2) and (4): ``X'' + X = -(2/pi) atan(eps V) / (1 + gamma |V|)``, ``V = X' - Vdr``.

    ``|V|`` is regularized as ``sqrt(V**2 + delta**2)`` with a tiny ``delta``; gamma = 3.
    """
    m = ModelSpec("vrande1", "1-DOF block on belt, arctan-smoothed friction (seed 004 §2.1)")
    Vdr = m.parameter("Vdr", 0.2, doc="dimensionless belt velocity")
    eps = m.parameter("eps", 1e4, doc="accuracy parameter epsilon", positive=True)
    gamma = m.parameter("gamma", 3.0)
    delta = m.parameter("delta", 1e-6, doc="|V| smoothing", positive=True)
    X, V = m.second_order("X", velocity="V")
    vrel = m.define("Vrel", V - Vdr)
    F = m.friction("belt", laws.vrande_arctan, vrel, eps=eps, gamma=gamma, delta=delta)
    m.ode(V, -X + F)
    return m


def vrande2() -> ModelSpec:
    """Seed 004 eqs. (7), (10), (11): two blocks on a belt coupled by a spring; (12) alpha = 1.2,
    beta = 1.3, gamma = 3; eps = 1e5."""
    m = ModelSpec("vrande2", "2-DOF blocks on belt, arctan-smoothed friction (seed 004 §2.2)")
    Vdr = m.parameter("Vdr", 0.14, doc="dimensionless belt velocity")
    alpha = m.parameter("alpha", 1.2, doc="coupling stiffness ratio k_c/k")
    beta = m.parameter("beta", 1.3, doc="static friction ratio F_s2/F_s1")
    eps = m.parameter("eps", 1e5, doc="accuracy parameter epsilon", positive=True)
    gamma = m.parameter("gamma", 3.0)
    delta = m.parameter("delta", 1e-6, doc="|V| smoothing", positive=True)
    X1, V1 = m.second_order("X1", velocity="V1")
    X2, V2 = m.second_order("X2", velocity="V2")
    F1 = m.friction("m1", laws.vrande_arctan, V1 - Vdr, eps=eps, gamma=gamma, delta=delta)
    F2 = m.friction("m2", laws.vrande_arctan, V2 - Vdr, eps=eps, gamma=gamma, delta=delta)
    m.ode(V1, -X1 - alpha * (X1 - X2) + F1)
    m.ode(V2, -X2 - alpha * (X2 - X1) + beta * F2)
    return m


def drill() -> ModelSpec:
    """Seed 004 eqs. (16) and (18): ``psi'' + 2 zeta psi' + psi = T*(psi' - eta)``, zeta = 0.05,
    theta = 4.2.  The smoothed torque is piecewise: this model runs on the sampled path only."""
    m = ModelSpec("drill", "drill string with smoothed bit torque (seed 004 §2.3), sampled path", sampled=True)
    zeta = m.parameter("zeta", 0.05, doc="damping ratio")
    eta = m.parameter("eta", 4.0, doc="dimensionless rotary-table speed")
    theta = m.parameter("theta", 4.2)
    kappa = m.parameter("kappa", 0.1, doc="accuracy parameter", positive=True)
    psi, dpsi = m.second_order("psi", velocity="dpsi")
    T = m.friction("bit", laws.drill_string, dpsi - eta, theta=theta, kappa=kappa)
    m.ode(dpsi, -2 * zeta * dpsi - psi + T)
    return m


def shaw_free() -> ModelSpec:
    """The non-friction force of seed 001 eq. (23): ``m x'' = beta cos(w t) - 2 alpha x' - x``.

    Used as ``b(x, x', t)`` by the two-phase scheme of seed 001 §3.1, which adds dry friction
    itself (``frictionkit.runtime.nonsmooth.force_from_model``).  Defaults: set (P).
    """
    m = ModelSpec("shaw_free", "forced oscillator without friction: b(x, x', t) of seed 001 eq. (23)")
    mass = m.parameter("m", 1.0, doc="mass", positive=True)
    alpha = m.parameter("alpha", 0.0, doc="damping")
    beta = m.parameter("beta", 6.0, doc="forcing amplitude")
    w = m.parameter("w", 0.5, unit="rad/s", doc="forcing angular frequency")
    m.forcing(w)
    x, v = m.second_order("x", velocity="v")
    m.ode(v, beta * sp.cos(w * m.t) - 2 * alpha * v - x, mass=mass)
    return m


#: name -> (builder, continuation parameters whose generated modules ship in generated/)
ZOO = {
    "belt": (belt, ("Vb", "FN")),
    "shaw": (shaw, ("w",)),
    "shaw_free": (shaw_free, ("beta",)),
    "weakstrong": (weakstrong, ("vd",)),
    "vrande1": (vrande1, ("Vdr",)),
    "vrande2": (vrande2, ("Vdr",)),
    "drill": (drill, ("eta",)),
}


def zoo_model(name: str) -> ModelSpec:
    """Build the zoo model ``name``."""
    if name not in ZOO:
        raise ModelSpecError(f"unknown zoo model {name!r}; the zoo has {', '.join(sorted(ZOO))} "
                             f"(or give a path to a model file defining model())")
    return ZOO[name][0]()
