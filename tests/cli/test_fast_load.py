"""A zoo model whose compiled module is cached loads without sympy and without codegen (issue 29):
``frictionkit continue belt ...`` on a warm cache imports neither, nor matplotlib, nor
scipy.optimize and scipy.interpolate (0.35 s of CPU: the runtime's root finder and interpolants
are ``runtime/_roots.py``), and computes
the same branch as the full path through codegen; the manifest that allows it
(``runtime/model/_fast_load.py``) is trusted only while everything it records holds.

The subprocess tests read ``sys.modules`` at the end of the installed script (not a time: the
CPU figures are in ``benchmarks/bench_cli.py``).
"""
from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest

from frictionkit.runtime.model import _fast_load

from ._script import WRAPPER, modules_of, run_script

# seed 000 §4.2 (n = 10, FN = 5 N) at H = 48, the smallest H whose fold is within 1e-8 of the
# converged value with a margin of two (benchmarks/bench_auto.py)
BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "-H", "48", "-q"]
AUTO_FOLD = 10.2874838639                   # AUTO-07p NTST 100 and 200, NCOL 4 (DESIGN §6)
AUTO_HOPF = [0.14173100578, 3.6555597017]   # AUTO-07p's HB labels on the equilibria
FORBIDDEN = ("sympy", "frictionkit.codegen", "matplotlib", "scipy.optimize", "scipy.interpolate")


# the full path: sympy and codegen imported first, the manifest never consulted
_FULL = """
import sys
import sympy, frictionkit.codegen
from frictionkit.runtime.model import _fast_load
_fast_load.cached_zoo_module = lambda name, continuation: None
from frictionkit.runtime.cli import main
main(sys.argv[1:], prog_name="frictionkit")
"""


def _run(argv, cwd, code=WRAPPER, script=True):
    return run_script(argv, cwd, code, script)


def _branch(path, group):
    with h5py.File(path, "r") as f:
        g = f[group]
        return {name: np.asarray(g[name]) for name in ("param", "solution") if name in g}


def _special(path, group, kind):
    from frictionkit.runtime import load_branch
    return [s.param for s in load_branch(path, group).special_points(kind)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The belt diagram two ways after the cache is filled: the warm run (its imports
    recorded) and the full path through codegen.  The cache and the manifest are filled (or
    found) by loading the model here, as the ``manifest`` fixture does: a whole first run of
    the command adds nothing to what is tested."""
    from frictionkit.runtime import load_model
    tmp = tmp_path_factory.mktemp("fast_load")
    load_model("belt", continuation="Vb")                  # writes (or finds) the manifest
    assert _fast_load.manifest_path("belt", "Vb").is_file(), "the first run wrote no manifest"
    warm = _run(BELT + ["--out", "warm.h5"], tmp)
    modules = modules_of(warm)
    _run(BELT + ["--out", "full.h5"], tmp, code=_FULL, script=False)
    return tmp, modules


def test_warm_belt_continue_imports_no_sympy_codegen_matplotlib_or_scipy_optimize(runs):
    _, modules = runs
    assert "frictionkit.runtime.model._fast_load" in modules and "click" in modules   # the log is read
    wrong = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN))
    assert not wrong, f"a warm `frictionkit continue belt` imports {wrong[:10]}"


def test_warm_and_full_paths_give_the_same_branches(runs):
    tmp, _ = runs
    for group in ("equilibria", "periodic"):
        warm, full = _branch(tmp / "warm.h5", group), _branch(tmp / "full.h5", group)
        assert warm.keys() == full.keys() and warm["param"].shape == full["param"].shape, group
        for name in warm:
            np.testing.assert_allclose(warm[name], full[name], rtol=1e-12, atol=1e-300, err_msg=f"{group}/{name}")


def test_warm_branch_matches_auto07p(runs):
    """Against AUTO-07p's published labels: both Hopf points of the equilibria (to 3e-10, the
    precision AUTO prints them with) and the fold of cycles (H = 48: within 1e-8)."""
    tmp, _ = runs
    assert _special(tmp / "warm.h5", "equilibria", "hopf") == pytest.approx(AUTO_HOPF, rel=3e-10)
    folds = _special(tmp / "warm.h5", "periodic", "fold")
    assert len(folds) == 1 and abs(folds[0] - AUTO_FOLD) / AUTO_FOLD < 1e-8


# ---- the manifest: trusted only while what it records holds ---------------------------------

@pytest.fixture()
def manifest(tmp_path, monkeypatch):
    """A copy of the warm cache's belt manifest in a cache folder of its own."""
    from frictionkit.runtime import load_model
    load_model("belt", continuation="Vb")                  # writes (or finds) the manifest
    source = _fast_load.manifest_path("belt", "Vb")
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path / "cache"))
    target = _fast_load.manifest_path("belt", "Vb")
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    assert _fast_load.cached_zoo_module("belt", "Vb") is not None
    return target


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("what", ["pyx source", "zoo source", "version", "python", "machine", "extension hash",
                                  "extension size", "format"])
