"""The LuGre belt oscillator of issue 26 written straight into the equations (no friction-law
declaration), for the accuracy tests of the error estimates (tests/discretizations/test_error.py):

``x'' + 2 zeta x' + x = -F``, ``vr = x' - vb``, ``z' = vr - s0 sqrt(vr^2 + delta^2) z / g(vr)``,
``g = mc + (ms - mc) exp(-(vr/vs)^2)``, ``F = s0 z + s1 z' + s2 vr`` (Canudas de Wit, Olsson,
Astrom and Lischinsky, IEEE TAC 40, 1995, with ``|vr|`` regularized); zeta = 0.02, s0 = 200,
s1 = 2.83, s2 = 0.01, mc = 0.3, ms = 0.5, vs = 0.3, delta = 1e-3.
"""
import sympy as sp

from frictionkit.modelspec import ModelSpec

DEFAULTS = dict(zeta=0.02, vb=0.3, s0=200.0, s1=2.83, s2=0.01, mc=0.3, ms=0.5, vs=0.3, delta=1e-3)


def model() -> ModelSpec:
    m = ModelSpec("lugre_acc", "belt oscillator with the LuGre law, written into the equations")
    p = {k: m.parameter(k, v) for k, v in DEFAULTS.items()}
    x, v = m.second_order("x", velocity="v")
    z = m.state("z")
    vr = v - p["vb"]
    g = p["mc"] + (p["ms"] - p["mc"]) * sp.exp(-(vr / p["vs"]) ** 2)
    zdot = vr - p["s0"] * sp.sqrt(vr ** 2 + p["delta"] ** 2) * z / g
    m.ode(z, zdot)
    m.ode(v, -2 * p["zeta"] * v - x - (p["s0"] * z + p["s1"] * zdot + p["s2"] * vr))
    return m
