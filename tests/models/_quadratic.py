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
