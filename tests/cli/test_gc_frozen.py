"""``continue`` loads the runtime with the cyclic garbage collector paused and runs with those
objects frozen (``runtime/cli/_params.runtime_loaded_frozen``; issue 29: about 0.1 s of CPU of
the seed-000 diagram went to collections walking NumPy's, SciPy's and the runtime's objects).

Checked from the outside, with Python's own :mod:`gc` counters: during the continuation the
collector is on and the runtime's objects are frozen; once the command ends (normally or with
an error) nothing stays frozen, so a command run in-process many times leaks nothing; the
collector's state is the caller's again; at the interpreter's exit they are frozen again, so
that its final collections do not walk them.
"""
import gc
import os
from pathlib import Path
import subprocess
import sys

from click.testing import CliRunner
import pytest

import frictionkit.runtime.drivers._compose as compose
from frictionkit.runtime.cli import main
from frictionkit.runtime.results._branch import load_branch

BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "-H", "10", "-q"]


@pytest.fixture
def during(monkeypatch):
    """The collector's state seen from inside the continuation."""
    seen = {}
    original = compose.run_continuation

    def observed(*args, **kwargs):
        seen.update(enabled=gc.isenabled(), frozen=gc.get_freeze_count())
        return original(*args, **kwargs)
    monkeypatch.setattr(compose, "run_continuation", observed)
    return seen


def test_frozen_during_the_run_and_released_after(tmp_path, during):
    assert gc.get_freeze_count() == 0
    r = CliRunner().invoke(main, BELT + ["--out", str(tmp_path / "run.h5")])
    assert r.exit_code == 0, r.output
    assert during["enabled"] and during["frozen"] > 10_000     # NumPy, SciPy, the runtime: tens of thousands
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    assert load_branch(tmp_path / "run.h5").special_points("fold")


def test_released_after_an_error_and_the_callers_setting_kept(tmp_path):
    gc.disable()
    try:
        r = CliRunner().invoke(main, ["continue", "belt", "--param", "nosuch", "--start", "0.05", "--stop", "12"])
        assert r.exit_code == 1 and "nosuch" in r.output
        assert gc.get_freeze_count() == 0 and not gc.isenabled()      # left as the caller had it
    finally:
        gc.enable()


# the installed command run as it is, with an atexit handler registered before anything else
# (so it runs last, after the command's own): what the interpreter's finalization then sees
_LAST_AT_EXIT = """
import atexit, gc, runpy, sys
atexit.register(lambda: sys.stderr.write(f"FROZEN_AT_EXIT {gc.get_freeze_count()}\\n"))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_the_process_exits_with_the_objects_frozen(tmp_path):
    """The interpreter's final collections skip the frozen objects (0.2 s of CPU of the belt
    diagram otherwise); the command's file is complete and loads."""
    exe = Path(sys.executable).with_name("frictionkit")
    out = tmp_path / "run.h5"
    run = subprocess.run([sys.executable, "-c", _LAST_AT_EXIT, str(exe), *BELT, "--out", str(out)],
                         capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stderr.rsplit("FROZEN_AT_EXIT ", 1)[1].split()[0]) > 10_000
    assert load_branch(out).special_points("fold")
