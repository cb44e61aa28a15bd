"""Seed 004 §2.2: the 2-DOF block-on-belt model (zoo ``vrande2``), fast checks.

Each number is compared with something independent of the code that produced it:

* the Hopf point of the sliding equilibrium (frictionkit's equilibrium continuation on the
  recast model) against the root of the spectral abscissa of the linearization of eq. (7)
  written by hand (``seeds.seed004_2dof.linearization``); the generated Jacobian against the same
  hand-written matrix;
* a period-1 orbit at moderate eps by harmonic balance on the recast model (derivative-
  bilinear atan rows) against shooting on the original ODE, frequency and amplitudes to 1e-8,
  and its Floquet multipliers by Hill's method against the shooting monodromy;
* the flip of the in-phase period-1 branch at Vdr = 0.141 (seed 004 Table 3, eps = 1e5): the
  monodromy multiplier of shooting orbits crosses -1 inside the printed digit
  [0.1405, 0.1415], and the return map of the Poincaré section X1' = 0 (plain integration,
  finite differences: no variational equation) gives the same multiplier.

The branches, all Table 3 entries and the figure are the example ``examples/seed004_2dof.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

from frictionkit.runtime import equilibrium_branch, load_model
from frictionkit.runtime.results._branch import trig_extrema
from frictionkit.runtime.drivers._branches import periodic_start_from_orbit
from frictionkit.runtime.engine._newton import correct
from examples.seeds.seed004_2dof import (attractor_on_section, hopf_by_hand, linearization, poincare_multipliers,
                                          section_points, to_section)
from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.errors import InputError


def test_hopf_point_of_the_equilibrium_matches_the_hand_linearization():
    model = load_model("vrande2", continuation="Vdr", backend="numpy")
    eq = equilibrium_branch(model, 0.3, 3e-4)
    hopf = eq.special_points("hopf")
    assert len(hopf) == 1
    ref = hopf_by_hand(1e-4, 1e-2)
    assert hopf[0].param == pytest.approx(ref["Vdr"], rel=1e-8)
    # both pairs cross together (F*' changes sign, eq. 7 has damping proportional to diag(1, beta)):
    # the frequencies are those of the undamped modes, 1 and sqrt(1 + 2 alpha)
    np.testing.assert_allclose(ref["omegas"], [1.0, np.sqrt(3.4)], rtol=1e-9)
    assert min(abs(hopf[0].omega - w) for w in ref["omegas"]) < 1e-8
    for sign, unstable in ((-1, 0), (1, 4)):
        ev = np.linalg.eigvals(linearization(ref["Vdr"] * (1 + sign * 1e-3)))
        assert int(np.sum(ev.real > 0)) == unstable
    # the same value as seed 004 Table 2 (eps = 1e5) for the 1-DOF model: same condition F*'(-Vdr) = 0
    assert float(f"{ref['Vdr']:.2e}") == 1.46e-3
    # the equilibrium by hand, K X = (F*(-Vdr), beta F*(-Vdr)) (eqs. 7, 10, 11), and the
    # generated exact Jacobian there against the hand-written linearization
    k = int(np.argmin(np.abs(eq.param - 0.14)))
    lam = float(eq.param[k])
    F = (2 / np.pi) * np.arctan(1e5 * lam) / (1 + 3.0 * np.hypot(lam, 1e-6))
    X = np.linalg.solve([[2.2, -1.2], [-1.2, 2.2]], [F, 1.3 * F])
    np.testing.assert_allclose([eq.mean["X1"][k], eq.mean["X2"][k]], X, rtol=1e-12)
    J = model.jac(0.0, [X[0], 0.0, X[1], 0.0], lam)
    np.testing.assert_allclose(J, linearization(lam), rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="Vdr"):
        linearization(-0.1)


def test_period1_orbit_hbm_matches_shooting_at_moderate_eps():
    # eps = 10: the Hopf point moves to Vdr ~ 0.195 and the law is smooth enough for the HBM
    lam = 0.3
    model = load_model("vrande2", continuation="Vdr", backend="numpy", eps=10.0)
    x0, T0 = attractor_on_section(model, lam, [1.0, 0.0, -0.5, 0.0], 300.0, rtol=1e-8, atol=1e-11)
    orbit = find_periodic_orbit(model, lam, x0, T0, rtol=1e-12, atol=1e-14)
    info = section_points(model, lam, orbit.x0, orbit.T)
    assert info.n == 1 and info.phase == 1          # an 'in phase' period-1 orbit
    H = 60
    disc, Z = periodic_start_from_orbit(model, lam, orbit.samples(8 * H + 8), orbit.T, H)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, lam)
    res = disc.unpack(Z)
    assert res["omega"] == pytest.approx(orbit.omega, rel=1e-8)
    lo, hi = trig_extrema(res["coefficients"][:model.n])
    np.testing.assert_allclose(hi - lo, orbit.ptp, rtol=1e-8)
    # Floquet multipliers: Hill's method on the HBM orbit vs the shooting monodromy
    hill = orbit_stability(disc, Z)
    mono = np.sort_complex(orbit.multipliers)
    np.testing.assert_allclose(np.sort_complex(hill.multipliers), mono, atol=1e-6)


@pytest.fixture(scope="module")
def flip_bracket():
    model = load_model("vrande2", continuation="Vdr")        # eps = 1e5 (seed 004 §2.2)
    x0, T0 = attractor_on_section(model, 0.14, [1.0, 0.0, -0.5, 0.0], 150.0, rtol=1e-8, atol=1e-11)
    orbits = []
    for lam in (0.1405, 0.1415):     # Table 3: '+1 super-critical flip 0.141'
        # rtol 1e-9: the multiplier agrees with rtol 1e-10 to 1e-8 (measured)
        o = find_periodic_orbit(model, lam, x0, T0, rtol=1e-9, atol=1e-11)
        x0, T0 = o.x0, o.T
        orbits.append(o)
    return model, orbits


def _leading(orbit):
    nt = np.delete(orbit.multipliers, np.argmin(np.abs(orbit.multipliers - 1)))
    return nt[np.argmax(np.abs(nt))]


def test_in_phase_flip_at_0141_inside_the_printed_digits(flip_bracket):
    model, orbits = flip_bracket
    for o in orbits:
        info = section_points(model, o.lam, o.x0, o.T)
        assert info.n == 1 and info.phase == 1      # the '+1' branch
        assert abs(_leading(o).imag) < 1e-12
    # the leading multiplier crosses -1 between 0.1405 and 0.1415: the flip rounds to 0.141
    assert _leading(orbits[0]).real > -1 > _leading(orbits[1]).real


def test_flip_multiplier_confirmed_by_the_poincare_return_map(flip_bracket):
    # independent of the variational equation: central differences (step 1e-5) of the return
    # map of the section X1' = 0; measured agreement with the monodromy 1.5e-6 at rtol 1e-12
    model, orbits = flip_bracket
    mus = []
    for o in orbits:
        q = to_section(model, o.lam, o.x0, o.T, rtol=1e-11, atol=1e-13)
        mu, defect = poincare_multipliers(model, o.lam, q, 1, rtol=1e-11, atol=1e-13)
        assert np.max(np.abs(defect)) < 1e-7                   # q is a fixed point of the map
        assert abs(mu[0] - _leading(o)) < 1e-4
        mus.append(mu[0].real)
    assert mus[0] > -1 > mus[1]
