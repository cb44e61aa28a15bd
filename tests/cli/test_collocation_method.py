"""``--method collocation`` is the Gauss collocation of the states (issue 12, items 2 and 4):
the belt's periodic branch from its Hopf point through the fold on the command line, its
restart in the same method and in the AFT, the continuation of its fold in a second
parameter, and what the name means for other models.

References (independent of this code): the converged fold of the seed-000 belt (n = 10,
FN = 5 N), 10.2874838639 m/s, AUTO-07p NTST 100 NCOL 4 and NTST 200 (10.287483864;
benchmarks/results/auto.json, README "Comparison with AUTO-07p").
"""
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._branches import periodic_start_from_orbit
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.drivers._methods import periodic_kind
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_branch
from tests.models import belt_handwritten

AUTO_FOLD = 10.2874838639
BELT = ["belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5"]


def _cli(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


def _fold(branch):
    return branch.special_points("fold")[0].param


@pytest.fixture(scope="module")
def belt_run(tmp_path_factory):
    """``continue belt ... --from-hopf 1 --method collocation --intervals 100 --degree 4``
    (AUTO's mesh), saved."""
    out = tmp_path_factory.mktemp("coll") / "run.h5"
    _cli("continue", *BELT, "--from-hopf", 1, "--method", "collocation", "--intervals", 100, "--degree", 4,
         "--out", out, "-q")
    return out


def test_cli_collocation_from_hopf_through_the_fold(belt_run):
    """The branch is the collocation of the states (two unknowns per node, not the recast's
    six), continued by the ANM, and its fold is AUTO's to 1e-8 (measured 2.5e-10); it ends
    at the second Hopf point (3.6556 m/s, where the equilibria regain stability)."""
    with h5py.File(belt_run) as f:
        a = f[f.attrs["main"]].attrs
        assert a["discretization"] == "collocation-states" and a["method"] == "anm"
    br = load_branch(belt_run)
    assert br.solutions.shape[1] == 2 * 100 * 4 + 2            # n G states, omega, lam
    assert abs(_fold(br) - AUTO_FOLD) / AUTO_FOLD < 1e-8
    hopf2 = load_branch(belt_run, "equilibria").special_points("hopf")[1].param
    # the branch stops where its amplitude vanishes (engine/_recorder.py: crossing zero, or
    # falling below 1e-3 of its largest, the Hopf point then extrapolated in amplitude^2)
    assert br.status == "equilibrium" and br.special[-1].kind == "hopf"
    assert br.special[-1].param == pytest.approx(hopf2, rel=1e-7)


@pytest.mark.parametrize("extra, kind, tol", [
    # AFT H = 80 is 1.5e-9 from AUTO (benchmarks/results/runtime.json, hbm_H80); measured 2.4e-12 relative
    (["--method", "aft", "-H", 80], "aft", 1e-8),
    # the same method and mesh (the sizes saved with the branch); measured 2.5e-10 relative
    ([], "collocation-states", 1e-8),
])
def test_restart_of_a_collocation_branch(belt_run, tmp_path, extra, kind, tol):
    """``--restart FILE@I`` of a states-collocation branch before its fold: corrected at the
    saved Vb and continued through AUTO's fold, in the AFT or in the same collocation."""
    saved = load_branch(belt_run)
    index = int(np.flatnonzero(saved.param > 9.0)[0])         # upper branch, before the fold
    assert index < saved.special_points("fold")[0].index
    out = tmp_path / "again.h5"
    _cli("continue", "--restart", f"{belt_run}@{index}", "--stop", 12, *extra, "--out", out, "-q")
    again = load_branch(out)
    assert again.provenance["discretization"] == kind
    assert again.provenance["restarted_from"] == f"periodic@{index}"
    assert again.param[0] == pytest.approx(saved.param[index], abs=1e-12)   # corrected at fixed Vb
    assert abs(_fold(again) - AUTO_FOLD) / AUTO_FOLD < tol


def test_what_collocation_means_for_each_model():
    """One resolver: the states where the model has Taylor kernels, the recast for a
    hand-written module without them, a clear refusal for a non-analytic law."""
    belt = load_model("belt", continuation="Vb", n=10, FN=5)
    hand = Model(belt_handwritten, {"n": 10, "FN": 5})
    assert belt.has_taylor and not hand.has_taylor
    assert [periodic_kind(belt, m) for m in (None, "aft", "hbm", "collocation", "collocation-recast")] == \
        ["aft", "aft", "hbm", "collocation-states", "collocation-recast"]
    assert [periodic_kind(hand, m) for m in (None, "collocation")] == ["hbm", "collocation-recast"]
    assert periodic_kind(belt, "collocation-states") == "collocation-states"     # a saved kind
    drill = load_model("drill", continuation="eta", kappa=1)
    for name in ("collocation", "collocation-recast"):
        with pytest.raises(InputError, match="non-analytic.*method 'aft'"):
            periodic_kind(drill, name)
    with pytest.raises(InputError, match="choose one of aft, hbm, collocation, collocation-recast"):
        periodic_kind(belt, "colocation")
    with pytest.raises(InputError, match="the periodic starts are harmonic balances"):
        periodic_start_from_orbit(belt, 1.0, np.zeros((2, 64)), 0.005, 10, discretization="collocation")


def test_fold_curve_on_a_collocation_branch(tmp_path):
    """``fold-curve --method collocation``: the belt's fold of cycles continued in FN from 5
    to 5.5 N on the collocation of the states (100 x 4) ends on the fold of a separate AFT
    H = 80 branch at FN = 5.5 (another discretization, its own Hopf start) to 1e-8 relative
    (measured 4.6e-10); the recast collocation, which cannot be rebuilt for another FN, is
    refused by name."""
    out = tmp_path / "folds.h5"
    _cli("fold-curve", *BELT, "--method", "collocation", "--intervals", 100, "--degree", 4,
         "--second", "FN", "--min", 5, "--max", 5.5, "--out", out)
    curve = BifurcationCurve.load(out)
    assert curve.kind == "fold" and curve.mu[-1] == pytest.approx(5.5, abs=1e-12)
    m = load_model("belt", continuation="Vb", n=10, FN=5.5)
    _, ref = run_continuation(m, 0.05, 12, start="hopf", harmonics=80, discretization="aft", progress=False,
                              echo=lambda s: None, options=dict(stability=False))
    assert abs(curve.lam[-1] - _fold(ref)) / _fold(ref) < 1e-8
    assert abs(curve.lam[0] - AUTO_FOLD) / AUTO_FOLD < 1e-8            # it starts on the FN = 5 fold
    r = CliRunner().invoke(main, ["fold-curve", *BELT, "--method", "collocation-recast", "--second", "FN",
                                  "--min", "5", "--max", "5.5"])
    assert r.exit_code != 0 and "collocation-recast branch cannot be rebuilt" in r.output
    assert "Traceback" not in r.output


def test_cli_collocation_of_the_tanh_exp_belt_keeps_its_unstable_cycles(tmp_path):
    """examples/tanh_exp_belt.py from its subcritical Hopf point (vb = 0.798) by
    ``--method collocation``: the branch starts next to the Hopf point (the few harmonic-balance
    steps taken first stay on the small unstable cycles), passes the fold of cycles, which is
    AUTO-07p's (NTST 100 and 200, NCOL 4: 0.98434561264, benchmarks/bench_auto.py) to 1e-8,
    and ends at the other Hopf point."""
    out = tmp_path / "tanh.h5"
    model = Path(__file__).resolve().parents[2] / "examples" / "tanh_exp_belt.py"
    _cli("continue", model, "--param", "vb", "--start", 0.1, "--stop", 1.5, "--from-hopf", 2,
         "--method", "collocation", "--intervals", 100, "--degree", 4, "--out", out, "-q")
    br = load_branch(out)
    hopf = load_branch(out, "equilibria").special_points("hopf")
    assert br.param[0] == pytest.approx(hopf[1].param, abs=1e-2)
    assert [s.kind for s in br.special] == ["fold", "hopf"]
    assert abs(_fold(br) / 0.98434561264 - 1) < 1e-8
    assert br.special[-1].param == pytest.approx(hopf[0].param, rel=1e-7)
