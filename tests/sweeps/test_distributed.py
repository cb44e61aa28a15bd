"""A real distributed sweep: `dask scheduler` and two `dask worker` processes on 127.0.0.1.

A 12-task continuation sweep of the belt (n = 10, H = 5) runs through ``frictionkit sweep
--scheduler``; one worker is SIGKILLed while tasks run, and all 12 results must arrive and
equal the serial runs bit for bit.  A second run of the same sweep into another store is
interrupted (SIGINT, as Ctrl-C) half-way; the store it leaves must be readable and the same
command must resume it (skipping the finished tasks) to the same 12 results.
"""
from __future__ import annotations

import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

from frictionkit.runtime.sweeps import SweepStore

from ._serial import assert_same_branch, serial_continuation

BIN = Path(sys.executable).parent
FN = np.linspace(1.0, 10.0, 12)
H = 12                  # tasks long enough (about 1 s each) for the signals to land mid-sweep


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stored(path):
    """Number of tasks in the store (0 while it does not exist yet; commits are atomic)."""
    try:
        with h5py.File(path, "r") as f:
            return len(f.get("tasks", {}))
    except (OSError, FileNotFoundError):
        return 0


def _wait_for(cond, timeout, what):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    log = tmp_path_factory.mktemp("dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=subprocess.DEVNULL,
                              stderr=open(log / "scheduler.log", "w"), env=env)]
    for k in range(2):
        procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-nanny",
                                       "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{k}"],
                                      stdout=subprocess.DEVNULL, stderr=open(log / f"worker{k}.log", "w"),
                                      env=env))
    from dask.distributed import Client
    with Client(address, timeout="30s") as c:
        c.wait_for_workers(2, timeout=60)
    yield address, procs
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture(scope="module")
def serial():
    return [serial_continuation("Vb", 0.05, 12.0, {"n": 10}, {"FN": fn}, H) for fn in FN]


def _command(address, out):
    return [str(BIN / "frictionkit"), "sweep", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
            "--set", "n=10", "--over", "FN=1:10:12", "-H", str(H), "--from-hopf", "1", "--out", str(out),
            "--scheduler", address, "--commit-seconds", "0", "-q"]


def _check_against_serial(out, serial):
    store = SweepStore(out)
    assert store.done == set(range(12))
    table = store.table()
    assert np.array_equal(table["FN"].to_numpy(), FN)
    for i, (eq, per) in enumerate(serial):
        assert_same_branch(store.branch(i, "equilibria"), eq)
        assert_same_branch(store.branch(i, "periodic"), per)
        assert table.loc[i, "n_hopf"] == len(eq.special_points("hopf"))


def test_killed_worker_then_interrupt_and_resume(cluster, serial, tmp_path):
    address, procs = cluster
    out = tmp_path / "a.h5"
    run = subprocess.Popen(_command(address, out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for(lambda: _stored(out) >= 2 or run.poll() is not None, 120, "the first tasks")
    assert run.poll() is None, run.stdout.read()
    procs[1].send_signal(signal.SIGKILL)              # a worker dies with tasks in flight
    procs[1].wait(10)
    text, _ = run.communicate(timeout=180)
    assert run.returncode == 0, text
    assert _stored(out) == 12
    _check_against_serial(out, serial)

    # Ctrl-C half-way through a second run (one worker left), then the same command resumes it
    out = tmp_path / "b.h5"
    run = subprocess.Popen(_command(address, out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for(lambda: _stored(out) >= 4 or run.poll() is not None, 120, "half of the tasks")
    run.send_signal(signal.SIGINT)
    text, _ = run.communicate(timeout=60)
    assert run.returncode != 0 and "interrupted" in text and "Traceback" not in text, text
    kept = _stored(out)
    assert 4 <= kept < 12
    res = subprocess.run(_command(address, out), capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{kept} of 12 task(s) already stored" in res.stdout
    assert f"{12 - kept} run now" in res.stdout
    _check_against_serial(out, serial)
