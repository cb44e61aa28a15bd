"""A new user's friction law: a belt oscillator with a steep smooth tanh x exp law (issue 12).

    x'' + 2 zeta x' + x = F(vb - x'),
    F(v) = (mud + (mus - mud) exp(-(v/vs)^2)) tanh(v/eps)

(zeta = 0.05, mud = 0.3, mus = 0.5, vs = 0.5, eps = 0.05), typed straight into the equation as a
new user would.  Continued in ``vb`` from its subcritical Hopf point: unstable cycles, a fold
of cycles, then stable stick-slip cycles down to ``vb = 0.3``::

    frictionkit continue examples/tanh_exp_belt.py --param vb --start 0.1 --stop 1.5 --from-hopf 1 -H 40
"""
import sympy as sp

from frictionkit.modelspec import ModelSpec


def model():
    m = ModelSpec("tanh_exp_belt", "belt oscillator with a tanh x exp friction law (a new user's law)")
    zeta = m.parameter("zeta", 0.05)
    vb = m.parameter("vb", 1.0)
    mus = m.parameter("mus", 0.5)
    mud = m.parameter("mud", 0.3)
    vs = m.parameter("vs", 0.5)
    eps = m.parameter("eps", 0.05)
    x, v = m.second_order("x", velocity="v")
    w = vb - v
    m.ode(v, -2 * zeta * v - x + (mud + (mus - mud) * sp.exp(-(w / vs) ** 2)) * sp.tanh(w / eps))
    return m
