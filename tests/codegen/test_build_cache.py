"""The build cache survives ordinary faults (issue 13): an unwritable cache folder, a corrupt
entry, a failed build, a machine without fcntl or without a C compiler."""
import json
import os
import subprocess
import sys
import warnings

import pytest

import frictionkit.codegen.build as build
from frictionkit.codegen import BuildError, compile_module

TINY = '''# cython: language_level=3
def answer(double x):
    return 2.0 * x + {k}
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_fallback_root", None)
    return tmp_path / "cache"


def forget(info):
    """Drop the imported extension so that the next call looks at the cache again."""
    name = os.path.basename(info["path"]).split(".")[0]
    sys.modules.pop(name, None)


def test_cold_build_says_so_and_warm_load_is_silent(cache, capfd):
    mod, info = compile_module(TINY.format(k=1), "tiny")
    assert mod.answer(1.0) == 3.0 and not info["cached"]
    assert "frictionkit: compiling model tiny (first use, about" in capfd.readouterr().err
    forget(info)
    mod, info = compile_module(TINY.format(k=1), "tiny")
    assert info["cached"] and mod.answer(1.0) == 3.0
    assert capfd.readouterr().err == ""


def _in_child(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage"])
def test_corrupt_entry_is_rebuilt_not_imported(cache, damage):
    # built and re-imported in child processes: this process never maps the file it damages
    # (importing a damaged extension would kill the importer with SIGBUS, not raise)
    code = ("from frictionkit.codegen import compile_module\n"
            f"m, info = compile_module({TINY.format(k=2)!r}, 'tiny')\n"
            "print(m.answer(1.0), info['cached'], info['path'])\n")
    answer, cached, path = _in_child(code)
    assert (answer, cached) == ("4.0", "False")
    data = open(path, "rb").read()
    with open(path, "wb") as fh:
        fh.write({"truncate": data[: len(data) // 3], "empty": b"", "garbage": b"\0" * len(data)}[damage])
    assert _in_child(code)[:2] == ["4.0", "False"]       # rebuilt
    assert _in_child(code)[:2] == ["4.0", "True"]        # and then trusted


def test_failed_build_is_remembered_until_the_inputs_change(cache, monkeypatch):
    with pytest.raises(BuildError, match=r"failed \(exit code \d+\); compiler output kept in .*build.log"):
        compile_module("def broken(:\n", "broken")
    failed = list(cache.glob("*/FAILED.json"))
    assert len(failed) == 1 and json.loads(failed[0].read_text())["log"].endswith("build.log")

    def no_compiler(*args, **kwargs):
        raise AssertionError("a remembered failure must not run the compiler again")
    monkeypatch.setattr(build.subprocess, "run", no_compiler)
    with pytest.raises(BuildError, match=r"failed before.*build.log; not retried until"):
        compile_module("def broken(:\n", "broken")
    # changed inputs (here the flags) are a new key: the compiler runs again
    with pytest.raises(AssertionError, match="must not run the compiler"):
        compile_module("def broken(:\n", "broken", compile_args=("-O0",))


def test_key_covers_directives_and_the_users_compiler_flags(monkeypatch):
    base = build.build_key(TINY)
    monkeypatch.setenv("CFLAGS", "-march=native")
    assert build.build_key(TINY) != base
    monkeypatch.delenv("CFLAGS")
    monkeypatch.setitem(build.COMPILER_DIRECTIVES, "boundscheck", True)
    assert build.build_key(TINY) != base
    monkeypatch.setitem(build.COMPILER_DIRECTIVES, "boundscheck", False)
    assert build.build_key(TINY) == base
    assert build.build_key(TINY, ("-O3",)) != base


def test_machine_specific_flags_are_in_the_key_and_never_unsafe(monkeypatch):
    """A cache shared by machines with and without AVX2 (or libmvec) must never hand one an
    extension built for the other (SIGILL, missing symbol): the machine's flags are in the key.
    -ffast-math (NaN/inf semantics, reassociation) and -march=native never appear."""
    args, link = build.build_flags()
    assert not any(f.startswith(("-ffast-math", "-Ofast", "-march=native")) for f in args)
    assert set(build.platform_args()[0]) <= set(args) and build.platform_args()[1] == link
    base = build.build_key(TINY)
    for other in ((("-DFK_LIBMVEC",), ("-lmvec",)), ((), ()), (("-mavx2", "-mfma", "-ffp-contract=off"), ())):
        if other != build.platform_args():
            monkeypatch.setattr(build, "platform_args", lambda o=other: o)
            assert build.build_key(TINY) != base, other
    monkeypatch.undo()
    assert build.build_key(TINY) == base


def test_unwritable_cache_builds_in_a_temporary_folder(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(blocker / "cache"))
    monkeypatch.setattr(build, "_fallback_root", None)
    with pytest.warns(RuntimeWarning, match=r"cache folder .*not_a_folder/cache cannot be written.*for this "
                                            r"process only"):
        mod, info = compile_module(TINY.format(k=5), "tiny")
    assert mod.answer(0.0) == 5.0 and not info["path"].startswith(str(blocker))
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # one warning per process
        mod, _ = compile_module(TINY.format(k=6), "tiny")
    assert mod.answer(0.0) == 6.0


def test_no_fcntl_and_no_compiler_still_runs_with_numpy(tmp_path):
    """A machine without fcntl (Windows) and without a C compiler: the package imports, the
    lock is portable, and a model runs on the NumPy backend after one warning."""
    code = "\n".join([
        "import sys, warnings",
        "sys.modules['fcntl'] = None          # import fcntl now raises ImportError",
        "import numpy as np",
        "import filelock",
        "from frictionkit.codegen import generate_module",
        "from frictionkit.runtime import load_model",
        "with warnings.catch_warnings(record=True) as w:",
        "    warnings.simplefilter('always')",
        "    mod = generate_module('belt', 'Vb', backend='auto')",
        "    again = generate_module('belt', 'Vb', backend='auto')",
        "print(mod.BACKEND, again.BACKEND, len([x for x in w if 'falling back to the NumPy' in str(x.message)]))",
        "print(filelock.FileLock.__name__)",
        "m = load_model('belt', continuation='Vb')",
        "print(m.module.BACKEND, float(np.abs(m.module.rhs(0.0, np.array([1e-3, 0.1]), m.param_vector())).max()) > 0)",
    ])
    env = dict(os.environ, FRICTIONKIT_CACHE=str(tmp_path / "cache"), CC="/nonexistent/cc",
               LDSHARED="/nonexistent/cc -shared")
    env.pop("FRICTIONKIT_REQUIRE_COMPILED", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "numpy numpy 1"
    assert lines[1] != "UnixFileLock"
    assert lines[2] == "numpy True"
    assert list((tmp_path / "cache").glob("*/FAILED.json"))
