"""Periodic orbits at a fixed parameter, corrected by the one Newton (``engine.correct``).

:func:`find_periodic_orbit` is simple shooting: Newton on the shooting discretization at
fixed ``lam`` (the border ``lam = const``) with a backtracking line search on the scaled
defect, which lets a rough guess from a simulation converge
(:func:`periodic_orbit_from_simulation`); :func:`locate_period_doubling` and
:func:`switch_period_doubling` compose it with Brent's method and a flip eigenvector.
:func:`solve_collocation` is Newton's method on a collocation system at fixed ``lam`` (the
sparse bordered LU and a per-variable convergence test); :func:`collocation_orbit` starts
it from a shooting orbit.
"""
from __future__ import annotations

import numpy as np
import scipy

from .._roots import bracketed_root
from ..analysis._stability import PeriodDoublingPoint
from ..discretizations._collocation import CollocationDiscretization
from ..discretizations._shooting import (
    PeriodicOrbit,
    ShootingDiscretization,
    _check_options,
    converged_orbit,
    forcing_period,
)
from ..engine._newton import correct
from ..errors import ConvergenceError, InputError
from ..model._interface import Model

__all__ = ["find_periodic_orbit", "periodic_orbit_from_simulation", "locate_period_doubling",
           "switch_period_doubling", "solve_collocation", "collocation_orbit"]

# Trial steps of the shooting Newton's line search (1 down to 1/128 of Newton's): a step
# 1/128 of Newton's that still does not decrease the defect means the guess is not in the
# orbit's basin.
_SHOOTING_TRIALS = 8


def find_periodic_orbit(model: Model, lam: float, x0, T: float | None = None, *, rtol: float = 1e-12,
                        atol: float = 1e-14, method: str = "LSODA", max_iter: int = 30, tol: float = 1e-10,
                        phase_state: int = 0, periods: int = 1) -> PeriodicOrbit:
    """Find a periodic orbit of ``x' = f(x, t; p)`` by simple shooting (Newton on ``x0`` and ``T``).

    Newton's method is ``engine.correct`` on :class:`ShootingDiscretization` with the border
    ``lam = const`` and a backtracking line search (steps 1 down to 1/128 of Newton's) on
    the scaled defect (:meth:`ShootingDiscretization.scaled_defect`).

    Parameters
    ----------
    model : Model
        Model (generated-model interface); only ``rhs`` and ``jac`` are used.
    lam : float
        Value of the continuation parameter.
    x0 : array_like, shape (n,)
        Initial guess of the state at ``t = 0``.
    T : float, optional
        Initial guess of the period (autonomous models, required).  For forced models the
        period is ``2 pi / w`` of the forcing frequency; ``T`` is then ignored.
    rtol, atol : float
        Tolerances of ``solve_ivp``.
    method : str
        ``solve_ivp`` method; ``"LSODA"`` (default, automatic stiffness switching),
        ``"Radau"`` and ``"BDF"`` use ``model.jac``; ``"DOP853"`` for non-stiff models.
    max_iter : int
        Maximum Newton iterations.
    tol : float
        Convergence when a full Newton correction is below ``tol`` relative to the state
        scale (``max_t |x_i(t)|``) and to ``T``, or (from the second iteration) when the
        scaled defect is below ``100 rtol``, the integration-noise floor.
    phase_state : int
        Autonomous models: the phase condition ``f_k(x0) = 0`` with ``k = phase_state``.
    periods : int
        Forced models: the orbit's period is ``periods`` forcing periods (2 after a period
        doubling).  Autonomous models give the period through ``T``.

    Returns
    -------
    PeriodicOrbit

    Raises
    ------
    InputError
        Bad option or initial guess shape.
    ConvergenceError
        Newton did not converge in ``max_iter`` iterations, no damped step decreased the
        defect, or the integration failed.
    """
    _check_options(method, rtol, atol, max_iter, tol)
    x = np.array(x0, dtype=float).ravel()
    if x.shape != (model.n,):
        raise InputError(f"x0 must have the {model.n} states {model.states}, got shape {np.shape(x0)}")
    disc = ShootingDiscretization(model, rtol=rtol, atol=atol, method=method, phase_state=phase_state,
                                  periods=periods, sensitivity=False)
    if model.forced:
        Z0 = np.append(x, lam)
    else:
        if T is None or not np.isfinite(T) or T <= 0:
            raise InputError(f"T={T}: an autonomous model needs a positive initial guess of the period")
        Z0 = np.concatenate([x, [T, lam]])
    border = np.zeros(disc.size)
    border[-1] = 1.0
    Z, it = correct(disc, Z0, border, float(lam), xtol=tol, max_iter=int(max_iter), divergence_factor=np.inf,
                    noise_floor=0.0, update_size=disc.scaled_update, what=f"shooting Newton at lam={lam}",
                    line_search=_SHOOTING_TRIALS, merit=lambda R, Z: disc.scaled_defect(Z),
                    merit_floor=disc.noise_floor)
    return converged_orbit(model, lam, Z[: model.n], disc.unpack(Z)["T"], iterations=it, tol=tol,
                           phase_state=disc.phase_state, **disc.opts)


