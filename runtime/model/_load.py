"""Loading a model for the runtime: a zoo name, a model file, a ModelSpec or a model module."""
from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from ..errors import InputError
from ._interface import Model


def load_model(model, continuation: str | None = None, backend: str = "auto", **params) -> Model:
    """Generated model (or any module honouring the interface) wrapped for the runtime.

    Parameters
    ----------
    model : str, path, ModelSpec or module
        A zoo name (``"belt"``), a path to a model file defining ``model()``, a
        :class:`frictionkit.modelspec.ModelSpec`, or a module that already honours the
        generated-model interface (hand-written models).
    continuation : str
        The continuation parameter (required unless ``model`` is a module).
    backend : {"auto", "cython", "numpy"}
        See :func:`frictionkit.codegen.generate_module`.
    **params
        Parameter values overriding the defaults.

    Returns
    -------
    Model

    Examples
    --------
    >>> from frictionkit.runtime import load_model
    >>> belt = load_model("belt", continuation="Vb", n=10, FN=5)      # doctest: +SKIP
    """
    if isinstance(model, ModuleType):
        return Model(model, params)
    if continuation is None:
        raise InputError("load_model: give the continuation parameter, e.g. continuation='Vb'")
    from frictionkit.codegen import generate_module  # public codegen API only
    from frictionkit.modelspec.errors import ModelSpecError
    try:
        module = generate_module(model, continuation, backend=backend)
        loaded = Model(module, params)          # checks the parameter values
    except ModelSpecError as exc:
        raise InputError(str(exc)) from exc
    # the model reference a saved branch keeps to be restarted (a zoo name or a file path)
    loaded.source = (str(Path(model).resolve()) if isinstance(model, (str, os.PathLike))
                     and (str(model).endswith(".py") or os.sep in str(model)) else
                     model if isinstance(model, str) else "")
    return loaded
