"""Issue 28, item 4 of the issue: Dask faults during a sweep.

* A cluster without a live worker made a sweep wait for ever: now it stops after
  ``worker_timeout`` seconds with a :class:`ClusterError`, the store stays resumable.
* Tasks whose workers kept dying (``KilledWorker``, what an out-of-memory kill gives) were
  stored as errors that a rerun never retried: now they are not stored, and a rerun runs them.
* A local cluster whose workers cannot start ("Cluster failed to start", "Nanny failed to
  start") gave a traceback: now a clear error with a remedy.
"""
import threading
import time

import dask
import pytest

from frictionkit.runtime.errors import ClusterError
from frictionkit.runtime.sweeps import SweepStore, sweep

MODEL = '''
import os
from pathlib import Path

from frictionkit.modelspec import ModelSpec

try:                                     # on a Dask worker, while the marker exists: die like an OOM kill
    from distributed import get_worker
    get_worker()
    if Path({marker!r}).exists():
        os._exit(1)
except ValueError:                       # not on a worker (the client checks the model too)
    pass


def model():
    m = ModelSpec("killer_vdp", "van der Pol oscillator whose file kills the Dask worker that loads it")
    mu = m.parameter("mu", 0.5)
    c = m.parameter("c", 1.0)
    x, v = m.second_order("x", velocity="v")
    m.ode(v, mu * v - x - c * v**3)
    return m
'''


def test_no_live_worker_stops_the_sweep_and_the_store_resumes(tmp_path):
    from dask.distributed import Client, LocalCluster
    out = tmp_path / "s.h5"
    args = ("belt", "Vb", 1.0, 1.0, {"FN": [4.0, 5.0]})
    common = dict(fixed={"n": 10}, task="orbit", out=out, progress=False, echo=lambda s: None, harmonics=20)
    outcome = {}
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, Client(cluster) as client:
        def run():
            try:
                outcome["result"] = sweep(*args, client=client, **common)
            except Exception as exc:                 # noqa: BLE001  (inspected below)
                outcome["error"] = exc
        t0 = time.monotonic()
        thread = threading.Thread(target=run, daemon=True)
        with dask.config.set({"frictionkit.worker-timeout": 3}):     # what DASK_FRICTIONKIT__WORKER_TIMEOUT sets
            thread.start()
            thread.join(60)
        assert not thread.is_alive(), "the sweep without workers still waits after 60 s"
        assert time.monotonic() - t0 < 30
        error = outcome.get("error")
        assert isinstance(error, ClusterError), outcome
        assert "no live Dask worker for 3 s (2 task(s) waiting)" in str(error)
        assert f"kept in {out}" in str(error) and "rerun the same command to resume" in str(error)
        assert SweepStore(out).done == set()          # the store exists, holds nothing yet
        cluster.scale(1)                              # a worker appears: the same call resumes
        res = sweep(*args, client=client, worker_timeout=60, **common)
    assert res.status == "complete" and res.ran == 2 and SweepStore(out).done == {0, 1}


def test_tasks_lost_to_killed_workers_are_retried_on_resume(tmp_path):
    marker = tmp_path / "kill-workers"
    marker.touch()
    model = tmp_path / "killer_vdp.py"
    model.write_text(MODEL.format(marker=str(marker)))
    out = tmp_path / "s.h5"
    args = (str(model), "mu", 0.5, 0.5, {"c": [1.0, 2.0]})
    common = dict(task="simulate", out=out, workers=1, progress=False, echo=lambda s: None, t_end=30.0)
    res = sweep(*args, **common)
    assert res.status == "incomplete" and not res.success
    assert "2 task(s) lost with their workers (KilledWorker" in res.message and "rerun" in res.message
    assert SweepStore(out).done == set() and res.failed == 0      # nothing stored as an error
    marker.unlink()                               # the memory is back: the rerun runs them
    again = sweep(*args, **common)
    assert again.status == "complete" and again.ran == 2 and again.skipped == 0
    assert set(again.table["status"]) <= {"periodic", "equilibrium", "stick-slip", "not converged"}


@pytest.mark.parametrize("value", [0, -1, "soon", float("nan")])
def test_a_bad_worker_timeout_is_refused(value, tmp_path):
    from frictionkit.runtime.errors import InputError
    with pytest.raises(InputError, match="worker_timeout = .*seconds to wait for a live Dask worker"):
        sweep("belt", "Vb", 1.0, 1.0, {"FN": [5.0]}, fixed={"n": 10}, task="orbit", out=tmp_path / "s.h5",
              worker_timeout=value, progress=False, echo=lambda s: None)
    assert not (tmp_path / "s.h5").exists()


def test_a_local_cluster_that_cannot_start_is_a_clear_error(tmp_path):
    out = tmp_path / "s.h5"
    with dask.config.set({"temporary-directory": str(tmp_path / "no" / "such" / "folder")}):
        (tmp_path / "no").write_text("a file where a folder should be")
        with pytest.raises(ClusterError, match=r"local Dask cluster of 1 worker\(s\) did not start .*"
                                               r"temporary-directory"):
            sweep("belt", "Vb", 1.0, 1.0, {"FN": [5.0]}, fixed={"n": 10}, task="orbit", out=out, workers=1,
                  progress=False, echo=lambda s: None, harmonics=20)
    from filelock import FileLock
    with FileLock(f"{out}.lock", timeout=0):            # the failed sweep released its store
        pass
