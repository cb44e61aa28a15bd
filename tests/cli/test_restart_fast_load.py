"""``frictionkit continue --restart FILE@LABEL`` of a zoo model whose compiled module is cached
imports neither sympy nor codegen (issue 29): the zoo name the file gives is loaded through the
manifest-checked fast path (``runtime/model/_fast_load.py``), as ``frictionkit continue MODEL``
is, and continues from the same point as the full path through codegen.

As in ``test_fast_load.py``, the subprocess reads ``sys.modules`` at the end of the installed
script (what is imported, not a time).
"""
from __future__ import annotations


import h5py
import numpy as np
import pytest

from frictionkit.runtime.model import _fast_load

from ._script import WRAPPER, modules_of, run_script

BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "-H", "12", "-q"]
RESTART = ["continue", "--restart", "belt.h5@fold", "--stop", "9", "--max-steps", "3", "-q"]
FORBIDDEN = ("sympy", "frictionkit.codegen", "frictionkit.modelspec.zoo")


# the full path: no manifest is ever current, so the restart checks the name against the zoo
# (sympy) and loads the model through codegen
_FULL = """
import sys
from frictionkit.runtime.model import _fast_load
_fast_load.cached_zoo_module = lambda name, continuation: None
_fast_load.is_cached_zoo = lambda name, continuation: False
from frictionkit.runtime.cli import main
main(sys.argv[1:], prog_name="frictionkit")
"""


def _run(argv, cwd, code=WRAPPER, script=True):
    return run_script(argv, cwd, code, script, returncodes=(0, 3))     # 3: the step budget ended the branch


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A saved belt run (its load fills the cache and the manifest), its restart at the fold
    through the installed script (imports recorded), and the same restart through codegen."""
    tmp = tmp_path_factory.mktemp("restart_fast_load")
    _run(BELT + ["--out", "belt.h5"], tmp)
    assert _fast_load.is_cached_zoo("belt", "Vb"), "the run wrote no current manifest"
    warm = _run(RESTART + ["--out", "warm.h5"], tmp)
    modules = modules_of(warm)
    full = _run(RESTART + ["--out", "full.h5"], tmp, code=_FULL, script=False)
    return tmp, modules, full


def test_restart_of_a_cached_zoo_model_imports_no_sympy_or_codegen(runs):
    _, modules, _ = runs
    assert "frictionkit.runtime.model._fast_load" in modules and "click" in modules   # the log is read
    wrong = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN))
    assert not wrong, f"a warm `frictionkit continue --restart belt.h5@fold` imports {wrong[:10]}"


def test_the_full_path_does_import_sympy(runs):
    """The check above can fail: the same restart without a current manifest imports sympy."""
    tmp, _, _ = runs
    probe = "import atexit, sys\natexit.register(lambda: print('SYMPY', 'sympy' in sys.modules))\n" + _FULL
    run = _run(RESTART + ["--out", "probe.h5"], tmp, code=probe, script=False)
    assert "SYMPY True" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


def test_fast_and_full_restarts_give_the_same_branch(runs):
    tmp, _, full = runs
    with h5py.File(tmp / "warm.h5", "r") as w, h5py.File(tmp / "full.h5", "r") as f, \
            h5py.File(tmp / "belt.h5", "r") as saved:
        assert w["periodic"].attrs["model_hash"] == saved["periodic"].attrs["model_hash"]
        for name in ("param", "solution"):
            np.testing.assert_allclose(w["periodic"][name][()], f["periodic"][name][()], rtol=1e-12, atol=1e-300)
    assert "restarted belt.h5 at point periodic:" in full.stdout


def test_a_name_without_a_current_manifest_is_not_taken_as_a_zoo_model(tmp_path, monkeypatch):
    """A branch file's name is trusted only through a current manifest: an unknown name, a
    path, or a name whose manifest is missing give False (the restart then checks the name
    against the zoo itself and refuses a model file the branch names)."""
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path / "empty"))
    assert not _fast_load.is_cached_zoo("belt", "Vb")
    assert not _fast_load.is_cached_zoo("../evil", "Vb")
    assert not _fast_load.is_cached_zoo("/tmp/model.py", "Vb")
