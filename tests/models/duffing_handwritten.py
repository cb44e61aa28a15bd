"""Hand-written model module of the forced Duffing oscillator, continuation in the forcing frequency.

    x'' + c x' + k x + b x**3 = F cos(w t)

States (x, v), one auxiliary s = x*x; quadratic system (``frictionkit.runtime.model._interface``)::

    x' = v
    v' = -k x - c v - b s x + F cos(w t)
    0  = x*x - s

``w`` is both ``FORCING_FREQUENCY`` and ``CONTINUATION``.  With ``b = 0`` the periodic
response is the textbook one, amplitude ``F / sqrt((k - w^2)^2 + (c w)^2)``: the analytic
check of forced shooting and collocation.
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "duffing"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "w"
PARAMETERS = ("c", "k", "b", "F", "w")
DEFAULTS = (0.1, 1.0, 1.0, 0.5, 1.2)
STATES = ("x", "v")
VARIABLES = ("x", "v", "s")
KINDS = ("differential", "differential", "algebraic")
FORCING_FREQUENCY = "w"
VALIDITY = ()
DEFINITIONS = ("s = x**2",)

Q_K = np.array([1, 2], dtype=np.intp)
Q_I = np.array([2, 0], dtype=np.intp)
Q_J = np.array([0, 0], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 3


def operators(p):
    c, k, b, F, w = p
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 1] = 1.0
    L0[1, 0] = -k
    L0[1, 1] = -c
    L0[2, 2] = -1.0
    fc0 = z.copy()
    fc0[1] = F
    return dict(mass=np.array([1.0, 1.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=np.zeros((_N, _N)),
                qc=np.array([-b, 1.0]), fc0=fc0, fs0=z.copy(), fc1=z.copy(), fs1=z.copy(),
                A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    c, k, b, F, w = p
    return np.array([x[1], -k * x[0] - c * x[1] - b * x[0] ** 3 + F * np.cos(w * t)])


def jac(t, x, p):
    c, k, b, F, w = p
    one = np.ones_like(x[0])
    return np.array([[0 * one, one],
                     [-k * one - 3 * b * x[0] ** 2, -c * one]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[0] ** 2])
