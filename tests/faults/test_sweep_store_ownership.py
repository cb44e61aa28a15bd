"""Issue 28, item 3: a sweep store belongs to one sweep.

Two sweeps with different grids writing one new ``--out`` both reported success and left a
mixed store (the first one's spec and tasks, the other's ``/table``).  Now the writer holds an
exclusive lock (filelock) for the whole sweep, each commit checks the stored spec before it
appends, and ``/table`` is rebuilt from the stored tasks.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import h5py
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.sweeps import SweepSpec, SweepStore, sweep


def _spec(values, model_hash="abc"):
    return SweepSpec.build("belt", model_hash, "Vb", 0.05, 12, {"FN": values}, {"n": 10}, harmonics=5)


def _result(spec, index, status="failed", message=""):
    """What ``run_task`` returns, without branches (the store keeps the row as given)."""
    return {"index": index, "branches": {},
            "row": {**spec.points[index], "status": status, "message": message or f"task {index}"}}


def _stored(path):
    """``(spec key, {index: row} under /tasks, {index: status} in /table)`` read with h5py."""
    with h5py.File(path, "r") as f:
        key = str(f.attrs["sweep_key"])
        tasks = {int(k): json.loads(str(g.attrs["row"])) for k, g in f["tasks"].items()}
        t = f["table"]
        table = dict(zip(t["task"][()].tolist(), t["status"].asstr()[()].tolist())) if "task" in t else {}
    return key, tasks, table


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    out = tmp_path / "s.h5"
    a, b = _spec([1.0, 2.0]), _spec([1.0, 2.0, 3.0])
    first = SweepStore(out, a)
    with pytest.raises(InputError, match="another sweep is writing this store now"):
        SweepStore(out, b)
    with pytest.raises(InputError, match="another sweep is writing"):
        SweepStore(out, a)                   # the same sweep twice at once: duplicate work
    first.commit([_result(a, 0)])
    first.close()
    with SweepStore(out, a) as again:        # closed: the same sweep resumes
        assert again.done == {0}
    assert SweepStore(out).done == {0}       # readers take no lock


HOLDER = """
import sys, time
from frictionkit.runtime.sweeps import SweepSpec, SweepStore
spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10}, harmonics=5)
store = SweepStore(sys.argv[1], spec)
store.commit([{"index": 0, "branches": {}, "row": {"FN": 1.0, "status": "failed", "message": "m"}}])
print("holding", flush=True)
time.sleep(600)
"""


def test_the_lock_holds_across_processes_and_dies_with_its_writer(tmp_path):
    out = tmp_path / "s.h5"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        # the command line refuses before it starts a cluster or computes anything
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-c", "from frictionkit.runtime.cli import main; main()", "sweep",
                            "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "--over",
                            "FN=1:10:3", "-H", "5", "--out", str(out), "-q"], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 1, r.stderr
        assert "another sweep is writing this store now" in r.stderr and "Traceback" not in r.stderr
        assert "Dask" not in r.stdout and time.monotonic() - t0 < 60
        assert _stored(out)[1].keys() == {0}
    finally:
        holder.send_signal(signal.SIGKILL)           # a writer that dies without closing
        holder.wait()
    with SweepStore(out, _spec([1.0, 2.0])) as resumed:      # the system released its lock
        assert resumed.done == {0}


def test_a_commit_checks_the_stored_spec_before_appending(tmp_path):
    """A writer that lost the store to another sweep (a writer without the lock: another
    frictionkit version, a file system without locks) is refused before it appends."""
    out = tmp_path / "s.h5"
    a, b = _spec([1.0, 2.0]), _spec([1.0, 2.0, 3.0])
    first = SweepStore(out, a)
    first.close()
    with SweepStore(out, b) as second:
        second.commit([_result(b, 0), _result(b, 2)])
    with pytest.raises(InputError, match=r"belongs to another sweep .*it holds \[.*FN \(3 values 1\.\.3\).*\], "
                                         r"this sweep is \[.*FN \(2 values 1\.\.2\)"):
        first.commit([_result(a, 1)])
    key, tasks, table = _stored(out)
    assert key == b.key and tasks.keys() == {0, 2} and table.keys() == {0, 2}
    assert all(row["FN"] in (1.0, 3.0) for row in tasks.values())


def test_the_table_is_rebuilt_from_the_stored_tasks(tmp_path):
    out = tmp_path / "s.h5"
    a = _spec([1.0, 2.0, 3.0])
    with SweepStore(out, a) as store:
        store.commit([_result(a, 0, "ok")])
        store.commit([_result(a, 0, "error")])          # a duplicate delivery: the first one stays
        assert store.table().loc[0, "status"] == "ok"
    assert _stored(out)[2] == {0: "ok"} and _stored(out)[1][0]["status"] == "ok"
    # two writers of the same sweep, one after the other: the table holds every stored task
    first = SweepStore(out, a)
    first.close()
    with SweepStore(out, a) as second:
        second.commit([_result(a, 1, "ok")])
    first.commit([_result(a, 2, "ok")])
    _, tasks, table = _stored(out)
    assert tasks.keys() == table.keys() == {0, 1, 2}
    assert sorted(first.table().index) == [0, 1, 2]


def test_two_sweeps_with_different_grids_on_one_new_out(tmp_path, monkeypatch):
    """The issue's case, end to end: a second sweep with another grid starts on the same new
    ``--out`` after the first opened it and before the file exists (the first is held at its
    first commit until the second is done).  The second is refused before it runs a task; once
    the first is done it is refused again (the store is the first one's, both named), and the
    store holds the first sweep only."""
    from dask.distributed import Client
    out = tmp_path / "s.h5"
    common = dict(fixed={"n": 10}, task="orbit", out=out, progress=False, echo=lambda s: None, harmonics=40)
    grid_a, grid_b = {"FN": [3.0, 4.0, 5.0]}, {"FN": [7.0, 8.0]}
    opened, second_done, first = threading.Event(), threading.Event(), {}
    commit = SweepStore.commit

    def held_commit(self, results):
        if not results and not opened.is_set() and self.spec.names == ["FN"] and self.spec.over[0][1][0] == 3.0:
            opened.set()                               # the first sweep has its store, no file yet
            second_done.wait(300)
        return commit(self, results)
    monkeypatch.setattr(SweepStore, "commit", held_commit)

    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        def run_first():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                first["result"] = sweep("belt", "Vb", 1.0, 1.0, grid_a, client=client, **common)
        thread = threading.Thread(target=run_first)
        thread.start()
        assert opened.wait(300)
        assert not out.exists()
        try:
            with pytest.raises(InputError, match="another sweep is writing this store now"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    sweep("belt", "Vb", 1.0, 1.0, grid_b, client=client, **common)
        finally:
            second_done.set()
            thread.join(300)
        with pytest.raises(InputError, match=r"belongs to another sweep.*FN \(3 values 3\.\.5\).*FN \(2 values 7"):
            sweep("belt", "Vb", 1.0, 1.0, grid_b, client=client, **common)
    res = first["result"]
    assert res.status == "complete" and res.table["FN"].tolist() == [3.0, 4.0, 5.0]
    key, tasks, table = _stored(out)
    assert key == res.spec.key and tasks.keys() == table.keys() == {0, 1, 2}
    assert sorted(row["FN"] for row in tasks.values()) == [3.0, 4.0, 5.0]
    assert os.path.exists(f"{out}.lock")          # the lock file stays (flock locks are released, not deleted)
