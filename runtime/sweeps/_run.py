"""``sweep()``: run the tasks of a sweep on Dask and stream them into the store.

Without a scheduler address a :class:`dask.distributed.LocalCluster` is started for the call
(one single-threaded worker *process* per core, BLAS threads 1 in each: the tasks are
independent and CPU-bound, so processes, not threads, give the speed-up) and stopped at the
end; with ``scheduler="tcp://host:port"`` the same tasks go to an existing cluster.  Results
come back as they finish and are committed to the store in batches (``_store``); tasks
already in the store are skipped, so rerunning the same call resumes.
A worker that dies takes its running tasks with it; the scheduler reassigns them
(``distributed.scheduler.allowed-failures``), and a task whose own code raises something that
is not a numerical failure is retried once (``retries=1``) and then stored with its error.
A task whose workers kept dying (``KilledWorker``: an out-of-memory kill, a crash) failed for
its workers, not for its own code: it is not stored, so that a rerun retries it.  When no
worker is alive for ``worker_timeout`` seconds the sweep stops with a :class:`ClusterError`
instead of waiting for ever, keeping what was stored.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import os
import sys
import time

import numpy as np
import pandas as pd
from tqdm import tqdm

from ..errors import ClusterError, InputError
from ..model._load import load_model
from ..results._result import Result
from ._spec import MAX_TASKS, SweepSpec, check_grid_size
from ._store import SweepStore
from ._tasks import run_task

__all__ = ["sweep", "SweepResult", "start_client"]

# BLAS/OpenMP threads of every worker process: one task per core, one thread per task
_WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class SweepResult(Result):
    """What :func:`sweep` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per task (index ``task``): the grid values, ``status``, ``message`` and the
        task's summary columns (continuation: ``n_hopf``, ``hopf_1``, ``hopf_1_criticality``,
        ..., ``hopf`` (JSON), ``n_fold``, ``folds`` (JSON), ``eq_stable`` and ``orbit_stable``
        (JSON lists of ``[lo, hi]`` parameter intervals), ``motion``, and ``period@A``,
        ``amplitude@A``, ``motion@A`` for each ``at`` value A).
    path : str
        The HDF5 store (:class:`~frictionkit.runtime.sweeps.SweepStore` reads it).
    spec : SweepSpec
    ran, skipped, failed : int
        Tasks run by this call, found already in the store, and stored with an error.
    wall_time : float
    dashboard : str
        Dask dashboard address of the embedded cluster ("" when disabled or external).
    task_seconds : list of float
        Time of each task run by this call on its worker (for overhead figures).
    success, status, message :
        ``status`` is ``"complete"`` when every task is stored; ``success`` also needs no task
        to have failed.
    """

    table: pd.DataFrame
    path: str
    spec: SweepSpec
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    wall_time: float = 0.0
    dashboard: str = ""
    task_seconds: list = field(default_factory=list)

    def branch(self, index: int, name: str = "periodic"):
        """A stored branch of task ``index`` (see :meth:`SweepStore.branch`)."""
        return SweepStore(self.path).branch(index, name)


def start_client(scheduler=None, workers=None, echo=print):
    """``(client, cluster)``: a client of ``scheduler`` (cluster ``None``) or of a new
    ``LocalCluster`` of ``workers`` single-threaded processes (default: one per core).

    Raises
    ------
    InputError
        When no scheduler answers at ``scheduler`` within 10 s.
    ClusterError
        When the local cluster does not start (its workers' start-up failure named).
    """
    import dask
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout="10s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {scheduler}: no Dask scheduler answers there ({exc}); "
                             "start one with `dask scheduler` or drop --scheduler for a local cluster") \
                from None
    n = int(workers or os.cpu_count() or 1)
    if n < 1:
        raise InputError(f"--workers {workers}: need at least 1 worker")
    try:
        import bokeh  # noqa: F401  (the dashboard needs it)
        dashboard = ":0"
    except ImportError:
        dashboard = None
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=dashboard,
                                   env=_WORKER_ENV, host="127.0.0.1")
    except (RuntimeError, OSError, TimeoutError) as exc:      # "Nanny failed to start", "Cluster failed to start"
        raise ClusterError(f"the local Dask cluster of {n} worker(s) did not start ({type(exc).__name__}: {exc}); "
                           "check that Dask's temporary folder (dask config 'temporary-directory', default the "
                           "system's) is writable and the disk not full, try fewer --workers, or give "
                           "--scheduler of a running cluster") from None
    client = Client(cluster)
    echo(f"local Dask cluster: {n} worker process(es), 1 thread each; dashboard "
         + (client.dashboard_link if dashboard else "disabled (install bokeh to get it)"))
    return client, cluster


def _worker_timeout(value):
    """``value``, else Dask's ``frictionkit.worker-timeout``, else 120 s; checked."""
    import dask
    source = "worker_timeout" if value is not None else "the Dask configuration frictionkit.worker-timeout"
    value = dask.config.get("frictionkit.worker-timeout", 120.0) if value is None else value
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not seconds > 0:
        raise InputError(f"{source} = {value!r}: give the seconds to wait for a live Dask worker (> 0)")
    return seconds


def _check_model(spec_args):
    """Load the model on the client: unknown parameters and model errors before any task."""
    model, param, fixed, over = spec_args
    names = {**fixed, **{k: 0.0 for k in over}}
    m = load_model(model, continuation=param, params={k: v for k, v in fixed.items() if k != param})
    unknown = sorted(set(names) - set(m.parameters)) + ([param] if param not in m.parameters else [])
    if unknown:
        raise InputError(f"parameter(s) {', '.join(unknown)} not in model {m.name!r}; its parameters are "
                         f"{', '.join(m.parameters)}")
    return m


def sweep(model, param, start, stop, over, *, task="continuation", fixed=None, out="sweep.h5", workers=None,
          scheduler=None, client=None, progress=True, echo=print, commit_every=2.0, worker_timeout=None,
          max_tasks=MAX_TASKS, **options) -> SweepResult:
    """Run one task per grid point of ``over`` on Dask; results go to the HDF5 store ``out``.

    Parameters
    ----------
    model : str or path
        Zoo name or model file (its source travels with the tasks).
    param : str
        Main (continuation) parameter; ``start``, ``stop`` its range (``orbit`` and
        ``simulate`` tasks run at ``start``).
    over : dict
        ``{name: values}`` of one or more swept parameters (their Cartesian product).
    task : {"continuation", "orbit", "simulate"}
    fixed : dict, optional
        Other parameter values (``--set``).
    out : path
        The store; rerunning with the same arguments skips the tasks it holds.
    workers : int, optional
        Size of the local cluster (default: one per core).
    scheduler : str, optional
        ``tcp://host:port`` of an existing Dask scheduler.
    client : dask.distributed.Client, optional
        An existing client (then neither ``workers`` nor ``scheduler``).
    progress : bool
        A tqdm bar over the tasks (elapsed time, ETA), shown on a terminal only.
    commit_every : float
        Seconds between commits to the store (grows to ten times the last commit's duration,
        so copying stays under about a tenth of the run).
    worker_timeout : float, optional
        Seconds without any live worker after which the sweep stops with a
        :class:`ClusterError` (the tasks stored so far stay; rerunning resumes).  Default:
        Dask's configuration key ``frictionkit.worker-timeout`` (e.g. the environment
        variable ``DASK_FRICTIONKIT__WORKER_TIMEOUT=30``, so the command line takes it too),
        else 120.
    max_tasks : int
        Largest number of tasks (grid points) accepted (default 100,000): a larger grid is
        refused before anything is made or run (None: no limit).
    **options
        Task options: ``from_hopf``, ``harmonics``, ``discretization``, ``method``,
        ``max_steps``, ``intervals``, ``degree``, ``at`` (continuation); ``harmonics``,
        ``discretization``, ``at`` (orbit); ``t_end``, ``x0``, ``seed``, ``at`` (simulate).

    Returns
    -------
    SweepResult
        Tasks lost to workers that kept dying (``KilledWorker``) are not stored: ``status``
        is then ``"incomplete"`` and a rerun retries them.

    Raises
    ------
    ClusterError
        No live worker for ``worker_timeout`` seconds, or a local cluster that does not start.

    Examples
    --------
    >>> import numpy as np
    >>> from frictionkit.runtime.sweeps import sweep
    >>> res = sweep("belt", "Vb", 0.05, 12, {"FN": np.linspace(1, 10, 4)}, fixed={"n": 10},
    ...             harmonics=10, out="belt_sweep.h5")                   # doctest: +SKIP
    >>> res.table[["FN", "status", "hopf_1", "folds"]]                   # doctest: +SKIP
    """
    t0 = time.perf_counter()
    fixed = dict(fixed or {})
    over = dict(over or {})
    if not over:
        raise InputError("the sweep has no grid: give at least one --over NAME=START:STOP:COUNT")
    # the size first: a grid of 10^8 points is refused before its tasks are made
    check_grid_size([(k, np.size(v)) for k, v in over.items()], max_tasks, "over", "max_tasks=")
    worker_timeout = _worker_timeout(worker_timeout)
    m = _check_model((model, param, fixed, over))
    spec = SweepSpec.build(model, m.model_hash, param, start, stop, over, fixed, task, **options)
    # the writer's lock from here to the end: another sweep on this --out is refused now
    store = SweepStore(out, spec)                # refuses another sweep's store
    try:
        todo = [i for i in range(len(spec)) if i not in store.done]
        skipped = len(spec) - len(todo)
        if skipped:
            echo(f"{out}: {skipped} of {len(spec)} task(s) already stored; running the other {len(todo)}")
        own = client is None
        cluster = None
        dashboard = ""
        task_seconds, lost = [], []
        if todo:
            if own:
                client, cluster = start_client(scheduler, workers, echo)
                dashboard = client.dashboard_link if cluster is not None and cluster.dashboard_link else ""
            try:
                store.commit([])                     # the store exists from now on
                task_seconds, lost = _stream(client, spec, todo, store, progress, commit_every, worker_timeout)
            finally:
                if own:
                    client.close()
                    if cluster is not None:
                        cluster.close()
    finally:
        store.close()
    table = store.table()
    failed = int((table["status"] == "error").sum()) if len(table) else 0
    complete = len(store.done) == len(spec)
    return SweepResult(table=table, path=str(out), spec=spec, ran=len(todo), skipped=skipped, failed=failed,
                       wall_time=time.perf_counter() - t0, dashboard=dashboard, task_seconds=task_seconds,
                       success=complete and failed == 0, status="complete" if complete else "incomplete",
                       message=f"{len(store.done)} of {len(spec)} tasks stored in {out}"
                               + (f", {failed} with an error" if failed else "")
                               + (f"; {len(lost)} task(s) lost with their workers (KilledWorker: killed, out of "
                                  "memory), not stored: rerun the same command to retry them" if lost else ""))


def _stream(client, spec, todo, store, progress, commit_every, worker_timeout):
    """Submit ``todo``, commit results as they finish; on any exit commit what arrived.

    Returns the task times and the indices of the tasks lost to ``KilledWorker`` (not stored).
    Raises :class:`ClusterError` after ``worker_timeout`` seconds without a live worker.
    """
    from dask.distributed import KilledWorker, as_completed

    text = spec.to_json()
    futures = [client.submit(run_task, text, i, key=f"frictionkit-sweep-{spec.key[:12]}-{i}", pure=False,
                             retries=1) for i in todo]
    index = {f.key: i for f, i in zip(futures, todo)}
    bar = tqdm(total=len(todo), desc=f"{spec.task} tasks", unit="task", file=sys.stderr,
               disable=None if progress else True)
    batch, last, seconds, lost = [], time.monotonic(), [], []
    finished = as_completed(futures)
    alive = checked = time.monotonic()
    try:
        while not finished.is_empty():
            # polled rather than blocking, so that a cluster without workers is noticed (a blocking
            # as_completed waits for ever); the scheduler is asked about workers once a second
            done = finished.next_batch(block=False) if finished.has_ready() else []
            now = time.monotonic()
            if done:
                alive = now
            elif now - checked >= 1.0:
                checked = now
                if client.nthreads():
                    alive = now
                elif now - alive > worker_timeout:
                    raise ClusterError(f"no live Dask worker for {worker_timeout:g} s ({finished.count()} task(s) "
                                       f"waiting); the {len(store.done) + len(batch)} task(s) finished are kept in "
                                       f"{store.path}: start workers (or find out why they die: memory, crashes) "
                                       "and rerun the same command to resume")
            if not done:
                time.sleep(0.05)
            for fut in done:
                if fut.status in ("lost", "pending"):
                    # it finished, then its result went with its worker before it was read: the
                    # scheduler computes it again (it was stored as an error, "NoneType: None",
                    # in a run of tests/sweeps/test_distributed.py)
                    finished.add(fut)
                    continue
                if fut.status == "finished":
                    res = fut.result()
                elif isinstance(fut.exception(), KilledWorker):
                    lost.append(index[fut.key])          # its workers died, not its code: a rerun retries it
                    fut.release()
                    bar.update(1)
                    continue
                else:                                # failed twice
                    exc = fut.exception()
                    res = {"index": index[fut.key], "branches": {},
                           "row": {**spec.point(index[fut.key]), "status": "error",
                                   "message": f"{type(exc).__name__}: {exc}"}}
                fut.release()
                batch.append(res)
                bar.update(1)
                seconds.append(res.get("seconds", float("nan")))
                if time.monotonic() - last >= max(commit_every, 10 * store.commit_seconds):
                    store.commit(batch)
                    batch, last = [], time.monotonic()
    finally:
        bar.close()
        store.commit(batch)                     # Ctrl-C, a lost scheduler: keep what arrived
        client.cancel([f for f in futures if not f.done()])
    return seconds, sorted(lost)
