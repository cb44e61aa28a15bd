"""Gauss collocation of the original ODE on its states (issue 12 item 2, DESIGN §5.0).

Every test compares with something independent of this discretization: finite differences of
its residual, the shooting orbit and the variational equation integrated along it, the AFT
harmonic balance (another discretization), time integration, and the fold of the seed-000 belt
converged by the harmonic balance at H >= 100 (seed 000 §4.2).
"""
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime import AFTDiscretization, StateCollocationDiscretization, load_model
from frictionkit.runtime.analysis._floquet import floquet_from_orbit
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.drivers._orbits import periodic_orbit_from_simulation
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._interface import Model
from tests.models import duffing_forced_handwritten
from tests.models._orbits import belt_orbit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tanh_exp_belt.py"
FOLD = 10.2874838639            # seed-000 belt (n = 10, FN = 5) fold, harmonic balance at H >= 100


def _at_lam(d, Z, lam):
    e = np.zeros(d.size)
    e[-1] = 1.0
    return correct(d, Z, e, lam, max_iter=40)[0]


def _duffing_forced_F():
    """The forced Duffing oscillator continued in its amplitude F (fixed frequency Omega)."""
    mod = types.ModuleType("duffing_forced_F")
    mod.__dict__.update({k: v for k, v in vars(duffing_forced_handwritten).items() if not k.startswith("__")})
    mod.CONTINUATION = "F"
    return Model(mod, dict(beta=0.5, zeta=0.1, F=0.2, Omega=0.9))


def _fd_check(d, Z, h=1e-6):
    J = d.jacobian(Z).toarray()
    fd = np.array([(d.residual(Z + h * s * e) - d.residual(Z - h * s * e)) / (2 * h * s)
                   for e, s in zip(np.eye(d.size), np.maximum(1.0, np.abs(Z)))]).T
    np.testing.assert_allclose(J, fd, atol=1e-7 * np.abs(J).max())


def test_jacobian_matches_central_differences():
    orbit = belt_orbit(0.5)
    d = StateCollocationDiscretization(orbit.model, 10, 3)
    Z = d.from_orbit(orbit)
    Z = Z + 1e-3 * np.random.default_rng(0).standard_normal(d.size) * np.maximum(1.0, np.abs(Z))
    _fd_check(d, Z)
    df = StateCollocationDiscretization(_duffing_forced_F(), 6, 2)
    assert df.forced and df.omega_index is None and df.size == 2 * 12 + 1
    Z = np.random.default_rng(1).normal(size=df.size) * 0.3
    Z[-1] = 0.2
    _fd_check(df, Z)


@pytest.mark.parametrize("degree, n_list, order", [(2, (40, 80), 4), (3, (40, 80, 160), 6)])
def test_w1_omega_converges_to_shooting_at_order_2p(degree, n_list, order):
    """Seed-000 W1 orbit (n = 10, FN = 5, Vb = 0.5) against shooting.  Measured omega errors:
    p = 2: 4.8e-7, 2.8e-8, 1.8e-9 at N_int = 40, 80, 160 (orders 4.1, 4.0);
    p = 3: 5.4e-9, 1.4e-10, 2.3e-12 (orders 5.2, 6.0: 2p once asymptotic);
    p = 4: 4.6e-8, 2.9e-10, 5.2e-13 at N_int = 20, 40, 80 (the last at shooting's accuracy)."""
    orbit = belt_orbit(0.5)
    err = []
    for n_int in n_list:
        d = StateCollocationDiscretization(orbit.model, n_int, degree)
        Z = _at_lam(d, d.from_orbit(orbit), 0.5)
        assert d.m == 2 * degree * n_int + 1                  # the two states only
        err.append(abs(d.unpack(Z)["omega"] / orbit.omega - 1))
    seen = np.log2(err[-2] / err[-1])
    assert order - 0.5 < seen < order + 0.5, (err, seen)


def test_anm_branch_from_hopf_through_the_fold():
    """From the AFT start at the Hopf point (H = 10), converted by ``from_states``: the ANM on
    the pointwise Taylor kernels and the pseudo-arclength Newton engine, same discretization
    (N_int = 100, p = 4).  Measured: both folds 10.28748386643 (2.5e-10 relative from the
    converged value), 2e-12 apart; the stability changes only at the fold."""
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    hopf = equilibrium_branch(m, 0.05, 12).special_points("hopf")[0]
    aft, Za, _ = periodic_start_from_hopf(m, hopf, 10)
    info = aft.unpack(Za)
    folds = {}
    for method in ("anm", "newton"):
        d = StateCollocationDiscretization(m, 100, 4)
        assert d.supports_anm and d.kind == "collocation-states"
        Z = d.from_states(info["samples"](64), info["lam"], info["omega"])
        br = periodic_branch(d, Z, 0.05, 12, 1.0, method=method,
                             options=None if method == "anm" else dict(stability=False))
        assert br.provenance["method"] == method
        fold = br.special_points("fold")[0]
        folds[method] = fold.param
        if method == "anm":
            # a multiplier crosses +1 at the fold (stable W1-type cycles below it, seed 000 §4.2)
            # and nowhere else: the monodromy of the collocated variational equation
            assert np.all(br.stable[1:fold.index] == 1) and np.all(br.stable[fold.index + 1:-1] == 0)
    assert abs(folds["anm"] - folds["newton"]) < 1e-9
    assert abs(folds["anm"] - FOLD) / FOLD < 1e-8


