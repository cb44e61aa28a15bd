"""A new user's steep friction law works by default (issue 12): the pointwise path.

The belt oscillator ``x'' + 2 zeta x' + x = F(vb - x')`` with the tanh x exp law of
``examples/tanh_exp_belt.py`` (typed straight into the equation), continued with the default
method and options from its subcritical Hopf point: unstable cycles, a fold of cycles, stable
stick-slip cycles.  References are independent of frictionkit: the same ODE written here in
NumPy, integrated by ``solve_ivp`` (DOP853, rtol 1e-12) and shot on the section ``v = 0``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize
from click.testing import CliRunner

from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.cli import main
from frictionkit.runtime.engine._newton import correct

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tanh_exp_belt.py"
#: the issue's values (H = 40), and two steeper laws (other parameter values of the same user
#: model), which need more harmonics for periods within 1e-7 (H = 40 leaves 1.5e-7 to 2.7e-7)
CASES = [(dict(), 40), (dict(eps=0.02), 80), (dict(mus=0.6, vs=0.3, eps=0.03), 80)]
DEFAULTS = dict(zeta=0.05, mud=0.3, mus=0.5, vs=0.5, eps=0.05)


def _flow(A, vb, T, p):
    """States after time T from (x, v) = (A, 0) of the ODE with parameters ``p``."""
    def rhs(t, y):
        x, v = y
        w = vb - v
        mu = (p["mud"] + (p["mus"] - p["mud"]) * np.exp(-(w / p["vs"]) ** 2)) * np.tanh(w / p["eps"])
        return [v, -2 * p["zeta"] * v - x + mu]
    sol = scipy.integrate.solve_ivp(rhs, (0.0, T), [A, 0.0], method="DOP853", rtol=1e-12, atol=1e-14)
    return sol.y[:, -1]


def _shoot(fun, guess):
    sol, info, ier, msg = scipy.optimize.fsolve(fun, guess, xtol=1e-13, full_output=True)
    # "not making good progress" at the integrator's noise level is converged too
    assert np.max(np.abs(info["fvec"])) < 1e-10, msg
    return sol


def _section(disc, Z):
    """x where the AFT orbit crosses v = 0 downwards: the shooting's start guess."""
    _, x = disc.samples(Z, 4096)
    k = np.flatnonzero((x[1] > 0) & (np.roll(x[1], -1) <= 0))[0]
    return float(x[0, k])


@pytest.fixture(scope="module", params=CASES, ids=["issue", "eps=0.02", "mus=0.6,vs=0.3,eps=0.03"])
def branch(request):
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import tanh_exp_belt
    finally:
        sys.path.pop(0)
    params, H = request.param
    m = load_model(tanh_exp_belt.model(), continuation="vb", **params)
    eq = equilibrium_branch(m, 0.1, 1.5)
    hopf = eq.special_points("hopf")
    disc, Z, d = periodic_start_from_hopf(m, hopf[-1], H)
    return hopf, disc, periodic_branch(disc, Z, 0.1, 1.5, d), dict(DEFAULTS, **params)


def test_default_path_is_pointwise_and_the_diagram_is_clean(branch):
    hopf, disc, br, _ = branch
    assert disc.kind == "aft" and br.provenance["method"] == "anm"
    assert br.success and br.status in ("equilibrium", "range")
    # Hopf -> unstable cycles -> one fold -> stable stick-slip cycles, down to the range or back
    # to the other Hopf point; nothing else (no spurious folds, branch points, PD or NS)
    assert [s.kind for s in br.special] == ["fold"] + (["hopf"] if br.status == "equilibrium" else [])
    if br.status == "equilibrium":
        assert br.special[1].param == pytest.approx(hopf[0].param, rel=1e-9)
    i_fold = br.special[0].index
    assert np.all(br.stable[1:i_fold - 1] == 0)
    upper = np.arange(len(br)) > i_fold + 1
    assert np.all(br.stable[upper & (br.param >= 0.3)] == 1)
    assert not any(v.min() <= 0 for v in getattr(br, "validity", {}).values())


@pytest.mark.parametrize("vb", [0.8, 0.6, 0.5])
def test_stable_cycle_periods_match_shooting(branch, vb):
    _, disc, br, p = branch
    stable = np.flatnonzero(br.stable == 1)
    Z = br.solutions[stable[np.argmin(np.abs(br.param[stable] - vb))]].copy()
    Z[-1] = vb
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, vb)
    T = 2 * np.pi / Z[disc.omega_index]
    A, T_ref = _shoot(lambda u: _flow(u[0], vb, u[1], p) - [u[0], 0.0], [_section(disc, Z), T])
    assert abs(T - T_ref) / T_ref < 1e-7


def test_fold_matches_a_fold_located_by_shooting(branch):
    _, disc, br, p = branch
    fold = br.special_points("fold")[0]
    A0, T0 = _section(disc, fold.solution), 2 * np.pi / fold.solution[disc.omega_index]
    guess = [fold.param, T0]

    def minus_vb(A):
        # the cycle through (A, 0): unknowns (vb, T); the fold is the largest vb of the family
        guess[:] = _shoot(lambda u: _flow(A, u[0], u[1], p) - [A, 0.0], guess)
        return -guess[0]

    res = scipy.optimize.minimize_scalar(minus_vb, bounds=(A0 - 0.01, A0 + 0.01), method="bounded",
                                         options=dict(xatol=1e-9))
    assert abs(fold.param + res.fun) / fold.param < 1e-7


def test_cli_default_run(tmp_path):
    r = CliRunner().invoke(main, ["continue", str(EXAMPLE), "--param", "vb", "--start", "0.1", "--stop", "1.5",
                                  "--from-hopf", "2", "--harmonics", "40", "-q", "--out", str(tmp_path / "te.h5")])
    assert r.exit_code == 0, r.output
    assert "special points: fold at 0.98434561" in r.output and "Traceback" not in r.output
