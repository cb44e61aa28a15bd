"""``fold-curve``/``hopf-curve``/``pd-curve`` from a saved labelled point (issue 29: "Fold and
Hopf curves start from a saved labelled point", AUTO's restart of a locus from a label): the
curve from ``run.h5@fold`` is the curve the command computes from the model with the same
branch options, and wrong labels or mixed options are named."""
import re

from click.testing import CliRunner
import pytest

from frictionkit.runtime.cli import main


def _end(output):
    m = re.search(r"ends at Vb = ([0-9.eE+-]+), FN = ([0-9.eE+-]+)", output)
    return float(m.group(1)), float(m.group(2))


@pytest.fixture(scope="module")
def belt_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved")
    r = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "-H", "20",
                                  "--from-hopf", "1", "-q", "--out", str(folder / "belt.h5")])
    assert r.exit_code == 0, r.output
    return folder / "belt.h5"


def test_fold_curve_from_a_saved_fold_is_the_computed_one(belt_run):
    saved = CliRunner().invoke(main, ["fold-curve", f"{belt_run}@fold", "--second", "FN", "--min", "5", "--max", "5.5"])
    assert saved.exit_code == 0, saved.output
    fresh = CliRunner().invoke(main, ["fold-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                                      "-H", "20", "-q", "--second", "FN", "--min", "5", "--max", "5.5"])
    assert fresh.exit_code == 0, fresh.output
    (vb_s, fn_s), (vb_f, fn_f) = _end(saved.output), _end(fresh.output)
    assert fn_s == fn_f == 5.5 and vb_s == pytest.approx(vb_f, rel=1e-12)      # printed to 10 digits


def test_hopf_curve_from_a_saved_hopf_point(belt_run):
    r = CliRunner().invoke(main, ["hopf-curve", f"{belt_run}@equilibria:hopf", "--second", "FN", "--min", "4",
                                  "--max", "5", "--direction", "down"])
    assert r.exit_code == 0, r.output
    fresh = CliRunner().invoke(main, ["hopf-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "-q",
                                      "--second", "FN", "--min", "4", "--max", "5", "--direction", "down"])
    assert _end(r.output) == pytest.approx(_end(fresh.output), rel=1e-10)


@pytest.mark.parametrize("args, words", [
    (["fold-curve", "{f}@hopf"], "give a fold of the file"),
    (["fold-curve", "{f}@fold3"], "the branch has 1 fold point"),
    (["fold-curve", "{f}@fold", "--param", "Vb"], "is a saved point"),
    (["pd-curve", "{f}@fold"], "give a period doubling of the file"),
    (["fold-curve", "belt"], "--param, --start, --stop: needed"),
])
def test_bad_saved_points_are_named(belt_run, args, words):
    args = [a.format(f=belt_run) for a in args] + ["--second", "FN", "--min", "5", "--max", "5.5"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code != 0 and words in r.output and "Traceback" not in r.output, r.output
