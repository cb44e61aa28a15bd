"""A task whose code fails (not a numerical failure) is retried once by Dask, then stored with
its error: the sweep goes on, the row says ``error`` with the exception, and a rerun does not
run it again.  An in-process cluster (threads) lets the test replace the task function."""
from __future__ import annotations

from collections import Counter

from dask.distributed import Client

import frictionkit.runtime.sweeps._run as sweep_run
from frictionkit.runtime.sweeps import sweep


CALLS = Counter()                       # the in-process worker shares this module's globals
_ORIGINAL = sweep_run.run_task


def flaky(spec_json, index):
    """The real task, except that task 1 raises an exception that is not a FrictionkitError."""
    CALLS[index] += 1
    if index == 1:
        raise RuntimeError("worker-side bug in task 1")
    return _ORIGINAL(spec_json, index)


def test_a_task_failing_twice_is_stored_with_its_error(tmp_path, monkeypatch):
    CALLS.clear()
    calls = CALLS
    monkeypatch.setattr(sweep_run, "run_task", flaky)
    out = tmp_path / "s.h5"
    kwargs = dict(task="orbit", fixed={"n": 10}, out=out, progress=False, echo=lambda s: None, harmonics=5)
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        res = sweep("belt", "Vb", 1.0, 1.0, {"FN": [3.0, 5.0, 7.0]}, client=client, **kwargs)
    assert calls == {0: 1, 1: 2, 2: 1}                      # retried once, then given up
    t = res.table
    assert list(t["status"])[1] == "error" and "worker-side bug in task 1" in t["message"][1]
    assert t["status"][0] != "error" and t["status"][2] != "error"
    assert not res.success and res.failed == 1 and "1 with an error" in res.message
    calls.clear()
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        again = sweep("belt", "Vb", 1.0, 1.0, {"FN": [3.0, 5.0, 7.0]}, client=client, **kwargs)
    assert calls == {} and again.ran == 0 and again.skipped == 3
