"""Results: the :class:`Branch` (column data, solutions, special points, provenance), its HDF5
layout, the plots of branches and orbits, the interactive report and the reader of sweep stores."""
import lazy_loader

# imported at first use (SPEC 1 lazy loading): see frictionkit.runtime's __init__
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_branch": ["Branch", "SpecialPoint", "append_branch", "load_branch", "load_run", "save_run", "trig_extrema"],
    "_export": ["to_dataframe", "to_xarray"],
    "_plots": ["plot_branches", "plot_frequency_response", "plot_nonlinear_mode", "plot_orbit"],
    "_report": ["report"],
    "_result": ["Result"],
    "_sweeps": ["SweepMap", "load_sweep_map"],
})

__all__ = ["Branch", "SpecialPoint", "append_branch", "load_branch", "load_run", "save_run", "trig_extrema",
           "plot_branches", "plot_frequency_response", "plot_nonlinear_mode", "plot_orbit", "Result", "report",
           "load_sweep_map", "SweepMap", "to_dataframe", "to_xarray"]