def test_a_manifest_that_no_longer_holds_is_not_trusted(manifest, what):
    change = {
        "pyx source": lambda d: d["sources"].update(pyx="0" * 64),
        "zoo source": lambda d: d["sources"].update(zoo="0" * 64),
        "version": lambda d: d.update(frictionkit="0.0.0"),
        "python": lambda d: d.update(python="2.7"),
        "machine": lambda d: d.update(machine="another"),
        "extension hash": lambda d: d["extension"].update(sha256="0" * 64),
        "extension size": lambda d: d["extension"].update(size=d["extension"]["size"] + 1),
        "format": lambda d: d.update(format=0),
    }[what]
    _edit(manifest, change)
    assert _fast_load.cached_zoo_module("belt", "Vb") is None


def test_another_compiler_setting_is_not_trusted(manifest, monkeypatch):
    monkeypatch.setenv("CFLAGS", "-O3 -march=native")
    assert _fast_load.cached_zoo_module("belt", "Vb") is None


def test_a_damaged_manifest_or_binary_is_never_an_error(manifest, tmp_path):
    data = json.loads(manifest.read_text())
    copy = tmp_path / "kernels.so"
    shutil.copy(data["extension"]["path"], copy)
    _edit(manifest, lambda d: d["extension"].update(path=str(copy)))
    assert _fast_load.cached_zoo_module("belt", "Vb") is not None
    copy.write_bytes(copy.read_bytes()[: data["extension"]["size"] // 2])       # truncated: never imported
    assert _fast_load.cached_zoo_module("belt", "Vb") is None
    for text in ("", "{", "[]", '{"extension": 3}'):
        manifest.write_text(text)
        assert _fast_load.cached_zoo_module("belt", "Vb") is None


@pytest.mark.parametrize("name", ["../belt", "belt.py", "no_such_model", "", None])
def test_only_zoo_names_with_a_manifest_are_looked_up(name):
    assert _fast_load.cached_zoo_module(name, "Vb") is None


def test_the_codegen_rules_repeated_here_are_codegens(tmp_path, monkeypatch):
    """The cache folder and the joined module: the same as codegen's."""
    from frictionkit.codegen import cache_dir, generate_module
    for env in ({"FRICTIONKIT_CACHE": str(tmp_path / "a")}, {"XDG_CACHE_HOME": str(tmp_path / "b")}, {}):
        for name in ("FRICTIONKIT_CACHE", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert _fast_load.cache_root() == cache_dir()
    monkeypatch.undo()
    full = generate_module("belt", "Vb")
    fast = _fast_load.cached_zoo_module("belt", "Vb")
    assert fast is not None and full.BACKEND == fast.BACKEND == "cython"
    assert fast.__name__ == full.__name__ and fast.__file__ == full.__file__
    names = {k for k in vars(full) if not k.startswith("__")}
    assert names == {k for k in vars(fast) if not k.startswith("__")}
    for k in names:
        assert getattr(fast, k) is getattr(full, k) or k == "BACKEND", k


def test_load_model_takes_the_fast_path_and_checks_parameters(manifest):
    from frictionkit.runtime import InputError, load_model
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    assert m.module.__name__.endswith("__cython") and m.source == "belt" and m.params == {"n": 10, "FN": 5}
    with pytest.raises(InputError, match="nope"):
        load_model("belt", continuation="Vb", nope=1.0)
