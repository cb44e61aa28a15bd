"""Hand-written model module of a harmonically forced Duffing oscillator, continued in the
forcing frequency (so ``lam`` *is* the angular frequency of the periodic orbit)::

    x'' + 2 zeta x' + x + beta x**3 = F cos(Omega t)

First-order states (x, v), one auxiliary s = x*x; the quadratic system
(``frictionkit.runtime.model._interface`` docstring) reads::

    x' = v
    v' = -x - 2 zeta v - beta x s + F cos(Omega t)
    0  = x*x - s

With ``beta = 0`` the steady state is the textbook
``x = X cos(Omega t - phi)``, ``X = F / sqrt((1 - Omega**2)**2 + (2 zeta Omega)**2)``.
Used to test the forced harmonic balance (forcing in harmonic 1, ``omega = lam``).
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "duffing_forced"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "Omega"
PARAMETERS = ("zeta", "beta", "F", "Omega")
DEFAULTS = (0.05, 0.0, 0.1, 0.8)
STATES = ("x", "v")
VARIABLES = ("x", "v", "s")
KINDS = ("differential", "differential", "algebraic")
FORCING_FREQUENCY = "Omega"
VALIDITY = ()
DEFINITIONS = ("s = x**2",)
Q_K = np.array([1, 2], dtype=np.intp)
Q_I = np.array([0, 0], dtype=np.intp)
Q_J = np.array([2, 0], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 3


def operators(p):
    zeta, beta, F, Omega = p
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 1] = 1.0
    L0[1, 0] = -1.0
    L0[1, 1] = -2 * zeta
    L0[2, 2] = -1.0
    fc0 = z.copy()
    fc0[1] = F
    return dict(mass=np.array([1.0, 1.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=np.zeros((_N, _N)),
                qc=np.array([-beta, 1.0]), fc0=fc0, fs0=z.copy(), fc1=z.copy(), fs1=z.copy(),
                A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    zeta, beta, F, Omega = p
    return np.array([x[1], -x[0] - 2 * zeta * x[1] - beta * x[0] ** 3 + F * np.cos(Omega * t)])


def jac(t, x, p):
    zeta, beta, F, Omega = p
    one = np.ones_like(x[0])
    return np.array([[0 * one, one], [-1 - 3 * beta * x[0] ** 2, -2 * zeta * one]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[0] ** 2])
