"""A zoo model whose compiled module is cached, loaded without sympy and without codegen.

:func:`~frictionkit.runtime.model._load.load_model` of a zoo name takes the shipped generated
sources (``frictionkit/generated/<name>__<param>.py`` and ``.pyx``) and the compiled kernels
from the build cache.  Through codegen that costs sympy's import (0.5 to 1 s of CPU, most of
``frictionkit continue belt ...`` on a warm cache) to answer a question whose answer is a few
file hashes: *is the compiled module in the cache the one of these sources?*

This module answers it from a **manifest**, ``<cache>/zoo/<name>__<param>.json``, written by
:func:`record` after a load through codegen (the full path: ZOO membership checked, the build
key computed, the binary verified).  The manifest holds

* ``format`` (:data:`FORMAT`), ``frictionkit`` (the version), ``zoo`` and ``continuation``;
* ``sources``: the SHA-256 of the shipped ``.py`` and ``.pyx`` and of ``modelspec/zoo.py``;
* ``python`` (``sys.version``), ``ext_suffix``, ``machine`` (:func:`machine`: the architecture
  and the CPU flags the compiler flags depend on) and ``environment`` (the compiler variables
  ``CC``, ``CFLAGS``... with their values at the build);
* ``extension``: the compiled kernels' module ``name``, absolute ``path``, ``size`` and
  ``sha256``.

:func:`cached_zoo_module` returns the joined model module only when every one of these matches
now (the extension's size and hash included, read again at each load: a truncated or replaced
binary is never imported); else None, and the caller takes the full path, which rebuilds if
needed and records a new manifest.  A manifest that cannot be read, or a cache that cannot be
written, is never an error.

Two rules of codegen are repeated here because importing any part of ``frictionkit.codegen``
imports sympy: the cache folder (:func:`cache_root`, ``codegen.build.cache_dir``) and the
joined module (:func:`join`, ``codegen.api._join``).  ``tests/cli/test_fast_load.py`` checks
both against codegen's, and that a model loaded here equals the one loaded through codegen.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
import sysconfig
import tempfile
import types
from pathlib import Path

from .._version import __version__

#: layout version of the manifest
FORMAT = 1
#: the package's root folder (the repository root is the package ``frictionkit``)
_PACKAGE = Path(__file__).resolve().parents[2]
GENERATED = _PACKAGE / "generated"
ZOO_SOURCE = _PACKAGE / "modelspec" / "zoo.py"
#: environment variables the C build reads (``codegen.build.COMPILER_ENV``; the manifest stores
#: the values of those the build saw, and they are compared by name, whatever the list is then)
COMPILER_ENV = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")


def cache_root() -> Path:
    """The build cache folder: ``$FRICTIONKIT_CACHE`` or ``$XDG_CACHE_HOME/frictionkit``
    (the rule of ``frictionkit.codegen.build.cache_dir``)."""
    root = os.environ.get("FRICTIONKIT_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "frictionkit"


def manifest_path(name: str, continuation: str) -> Path:
    """Where the manifest of zoo model ``name`` continued in ``continuation`` is kept."""
    return cache_root() / "zoo" / f"{name}__{continuation}.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def machine() -> str:
    """The architecture and the CPU's instruction-set flags (``/proc/cpuinfo``, Linux), hashed:
    the compiler flags of a build depend on them (AVX2, FMA), so a cache shared by machines
    never hands one of them a binary built for another's instructions."""
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            flags = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("flags")), "")
    except OSError:
        pass
    return hashlib.sha256(f"{platform.machine()}\0{flags}".encode()).hexdigest()[:20]


def _sources(name: str, continuation: str) -> dict | None:
    """SHA-256 of the shipped sources of the zoo model and of the zoo's definitions, or None
    if the model has no shipped compiled source."""
    stem = f"{name}__{continuation}"
    files = {"py": GENERATED / f"{stem}.py", "pyx": GENERATED / f"{stem}.pyx", "zoo": ZOO_SOURCE}
    try:
        return {key: _sha256(path) for key, path in files.items()}
    except OSError:
        return None


def _expected(name: str, continuation: str) -> dict | None:
    """Every field of a current manifest but ``extension``, computed now."""
    sources = _sources(name, continuation)
    if sources is None:
        return None
    return {"format": FORMAT, "frictionkit": __version__, "zoo": name, "continuation": continuation,
            "sources": sources, "python": sys.version, "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
            "machine": machine()}


def _plain_name(name) -> bool:
    """A zoo name, not a path (a model file is never looked up here)."""
    return isinstance(name, str) and name.isidentifier()