def periodic_orbit_from_simulation(model: Model, lam: float, x_init, t_transient: float, *,
                                   phase_state: int = 0, **options) -> PeriodicOrbit:
    """Integrate to an attracting cycle, then refine it by shooting.

    Forced models: the transient covers a whole number of forcing periods and its end state
    is the guess of ``x0``.  Autonomous models: the transient is integrated over
    ``[0, t_transient]`` (LSODA, ``rtol=1e-9``) with an event at the maxima of state
    ``phase_state`` (``f_k`` crossing zero downwards); the last two maxima give the initial
    guesses of ``x0`` and ``T`` for :func:`find_periodic_orbit`.

    Parameters
    ----------
    model : Model
    lam : float
    x_init : array_like, shape (n,)
        Start of the transient (e.g. a point near an unstable equilibrium).
    t_transient : float
        Length of the transient; must contain many periods.
    phase_state : int
        State whose maxima define the section.
    **options
        Passed to :func:`find_periodic_orbit`.

    Raises
    ------
    ConvergenceError
        Fewer than two maxima in the transient (no oscillation, or ``t_transient`` too short).
    """
    n, k = model.n, int(phase_state)
    x_init = np.array(x_init, dtype=float).ravel()
    if x_init.shape != (n,):
        raise InputError(f"x_init must have the {n} states {model.states}, got shape {x_init.shape}")
    p = model.param_vector(lam)
    fun = lambda t, x: model.rhs(t, x, params=p)          # noqa: E731
    jac = lambda t, x: model.jac(t, x, params=p)          # noqa: E731
    if model.forced:
        T = forcing_period(model, lam)
        t_end = T * max(1, round(float(t_transient) / T))    # whole forcing periods: phase 0
        sol = scipy.integrate.solve_ivp(fun, (0.0, t_end), x_init, method="LSODA", jac=jac, rtol=1e-9, atol=1e-12)
        if sol.status != 0:
            raise ConvergenceError(f"transient integration failed at lam={lam}: {sol.message}")
        return find_periodic_orbit(model, lam, sol.y[:, -1], None, **options)

    def ev(t, x):
        return model.rhs(t, x, params=p)[k]
    ev.direction = -1
    sol = scipy.integrate.solve_ivp(fun, (0.0, float(t_transient)), x_init, method="LSODA", jac=jac, rtol=1e-9, atol=1e-12,
                    events=ev)
    te, ye = sol.t_events[0], sol.y_events[0]
    if len(te) < 2:
        raise ConvergenceError(f"no sustained oscillation of {model.states[k]} in t_transient="
                               f"{t_transient} at lam={lam}; lengthen the transient or start elsewhere")
    return find_periodic_orbit(model, lam, ye[-1], te[-1] - te[-2], phase_state=k, **options)


