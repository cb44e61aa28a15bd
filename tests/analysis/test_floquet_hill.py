"""Floquet multipliers three ways (variational, collocation condensation, Hill) and Hopf criticality."""
import numpy as np
import pytest

from frictionkit.runtime.drivers._orbits import collocation_orbit, solve_collocation
from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.analysis._lyapunov import first_lyapunov
from frictionkit.runtime.analysis._floquet import floquet_collocation, floquet_from_orbit, floquet_variational
from frictionkit.runtime.analysis._hill import hbm_coefficients_from_samples, hbm_states_on_grid, hill_multipliers
from frictionkit.runtime.errors import InputError
from tests.models._orbits import (belt, belt_equilibrium, belt_hopf_points, belt_orbit,
                                    belt_orbit_near_hopf, belt_trace, vdp, vdp_orbit)


def _hill_of_orbit(orbit, H):
    """Hill multipliers from HBM coefficients obtained by FFT of the shooting orbit."""
    coeffs = hbm_coefficients_from_samples(orbit.samples(4 * H), H)
    return hill_multipliers(orbit.model, orbit.lam, coeffs, orbit.omega, H)


@pytest.mark.parametrize("Vb, H", [(0.5, 60), (2.0, 160)])
def test_hill_agrees_with_variational_floquet(Vb, H):
    # issue 4: Floquet (variational) and Hill agree to 1e-6 on the non-trivial multiplier at
    # W1 (Vb = 0.5) and W2 (Vb = 2.0), n = 10; H = 160 is needed at W2 (sharper orbit)
    orbit = belt_orbit(Vb)
    var = floquet_from_orbit(orbit)
    hill = _hill_of_orbit(orbit, H)
    assert var.trivial_multiplier_error < 1e-8
    assert hill.trivial_multiplier_error < 1e-6
    assert abs(hill.nontrivial()[0] - var.nontrivial()[0]) < 1e-6
    # seed 000 Fig. 4: the upper branch between B1 and the fold is stable
    assert var.stable and hill.stable


@pytest.mark.parametrize("Vb, n_int, tol", [(0.5, 160, 1e-8), (2.0, 800, 1e-6)])
def test_collocation_floquet_agrees_with_variational(Vb, n_int, tol):
    orbit = belt_orbit(Vb)
    disc, Z, _ = collocation_orbit(orbit.model, orbit, n_intervals=n_int)
    col = floquet_collocation(disc, Z)
    var = floquet_from_orbit(orbit)
    assert col.trivial_multiplier_error < tol
    assert abs(col.nontrivial()[0] - var.nontrivial()[0]) < tol


def test_vdp_three_ways_against_liouville():
    # Liouville: the product of the multipliers is exp(int_0^T tr J dt) = exp(int (mu - x^2) dt),
    # and the trivial one is 1: an analytic check independent of any monodromy
    mu = 1.0
    orbit = vdp_orbit(mu)
    x = orbit.samples(512)
    expected = np.exp(orbit.T * np.mean(mu - x[0] ** 2))
    var = floquet_variational(orbit.model, mu, orbit.x0, orbit.T)
    hill = _hill_of_orbit(orbit, 40)
    disc, Z, _ = collocation_orbit(orbit.model, orbit, n_intervals=100)
    col = floquet_collocation(disc, Z)
    for res in (var, hill, col):
        assert res.trivial_multiplier_error < 1e-7, res.method
        assert res.nontrivial()[0].real == pytest.approx(expected, rel=1e-6), res.method
        assert res.stable


def test_hbm_coefficient_layout_round_trip():
    # mean, cos, sin layout of _discretization.py: x = 1 + 2 cos(wt) - 3 sin(2wt)
    theta = 2 * np.pi * np.arange(16) / 16
    x = np.vstack([1 + 2 * np.cos(theta) - 3 * np.sin(2 * theta), np.cos(3 * theta)])
    c = hbm_coefficients_from_samples(x, 3)
    assert np.allclose(c[:7], [1, 2, 0, 0, -3, 0, 0], atol=1e-14)
    assert np.allclose(c[7:], [0, 0, 0, 0, 0, 1, 0], atol=1e-14)
    assert np.allclose(hbm_states_on_grid(c, 2, 3, 16), x, atol=1e-13)
    with pytest.raises(InputError, match="harmonics"):
        hbm_coefficients_from_samples(x, 8)


def test_first_lyapunov_vdp_analytic():
    # x'' - (mu - x^2) x' + x = 0 at mu = 0: A = [[0, 1], [-1, 0]], q = (1, i)/sqrt2,
    # p = (1, i)/sqrt2, B = 0, C(q, q, qb)_2 = -2 (q1 q1 qb2 + 2 q1 q2 qb1) = -i/sqrt2,
    # so l1 = Re(conj(p2) C_2) / 2 = -1/4 (supercritical)
    res = first_lyapunov(vdp(), 0.0, [0.0, 0.0])
    assert res["l1"] == pytest.approx(-0.25, rel=1e-6)
    assert res["criticality"] == "supercritical"
    assert res["omega0"] == pytest.approx(1.0)


