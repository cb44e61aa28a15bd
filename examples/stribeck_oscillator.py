"""A user-declared friction model, end to end (run: python examples/stribeck_oscillator.py).

A mass on a belt with a Stribeck-type law written as one Python function: exactly what a
user adds.  frictionkit recasts it (the exp and sqrt get auxiliaries, the exp a
derivative-bilinear row), generates NumPy/Cython code and evaluates it.  The same file
works from the command line:

    frictionkit codegen examples/stribeck_oscillator.py --param vb --explain
"""
import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec, laws


def stribeck(vr, mus, mud, vs, delta):
    """mu(vr) = -(mud + (mus - mud) exp(-(vr/vs)**2)) vr/|vr|, |vr| ~ sqrt(vr**2 + delta**2)."""
    return -(mud + (mus - mud) * sp.exp(-(vr / vs) ** 2)) * vr / laws.smooth_abs(vr, delta)


def model():
    m = ModelSpec("stribeck", "mass on a belt with a Stribeck law (user example)")
    zeta = m.parameter("zeta", 0.02)
    vb = m.parameter("vb", 0.5, unit="m/s")
    mus = m.parameter("mus", 0.6)
    mud = m.parameter("mud", 0.3)
    vs = m.parameter("vs", 0.4)
    delta = m.parameter("delta", 1e-3)
    x, v = m.second_order("x", velocity="v")
    mu = m.friction("belt", stribeck, v - vb, mus=mus, mud=mud, vs=vs, delta=delta)
    m.ode(v, -2 * zeta * v - x + mu)
    return m


if __name__ == "__main__":
    from frictionkit.codegen import recast
    from frictionkit.runtime import load_model

    print(recast(model(), "vb").explain())
    stribeck_model = load_model(model(), continuation="vb", backend="numpy")
    x = np.array([0.1, 0.2])
    print("f(x) =", stribeck_model.rhs(0.0, x))
    print("df/dx =", stribeck_model.jac(0.0, x))