def cached_zoo_module(name, continuation) -> types.ModuleType | None:
    """The compiled model module of zoo model ``name`` in ``continuation`` from the cache, if
    the manifest says it is current; else None (then load it through codegen).

    Parameters
    ----------
    name : str
        A zoo name (``"belt"``); anything else (a path, a spec, a module) gives None.
    continuation : str
        The continuation parameter.

    Returns
    -------
    module or None
        The NumPy module of the shipped sources joined with the compiled kernels (what
        ``frictionkit.codegen.generate_module(name, continuation)`` returns).
    """
    ext = _current_extension(name, continuation)
    if ext is None:
        return None
    path = Path(ext["path"])
    numpy_module = importlib.import_module(f"frictionkit.generated.{name}__{continuation}")
    kernels = sys.modules.get(ext["name"]) or _import_extension(ext["name"], path)
    if getattr(kernels, "MODEL_HASH", None) != numpy_module.MODEL_HASH:
        return None
    return join(numpy_module, kernels)


def _current_extension(name, continuation) -> dict | None:
    """The manifest's ``extension`` entry if the manifest of ``name`` in ``continuation`` is
    current (every field it records holds now, the binary's size and hash included); else None."""
    if not (_plain_name(name) and _plain_name(continuation)):
        return None
    try:
        manifest = json.loads(manifest_path(name, continuation).read_text(encoding="utf-8"))
        ext = manifest["extension"]
        path = Path(ext["path"])
        expected = _expected(name, continuation)
        current = (expected is not None and {k: manifest.get(k) for k in expected} == expected
                   and all(os.environ.get(k, "") == v for k, v in manifest["environment"].items())
                   and path.stat().st_size == ext["size"] and ext["size"] > 0 and _sha256(path) == ext["sha256"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return ext if current else None


def is_cached_zoo(name, continuation) -> bool:
    """Whether ``name`` is a zoo model whose compiled module in ``continuation`` is cached and
    current, known without sympy.

    A manifest is written only by :func:`record`, which ``load_model`` calls only for a name
    it found in the zoo, and it is current only while the shipped generated sources of that
    name and ``modelspec/zoo.py`` hash as recorded: a current manifest therefore answers
    "is ``name`` in the zoo?" (``frictionkit continue --restart`` asks it of the name a
    branch file gives, without importing the zoo's sympy definitions).

    Parameters
    ----------
    name : str
        The model name to check (anything not an identifier gives False: a path is never a
        zoo name).
    continuation : str
        The continuation parameter.

    Returns
    -------
    bool
    """
    return _current_extension(name, continuation) is not None


def _import_extension(name: str, path: Path) -> types.ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[name] = module
    return module


def join(numpy_module: types.ModuleType, kernels: types.ModuleType) -> types.ModuleType:
    """The model module of the compiled backend: the NumPy module's interface with the
    compiled kernels (``kernels.KERNELS``) in place of the NumPy ones (``codegen.api._join``)."""
    module = types.ModuleType(f"{numpy_module.__name__}__cython", numpy_module.__doc__)
    module.__dict__.update({k: v for k, v in vars(numpy_module).items() if not k.startswith("__")})
    module.__dict__.update({k: getattr(kernels, k) for k in kernels.KERNELS})
    module.BACKEND = "cython"
    module.__file__ = kernels.__file__
    return module


def record(name: str, continuation: str, module: types.ModuleType) -> Path | None:
    """Write the manifest of zoo model ``name`` after a load through codegen returned
    ``module`` (its compiled kernels in ``module.__file__``); the path written, or None when
    there is nothing to record (NumPy backend, no shipped compiled source) or the cache cannot
    be written (a later load then takes the full path again: never an error).

    The caller guarantees that ``module`` is the zoo model ``name`` of the shipped sources
    (``load_model`` calls this only for a name it found in the zoo)."""
    if getattr(module, "BACKEND", None) != "cython" or not (_plain_name(name) and _plain_name(continuation)):
        return None
    expected = _expected(name, continuation)
    if expected is None:
        return None
    path = Path(module.__file__)
    suffix = expected["ext_suffix"]
    kernels = sys.modules.get(path.name[:-len(suffix)]) if suffix and path.name.endswith(suffix) else None
    if getattr(kernels, "__file__", None) != module.__file__ or not hasattr(kernels, "KERNELS"):
        return None
    try:
        manifest = dict(expected, environment={k: os.environ.get(k, "") for k in COMPILER_ENV},
                        extension={"name": kernels.__name__, "path": str(path.resolve()),
                                   "size": path.stat().st_size, "sha256": _sha256(path)})
        target = manifest_path(name, continuation)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(manifest, fh, indent=1)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return None
    return target
