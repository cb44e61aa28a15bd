"""Hand-written model module with a branch point of periodic orbits (test of branch switching).

    x' = (1 + z - r2) x - y
    y' = x + (1 + z - r2) y            r2 = x**2 + y**2
    z' = (lam + 1 - r2) z - z**3

Variables u = (x, y, z, w, v) with the auxiliaries w = x*x + y*y and v = z*z; quadratic
system (``frictionkit.runtime.model._interface``)::

    x' = x - y + z x - w x
    y' = x + y + z y - w y
    z' = lam z + z - w z - z v
    0  = x*x + y*y - w
    0  = z*z - v

Exact periodic orbits (angular frequency 1): the circle ``r2 = 1, z = 0`` for every
``lam`` (Floquet multipliers ``1``, ``exp(-4 pi)`` and ``exp(2 pi lam)``: a real multiplier
passes +1 at ``lam = 0`` while ``lam`` keeps increasing, a branch point of cycles), and
the second family ``z = const, r2 = 1 + z, lam = z + z**2`` through it (transcritical).
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "cycle_bp"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "lam"
PARAMETERS = ("lam",)
DEFAULTS = (-0.3,)
STATES = ("x", "y", "z")
VARIABLES = ("x", "y", "z", "w", "v")
KINDS = ("differential", "differential", "differential", "algebraic", "algebraic")
FORCING_FREQUENCY = None
VALIDITY = ()
DEFINITIONS = ("w = x**2 + y**2", "v = z**2")

#          z x  w x  z y  w y  w z  z v  x x  y y  z z
Q_K = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4], dtype=np.intp)
Q_I = np.array([2, 3, 2, 3, 3, 2, 0, 1, 2], dtype=np.intp)
Q_J = np.array([0, 0, 1, 1, 2, 4, 0, 1, 2], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 5


def operators(p):
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 0], L0[0, 1] = 1.0, -1.0
    L0[1, 0], L0[1, 1] = 1.0, 1.0
    L0[2, 2] = 1.0
    L0[3, 3] = -1.0
    L0[4, 4] = -1.0
    L1 = np.zeros((_N, _N))
    L1[2, 2] = 1.0
    return dict(mass=np.array([1.0, 1.0, 1.0, 0.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=L1,
                qc=np.array([1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0]), fc0=z.copy(), fs0=z.copy(),
                fc1=z.copy(), fs1=z.copy(), A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    lam = p[0]
    X, Y, Zc = x
    g = 1 + Zc - X ** 2 - Y ** 2
    return np.array([g * X - Y, X + g * Y, (lam + 1 - X ** 2 - Y ** 2) * Zc - Zc ** 3])


def jac(t, x, p):
    lam = p[0]
    X, Y, Zc = x
    one = np.ones_like(X)
    g = 1 + Zc - X ** 2 - Y ** 2
    return np.array([[g - 2 * X ** 2, -2 * X * Y - 1, X],
                     [1 - 2 * X * Y, g - 2 * Y ** 2, Y],
                     [-2 * X * Zc, -2 * Y * Zc, (lam + 1 - X ** 2 - Y ** 2 - 3 * Zc ** 2) * one]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[2], x[0] ** 2 + x[1] ** 2, x[2] ** 2])
