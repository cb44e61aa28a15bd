"""Friction laws that take states besides the relative velocity (issue 26), declared as a
user would, passing the state to ``ModelSpec.friction``.

:func:`lugre`: the LuGre belt oscillator of issue 26, whose law has an internal (bristle) state:

``x'' + 2 zeta x' + x = -F``, ``vr = x' - vb``, ``z' = vr - s0 sqrt(vr^2 + delta^2) z / g(vr)``,
``g(vr) = mc + (ms - mc) exp(-(vr/vs)^2)``, ``F = s0 z + s1 z' + s2 vr`` (Canudas de Wit,
Olsson, Åström and Lischinsky, IEEE TAC 40, 1995, with ``|vr|`` regularized as
``sqrt(vr^2 + delta^2)``).  The friction coefficient is ``mu = -F`` (the sign convention of
``modelspec.laws``: ``mu > 0`` for ``vr < 0``).  :func:`rhs` is an independent NumPy copy of
the ODE for references by time integration, :func:`steady_sliding_mu` the steady-state
(Stribeck) curve of that paper, written by hand.
"""
import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec, laws

DEFAULTS = dict(zeta=0.02, vb=0.3, s0=200.0, s1=2.83, s2=0.01, mc=0.3, ms=0.5, vs=0.3, delta=1e-3)


def lugre_law(vr, z, s0, s1, s2, mc, ms, vs, delta):
    """LuGre friction coefficient ``-(s0 z + s1 z' + s2 vr)`` with ``z'`` from the bristle law."""
    g = mc + (ms - mc) * sp.exp(-(vr / vs) ** 2)
    zdot = vr - s0 * sp.sqrt(vr ** 2 + delta ** 2) * z / g
    return -(s0 * z + s1 * zdot + s2 * vr)


def lugre() -> ModelSpec:
    m = ModelSpec("lugre", "belt oscillator with the LuGre law (internal bristle state z)")
    p = {k: m.parameter(k, v, positive=(k == "delta")) for k, v in DEFAULTS.items()}
    x, v = m.second_order("x", velocity="v")
    z = m.state("z", doc="bristle deflection")
    vr = m.define("vr", v - p["vb"])
    g = p["mc"] + (p["ms"] - p["mc"]) * sp.exp(-(vr / p["vs"]) ** 2)
    m.ode(z, vr - p["s0"] * sp.sqrt(vr ** 2 + p["delta"] ** 2) * z / g)
    mu = m.friction("belt", lugre_law, vr, z=z, **{k: p[k] for k in ("s0", "s1", "s2", "mc", "ms", "vs", "delta")})
    m.ode(v, -2 * p["zeta"] * v - x + mu)
    return m


def model() -> ModelSpec:
    """The LuGre belt as a model file for the CLI, e.g. ``frictionkit continue
    tests/models/state_law_specs.py --param vb --start 0.01 --stop 2 --from-hopf 1``."""
    return lugre()


def rhs(t, y, vb, zeta=0.02, s0=200.0, s1=2.83, s2=0.01, mc=0.3, ms=0.5, vs=0.3, delta=1e-3):
    """The LuGre ODE in NumPy, states ``(x, v, z)``."""
    x, v, z = y
    vr = v - vb
    g = mc + (ms - mc) * np.exp(-(vr / vs) ** 2)
    zdot = vr - s0 * np.sqrt(vr ** 2 + delta ** 2) * z / g
    return np.array([v, -2 * zeta * v - x - (s0 * z + s1 * zdot + s2 * vr), zdot])


def steady_sliding_mu(vr, s2=0.01, mc=0.3, ms=0.5, vs=0.3, delta=1e-3):
    """``-F_ss(vr)``: ``z`` at rest, ``F_ss = g(vr) vr / sqrt(vr^2 + delta^2) + s2 vr``."""
    g = mc + (ms - mc) * np.exp(-(vr / vs) ** 2)
    return -(g * vr / np.sqrt(vr ** 2 + delta ** 2) + s2 * vr)


def belt_with_state_law(law_of, extra_state=False):
    """The seed-000 belt (n = 10, FN = 5 N) whose friction law also takes a state.

    The law is ``mu_n(Vr) (1 + kx s)`` with ``s = law_of(y, v, w)``; ``kx = 0`` by default, so
    the orbits are the belt's.  With ``extra_state`` a state ``w' = Vr - w^3`` is declared
    (non-linear: its rest point has no linear closed form).
    """
    m = ModelSpec("belt_state_law")
    zeta, omega1 = m.parameter("zeta", 1.3096e-3), m.parameter("omega1", 1.2316e3)
    FN_M = m.parameter("FN_M", 5.0 / 6.42e-3)
    Vb = m.parameter("Vb", 0.2)
    mus, mud = m.parameter("mus", 0.4), m.parameter("mud", 0.2)
    eps, n = m.parameter("eps", 1e-4, positive=True), m.parameter("n", 10.0, positive=True)
    kx = m.parameter("kx", 0.0)
    y, v = m.second_order("y", velocity="v")
    w = m.state("w") if extra_state else None
    if extra_state:
        m.ode(w, v - Vb - w ** 3)
    Vr = m.define("Vr", v - Vb)

    def law(vr, s, kx, mus, mud, eps, n):
        return laws.regularized(vr, mus, mud, eps, n) * (1 + kx * s)

    mu = m.friction("belt", law, Vr, s=law_of(y, v, w), kx=kx, mus=mus, mud=mud, eps=eps, n=n)
    m.ode(v, -2 * zeta * omega1 * v - omega1 ** 2 * y + FN_M * mu)
    return m
