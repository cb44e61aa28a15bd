"""Bad input and failures: clear messages naming the cause, partial branches kept."""
import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.results._branch import load_branch
from frictionkit.runtime.cli._continuation import run_continuation
from frictionkit.runtime.engine._options import ANMOptions, ContinuationProblem, NewtonOptions
from frictionkit.runtime.drivers._continue import continuation
from frictionkit.runtime.analysis._equilibria import find_equilibrium
from frictionkit.runtime.drivers._branches import periodic_start_from_hopf, equilibrium_branch
from frictionkit.runtime.discretizations._aft import AFTDiscretization
from frictionkit.runtime.discretizations._hbm import HBMDiscretization
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.cli import main
from frictionkit.runtime.errors import InputError
from tests.models import belt_handwritten
from tests.models._fold_system import fold_by_extremum


@pytest.fixture(scope="module")
def belt():
    return Model(belt_handwritten, {"n": 10, "FN": 5})


class _BrokenAbove(HBMDiscretization):
    """The belt's H = 0 system whose residual turns NaN (or noisy) above lam = 1."""

    mode = "nan"

    def residual(self, Z):
        R = super().residual(Z)
        if Z[-1] > 1.0:
            if self.mode == "nan":
                R = R * np.nan
            else:
                R = R + np.random.default_rng(int(1e9 * Z[-1]) % 2**32).normal(size=R.shape)
        return R


@pytest.mark.parametrize("mode, words", [("nan", "NaN"), ("noise", "Newton correction")])
@pytest.mark.parametrize("method", ["anm", "newton"])
def test_failure_keeps_partial_branch(belt, tmp_path, mode, words, method):
    d = _BrokenAbove(belt, 0)
    d.mode = mode
    _, Z = find_equilibrium(belt, 0.2)
    br = continuation(ContinuationProblem(d, Z, 1.0), method,
                      dict(lam_min=0.0, lam_max=5.0, max_lam_step=0.1) if method == "anm"
                      else dict(lam_min=0.0, lam_max=5.0, max_lam_step=0.1, step=0.05))
    assert not br.success and br.status == "failed"
    assert words in br.message and "lam =" in br.message
    assert len(br) >= 5 and br.param.max() <= 1.0 + 1e-12
    br.save(tmp_path / "partial.h5")
    back = load_branch(tmp_path / "partial.h5")
    assert back.status == "failed" and len(back) == len(br)


def test_ctrl_c_keeps_partial_branch(belt):
    def interrupt(rec):
        if rec.counters.steps == 4:
            raise KeyboardInterrupt
    _, Z = find_equilibrium(belt, 0.2)
    d = HBMDiscretization(belt, 0)
    br = continuation(ContinuationProblem(d, Z, 1.0), "anm", dict(lam_min=0, lam_max=5, max_lam_step=0.1),
                      progress=interrupt)
    assert br.status == "interrupted" and "Ctrl-C" in br.message and len(br) == 5


def test_start_outside_range(belt):
    _, Z = find_equilibrium(belt, 0.2)
    with pytest.raises(InputError, match="outside the range"):
        continuation(ContinuationProblem(HBMDiscretization(belt, 0), Z, 1.0), "anm",
                     dict(lam_min=1.0, lam_max=2.0))


def test_bad_options():
    with pytest.raises(InputError, match="order"):
        ANMOptions(order=1)
    with pytest.raises(InputError, match="lam_min"):
        NewtonOptions(lam_min=2, lam_max=1)
    with pytest.raises(InputError, match="unknown continuation method"):
        continuation(ContinuationProblem(None, np.zeros(1)), "shooting")


def test_option_of_the_other_method_is_warned(belt):
    _, Z = find_equilibrium(belt, 0.2)
    d = HBMDiscretization(belt, 0)
    with pytest.warns(UserWarning, match="ignored by method 'newton'"):
        continuation(ContinuationProblem(d, Z, 1.0), "newton", dict(lam_min=0, lam_max=0.3, order=12))
    with pytest.raises(InputError, match="unknown continuation option"):
        continuation(ContinuationProblem(d, Z, 1.0), "anm", dict(lam_min=0, lam_max=0.3, ordr=12))


def test_harmonics_and_hopf_index(belt):
    with pytest.raises(InputError, match="harmonics"):
        run_continuation(belt, 0.05, 12, start="hopf", harmonics=0, echo=lambda s: None, progress=False)
    with pytest.raises(InputError, match="2 Hopf point"):
        run_continuation(belt, 0.05, 12, start="hopf", hopf_index=3, echo=lambda s: None, progress=False)
    eq = equilibrium_branch(belt, 0.05, 12)
    with pytest.raises(InputError, match="harmonics"):
        periodic_start_from_hopf(belt, eq.special_points("hopf")[0], 0)
    with pytest.raises(InputError, match="unknown parameter"):
        Model(belt_handwritten, {"bogus": 1.0})


