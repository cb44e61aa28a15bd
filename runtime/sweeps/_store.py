"""The sweep's one HDF5 store: written atomically, read back as a table and as branches.

Layout (``format = "frictionkit-sweep"``, ``format_version = 1``; read by
``results/_sweeps.read_sweep_store``, the one reader, which the report uses too)::

    /                     attrs: format, format_version, spec (the sweep's JSON, see _spec),
                                 sweep_key, grid_key, model_hash, model, param, task, n_tasks
    /tasks/000017/        one group per finished task (zero-padded task index)
        attrs: index, row (JSON of the summary row: grid values, status, message, columns),
                                 seconds (the task's time on its worker)
        equilibria/       a branch, in exactly the layout of Branch.save (results/_branch.py)
        periodic/         (continuation tasks that found a Hopf point)
        orbit/            (orbit tasks)
    /table/               the summary table, one dataset per column (task order; strings UTF-8),
                          attrs: columns (JSON list, in order); rewritten with every commit

Every commit copies the store to a temporary file in the same folder, adds the new tasks,
rewrites ``/table`` and replaces the store with ``os.replace``: a reader, a crash or a
Ctrl-C only ever sees a complete store.  The client commits in batches (see
``SweepStore.commit``), so the copying stays a small part of the run even for large stores.

A store belongs to one sweep.  Its writer holds an exclusive lock (:mod:`filelock`, the file
``<store>.lock`` beside it, released by the system if the writer dies) from the moment it
opens the store until it closes it, so a second sweep on the same ``--out`` is refused before
it computes anything; every commit checks, in the copy it writes, that the stored spec is its
own before appending; and ``/table`` is rebuilt from the rows stored under ``/tasks``, never
from the writer's memory, so the table and the tasks always agree.
"""
from __future__ import annotations

import json
from pathlib import Path
import shutil
import time

from filelock import FileLock, Timeout
import h5py
import numpy as np
import pandas as pd

from ..errors import InputError
from ..results._atomic import WriteFailed, atomic_path
from ..results._branch import Branch
from ..results._sweeps import FORMAT, FORMAT_VERSION, read_sweep_store
from ._spec import SweepSpec

__all__ = ["SweepStore", "FORMAT"]


def _name(index: int) -> str:
    return f"{int(index):06d}"


def _describe(spec: SweepSpec) -> str:
    """One line naming a sweep: its model, range, grid and task (what tells two sweeps apart)."""
    grid = " x ".join(f"{name} ({len(values)} values {values[0]:g}..{values[-1]:g})" for name, values in spec.over)
    return (f"model {spec.model_label!r} (hash {spec.model_hash}), {spec.param} from {spec.start:g} to "
            f"{spec.stop:g}, grid {grid}, task {spec.task}")


