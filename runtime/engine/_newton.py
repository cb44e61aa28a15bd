"""The one Newton corrector of the runtime, and the branch tangent (DESIGN §5.3).

Works on any discretization honouring the contract
(:class:`~frictionkit.runtime.discretizations.Discretization`; only ``residual`` and
``jacobian`` are used), so it corrects harmonic balance, collocation, shooting and the
augmented systems of the two-parameter curves alike.  Each iteration solves the bordered
system ``[J(Z); b^T] dZ = [-R(Z); c - b . Z]`` (:mod:`._bordered`).
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from ._bordered import Counters, _Workspace, bordered_factor, factor_jacobian

__all__ = ["correct", "tangent_at"]


def _check_finite(R, what="residual"):
    if not np.all(np.isfinite(R)):
        bad = np.flatnonzero(~np.isfinite(R))
        raise ConvergenceError(
            f"NaN/inf in the {what} (equations {bad[:5].tolist()}{'...' if len(bad) > 5 else ''}): "
            "a validity condition of the recast is probably violated (division by zero, "
            "negative sqrt auxiliary), or the step is too long")


def correct(disc, Z, border, value=None, *, counters: Counters | None = None, xtol: float = 1e-11,
            max_iter: int = 12, divergence_factor: float = 1e3, noise_floor: float | None = None):
    """Newton's method on ``R(Z) = 0, border . Z = value``.

    Parameters
    ----------
    disc : Discretization
        Provides ``residual`` and ``jacobian``.
    Z : ndarray
        Initial guess.
    border : ndarray
        Row of the extra linear equation.
    value : float, optional
        Its right-hand side; default ``border . Z`` (keep the guess's position).
    xtol : float
        Stop when the update ``|dZ|_2 <= xtol * |Z|_2``; by quadratic convergence the
        remaining error is then of order ``xtol**2``.
    max_iter : int
        Maximal number of iterations (each one factorization).
    divergence_factor : float
        Give up when the update grows by this factor over the first one.
    noise_floor : float, optional
        Also stop when the relative update is below ``noise_floor`` and no longer shrinks
        (a quadratically converging Newton at least halves it per iteration above the
        rounding noise of the solve): the rounding floor of an ill-conditioned system, e.g.
        a point condition of a saturated ``tanh`` whose integration constant barely moves
        the solution (DESIGN §2).  Default: the discretization's ``noise_floor`` attribute,
        or 0 (off: near a Hopf point the HBM is nearly singular too, and accepting its
        noise floor there derails the continuation).

    Returns
    -------
    Z : ndarray
        The corrected point.
    iterations : int

    Raises
    ------
    ConvergenceError
        If the iteration diverges, meets NaN, or does not converge in ``max_iter``.
    """
    with _Workspace.scope(disc):
        return _correct(disc, Z, border, value, counters, xtol, max_iter, divergence_factor, noise_floor)


def _correct(disc, Z, border, value, counters, xtol, max_iter, divergence_factor, noise_floor):
    Z = np.array(Z, dtype=float)
    border = np.asarray(border, dtype=float)
    if value is None:
        value = float(border @ Z)
    if noise_floor is None:
        noise_floor = float(disc.noise_floor)
    first = None
    last = np.inf
    for it in range(1, max_iter + 1):
        R = disc.residual(Z)
        if counters is not None:
            counters.residual_evaluations += 1
        _check_finite(R)
        rhs = np.append(-R, value - border @ Z)
        lu, _ = factor_jacobian(disc, Z, border, counters)
        dZ = lu.solve(rhs)
        del lu
        Z = Z + dZ
        nd = np.linalg.norm(dZ)
        if first is None:
            first = nd
        elif nd > divergence_factor * max(first, 1e-300):
            raise ConvergenceError(f"Newton correction diverges (update {nd:.3g} after {it} iterations)")
        size = max(np.linalg.norm(Z), 1e-300)
        if nd <= xtol * size:
            return Z, it
        if nd <= noise_floor * size and nd > 0.5 * last:
            return Z, it
        last = nd
    raise ConvergenceError(f"Newton correction did not converge in {max_iter} iterations "
                           f"(last update {nd:.3g}, |Z| = {np.linalg.norm(Z):.3g})")


def tangent_at(disc, Z, previous, counters: Counters | None = None, J=None, *, with_det_sign=False):
    """Unit tangent of the branch at Z, oriented like ``previous`` (null vector of dR/dZ).

    With ``with_det_sign=True`` also returns the sign of ``det [J; t^T]`` for the returned
    tangent ``t`` (the branch-point test function), from the same LU: when ``J`` has rank
    ``m`` its rows span ``t``'s orthogonal complement, so
    ``det [J; b^T] = (b . t) det [J; t^T]`` for any border ``b``.
    """
    rhs = np.zeros(disc.m + 1)
    rhs[-1] = 1.0
    with _Workspace.scope(disc):
        if J is None:
            lu, _ = factor_jacobian(disc, Z, previous, counters)
        else:
            lu = bordered_factor(J, previous, counters)
        t = lu.solve(rhs)
        sign = lu.det_sign() if with_det_sign else 0
    t = t / np.linalg.norm(t)
    if not with_det_sign:
        return t
    return t, sign * int(np.sign(np.asarray(previous, dtype=float) @ t))

