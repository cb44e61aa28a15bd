"""Hand-written model module for the seed-000 belt oscillator, continuation in ``Vb``.

Written by hand from seed ``000_*.txt`` eqs. (5), (6), (21)-(25) (unscaled: y instead of
Q = A0 y).  It honours the generated-model interface (``frictionkit.runtime.model._interface``) and
serves two purposes: the runtime works on a model that did not come from codegen (DESIGN
§1), and codegen's automatic recast of the same model must agree with it numerically.

Variables u = (y, v, Vr, R, S, mu):
    y'  = v
    v'  = -2 zeta omega1 v - omega1**2 y + FN/M1 mu
    0   = v - Vr - Vb                               (25a)
    0   = eps/n**2 + Vr**2 - R**2                   (25b)
    0   = 1/n**2 - S + Vr**2                        (25c)
    0   = 2 alpha/n Vr + mu S + mud Vr R            (25d),  alpha = sqrt(mus (mus - mud))
"""
import numpy as np

from tests.models import _quadratic

MODEL_NAME = "belt"
MODEL_HASH = "hand-written"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "Vb"
PARAMETERS = ("zeta", "omega1", "M1", "FN", "Vb", "mus", "mud", "eps", "n")
DEFAULTS = (1.3096e-3, 1.2316e3, 6.42e-3, 5.0, 0.2, 0.4, 0.2, 1e-4, 10.0)
STATES = ("y", "v")
VARIABLES = ("y", "v", "Vr", "R", "S", "mu")
KINDS = ("differential", "differential", "algebraic", "algebraic", "algebraic", "algebraic")
FORCING_FREQUENCY = None
VALIDITY = (("R", "positive", "R = sqrt(Vr**2 + eps/n**2) needs R > 0"),
            ("S", "nonzero", "mu = (...)/S needs S != 0"))
DEFINITIONS = ("Vr = v - Vb", "R = sqrt(Vr**2 + eps/n**2)", "S = Vr**2 + 1/n**2",
               "mu = (-mud*Vr*R - 2*alpha/n*Vr)/S")

Q_K = np.array([3, 3, 4, 5, 5], dtype=np.intp)
Q_I = np.array([2, 3, 2, 5, 2], dtype=np.intp)
Q_J = np.array([2, 3, 2, 4, 3], dtype=np.intp)
B_K = np.zeros(0, dtype=np.intp)
B_J = np.zeros(0, dtype=np.intp)
B_L = np.zeros(0, dtype=np.intp)
POINT_ROWS = ()
CONTACTS = ("belt",)
_N = 6


def _unpack(p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = p
    return zeta, omega1, M1, FN, Vb, mus, mud, eps, n


def operators(p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = _unpack(p)
    alpha = np.sqrt(mus * (mus - mud))
    z = np.zeros(_N)
    L0 = np.zeros((_N, _N))
    L0[0, 1] = 1.0
    L0[1, 0] = -omega1**2
    L0[1, 1] = -2 * zeta * omega1
    L0[1, 5] = FN / M1
    L0[2, 1] = 1.0
    L0[2, 2] = -1.0
    L0[4, 4] = -1.0
    L0[5, 2] = 2 * alpha / n
    c0 = z.copy()
    c0[3] = eps / n**2
    c0[4] = 1 / n**2
    c1 = z.copy()
    c1[2] = -1.0
    return dict(mass=np.array([1.0, 1.0, 0, 0, 0, 0]), c0=c0, c1=c1, L0=L0, L1=np.zeros((_N, _N)),
                qc=np.array([1.0, -1.0, 1.0, 1.0, mud]), fc0=z.copy(), fs0=z.copy(), fc1=z.copy(),
                fs1=z.copy(), A=np.zeros((_N, _N)), bc=np.zeros(0))


def quad(qc, a, b):
    return _quadratic.quad(Q_K, Q_I, Q_J, qc, a, b)


def quad_jac(qc, u):
    return _quadratic.quad_jac(_N, Q_K, Q_I, Q_J, qc, u)


def _mu(vr, mus, mud, eps, n):
    alpha = np.sqrt(mus * (mus - mud))
    return (-mud * vr * np.sqrt(vr**2 + eps / n**2) - 2 * alpha / n * vr) / (vr**2 + 1 / n**2)


def _dmu(vr, mus, mud, eps, n):
    alpha = np.sqrt(mus * (mus - mud))
    R = np.sqrt(vr**2 + eps / n**2)
    S = vr**2 + 1 / n**2
    num = -mud * vr * R - 2 * alpha / n * vr
    dnum = -mud * R - mud * vr**2 / R - 2 * alpha / n
    return dnum / S - num * 2 * vr / S**2


def rhs(t, x, p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = _unpack(p)
    y, v = x[0], x[1]
    return np.array([v, -2 * zeta * omega1 * v - omega1**2 * y + FN / M1 * _mu(v - Vb, mus, mud, eps, n)])


def jac(t, x, p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = _unpack(p)
    y, v = x[0], x[1]
    one = np.ones_like(y)
    return np.array([[0 * one, one],
                     [-omega1**2 * one, -2 * zeta * omega1 + FN / M1 * _dmu(v - Vb, mus, mud, eps, n)]])


def aux(x, t, p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = _unpack(p)
    y, v = x[0], x[1]
    Vr = v - Vb
    R = np.sqrt(Vr**2 + eps / n**2)
    S = Vr**2 + 1 / n**2
    return np.array([y, v, Vr, R, S, _mu(Vr, mus, mud, eps, n)])


def point(u0, p):
    return np.zeros(0)


def point_jac(u0, p):
    return np.zeros((0, _N))


def contact_velocity(x, t, p):
    return np.array([x[1] - p[PARAMETERS.index("Vb")]])


def contact_law(vr, p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = _unpack(p)
    return _mu(np.asarray(vr), mus, mud, eps, n)
