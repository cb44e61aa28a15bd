"""When ``continue --out`` writes checkpoints (issue 29): by time by default, so that a run
shorter than ``--checkpoint-seconds`` writes none (a step count forced a full save into a
2-second run), and still every ``--checkpoint-steps`` steps when that is given.  What is
counted is the files really written with ``status = "checkpoint"`` (``Branch.save`` observed),
the steps from the saved branch itself; the interrupt and SIGKILL behaviour is in
``tests/engine/test_restart_and_interrupts.py``.
"""
from click.testing import CliRunner
import pytest

from frictionkit.runtime.cli import main
from frictionkit.runtime.results._branch import Branch, load_branch

BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "-H", "10", "-q"]


@pytest.fixture
def saves(monkeypatch):
    """The status and length of every branch saved during the test."""
    seen = []
    original = Branch.save

    def save(self, path, extra=None):
        seen.append((self.status, len(self), self.counters.get("steps") if self.counters else None))
        return original(self, path, extra)
    monkeypatch.setattr(Branch, "save", save)
    return seen


def test_a_short_run_writes_no_checkpoint_by_default(tmp_path, saves):
    out = tmp_path / "run.h5"
    r = CliRunner().invoke(main, BELT + ["--out", str(out)])
    assert r.exit_code == 0, r.output
    assert not [s for s in saves if s[0] == "checkpoint"]
    per = load_branch(out)
    assert per.status == "equilibrium" and per.counters["steps"] > 20     # a run of many steps all the same


def test_checkpoint_steps_given_still_saves_every_that_many_steps(tmp_path, saves):
    out = tmp_path / "run.h5"
    r = CliRunner().invoke(main, BELT + ["--out", str(out), "--checkpoint-steps", "10"])
    assert r.exit_code == 0, r.output
    steps = load_branch(out).counters["steps"]
    checkpoints = [s for s in saves if s[0] == "checkpoint"]
    # one per 10 steps of each branch (the equilibria's too), at 10, 20, ... steps
    assert len(checkpoints) >= steps // 10
    assert all(s[2] > 0 and s[2] % 10 == 0 for s in checkpoints)


def test_checkpoint_seconds_zero_interval_saves_at_every_step(tmp_path, saves):
    out = tmp_path / "run.h5"
    r = CliRunner().invoke(main, BELT + ["--out", str(out), "--checkpoint-seconds", "1e-9"])
    assert r.exit_code == 0, r.output
    assert len([s for s in saves if s[0] == "checkpoint"]) >= load_branch(out).counters["steps"]
