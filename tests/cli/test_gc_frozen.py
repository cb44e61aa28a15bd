"""``continue`` loads the runtime with the cyclic garbage collector paused and runs with those
objects frozen (``runtime/cli/_params.runtime_loaded_frozen``; issue 29: about 0.1 s of CPU of
the seed-000 diagram went to collections walking NumPy's, SciPy's and the runtime's objects).

Checked from the outside, with Python's own :mod:`gc` counters: during the continuation the
collector is on and the runtime's objects are frozen; once the command ends (normally or with
an error) nothing stays frozen, so a command run in-process many times leaks nothing; the
collector's state is the caller's again.
"""
import gc

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
