"""Results: the :class:`Branch` (column data, solutions, special points, provenance), its HDF5
layout, the plots of branches and orbits, the interactive report and the reader of sweep stores."""
from ._branch import Branch, SpecialPoint, append_branch, load_branch, load_run, save_run, trig_extrema
from ._export import to_dataframe, to_xarray
from ._plots import plot_branches, plot_orbit
from ._report import report
from ._result import Result
from ._sweeps import SweepMap, load_sweep_map

__all__ = ["Branch", "SpecialPoint", "append_branch", "load_branch", "load_run", "save_run", "trig_extrema",
           "plot_branches", "plot_orbit", "Result", "report", "load_sweep_map", "SweepMap", "to_dataframe",
           "to_xarray"]
