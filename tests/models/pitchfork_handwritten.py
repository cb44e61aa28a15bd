"""Hand-written model module with a branch point of equilibria (test of branch switching).

    x' = lam x - a x**2 - x**3
    y' = x**2 - y

Variables u = (x, y, w) with the auxiliary w = x*x; quadratic system
(``frictionkit.runtime.model._interface``)::

    x' = lam x - a w - x w
    y' = w - y
    0  = x*x - w

The trivial equilibria ``x = y = 0`` meet the branch ``lam = a x + x**2, y = x**2`` at
``lam = 0``: a pitchfork for ``a = 0``, a transcritical branch point otherwise (the
algebraic bifurcation equation has ``c != 0``).  Eigenvalues on the trivial branch:
``lam`` and ``-1``.
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "pitchfork"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "lam"
PARAMETERS = ("lam", "a")
DEFAULTS = (-0.5, 0.0)
STATES = ("x", "y")
VARIABLES = ("x", "y", "w")
KINDS = ("differential", "differential", "algebraic")
FORCING_FREQUENCY = None
VALIDITY = ()
DEFINITIONS = ("w = x**2",)

Q_K = np.array([0, 2], dtype=np.intp)
Q_I = np.array([0, 0], dtype=np.intp)
Q_J = np.array([2, 0], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 3


def operators(p):
    lam, a = p
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 2] = -a
    L0[1, 1] = -1.0
    L0[1, 2] = 1.0
    L0[2, 2] = -1.0
    L1 = np.zeros((_N, _N))
    L1[0, 0] = 1.0
    return dict(mass=np.array([1.0, 1.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=L1,
                qc=np.array([-1.0, 1.0]), fc0=z.copy(), fs0=z.copy(), fc1=z.copy(), fs1=z.copy(),
                A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    lam, a = p
    return np.array([lam * x[0] - a * x[0] ** 2 - x[0] ** 3, x[0] ** 2 - x[1]])


def jac(t, x, p):
    lam, a = p
    one = np.ones_like(x[0])
    return np.array([[(lam - 2 * a * x[0] - 3 * x[0] ** 2) * one, 0 * one],
                     [2 * x[0] * one, -one]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[0] ** 2])
