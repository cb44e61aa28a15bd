"""Helpers for the seed 004 Table 1 and Table 4 reproductions (``004_*.txt`` §2.1, §3).

Seed 004 §2.1: the smoothed periodic solution of eqs. (2), (4) and the exact stick-slip
cycle of eqs. (2)-(3); §3: the drill string of eqs. (16)-(18) and its exact cycle of
eqs. (16)-(17).  All cycles are sampled from the maximum of the first state, for the error
``e`` of eq. (5) / (19) (:func:`frictionkit.runtime.nonsmooth.orbit_error`).
"""
from __future__ import annotations

from frictionkit.runtime import Model, ShootingDiscretization
from frictionkit.runtime.engine import correct
from frictionkit.runtime.errors import ConvergenceError, InputError
import numpy as np

__all__ = ["seed004_exact_cycle", "seed004_smoothed_cycle", "seed004_cycle", "aft_cycle_from_max",
           "aft_from_max", "settled_cycle", "DRILL_ZETA", "DRILL_THETA", "drill_exact_cycle",
           "drill_exact_period"]

DRILL_ZETA, DRILL_THETA = 0.05, 4.2          # seed 004 §3, after eq. (15)


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
    if not eps > 0:
        raise InputError(f"eps={eps!r} must be > 0")
    P, X, V = exact if exact is not None else seed004_exact_cycle(vdr, gamma, n_samples)
    model = load_model("vrande1", continuation="Vdr", backend="numpy", eps=eps, gamma=gamma)
    if eps <= 1e4:
        T0, _, sample = settled_cycle(model, vdr, [X[0], V[0]], 3 * P)
        x0 = sample(1)[:, 0]
    else:
        x0, T0 = np.array([X[0], V[0]]), P
    method = "LSODA"
    # LSODA (stiff BDF mode) throughout; rtol 1e-10 above eps = 1e4, where the slope 2 eps / pi
    # of the law makes 1e-11 needlessly costly (measured: eps = 1e6, 27 s at 1e-10)
    rtol = 1e-11 if eps <= 1e4 else 1e-10
    return (model,) + seed004_smoothed_cycle(model, vdr, x0, T0, n_samples=n_samples, method=method, rtol=rtol,
                                             atol=rtol * 1e-2)


def settled_cycle(model: Model, lam: float, x0, duration: float, *, rtol: float = 1e-10,
                  atol: float = 1e-12):
    """The last full cycle of a transient of the original ODE, between maxima of the first state.

    Integrates ``x' = f(x, lam)`` from ``x0`` over ``duration`` (scipy LSODA with the model's
    exact Jacobian) and detects the maxima of ``x_0`` as the downward zero crossings of
    ``x_0' = x_1`` (a second-order system written in first-order form).

    Returns
    -------
    period, previous_period : float
        The last two intervals between maxima (their ratio says whether the cycle settled).
    sample : callable
        ``sample(n)`` -> ndarray (n_states, n): the states at ``t_max + i period / n``.
    """
    from scipy.integrate import solve_ivp

    def xmax(t, z):
        return z[1]
    xmax.direction = -1
    sol = solve_ivp(lambda t, z: model.rhs(t, z, lam), (0.0, float(duration)), np.asarray(x0, dtype=float),
                    method="LSODA", jac=lambda t, z: model.jac(t, z, lam), rtol=rtol, atol=atol,
                    events=xmax, dense_output=True)
    te = sol.t_events[0]
    if len(te) < 3:
        raise ConvergenceError(f"{model.continuation} = {lam:g}: fewer than three maxima of the first state "
                               f"within t = {duration:g}; integrate longer")
    T = te[-1] - te[-2]
    return T, te[-2] - te[-3], lambda n: sol.sol(te[-2] + T * np.arange(int(n)) / int(n))


