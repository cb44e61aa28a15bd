"""frictionkit.codegen: automatic quadratic recast and NumPy/Cython code generation.

Data flows one way: codegen reads :mod:`frictionkit.modelspec` and never imports the
runtime.  Public API: :func:`recast`, :func:`render`, :func:`generate_sources`,
:func:`generate_module`, :func:`write_generated`, :func:`compile_module`.
"""
from .api import generate_module, generate_sources, resolve_spec, write_generated
from .build import BuildError, cache_dir, compile_module
from .emit import render
from .printers import PrintError
from .recast import GENERATOR_VERSION, RecastError, RecastSystem, recast

__all__ = ["recast", "render", "generate_sources", "generate_module", "write_generated", "compile_module",
           "resolve_spec", "RecastSystem", "RecastError", "BuildError", "PrintError", "cache_dir",
           "GENERATOR_VERSION"]
