"""Helpers for the seed 004 Table 1 reproduction (``004_*.txt`` §2.1).

Seed 004 (``004_*.txt`` §2.1): the smoothed periodic solution of eqs. (2), (4) and the exact
stick-slip cycle of eqs. (2)-(3), both sampled from the maximum of X, for the error ``e`` of
eq. (5) (:func:`frictionkit.runtime.nonsmooth.orbit_error`).
"""
from __future__ import annotations

from frictionkit.runtime import Model, ShootingDiscretization
from frictionkit.runtime.engine import correct
from frictionkit.runtime.errors import ConvergenceError, InputError
import numpy as np

__all__ = ["seed004_exact_cycle", "seed004_smoothed_cycle", "seed004_cycle", "aft_cycle_from_max"]


def seed004_exact_cycle(vdr: float = 0.2, gamma: float = 3.0, n_samples: int = 200):
    """Exact stick-slip cycle of seed 004 eqs. (2)-(3), sampled from the maximum of X.

    ``X'' + X = F*``, ``|F*| <= 1`` in stick, ``F* = -sgn V / (1 + gamma |V|)`` in slip
    (event-driven integration, :func:`frictionkit.runtime.nonsmooth.one_mass_cycle`).

    Returns
    -------
    period : float
    X, V : ndarray (n_samples,)
        At ``tau = i P / N`` from the maximum of X.
    """
    from frictionkit.runtime.nonsmooth import BeltChain, one_mass_cycle
    chain = BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [1.0], [lambda s: 1.0 / (1.0 + gamma * s)], vdr)
    P, _, X, V = one_mass_cycle(chain, n_samples=n_samples, start="xmax")
    return P, X, V


def seed004_smoothed_cycle(model: Model, vdr: float, x_guess, T_guess: float, *, n_samples: int = 200,
                           method: str = "LSODA", rtol: float = 1e-11, atol: float = 1e-13):
    """Periodic solution of the smoothed model (seed 004 eqs. 2, 4) by shooting, from the max of X.

    The phase condition ``f_0(x0) = X'(0) = 0`` puts ``t = 0`` on an extremum of ``X``; a
    guess near the maximum (e.g. the exact cycle's start) selects it.  Samples at
    ``i P / N`` by a dense re-integration at the shooting tolerance.

    Returns
    -------
    period : float
    X, V : ndarray (n_samples,)
    info : dict
        ``x0``, ``T`` and the shooting ``residual``.
    """
    from scipy.integrate import solve_ivp
    sd = ShootingDiscretization(model, phase_state=0, rtol=rtol, atol=atol, method=method)
    Z = np.concatenate([np.asarray(x_guess, dtype=float), [T_guess, vdr]])
    e = np.zeros(sd.size)
    e[-1] = 1.0
    Z, _ = correct(sd, Z, e, vdr, max_iter=40)
    x0, T = Z[:2], float(Z[2])
    p = model.param_vector(vdr)
    sol = solve_ivp(lambda t, z: model.module.rhs(t, z, p), (0.0, T), x0, method=method,
                    jac=lambda t, z: model.module.jac(t, z, p), rtol=rtol, atol=atol,
                    t_eval=T * np.arange(int(n_samples)) / int(n_samples))
    if np.max(sol.y[0]) > x0[0] + 1e-8 * max(1.0, abs(x0[0])):
        raise ConvergenceError("the shooting start is not the maximum of X: give a guess near the maximum")
    return T, sol.y[0], sol.y[1], dict(x0=x0, T=T, residual=float(np.max(np.abs(sd.residual(Z)))))


