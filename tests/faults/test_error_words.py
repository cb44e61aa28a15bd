"""Issue 28, item 8 of the work: errors in the user's words, one test per case of the issue.

Each case runs the command line in this process and checks the exit code, that no traceback
reaches the user, and that the message names the option or parameter at fault (our sentence
first; a solver's words, scipy's, only after it).
"""
import warnings

from click.testing import CliRunner
import pytest

from frictionkit.modelspec.errors import ModelSpecError
from frictionkit.runtime.analysis._curves import hopf_curve
from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._branches import equilibrium_branch
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import save_run

BELT = ["belt", "-p", "Vb", "--stop", "12", "--set", "n=10"]
# what scipy.optimize.root says when it fails (MINPACK's hybrd/lmder messages)
SCIPY_WORDS = ("The cosine of the angle", "The relative error between two consecutive iterates",
               "The iteration is not making good progress")


def invoke(*argv):
    r = CliRunner().invoke(main, [str(a) for a in argv])
    assert "Traceback" not in r.output, r.output
    return r


def _first_sentence(output):
    return output.split("Error: ", 1)[1].split(" (solver: ")[0]


def test_an_extreme_start_blames_the_start_not_a_set_value():
    r = invoke("continue", *BELT, "FN=5", "--start", "1e300", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    first = _first_sentence(r.output)
    assert first.startswith("--start 1e+300:") and "Vb's default 0.2" in first, r.output
    assert "--set n=10" not in r.output, r.output
    assert not any(w in first for w in SCIPY_WORDS), first


def test_an_extreme_parameter_is_named_before_scipys_words():
    r = invoke("continue", *BELT, "FN=1e300", "--start", "0.05", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    first = _first_sentence(r.output)
    assert first.startswith("--set FN=1e+300: no equilibrium of model 'belt' is found with FN = 1e+300"), r.output
    assert "FN's default 5" in first and not any(w in first for w in SCIPY_WORDS), first
    assert any(w in r.output.split(" (solver: ")[1] for w in SCIPY_WORDS), r.output   # the solver's words after


def test_a_parameter_is_named_by_hopf_curve_too():
    r = invoke("hopf-curve", *BELT, "FN=1e300", "--start", "0.05", "--second", "FN", "--min", "1", "--max", "2",
               "-q")
    assert r.exit_code == 1 and _first_sentence(r.output).startswith("--set FN=1e+300:"), r.output


def test_without_one_culprit_the_message_lists_what_was_given():
    # Vb = 1e300 overflows Vr**2 and n = 1e-300 underflows n**2: putting either back to its
    # default leaves the other failing, so no one option is blamed
    r = invoke("continue", "belt", "-p", "Vb", "--stop", "12", "--set", "n=1e-300", "--start", "1e300", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    first = _first_sentence(r.output)
    assert first.startswith("no equilibrium of model 'belt' is found at --start 1e+300 with --set n=1e-300"), first
    assert "change --start or the --set values" in first and not any(w in first for w in SCIPY_WORDS), first


def test_hopf_curve_with_min_above_max_says_so():
    r = invoke("hopf-curve", *BELT, "FN=5", "--start", "0.05", "--second", "FN", "--min", "5", "--max", "0.01", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    assert "Error: --min 5 is above --max 0.01: --min is the lower bound" in r.output, r.output
    assert "outside [5, 0.01]" not in r.output
    r = invoke("fold-curve", *BELT, "FN=5", "--start", "0.05", "--second", "FN", "--min", "2", "--max", "2", "-q")
    assert r.exit_code == 1 and "--min 2 is equal to --max 2" in r.output, r.output


def test_hopf_curve_in_python_names_the_empty_range():
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    h = equilibrium_branch(m, 0.05, 12).special_points("hopf")[0]
    with pytest.raises(InputError, match=r"the range of FN is empty: mu_min = 5 must lie below mu_max = 0.01"):
        hopf_curve(m, h, "FN", 5, 0.01)


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eq, per = run_continuation(m, 0.05, 12, start="hopf", harmonics=5, progress=False, echo=lambda s: None,
                                   options=dict(max_steps=20))
    path = tmp_path_factory.mktemp("run") / "run.h5"
    save_run(path, equilibria=eq, periodic=per)
    return path


def test_a_restart_point_typo_is_its_own_error_listing_the_labels(run_file):
    r = invoke("continue", "--restart", f"{run_file}@abc", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    assert f"--restart {run_file}@abc: point 'abc': 'abc' is not a point" in r.output, r.output
    assert "hopf1" in r.output and "fold" in r.output and "no file" not in r.output, r.output


@pytest.mark.parametrize("option, value, named", [
    ("--intervals", "0", "--intervals 0: a collocation mesh needs at least 2 sub-intervals"),
    ("--intervals", "1", "--intervals 1: a collocation mesh needs at least 2 sub-intervals"),
    ("--degree", "13", "--degree 13: the collocation degree must be between 1 and 12"),
    ("--harmonics", "0", "--harmonics 0: the number of harmonics must be >= 1"),
])
def test_a_restart_refuses_a_bad_size_like_a_fresh_run(run_file, tmp_path, option, value, named):
    fresh = invoke("continue", *BELT, "FN=5", "--start", "0.05", "--from-hopf", "1", "--method", "collocation",
                   option, value, "-q")
    restart = invoke("continue", "--restart", run_file, "--method", "collocation", option, value, "-q",
                     "--out", tmp_path / "r.h5")
    for r in (fresh, restart):
        assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
        assert f"Error: {named}" in r.output, r.output
        assert "deprecated" not in r.output, r.output                 # --method is not the old spelling
    assert not (tmp_path / "r.h5").exists()


def test_a_law_that_raises_names_the_contact_and_the_law(tmp_path):
    source = '''
import math
from frictionkit.modelspec import ModelSpec


def sliding(vr, mus):
    return mus * math.tanh(vr)              # math on a sympy symbol: TypeError


def model():
    m = ModelSpec("raising_law", "oscillator whose law raises")
    V = m.parameter("V", 1.0)
    mus = m.parameter("mus", 0.3)
    x, v = m.second_order("x", velocity="v")
    m.ode(v, -x - 0.1 * v + m.friction("pad", sliding, V - v, mus=mus))
    return m
'''
    path = tmp_path / "raising_law.py"
    path.write_text(source)
    r = invoke("continue", path, "-p", "V", "--start", "0.1", "--stop", "2", "-q")
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.output
    assert "contact 'pad': law sliding raised TypeError" in r.output and "relative velocity V - v" in r.output
    assert "rejected its parameters" not in r.output, r.output


def test_a_law_given_the_wrong_parameters_still_says_so():
    from frictionkit.modelspec import ModelSpec, laws
    m = ModelSpec("vdp", "oscillator")
    x, v = m.second_order("x", velocity="v")
    with pytest.raises(ModelSpecError, match=r"contact 'c': law regularized rejected its parameters"):
        m.friction("c", laws.regularized, v, no_such_parameter=1)
