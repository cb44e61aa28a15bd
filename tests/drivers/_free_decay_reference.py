"""Independent reference for nonlinear modes of the friction damper (issue 25): the free decay.

The unforced ODE of ``examples/friction_damper.py`` (a NumPy copy in ``_damper_reference.py``,
never the generated code) is integrated with ``solve_ivp`` (DOP853, rtol 1e-11) from a state
on the nonlinear mode.  The decay is cut into cycles at the upward zero crossings of one
position (``solve_ivp`` events, located to the integrator's accuracy); on each cycle
``[t_k, t_k + T_k]`` the first harmonic of every position is the Fourier integral with the
cycle's own period (64-point Gauss-Legendre on the dense output)::

    c_i + i s_i = (2 / T_k) int x_i(t) exp(i 2 pi (t - t_k) / T_k) dt,     a_k^2 = sum_i M_ii (c_i^2 + s_i^2)

(the same modal amplitude as the EPMC normalization), at the cycle's mid-time.  The
instantaneous frequency is ``2 pi / T_k`` and the damping ratio ``D = -(d ln a / dt) / omega``
(``a ~ exp(-D omega t)``), ``d ln a / dt`` by central differences over the neighbouring cycles;
both are interpolated (cubic, in ``ln a``) at the amplitudes asked for.

What limits it (physics, not numerics): the decaying motion is not periodic; for a linear
oscillator the zero crossings give the damped frequency ``omega sqrt(1 - D^2)`` while the EPMC
gives ``omega``, and a changing ``D`` along the decay is averaged over a cycle: differences of
order ``D^2``.
"""
import numpy as np
import scipy.integrate
import scipy.interpolate

from ._damper_reference import ATOL, PARAMS, RTOL, _f

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(64)


def free_decay(y0, muN, t_end, position=2, params=None):
    """Cycles of the free decay from ``y0``: ``(a, omega, D)`` arrays, one entry per inner cycle
    (positions x1 = y[0], x2 = y[2], unit masses)."""
    p = dict(PARAMS, muN=muN, F0=0.0, **(params or {}))

    def crossing(t, y):
        return y[position]
    crossing.direction = 1.0
    sol = scipy.integrate.solve_ivp(lambda t, y: _f(y, t, p), (0.0, t_end), np.asarray(y0, dtype=float),
                                    method="DOP853", rtol=RTOL, atol=ATOL, dense_output=True, events=crossing)
    assert sol.success, sol.message
    t = sol.t_events[0]
    T = np.diff(t)
    a, mid = [], []
    for t0, Tk in zip(t[:-1], T):
        tau = t0 + 0.5 * Tk * (_NODES + 1)
        x = sol.sol(tau)[[0, 2]]
        e = np.exp(2j * np.pi * (tau - t0) / Tk)
        X = (2 / Tk) * (0.5 * Tk) * (x * e) @ _WEIGHTS
        a.append(np.sqrt(np.sum(np.abs(X) ** 2)))
        mid.append(t0 + 0.5 * Tk)
    a, mid, omega = np.array(a), np.array(mid), 2 * np.pi / T
    rate = -(np.log(a[2:]) - np.log(a[:-2])) / (mid[2:] - mid[:-2])
    return a[1:-1], omega[1:-1], rate / omega[1:-1]


def at_amplitudes(a, omega, D, targets):
    """``omega`` and ``D`` of the decay interpolated at the modal amplitudes ``targets``."""
    order = np.argsort(a)
    x = np.log(a[order])
    w = scipy.interpolate.CubicSpline(x, omega[order])(np.log(targets))
    d = scipy.interpolate.CubicSpline(x, D[order])(np.log(targets))
    return w, d
