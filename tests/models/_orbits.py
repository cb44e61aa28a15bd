"""Shared, cached reference orbits for the stability tests (computed by shooting)."""
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq

from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.drivers._orbits import find_periodic_orbit, periodic_orbit_from_simulation
from frictionkit.runtime.analysis._lyapunov import first_lyapunov
from tests.models import belt_handwritten, vdp_handwritten


def belt(n=10, FN=5.0):
    return Model(belt_handwritten, {"n": n, "FN": FN})


def vdp():
    return Model(vdp_handwritten)


@lru_cache(maxsize=None)
def belt_orbit(Vb, n=10, FN=5.0):
    """Stable belt cycle at ``Vb`` (seed 003: W1 = 0.5, W2 = 2.0 m/s with n = 10)."""
    return periodic_orbit_from_simulation(belt(n, FN), Vb, [0.0, 0.0], 1.0)


@lru_cache(maxsize=None)
def vdp_orbit(mu):
    return periodic_orbit_from_simulation(vdp(), mu, [0.1, 0.0], 60.0)


def belt_equilibrium(model, Vb):
    """Sliding equilibrium v = 0, y = FN mu_n(-Vb) / (M1 omega1^2) (seed 000 eq. (5))."""
    p = dict(zip(model.parameters, model.param_vector(Vb)))
    mu = float(model.contact_law(-Vb, model.param_vector(Vb)))
    return np.array([p["FN"] / (p["M1"] * p["omega1"] ** 2) * mu, 0.0])


def belt_trace(model, Vb):
    """tr df/dx at the equilibrium: zero at a Hopf point (2 zeta omega1 = FN/M1 mu_n'(-Vb))."""
    return np.trace(model.jac(0.0, belt_equilibrium(model, Vb), Vb))


@lru_cache(maxsize=None)
def belt_hopf_points(n=10, FN=5.0):
    """B1 and B3 of the Vb-continuation by brentq on the trace (seed 000 §4.2)."""
    m = belt(n, FN)
    return (brentq(lambda v: belt_trace(m, v), 0.05, 0.5, xtol=1e-14),
            brentq(lambda v: belt_trace(m, v), 2.0, 6.0, xtol=1e-14))


@lru_cache(maxsize=None)
def belt_orbit_near_hopf(which, dV, n=10, FN=5.0):
    """Shooting orbit at Vb = B_which + dV from the normal-form guess of the first Lyapunov
    coefficient; returns (orbit, predicted ptp of the states, l1)."""
    m = belt(n, FN)
    VH = belt_hopf_points(n, FN)[0 if which == 1 else 1]
    res = first_lyapunov(m, VH, belt_equilibrium(m, VH))
    h = 1e-6
    dre = (belt_trace(m, VH + h) - belt_trace(m, VH - h)) / (2 * h) / 2     # d Re(lambda) / d Vb
    r = np.sqrt(-dre * dV / (res["l1"] * res["omega0"]))
    q = res["q"]
    z = r * np.conj(q[0]) / abs(q[0])          # phase: y at an extremum at t = 0
    x0 = belt_equilibrium(m, VH + dV) + 2 * np.real(z * q)
    orbit = find_periodic_orbit(m, VH + dV, x0, 2 * np.pi / res["omega0"])
    return orbit, 4 * np.abs(q) * r, res["l1"]