def test_first_lyapunov_predicts_vdp_cycle_amplitude():
    # normal form r^2 = -Re(lambda'(0)) mu / (l1 w0) with Re(lambda) = mu / 2 gives the
    # amplitude 2 |q_1| r of x; compare with shooting at small mu (an independent route)
    res = first_lyapunov(vdp(), 0.0, [0.0, 0.0])
    mu = 1e-3
    r = np.sqrt(-0.5 * mu / (res["l1"] * res["omega0"]))
    predicted = 2 * abs(res["q"][0]) * r
    orbit = find_periodic_orbit(vdp(), mu, [predicted, 0.0], 2 * np.pi)
    assert orbit.ptp[0] / 2 == pytest.approx(predicted, rel=2e-3)


def test_belt_hopf_points_b1_super_b3_sub():
    # seed 000 §4.2 (n = 10, FN = 5 N): B1 ~ 0.14 m/s supercritical, B3 ~ 3.65 m/s subcritical.
    # Hopf points: tr J = 0 <=> 2 zeta omega1 = (FN/M1) mu_n'(-Vb), found here by brentq.
    model = belt(10, 5.0)
    b1, b3 = belt_hopf_points(10, 5.0)
    assert b1 == pytest.approx(0.14, abs=0.01) and b3 == pytest.approx(3.65, abs=0.01)
    r1 = first_lyapunov(model, b1, belt_equilibrium(model, b1))
    r3 = first_lyapunov(model, b3, belt_equilibrium(model, b3))
    assert abs(r1["re_lambda"]) < 1e-8 * r1["omega0"]
    assert r1["l1"] < 0 and r1["criticality"] == "supercritical"
    assert r3["l1"] > 0 and r3["criticality"] == "subcritical"


@pytest.mark.parametrize("n, expected", [(10, "supercritical"), (25, "subcritical")])
def test_belt_fn_hopf_criticality(n, expected):
    # seed 000 §4.3 / DESIGN §6: the FN-continuation Hopf at Vb = 0.2 m/s is supercritical for
    # n = 10 and subcritical for n = 25.  The sign of l1 does not depend on the continued
    # parameter, so l1 is computed at (FN_H, Vb = 0.2) with FN_H from tr J = 0 (linear in FN).
    Vb = 0.2
    base = belt(n, 1.0)
    slope = belt_trace(base, Vb) - belt_trace(belt(n, 0.0), Vb)        # d tr J / d FN
    FN_h = -belt_trace(belt(n, 0.0), Vb) / slope
    model = belt(n, FN_h)
    x_eq = belt_equilibrium(model, Vb)
    res = first_lyapunov(model, Vb, x_eq)
    assert abs(res["re_lambda"]) < 1e-8 * res["omega0"]
    assert res["criticality"] == expected


def test_first_lyapunov_bad_input():
    with pytest.raises(InputError, match="x_eq"):
        first_lyapunov(vdp(), 0.0, [0.0])
    with pytest.raises(InputError, match="Hopf"):
        # mu = 3: two real eigenvalues, no complex pair
        first_lyapunov(vdp(), 3.0, [0.0, 0.0])


@pytest.mark.parametrize("which, dV, rtol", [(1, 1e-4, 2e-3), (3, 1e-3, 2e-3)])
def test_belt_l1_predicts_the_cycle_found_by_shooting(which, dV, rtol):
    # magnitude check of l1 at B1 (supercritical: cycle for Vb > B1, stable) and B3
    # (subcritical, l1 > 0: cycle on the side where the equilibrium is stable, unstable):
    # the normal-form amplitude 2 |q_i| r, r^2 = -Re(lambda') dV / (l1 w0), against shooting
    orbit, predicted_ptp, l1 = belt_orbit_near_hopf(which, dV)
    assert np.allclose(orbit.ptp, predicted_ptp, rtol=rtol)
    var = floquet_from_orbit(orbit)
    assert var.stable == (which == 1)


def test_hill_on_an_hbm_engine_orbit():
    # the Hill function reads coefficients in the layout of _discretization.py, so an orbit
    # converged by the HBM discretization (runtime/_hbm.py) can be passed as is
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization
    from scipy.sparse.linalg import spsolve
    import scipy.sparse as sp

    orbit = belt_orbit(0.5)
    model, H = orbit.model, 60
    disc = HBMDiscretization(model, H)
    t = orbit.times(256)
    Z = disc.from_samples(model.aux(orbit.at(t, accurate=False), t, 0.5), orbit.omega, 0.5)
    for _ in range(20):
        J = sp.csc_matrix(disc.jacobian(Z))[:, :-1]
        dY = spsolve(J, -disc.residual(Z))
        Z[:-1] += dY
        if np.linalg.norm(dY) < 1e-12 * np.linalg.norm(Z[:-1]):
            break
    out = disc.unpack(Z)
    assert out["omega"] == pytest.approx(orbit.omega, rel=1e-7)
    hill = hill_multipliers(model, 0.5, Z, out["omega"], H)
    assert abs(hill.nontrivial()[0] - floquet_from_orbit(orbit).nontrivial()[0]) < 1e-6
    assert hill.trivial_multiplier_error < 1e-6


