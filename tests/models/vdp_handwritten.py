"""Hand-written model module of the van der Pol oscillator, continuation in ``mu``.

    x'' - (mu - x**2) x' + x = 0

(the Hopf-unfolded form of issue 4: the origin loses stability at mu = 0 through a
supercritical Hopf bifurcation).  First-order states (x, v), one auxiliary s = x*x, so the
quadratic system (``frictionkit.runtime.model._interface`` docstring) reads::

    x' = v
    v' = -x + mu v - s v          (mu v = lam * (L1 u), s v = Q)
    0  = x*x - s

It honours the generated-model interface and is the analytic test case of the shooting,
collocation and stability modules.  It has no contact (``CONTACTS == ()``).
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "vdp"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "mu"
PARAMETERS = ("mu",)
DEFAULTS = (1.0,)
STATES = ("x", "v")
VARIABLES = ("x", "v", "s")
KINDS = ("differential", "differential", "algebraic")
FORCING_FREQUENCY = None
VALIDITY = ()
DEFINITIONS = ("s = x**2",)

Q_K = np.array([1, 2], dtype=np.intp)
Q_I = np.array([2, 0], dtype=np.intp)
Q_J = np.array([1, 0], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 3


def operators(p):
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 1] = 1.0
    L0[1, 0] = -1.0
    L0[2, 2] = -1.0
    L1 = np.zeros((_N, _N))
    L1[1, 1] = 1.0
    return dict(mass=np.array([1.0, 1.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=L1,
                qc=np.array([-1.0, 1.0]), fc0=z.copy(), fs0=z.copy(), fc1=z.copy(), fs1=z.copy(),
                A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    mu = p[0]
    return np.array([x[1], -x[0] + (mu - x[0] ** 2) * x[1]])


def jac(t, x, p):
    mu = p[0]
    one = np.ones_like(x[0])
    return np.array([[0 * one, one],
                     [-one - 2 * x[0] * x[1], (mu - x[0] ** 2) * one]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[0] ** 2])
