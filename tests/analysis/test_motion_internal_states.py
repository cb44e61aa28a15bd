"""Motion labels of branches whose friction law takes states besides the relative velocity
(issue 26): a LuGre law with its bristle state, a law of the position, a module whose contact
code fails.  Before, the generated ``contact_law`` printed the state's name without defining
it (``NameError: name 'x_z' is not defined``), raised after the whole branch was computed,
and the branch was lost.

References: the LuGre steady-state curve and its peak from the closed form written by hand
(``tests/models/state_law_specs.py``), and the LuGre orbit by time integration (LSODA,
rtol 1e-10) of an independent NumPy copy of the ODE.
"""
import types
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from frictionkit.modelspec import UnclassifiableLawWarning
from frictionkit.runtime.analysis._motion import UNKNOWN_MOTION, classify_motions, limit_velocity
from frictionkit.runtime.analysis._stability import branch_stability
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_branch
from tests.models.state_law_specs import belt_with_state_law, lugre, rhs, steady_sliding_mu


def _stribeck_peak():
    """The local maximum of the steady-state LuGre law nearest 0: the root of its derivative
    (central differences of the closed form) bracketed on a grid of v < 0."""
    h = 1e-7

    def slope(v):
        return (steady_sliding_mu(v + h) - steady_sliding_mu(v - h)) / (2 * h)

    v = -np.logspace(-5, 0, 2000)
    k = np.flatnonzero(slope(v[1:]) * slope(v[:-1]) < 0)[0]
    return brentq(slope, v[k], v[k + 1], xtol=1e-15)


@pytest.fixture(scope="module")
def lugre_branch():
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 0.2)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    return model, periodic_branch(disc, Z, 0.0, 0.1, d)


def test_lugre_law_and_limit_velocity_from_the_steady_state_curve(lugre_branch):
    model, _ = lugre_branch
    v = np.linspace(-2.0, 2.0, 4001)
    np.testing.assert_allclose(model.contact_law(v[None], model.param_vector())[0], steady_sliding_mu(v),
                               rtol=1e-13, atol=1e-16)
    # the static (Stribeck) peak, not the viscous s2 |v| growth at the end of the range
    assert limit_velocity(model)[0] == pytest.approx(_stribeck_peak(), rel=1e-7)


def test_lugre_branch_has_motion_labels_and_its_stick_slip_matches_time_integration(lugre_branch):
    model, br = lugre_branch
    assert br.success and br.param[-1] == pytest.approx(0.1)
    assert set(br.motion) <= {"slipping", "stick-slip", "multiple stick", "sticking"}
    assert br.motion[0] == "slipping"            # the small orbits next to the Hopf point
    # the last orbit (vb = 0.1, stable): integrate it from its own initial state and count its
    # stick intervals (|vr| <= |V_n|, V_n of the closed form) over the last of 8 periods
    i = len(br) - 1
    assert br.stable[i] == 1.0
    vb, T = br.param[i], 2 * np.pi / br.omega[i]
    _, x = br.time_series(i, n_t=2048)
    sol = solve_ivp(rhs, (0, 8 * T), x[:, 0], args=(vb,), method="LSODA", rtol=1e-10, atol=1e-12,
                    dense_output=True)
    assert np.max(np.abs(sol.sol(8 * T) - sol.sol(7 * T))) < 1e-3     # periodic: the branch's orbit
    vr = sol.sol(7 * T + T * np.arange(2048) / 2048)[1] - vb
    stick = np.abs(vr) <= abs(_stribeck_peak())
    res = classify_motions(model, [vb], x[None])[0]
    assert res.label == "stick-slip" and res.stick_intervals == (int(np.sum(stick & ~np.roll(stick, 1))),) == (1,)
    assert res.stick_fraction[0] == pytest.approx(stick.mean(), abs=5e-3)


@pytest.fixture(scope="module")
def position_law_branch():
    # kx = 0: the belt's orbits, with a law of the position y (no steady sliding); validation
    # warns when the model is generated (tests/modelspec/test_internal_states.py), not when its
    # sources come from the cache
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnclassifiableLawWarning)
        model = load_model(belt_with_state_law(lambda y, v, w: y), "Vb", backend="numpy")
    eq = equilibrium_branch(model, 0.05, 1.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 10)
    with pytest.warns(RuntimeWarning, match=r"contact\(s\) 'belt' is NaN.*'unknown'"):
        br = periodic_branch(disc, Z, 0.0, 0.6, d)
    return model, br


def test_unclassifiable_law_branch_is_computed_saved_and_labelled_unknown(position_law_branch, tmp_path):
    model, br = position_law_branch
    assert br.success and br.param[-1] == pytest.approx(0.6)
    assert np.all(np.isnan(model.contact_law(np.zeros((1, 3)), model.param_vector())))
    assert br.motion == [UNKNOWN_MOTION] * len(br)
    assert np.isin(br.stable, (0.0, 1.0)).all()          # the stability does not depend on the law's labels
    br.save(tmp_path / "b.h5")
    back = load_branch(tmp_path / "b.h5")
    assert back.motion == br.motion
    np.testing.assert_array_equal(back.param, br.param)


def test_contact_code_that_raises_keeps_the_branch(position_law_branch):
    # a module whose contact_law fails (e.g. one generated before internal states were
    # supported): the labels are unknown, with a warning naming the error; nothing else changes
    model, br = position_law_branch
    broken = types.ModuleType(model.module.__name__ + "_broken")
    broken.__dict__.update({k: v for k, v in vars(model.module).items() if not k.startswith("__")})

    def contact_law(vr, p):
        raise NameError("name 'x_z' is not defined")

    broken.contact_law = contact_law
    disc = br.discretization.on_model(Model(broken, model.params))
    stable, mult = br.stable.copy(), br.max_multiplier.copy()
    with pytest.warns(RuntimeWarning, match=r"motion labels of model .* unknown.*NameError: name 'x_z'"):
        branch_stability(br, disc, locate=False)
    assert br.motion == [UNKNOWN_MOTION] * len(br)
    np.testing.assert_array_equal(br.stable, stable)
    done = np.isfinite(mult)
    np.testing.assert_array_equal(br.max_multiplier[done], mult[done])


def test_classify_motions_of_a_law_without_steady_sliding_is_unknown(position_law_branch):
    model, br = position_law_branch
    x = np.stack([br.time_series(i, n_t=256)[1] for i in (1, len(br) - 1)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = classify_motions(model, br.param[[1, -1]], x)
    assert any("'unknown'" in str(w.message) for w in caught)
    assert all(r.label == UNKNOWN_MOTION and r.stick_intervals == (-1,) and np.isnan(r.stick_fraction[0])
               and np.isnan(r.v_n[0]) for r in out)