def aft_from_max(disc, Z, n_samples: int = 200):
    """An AFT harmonic-balance solution sampled from the maximum of its first state.

    ``theta_0``, the maximum of the first state's Fourier series, is found on a grid and
    refined by Newton on the series' derivative; the states are evaluated at
    ``theta_0 + 2 pi i / n_samples``.

    Returns
    -------
    period : float
    X, V : ndarray (n_samples,)
        The first two states.
    """
    U, omega, _ = disc.split(Z)
    H = (U.shape[1] - 1) // 2
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


def aft_cycle_from_max(model: Model, lam: float, X, V, period: float, harmonics: int, n_samples: int = 200):
    """AFT harmonic balance of the original ODE from a sampled orbit, resampled from the max of x.

    ``X, V`` sample one period uniformly (more than ``2 * harmonics`` samples); the AFT
    solution (Newton at fixed ``lam``) is evaluated from the maximum of its first state
    (:func:`aft_from_max`).

    Returns
    -------
    period : float
    X, V : ndarray (n_samples,)
    """
    from frictionkit.runtime import periodic_start_from_orbit
    d, Z = periodic_start_from_orbit(model, lam, np.vstack([X, V]), period, int(harmonics), discretization="aft")
    return aft_from_max(d, Z, n_samples)


def drill_exact_cycle(eta: float = 4.0, n_samples: int = 200):
    """Exact stick-slip cycle of the drill string, seed 004 eqs. (16)-(17), from the maximum of psi.

    Eqs. (16)-(17) are a belt chain with ``x = psi + theta``, normal force ``theta``,
    ``mu_k = 1``, ``mu_s = 2`` (then ``T* = theta mu - theta`` lies in ``[-3 theta, theta]``
    when stuck, 0 in forward slip), integrated event by event
    (:func:`frictionkit.runtime.nonsmooth.one_mass_cycle`).

    Returns
    -------
    period : float
    psi, dpsi : ndarray (n_samples,)
        At ``tau = i P / N`` from the maximum of psi.
    """
    from frictionkit.runtime.nonsmooth import BeltChain, one_mass_cycle
    chain = BeltChain([1.0], [[2 * DRILL_ZETA]], [[1.0]], [DRILL_THETA], [2.0], [lambda s: 1.0], eta)
    P, _, x, v = one_mass_cycle(chain, n_samples=n_samples, start="xmax")
    return P, x - DRILL_THETA, v


def drill_exact_period(eta: float) -> float:
    """Closed form of the period of the exact stick-slip cycle of seed 004 eqs. (16)-(17).

    Slip starts at ``psi0 = theta - 2 zeta eta`` with ``psi' = eta`` (``T*`` reaches
    ``theta``), the free damped oscillation runs until ``psi' = eta`` again, then psi grows at
    rate ``eta`` while stuck back to ``psi0``.
    """
    from scipy.optimize import brentq
    zeta, theta = DRILL_ZETA, DRILL_THETA
    wd = np.sqrt(1 - zeta**2)
    A = theta - 2 * zeta * eta
    B = (eta + zeta * A) / wd

    def dpsi(t):
        return np.exp(-zeta * t) * ((-zeta * A + wd * B) * np.cos(wd * t) - (zeta * B + wd * A) * np.sin(wd * t))
    grid = np.linspace(1e-9, 2 * np.pi / wd, 4001)
    g = dpsi(grid) - eta
    i = np.flatnonzero((g[:-1] < 0) & (g[1:] >= 0))[0]
    t1 = brentq(lambda t: dpsi(t) - eta, grid[i], grid[i + 1], xtol=1e-15)
    psi1 = np.exp(-zeta * t1) * (A * np.cos(wd * t1) + B * np.sin(wd * t1))
    if not 2 * zeta * eta + psi1 > -3 * theta:       # sticking is admissible (lower bound of eq. 17)
        raise InputError(f"eta = {eta:g}: the exact cycle does not stick (eq. 17); choose a smaller eta")
    return t1 + (A - psi1) / eta
