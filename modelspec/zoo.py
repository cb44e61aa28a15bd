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
    m = ModelSpec("belt", "mass-spring-damper on a moving belt with the regularized law mu_n (seed 000)")
    zeta = m.parameter("zeta", 1.3096e-3, doc="modal damping ratio zeta_1")
    omega1 = m.parameter("omega1", 1.2316e3, unit="rad/s", doc="natural pulsation omega_1")
    M1 = m.parameter("M1", 6.42e-3, unit="kg", doc="modal mass")
    FN = m.parameter("FN", 5.0, unit="N", doc="normal force")
    Vb = m.parameter("Vb", 0.2, unit="m/s", doc="belt speed")
    mus = m.parameter("mus", 0.4, doc="static friction coefficient")
    mud = m.parameter("mud", 0.2, doc="dynamic friction coefficient")
    eps = m.parameter("eps", 1e-4, doc="modulus smoothing parameter epsilon")
    n = m.parameter("n", 10.0, doc="regularization parameter")
    y, v = m.second_order("y", velocity="v")
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
    mass = m.parameter("m", 1.0, doc="mass")
    alpha = m.parameter("alpha", 0.0, doc="damping (seed 001 (P): 0)")
    beta = m.parameter("beta", 6.0, doc="forcing amplitude")
    w = m.parameter("w", 0.5, unit="rad/s", doc="forcing angular frequency")
    fs = m.parameter("fs", 1.2, doc="static friction coefficient")
    fd = m.parameter("fd", 1.0, doc="dynamic friction coefficient")
    eps = m.parameter("eps", 1e-4, doc="modulus smoothing parameter")
    n = m.parameter("n", 10.0, doc="regularization parameter")
    m.forcing(w)
    x, v = m.second_order("x", velocity="v")
    mu = m.friction("ground", laws.regularized, v, mus=fs, mud=fd, eps=eps, n=n)
    m.ode(v, beta * sp.cos(w * m.t) - 2 * alpha * v - x + mu, mass=mass)
    return m


#: name -> (builder, continuation parameters whose generated modules ship in generated/)
ZOO = {
    "belt": (belt, ("Vb", "FN")),
    "shaw": (shaw, ("w",)),
}


def zoo_model(name: str) -> ModelSpec:
    """Build the zoo model ``name``."""
    if name not in ZOO:
        raise ModelSpecError(f"unknown zoo model {name!r}; the zoo has {', '.join(sorted(ZOO))} "
                             f"(or give a path to a model file defining model())")
    return ZOO[name][0]()