def locate_period_doubling(model: Model, lam_a: float, lam_b: float, x0, T: float | None = None, *,
                           xtol: float = 1e-12, **shooting) -> PeriodDoublingPoint:
    """Locate a period doubling (a multiplier through -1) between two parameter values.

    Orbits are found by shooting (warm-started from the nearest orbit already computed) and
    the test function ``min Re(multipliers) + 1`` is zeroed by Brent's method; it is
    continuous also where the multiplier comes from a complex pair that met on the negative
    real axis.

    Parameters
    ----------
    model : Model
    lam_a, lam_b : float
        Bracket: the test function must change sign between them.
    x0, T :
        Guess of the orbit at ``lam_a`` (``T`` for autonomous models only).
    xtol : float
        Absolute tolerance on ``lam``.
    **shooting
        Options of :func:`find_periodic_orbit`.

    Returns
    -------
    PeriodDoublingPoint
        ``lam``, ``orbit`` (the period-1 orbit there), ``multiplier`` (closest to -1) and
        ``eigenvector`` (its real unit eigenvector of the monodromy).
    """
    known = {}

    def orbit_at(lam):
        if lam not in known:
            if known:
                near = known[min(known, key=lambda l: abs(l - lam))]
                guess, T_guess = near.x0, near.T
            else:
                guess, T_guess = x0, T
            known[lam] = find_periodic_orbit(model, lam, guess, None if model.forced else T_guess, **shooting)
        return known[lam]

    def test(lam):
        return float(np.min(orbit_at(lam).multipliers.real) + 1)

    fa, fb = test(lam_a), test(lam_b)
    if fa * fb > 0:
        raise InputError(f"no period doubling between lam={lam_a} and lam={lam_b}: min Re(multiplier) + 1 is "
                         f"{fa:.3g} and {fb:.3g} (same sign); widen or move the bracket")
    lam = bracketed_root(test, lam_a, lam_b, xtol=xtol, rtol=4 * np.finfo(float).eps)
    orbit = orbit_at(lam)
    w, V = np.linalg.eig(orbit.monodromy)
    k = int(np.argmin(np.abs(w + 1)))
    vec = V[:, k].real
    return PeriodDoublingPoint(lam=float(lam), orbit=orbit, multiplier=complex(w[k]),
                               eigenvector=vec / np.linalg.norm(vec), status="located",
                               message=f"multiplier {complex(w[k]):.6g} at lam = {lam:.12g}")


def switch_period_doubling(model: Model, pd: PeriodDoublingPoint, delta: float, amplitude: float, **shooting):
    """Orbit of the period-doubled branch at ``lam = pd["lam"] + delta`` by shooting.

    The guess is the period-1 orbit's start plus ``+-amplitude`` times the eigenvector of
    the multiplier -1, over two base periods.  A result that is the period-1 orbit again
    (``|x(T_base) - x0|`` at the integration-noise level) is rejected.

    Parameters
    ----------
    model : Model
    pd : PeriodDoublingPoint
        Result of :func:`locate_period_doubling`.
    delta : float
        Parameter offset; its sign must point to the side where the doubled orbit exists
        (the side where the period-1 orbit is unstable for a supercritical flip).
    amplitude : float
        Size of the initial displacement along the eigenvector.
    **shooting
        Options of :func:`find_periodic_orbit`.

    Returns
    -------
    PeriodicOrbit
        Its period is twice the base one (``omega`` half the base angular frequency).

    Raises
    ------
    ConvergenceError
        Both signs of the displacement converge back to the period-1 orbit or fail.
    """
    base = pd.orbit
    lam = pd.lam + float(delta)
    last = None
    for sign in (1.0, -1.0):
        guess = base.x0 + sign * float(amplitude) * pd.eigenvector
        try:
            if model.forced:
                orbit = find_periodic_orbit(model, lam, guess, periods=2, **shooting)
            else:
                orbit = find_periodic_orbit(model, lam, guess, 2 * base.T, **shooting)
        except ConvergenceError as exc:
            last = exc
            continue
        half = orbit.at([orbit.T / 2])[:, 0]
        scale = np.maximum(np.abs(orbit.samples(16)).max(axis=1), np.finfo(float).tiny)
        if np.max(np.abs(half - orbit.x0) / scale) > 1e-6:
            return orbit
        last = ConvergenceError("converged back to the period-1 orbit")
    raise ConvergenceError(f"no period-doubled orbit at lam={lam}: {last}; try the other sign of delta "
                           "or another amplitude")




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
