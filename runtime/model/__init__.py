"""Model access: the generated-model interface, loading, time simulation, point-condition series.

Everything the runtime needs from a generated module goes through :class:`Model`.
"""
from ._interface import Model, load_module_from_path
from ._load import load_model
from ._series import SERIES_FUNCTIONS, derivative_at, taylor_coefficients, taylor_remainder
from ._simulate import OrbitCheck, check_branch_point, check_orbit, simulate

__all__ = ["Model", "load_module_from_path", "load_model", "SERIES_FUNCTIONS", "derivative_at",
           "taylor_coefficients", "taylor_remainder", "OrbitCheck", "check_branch_point", "check_orbit",
           "simulate"]
