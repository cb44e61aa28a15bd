"""frictionkit.modelspec: declare a model in sympy (states, parameters, equations, laws).

Pure sympy: nothing here generates code.  See :class:`ModelSpec` and :mod:`.laws`.
"""
from . import laws
from .errors import (DuplicateNameError, ForcingError, FrictionkitError, InvalidConstantError,
                     InvalidTextError, MissingEquationError, ModelSpecError, NonAnalyticError,
                     ParameterValueError, UnclassifiableLawWarning, UndeclaredSymbolError,
                     UnknownParameterError, UnknownStateError)
from .spec import Contact, ModelSpec, Parameter, PortLayout, StructureHandle
from .structure import Structure, StructureError
from .zoo import ZOO, zoo_model

__all__ = ["ModelSpec", "Parameter", "Contact", "Structure", "StructureHandle", "PortLayout", "StructureError", "laws", "ZOO", "zoo_model", "FrictionkitError",
           "ModelSpecError", "UndeclaredSymbolError", "MissingEquationError", "UnknownStateError",
           "DuplicateNameError", "NonAnalyticError", "UnknownParameterError", "ForcingError",
           "InvalidConstantError", "InvalidTextError", "ParameterValueError", "UnclassifiableLawWarning"]
