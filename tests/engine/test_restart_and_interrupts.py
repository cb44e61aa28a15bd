"""Restart from a saved point and interrupts in a real process (issue 14).

The restarted branch is checked against an independent, uninterrupted run of the seed-000
belt (n = 10, FN = 5 N) at the same number of harmonics: both must reach the same fold.
"""
import os
from pathlib import Path
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

from frictionkit.runtime import (equilibrium_branch, load_branch, load_model, periodic_branch,
                                 periodic_start_from_hopf)
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._atomic import WriteFailed

OPTS = dict(stability=False, branch_points=False)


@pytest.fixture(scope="module")
def belt_start():
    warnings.simplefilter("ignore", RuntimeWarning)
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    eq = equilibrium_branch(m, 0.05, 12)
    return periodic_start_from_hopf(m, eq.special_points("hopf")[0], 10)


@pytest.fixture(scope="module")
def hbm_start():
    """The frequency-domain HBM start, H = 10 (its fold is 0.5 m/s too low)."""
    warnings.simplefilter("ignore", RuntimeWarning)
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    eq = equilibrium_branch(m, 0.05, 12)
    return periodic_start_from_hopf(m, eq.special_points("hopf")[0], 10, discretization="hbm")


@pytest.fixture(scope="module")
def newton_fold(belt_start):
    """The fold of an uninterrupted pseudo-arclength run (the independent reference)."""
    disc, Z, d = belt_start
    return _fold(periodic_branch(disc, Z, 0.05, 12, d, method="newton", options=OPTS))


def _fold(br):
    folds = br.special_points("fold")
    assert folds, br
    return folds[0].param


def test_restart_reaches_the_fold_of_an_uninterrupted_run(belt_start, tmp_path):
    disc, Z, d = belt_start
    full = periodic_branch(disc, Z, 0.05, 12, d, options=OPTS)
    part = periodic_branch(disc, Z, 0.05, 12, d, options=dict(OPTS, max_steps=8))
    # out of steps is not a success (issue 12 item 5), with a message that says so
    assert part.status == "max_steps" and not part.success and "max_steps = 8" in part.message
    assert not part.special_points("fold")
    part.save(tmp_path / "part.h5")
    again = load_branch(tmp_path / "part.h5").restart(options=OPTS)
    assert _fold(again) == pytest.approx(_fold(full), rel=1e-8)
    # from an earlier point, with more harmonics: the fold moves towards the converged one
    # (10.2874838639 m/s, the harmonic balance at H >= 100 to all printed digits)
    more = load_branch(tmp_path / "part.h5").restart(3, harmonics=14, options=OPTS)
    assert abs(_fold(more) - 10.2874838639) < abs(_fold(full) - 10.2874838639)


def test_restart_refuses_a_changed_model(belt_start, tmp_path):
    disc, Z, d = belt_start
    part = periodic_branch(disc, Z, 0.05, 12, d, options=dict(OPTS, max_steps=3))
    part.provenance["model_hash"] = "0" * 16
    part.save(tmp_path / "p.h5")
    with pytest.raises(InputError, match="has changed"):
        load_branch(tmp_path / "p.h5").restart()
    with pytest.raises(InputError, match="restart index 99"):
        load_branch(tmp_path / "p.h5").restart(99)


def _env():
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


# the continuation is interrupted by the process itself at its 60th periodic point (PHASE_RUNNER
# below): deterministic, however fast the machine
CONTINUATION = ("--engine", "newton", "--max-steps", 400, "--checkpoint-steps", 50)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_signal_keeps_the_branch_and_restart_reaches_the_fold(sig, tmp_path, newton_fold):
    """A real signal during the periodic continuation (after its first checkpoint): exit 130,
    the branch on disk and loadable; restarted, it reaches the fold of an uninterrupted run."""
    out = tmp_path / "run.h5"
    res = _run_interrupted("continuation", out, sig, CONTINUATION)
    assert res.returncode == 130, res.stderr
    assert "Traceback" not in res.stderr
    br = load_branch(out)
    assert br.status == "interrupted" and not br.success and len(br) >= 59
    assert _fold(br.restart(options=OPTS)) == pytest.approx(newton_fold, rel=1e-6)


def test_sigkill_then_restart_from_checkpoint(tmp_path, newton_fold):
    out = tmp_path / "run.h5"
    res = _run_interrupted("continuation", out, "SIGKILL", CONTINUATION)
    assert res.returncode == -signal.SIGKILL
    br = load_branch(out)                   # a complete checkpoint, never a half-written file
    assert br.status == "checkpoint" and len(br) >= 50
    assert _fold(br.restart(options=OPTS)) == pytest.approx(newton_fold, rel=1e-6)


