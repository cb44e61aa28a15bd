"""The columns of a branch computed from its solutions, for all points at once: extrema of
Fourier series (:func:`trig_extrema`), states sampled over each period (:func:`orbit_samples`)
and the validity of the recast (:class:`~frictionkit.runtime.results.Branch` uses them)."""
from __future__ import annotations

import numpy as np

from ..discretizations._hbm import coefficients_to_samples

__all__ = ["orbit_samples", "trig_extrema", "validity_columns"]


def trig_extrema(coef: np.ndarray, n_grid: int | None = None):
    """Minimum and maximum over one period of real Fourier series, accurately.

    A grid search followed by Newton on ``u'(theta) = 0`` from the best grid points
    (relative accuracy near machine precision, unlike a plain grid maximum).  Every row is
    an independent series, so the rows of many orbits are done in one batch (one inverse FFT
    for the grid, one Newton iteration for all rows not yet converged).

    Parameters
    ----------
    coef : ndarray (..., 2H+1)
        Coefficients ``[u0, c1, s1, ..., cH, sH]`` along the last axis.

    Returns
    -------
    umin, umax : ndarray (...,)  (at least 1-D)
    """
    coef = np.asarray(coef, dtype=float)
    shape = coef.shape[:-1] if coef.ndim > 1 else (1,)
    coef = coef.reshape(-1, coef.shape[-1])
    H = (coef.shape[1] - 1) // 2
    if H == 0:
        return coef[:, 0].reshape(shape).copy(), coef[:, 0].reshape(shape).copy()
    n_grid = n_grid or max(16 * H, 256)
    s = coefficients_to_samples(coef, n_grid)
    theta_grid = 2 * np.pi * np.arange(n_grid) / n_grid
    m = len(coef)
    # the maxima and the minima refined together: rows [0, m) from the grid maximum, [m, 2m)
    # from the grid minimum
    both = np.concatenate([coef, coef])
    theta = theta_grid[np.concatenate([np.argmax(s, axis=1), np.argmin(s, axis=1)])]
    v = _refine_extrema(both, theta, 2 * np.pi / n_grid)
    # Newton may only improve on the grid value
    return np.minimum(v[m:], s.min(axis=1)).reshape(shape), np.maximum(v[:m], s.max(axis=1)).reshape(shape)


def _refine_extrema(coef, theta, cell):
    """Newton on ``u'(theta) = 0`` for each row of ``coef`` from ``theta``, steps clipped to
    ``cell`` (stay within one grid cell of the grid extremum); returns ``u(theta)``.  A row
    stops once its step is below 1e-15 (30 iterations at most)."""
    H = (coef.shape[1] - 1) // 2
    k = np.arange(1, H + 1)
    c, sn = coef[:, 1::2], coef[:, 2::2]
    theta = np.array(theta, dtype=float)
    active = np.arange(len(theta))
    for _ in range(30):
        kt = np.outer(theta[active], k)
        ck, sk = np.cos(kt), np.sin(kt)
        ca, sa = c[active], sn[active]
        d1 = np.sum((-ca * sk + sa * ck) * k, axis=1)          # u'(theta)
        d2 = np.sum((-ca * ck - sa * sk) * k**2, axis=1)       # u''(theta)
        step = np.where(d2 != 0, d1 / np.where(d2 != 0, d2, 1.0), 0.0)
        step = np.clip(step, -cell, cell)
        theta[active] -= step
        active = active[np.abs(step) >= 1e-15]
        if not active.size:
            break
    kt = np.outer(theta, k)
    return coef[:, 0] + np.sum(c * np.cos(kt) + sn * np.sin(kt), axis=1)


def orbit_samples(disc, solutions, n_t: int) -> np.ndarray:
    """The original states of each solution on a uniform grid of its period, as the
    ``samples(n_t)`` of ``disc.unpack`` gives them, shape (n_points, n, n_t').

    Harmonic balances: from the Fourier coefficients of all points in one inverse FFT
    (``n_t' = max(n_t, 2H + 1)``); other discretizations: point by point (``n_t' = n_t``).
    """
    n = disc.model.n
    infos = [disc.unpack(Z) for Z in np.asarray(solutions, dtype=float).reshape(-1, disc.size)]
    if not infos:
        return np.zeros((0, n, int(n_t)))
    if disc.H is None:
        return np.array([np.asarray(info["samples"](int(n_t))) for info in infos])
    U = np.array([np.asarray(info["coefficients"])[:n] for info in infos])
    if disc.H == 0:
        return np.repeat(U[:, :, :1], int(n_t), axis=2)
    return coefficients_to_samples(U, max(int(n_t), 2 * disc.H + 1))


def validity_columns(model, H, U, param, omega) -> dict:
    """The ``validity/<variable>`` columns of harmonic-balance points with coefficients ``U``
    (n_points, rows, 2H+1): each condition's worst relative value over one period
    (``Model.validity_report``), on ``max(8H + 8, 256)`` samples of all points at once."""
    checks = model.validity
    if not checks:
        return {}
    n = model.n
    n_t = 1 if H == 0 else max(8 * H + 8, 256)
    rows = U if H else U[:, :, :1]
    samples = rows if H == 0 else coefficients_to_samples(rows, n_t)
    out = {var: np.empty(len(U)) for var, _, _ in checks}
    for i, (u, lam, om) in enumerate(zip(samples, param, omega)):
        if U.shape[1] == n < model.N:
            # the states alone (AFT): the auxiliaries are functions of them, principal roots;
            # the sample times as ``Discretization.samples`` gives them
            t = (2 * np.pi / om) * np.arange(n_t) / n_t if np.isfinite(om) else np.linspace(0.0, 1.0, n_t)
            with np.errstate(invalid="ignore", divide="ignore"):
                u = model.aux(u, t, lam)
        for r in model.validity_report(u):
            out[r["variable"]][i] = r["relative"]
    return out
