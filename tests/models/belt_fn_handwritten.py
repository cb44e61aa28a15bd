"""Hand-written model module of the seed-000 belt oscillator, continuation in ``FN``.

Same equations as :mod:`tests.models.belt_handwritten` (seed ``000_*.txt`` eqs. (5), (6),
(21)-(25)), but the normal force is the continuation parameter (seed 000 §4.3), so it
enters the quadratic system through ``lam * L1``: row ``v'`` reads
``... + lam/M1 * mu``.  Used to test the ``L1`` path of the runtime and the
FN-continuation Hopf points at ``Vb = 0.2`` m/s.
"""
import numpy as np

from . import belt_handwritten as _b

MODEL_NAME = "belt"
MODEL_HASH = "hand-written-FN"
GENERATOR_VERSION = "hand-written"
BACKEND = "hand-written"
CONTINUATION = "FN"
PARAMETERS = _b.PARAMETERS
DEFAULTS = _b.DEFAULTS
STATES = _b.STATES
VARIABLES = _b.VARIABLES
KINDS = _b.KINDS
FORCING_FREQUENCY = None
VALIDITY = _b.VALIDITY
DEFINITIONS = _b.DEFINITIONS
Q_K, Q_I, Q_J = _b.Q_K, _b.Q_I, _b.Q_J
B_K, B_J, B_L = _b.B_K, _b.B_J, _b.B_L
POINT_ROWS = ()
CONTACTS = _b.CONTACTS
quad, quad_jac = _b.quad, _b.quad_jac
rhs, jac, aux = _b.rhs, _b.jac, _b.aux
point, point_jac = _b.point, _b.point_jac
contact_velocity, contact_law = _b.contact_velocity, _b.contact_law


def operators(p):
    zeta, omega1, M1, FN, Vb, mus, mud, eps, n = p
    ops = _b.operators(p)
    L0, L1 = ops["L0"].copy(), np.zeros_like(ops["L0"])
    L0[1, 5] = 0.0
    L1[1, 5] = 1.0 / M1            # lam * mu / M1
    c0, c1 = ops["c0"].copy(), np.zeros_like(ops["c1"])
    c0[2] = -Vb                    # 0 = v - Vr - Vb with Vb a fixed parameter
    ops.update(L0=L0, L1=L1, c0=c0, c1=c1)
    return ops
