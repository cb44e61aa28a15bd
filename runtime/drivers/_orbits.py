"""Periodic orbits at a fixed parameter by collocation, corrected by the one Newton.

:func:`solve_collocation` is Newton's method on a collocation system at fixed ``lam``
(``engine.correct`` with the border ``lam = const``, the sparse bordered LU, and a
per-variable convergence test); :func:`collocation_orbit` starts it from a shooting orbit.
"""
from __future__ import annotations

import numpy as np

from ..discretizations._collocation import CollocationDiscretization
from ..engine._newton import correct
from ..model._interface import Model

__all__ = ["solve_collocation", "collocation_orbit"]


def _per_variable_update(disc, dZ, Z):
    """Largest correction of a variable's nodal values against that variable's size
    (``max |u_r|``), and of omega against omega: every variable must converge, not only the
    largest one."""
    N, G = disc.N, disc.G
    scale = np.maximum(np.abs(Z[: N * G].reshape(N, G)).max(axis=1), np.finfo(float).tiny)
    err = float(np.max(np.abs(dZ[: N * G].reshape(N, G)).max(axis=1) / scale))
    if disc.autonomous:
        err = max(err, abs(dZ[-2]) / abs(Z[-2]))
    return err


def solve_collocation(disc: CollocationDiscretization, Z0, *, tol: float = 1e-12, max_iter: int = 30):
    """Newton's method on a collocation system at the fixed ``lam = Z0[-1]``.

    Parameters
    ----------
    disc : CollocationDiscretization
    Z0 : ndarray
        Initial guess (e.g. ``disc.from_orbit(orbit)``).
    tol : float
        Convergence when every variable's correction is below ``tol`` times its scale
        (``max |u_r|``) and the omega correction below ``tol * omega``; models with point
        conditions also stop at the discretization's ``noise_floor`` when the correction
        no longer halves (the rounding floor of their ill-conditioned point rows).
    max_iter : int

    Returns
    -------
    Z : ndarray
        Converged unknowns.
    info : dict
        ``iterations``, ``residual`` (max abs of R) and ``factorizations``.

    Raises
    ------
    ConvergenceError
        No convergence in ``max_iter`` iterations, a singular Jacobian, or NaN.
    """
    Z0 = np.asarray(Z0, dtype=float)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, it = correct(disc, Z0, e, float(Z0[-1]), xtol=tol, max_iter=max_iter, divergence_factor=np.inf,
                    update_size=lambda dZ, Z: _per_variable_update(disc, dZ, Z), what="collocation Newton")
    return Z, dict(iterations=it, residual=float(np.max(np.abs(disc.residual(Z)))), factorizations=it)


def collocation_orbit(model: Model, orbit, *, n_intervals: int = 50, degree: int = 3, tol: float = 1e-12,
                      **options):
    """Converge a collocation orbit at fixed ``lam`` from a shooting :class:`PeriodicOrbit` guess.

    Returns
    -------
    disc : CollocationDiscretization
    Z : ndarray
        Converged unknowns (``disc.unpack(Z)`` reads them).
    info : dict
        Newton counters.
    """
    disc = CollocationDiscretization(model, n_intervals, degree, **options)
    Z0 = disc.from_orbit(orbit)
    if disc.phase == "integral":
        disc.set_reference(Z0)
    Z, info = solve_collocation(disc, Z0, tol=tol)
    return disc, Z, info
