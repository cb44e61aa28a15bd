"""Shared, cached reference orbits for the stability tests (computed by shooting)."""
from functools import lru_cache

from frictionkit.runtime._model import Model
from frictionkit.runtime._shooting import periodic_orbit_from_simulation
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
