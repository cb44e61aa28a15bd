"""``AFTDiscretization.monodromy_gradient``: the reverse pass through the Magnus product that
gives ``left^H (dM/dU) right`` for all Fourier coefficients at once (what the PD and NS curves
need, ``analysis/_pd_ns_curves.py``), against central differences of ``monodromy`` itself.

The differences are an independent computation (monodromies of perturbed orbits, no adjoint);
with steps of 1e-7 of the coefficients' size their own truncation error is ~3e-8 of the largest
entry on the LuGre orbit (it scales like the step squared: 2.8e-6 at 1e-6, 2.8e-4 at 1e-5), so
the 1e-6 bound below is set by the differences, not by the adjoint.
"""
import numpy as np
import pytest

from frictionkit.runtime import (equilibrium_branch, load_model, periodic_branch, periodic_orbit_from_simulation,
                                 periodic_start_from_hopf, periodic_start_from_orbit)
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._interface import Model
from tests.models import duffing_handwritten
from tests.models.state_law_specs import lugre


def _differences(disc, Z, left, right, step=1e-7):
    out = np.empty(disc.n_coef, dtype=complex)
    for j in range(disc.n_coef):
        e = np.zeros(Z.size)
        e[j] = step * max(1.0, abs(Z[j]))
        out[j] = left.conj() @ ((disc.monodromy(Z + e) - disc.monodromy(Z - e)) @ right) / (2 * e[j])
    return out


def _lugre_stick_slip():
    """The LuGre belt's stick-slip orbit at vb ~ 1.3 (stiff bristle state), AFT H = 12."""
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 2.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 12)
    br = periodic_branch(disc, Z, 0.0, 1.3, d, options=dict(stability=False))
    return disc, br.solutions[-1]


def _forced_duffing():
    """The forced twin-well Duffing oscillator (time enters the Jacobian), AFT H = 8."""
    model = Model(duffing_handwritten, dict(k=-1.0, b=1.0, c=0.3, F=0.25))
    orbit = periodic_orbit_from_simulation(model, 1.2, [1.0, 0.0], 300.0)
    disc, Z = periodic_start_from_orbit(model, 1.2, orbit.at(orbit.times(64)), orbit.T, 8, discretization="aft")
    return disc, Z


@pytest.mark.parametrize("case", [_lugre_stick_slip, _forced_duffing], ids=["lugre", "forced-duffing"])
def test_adjoint_gradient_agrees_with_differences_of_the_monodromy(case):
    disc, Z = case()
    rng = np.random.default_rng(7)
    left = rng.normal(size=disc.n) + 1j * rng.normal(size=disc.n)
    right = rng.normal(size=disc.n) + 1j * rng.normal(size=disc.n)
    g = disc.monodromy_gradient(Z, left, right)
    ref = _differences(disc, Z, left, right)
    assert g.shape == (disc.n_coef,)
    assert np.max(np.abs(g - ref)) < 1e-6 * np.max(np.abs(ref))
    # a real pair of vectors gives the real gradient of one entry combination
    gr = disc.monodromy_gradient(Z, left.real, right.real)
    assert np.max(np.abs(gr.imag)) <= 1e-14 * np.max(np.abs(gr))


def test_steps_given_by_their_edges():
    """``intervals`` as the steps' edges (what the PD/NS curves freeze from the error-controlled
    monodromy): equal edges give the equal-step monodromy bit for bit, and the gradient on an
    uneven partition agrees with differences of the monodromy on that partition."""
    disc, Z = _lugre_stick_slip()
    N = 96
    np.testing.assert_array_equal(disc.monodromy(Z, intervals=np.arange(N + 1) / N), disc.monodromy(Z, intervals=N))
    rng = np.random.default_rng(3)
    edges = np.concatenate([[0.0], np.sort(rng.uniform(0, 1, 150)), [1.0]])
    left = rng.normal(size=disc.n) + 1j * rng.normal(size=disc.n)
    right = rng.normal(size=disc.n)
    g = disc.monodromy_gradient(Z, left, right, intervals=edges)
    ref = np.empty(disc.n_coef, dtype=complex)
    for j in range(disc.n_coef):
        e = np.zeros(Z.size)
        e[j] = 1e-7 * max(1.0, abs(Z[j]))
        ref[j] = left.conj() @ ((disc.monodromy(Z + e, intervals=edges) - disc.monodromy(Z - e, intervals=edges))
                                @ right) / (2 * e[j])
    assert np.max(np.abs(g - ref)) < 1e-6 * np.max(np.abs(ref))
    with pytest.raises(InputError, match="edges must increase from 0 to 1"):
        disc.monodromy(Z, intervals=np.array([0.0, 0.7, 0.5, 1.0]))
