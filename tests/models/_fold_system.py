"""A fold located without the continuation engine: the extremum of ``lam`` along the branch.

The engines locate a fold from the sign change of their tangent's ``lam`` component
(``runtime/engine/_locate.py``) and the fold curves use a minimally augmented system.  The
reference here uses neither: the branch is parametrized by the one unknown ``Z[k]`` that
changes most between two points around the fold, each point of it is a plain Newton solve of
``R(Z) = 0, Z[k] = s``, and the fold is the extremum of ``lam(s)`` found by scipy's bounded
Brent minimizer (``lam`` is quadratic in ``s`` there, so its value is exact to rounding).
"""
import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar


def _on_branch(disc, Z, k, s, *, tol=1e-13, max_iter=30):
    Z = Z.copy()
    Z[k] = s
    for _ in range(max_iter):
        J = disc.jacobian(Z)
        J = J.toarray() if sp.issparse(J) else np.asarray(J)
        row = np.zeros(Z.size)
        row[k] = 1.0
        dZ = np.linalg.solve(np.vstack([J, row]), -np.append(disc.residual(Z), Z[k] - s))
        Z += dZ
        if np.linalg.norm(dZ) <= tol * np.linalg.norm(Z):
            return Z
    raise AssertionError(f"no point of the branch at Z[{k}] = {s}")


def fold_by_extremum(disc, Z_before, Z_after):
    """Return ``lam`` at the fold between two branch points on either side of it.

    Parameters
    ----------
    disc : Discretization
        With ``residual`` and ``jacobian`` (last column ``d/d lam``).
    Z_before, Z_after : ndarray
        Solutions on the branch before and after the fold.

    Returns
    -------
    float
    """
    Z_before, Z_after = np.asarray(Z_before, dtype=float), np.asarray(Z_after, dtype=float)
    d = np.abs(Z_after[:-1] - Z_before[:-1]) / np.maximum(np.abs(Z_before[:-1]), 1e-300)
    k = int(np.argmax(np.where(np.abs(Z_before[:-1]) > 1e-8 * np.max(np.abs(Z_before[:-1])), d, 0.0)))
    Z_mid = (Z_before + Z_after) / 2
    lam_mid = _on_branch(disc, Z_mid, k, Z_mid[k])[-1]
    sign = 1.0 if lam_mid > Z_before[-1] else -1.0          # a maximum or a minimum of lam
    res = minimize_scalar(lambda s: -sign * _on_branch(disc, Z_mid, k, s)[-1],
                          bounds=sorted((Z_before[k], Z_after[k])), method="bounded",
                          options=dict(xatol=1e-12 * abs(Z_mid[k])))
    return -sign * res.fun
