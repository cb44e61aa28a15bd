"""Codimension-2 points detected and located along PD curves (``analysis/_pd_ns_curves.py``,
``_codim2_points``), on ``tests/models/flip_cycle_handwritten.py`` whose multipliers are known
in closed form: ``1``, ``exp(-4 pi)``, ``-exp(2 pi a)``, ``-exp(2 pi (a - 2 e))`` and
``exp(2 pi d)``.  Its PD curve is ``a = 0`` for every ``d``, and on it the multiplier
``exp(2 pi d)`` passes +1 at ``d = 0`` exactly: the fold-flip test function's zero.
"""
import numpy as np
import pytest

from frictionkit.runtime import pd_curve, periodic_branch, periodic_start_from_orbit
from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._interface import Model
from tests.models import flip_cycle_handwritten


@pytest.fixture(scope="module")
def flip_branch():
    model = Model(flip_cycle_handwritten, {"a": -0.2, "d": -0.3, "e": 0.25})
    th = 2 * np.pi * np.arange(32) / 32
    x = np.vstack([np.cos(th), np.sin(th), 0 * th, 0 * th, 0 * th])
    disc, Z = periodic_start_from_orbit(model, -0.2, x, 2 * np.pi, 3, discretization="aft")
    # the multipliers of the Magnus monodromy against the closed form (measured 4.5e-5: the
    # trivial one on 64 steps; the others 1.2e-7 and below)
    mult = np.sort(np.linalg.eigvals(disc.monodromy(Z)).real)
    exact = np.sort([1.0, np.exp(-4 * np.pi), -np.exp(-0.4 * np.pi), -np.exp(-1.4 * np.pi), np.exp(-0.6 * np.pi)])
    np.testing.assert_allclose(mult, exact, atol=1e-4)
    br = periodic_branch(disc, Z, -0.2, 0.2, 1.0, method="newton", options=dict(max_lam_step=0.05, max_steps=12))
    assert [s.kind for s in br.special] == ["pd"]
    return br


def test_fold_flip_on_the_pd_curve_is_located_where_the_multiplier_passes_one(flip_branch, tmp_path):
    br = flip_branch
    # a bounded lam range around 0: the step control's scale of lam is the range, not lam ~ 1e-7
    curve = pd_curve(br, br.special[0], "d", -0.3, 0.3, lam_min=-0.5, lam_max=0.5)
    assert curve.status == "range" and curve.mu[-1] == 0.3
    # analytic: the curve is a = 0 (to the Magnus monodromy's error at H = 3: measured 6.4e-8)
    np.testing.assert_allclose(curve.lam, 0.0, atol=1e-6)
    assert [c["kind"] for c in curve.codim2] == ["fold-flip"]
    c = curve.codim2[0]
    assert c["located"] and abs(c["mu"]) < 1e-10 and abs(c["lam"]) < 1e-6     # measured 2.8e-13, 6.4e-8
    assert abs(c["multiplier"]) < 1e-10
    # saved and read back with the curve
    curve.save(tmp_path / "pd.h5")
    back = BifurcationCurve.load(tmp_path / "pd.h5")
    assert [b["kind"] for b in back.codim2] == ["fold-flip"] and back.codim2[0]["mu"] == c["mu"]
    assert back.codim2[0]["located"]
    # and drawn on the curve's plot
    curve.plot(tmp_path / "pd.png")
    assert (tmp_path / "pd.png").stat().st_size > 0


def test_no_codim2_point_where_no_other_multiplier_crosses(flip_branch):
    br = flip_branch
    # d from -0.3 to -0.1: exp(2 pi d) stays inside the circle, the others are fixed
    curve = pd_curve(br, br.special[0], "d", -0.3, -0.1, lam_min=-0.5, lam_max=0.5)
    assert curve.status == "range" and curve.codim2 == []


def test_finer_magnus_steps_bring_the_curve_onto_the_exact_one(flip_branch):
    """``intervals``: the monodromy on more equal steps than the AFT's 64 samples; the PD curve
    ``a = 0`` is then exact to the fourth-order Magnus error (measured max |a| 6.4e-8 on 64
    steps, 4.0e-9 on 128, 1.6e-11 on 512)."""
    br = flip_branch
    coarse = pd_curve(br, br.special[0], "d", -0.3, -0.2, lam_min=-0.5, lam_max=0.5, intervals="grid")
    fine = pd_curve(br, br.special[0], "d", -0.3, -0.2, lam_min=-0.5, lam_max=0.5, intervals=512)
    assert coarse.status == fine.status == "range"
    assert np.abs(coarse.lam).max() > 1e-8
    assert np.abs(fine.lam).max() < 1e-10
    # the default refines the samples until the critical multiplier converges (1e-7)
    auto = pd_curve(br, br.special[0], "d", -0.3, -0.2, lam_min=-0.5, lam_max=0.5)
    assert np.abs(auto.lam).max() < 1e-8
    with pytest.raises(InputError, match="intervals = 0 must be a positive integer"):
        pd_curve(br, br.special[0], "d", -0.3, -0.2, intervals=0)
    with pytest.raises(InputError, match="'grid'"):
        pd_curve(br, br.special[0], "d", -0.3, -0.2, intervals="fine")
