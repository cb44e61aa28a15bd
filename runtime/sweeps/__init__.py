"""Parameter sweeps and two-parameter maps on Dask (issue 15).

:func:`sweep` runs one task per grid point — a ``continuation`` (equilibria, Hopf points and
the periodic branch from a chosen Hopf point, as ``frictionkit continue``), an ``orbit`` or a
``simulate`` task — on a local Dask cluster or an existing one, streaming the results into one
HDF5 store (:class:`SweepStore`) that a rerun resumes; :func:`plot_sweep_map` draws the
regions of behaviour in the plane of two parameters.
"""
from ._map import REGIONS, plot_sweep_map, region_codes, region_grid
from ._run import SweepResult, start_client, sweep
from ._spec import TASKS, SweepSpec, parse_grid
from ._store import SweepStore
from ._tasks import run_task

__all__ = ["sweep", "SweepResult", "SweepSpec", "SweepStore", "parse_grid", "run_task", "start_client",
           "plot_sweep_map", "region_grid", "region_codes", "REGIONS", "TASKS"]
