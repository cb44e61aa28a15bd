"""Hand-written model module with period doublings of a cycle whose multipliers are analytic.

    x' = (1 - r2) x - y,        y' = x + (1 - r2) y,        r2 = x**2 + y**2
    zeta' = (J/2 + (a - e) I + e S(x, y) - q I) zeta,   zeta = (u, v),  q = u**2 + v**2
    s' = d s - s**3

with ``J = [[0, -1], [1, 0]]`` and ``S(x, y) = [[x, y], [y, -x]]``.  The unit circle
``x = cos t, y = sin t, u = v = s = 0`` is a periodic orbit (period 2 pi) for all parameters.
On it ``S = R(t/2) diag(1, -1) R(t/2)^T``, so in the frame turning at half the orbit's rate,
``zeta = R(t/2) eta``, the transverse dynamics are ``eta' = diag(a, a - 2 e) eta``, and after
one period ``R(pi) = -I``: the multipliers are

    1 (trivial),   exp(-4 pi) (radial),   -exp(2 pi a),   -exp(2 pi (a - 2 e)),   exp(2 pi d).

A period doubling at ``a = 0`` for every ``d`` and ``e > 0`` (the twisted, Moebius-band
direction), and on that PD curve a multiplier through +1 at ``d = 0`` (the test function of a
fold-flip point; here a symmetric pitchfork of cycles in ``s``, which the multipliers cannot
tell from a fold).

Variables (x, y, u, v, s, w, q, p) with the auxiliaries w = x*x + y*y, q = u*u + v*v and
p = s*s; the quadratic system (``frictionkit.runtime.model._interface``)::

    x' = x - y - w x                 y' = x + y - w y
    u' = (a - e) u - v/2 + e (x u + y v) - q u
    v' = u/2 + (a - e) v + e (y u - x v) - q v
    s' = d s - p s
    0  = x*x + y*y - w    0 = u*u + v*v - q    0 = s*s - p
"""
import numpy as np

from tests.models import _quadratic
from tests.models._quadratic import contact_law, contact_velocity, point, point_jac  # noqa: F401

MODEL_NAME = "flip_cycle"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "a"
PARAMETERS = ("a", "d", "e")
DEFAULTS = (-0.2, -0.3, 0.25)
STATES = ("x", "y", "u", "v", "s")
VARIABLES = ("x", "y", "u", "v", "s", "w", "q", "p")
KINDS = ("differential",) * 5 + ("algebraic",) * 3
FORCING_FREQUENCY = None
VALIDITY = ()
DEFINITIONS = ("w = x**2 + y**2", "q = u**2 + v**2", "p = s**2")

#               w x  w y  x u  y v  y u  x v  q u  q v  p s  x x  y y  u u  v v  s s
Q_K = np.array([0, 1, 2, 2, 3, 3, 2, 3, 4, 5, 5, 6, 6, 7], dtype=np.intp)
Q_I = np.array([5, 5, 0, 1, 1, 0, 6, 6, 7, 0, 1, 2, 3, 4], dtype=np.intp)
Q_J = np.array([0, 1, 2, 3, 2, 3, 2, 3, 4, 0, 1, 2, 3, 4], dtype=np.intp)
B_K = B_J = B_L = _quadratic.NO_TERMS
POINT_ROWS = ()
CONTACTS = ()
_N = 8


def operators(p):
    a, d, e = p
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 0], L0[0, 1] = 1.0, -1.0
    L0[1, 0], L0[1, 1] = 1.0, 1.0
    L0[2, 2], L0[2, 3] = -e, -0.5
    L0[3, 2], L0[3, 3] = 0.5, -e
    L0[4, 4] = d
    L0[5, 5] = L0[6, 6] = L0[7, 7] = -1.0
    L1 = np.zeros((_N, _N))
    L1[2, 2] = L1[3, 3] = 1.0
    qc = np.array([-1.0, -1.0, e, e, e, -e, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    return dict(mass=np.array([1.0] * 5 + [0.0] * 3), c0=z.copy(), c1=z.copy(), L0=L0, L1=L1, qc=qc,
                fc0=z.copy(), fs0=z.copy(), fc1=z.copy(), fs1=z.copy(), A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def rhs(t, x, p):
    a, d, e = p
    X, Y, U, V, S = x
    g = 1 - X ** 2 - Y ** 2
    q = U ** 2 + V ** 2
    return np.array([g * X - Y, X + g * Y,
                     (a - e) * U - 0.5 * V + e * (X * U + Y * V) - q * U,
                     0.5 * U + (a - e) * V + e * (Y * U - X * V) - q * V,
                     d * S - S ** 3])


def jac(t, x, p):
    a, d, e = p
    X, Y, U, V, S = x
    one = np.ones_like(X)
    zero = 0 * one
    g = 1 - X ** 2 - Y ** 2
    q = U ** 2 + V ** 2
    return np.array([[g - 2 * X ** 2, -2 * X * Y - 1, zero, zero, zero],
                     [1 - 2 * X * Y, g - 2 * Y ** 2, zero, zero, zero],
                     [e * U, e * V, (a - e) + e * X - q - 2 * U ** 2, -0.5 + e * Y - 2 * U * V, zero],
                     [e * V, -e * U, 0.5 + e * Y - 2 * U * V, (a - e) - e * X - q - 2 * V ** 2, zero],
                     [zero, zero, zero, zero, d - 3 * S ** 2]])


def aux(x, t, p):
    return np.array([x[0], x[1], x[2], x[3], x[4], x[0] ** 2 + x[1] ** 2, x[2] ** 2 + x[3] ** 2, x[4] ** 2])
