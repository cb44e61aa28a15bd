"""A two-degree-of-freedom structure with a friction damper under harmonic forcing (issue 25).

    x1'' + c x1' + k1 x1 + k2 (x1 - x2) + muN tanh(x1'/eps) = F0 cos(W t)
    x2'' + c x2' + k2 (x2 - x1)                              = 0

Unit masses; ``k1 = k2 = 1`` put the linear modes at ``W = sqrt((3 -+ sqrt 5)/2)`` = 0.618 and
1.618 (the sticking limit, x1 held, at ``sqrt(k2)`` = 1); ``c = 0.02`` (damping ratios 0.6 % and
1.6 %), ``F0 = 0.1``, ``eps = 0.05`` (velocity scale of the regularized Coulomb law ``-tanh(v /
eps)``, about 5 % of the velocities at resonance).  ``muN`` = 0.05 lets the damper slip over most
of the cycle at resonance, 0.2 (twice the force amplitude) keeps it nearly stuck away from the
resonances.  The same file works from the command line:

    frictionkit frf examples/friction_damper.py --start 0.4 --stop 2.0 --set muN=0.05 --out frf.h5
"""
import sympy as sp

from frictionkit.modelspec import ModelSpec


def tanh_coulomb(vr, eps):
    """Coulomb's law regularized by a tanh: ``mu(vr) = -tanh(vr / eps)`` (sign convention of
    ``modelspec/laws.py``: friction opposes the relative velocity)."""
    return -sp.tanh(vr / eps)


def model():
    m = ModelSpec("friction_damper", "2-DOF structure with a tanh-regularized friction damper, forced")
    c = m.parameter("c", 0.02, doc="viscous damping of each mass")
    k1 = m.parameter("k1", 1.0, doc="grounding stiffness of mass 1")
    k2 = m.parameter("k2", 1.0, doc="coupling stiffness")
    F0 = m.parameter("F0", 0.1, doc="forcing amplitude on mass 1")
    W = m.parameter("W", 0.4, unit="rad/s", doc="forcing angular frequency", positive=True)
    muN = m.parameter("muN", 0.05, doc="friction force limit (coefficient times normal load)")
    eps = m.parameter("eps", 0.05, doc="velocity scale of the tanh regularization", positive=True)
    m.forcing(W)
    x1, v1 = m.second_order("x1", velocity="v1")
    x2, v2 = m.second_order("x2", velocity="v2")
    mu = m.friction("damper", tanh_coulomb, v1, eps=eps)
    m.ode(v1, -c * v1 - k1 * x1 - k2 * (x1 - x2) + muN * mu + F0 * sp.cos(W * m.t))
    m.ode(v2, -c * v2 - k2 * (x2 - x1))
    return m
