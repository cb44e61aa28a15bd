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
            update_size=None, what: str = "Newton correction", line_search: int = 0, merit=None,
            merit_floor: float = 0.0, keep_factorization: bool = False):
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
    line_search : int
        Number of trial steps ``s = 1, 1/2, ..., 2**(1 - line_search)`` of a backtracking
        line search on the merit; 0 (default) is off: full Newton steps, every other option
        as described.  With ``line_search > 0`` each step ``dZ`` is halved until
        ``merit(Z + s dZ) <= max(merit(Z), merit_floor)`` (a trial point whose residual
        cannot be evaluated, :class:`ConvergenceError`, counts as no decrease); the
        convergence tests apply to the accepted update ``s dZ``, and only after a full step
        (``s = 1``); no such step among the ``line_search`` trials raises
        :class:`ConvergenceError`.  This is what lets a rough guess, e.g. the end of a
        simulated transient for shooting (seed ``004_*.txt``), converge.
    merit : callable, optional
        ``(R, Z) -> float``, the size of the residual ``R = disc.residual(Z)`` that the line
        search decreases; default ``|R|_2``.  Only used with ``line_search > 0``.
    merit_floor : float
        With ``line_search > 0``: the merit level of the discretization's own noise (e.g.
        the integration tolerance of shooting).  A trial point at or below it is accepted,
        and from the second iteration a full step that lands below it also stops the
        iteration (near a fold or Hopf point the update itself is noise there and may not
        shrink).

    keep_factorization : bool
        Also return the last factorization (:func:`tangent_at` takes it: the start of a
        continuation needs its tangent, and the factorization of the last iteration serves).

    Returns
    -------
    Z : ndarray
        The corrected point.
    iterations : int
    lu : _Bordered
        With ``keep_factorization``: the LU of ``[J; b^T]`` at the last iterate before the
        final update (``b`` the extra equation's row; within one update of ``Z``), valid until
        the discretization's next factorization.

    Raises
    ------
    ConvergenceError
        If the iteration diverges, meets NaN, or does not converge in ``max_iter``.
    """
    search = _LineSearch(int(line_search), merit or _residual_norm, float(merit_floor))
    with _Workspace.scope(disc):
        Z, it, lu = _correct(disc, Z, _extra_equation(border, value, Z), counters, xtol, max_iter,
                             divergence_factor, noise_floor, update_size or _relative_update, what, search)
    return (Z, it, lu) if keep_factorization else (Z, it)


def _relative_update(dZ, Z):
    return np.linalg.norm(dZ) / max(np.linalg.norm(Z), 1e-300)


def _residual_norm(R, Z):
    return float(np.linalg.norm(R))


class _LineSearch:
    """Backtracking on ``merit`` (:func:`correct`, ``line_search``); ``halvings = 0`` is off."""

    def __init__(self, halvings, merit, floor):
        self.halvings, self.merit, self.floor = halvings, merit, floor

    def step(self, disc, Z, R, dZ, counters, what):
        """``(Z + s dZ, R there, s)`` for the first ``s = 1, 1/2, ...`` that does not raise the merit."""
        bound = max(self.merit(R, Z), self.floor)
        s = 1.0
        for _ in range(self.halvings):
            trial = Z + s * dZ
            try:
                R_trial = disc.residual(trial)
                if counters is not None:
                    counters.residual_evaluations += 1
                if self.merit(R_trial, trial) <= bound:
                    return trial, R_trial, s
            except ConvergenceError:    # e.g. a trial period <= 0 or a failed integration
                pass
            s /= 2
        raise ConvergenceError(f"{what} diverged: none of {self.halvings} trial steps (1 down to "
                               f"2^-{self.halvings - 1} of Newton's) decreases the residual (lam = {Z[-1]:.6g}); "
                               "try a better initial guess")


def _extra_equation(border, value, Z):
    """The extra equation as a callable ``Z -> (g, dg/dZ)``."""
    if callable(border):
        return border
    border = np.asarray(border, dtype=float)
    if value is None:
        value = float(border @ np.asarray(Z, dtype=float))
    return lambda Z: (float(border @ Z) - value, border)


def _correct(disc, Z, extra, counters, xtol, max_iter, divergence_factor, noise_floor, update_size, what,
             search):
    Z = np.array(Z, dtype=float)
    if noise_floor is None:
        noise_floor = float(disc.noise_floor)
    first = None
    last = np.inf
    R = None                    # the line search leaves the residual of the accepted point here
    for it in range(1, max_iter + 1):
        if R is None:
            R = disc.residual(Z)
            if counters is not None:
                counters.residual_evaluations += 1
        g, row = extra(Z)
        _check_finite(np.append(R, g))
        lu, _ = factor_jacobian(disc, Z, row, counters)
        dZ = lu.solve(np.append(-R, -g))
        if search.halvings:
            Z, R, s = search.step(disc, Z, R, dZ, counters, what)
            dZ = s * dZ
        else:
            Z, R, s = Z + dZ, None, 1.0
        err = float(update_size(dZ, Z))
        if first is None:
            first = err
        elif not err <= divergence_factor * max(first, 1e-300):
            raise ConvergenceError(f"{what} diverges (relative update {err:.3g} after {it} iterations, "
                                   f"lam = {Z[-1]:.6g})")
        if s < 1.0:             # a damped step is progress, not convergence
            last = err
            continue
        if err <= xtol or (search.halvings and it >= 2 and search.merit(R, Z) <= search.floor):
            return Z, it, lu
        # rounding-noise floor: a small update that no longer halves
        if err <= noise_floor and err > 0.5 * last:
            return Z, it, lu
        last = err
    raise ConvergenceError(f"{what} did not converge in {max_iter} iterations "
                           f"(last relative update {err:.3g}, |Z| = {np.linalg.norm(Z):.3g}, lam = {Z[-1]:.6g})")


def tangent_at(disc, Z, previous, counters: Counters | None = None, J=None, *, with_det_sign=False,
               lu=None):
    """Unit tangent of the branch at Z, oriented like ``previous`` (null vector of dR/dZ).

    With ``with_det_sign=True`` also returns the sign of ``det [J; t^T]`` for the returned
    tangent ``t`` (the branch-point test function), from the same LU: when ``J`` has rank
    ``m`` its rows span ``t``'s orthogonal complement, so
    ``det [J; b^T] = (b . t) det [J; t^T]`` for any border ``b``.  ``lu``: a factorization
    of ``[J; previous^T]`` already made at ``Z`` or within a Newton update of it (the last one
    of :func:`correct` with ``keep_factorization``): no new one.
    """
    rhs = np.zeros(disc.m + 1)
    rhs[-1] = 1.0
    with _Workspace.scope(disc):
        if lu is None and J is None:
            lu, _ = factor_jacobian(disc, Z, previous, counters)
        elif lu is None:
            lu = bordered_factor(J, previous, counters)
        t = lu.solve(rhs)
        sign = lu.det_sign() if with_det_sign else 0
    t = t / np.linalg.norm(t)
    if not with_det_sign:
        return t
    return t, sign * int(np.sign(np.asarray(previous, dtype=float) @ t))

