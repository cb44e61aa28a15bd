"""frictionkit.codegen: automatic quadratic recast and NumPy/Cython code generation.

Data flows one way: codegen reads :mod:`frictionkit.modelspec` and never imports the
runtime.  Public API: :func:`recast`, :func:`render`, :func:`generate_sources`,
:func:`generate_module`, :func:`write_generated`, :func:`compile_module`.
"""
from .api import generate_module, generate_sources, resolve_spec, write_generated
from .build import BuildError, cache_dir, compile_module
from .recast import GENERATOR_VERSION, RecastError, RecastSystem, recast
from .structure import LinearSplit, split_linear


def __getattr__(name):
    """``render`` and ``PrintError`` are imported at first use (PEP 562): the templates
    (jinja2) and the printers are not needed to load a model whose sources are cached."""
    if name == "render":
        from .emit import render
        return render
    if name == "PrintError":
        from .printers import PrintError
        return PrintError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["recast", "render", "generate_sources", "generate_module", "write_generated", "compile_module",
           "resolve_spec", "RecastSystem", "RecastError", "BuildError", "PrintError", "cache_dir",
           "GENERATOR_VERSION", "LinearSplit", "split_linear"]
