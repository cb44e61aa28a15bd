"""Labelled points (AUTO's LAB) and a restart that honours what the command says (issue 29).

Points are addressed as ``FILE@INDEX``, ``FILE@KIND<rank>`` (``fold``, ``hopf2``, AUTO's
``LP1``/``HB1``/``PD1``) and ``FILE@GROUP:POINT``; ``frictionkit info`` lists them.  A new
``--param`` or ``--set`` values restart the point in that parameter (AUTO's new ICP); options a
restart cannot honour are refused by name; the end of a periodic branch on a Hopf point is
refused with the reason.
"""
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._branch import load_branch, load_run
from frictionkit.runtime.results._labels import PointRef, parse_point, point_index, special_labels


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    """The belt's equilibria and periodic branch (H = 8) from Hopf point 1 to the second."""
    path = tmp_path_factory.mktemp("labels") / "belt.h5"
    res = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                                    "--set", "n=10", "FN=5", "--from-hopf", "1", "-H", "8", "-q",
                                    "--out", str(path)])
    assert res.exit_code == 0, res.output
    return path


def invoke(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


@pytest.mark.parametrize("text, ref", [
    ("40", PointRef("40", index=40)), ("-1", PointRef("-1", index=-1)),
    ("fold", PointRef("fold", kind="fold")), ("hopf2", PointRef("hopf2", kind="hopf", rank=2)),
    ("PD1", PointRef("PD1", kind="pd")), ("LP2", PointRef("LP2", kind="fold", rank=2)),
    ("HB1", PointRef("HB1", kind="hopf")), ("TR1", PointRef("TR1", kind="ns")),
    ("equilibria:hopf2", PointRef("equilibria:hopf2", group="equilibria", kind="hopf", rank=2)),
    ("restart_1:-3", PointRef("restart_1:-3", group="restart_1", index=-3)),
])
def test_point_forms(text, ref):
    assert parse_point(text) == ref


@pytest.mark.parametrize("text", ["abc", "", "fold0", "hopf-1", ":3", "periodic:", "1.5", "folds"])
def test_a_point_that_is_none_of_the_forms_is_refused_by_name(text):
    with pytest.raises(InputError, match="expected an index .* a special point|ranked from 1"):
        parse_point(text, "--restart run.h5@" + text)


def test_special_points_have_kind_and_rank_labels(run_file):
    eq, per = load_run(run_file)
    assert special_labels(eq) == ["hopf1", "hopf2"]
    assert special_labels(per)[0] == "fold1"
    fold = per.special_points("fold")[0]
    i = point_index(per, parse_point("fold"))
    assert i in (fold.index, fold.index + 1)                 # the saved point nearest the fold
    assert point_index(per, parse_point("LP1")) == i
    with pytest.raises(InputError, match="1 fold point.*its special points: fold1"):
        point_index(per, parse_point("fold2"))


def test_info_lists_branches_status_and_labels(run_file):
    res = invoke("info", run_file)
    assert res.exit_code == 0, res.output
    for text in ("equilibria: equilibrium branch", "periodic: periodic branch", "status", "FN = 5 [N]",
                 "Vb [m/s]", "equilibria:hopf1", "equilibria:hopf2", "periodic:fold1"):
        assert text in res.output, text


@pytest.mark.parametrize("suffix, message", [
    ("@abc", "'abc' is not a point; expected an index"),
    ("@hopf3", "has 1 hopf point"),
    ("@periodic:9999", "points (0.."),
    ("@nosuchgroup:1", "no branch 'nosuchgroup'"),
])
def test_restart_point_errors_name_the_point(run_file, suffix, message):
    res = invoke("continue", "--restart", f"{run_file}{suffix}", "-q")
    assert res.exit_code == 1 and message in res.output, res.output
    assert "Traceback" not in res.output


def test_restart_of_a_missing_file_says_so(tmp_path):
    res = invoke("continue", "--restart", tmp_path / "nope.h5@fold", "-q")
    assert res.exit_code == 1 and "no file" in res.output and "nope.h5" in res.output, res.output


def test_restart_at_the_hopf_end_of_a_periodic_branch_says_there_is_nothing_to_continue(run_file):
    per = load_branch(run_file)
    assert per.special_points("hopf") and per.special_points("hopf")[-1].index == len(per) - 1
    res = invoke("continue", "--restart", run_file, "-q")          # the last point
    assert res.exit_code == 1, res.output
    assert "ends there on the Hopf point" in res.output and "no periodic orbit to continue" in res.output


@pytest.mark.parametrize("extra, option", [(["--start", "3"], "--start"), (["--from-hopf", "1"], "--from-hopf"),
                                           (["--from-simulation"], "--from-simulation"), (["belt"], "'belt'")])
def test_options_a_restart_cannot_honour_are_refused(run_file, extra, option):
    res = invoke("continue", "--restart", f"{run_file}@fold", "--stop", "12", "-q", *extra)
    assert res.exit_code == 1 and option in res.output, res.output


def test_restart_in_a_new_parameter_continues_there(run_file, tmp_path):
    """AUTO's new ICP: the equilibrium at the second Hopf point, continued in FN."""
    out = tmp_path / "fn.h5"
    res = invoke("continue", "--restart", f"{run_file}@equilibria:hopf2", "--param", "FN", "--stop", "3",
                 "-q", "--out", out)
    assert res.exit_code == 0, res.output
    assert "continued in FN" in res.output
    eq = load_run(run_file)[0]
    br = load_branch(out, "equilibria")
    assert br.provenance["continuation_parameter"] == "FN"
    assert br.param[0] == pytest.approx(5.0) and br.param[-1] == pytest.approx(3.0)
    assert br.provenance["parameters"]["Vb"] == pytest.approx(eq.special_points("hopf")[1].param, rel=1e-12)


def test_restart_with_set_values_uses_them(run_file, tmp_path):
    out = tmp_path / "fn55.h5"
    res = invoke("continue", "--restart", f"{run_file}@-40", "--set", "FN=5.5", "--stop", "12", "-q", "--out", out)
    assert res.exit_code == 0, res.output
    br = load_branch(out)
    per = load_branch(run_file)
    assert br.provenance["continuation_parameter"] == "Vb"
    assert br.provenance["parameters"]["FN"] == pytest.approx(5.5)
    assert br.param[0] == pytest.approx(per.param[-40], rel=1e-9)
    assert br.special_points("fold")[0].param > per.special_points("fold")[0].param    # the fold moves up with FN


def test_restart_with_an_unknown_parameter_names_it(run_file):
    res = invoke("continue", "--restart", f"{run_file}@fold", "--set", "XX=1", "-q")
    assert res.exit_code == 1 and "no parameter 'XX'" in res.output, res.output
    res = invoke("continue", "--restart", f"{run_file}@fold", "--param", "FN", "-q")
    assert res.exit_code == 1 and "give --stop" in res.output, res.output
