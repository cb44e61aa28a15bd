"""Two-parameter continuation of Hopf points (``runtime/_curves.py``) against the closed
form of the belt oscillator (seed 000 eq. 5): Hopf points solve
``2 zeta omega1 = (FN / M1) mu_n'(-Vb)`` with the crossing pair ``+- i omega1``, so the curve in
(Vb, FN) is ``FN = g(Vb) = 2 zeta omega1 M1 / mu_n'(-Vb)``; ``mu_n'`` comes from sympy
(``tests/analysis/test_equilibria.py``), its minimum from scipy's bounded minimiser, B3 from
the eigenvalues along the equilibrium branch."""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from frictionkit.runtime.drivers._branches import equilibrium_branch
from frictionkit.runtime.analysis._curves import BifurcationCurve, hopf_curve
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.errors import InputError
from tests.models import belt_handwritten
from tests.analysis.test_equilibria import P, _dmu


@pytest.fixture(scope="module")
def belt():
    m = Model(belt_handwritten, {"n": 10, "FN": 5})
    return m, equilibrium_branch(m, 0.05, 12).special_points("hopf")


def _closed_form_error(curve):
    d = _dmu(10)
    return np.max([abs(2 * P["zeta"] * P["omega1"] / (F / P["M1"] * d(-vb)) - 1) for vb, F in zip(curve.lam, curve.mu)])


def test_curve_from_b1_turns_at_the_smallest_normal_force_and_reaches_b3(belt):
    m, hb = belt
    curve = hopf_curve(m, hb[0], "FN", 0.01, 5.0, direction=-1)
    assert curve.status == "range" and len(curve) > 50
    assert _closed_form_error(curve) < 1e-11
    np.testing.assert_allclose(curve.omega, P["omega1"], rtol=1e-12)
    # below FN_min steady sliding is stable at every belt speed
    d = _dmu(10)
    res = minimize_scalar(lambda v: 2 * P["zeta"] * P["omega1"] * P["M1"] / d(-v), bounds=(0.15, 0.4),
                          method="bounded", options=dict(xatol=1e-12))
    assert curve.folds_mu == pytest.approx([res.fun], rel=1e-11)
    assert curve.mu.min() >= res.fun * (1 - 1e-12)
    # ... and back at FN = 5 on the second Hopf point of the same equilibrium branch
    assert curve.mu[-1] == pytest.approx(5.0, abs=1e-12)
    assert curve.lam[-1] == pytest.approx(hb[1].param, rel=1e-11)
    # the equilibrium along the curve is the sliding one: y = FN mu_n(-Vb) / (M1 omega1^2), y' = 0
    assert np.max(np.abs(curve.states[:, 1])) < 1e-12


def test_curve_upwards_and_results_saved(belt, tmp_path):
    m, hb = belt
    curve = hopf_curve(m, hb[0], "FN", 1.0, 40.0)
    assert curve.status == "range" and curve.mu[-1] == pytest.approx(40.0, abs=1e-12)
    assert np.all(np.diff(curve.mu) > 0) and _closed_form_error(curve) < 1e-10
    curve.save(tmp_path / "c.h5")
    back = BifurcationCurve.load(tmp_path / "c.h5")
    for k in ("lam", "mu", "omega", "states"):
        np.testing.assert_array_equal(getattr(back, k), getattr(curve, k))
    assert (back.lam_name, back.mu_name, back.status) == ("Vb", "FN", "range")
    curve.plot(tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0


def test_bad_input_is_named(belt):
    m, hb = belt
    with pytest.raises(InputError, match="unknown parameter 'Fx'"):
        hopf_curve(m, hb[0], "Fx", 0.0, 1.0)
    with pytest.raises(InputError, match="continuation parameter"):
        hopf_curve(m, hb[0], "Vb", 0.0, 1.0)
    with pytest.raises(InputError, match="outside"):
        hopf_curve(m, hb[0], "FN", 6.0, 9.0)
    from frictionkit.runtime.results._branch import SpecialPoint
    fold = SpecialPoint("fold", 1.0, np.nan, 0, np.zeros(3))
    with pytest.raises(InputError, match="'hopf' special point"):
        hopf_curve(m, fold, "FN", 0, 9)


def test_cli(tmp_path):
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    args = ["hopf-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
            "--second", "FN", "--min", "0.01", "--max", "5", "--direction", "down", "--out", str(tmp_path / "h.h5")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "turning point in FN: 0.054376120" in r.output and "ends at Vb = 3.655559701" in r.output
    r = CliRunner().invoke(main, args[:-2] + ["--from-hopf", "3"])
    assert r.exit_code != 0 and "has 2 Hopf point(s)" in r.output


def test_a_declared_model_in_another_parameter_plane():
    """The seed-002 slip model (declared in modelspec, generated with the NumPy backend): its
    Hopf point is v_lw = v0 ln((mu_st - mu_d) / (2 xi v0 + mu_v)) (seed 002, formula after
    eq. 9) for every mu_v, with omega = 1; the curve in (vd, mu_v) follows it both ways."""
    from frictionkit.runtime.analysis._energy import v_lw_exponential
    from frictionkit.runtime.model._load import load_model
    from examples.seeds.seed002 import seed002_slip_spec
    s = dict(xi=0.05, mud=0.5, mus=1.0, v0=0.5)
    m = load_model(seed002_slip_spec(), continuation="vd", backend="numpy", muv=0.0, **s)
    hb = equilibrium_branch(m, 0.2, 3.0).special_points("hopf")
    for lo, hi, direction in ((0.0, 0.2, 1.0), (-0.049, 0.0, -1.0)):
        curve = hopf_curve(m, hb[0], "muv", lo, hi, direction=direction)
        assert curve.status == "range" and len(curve) > 10
        assert curve.mu[-1] == pytest.approx(hi if direction > 0 else lo, abs=1e-14)
        ref = np.array([v_lw_exponential(s["xi"], s["mud"], s["mus"], mv, s["v0"]) for mv in curve.mu])
        np.testing.assert_allclose(curve.lam, ref, rtol=1e-12)
        np.testing.assert_allclose(curve.omega, 1.0, rtol=1e-12)


def test_drill_hopf_points_over_four_decades_of_kappa():
    """Seed 004 drill (a sampled model: non-analytic law, rhs/jac only): both Hopf points of
    kappa = 1 continued down to kappa = 1e-4 follow the damping condition of eqs. 16/18/20
    (brentq root, ``tests/discretizations/test_aft.py``) at every point, and end on Table 5's
    1.00e-4 / 4.00e-4; the rescaled steps keep up with a parameter that falls by decades."""
    from scipy.optimize import brentq
    from frictionkit.runtime.model._load import load_model
    from tests.discretizations.test_aft import _damping_condition
    m = load_model("drill", continuation="eta", kappa=1.0)
    hb = equilibrium_branch(m, 1.0, 5.0, options=dict(min_step=1e-14)).special_points("hopf")
    for h, (a, b), paper in zip(hb, ((1, 2), (2, 4)), (1.00e-4, 4.00e-4)):
        curve = hopf_curve(m, h, "kappa", 1e-4, 1.0, direction=-1)
        assert curve.status == "range" and curve.mu[-1] == pytest.approx(1e-4, rel=1e-12)
        ref = [brentq(_damping_condition, a * k, b * k, args=(k,), xtol=1e-15 * k, rtol=1e-15) for k in curve.mu]
        np.testing.assert_allclose(curve.lam, ref, rtol=1e-12)
        np.testing.assert_allclose(curve.omega, 1.0, rtol=1e-12)
        assert float(f"{curve.lam[-1]:.2e}") == paper
