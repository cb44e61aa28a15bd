"""The one Newton corrector of the runtime, and the branch tangent (DESIGN §5.3).

Works on any discretization honouring the contract
(:class:`~frictionkit.runtime.discretizations.Discretization`; only ``residual`` and
``jacobian`` are used), so it corrects harmonic balance, collocation, shooting and the
augmented systems of the two-parameter curves alike.  Each iteration solves the bordered
system ``[J(Z); b^T] dZ = [-R(Z); c - b . Z]`` (:mod:`._bordered`).
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, NonFiniteError
from ._bordered import Counters, _Workspace, bordered_factor, factor_jacobian

__all__ = ["correct", "tangent_at"]


def _check_finite(R, what="residual"):
    if not np.all(np.isfinite(R)):
        bad = np.flatnonzero(~np.isfinite(R))
        raise NonFiniteError(
            f"NaN/inf in the {what} (equations {bad[:5].tolist()}{'...' if len(bad) > 5 else ''}): "
            "a validity condition of the recast is probably violated (division by zero, "
            "negative sqrt auxiliary), or the step is too long")


def correct(disc, Z, border, value=None, *, counters: Counters | None = None, xtol: float = 1e-11,
            max_iter: int = 12, divergence_factor: float = 1e3, noise_floor: float | None = None,
            update_size=None, what: str = "Newton correction"):
    """Newton's method on ``R(Z) = 0, border . Z = value`` (or ``R(Z) = 0, g(Z) = 0``).

    Parameters
    ----------
    disc : Discretization
        Provides ``residual`` and ``jacobian``.
    Z : ndarray
        Initial guess.
    border : ndarray or callable
        Row of the extra linear equation; or a callable ``Z -> (g, dg/dZ)`` for a nonlinear
        extra equation ``g(Z) = 0`` (e.g. the energy match of seed 003 §3.3).
    value : float, optional
        Right-hand side of a linear extra equation; default ``border . Z`` (keep the
        guess's position).  Ignored with a callable ``border``.
    xtol : float
        Stop when the relative update ``update_size(dZ, Z) <= xtol``; by quadratic
        convergence the remaining error is then of order ``xtol**2``.
    update_size : callable, optional
        ``(dZ, Z) -> float``, the relative size of an update; default
        ``|dZ|_2 / |Z|_2``.  (A per-variable measure asks every variable to converge, not
        only the largest.)
    what : str
        Names the solve in error messages.
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
        return _correct(disc, Z, _extra_equation(border, value, Z), counters, xtol, max_iter,
                        divergence_factor, noise_floor, update_size or _relative_update, what)


def _relative_update(dZ, Z):
    return np.linalg.norm(dZ) / max(np.linalg.norm(Z), 1e-300)


def _extra_equation(border, value, Z):
    """The extra equation as a callable ``Z -> (g, dg/dZ)``."""
    if callable(border):
        return border
    border = np.asarray(border, dtype=float)
    if value is None:
        value = float(border @ np.asarray(Z, dtype=float))
    return lambda Z: (float(border @ Z) - value, border)


def _correct(disc, Z, extra, counters, xtol, max_iter, divergence_factor, noise_floor, update_size, what):
    Z = np.array(Z, dtype=float)
    if noise_floor is None:
        noise_floor = float(disc.noise_floor)
    first = None
    last = np.inf
    for it in range(1, max_iter + 1):
        R = disc.residual(Z)
        if counters is not None:
            counters.residual_evaluations += 1
        g, row = extra(Z)
        _check_finite(np.append(R, g))
        lu, _ = factor_jacobian(disc, Z, row, counters)
        dZ = lu.solve(np.append(-R, -g))
        del lu
        Z = Z + dZ
        err = float(update_size(dZ, Z))
        if first is None:
            first = err
        elif not err <= divergence_factor * max(first, 1e-300):
            raise ConvergenceError(f"{what} diverges (relative update {err:.3g} after {it} iterations, "
                                   f"lam = {Z[-1]:.6g})")
        if err <= xtol:
            return Z, it
        # rounding-noise floor: a small update that no longer halves
        if err <= noise_floor and err > 0.5 * last:
            return Z, it
        last = err
    raise ConvergenceError(f"{what} did not converge in {max_iter} iterations "
                           f"(last relative update {err:.3g}, |Z| = {np.linalg.norm(Z):.3g}, lam = {Z[-1]:.6g})")


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