def seed004_cycle(eps: float, vdr: float = 0.2, *, exact=None, n_samples: int = 200, gamma: float = 3.0):
    """Smoothed cycle of the zoo model ``vrande1`` (seed 004 eqs. 2, 4) at ``vdr``, from max X.

    Start: for ``eps <= 1e4`` a transient of three exact periods from the exact cycle's start
    (the smoothed cycle is attracting), then shooting; for larger ``eps`` shooting directly
    from the exact cycle, which is then close.  Integrator: LSODA with the model's Jacobian.

    Parameters
    ----------
    exact : tuple (P, X, V), optional
        The exact cycle (:func:`seed004_exact_cycle`), computed if omitted.

    Returns
    -------
    model : Model
    period : float
    X, V : ndarray (n_samples,)
    info : dict
    """
    from frictionkit.runtime import load_model
    from scipy.integrate import solve_ivp
    if not eps > 0:
        raise InputError(f"eps={eps!r} must be > 0")
    P, X, V = exact if exact is not None else seed004_exact_cycle(vdr, gamma, n_samples)
    model = load_model("vrande1", continuation="Vdr", backend="numpy", eps=eps, gamma=gamma)
    if eps <= 1e4:
        p = model.param_vector(vdr)

        def xmax(t, z):
            return z[1]
        xmax.direction = -1
        sol = solve_ivp(lambda t, z: model.module.rhs(t, z, p), (0, 3 * P), [X[0], V[0]], method="LSODA",
                        jac=lambda t, z: model.module.jac(t, z, p), rtol=1e-10, atol=1e-12, events=xmax)
        if len(sol.t_events[0]) < 2:
            raise ConvergenceError(f"eps={eps:g}: no cycle reached after three exact periods")
        x0, T0, method = sol.y_events[0][-1], sol.t_events[0][-1] - sol.t_events[0][-2], "LSODA"
    else:
        x0, T0, method = np.array([X[0], V[0]]), P, "LSODA"
    # LSODA (stiff BDF mode) throughout; rtol 1e-10 above eps = 1e4, where the slope 2 eps / pi
    # of the law makes 1e-11 needlessly costly (measured: eps = 1e6, 27 s at 1e-10)
    rtol = 1e-11 if eps <= 1e4 else 1e-10
    return (model,) + seed004_smoothed_cycle(model, vdr, x0, T0, n_samples=n_samples, method=method, rtol=rtol,
                                             atol=rtol * 1e-2)


def aft_cycle_from_max(model: Model, lam: float, X, V, period: float, harmonics: int, n_samples: int = 200):
    """AFT harmonic balance of the original ODE from a sampled orbit, resampled from the max of x.

    ``X, V`` sample one period uniformly (more than ``2 * harmonics`` samples); the AFT
    solution (Newton at fixed ``lam``) is evaluated at ``theta_0 + 2 pi i / n_samples`` with
    ``theta_0`` the maximum of its first state (Newton on the Fourier series' derivative).

    Returns
    -------
    period : float
    X, V : ndarray (n_samples,)
    """
    from frictionkit.runtime import periodic_start_from_orbit
    H = int(harmonics)
    d, Z = periodic_start_from_orbit(model, lam, np.vstack([X, V]), period, H, discretization="aft")
    U, omega, _ = d.split(Z)
    k = np.arange(1, H + 1)
    c, s = U[:2, 1::2], U[:2, 2::2]

    def series(theta):
        return U[:2, :1] + c @ np.cos(np.outer(k, theta)) + s @ np.sin(np.outer(k, theta))

    def d1(theta):       # d x_0 / d theta and its derivative
        return (np.sum(k * (-c[0] * np.sin(k * theta) + s[0] * np.cos(k * theta))),
                np.sum(-k * k * (c[0] * np.cos(k * theta) + s[0] * np.sin(k * theta))))

    th = np.linspace(0, 2 * np.pi, 16 * H, endpoint=False)
    t0 = th[np.argmax(series(th)[0])]
    for _ in range(30):
        g, dg = d1(t0)
        t0 -= g / dg
        if abs(g) < 1e-13:
            break
    z = series(t0 + 2 * np.pi * np.arange(int(n_samples)) / int(n_samples))
    return 2 * np.pi / omega, z[0], z[1]
