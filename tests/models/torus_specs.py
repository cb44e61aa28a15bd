"""A forced self-excited friction oscillator with a supercritical Neimark–Sacker point (tori).

The mass on a moving belt (seed 000's oscillator) with the cubic friction characteristic of
Thomsen & Fidlin ("Analytical approximations for stick-slip vibration amplitudes", Int. J.
Non-Linear Mech. 38, 2003, 389-403, eq. 2: ``mu(vr) = mu0 - m1 vr + m3 vr^3`` while sliding,
``vr = vb - x' > 0``), forced by ``A cos(w t)``::

    x'' + 2 zeta x' + x = fn mu(vb - x') + A cos(w t)

Linearized about steady sliding the damping is ``2 zeta - fn (m1 - 3 m3 vb^2) = -0.05`` at the
defaults (zeta = 0.05, fn = 1, vb = 1, m1 = 0.45, m3 = 0.1): sliding is unstable and the free
oscillator has a Rayleigh-type limit cycle of velocity amplitude ``sqrt(4 * 0.05 / (3 fn m3))
~ 0.82`` (averaging), frequency ~ 1, sliding throughout (``vr > 0``).  Forced far from
resonance (w = 2.5) the periodic response (period 2 pi / w) inherits the unstable free mode at
small A: the attractor is a torus (the forcing and the free oscillation, rotation number
``w2 / w1 ~ 1 / 2.5``).  As A grows, the forced velocity amplitude ``b ~ A w / (w^2 - 1)``
raises the averaged damping of the free mode (``3 fn m3 b^2 / 2`` against 0.05) and the forced
orbit turns stable at a Neimark–Sacker point (asynchronous quenching; the van der Pol
picture of Nayfeh & Mook, *Nonlinear oscillations*, Wiley 1979, §7.4): the torus shrinks onto
the orbit there like ``sqrt(A_ns - A)`` (supercritical: the torus exists on the side where the
orbit is unstable, and is stable).
"""
import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec


def cubic_law(vr, mu0, m1, m3):
    """Thomsen & Fidlin's cubic friction characteristic while sliding (``vr > 0``)."""
    return mu0 - m1 * vr + m3 * vr ** 3


def forced_cubic_belt() -> ModelSpec:
    """The forced belt oscillator with the cubic friction law (module docstring)."""
    m = ModelSpec("forced_cubic_belt", "forced belt oscillator with a cubic friction characteristic")
    zeta, fn, vb = m.parameter("zeta", 0.05), m.parameter("fn", 1.0), m.parameter("vb", 1.0)
    mu0, m1, m3 = m.parameter("mu0", 0.4), m.parameter("m1", 0.45), m.parameter("m3", 0.1)
    A, w = m.parameter("A", 0.5, doc="forcing amplitude"), m.parameter("w", 2.5, doc="forcing frequency")
    m.forcing(w)
    x, v = m.second_order("x", velocity="v")
    F = m.friction("belt", cubic_law, vb - v, mu0=mu0, m1=m1, m3=m3)
    m.ode(v, -2 * zeta * v - x + fn * F + A * sp.cos(w * m.t))
    return m


#: the forcing frequency and parameter values the tests use, for :func:`ode`
W = 2.5
PARAMS = dict(zeta=0.05, fn=1.0, vb=1.0, mu0=0.4, m1=0.45, m3=0.1)


def ode(t, y, A):
    """NumPy copy of the model's ODE at :data:`PARAMS` and ``w =`` :data:`W`, written out by hand
    (not generated from the declaration above): the independent integrations of the tests."""
    x, v = y
    vr = PARAMS["vb"] - v
    mu = PARAMS["mu0"] - PARAMS["m1"] * vr + PARAMS["m3"] * vr ** 3
    return [v, -2 * PARAMS["zeta"] * v - x + PARAMS["fn"] * mu + A * np.cos(W * t)]


def model() -> ModelSpec:
    """The model file's entry for the CLI, e.g. ``frictionkit torus tests/models/torus_specs.py
    --param A --start 0.3 --stop 1.3 --set w=2.5``."""
    return forced_cubic_belt()