class SweepStore:
    """The HDF5 store of one sweep at ``path`` (created on first commit).

    Parameters
    ----------
    path : path
    spec : SweepSpec, optional
        The sweep about to run: the store is opened to write, under an exclusive lock held
        until :meth:`close` (or the end of a ``with`` block); another sweep's store, or a
        store another writer holds, is refused (:class:`InputError` naming both).  Without
        it, the store is opened to read.
    """

    def __init__(self, path, spec: SweepSpec | None = None):
        self.path = Path(path)
        self.spec = spec
        self.rows: dict[int, dict] = {}
        self._lock = None if spec is None else self._acquire()
        try:
            if self.path.exists():
                self._read(spec)
            elif spec is None:
                raise InputError(f"{self.path}: no such sweep store")
            if self.spec is None:
                raise InputError(f"{self.path}: not a frictionkit sweep store")
        except BaseException:
            self.close()
            raise
        self.commit_seconds = 0.0        # time of the last commit's copy + write

    def _acquire(self, lock: FileLock | None = None) -> FileLock:
        """The writer's lock on the store, taken now without waiting (again, if ``lock``)."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        lock = lock or FileLock(lock_path, timeout=0)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except Timeout:
            raise InputError(f"--out {self.path}: another sweep is writing this store now (it holds {lock_path}); "
                             "wait for it to finish, or give another --out") from None
        except OSError as exc:
            raise InputError(f"--out {self.path}: cannot lock the store ({lock_path}: {exc.strerror or exc}); "
                             "choose a writable folder") from None
        return lock

    def close(self) -> None:
        """Release the writer's lock (a store opened to read has none)."""
        if self._lock is not None:
            self._lock.release(force=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check_spec(self, stored: SweepSpec, spec: SweepSpec) -> None:
        """Refuse a store of another sweep, naming what differs and both sweeps."""
        if stored.key == spec.key:
            return
        if stored.model_hash != spec.model_hash or stored.model != spec.model:
            what = (f"model {stored.model_label!r} (hash {stored.model_hash}), not "
                    f"{spec.model_label!r} (hash {spec.model_hash})")
        else:
            what = "a different grid, parameter range, task or options"
        raise InputError(f"--out {self.path}: this store belongs to another sweep ({what}): it holds "
                         f"[{_describe(stored)}], this sweep is [{_describe(spec)}]; give another --out, or "
                         "delete the file to start afresh")

    def _stored_spec(self, text: str) -> SweepSpec:
        """The sweep whose JSON ``text`` the store holds (a damaged one named as such)."""
        try:
            return SweepSpec.from_json(text)
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise InputError(f"--out {self.path}: the sweep stored in this file is damaged ({type(exc).__name__}: "
                             f"{exc}); give another --out, or delete the file to start afresh") from None

    def _read(self, spec):
        stored_json, rows = read_sweep_store(self.path)
        stored = self._stored_spec(stored_json)
        if spec is not None:
            self._check_spec(stored, spec)
        self.spec = stored
        self.rows.update(rows)

    # -- state --------------------------------------------------------------------------
    @property
    def done(self) -> set:
        """Indices of the tasks stored (finished, numerical failures and errors alike)."""
        return set(self.rows)

    def table(self) -> pd.DataFrame:
        """The summary table: one row per stored task, in task order, ``task`` as index."""
        if not self.rows:
            return pd.DataFrame(columns=["task", *self.spec.names, "status", "message"]).set_index("task")
        df = pd.DataFrame([{"task": i, **self.rows[i]} for i in sorted(self.rows)]).set_index("task")
        first = [c for c in (*self.spec.names, "status", "message") if c in df.columns]
        return df[first + [c for c in df.columns if c not in first]]

    def branch(self, index: int, name: str = "periodic") -> Branch:
        """The branch ``name`` (``equilibria``, ``periodic``, ``orbit``) of task ``index``."""
        with h5py.File(self.path, "r") as f:
            key = f"tasks/{_name(index)}/{name}"
            if key not in f:
                raise InputError(f"{self.path}: task {index} has no {name!r} branch")
            return Branch.from_group(f[key])

    # -- writing ------------------------------------------------------------------------
    def commit(self, results: list) -> None:
        """Add finished tasks (``run_task`` dicts) atomically: copy, append, ``os.replace``.

        Under the writer's lock, and only if the store still holds this sweep (checked in the
        copy, before anything is appended); ``/table`` and :attr:`rows` are then what the
        store holds.
        """
        if self._lock is None:
            raise InputError(f"{self.path}: the store was opened to read; open it with the sweep's spec to write")
        if not results and self.path.exists():
            return
        t0 = time.perf_counter()
        self._acquire(self._lock)          # held already, unless the store was closed
        try:
            self._commit(results)
        except WriteFailed as exc:         # a full disk: the store is as the last commit left it
            if not self.path.exists():
                raise
            raise InputError(f"{exc}; the {len(self.rows)} task(s) committed before are kept in {self.path}: "
                             "rerun the same sweep to resume (the others run again)") from None
        finally:
            self._lock.release()
        self.commit_seconds = time.perf_counter() - t0

    def _commit(self, results):
        with atomic_path(self.path) as tmp:
            exists = self.path.exists()
            if exists:
                shutil.copyfile(self.path, tmp)
            with h5py.File(tmp, "r+" if exists else "w") as f:
                if exists:
                    self._check_spec(self._stored_spec(str(f.attrs["spec"])), self.spec)
                else:
                    self._write_header(f)
                tasks = f.require_group("tasks")
                for res in results:
                    self._write_task(tasks, res)
                rows = {int(name): json.loads(str(g.attrs["row"])) for name, g in tasks.items()}
                self._write_table(f, rows)
        self.rows = rows

    def _write_header(self, f):
        s = self.spec
        a = f.attrs
        a["format"], a["format_version"] = FORMAT, FORMAT_VERSION
        a["spec"], a["sweep_key"], a["grid_key"] = s.to_json(), s.key, s.grid_key()
        a["model_hash"], a["model"], a["param"], a["task"] = s.model_hash, s.model_label, s.param, s.task
        a["n_tasks"] = len(s)

    @staticmethod
    def _write_task(tasks, res):
        name = _name(res["index"])
        if name in tasks:                 # a duplicate delivery: the first one stays
            return
        g = tasks.create_group(name)
        g.attrs["index"] = int(res["index"])
        g.attrs["row"] = json.dumps(res["row"])
        g.attrs["seconds"] = float(res.get("seconds", np.nan))
        for bname, data in res["branches"].items():
            with h5py.File.in_memory(data) as src:        # (Branch.from_image)
                dst = g.create_group(bname)
                for k, v in src.attrs.items():
                    dst.attrs[k] = v
                for child in src:
                    src.copy(src[child], dst, name=child)

    @staticmethod
    def _write_table(f, rows):
        """``/table`` from ``rows``, the rows stored under ``/tasks`` ({index: row})."""
        df = pd.DataFrame([{"task": i, **rows[i]} for i in sorted(rows)])
        if "table" in f:
            del f["table"]
        g = f.create_group("table")
        g.attrs["columns"] = json.dumps(list(df.columns))
        for col in df.columns:
            values = df[col].to_numpy()
            if df[col].dtype.kind in "fiub":
                g[col] = values
            else:
                g.create_dataset(col, data=np.array(["" if v is None or v != v else str(v) for v in values],
                                                    dtype=object), dtype=h5py.string_dtype())
