"""Time simulation of any model's original ODE, and one-call validation of a periodic orbit.

The original first-order ODE ``x' = f(x, t; p)`` and its exact Jacobian come from the model
(generated code, DESIGN §4), so stiff integrators get the analytic Jacobian.  A periodic
orbit computed by HBM, collocation or shooting is validated by integrating one period from
its initial state and reporting the distance to where it started (issue 6 item 5).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy

from ..errors import ConvergenceError, InputError

__all__ = ["simulate", "check_orbit", "check_branch_point", "OrbitCheck"]


def simulate(model, x0, t_span, lam=None, *, method="Radau", rtol=1e-10, atol=1e-12, t_eval=None,
             dense_output=False, **kwargs):
    """Integrate the original ODE of ``model`` with ``scipy.integrate.solve_ivp``.

    Parameters
    ----------
    model : Model
    x0 : array_like (n,)
        Initial states, in ``model.states`` order.
    t_span : (float, float)
    lam : float, optional
        Value of the continuation parameter (default: the model's value).
    method : str
        Any ``solve_ivp`` method; implicit ones (Radau, BDF, LSODA) get the exact Jacobian.
    rtol, atol : float
        Tolerances (friction models are stiff: seed 000 §4.2 needed AbsTol 1e-14 for n = 10).

    Returns
    -------
    scipy OdeResult
    """
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (model.n,):
        raise InputError(f"x0 has shape {x0.shape}; model {model.name!r} has {model.n} states "
                         f"({', '.join(model.states)})")
    p = model.param_vector(lam)
    implicit = method in ("Radau", "BDF", "LSODA")
    sol = scipy.integrate.solve_ivp(lambda t, x: model.rhs(t, x, params=p), t_span, x0, method=method, rtol=rtol, atol=atol,
                    t_eval=t_eval, dense_output=dense_output,
                    **({"jac": lambda t, x: model.jac(t, x, params=p)} if implicit else {}), **kwargs)
    if sol.status < 0:
        raise ConvergenceError(f"time integration of {model.name!r} failed: {sol.message}")
    return sol


@dataclass(frozen=True)
class OrbitCheck:
    """Distance after one period between an orbit's start and the integrated state.

    ``distance`` is ``|x(T) - x(0)|``; ``relative`` divides it by the orbit's size
    (max over states of the peak-to-peak amplitude on the integrated period).
    """

    distance: float
    relative: float
    x0: np.ndarray
    x_end: np.ndarray
    period: float


def check_orbit(model, x0, period, lam=None, *, rtol=1e-11, atol=1e-13, method="Radau"):
    """Integrate one period from ``x0`` and report how far the state is from ``x0``.

    Parameters
    ----------
    model : Model
    x0 : array_like (n,)
        State of the orbit at t = 0 (for forced models, t = 0 of the forcing).
    period : float
    lam : float, optional

    Returns
    -------
    OrbitCheck
    """
    if not period > 0:
        raise InputError(f"period = {period} must be positive")
    sol = simulate(model, x0, (0.0, float(period)), lam, method=method, rtol=rtol, atol=atol,
                   dense_output=True)
    x_end = sol.y[:, -1]
    dist = float(np.linalg.norm(x_end - np.asarray(x0, dtype=float)))
    xs = sol.sol(np.linspace(0.0, period, 1001))
    size = float(np.max(np.ptp(xs, axis=1))) or 1.0
    return OrbitCheck(dist, dist / size, np.asarray(x0, dtype=float), x_end, float(period))


def check_branch_point(branch, model, index, **kwargs) -> OrbitCheck:
    """:func:`check_orbit` for point ``index`` of a periodic :class:`Branch` (HBM coefficients)."""
    if branch.kind != "periodic":
        raise InputError("check_branch_point needs a periodic branch")
    omega = float(branch.omega[index])
    _, x = branch.time_series(index, n_t=8)
    return check_orbit(model, x[:, 0], 2 * np.pi / omega, lam=float(branch.param[index]), **kwargs)