def test_multiplier_crossings_classify_fold_pd_ns():
    from frictionkit.runtime.analysis._floquet import FloquetResult
    from frictionkit.runtime.analysis._stability import multiplier_crossings

    def res(*others):
        mult = np.array((1.0,) + others, dtype=complex)
        return FloquetResult(multipliers=mult, trivial_multiplier_error=0.0, stable=bool(np.all(np.abs(others) < 1)),
                             method="test")

    seq = [res(0.5, 0.2), res(0.9, 0.2), res(1.1, 0.2), res(1.1, -0.9), res(1.1, -1.2)]
    assert multiplier_crossings(seq) == [(1, "fold"), (3, "pd")]
    seq = [res(0.8 * np.exp(1j), 0.8 * np.exp(-1j)), res(1.2 * np.exp(1j), 1.2 * np.exp(-1j)),
           res(0.9 * np.exp(1j), 0.9 * np.exp(-1j))]
    assert multiplier_crossings(seq) == [(0, "ns"), (1, "ns")]


def test_multiplier_crossings_by_class_counts_on_the_bowed_strings_multipliers():
    """The classes' counts, on multipliers of the bowed string's branches (rounded): several
    kinds within one step, a pair crossing next to a real multiplier nearer the circle, a
    second period doubling, a period doubling followed by two real multipliers leaving the
    axis; and the period-doubling test changes sign at that second period doubling."""
    from frictionkit.runtime.analysis._floquet import FloquetResult
    from frictionkit.runtime.analysis._stability import _pd_test, multiplier_crossings

    def res(*others):
        mult = np.array((1.0,) + others, dtype=complex)
        return FloquetResult(multipliers=mult, trivial_multiplier_error=0.0, stable=bool(np.all(np.abs(others) < 1)),
                             method="test")

    def pair(r, theta):
        return r * np.exp(1j * theta), r * np.exp(-1j * theta)

    # 16 modes across the fold of cycles (Vb = 0.4564 -> 0.4570): three kinds enter at once
    seq = [res(-1.018957, *pair(1.018588, 1.5708), 1.018057), res(-0.999446, *pair(0.999122, 1.5711), 0.996776)]
    assert multiplier_crossings(seq) == [(0, "fold"), (0, "pd"), (0, "ns")]
    # 8 modes (Vb = 0.2427 -> 0.2304): the pair near +-i leaves; -0.99988 stays inside, nearer
    seq = [res(*pair(0.999631, 1.5700), -0.998840), res(*pair(1.000319, 1.5695), -0.999883)]
    assert multiplier_crossings(seq) == [(0, "ns")]
    # 64 modes (Vb = 0.1142 -> 0.1106): a second real multiplier passes -1
    seq = [res(-1.002303, -0.999727), res(-1.001519, -1.000086)]
    assert multiplier_crossings(seq) == [(0, "pd")]
    assert _pd_test(seq[0]) * _pd_test(seq[1]) < 0
    assert abs(_pd_test(seq[0])) == pytest.approx(2.73e-4) and abs(_pd_test(seq[1])) == pytest.approx(8.6e-5)
    # 8 modes (Vb = 0.1565 -> 0.1530): -0.9990 passes -1 and meets -1.0026, the two leave the axis
    seq = [res(-1.002592, *pair(1.001340, 1.5655), -0.999010), res(*pair(1.000271, 3.1412), *pair(1.000163, 1.5653))]
    assert multiplier_crossings(seq) == [(0, "pd")]


def test_forced_duffing_multipliers_three_ways_and_liouville():
    # forced orbit: no trivial multiplier; tr J = -c, so the product of the multipliers is
    # exp(-c T) exactly (Liouville) - an analytic check for all three routes
    from frictionkit.runtime.model._interface import Model
    from frictionkit.runtime.drivers._orbits import periodic_orbit_from_simulation
    from tests.models import duffing_handwritten

    model = Model(duffing_handwritten)
    w = 1.2
    orbit = periodic_orbit_from_simulation(model, w, [0.0, 0.0], 200.0)
    T = 2 * np.pi / w
    var = floquet_from_orbit(orbit)
    disc, Z, _ = collocation_orbit(model, orbit, n_intervals=100, degree=4)
    col = floquet_collocation(disc, Z)
    hill = _hill_of_orbit(orbit, 30)
    for res in (var, col, hill):
        assert np.isnan(res.trivial_multiplier_error)
        assert np.prod(res.multipliers).real == pytest.approx(np.exp(-0.1 * T), rel=1e-8), res.method
        assert np.allclose(np.sort_complex(res.multipliers), np.sort_complex(var.multipliers), atol=1e-8)
