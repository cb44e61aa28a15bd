"""Collocation of models with derivative-bilinear rows and point conditions (issue 5, item 4/5).

References independent of the code under test:

* Jacobians from central finite differences of the residual;
* ANM right-hand sides from a polynomial fit of the residual along a polynomial path;
* periodic orbits from shooting on the original ODE (no recast at all, scipy at rtol 1e-12);
* the auxiliaries' definitions evaluated by the model's ``aux`` on the collocation states;
* ANM branch points re-converged by Newton at the same parameter value, and the Newton
  (pseudo-arclength) engine's branch at the range bound.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from frictionkit.runtime import load_model, periodic_branch
from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
from frictionkit.runtime.drivers._orbits import collocation_orbit, solve_collocation
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.drivers._orbits import find_periodic_orbit, periodic_orbit_from_simulation
from frictionkit.runtime.errors import InputError, ModelInterfaceError
from tests.discretizations.test_point_conditions import _tanh_exp_model, check_jacobian_and_series
from tests.models._orbits import belt


@pytest.mark.parametrize("name, param, params, lam", [
    ("vrande1", "Vdr", dict(eps=1e2), 0.3),          # atan; Vrel differentiated (algebraic row)
    ("weakstrong", "vd", dict(delta=1e-2), 1.2),     # exp(-R/v0), R = sqrt(vrel^2 + delta^2)
])
def test_jacobian_and_anm_series_of_point_rows(name, param, params, lam):
    model = load_model(name, continuation=param, backend="numpy", **params)
    disc = CollocationDiscretization(model, 4, 3)
    assert np.any(disc.alg_nodal)          # an algebraic variable is differentiated in a dbil row
    rng = np.random.default_rng(7)
    Z = 0.1 * rng.normal(size=disc.size)
    Z[disc.lam_index] = lam
    Z[disc.omega_index] = 1.0
    J = disc.jacobian(Z)
    assert J.shape == (disc.m, disc.size) and J.format == "csr"
    # the system is quadratic except for the point conditions, whose series come from _series.py
    check_jacobian_and_series(disc, Z, rng, jac_rtol=1e-9)


def test_missing_point_row_is_refused_naming_the_model():
    model = load_model("weakstrong", continuation="vd", backend="numpy", delta=1e-2)
    mod = types.ModuleType("weakstrong_without_point_rows")
    mod.__dict__.update({k: v for k, v in vars(model.module).items() if not k.startswith("__")})
    mod.POINT_ROWS = ()
    with pytest.raises(ModelInterfaceError, match="'weakstrong'.*point condition"):
        CollocationDiscretization(Model(mod, model.params), 10, 3)


@pytest.fixture(scope="module")
def tanh_exp_orbit():
    """Stable cycle of the tanh * exp belt oscillator at vb = 0.8 by shooting (rtol 1e-12)."""
    model = load_model(_tanh_exp_model(), continuation="vb", backend="numpy")
    assert model.kinds.count("derivative_bilinear") == 2
    orbit = periodic_orbit_from_simulation(model, 0.8, [0.0, 0.0], 200.0, rtol=1e-12, atol=1e-14)
    assert orbit.success and orbit.ptp[0] > 1.0
    return model, orbit


def test_tanh_exp_collocation_agrees_with_shooting(tanh_exp_orbit):
    model, orbit = tanh_exp_orbit
    disc, Z, info = collocation_orbit(model, orbit, n_intervals=160, degree=3)
    # vr, a1 (differentiated algebraic variables) and e1, th1 (dbil) are nodal
    assert [model.variables[i] for i in np.flatnonzero(disc.nodal)] == ["x", "v", "vr", "a1", "e1", "th1"]
    out = disc.unpack(Z)
    # measured: 3.0e-12 and 6.7e-10
    assert out["omega"] == pytest.approx(orbit.omega, rel=1e-11)
    np.testing.assert_allclose(out["ptp"], orbit.ptp, rtol=2e-9)
    assert info["residual"] < 1e-10


def test_tanh_exp_convergence_orders(tanh_exp_orbit):
    # Gauss collocation of the ODE made of the states, the differentiated algebraic rows and
    # the dbil rows: uniform error O(h^(p+1)), omega and the auxiliaries' definitions at the
    # mesh points O(h^(2p)) (measured slopes for p = 3: -3.97/-3.93, -6.13/-6.04, -6.13/-6.04)
    model, orbit = tanh_exp_orbit
    p, n_list = 3, np.array([20, 40, 80])
    tau = np.arange(300) / 300
    ref = orbit.at(tau * orbit.T)
    e_omega, e_uniform, e_mesh = [], [], []
    for n_int in n_list:
        disc, Z, _ = collocation_orbit(model, orbit, n_intervals=n_int, degree=p, phase="integral")
        out = disc.unpack(Z)
        e_omega.append(abs(out["omega"] - orbit.omega) / orbit.omega)
        e_uniform.append(np.max(np.abs(disc.states_at(Z, tau) - ref)) / np.abs(ref).max())
        U = out["variables"]
        mesh = np.arange(n_int) * p
        defs = model.aux(U[:model.n, mesh], 0.0, 0.8)
        e_mesh.append(np.max(np.abs(U[disc.nodal][:, mesh] - defs[disc.nodal])))
        # the point conditions hold at tau = 0 (node 0)
        assert np.max(np.abs(U[disc.nodal, 0] - defs[disc.nodal, 0])) < 1e-13
    logn = np.log(n_list)
    assert np.polyfit(logn, np.log(e_uniform), 1)[0] == pytest.approx(-(p + 1), abs=0.2)
    assert np.polyfit(logn, np.log(e_omega), 1)[0] == pytest.approx(-2 * p, abs=0.2)
    assert np.polyfit(logn, np.log(e_mesh), 1)[0] == pytest.approx(-2 * p, abs=0.2)


def test_tanh_exp_anm_continuation_agrees_with_newton(tanh_exp_orbit):
    model, orbit = tanh_exp_orbit
    disc, Z, _ = collocation_orbit(model, orbit, n_intervals=40, degree=4)
    # stability=True: the branch multipliers come from the point-condition-aware monodromy
    anm = periodic_branch(disc, Z, 0.6, 1.0, 1.0, method="anm",
                          options=dict(max_steps=8, points_per_step=4, stability=True))
    assert anm.status == "range" and anm.param[-1] == pytest.approx(1.0, abs=1e-12)
    assert len(anm) >= 6
    # every series point (uncorrected between the step ends) is a collocation orbit: Newton at
    # the same vb moves it by rounding only (measured max 1.8e-11)
    for Zs in anm.solutions:
        Zc, _ = solve_collocation(disc, Zs)
        assert np.max(np.abs(Zc - Zs)) < 1e-9 * np.max(np.abs(Zs))
    # the pseudo-arclength Newton engine reaches the same orbit at vb = 1.0
    nw = periodic_branch(disc, Z, 0.6, 1.0, 1.0, method="newton",
                         options=dict(max_steps=30, step=2.0, max_step=2.0, stability=False))
    assert nw.status == "range" and nw.param[-1] == pytest.approx(1.0, abs=1e-12)
    assert np.max(np.abs(nw.solutions[-1] - anm.solutions[-1])) < 1e-9 * np.max(np.abs(Z))
    # and shooting on the original ODE confirms it (40 x 4 collocation: omega to ~1e-11)
    x0 = disc.states_at(anm.solutions[-1], [0.0])[:, 0]
    ref = find_periodic_orbit(model, 1.0, x0, 2 * np.pi / anm.omega[-1], rtol=1e-12, atol=1e-14)
    assert ref.success
    assert anm.omega[-1] == pytest.approx(ref.omega, rel=1e-9)
    # the branch's stability columns (collocation monodromy with point conditions) against
    # the variational monodromy of the original ODE: a stable large cycle on [0.6, 1]
    mu = ref.multipliers[np.argsort(np.abs(ref.multipliers - 1))[1:]]        # non-trivial
    assert np.all(np.abs(mu) < 1) and np.all(anm.stable[np.isfinite(anm.stable)] == 1.0)
    assert anm.max_multiplier[-1] == pytest.approx(np.max(np.abs(mu)), abs=1e-7)


def test_tanh_exp_monodromy_agrees_with_shooting_variational(tanh_exp_orbit):
    # CollocationDiscretization.monodromy (condensation with the point relations at the
    # nodes) vs the variational monodromy of the original ODE integrated by shooting;
    # measured |error| 5.3e-7 / 6.5e-7 (40 x 3), 7.9e-9 / 1.0e-8 (80 x 3): order 2p
    from frictionkit.runtime.analysis._floquet import floquet_from_orbit
    model, orbit = tanh_exp_orbit
    ref = np.sort(floquet_from_orbit(orbit).multipliers.real)
    assert ref[1] == pytest.approx(1.0, abs=1e-8) and 0.1 < ref[0] < 0.2
    errors = []
    for n_int in (40, 80):
        disc, Z, _ = collocation_orbit(model, orbit, n_intervals=n_int, degree=3)
        mu = np.linalg.eigvals(disc.monodromy(Z))
        assert np.max(np.abs(mu.imag)) == 0.0
        errors.append(np.max(np.abs(np.sort(mu.real) - ref)))
    assert errors[1] < 2e-8
    assert np.log2(errors[0] / errors[1]) == pytest.approx(6, abs=0.3)
    plain = CollocationDiscretization(belt(), 4, 3)          # no point conditions
    with pytest.raises(InputError, match="floquet_collocation"):
        plain.monodromy(np.zeros(plain.size))
