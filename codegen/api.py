"""Public entry points of codegen: recast, emit, build, load (used by the CLI and the runtime).

>>> from frictionkit.codegen import generate_module
>>> mod = generate_module("belt", "Vb", backend="numpy")      # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import json
import marshal
import os
import py_compile
import sys
import types
import warnings
from pathlib import Path

import sympy

from frictionkit.modelspec import ModelSpec, ZOO, zoo_model
from frictionkit.modelspec.errors import ModelSpecError

from ._progress import reporting
from .build import BuildError, atomic_write, cache_dir, cache_folder, compile_module, rebuilt
from .recast import RecastSystem, recast

GENERATED_DIR = Path(__file__).resolve().parent.parent / "generated"
_warned: set = set()


def resolve_spec(model) -> ModelSpec:
    """A :class:`ModelSpec` from a spec, a zoo name or a path to a model file.

    A model file defines ``model()`` returning a ModelSpec, or a module-level ``MODEL``.
    """
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, (str, os.PathLike)) and (str(model).endswith(".py") or os.sep in str(model)):
        path = Path(model)
        if not path.is_file():
            raise ModelSpecError(f"model file {str(path)!r} does not exist")
        if path.suffix != ".py":
            raise ModelSpecError(f"model file {str(path)!r} is not a Python file (.py); a model file "
                                 "defines `def model(): ... return spec` returning a ModelSpec")
        name = f"_fk_spec_{path.stem}_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        try:        # the user's code: any error it raises is reported with the file's name
            spec.loader.exec_module(mod)
            if hasattr(mod, "model"):
                out = mod.model()
            elif hasattr(mod, "MODEL"):
                out = mod.MODEL
            else:
                raise ModelSpecError(f"model file {str(path)!r} defines neither model() nor MODEL; add "
                                     f"`def model(): ... return spec` returning a ModelSpec")
        except ModelSpecError:
            raise
        except SyntaxError as exc:
            raise ModelSpecError(f"model file {str(path)!r}: syntax error at line {exc.lineno}: "
                                 f"{exc.msg}") from None
        except Exception as exc:
            raise ModelSpecError(f"model file {str(path)!r} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(out, ModelSpec):
            raise ModelSpecError(f"model file {str(path)!r}: model() returned {type(out).__name__}, "
                                 f"expected a frictionkit.modelspec.ModelSpec")
        return out
    return zoo_model(str(model))


#: models with at least this many states show their code generation's progress by default
PROGRESS_MIN_STATES = 20


def _generate(model, continuation: str, backends, progress) -> tuple[RecastSystem, dict]:
    """The recast system and the sources of each backend, with a progress bar on stderr (one
    step per stage: recast, then each backend's sources) when ``progress`` is True, or when it
    is None and the model has at least :data:`PROGRESS_MIN_STATES` states (a 200-state model
    takes tens of seconds; issue 28 found it silent for minutes).  Inside a stage the bar names
    the equation, row or part of the sources at work, when ``progress`` is True or stderr is a
    terminal."""
    from tqdm import tqdm       # only a generation needs it: a cached model loads without it
    spec = resolve_spec(model)
    show = progress if progress is not None else len(spec.states) >= PROGRESS_MIN_STATES
    with tqdm(total=1 + len(backends), desc=f"frictionkit: generating {spec.name} ({len(spec.states)} states)",
              unit="stage", file=sys.stderr, disable=not show, leave=True,
              bar_format="{desc}: {n_fmt}/{total_fmt} stages [{elapsed}{postfix}]") as bar:
        bar.set_postfix_str("recast", refresh=True)
        # progress inside the stages (_progress.py): asked for, or on a terminal (a log file gets
        # the stages only, not a line every quarter second)
        with reporting(bar if progress or _isatty(sys.stderr) else None):
            system, backends = _recast_for(spec, continuation, backends)
            bar.total = 1 + len(backends)          # a sampled model: NumPy only
            bar.update()
            sources = {}
            for b in backends:
                bar.set_postfix_str(f"{'NumPy' if b == 'numpy' else 'Cython'} sources", refresh=True)
                sources[b] = _render(system, b)
                bar.update()
        bar.set_postfix_str(f"{system.n_vars} variables", refresh=True)
    return system, sources


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):         # a replaced or closed stream
        return False


def generate_sources(model, continuation: str, backends=("numpy", "cython"),
                     progress: bool | None = None) -> tuple[RecastSystem, dict]:
    """Recast ``model`` for ``continuation`` and render the sources of each backend.

    Sampled models (non-analytic laws) are rendered for NumPy only: their conditional
    expressions are not compiled.  ``progress``: a progress bar on stderr (True), none
    (False), or one for models of at least :data:`PROGRESS_MIN_STATES` states (None).
    """
    return _generate(model, continuation, tuple(backends), progress)


def _render(system, backend):
    """:func:`frictionkit.codegen.render`, its module (jinja2, the printers) imported at the
    first rendering: a model whose sources and binary are cached loads without them (the import
    of ``frictionkit.codegen`` in a fresh process: 0.047 s of CPU before, 0.018 s after)."""
    from .emit import render
    return render(system, backend)


def _recast_for(model, continuation: str, backends) -> tuple[RecastSystem, tuple]:
    """The recast system of ``model`` and the backends it is rendered for (sampled models:
    NumPy only, their conditional expressions are not compiled)."""
    system = recast(resolve_spec(model), continuation)
    if system.sampled:
        backends = tuple(b for b in backends if b == "numpy") or ("numpy",)
    return system, tuple(backends)


_GENERATOR_DIGEST = []


def _generator_digest() -> str:
    """Hash of what turns a spec into sources besides the spec itself, once per process: the
    generator's code (codegen/*.py and the templates), the modelspec code the recast calls
    (validation, definitions, parameter conditions, the laws) and sympy's version."""
    if not _GENERATOR_DIGEST:
        h = hashlib.sha256(sympy.__version__.encode() + b"\0")
        here = Path(__file__).resolve().parent
        spec_dir = here.parent / "modelspec"
        for path in (sorted(here.glob("*.py")) + sorted((here / "templates").glob("*.j2"))
                     + sorted(spec_dir.glob("*.py"))):
            h.update(path.parent.name.encode() + b"/" + path.name.encode() + b"\0" + path.read_bytes())
        _GENERATOR_DIGEST.append(h.hexdigest()[:16])
    return _GENERATOR_DIGEST[0]


@dataclasses.dataclass(frozen=True)
class _Generated:
    """What :func:`generate_module` needs of a recast system besides its sources (kept in the
    source cache, so that a warm load does not recast)."""

    name: str
    model_hash: str
    sampled: bool


def _cached_sources(model, continuation: str, backends, progress=None) -> tuple[_Generated, dict]:
    """:func:`generate_sources`, with the rendered sources kept in the cache folder.

    The recast and the rendering (sympy's printers and common-subexpression elimination) are
    most of a model's load time once its binary is cached.  The sources are stored in
    ``<cache>/sources/<stem>_<key>.json``, written atomically, under a key that hashes the
    *spec* (:meth:`ModelSpec.canonical`: every declared field, docs and units included), the
    continuation parameter, :func:`_generator_digest` and the backends, so that a hit neither
    recasts nor renders.  The file's layout: ``{"name": str, "model_hash": str, "sampled":
    bool, "sources": {backend: source}, "key": str, "sha256": str}`` (a sampled model holds
    the NumPy source only; ``key`` is the whole key, ``sha256`` the hash of the rest,
    :func:`_entry_digest`).  An entry is used only if :func:`_read_entry` verifies it against
    this key, the spec's name and its own hash; one that does not match (damaged, edited,
    another model's) is regenerated with one :class:`~frictionkit.codegen.build.CacheWarning`.
    A file that cannot be written is not an error; a miss recasts, which validates the spec.
    """
    spec = resolve_spec(model)
    backends = tuple(backends)
    path, full_key = _sources_path(spec, continuation, backends)
    hit, problem = _read_entry(path, backends, full_key, spec.name)
    if hit is not None:
        return hit
    system, src = _generate(spec, continuation, backends, progress)
    meta = _Generated(system.name, system.model_hash, system.sampled)
    entry = {**dataclasses.asdict(meta), "sources": src, "key": full_key}
    try:
        cache_folder(path.parent)
        atomic_write(path, json.dumps({**entry, "sha256": _entry_digest(entry)}))
    except OSError:          # a read-only cache: the sources are simply rendered again next time
        pass
    if problem is not None:
        rebuilt(path, problem)
    return meta, src


def _sources_path(spec: ModelSpec, continuation: str, backends: tuple) -> tuple[Path, str]:
    """Where :func:`_cached_sources` keeps the sources of ``backends`` of ``spec`` and
    ``continuation``, and their whole key."""
    text = "\0".join([spec.canonical(), continuation, _generator_digest(), *backends])
    full_key = hashlib.sha256(text.encode()).hexdigest()
    return cache_dir() / "sources" / f"{module_stem(spec.name, continuation)}_{full_key[:20]}.json", full_key


def _first_use(spec: ModelSpec, continuation: str) -> bool:
    """Whether no load of ``spec`` and ``continuation`` has left its sources in the cache yet:
    neither the NumPy sources a deferred first load keeps nor the sources of both backends a
    compiled load keeps (:func:`generate_module`'s ``defer``)."""
    return not any(_sources_path(spec, continuation, b)[0].exists() for b in (("numpy",), ("numpy", "cython")))


def _entry_digest(entry: dict) -> str:
    """SHA-256 of a source entry without its ``sha256`` field (sorted keys: one text per entry)."""
    rest = {k: v for k, v in entry.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()


def _read_entry(path: Path, backends: tuple, key: str, name: str):
    """``((_Generated, sources), None)`` from the entry in ``path`` if it can be trusted, else
    ``(None, problem)``: ``problem`` is None for a missing file (a cold cache), otherwise what
    did not match (the caller regenerates the entry and warns once).

    Trusted means: the entry names this ``key`` and model ``name``, has its own SHA-256, and
    each source declares this model's name and the model hash the entry records (so a source
    of another model, or an entry copied from another key, is never loaded)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):     # a cold cache, or none (below a file)
        return None, None
    except (OSError, ValueError):    # unreadable, not UTF-8, or a folder in its place
        return None, "cannot be read"
    try:
        entry = json.loads(text)
    except ValueError:
        return None, "is not valid JSON (truncated or damaged)"
    if not isinstance(entry, dict) or not isinstance(entry.get("sources"), dict):
        return None, "is not a source entry (no sources)"
    meta = {f.name: entry.get(f.name) for f in dataclasses.fields(_Generated)}
    if not (isinstance(meta["name"], str) and isinstance(meta["model_hash"], str)
            and isinstance(meta["sampled"], bool)):
        return None, "lacks the model's name, hash or kind"
    if meta["name"] != name:
        return None, f"holds the sources of model {meta['name']!r}, not {name!r}"
    if entry.get("key") != key:
        return None, "belongs to another version of this model (its key is not this spec's)"
    if entry.get("sha256") != _entry_digest(entry):
        return None, "does not match its recorded SHA-256 (edited or damaged)"
    need = ("numpy",) if meta["sampled"] else backends      # as _recast_for renders them
    if not all(isinstance(entry["sources"].get(b), str) for b in need):
        return None, f"lacks the {'/'.join(need)} sources"
    declared = (f"\nMODEL_NAME = {json.dumps(name)}\n", f"\nMODEL_HASH = {json.dumps(meta['model_hash'])}\n")
    if not all(d in entry["sources"][b] for b in need for d in declared):
        return None, f"holds sources that are not those of model {name!r} with hash {meta['model_hash']}"
    return (_Generated(**meta), {b: entry["sources"][b] for b in need}), None


def module_stem(name: str, continuation: str) -> str:
    return f"{name}__{continuation}"


def _numpy_module(source: str, stem: str, name: str):
    """The generated NumPy module ``source`` as module ``name``, run from a copy in
    ``<cache>/modules/<stem>_<hash of source>.py`` and its bytecode.

    Compiling the source is what remains of a warm load once nothing is recast (the belt:
    1.7 ms against 0.2 ms from the cached bytecode).  The copy is written atomically and its
    bytecode with :mod:`py_compile` (at the usual ``__pycache__`` path, even where
    ``PYTHONDONTWRITEBYTECODE`` is set), then a manifest next to the bytecode with the SHA-256
    of both.  Nothing is trusted by its name or time stamp: the copy must be ``source``
    itself and the bytecode the one its manifest records (:func:`_cached_code`), and the code
    run is the code verified (it is not read again by the import system).  Anything else (an
    edited or truncated copy, other bytecode) is rewritten with one
    :class:`~frictionkit.codegen.build.CacheWarning`.  A cache that cannot be written falls
    back to compiling in memory.
    """
    path = cache_dir() / "modules" / f"{stem}_{hashlib.sha256(source.encode()).hexdigest()[:20]}.py"
    pyc = Path(importlib.util.cache_from_source(str(path)))
    code, problem = _cached_code(path, pyc, source)
    if code is None:
        try:
            cache_folder(path.parent)
            atomic_write(path, source)
            cache_folder(pyc.parent)
            py_compile.compile(str(path), cfile=str(pyc), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            data = pyc.read_bytes()
            atomic_write(pyc.with_suffix(".json"), json.dumps({"source_sha256": _sha256(source.encode()),
                                                               "bytecode_sha256": _sha256(data)}))
        except (OSError, py_compile.PyCompileError):
            data = None
        if problem is not None:         # rebuilt in the cache, or (read-only cache) in memory
            rebuilt(problem[0], problem[1])
        if data is None:
            return _module_from_source(source, name)
        code = marshal.loads(data[16:])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    mod.__cached__ = str(pyc)
    sys.modules[name] = mod
    try:
        exec(code, mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _cached_code(path: Path, pyc: Path, source: str):
    """``(code, None)`` from the cached copy ``path`` of ``source`` and its bytecode ``pyc`` if
    both are what the manifest (``pyc`` with suffix ``.json``) records and the copy is ``source``;
    else ``(None, problem)``, ``problem`` None for a missing entry (a cold cache) or
    ``(file, what did not match)``."""
    manifest = pyc.with_suffix(".json")
    try:
        text = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):     # a cold cache, or none (below a file)
        return None, None
    except OSError:
        return None, (path, "cannot be read")
    encoded = source.encode()
    if text != encoded and text.replace(b"\r\n", b"\n") != encoded:     # (text mode on Windows)
        return None, (path, f"is not the generated module ({len(text)} bytes, the model's {len(encoded)}: "
                            f"edited or truncated)")
    try:
        info = json.loads(manifest.read_text(encoding="utf-8"))
        data = pyc.read_bytes()
    except FileNotFoundError:
        return None, None       # written up to the copy only (an interrupted first load)
    except (OSError, ValueError):
        return None, (manifest, "cannot be read or is not JSON")
    if not isinstance(info, dict) or info.get("source_sha256") != _sha256(encoded):
        return None, (manifest, "records another source than this model's")
    if (info.get("bytecode_sha256") != _sha256(data) or data[:4] != importlib.util.MAGIC_NUMBER
            or len(data) <= 16):
        return None, (pyc, "is not the bytecode its manifest records (edited or replaced)")
    try:
        return marshal.loads(data[16:]), None
    except (ValueError, EOFError, TypeError):
        return None, (pyc, "cannot be read as bytecode")


def _module_from_source(source: str, name: str):
    mod = types.ModuleType(name)
    mod.__file__ = f"<generated {name}>"
    exec(compile(source, mod.__file__, "exec"), mod.__dict__)
    sys.modules[name] = mod
    return mod


def generate_module(model, continuation: str, backend: str = "auto", progress: bool | None = None,
                    defer: bool = False):
    """Generated model module for ``model`` and ``continuation``.

    Parameters
    ----------
    model : ModelSpec, str or path
        A spec, a zoo name (``"belt"``) or a model file.
    continuation : str
        The continuation parameter.
    backend : {"auto", "cython", "numpy"}
        ``auto`` compiles with Cython and falls back to NumPy with one warning if the build
        fails; ``FRICTIONKIT_REQUIRE_COMPILED=1`` turns that fallback into an error.
    progress : bool, optional
        A progress bar of the code generation on stderr (True), none (False), or one for
        models of at least :data:`PROGRESS_MIN_STATES` states (None, the default); a model
        whose sources are cached is not generated again and shows none.
    defer : bool
        With ``backend="auto"``: the first load of a model (no sources of it in the cache)
        returns its NumPy module without rendering the Cython source or compiling it; the
        NumPy sources that load keeps in the cache make the next load (in any process)
        compile as ``auto`` does.  For models whose kernels are a small part of a run (the
        contact port of a structure, DESIGN §6), where a build costs more than a one-off run:
        the bowed string's port with 16 modes, 1.9 s of build against the equilibria and the
        12-step branch of ``benchmarks/bench_structure_peers.py``'s command, 0.19 s of CPU on
        the NumPy kernels and 0.15 s on the compiled ones (medians of 7 alternated runs in one
        process).
        ``FRICTIONKIT_REQUIRE_COMPILED=1`` compiles at the first load.

    Notes
    -----
    For zoo models whose generated sources ship in ``frictionkit.generated`` the shipped
    files are used (a test checks they are exactly what the generator emits).
    """
    if backend not in ("auto", "cython", "numpy"):
        raise ValueError(f"backend {backend!r}: choose 'auto', 'cython' or 'numpy'")
    shipped = isinstance(model, str) and model in ZOO and continuation in ZOO[model][1]
    if not shipped:
        model = resolve_spec(model)          # once: a model file runs the user's code
    stem = module_stem(model if shipped else model.name, continuation)
    if shipped:
        np_mod = importlib.import_module(f"frictionkit.generated.{stem}")
        pyx_path = GENERATED_DIR / f"{stem}.pyx"
        pyx = pyx_path.read_text(encoding="utf-8") if backend != "numpy" and pyx_path.exists() else None
    else:
        first = (defer and backend == "auto" and os.environ.get("FRICTIONKIT_REQUIRE_COMPILED") != "1"
                 and _first_use(model, continuation))
        meta, src = _cached_sources(model, continuation,
                                    ("numpy",) if backend == "numpy" or first else ("numpy", "cython"), progress)
        np_mod = _numpy_module(src["numpy"], stem, f"_fk_np_{stem}_{meta.model_hash}")
        pyx = src.get("cython")
    if backend == "numpy" or getattr(np_mod, "SAMPLED", False) or pyx is None:
        return np_mod                  # (pyx None: a deferred first load)
    try:
        kernels, _ = compile_module(pyx, stem)
    except BuildError as exc:
        if backend == "cython" or os.environ.get("FRICTIONKIT_REQUIRE_COMPILED") == "1":
            raise
        if stem not in _warned:
            _warned.add(stem)
            warnings.warn(f"{exc}; falling back to the NumPy backend (slower). Set "
                          f"FRICTIONKIT_REQUIRE_COMPILED=1 to make this an error.", RuntimeWarning, stacklevel=2)
        return np_mod
    return _join(np_mod, kernels)


def _join(np_mod, kernels):
    """The model module of the compiled backend: the NumPy module's interface with the
    compiled kernels in place of the NumPy ones (the extension holds only the kernels,
    which keeps its build small)."""
    if kernels.MODEL_HASH != np_mod.MODEL_HASH:
        raise BuildError(f"compiled kernels of {kernels.MODEL_NAME!r} have model hash {kernels.MODEL_HASH}, "
                         f"the NumPy module {np_mod.MODEL_HASH}: regenerate with `frictionkit codegen --all`")
    mod = types.ModuleType(f"{np_mod.__name__}__cython", np_mod.__doc__)
    mod.__dict__.update({k: v for k, v in vars(np_mod).items() if not k.startswith("__")})
    mod.__dict__.update({k: getattr(kernels, k) for k in kernels.KERNELS})
    mod.BACKEND = "cython"
    mod.__file__ = kernels.__file__
    return mod


def write_generated(names=None, out_dir: Path | None = None) -> list[Path]:
    """(Re)write the shipped generated sources of the zoo (``frictionkit codegen --all``)."""
    out_dir = Path(out_dir or GENERATED_DIR)
    written = []
    for name, (_, params) in sorted(ZOO.items()):
        if names and name not in names:
            continue
        for c in params:
            _, src = generate_sources(name, c)
            stem = module_stem(name, c)
            for backend, ext in (("numpy", ".py"), ("cython", ".pyx")):
                if backend not in src:
                    continue
                path = out_dir / f"{stem}{ext}"
                atomic_write(path, src[backend])
                written.append(path)
    return written
