"""Model access: the generated-model interface, loading, time simulation, point-condition series,
structures (their reduction and linear part).

Everything the runtime needs from a generated module goes through :class:`Model`.
"""
import lazy_loader

# imported at first use (SPEC 1 lazy loading): see frictionkit.runtime's __init__
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "_interface": ["Model", "load_module_from_path"],
    "_load": ["load_model"],
    "_series": ["SERIES_FUNCTIONS", "derivative_at", "taylor_coefficients", "taylor_remainder"],
    "_simulate": ["OrbitCheck", "check_branch_point", "check_orbit", "simulate"],
    "_structure": ["ModalBasis", "StructuralSystem", "reduce_structure"],
})

__all__ = ["Model", "load_module_from_path", "load_model", "SERIES_FUNCTIONS", "derivative_at",
           "taylor_coefficients", "taylor_remainder", "OrbitCheck", "check_branch_point", "check_orbit",
           "simulate", "ModalBasis", "StructuralSystem", "reduce_structure"]
