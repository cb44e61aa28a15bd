"""Restart from a saved point and interrupts in a real process (issue 14).

The restarted branch is checked against an independent, uninterrupted run of the seed-000
belt (n = 10, FN = 5 N) at the same number of harmonics: both must reach the same fold.
"""
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from frictionkit.runtime import (equilibrium_branch, load_branch, load_model, periodic_branch,
                                 periodic_start_from_hopf)
from frictionkit.runtime.errors import InputError

OPTS = dict(stability=False, branch_points=False)


@pytest.fixture(scope="module")
def belt_start():
    warnings.simplefilter("ignore", RuntimeWarning)
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    eq = equilibrium_branch(m, 0.05, 12)
    return periodic_start_from_hopf(m, eq.special_points("hopf")[0], 10)


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
    assert part.status == "max_steps" and not part.special_points("fold")
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


def _wait_for_periodic_checkpoint(out, proc):
    """Wait until ``out`` holds a checkpoint of the periodic branch (the equilibria come first)."""
    t0 = time.monotonic()
    while proc.poll() is None and time.monotonic() - t0 < 120:
        if out.exists():
            try:
                if load_branch(out).kind == "periodic":
                    return
            except InputError:
                pass
        time.sleep(0.005)


def _cli(*args):
    exe = Path(sys.executable).with_name("frictionkit")
    return [str(exe), *map(str, args)]


def _env():
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_keeps_the_branch_and_restart_reaches_the_fold(sig, tmp_path, newton_fold):
    """A real signal during the periodic continuation (after its first checkpoint): exit 130,
    the branch on disk and loadable; restarted, it reaches the fold of an uninterrupted run."""
    out = tmp_path / "run.h5"
    proc = subprocess.Popen(_cli("continue", "belt", "--param", "Vb", "--start", 0.05, "--stop", 12,
                                 "--set", "n=10", "FN=5", "--from-hopf", 1, "-H", 10, "--engine", "newton", "--max-steps", 400,
                                 "--out", out, "--checkpoint-steps", 50, "-q"),
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_periodic_checkpoint(out, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    br = load_branch(out)
    assert br.status == "interrupted" and not br.success
    assert _fold(br.restart(options=OPTS)) == pytest.approx(newton_fold, rel=1e-6)


def test_sigkill_then_restart_from_checkpoint(tmp_path, newton_fold):
    out = tmp_path / "run.h5"
    proc = subprocess.Popen(_cli("continue", "belt", "--param", "Vb", "--start", 0.05, "--stop", 12,
                                 "--set", "n=10", "FN=5", "--from-hopf", 1, "-H", 10, "--engine", "newton", "--max-steps", 400,
                                 "--out", out, "--checkpoint-steps", 50, "-q"),
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_periodic_checkpoint(out, proc)
    proc.kill()
    proc.communicate(timeout=60)
    br = load_branch(out)                   # a complete checkpoint, never a half-written file
    if br.status != "checkpoint":
        pytest.skip("the run finished before the kill")
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
