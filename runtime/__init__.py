"""frictionkit runtime: discretizations, continuation, stability, results, plots, CLI.

The runtime talks to a model only through the generated-model interface
(:mod:`frictionkit.runtime._model`).
"""
from .errors import FrictionkitError, InputError, ModelInterfaceError, ConvergenceError
from ._model import Model
from ._load import load_model

__version__ = "0.1.0"

__all__ = ["Model", "load_model", "FrictionkitError", "InputError", "ModelInterfaceError", "ConvergenceError",
           "__version__"]
