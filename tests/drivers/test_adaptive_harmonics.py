"""The adaptive harmonic count (drivers/_accuracy.py, issue 26 item 2).

The tanh x exp belt (examples/tanh_exp_belt.py) from its first Hopf point with no harmonic
count: the branch chooses one for the default tolerance (1e-6 relative on the orbit), its
estimates meet it, and its periods agree with simple shooting on the original ODE (solve_ivp,
rtol 1e-12; an independent method) to 1e-6 at points across the branch, where the fixed
H = 30 of before misses that somewhere.  A given harmonic count is kept as is.
"""
import numpy as np
import pytest

from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._accuracy import HARMONICS_FIRST, error_of
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.drivers._orbits import find_periodic_orbit


@pytest.fixture(scope="module")
def tanh_exp():
    return load_model("examples/tanh_exp_belt.py", continuation="vb")


def _shooting_period_errors(model, br, count=6):
    disc = br.discretization
    ends = np.unique(br.step_ends)[1:-1]          # not the ends next to the Hopf points
    out = []
    for i in ends[np.linspace(0, len(ends) - 1, count).astype(int)]:
        Z = br.solutions[i]
        _, x = disc.samples(Z, 512)
        T = 2 * np.pi / disc.unpack(Z)["omega"]
        k = int(np.argmax(x[0]))                   # shooting's phase: an extremum of the first state
        orbit = find_periodic_orbit(model, float(Z[-1]), x[:, k], T)
        out.append(abs(T / orbit.T - 1))
    return np.array(out)


def test_default_chooses_harmonics_that_meet_the_tolerance(tanh_exp):
    _, br = run_continuation(tanh_exp, 0.1, 1.5, start="hopf", progress=False, echo=lambda *a: None,
                             options=dict(stability=False, branch_points=False))
    search = br.provenance["adaptive_harmonics"]
    assert search["tried"][0]["harmonics"] == HARMONICS_FIRST
    assert br.discretization.H > HARMONICS_FIRST          # the stick-slip cycles need more
    assert np.all(br.accuracy["harmonics"] == br.discretization.H)
    assert np.nanmax(error_of(br.accuracy)) <= 1e-6
    assert np.max(_shooting_period_errors(tanh_exp, br)) <= 1e-6


def test_fixed_harmonics_are_kept(tanh_exp):
    _, br = run_continuation(tanh_exp, 0.1, 1.5, start="hopf", harmonics=30, progress=False,
                             echo=lambda *a: None, options=dict(stability=False, branch_points=False))
    assert br.discretization.H == 30 and "adaptive_harmonics" not in br.provenance
    # the estimate says what the fixed count misses
    assert np.nanmax(error_of(br.accuracy)) > 1e-6
