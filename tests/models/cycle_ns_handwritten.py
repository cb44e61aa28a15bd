"""Hand-written model module with a Neimark-Sacker bifurcation of a cycle (test model).

    x' = (1 - r2) x - y,        y' = x + (1 - r2) y,        r2 = x**2 + y**2
    u' = lam u - nu v - q u,    v' = nu u + lam v - q v,    q  = u**2 + v**2

Variables (x, y, u, v, w, q) with the auxiliaries w = x*x + y*y and q = u*u + v*v; the
quadratic system (``frictionkit.runtime.model._interface``)::

    x' = x - y - w x           y' = x + y - w y
    u' = lam u - nu v - q u    v' = nu u + lam v - q v
    0  = x*x + y*y - w         0  = u*u + v*v - q

The unit circle ``r2 = 1, u = v = 0`` is a periodic orbit (period 2 pi) for every ``lam``,
with Floquet multipliers ``1``, ``exp(-4 pi)`` and the complex pair
``exp(2 pi (lam +- i nu))``: the pair leaves the unit circle at ``lam = 0`` (a
Neimark-Sacker bifurcation for ``nu`` not a simple fraction).
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "cycle_ns"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "lam"
PARAMETERS = ("lam", "nu")
DEFAULTS = (-0.3, 0.3)
STATES = ("x", "y", "u", "v")
VARIABLES = ("x", "y", "u", "v", "w", "q")
KINDS = ("differential",) * 4 + ("algebraic",) * 2
FORCING_FREQUENCY = None
VALIDITY = ()
DEFINITIONS = ("w = x**2 + y**2", "q = u**2 + v**2")

#               w x  w y  q u  q v  x x  y y  u u  v v
Q_K = np.array([0, 1, 2, 3, 4, 4, 5, 5], dtype=np.intp)
Q_I = np.array([4, 4, 5, 5, 0, 1, 2, 3], dtype=np.intp)
Q_J = np.array([0, 1, 2, 3, 0, 1, 2, 3], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 6


def operators(p):
    lam, nu = p
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 0], L0[0, 1] = 1.0, -1.0
    L0[1, 0], L0[1, 1] = 1.0, 1.0
    L0[2, 3] = -nu
    L0[3, 2] = nu
    L0[4, 4] = -1.0
    L0[5, 5] = -1.0
    L1 = np.zeros((_N, _N))
    L1[2, 2] = 1.0
    L1[3, 3] = 1.0
    return dict(mass=np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0]), c0=z.copy(), c1=z.copy(), L0=L0, L1=L1,
                qc=np.array([-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]), fc0=z.copy(), fs0=z.copy(),
                fc1=z.copy(), fs1=z.copy(), A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    lam, nu = p
    X, Y, U, V = x
    g = 1 - X ** 2 - Y ** 2
    q = U ** 2 + V ** 2
    return np.array([g * X - Y, X + g * Y, lam * U - nu * V - q * U, nu * U + lam * V - q * V])


def jac(t, x, p):
    lam, nu = p
    X, Y, U, V = x
    one = np.ones_like(X)
    zero = 0 * one
    g = 1 - X ** 2 - Y ** 2
    q = U ** 2 + V ** 2
    return np.array([[g - 2 * X ** 2, -2 * X * Y - 1, zero, zero],
                     [1 - 2 * X * Y, g - 2 * Y ** 2, zero, zero],
                     [zero, zero, lam - q - 2 * U ** 2, -nu * one - 2 * U * V],
                     [zero, zero, nu * one - 2 * U * V, lam - q - 2 * V ** 2]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[2], x[3], x[0] ** 2 + x[1] ** 2, x[2] ** 2 + x[3] ** 2])
