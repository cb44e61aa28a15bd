"""Two-parameter continuation of folds of periodic orbits (``runtime/_curves.py``).

Seed 002's weakening-strengthening oscillator (zoo model ``weakstrong``, delta = 0.1, HBM
H = 20): the fold of cycles bounds the bistable band [v_lw, fold] from above.  Its curve in
(vd, mu_v), continued from the fold at mu_v = 0 on the minimally augmented system, must end
on the fold that a separate one-parameter continuation finds at the end value of mu_v (a
new model, a new branch from its own Hopf point, its fold located by the tangent's sign
change): the independent reference.
"""
import re

import numpy as np
import pytest

from frictionkit.runtime import (equilibrium_branch, fold_curve, load_model, periodic_branch,
                                 periodic_start_from_hopf)
from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.errors import InputError

SET = dict(xi=0.05, mud=0.5, mus=1.0, v0=0.5)
H = 20


def _branch(muv):
    m = load_model("weakstrong", continuation="vd", backend="numpy", delta=0.1, muv=muv, **SET)
    hopf = equilibrium_branch(m, 3.0, 0.3).special_points("hopf")
    disc, Z, d = periodic_start_from_hopf(m, hopf[0], harmonics=H)
    br = periodic_branch(disc, Z, 0.3, 3.0, d, method="anm", options=dict(stability=False))
    return br, br.special_points("fold")


@pytest.fixture(scope="module")
def start():
    br, folds = _branch(0.0)
    assert len(folds) == 1
    return br, folds[0]


@pytest.mark.parametrize("muv", [0.02, -0.03])
def test_fold_curve_ends_on_the_fold_of_a_separate_branch(start, muv):
    br, fold = start
    curve = fold_curve(br, fold, "muv", min(muv, 0.0), max(muv, 0.0), direction=np.sign(muv))
    assert curve.kind == "fold" and curve.status == "range" and len(curve) > 3
    assert curve.mu[-1] == pytest.approx(muv, abs=1e-14)
    _, ref = _branch(muv)
    assert len(ref) == 1
    assert curve.lam[-1] == pytest.approx(ref[0].param, rel=1e-8)
    # a stronger velocity-strengthening term shrinks the band: the fold falls as mu_v rises
    order = np.argsort(curve.mu)
    assert np.all(np.diff(curve.lam[order]) < 0)
    assert curve.lam[0] == pytest.approx(fold.param, rel=1e-9)


def test_saved_and_bad_input(start, tmp_path):
    br, fold = start
    curve = fold_curve(br, fold, "muv", 0.0, 0.01)
    curve.save(tmp_path / "f.h5")
    back = BifurcationCurve.load(tmp_path / "f.h5")
    assert back.kind == "fold" and back.mu_name == "muv"
    np.testing.assert_array_equal(back.lam, curve.lam)
    with pytest.raises(InputError, match="'fold' special point"):
        fold_curve(br, object(), "muv", 0, 1)
    with pytest.raises(InputError, match="unknown parameter 'mv'"):
        fold_curve(br, fold, "mv", 0, 1)


def test_cli(tmp_path):
    """``frictionkit fold-curve`` (the zoo model as shipped): the same end point as the API."""
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    args = ["fold-curve", "weakstrong", "--param", "vd", "--start", "3", "--stop", "0.3", "--set", "delta=0.1",
            "-H", "20", "--second", "muv", "--min", "0", "--max", "0.05", "--out", str(tmp_path / "f.h5")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    # the end point against the fold of a separate branch at mu_v = 0.05 (the zoo defaults are SET)
    end = re.search(r"ends at vd = (\S+), muv = 0.05\n", r.output)
    assert end and float(end.group(1)) == pytest.approx(_branch(0.05)[1][0].param, rel=1e-8)
    r = CliRunner().invoke(main, args + ["--fold", "2"])
    assert r.exit_code != 0 and "has 1 fold(s)" in r.output