@pytest.mark.parametrize("params", [dict(), dict(eps=0.02)], ids=["issue", "eps=0.02"])
def test_tanh_exp_periods_against_the_aft(params):
    """The steep tanh x exp law of ``examples/tanh_exp_belt.py`` at vb = 0.8: the stable cycle's
    period at N_int = 80, p = 4 against the AFT at H = 80.  Measured relative differences
    (N_int = 40, 80, 160): issue's law 1.3e-10, 3.3e-13, 5e-15; eps = 0.02: 6.5e-9, 1.3e-10, 5.4e-12."""
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import tanh_exp_belt
    finally:
        sys.path.pop(0)
    m = load_model(tanh_exp_belt.model(), continuation="vb", **params)
    start = periodic_orbit_from_simulation(m, 0.8, [0.5, 0.0], 300.0)
    aft = AFTDiscretization(m, 80)
    Za = _at_lam(aft, aft.from_samples(start.samples(aft.n_t), start.omega, 0.8), 0.8)
    d = StateCollocationDiscretization(m, 80, 4)
    info = aft.unpack(Za)
    Z = _at_lam(d, d.from_states(info["samples"](1024), 0.8, info["omega"]), 0.8)
    T, T_aft = d.unpack(Z)["T"], 2 * np.pi / info["omega"]
    assert abs(T - T_aft) / T_aft < 1e-7


def test_multipliers_at_w1_against_the_variational_equation():
    """Measured: nontrivial multiplier 3.6e-9 off at N_int = 40, p = 4 (7e-13 at 80)."""
    orbit = belt_orbit(0.5)
    var = floquet_from_orbit(orbit)
    d = StateCollocationDiscretization(orbit.model, 40, 4)
    assert d.floquet_route == "monodromy"
    Z = _at_lam(d, d.from_orbit(orbit), 0.5)
    res = orbit_stability(d, Z)
    assert res.trivial_multiplier_error < 1e-6
    assert abs(res.nontrivial()[0] - var.nontrivial()[0]) < 1e-6
    assert res.stable == var.stable


def test_forced_orbit_against_time_integration():
    """Forced Duffing (Omega = 0.9, F = 0.2): the collocated steady state, integrated over one
    forcing period from its x(0) by DOP853 (rtol 1e-12), returns to itself and stays on the
    collocation polynomial."""
    m = _duffing_forced_F()
    d = StateCollocationDiscretization(m, 40, 4)
    Z = _at_lam(d, d.pack(np.zeros((2, d.G)), np.nan, 0.2), 0.2)
    t, x = d.samples(Z, 64)
    T = 2 * np.pi / 0.9
    sol = solve_ivp(lambda s, y: m.rhs(s, y, 0.2), (0, T), x[:, 0], method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=t)
    assert np.max(np.abs(sol.y - x)) < 1e-8 * np.abs(x).max()


def test_from_states_sets_the_phase_and_bad_input():
    orbit = belt_orbit(0.5)
    d = StateCollocationDiscretization(orbit.model, 40, 4)
    # samples of the orbit starting anywhere: the start moves to the maximum of state 0
    x = np.roll(orbit.samples(1024), 300, axis=1)
    Z = d.from_states(x, 0.5, orbit.omega)
    assert abs(d.residual(Z)[-1]) < 1e-8 * np.abs(Z).max()
    assert np.abs(Z - d.from_orbit(orbit)).max() < 1e-6 * np.abs(Z).max()
    with pytest.raises(InputError, match="n_intervals"):
        StateCollocationDiscretization(orbit.model, 1, 3)
    with pytest.raises(InputError, match="degree"):
        StateCollocationDiscretization(orbit.model, 10, 0)
    with pytest.raises(InputError, match="phase_state"):
        StateCollocationDiscretization(orbit.model, 10, 3, phase_state=5)
    with pytest.raises(InputError, match="states must be"):
        d.from_states(np.zeros((3, 10)), 0.5, orbit.omega)
    with pytest.raises(InputError, match="forcing frequency"):
        StateCollocationDiscretization(Model(duffing_forced_handwritten, dict(beta=0.5, zeta=0.1, F=0.2)), 10, 3)
    with pytest.raises(NotImplementedError, match="method='newton'"):
        d.series_rhs([Z], origin=Z)            # the hand-written belt has no Taylor kernel


def test_fixed_lam_correction_next_to_a_hopf_point_stops_at_the_rounding_floor():
    """Next to the tanh x exp belt's Hopf point (vb = 0.798) the fixed-lam correction of a
    converged collocation orbit (100 x 4, as the CLI's collocation start) makes relative
    updates of 1e-11 .. 1e-10 that never fall below xtol = 1e-11: Newton stops at the
    discretization's rounding floor (``noise_floor``) instead of failing, and the orbit's
    period is the AFT harmonic balance's (another discretization) at the same vb."""
    from frictionkit.runtime.drivers._compose import _away_from_hopf, _to_collocation
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import tanh_exp_belt
    finally:
        sys.path.pop(0)
    m = load_model(tanh_exp_belt.model(), continuation="vb")
    eq = equilibrium_branch(m, 1.5, 0.1)
    hopf = min(eq.special_points("hopf"), key=lambda h: abs(h.param - 0.798))
    aft, Za, d = _away_from_hopf(*periodic_start_from_hopf(m, hopf, 10), 0.3, 1.5)
    coll, Zc, _ = _to_collocation(m, aft, Za, 100, 4, d, kind="collocation-states")
    e = np.zeros(coll.size)
    e[-1] = 1.0
    Z = correct(coll, Zc, e, Zc[-1])[0]           # the engine's start: at most 12 iterations
    T_aft = 2 * np.pi / aft.unpack(Za)["omega"]
    assert abs(coll.unpack(Z)["T"] - T_aft) / T_aft < 1e-9
