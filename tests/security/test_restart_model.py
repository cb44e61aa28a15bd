"""Issue 28, item 2: a restart never runs a file that an HDF5 attribute names.

A branch of a model file records the file's path (``model_source``) and the model's name
(``model``).  A received ``.h5`` with a ``.py`` beside it (or a path of the sender's choice
in those attributes) must not get that code run by ``continue --restart``: the model comes
from the zoo, or from the file the user gives with ``--model``, whose hash must be the
branch's.  The model files here leave a trace file behind whenever Python runs them.
"""
from pathlib import Path
import shutil
import subprocess
import sys

import h5py
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._branch import load_branch

MODEL = '''
from pathlib import Path

from frictionkit.modelspec import ModelSpec

with open(Path(__file__).with_suffix(".ran"), "a") as fh:     # the trace of a run of this file
    fh.write("ran\\n")


def model():
    m = ModelSpec("marker_vdp", "van der Pol oscillator whose file leaves a trace when run")
    mu = m.parameter("mu", -0.5)
    x, v = m.second_order("x", velocity="v")
    m.ode(v, mu * v - x - {cubic} * v**3)
    return m
'''


def _cli(*args, cwd):
    """``frictionkit`` in a fresh process (the trace is a file, so any process's run shows)."""
    return subprocess.run([sys.executable, "-c", "from frictionkit.runtime.cli import main; main()",
                           *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


def _trace(model_file: Path) -> Path:
    return model_file.with_suffix(".ran")


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    """A short periodic branch of the model file ``mine/marker_vdp.py`` (run file ``run.h5``)."""
    folder = tmp_path_factory.mktemp("mine")
    model = folder / "marker_vdp.py"
    model.write_text(MODEL.format(cubic=1))
    r = _cli("continue", model, "--param", "mu", "--start", -0.5, "--stop", 0.5, "--from-hopf", 1, "-H", 5,
             "--max-steps", 4, "--out", folder / "run.h5", "-q", cwd=folder)
    assert r.returncode == 3, r.stderr                      # the step budget: a partial branch
    assert _trace(model).exists()
    assert load_branch(folder / "run.h5").provenance["model_source"] == str(model)
    return folder, model


@pytest.fixture
def received(computed, tmp_path):
    """The run file as someone else receives it: beside a model file of the sender's, whose
    path both attributes name (absolute, and relative to where the file is opened)."""
    folder, model = computed
    evil = tmp_path / "marker_vdp.py"
    shutil.copy(model, evil)
    files = {}
    for name, source in (("absolute", str(evil)), ("relative", "marker_vdp.py"), ("name", "")):
        path = tmp_path / f"{name}.h5"
        shutil.copy(folder / "run.h5", path)
        with h5py.File(path, "r+") as f:
            for group in ("equilibria", "periodic"):
                f[group].attrs["model_source"] = source
                f[group].attrs["model"] = source or "marker_vdp.py"
        files[name] = path
    return tmp_path, evil, files


@pytest.mark.parametrize("which", ["absolute", "relative", "name"])
def test_restart_does_not_run_the_model_file_a_branch_file_names(received, which):
    folder, evil, files = received
    r = _cli("continue", "--restart", files[which], "--out", folder / "more.h5", "-q", cwd=folder)
    assert r.returncode == 1, r.stderr
    assert "--model" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not _trace(evil).exists(), "the model file named in the branch file was run"
    assert not (folder / "more.h5").exists()


def test_restart_in_python_does_not_run_it_either(received, monkeypatch):
    folder, evil, files = received
    monkeypatch.chdir(folder)
    with pytest.raises(InputError, match="model=MODEL_FILE"):
        load_branch(files["relative"]).restart()
    with pytest.raises(InputError, match="model=MODEL_FILE"):
        load_branch(files["absolute"]).restart()
    assert not _trace(evil).exists()


def test_restart_with_the_users_model_file(received, tmp_path):
    """``--model FILE``: the user's own file runs (they asked for it), its hash is the
    branch's, and the continued branch records it."""
    folder, evil, files = received
    mine = tmp_path / "mine" / "vdp.py"
    mine.parent.mkdir()
    mine.write_text(MODEL.format(cubic=1))
    r = _cli("continue", "--restart", files["absolute"], "--model", mine, "--stop", 0.5, "--max-steps", 2,
             "--out", folder / "more.h5", "-q", cwd=folder)
    assert r.returncode in (0, 3), r.stderr
    assert _trace(mine).exists() and not _trace(evil).exists()
    more = load_branch(folder / "more.h5")
    assert more.provenance["model_source"] == str(mine)
    assert more.provenance["model_hash"] == load_branch(files["absolute"]).provenance["model_hash"]


def test_a_model_file_with_another_hash_is_refused(received, tmp_path):
    folder, _, files = received
    other = tmp_path / "other.py"
    other.write_text(MODEL.format(cubic=2))                  # another model, same name
    r = _cli("continue", "--restart", files["absolute"], "--model", other, "--out", folder / "more.h5", "-q",
             cwd=folder)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"--model {other}" in r.stderr and "not the branch's" in r.stderr, r.stderr
    assert not (folder / "more.h5").exists()


def test_model_option_words(received):
    folder, _, files = received
    r = _cli("continue", "belt", "--param", "Vb", "--start", 1, "--stop", 2, "--model", "x.py", cwd=folder)
    assert r.returncode == 1 and "--model x.py: goes with --restart" in r.stderr, r.stderr
    r = _cli("continue", "marker_vdp.py", "--restart", files["absolute"], cwd=folder)
    assert r.returncode == 1 and "--model MODEL_FILE" in r.stderr, r.stderr


@pytest.mark.parametrize("value", ['"abc"', "null", "[1, 2]", '{"a": 1}', "true", "NaN"])
def test_a_parameter_that_is_not_a_number_is_refused(received, value):
    """In a file, when it is read (naming the attribute); in a branch edited in memory, by
    the restart (naming the parameter)."""
    import json
    import math
    folder, _, files = received
    path = files["name"]
    with h5py.File(path, "r+") as f:
        params = json.loads(f["periodic"].attrs["parameters"])
        params["mu"] = 0.0
        f["periodic"].attrs["model_source"] = "belt"
        good = dict(params)
        params["spare"] = json.loads(value)
        f["periodic"].attrs["parameters"] = json.dumps(params)
    parsed = json.loads(value)
    if not (isinstance(parsed, float) and math.isnan(parsed)):     # NaN is a number to JSON, not to a restart
        with pytest.raises(InputError, match=f"{path}.*attribute 'parameters' of /periodic.*not a table of numbers"):
            load_branch(path)
    with h5py.File(path, "r+") as f:
        f["periodic"].attrs["parameters"] = json.dumps(good)
    branch = load_branch(path)
    branch.provenance["parameters"]["spare"] = parsed
    with pytest.raises(InputError, match="'spare' is .* not a finite number"):
        branch.restart()
