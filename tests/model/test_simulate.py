"""One-call validation of a periodic orbit by time integration (issue 6 item 5)."""
import numpy as np
import pytest

from frictionkit.runtime import InputError, Model, load_model
from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.model._simulate import check_orbit, simulate
from tests.models import vdp_handwritten


def test_vdp_orbit_from_shooting_closes_and_a_perturbed_one_does_not():
    model = Model(vdp_handwritten, {})
    orbit = find_periodic_orbit(model, 1.0, [2.0, 0.0], 6.66)
    assert orbit.T == pytest.approx(6.663287, abs=1e-6)       # AUTO-07p value (issue 4)
    good = check_orbit(model, orbit.x0, orbit.T, lam=1.0)
    assert good.relative < 1e-8
    bad = check_orbit(model, orbit.x0 * 1.01, orbit.T, lam=1.0)
    assert bad.relative > 1e-4


def test_generated_belt_orbit_w1_closes():
    model = load_model("belt", continuation="Vb", n=10, FN=5)
    # transient to the attractor (LSODA: the tight-tolerance Radau default takes ~30 s here)
    sol = simulate(model, [0.0, 0.5], (0.0, 0.3), lam=0.5, method="LSODA", rtol=1e-8, atol=1e-10)
    orbit = find_periodic_orbit(model, 0.5, sol.y[:, -1], 2 * np.pi / 1200)
    check = check_orbit(model, orbit.x0, orbit.T, lam=0.5, rtol=1e-12, atol=1e-14)
    assert check.relative < 1e-7


def test_bad_inputs_are_named():
    model = Model(vdp_handwritten, {})
    with pytest.raises(InputError, match="x0 has shape"):
        simulate(model, [1.0, 2.0, 3.0], (0, 1))
    with pytest.raises(InputError, match="period"):
        check_orbit(model, [1.0, 0.0], -1.0)
