"""Sweep figures (issue 15): speed-up of 2 Dask workers over 1, scheduler overhead per task,
peak memory per worker, and the projected wall time of a 10,000-task map on 100 workers.

The sweep: seed 000's belt (n = 10), continuation in Vb on [0.05, 12] from the first Hopf
point with H = 10, over FN = 1..10 (16 tasks) — the ``continuation`` task of ``frictionkit
sweep``.  Each configuration gets its own ``LocalCluster`` (1 or 2 single-threaded worker
processes); the workers are warmed up first (frictionkit imported, the model loaded from the
compile cache), so the timed part is the sweep itself: submit, run, stream into the store.

* speed-up = median wall(1 worker) / median wall(2 workers);
* overhead per task = (wall * workers - sum of the tasks' own times on the workers) / tasks,
  i.e. everything that is not the task: scheduling, transfer, the client's HDF5 commits and
  idle ends; quoted relative to the median task time;
* peak memory per worker: ``ru_maxrss`` of each worker process after the runs;
* projection: 10,000 tasks / 100 workers * (median task time + overhead per task), the
  overhead measured with 2 workers (the client's serial share grows with the worker count:
  this is the optimistic end).

Medians of REPEAT runs (the machine is shared and noisy): compare ratios.
"""
import os
import resource
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.sweeps import start_client, sweep

REPEAT = 3
FN = np.linspace(1.0, 10.0, 16)
H = 10


def _warm():
    warnings.simplefilter("ignore")
    load_model("belt", continuation="Vb", n=10, FN=5.0)
    return os.getpid()


def _maxrss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _runs(workers, folder):
    client, cluster = start_client(workers=workers, echo=lambda s: None)
    try:
        client.run(_warm)
        walls, tasks = [], []
        for r in range(REPEAT):
            out = Path(folder) / f"w{workers}_{r}.h5"
            t0 = time.perf_counter()
            res = sweep("belt", "Vb", 0.05, 12.0, {"FN": FN}, fixed={"n": 10}, out=out, client=client,
                        progress=False, echo=lambda s: None, harmonics=H)
            walls.append(time.perf_counter() - t0)
            assert res.success and res.ran == len(FN), res.message
            tasks.append(res.task_seconds)
        rss = sorted(client.run(_maxrss_mb).values())
        size = os.path.getsize(out)
    finally:
        client.close()
        cluster.close()
    wall = statistics.median(walls)
    task_sum = statistics.median(sum(t) for t in tasks)
    task_median = statistics.median(x for t in tasks for x in t)
    overhead = (wall * workers - task_sum) / len(FN)
    return dict(workers=workers, wall_s=walls, wall_median_s=wall, task_median_s=task_median,
                task_sum_median_s=task_sum, overhead_per_task_s=overhead,
                overhead_fraction=overhead / task_median, peak_rss_per_worker_mb=rss,
                store_bytes_per_task=size / len(FN))


def main():
    with tempfile.TemporaryDirectory() as folder:
        one = _runs(1, folder)
        two = _runs(2, folder)
    speedup = one["wall_median_s"] / two["wall_median_s"]
    per_task = two["task_median_s"] + two["overhead_per_task_s"]
    projected = 10_000 / 100 * per_task
    return {
        "sweep": f"belt n=10, continuation Vb 0.05..12 from Hopf 1, H={H}, {len(FN)} tasks over FN",
        "one_worker": one, "two_workers": two,
        "speedup_2_over_1": speedup, "speedup_target": 1.8,
        "overhead_fraction_1_worker": one["overhead_fraction"],
        "overhead_fraction_2_workers": two["overhead_fraction"], "overhead_target": 0.03,
        "projected_10000_tasks_on_100_workers_s": projected,
        "projected_store_gb": 10_000 * two["store_bytes_per_task"] / 1e9,
    }


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
