"""Generic bilinear-form kernels shared by the hand-written test models (contract item 4)."""
import numpy as np


def quad(Q_K, Q_I, Q_J, qc, a, b):
    """``Q(a, b)``: term t adds ``qc[t] a[Q_I[t]] b[Q_J[t]]`` to row ``Q_K[t]``."""
    out = np.zeros_like(a)
    for t in range(len(Q_K)):
        out[Q_K[t]] += qc[t] * a[Q_I[t]] * b[Q_J[t]]
    return out


def quad_jac(N, Q_K, Q_I, Q_J, qc, u):
    """Jacobian of ``Q(u, u)`` with respect to ``u``, shape (N, N) + u.shape[1:]."""
    out = np.zeros((N,) + u.shape)
    for t in range(len(Q_K)):
        out[Q_K[t], Q_I[t]] += qc[t] * u[Q_J[t]]
        out[Q_K[t], Q_J[t]] += qc[t] * u[Q_I[t]]
    return out


# -- the rest of the interface for models without point conditions or contacts -------------
#: empty index arrays: no derivative-bilinear terms (``B_K = B_J = B_L``)
NO_TERMS = np.zeros(0, dtype=np.intp)


def point(u0, p):
    """No point conditions (contract item 7)."""
    return np.zeros(0)


def point_jac(u0, p):
    """Jacobian of no point conditions: shape (0, N)."""
    return np.zeros((0, len(u0)))


def contact_velocity(x, t, p):
    """No contacts (contract item 8)."""
    return np.zeros((0,) + np.shape(x)[1:])


def contact_law(vr, p):
    """No contacts (contract item 8)."""
    return np.zeros((0,) + np.shape(vr)[1:])