def test_kill_during_save_keeps_previous_file(tmp_path):
    """SIGKILL a process in the middle of writing: the previous file is intact."""
    target = tmp_path / "b.h5"
    target.write_bytes(b"previous")
    code = ("import sys, time\nfrom frictionkit.runtime.results._atomic import atomic_path\n"
            f"with atomic_path({str(target)!r}) as tmp:\n"
            "    open(tmp, 'wb').write(b'half'); print('writing', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait(timeout=30)
    assert target.read_bytes() == b"previous"


# SIGINT delivered by the process itself the moment a phase begins: the named function is
# wrapped so that its first call (on the periodic branch) sends SIGINT, then runs as usual
PHASE_RUNNER = """
import os, signal, sys
import frictionkit.runtime.analysis._pass as analysis_pass
import frictionkit.runtime.analysis._stability as stability
import frictionkit.runtime.engine._run as engine_run
import frictionkit.runtime.results._branch as results_branch
from frictionkit.runtime.engine._recorder import Recorder

SIG = getattr(signal, os.environ.get("FK_TEST_SIGNAL", "SIGINT"))

def interrupt_on_entry(owner, name, when=lambda *a: True):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if when(*args):
            setattr(owner, name, original)
            os.kill(os.getpid(), SIG)
        return original(*args, **kwargs)
    setattr(owner, name, wrapper)

periodic = lambda disc, *rest: disc.size > disc.model.N + 1     # not the equilibria's call
phase = sys.argv[1]
if phase == "fold location":
    interrupt_on_entry(engine_run, "locate_folds", periodic)
elif phase == "stability":
    interrupt_on_entry(analysis_pass, "branch_stability")
elif phase == "crossings":
    interrupt_on_entry(stability, "_locate_crossings")
elif phase == "save":
    interrupt_on_entry(results_branch.Branch, "_write_group")
elif phase == "continuation":      # at the 60th point of the periodic branch (after a checkpoint at 50 steps)
    interrupt_on_entry(Recorder, "add", lambda rec, *a: periodic(rec.disc) and len(rec.points) >= 60)
from frictionkit.runtime.cli import main
main(sys.argv[2:], prog_name="frictionkit")
"""


def _run_interrupted(phase, out, sig="SIGINT", extra=("--checkpoint-steps", 0, "--checkpoint-seconds", 0)):
    args = ["continue", "belt", "--param", "Vb", "--start", 0.05, "--stop", 12, "--set", "n=10", "FN=5",
            "--from-hopf", 1, "-H", 10, "--out", out, *extra, "-q"]
    return subprocess.run([sys.executable, "-c", PHASE_RUNNER, phase, *map(str, args)],
                          env=dict(_env(), FK_TEST_SIGNAL=sig), capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("phase, says", [("fold location", "fold location"), ("stability", "analysis"),
                                         ("crossings", "analysis")])
def test_sigint_in_a_phase_keeps_the_branch(phase, says, tmp_path):
    """SIGINT as the phase begins: exit 130, both branches on disk, the periodic one
    ``interrupted`` with a message naming the phase, the columns done finite, the rest NaN."""
    out = tmp_path / "run.h5"
    res = _run_interrupted(phase, out)
    assert res.returncode == 130, res.stderr
    assert "Traceback" not in res.stderr and says in res.stderr
    eq, per = load_branch(out, "equilibria"), load_branch(out)
    assert eq.success and np.all(np.isfinite(eq.stable))
    assert per.status == "interrupted" and not per.success and says in per.message
    assert len(per) > 100 and np.all(np.isfinite(per.param))
    if phase == "crossings":      # the multipliers were done: every point has its stable flag
        assert np.all(np.isfinite(per.stable)) and np.any(np.isfinite(per.max_multiplier))
    else:                         # interrupted before the stability pass: NaN everywhere
        assert np.all(np.isnan(per.stable)) and per.multipliers is None


def test_sigint_during_the_save_leaves_a_complete_file(tmp_path):
    """SIGINT while the run file is being written (after its first group): the write
    completes and replaces the previous file whole; exit 130 naming the save."""
    out = tmp_path / "run.h5"
    out.write_bytes(b"the previous file")
    res = _run_interrupted("save", out)
    assert res.returncode == 130, res.stderr
    assert "Traceback" not in res.stderr and "during the save" in res.stderr
    per = load_branch(out)
    assert per.status == "equilibrium" and per.special_points("fold")     # the complete run
    assert load_branch(out, "equilibria").special_points("hopf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]       # no temporary file left


# the converged fold of the seed-000 belt (n = 10, FN = 5 N): AUTO-07p, NTST 100 and 200 agree
# to all printed digits (benchmarks/results/auto.json, README "Comparison with AUTO-07p")
AUTO_FOLD = 10.2874838639


@pytest.mark.parametrize("method, sizes, tol", [
    # the recast collocation 100 x 3 lies within 1e-6 of the converged fold (tests/engine/
    # test_engines.py, started there from a shooting orbit); measured here 7.5e-8
    ("collocation-recast", dict(intervals=100, degree=3), 1e-6),
    # the collocation of the states 100 x 4 (AUTO's mesh, NTST 100 NCOL 4): 2.5e-10 relative
    # from the converged fold in tests/discretizations/test_state_collocation.py; measured here 2.5e-9
    ("collocation", dict(intervals=100, degree=4), 1e-8),
    # the harmonic balance of the same orbit at H = 80 is 1.5e-9 from AUTO (benchmarks/results/
    # runtime.json, hbm_H80): truncation below 1e-8 there; measured here 3e-11
    ("aft", dict(harmonics=80), 1e-8),
])
def test_restart_with_another_method_reaches_the_converged_fold(method, sizes, tol, hbm_start, tmp_path):
    """An HBM H = 10 branch (fold 0.5 m/s too low) restarted before its fold in another
    discretization: the converted orbit is corrected and continued to the converged fold."""
    disc, Z, d = hbm_start
    hbm = periodic_branch(disc, Z, 0.05, 12, d, options=OPTS)
    assert abs(_fold(hbm) - AUTO_FOLD) > 0.1
    hbm.save(tmp_path / "h10.h5")
    index = int(np.flatnonzero(hbm.param > 9.0)[0])          # on the upper branch, before the fold
    assert index < hbm.special_points("fold")[0].index
    again = load_branch(tmp_path / "h10.h5").restart(index, stop=12, discretization=method, options=OPTS,
                                                     **sizes)
    assert again.provenance["discretization"] == {"collocation": "collocation-states"}.get(method, method)
    assert again.param[0] == pytest.approx(hbm.param[index], abs=1e-12)   # corrected at fixed Vb
    assert abs(_fold(again) - AUTO_FOLD) < tol


def _cli_run(*args):
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    return CliRunner().invoke(main, [str(a) for a in args])


def test_append_keeps_the_file_and_adds_a_group(tmp_path, monkeypatch):
    """``--restart FILE@I --append``: the run file keeps its groups (``load_branch`` returns what
    it returned), the restarts are ``restart_1``, ``restart_2``; a failed append changes nothing."""
    import h5py
    from frictionkit.runtime.results import load_run
    from frictionkit.runtime.results._branch import Branch
    out = tmp_path / "run.h5"
    res = _cli_run("continue", "belt", "--param", "Vb", "--start", 0.05, "--stop", 12, "--set", "n=10", "FN=5",
                   "--from-hopf", 1, "-H", 10, "--method", "hbm", "--out", out, "-q")
    assert res.exit_code == 0, res.output
    before = load_branch(out)
    res = _cli_run("continue", "--restart", f"{out}@60", "--method", "aft", "-H", 80, "--stop", 12,
                   "--append", "-q")
    assert res.exit_code == 0, res.output
    assert "restart_1" in res.output
    main, first = load_branch(out), load_branch(out, "restart_1")
    assert np.array_equal(main.param, before.param) and main.provenance["discretization"] == "hbm"
    assert first.provenance["discretization"] == "aft" and first.provenance["restarted_from"] == "periodic@60"
    assert first.param[0] == pytest.approx(before.param[60], abs=1e-12)
    # AFT H = 80: AUTO's fold to 1e-8 (see the test above), far from the H = 10 fold
    assert abs(_fold(first) - AUTO_FOLD) < 1e-8 and abs(_fold(main) - AUTO_FOLD) > 0.1
    again = load_branch(out, "restart_1").restart(5, stop=12, options=OPTS, append_to=out)
    assert [b.provenance["group"] for b in load_run(out)] == ["equilibria", "periodic", "restart_1", "restart_2"]
    assert load_branch(out, "restart_2").provenance["restarted_from"] == "restart_1@5"
    assert len(load_branch(out, "restart_2")) == len(again)
    snapshot = out.read_bytes()

    def broken(self, f, extra=None):
        f.attrs["half"] = 1
        raise OSError("disk full")
    monkeypatch.setattr(Branch, "_write_group", broken)
    # the system's OSError reaches the user as WriteFailed naming the file (results/_atomic.py)
    with pytest.raises(WriteFailed, match=r"cannot write .*run\.h5: disk full"):
        first.restart(5, stop=12, options=OPTS, append_to=out)
    assert out.read_bytes() == snapshot
    with h5py.File(out, "r") as f:
        assert "restart_3" not in f
