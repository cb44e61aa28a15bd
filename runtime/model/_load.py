"""Loading a model for the runtime: a zoo name, a model file, a ModelSpec or a model module."""
from __future__ import annotations

from collections.abc import Mapping
import os
from pathlib import Path
from types import ModuleType

from ..errors import InputError
from . import _fast_load
from ._interface import Model
from ._structure import LinearSystem, ModalSystem, reduce_structure, structural_module


def load_model(model, continuation: str | None = None, backend: str = "auto", progress: bool | None = None, *,
               params: Mapping[str, float] | None = None, **values) -> Model:
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
    progress : bool, optional
        Progress of the code generation on stderr: always (True), never (False), or for models
        of 20 states and more (None); see :func:`frictionkit.codegen.generate_module`.
    params : mapping, optional
        Parameter values overriding the defaults, ``{name: value}``: the way to give a parameter
        whose name is one of this function's options (``model``, ``continuation``, ``backend``,
        ``progress``, ``params``).
    **values
        Parameter values overriding the defaults, as keywords (``n=10, FN=5``); joined with
        ``params`` (a name in both is an error).

    Returns
    -------
    Model

    Raises
    ------
    InputError
        The model cannot be declared or loaded as given (the message names what and why).
    frictionkit.codegen.build.CacheFolderError
        A file stands where the build cache keeps a folder (``$FRICTIONKIT_CACHE`` set to a
        file's path, say); the message names it and says what to do.

    Warns
    -----
    frictionkit.codegen.build.CacheWarning
        A cached artefact of this model (its sources, its NumPy module's copy or bytecode,
        its compiled module) did not match its manifest or the model: it was not used and
        has been rebuilt (once; the message names the file).

    Examples
    --------
    >>> from frictionkit.runtime import load_model
    >>> belt = load_model("belt", continuation="Vb", n=10, FN=5)      # doctest: +SKIP
    >>> m = load_model(spec, continuation="w", params={"progress": 0.5})  # doctest: +SKIP
    """
    params = _join_values(params, values, progress)
    if isinstance(model, ModuleType):
        return Model(model, params)
    if continuation is None:
        raise InputError("load_model: give the continuation parameter, e.g. continuation='Vb'")
    if backend != "numpy":
        module = _fast_load.cached_zoo_module(model, continuation)     # no sympy, no codegen (_fast_load)
        if module is not None:
            return _zoo_model(module, params, model)
    from frictionkit.codegen import generate_module, resolve_spec, split_linear  # public codegen API only
    from frictionkit.modelspec import ZOO
    from frictionkit.modelspec.errors import ModelSpecError
    try:
        # a model file is run once: its spec then goes to the generator (the zoo's names keep
        # their shipped modules)
        spec = model if isinstance(model, str) and model in ZOO else resolve_spec(model)
        split = None if isinstance(spec, str) else split_linear(spec, continuation)
        if getattr(spec, "linear_structure", None) is not None:
            module = _structural(spec, continuation, backend)
        elif split is not None:
            module = _recognised(spec, split, continuation, backend)
        else:
            module = generate_module(spec, continuation, backend=backend, progress=progress)
        loaded = Model(module, params)          # checks the parameter values
    except ModelSpecError as exc:
        raise InputError(str(exc)) from exc
    if isinstance(spec, str):                   # a zoo name: later loads take the fast path
        _fast_load.record(spec, continuation, module)
    # the model reference a saved branch keeps to be restarted (a zoo name or a file path)
    loaded.source = (str(Path(model).resolve()) if isinstance(model, (str, os.PathLike))
                     and (str(model).endswith(".py") or os.sep in str(model)) else
                     model if isinstance(model, str) else "")
    return loaded


def _join_values(params, values, progress) -> dict:
    """The parameter values of :func:`load_model`: ``params`` (a mapping) and the keywords
    ``values`` joined, refusing what would silently lose or misread one."""
    if params is not None and not isinstance(params, Mapping):
        raise InputError(f"load_model: params={params!r} is not a mapping of parameter values; to set a model "
                         f"parameter named 'params', write params={{'params': {params!r}}}")
    if progress is not None and not isinstance(progress, bool):
        raise InputError(f"load_model: progress={progress!r} is load_model's option (True, False or None), not a "
                         f"parameter value; to set a model parameter named 'progress', write "
                         f"params={{'progress': {progress!r}}}")
    both = sorted(set(params or ()) & set(values))
    if both:
        raise InputError(f"load_model: parameter {', '.join(both)} given both in params= and as a keyword; "
                         "give each value once")
    return {**(params or {}), **values}


def _zoo_model(module, params, name):
    """:class:`Model` of a zoo model's module loaded by ``_fast_load``, as the full path makes it."""
    from frictionkit.modelspec.errors import ModelSpecError
    try:
        loaded = Model(module, params)          # checks the parameter values
    except ModelSpecError as exc:
        raise InputError(str(exc)) from exc
    loaded.source = name
    return loaded


def _structural(spec, continuation, backend):
    """The model module of a structural spec (DESIGN §6): the port model generated (its size
    does not depend on the structure's), the structure reduced, both joined
    (``model/_structure.py``)."""
    from frictionkit.codegen import generate_module  # public codegen API only
    spec.validate(continuation)
    port_spec, layout = spec.port_model()
    port = generate_module(port_spec, continuation, backend=backend, defer=True)
    basis = reduce_structure(layout.structure, [point for _, point in layout.forces])
    return structural_module(port, layout, ModalSystem(basis, layout, port), layout.structure.fingerprint())


def _recognised(spec, split, continuation, backend):
    """The model module of a symbolic model recognised as linear but for its contacts
    (``codegen/structure.py``): the port model generated, the linear part evaluated at the
    parameter values (again when those that enter it change) and diagonalised."""
    from frictionkit.codegen import generate_module  # public codegen API only
    spec.validate(continuation)
    port = generate_module(split.port, continuation, backend=backend, defer=True)
    names = list(port.PARAMETERS)
    evaluate = split.evaluator(names)

    def make(p):
        A, B, C = evaluate(p)
        return LinearSystem(A, B, C, split.states, split.layout, port)
    return structural_module(port, split.layout, make, split.fingerprint,
                             depends=[names.index(q) for q in split.parameters])