def test_cli_errors_name_the_cause(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "1",
                             "--set", "bogus=1", "-q"])
    assert r.exit_code != 0 and "bogus" in r.output
    r = runner.invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                             "--set", "n=10", "FN=5", "--from-hopf", "5", "-q"])
    assert r.exit_code != 0 and "--from-hopf 5" in r.output and "2 Hopf point" in r.output
    r = runner.invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                             "--from-hopf", "1", "--harmonics", "0", "-q"])
    assert r.exit_code != 0 and "harmonics" in r.output
    r = runner.invoke(main, ["continue", "no_such_model_xyz", "--param", "Vb", "--start", "0", "--stop", "1", "-q"])
    assert r.exit_code != 0 and "no_such_model_xyz" in r.output


def test_cli_continue_and_demo(tmp_path):
    runner = CliRunner()
    out, png = tmp_path / "eq.h5", tmp_path / "eq.png"
    r = runner.invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                             "--set", "n=10", "FN=5", "--equilibria", "--out", str(out), "--plot", str(png),
                             "-q"])
    assert r.exit_code == 0, r.output
    with h5py.File(out) as f:
        assert f.attrs["main"] == "equilibria" and set(f) == {"equilibria"}        # one run file
        assert f["equilibria"].attrs["kind"] == "equilibrium" and len(f["equilibria/special/param"]) == 2
    assert png.stat().st_size > 10_000
    r = runner.invoke(main, ["demo", "--harmonics", "10", "--out-dir", str(tmp_path), "-q"])
    assert r.exit_code == 0, r.output
    per = load_branch(tmp_path / "belt.h5")
    kinds = [s.kind for s in per.special]
    assert kinds == ["fold", "hopf"] and per.status == "equilibrium"
    # the demo's default path (AFT of the states, H = 10): its fold located again without the
    # engine, as the extremum of Vb along the branch
    i = per.special[0].index
    disc = AFTDiscretization(load_model("belt", continuation="Vb", n=10, FN=5), 10)
    assert per.special[0].param == pytest.approx(fold_by_extremum(disc, per.solutions[i - 1], per.solutions[i + 1]),
                                                 rel=1e-10)
    assert (tmp_path / "belt.png").exists() and (tmp_path / "belt.h5").exists()


def test_the_demo_by_default_meets_its_tolerance(tmp_path):
    """``frictionkit demo`` (what ``make demo`` runs) chooses its harmonic count as ``continue``
    does: the estimated orbit error below 1e-6, and the fold within 1e-8 of the converged
    10.2874838639 (the harmonic balance at H >= 100, tests/engine/test_elimination.py).  With
    its former fixed H = 40 it printed "above the tolerance" and a fold 7e-7 off."""
    r = CliRunner().invoke(main, ["demo", "--out-dir", str(tmp_path), "-q"])
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "accuracy:" in x)
    assert "above the tolerance" not in line and "along the branch" in line, line
    per = load_branch(tmp_path / "belt.h5")
    assert float(np.nanmax(per.accuracy["err_trunc"] + per.accuracy["err_alias"])) <= 1e-6
    fold = per.special_points("fold")[0]
    assert abs(fold.param - 10.2874838639) < 1e-8
    # its estimated error, saved with it (drivers/_accuracy.fold_errors; measured 0.99 times the
    # true 2.4e-9)
    true = abs(fold.param - 10.2874838639)
    assert 0.5 * true <= fold.data["param_error"] <= 2 * true and "+- " in r.output


def test_cli_from_simulation(tmp_path):
    """Periodic branch started from a time simulation at --start (W1, Vb = 0.5) with H = 20:
    its first point is the W1 orbit (omega within 1e-7 of shooting's 1217.26416561, test_periodic)."""
    out = tmp_path / "sim.h5"
    r = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.5", "--stop", "0.8",
                                  "--set", "n=10", "FN=5", "--from-simulation", "-H", "20",
                                  "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    br = load_branch(out)
    assert br.status == "range" and br.param[0] == 0.5 and br.param[-1] == pytest.approx(0.8, rel=1e-12)
    assert br.omega[0] == pytest.approx(1217.2641656, rel=1e-7)


def test_cli_collocation_method_and_engine(tmp_path):
    """``--method collocation-recast --intervals N --degree p --engine newton`` (issue 4's CLI,
    the quadratic-recast collocation under its explicit name since issue 12): the W1 orbit
    (Vb = 0.5) of a collocation branch started from a simulation matches shooting's omega
    1217.26416561 (test_periodic) to the accuracy of 40 intervals of degree 3."""
    out = tmp_path / "coll.h5"
    r = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.5", "--stop", "0.55",
                                  "--set", "n=10", "FN=5", "--from-simulation", "-H", "20",
                                  "--method", "collocation-recast", "--intervals", "40", "--degree", "3",
                                  "--engine", "newton", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    with h5py.File(out) as f:
        a = f[f.attrs["main"]].attrs                # the run file's main branch
        assert a["discretization"] == "collocation-recast" and a["method"] == "newton"
    br = load_branch(out)
    assert br.param[0] == 0.5 and br.param[-1] == pytest.approx(0.55, rel=1e-12)
    assert br.omega[0] == pytest.approx(1217.2641656, rel=1e-6)
    r = CliRunner().invoke(main, ["continue", "drill", "--param", "eta", "--start", "0.5", "--stop", "5",
                                  "--from-hopf", "1", "--method", "collocation", "-q"])
    assert r.exit_code != 0 and "non-analytic" in r.output and "method 'aft'" in r.output
    assert "Traceback" not in r.output
