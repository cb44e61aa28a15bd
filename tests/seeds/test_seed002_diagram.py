"""Seed 002 Fig. 3: the continued bifurcation diagram of the weakening-strengthening oscillator.

mu_v = 0 set of seed 002 eq. (16) (xi = 0.05, mu_d = 0.5, mu_st = 1, v0 = 0.5), zoo model
``weakstrong`` with a moderate regularization delta = 0.1 (HBM H = 20 converged: the fold
moves by 1e-7 from H = 20 to H = 40).  Independent references:

* the Hopf point against the root of seed 002 eq. (9) for the same (regularized) law, found by
  ``v_lw`` (brentq on a finite-difference damping), and, for the un-regularized slip branch of
  the law, against the closed form after eq. (9);
* the criticality from Kuznetsov's first Lyapunov coefficient (finite differences of the
  exact Jacobian) and from the direction the ANM branch leaves the Hopf point;
* the fold of cycles of the HBM/ANM branch against shooting on the original ODE
  (``seeds.seed002.shooting_fold``: scipy integration, no harmonic truncation);
* the stable/unstable change at the fold (Hill multipliers) against the shooting monodromy.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.analysis._energy import _law, v_lw, v_lw_exponential, v_up
from examples.seeds.seed002 import grazing_fold, shooting_fold, shooting_start
from frictionkit.runtime.analysis._lyapunov import first_lyapunov

SET = dict(xi=0.05, mud=0.5, mus=1.0, muv=0.0, v0=0.5)
DELTA, H = 0.1, 20


@pytest.fixture(scope="module")
def diagram():
    model = load_model("weakstrong", continuation="vd", backend="numpy", delta=DELTA, **SET)
    eq = equilibrium_branch(model, 3.0, 0.3)
    hopf = eq.special_points("hopf")
    assert len(hopf) == 1
    disc, Z, d = periodic_start_from_hopf(model, hopf[0], harmonics=H)
    br = periodic_branch(disc, Z, 0.3, 3.0, d, method="anm")
    return model, eq, hopf[0], disc, br


def test_hopf_point_is_v_lw(diagram):
    model, eq, hopf, _, _ = diagram
    # eq. (9) (beta = 1) for the regularized law of the model, by an independent root-find
    assert hopf.param == pytest.approx(v_lw(_law(None, model, None), SET["xi"], (0.5, 2.0)), rel=1e-8)
    # the sliding equilibrium is stable above v_lw, unstable below (seed 002 §2.2)
    assert np.all(eq.stable[eq.param > hopf.param + 1e-6] == 1)
    assert np.all(eq.stable[eq.param < hopf.param - 1e-6] == 0)
    # the regularization moves it by O(delta^2) from the closed form after eq. (9)
    closed = v_lw_exponential(**{k: SET[k] for k in ("xi", "mud", "mus", "muv", "v0")})
    assert closed == pytest.approx(1.1512925465, abs=1e-10)
    assert 1e-3 < (closed - hopf.param) < DELTA**2 * 10


def test_hopf_is_subcritical(diagram):
    model, _, hopf, _, br = diagram
    lyap = first_lyapunov(model, hopf.param, hopf.solution[:model.n])
    assert abs(lyap["re_lambda"]) < 1e-8 and lyap["omega0"] == pytest.approx(1.0, rel=1e-8)
    assert lyap["l1"] > 0 and lyap["criticality"] == "subcritical"
    # the cycles leave towards larger vd, i.e. into the stable-equilibrium region, and are unstable
    assert br.param[0] == pytest.approx(hopf.param, rel=1e-6)
    assert br.param[1] > br.param[0]
    assert br.stable[1] == 0


def test_fold_of_cycles_with_stability_change_matches_shooting(diagram):
    model, _, hopf, disc, br = diagram
    folds = br.special_points("fold")
    assert len(folds) == 1
    fold = folds[0]
    i = fold.index
    # unstable cycles from the Hopf point up to the fold, stable ones beyond it
    assert np.all(br.stable[1:i + 1] == 0) and np.all(br.stable[i + 1:] == 1)
    assert np.all(br.param[1:i + 1] < fold.param) and np.all(br.param[i + 1:] < fold.param)
    # the multiplier crosses +1 at the fold (Hill multipliers located on the branch)
    assert fold.data["crossing_param"] == pytest.approx(fold.param, rel=1e-6)
    # bistable band [v_lw, fold]: there the stable equilibrium and a stable cycle coexist
    assert hopf.param < fold.param
    # shooting on the original ODE: the same fold
    sf = shooting_fold(model, disc, fold.solution, coordinate="extremum", method="DOP853")
    assert sf["curvature_sign"] == -1.0
    assert fold.param == pytest.approx(sf["lam"], rel=1e-6)
    # and its monodromy: one orbit below the fold on each side, the unstable and the stable one
    for k, expect_stable in ((i - 1, False), (i + 1, True)):
        sd, Zs = shooting_start(model, disc, br.solutions[k], method="DOP853")
        M = sd.jacobian(Zs)[:, :model.n][:model.n] + np.eye(model.n)
        mu = np.linalg.eigvals(M)
        nontrivial = mu[np.argmax(np.abs(mu - 1.0))]
        assert (abs(nontrivial) < 1) == expect_stable, (k, mu)


def test_grazing_fold_of_the_non_smooth_model_and_v_up():
    # delta = 0: the unstable sliding cycles of the slip branch of the law grow until they touch
    # v_rel = 0; that grazing cycle is the fold of the non-smooth model (seed 002 Fig. 3, where
    # the stick-slip branch ends); the paper's v_up (eq. 15) is its one-harmonic estimate
    g = grazing_fold(**SET)
    closed = v_lw_exponential(**SET)
    assert g["hopf"] == pytest.approx(closed, rel=1e-10)      # the slip model's Hopf point is eq. (9)
    # the grazing cycle, integrated independently: max x' = vd, and it is periodic
    p = g["model"].param_vector(g["vd"])
    sol = solve_ivp(lambda t, z: g["model"].module.rhs(t, z, p), (0, g["T"]), g["x0"], method="DOP853",
                    rtol=1e-12, atol=1e-14, dense_output=True)
    np.testing.assert_allclose(sol.y[:, -1], g["x0"], atol=1e-8)
    v = sol.sol(np.linspace(0, g["T"], 20001))[1]
    assert np.max(v) == pytest.approx(g["vd"], abs=1e-8)
    up = v_up(SET["xi"], (0.5, 10.0), law=lambda s: np.where(s < 0, 1, -1) * (
        SET["mud"] + (SET["mus"] - SET["mud"]) * np.exp(-np.abs(s) / SET["v0"])))
    assert up == pytest.approx(1.8414, abs=1e-4)              # README / seed 002 eq. (15)
    # "v_up estimates where stick-slip disappears" (seed 002 §3): within 1 %, from above
    assert closed < g["vd"] < up
    assert g["vd"] == pytest.approx(up, rel=1e-2)


@pytest.mark.parametrize("muv", [0.0, 0.02], ids=["VW", "VWS"])
@pytest.mark.parametrize("delta", [1e-2, 1e-3])
def test_steep_laws_by_the_default_path(delta, muv):
    """Issue 12: the steep regularizations of the seed-002 law (velocity weakening, mu_v = 0,
    and weakening-strengthening, mu_v = 0.02) by the default method and options (the AFT of
    the states with the recast applied pointwise, ANM): one fold of cycles, nothing spurious,
    and the fold agrees with shooting on the original ODE to 1e-6."""
    model = load_model("weakstrong", continuation="vd", delta=delta, **dict(SET, muv=muv))
    hopf = equilibrium_branch(model, 3.0, 0.3).special_points("hopf")
    disc, Z, d = periodic_start_from_hopf(model, hopf[0], harmonics=60)
    br = periodic_branch(disc, Z, 0.3, 3.0, d)
    assert disc.kind == "aft" and br.provenance["method"] == "anm" and br.success
    assert [s.kind for s in br.special] == ["fold"]
    fold = br.special[0]
    assert fold.param == pytest.approx(shooting_fold(model, disc, fold.solution)["lam"], rel=1e-6)
