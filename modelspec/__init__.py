"""frictionkit.modelspec: declare a model in sympy (states, parameters, equations, laws).

Pure sympy: nothing here generates code.  See :class:`ModelSpec` and :mod:`.laws`.

The public names are imported at first use (SPEC 1 lazy loading, PEP 562 ``__getattr__``):
``frictionkit.modelspec.errors`` holds the root of every frictionkit error and is imported
by every layer, and importing sympy with it (about 0.5 s of CPU) would be paid by commands
that never declare a model (``frictionkit continue`` of a zoo model whose generated module
is cached, ``frictionkit coulomb``).  ``from frictionkit.modelspec import X`` works as before.
"""
import lazy_loader

_ERRORS = ["DuplicateNameError", "ForcingError", "FrictionkitError", "InvalidConstantError", "InvalidTextError",
           "MissingEquationError", "ModelSpecError", "NonAnalyticError", "ParameterValueError",
           "UnclassifiableLawWarning", "UndeclaredSymbolError", "UnknownParameterError", "UnknownStateError"]

__getattr__, __dir__, _ = lazy_loader.attach(__name__, submodules=["laws"], submod_attrs={
    "errors": _ERRORS,
    "spec": ["Contact", "ModelSpec", "Parameter", "PortLayout", "StructureHandle"],
    "structure": ["Structure", "StructureError"],
    "zoo": ["ZOO", "zoo_model"],
})

__all__ = ["ModelSpec", "Parameter", "Contact", "Structure", "StructureHandle", "PortLayout", "StructureError", "laws", "ZOO", "zoo_model", "FrictionkitError",
           "ModelSpecError", "UndeclaredSymbolError", "MissingEquationError", "UnknownStateError",
           "DuplicateNameError", "NonAnalyticError", "UnknownParameterError", "ForcingError",
           "InvalidConstantError", "InvalidTextError", "ParameterValueError", "UnclassifiableLawWarning"]
