"""First points of forced periodic responses, with no equilibrium (issue 25).

A forced model ``x' = f(x, t; p)`` (``Model.forced``: the forcing ``cos(w t)``, ``sin(w t)``
enters additively) has no equilibria; its harmonic balance takes the time origin at the forcing
phase 0 (``theta = w t``, no phase condition).  Two starts, both sampled from that phase:

* :func:`linear_response` -- the harmonics of the response of the linearization at a state
  ``x_lin`` (default 0): with ``A = df/dx(x_lin)`` and ``b(t) = f(x_lin, t)`` sampled over one
  forcing period, the harmonic ``k`` of ``x' = A (x - x_lin) + b(t)`` solves
  ``(i k w I - A) X_k = B_k`` (complex amplitudes ``X_k = c_k - i s_k``) and the mean
  ``-A (X_0 - x_lin) = B_0`` (least squares when ``A`` is singular, e.g. a free rigid-body
  mode).  Far from resonance, or where the friction law is nearly linear (small velocities),
  this is a good Newton guess.
* :func:`forced_period_samples` -- a time simulation (scipy LSODA with the model's exact
  Jacobian) by chunks of whole forcing periods until the state at the forcing phase 0 repeats,
  then the states on a uniform grid of the next period, from that phase.

Both return what the periodic starts of ``_branches.py`` turn into unknowns of a harmonic
balance (states -> aux -> FFT) before a Newton correction at fixed parameter.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import scipy

from ..errors import ConvergenceError, InputError

__all__ = ["forcing_frequency", "check_forced", "linear_response", "forced_period_samples"]


def check_forced(model, what: str):
    """Refuse an autonomous model for a job that needs a forcing (``what`` names the job)."""
    if not model.forced:
        raise InputError(
            f"model {model.name!r} is autonomous (no m.forcing(w) in its declaration): it has no {what}. "
            "Declare a forcing with m.forcing(w) and cos(w*m.t) in an equation, or compute its "
            "self-excited orbits with `frictionkit continue MODEL --param P --start A --stop B --from-hopf 1` "
            "(periodic_start_from_hopf, periodic_branch)")


def forcing_frequency(model, lam: float) -> float:
    """The forcing's angular frequency ``w`` at ``lam`` (``lam`` itself when it is continued),
    checked: ``w > 0`` and finite, else an :class:`InputError` that says what to set."""
    name = model.forcing_frequency
    w = float(lam) if name == model.continuation else float(model.value(name))
    if not (np.isfinite(w) and w > 0):
        where = (f"the range of {name}" if name == model.continuation else f"--set {name}=VALUE")
        raise InputError(f"forcing frequency {name} = {w:g}: it must be a finite angular frequency > 0 "
                         f"(one forcing period is 2 pi / {name}); choose {where} above 0")
    return w


def linear_response(model, lam: float, n_samples: int, harmonics: int, x_lin=None):
    """States on ``n_samples`` points of one forcing period (from phase 0) of the linear
    response about ``x_lin`` (module docstring), truncated to ``harmonics`` harmonics.

    Returns
    -------
    x : ndarray (n, n_samples)
    omega : float
        The forcing frequency.
    """
    w = forcing_frequency(model, lam)
    n = model.n
    x_lin = np.zeros(n) if x_lin is None else np.asarray(x_lin, dtype=float).reshape(n)
    theta = 2 * np.pi * np.arange(n_samples) / n_samples
    t = theta / w
    b = np.asarray(model.rhs(t, np.repeat(x_lin[:, None], n_samples, axis=1), lam), dtype=float)
    A = np.asarray(model.jac(0.0, x_lin, lam), dtype=float)
    B = np.fft.rfft(b, axis=1) / n_samples                     # B[:, k] = (c_k - i s_k) / 2
    x = np.zeros((n, n_samples))
    x += (x_lin + np.linalg.lstsq(-A, B[:, 0].real, rcond=None)[0])[:, None]
    eye = np.eye(n)
    for k in range(1, min(int(harmonics), n_samples // 2 - 1) + 1):
        try:
            X = np.linalg.solve(1j * k * w * eye - A, 2 * B[:, k])
        except np.linalg.LinAlgError:
            raise InputError(f"the linearization at {model.continuation} = {lam:g} resonates exactly with "
                             f"harmonic {k} of the forcing; start at another frequency") from None
        x += (X[:, None] * np.exp(1j * k * theta)[None, :]).real
    return x, w


#: beyond this size a state or a derivative of the simulation is not a physical response but a
#: parameter far outside the model's range: its square (which friction laws and recasts form)
#: is within a factor 1e8 of float64's overflow (1.8e308)
RUNAWAY = 1e150
#: right-hand side evaluations allowed with the time not advancing (by 1e-12 of the span):
#: LSODA retries a step that its error test keeps refusing for ever at t0 when a derivative
#: is of the order of 1e300 (no error, no progress); a real step needs a handful of them
STALL_EVALUATIONS = 20_000


class _Runaway(Exception):
    """The simulation left the numbers a model can mean (raised from the right-hand side)."""


def extreme_values(model, lam=None) -> list[str]:
    """``name = value (default d)`` of every parameter whose magnitude is beyond 1e100 or
    below 1e-100 (and not 0): the likely cause of a simulation or a solve that runs away."""
    defaults = dict(zip(model.parameters, dataclasses.replace(model, params={}).param_vector()))
    values = dict(zip(model.parameters, model.param_vector(lam)))
    return [f"{k} = {v:g} (default {defaults[k]:g})" for k, v in values.items()
            if v != 0 and not 1e-100 <= abs(v) <= 1e100]


def _guarded(model, lam, t_span):
    """The right-hand side at ``lam``, raising :class:`_Runaway` when a state or a derivative
    is not finite or beyond :data:`RUNAWAY`, or when the time stalls (:data:`STALL_EVALUATIONS`)."""
    t0, t1 = map(float, t_span)
    tiny = 1e-12 * abs(t1 - t0)
    state = {"t": t0, "count": 0}

    def f(t, x):
        r = model.rhs(t, x, lam)
        big = max(float(np.max(np.abs(x))), float(np.max(np.abs(r))))
        if not big <= RUNAWAY:                       # also NaN
            raise _Runaway(f"a state or its derivative reached {big:g} at t = {t:g} (the response runs away "
                           f"beyond {RUNAWAY:g})")
        if abs(t - t0) > abs(state["t"] - t0) + tiny:
            state["t"], state["count"] = t, 0
        else:
            state["count"] += 1
            if state["count"] > STALL_EVALUATIONS:
                raise _Runaway(f"the integrator made no progress from t = {state['t']:g} in {STALL_EVALUATIONS} "
                               "evaluations (steps far below the time scale)")
        return r
    return f


def _integrate(model, lam, x0, t_span, rtol, atol, dense=False):
    """The original ODE from ``x0`` over ``t_span`` at ``lam`` (the simulated starts, forced
    and autonomous alike).

    Bounded: a response that runs away (a state or a derivative beyond :data:`RUNAWAY`, or
    not finite) or an integrator that stalls ends with a :class:`ConvergenceError` naming the
    parameter values outside 1e-100..1e100, instead of running for ever."""
    # LSODA switches to BDF with the exact Jacobian when the regularized law makes the system
    # stiff (large n) and stays explicit (Adams) otherwise: far cheaper than Radau
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            sol = scipy.integrate.solve_ivp(_guarded(model, lam, t_span), t_span, x0, method="LSODA",
                                            jac=lambda t, x: model.jac(t, x, lam), rtol=rtol, atol=atol,
                                            dense_output=dense)
    except _Runaway as exc:
        extreme = extreme_values(model, lam)
        cause = (f"check the value{'s' if len(extreme) > 1 else ''} of {', '.join(extreme)}: choose "
                 f"{'them' if len(extreme) > 1 else 'it'} in the model's range (`frictionkit models {model.name}` "
                 "lists the defaults)" if extreme else
                 f"choose parameter values nearer the model's range or another {model.continuation}")
        raise ConvergenceError(f"the time simulation at {model.continuation} = {lam:g} was stopped: {exc}; "
                               f"{cause}") from None
    if not sol.success:
        raise ConvergenceError(f"time integration failed at {model.continuation} = {lam:g}: {sol.message}")
    return sol


def forced_period_samples(model, lam: float, n_samples: int, x0=None, max_periods: int = 5000,
                          rtol: float = 1e-9, atol: float = 1e-12, settle: float = 1e-6):
    """States on ``n_samples`` points of one forcing period, from the forcing phase 0, of the
    attractor reached from ``x0`` (default 0) by a time simulation.

    The simulation runs by chunks of 20 forcing periods until the state at the end of a chunk
    (a forcing phase 0) agrees with that of the previous one to ``settle`` relative to the
    orbit's size; then the next period is sampled.

    Returns
    -------
    x : ndarray (n, n_samples)
    omega : float
        The forcing frequency (the period sampled is ``2 pi / omega``).
    """
    w = forcing_frequency(model, lam)
    T = 2 * np.pi / w
    n = model.n
    x = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(n)
    t, chunk, last = 0.0, 20, None
    for _ in range(max(1, int(max_periods) // chunk)):
        sol = _integrate(model, lam, x, (t, t + chunk * T), rtol, atol)
        scale = float(np.max(np.abs(sol.y))) or 1.0
        t, x = t + chunk * T, sol.y[:, -1]
        if last is not None and np.max(np.abs(x - last)) <= settle * scale:
            break
        last = x
    else:
        raise ConvergenceError(f"the simulation did not settle on a periodic response within {max_periods} "
                               f"forcing periods at {model.continuation} = {lam:g} (a quasi-periodic or "
                               "chaotic response, or a subharmonic one)")
    sol = _integrate(model, lam, x, (t, t + T), rtol, atol, dense=True)
    return sol.sol(t + T * np.arange(n_samples) / n_samples), w

