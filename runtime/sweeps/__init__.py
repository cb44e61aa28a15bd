"""Parameter sweeps and two-parameter maps on Dask (issue 15).

:func:`sweep` runs one task per grid point — a ``continuation`` (equilibria, Hopf points and
the periodic branch from a chosen Hopf point, as ``frictionkit continue``), an ``orbit`` or a
``simulate`` task — on a local Dask cluster or an existing one, streaming the results into one
HDF5 store (:class:`SweepStore`) that a rerun resumes; :func:`plot_sweep_map` draws the
regions of behaviour in the plane of two parameters.
"""
import lazy_loader

# imported at first use (SPEC 1 lazy loading): see frictionkit.runtime's __init__
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_map": ["REGIONS", "plot_sweep_map", "region_codes", "region_grid"],
    "_run": ["SweepResult", "start_client", "sweep"],
    "_spec": ["TASKS", "SweepSpec", "parse_grid"],
    "_store": ["SweepStore"],
    "_tasks": ["run_task"],
})

__all__ = ["sweep", "SweepResult", "SweepSpec", "SweepStore", "parse_grid", "run_task", "start_client",
           "plot_sweep_map", "region_grid", "region_codes", "REGIONS", "TASKS"]
