"""Compile generated Cython modules into a per-user cache (STYLE §5-6).

* The cache key hashes everything that changes the binary: the ``.pyx`` source (which
  embeds the model hash and generator version), the templates, the compiler flags and
  Cython directives, the user's ``CC``/``CFLAGS``/``LDFLAGS``, the Python ABI and the
  Cython version — nothing else.
* Lookup before compile.  An entry is trusted only if its manifest (size and SHA-256 of
  the extension, written after the build) matches: a truncated or empty file is rebuilt,
  never imported (importing a truncated ``.so`` kills Python with SIGBUS).
* A portable lock (:mod:`filelock`) on the key's folder makes concurrent builds of the
  same model safe: the second process waits, then finds the result.  The extension is
  built in a private temporary folder and moved into place with ``os.replace``, so no
  process ever maps a half-written file.
* The build runs in a child process whose output goes to ``build.log``; a failed build is
  remembered (``FAILED.json`` under its key, with the log path) and not retried until the
  inputs change.  The caller then falls back to NumPy with one warning, or raises
  :class:`BuildError` when ``FRICTIONKIT_REQUIRE_COMPILED=1``.
* A cache folder that cannot be written is replaced by a temporary folder for this
  process (one warning).
* Never ``os.chdir`` in this process, never a global module counter.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import warnings
from pathlib import Path


from frictionkit.modelspec.errors import FrictionkitError

#: C compiler flags.  -O1 is the measured compromise (benchmarks/bench_codegen.py reports
#: build time and kernel time for -O0/-O1/-O2): the kernels are straight-line arithmetic, so
#: -O2/-O3 add build time (the Cython wrapper is most of the C) for little kernel speed.
#: ``-fopenmp-simd`` honours the kernels' ``#pragma omp simd`` sample loops (vectorised even at
#: -O1; no OpenMP runtime), ``-fno-math-errno`` lets sqrt be one instruction.  Never
#: ``-ffast-math`` (it changes NaN/inf semantics and reassociates).  ``-g0`` drops the debug
#: information Python's own CFLAGS ask for (``-g``): nobody debugs a generated kernel, and its
#: variable tracking took half the compile of a 200-state chain (72 s of CPU against 39 s,
#: issue 28; benchmarks/bench_codegen_scale.py).
COMPILE_ARGS = ("-O1", "-fopenmp-simd", "-fno-math-errno", "-g0")
#: glibc's vector math library: where the linker may find it (x86-64 Debian/Ubuntu, Fedora...)
_LIBMVEC_PATHS = ("/usr/lib/x86_64-linux-gnu/libmvec.so", "/lib/x86_64-linux-gnu/libmvec.so",
                  "/usr/lib64/libmvec.so", "/lib64/libmvec.so", "/usr/lib/libmvec.so")


@functools.lru_cache(maxsize=None)
def platform_args() -> tuple:
    """Compile and link flags that depend on this machine: ``(compile_args, link_args)``.

    * glibc >= 2.35 on x86-64 ships libmvec with SIMD variants of atan, exp, tanh, sin...
      (<= 4 ulp): ``-DFK_LIBMVEC -lmvec`` lets the vectorised sample loops call them instead
      of scalar libm (the generated C declares them ``omp declare simd`` under FK_LIBMVEC).
    * A CPU with AVX2 and FMA gets ``-mavx2 -mfma`` (four doubles per instruction; ~2.4x on
      the transcendental kernels, benchmarks/bench_codegen.py) with ``-ffp-contract=off``, so
      that no multiply-add is fused and the results round as in the portable build.

    Both are part of the cache key (they are compiler flags), so a cache shared by machines
    without AVX2 never hands them an AVX2 binary: they compute another key and build their own.
    """
    compile_args, link_args = [], []
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")):
        return (), ()
    try:
        libc, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        glibc = libc == "glibc" and tuple(int(v) for v in version.split(".")[:2]) >= (2, 35)
    except (ValueError, OSError, AttributeError):
        glibc = False
    if glibc and any(os.path.exists(p) for p in _LIBMVEC_PATHS):
        compile_args.append("-DFK_LIBMVEC")
        link_args.append("-lmvec")
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        flags = []
    if "avx2" in flags and "fma" in flags:
        compile_args += ["-mavx2", "-mfma", "-ffp-contract=off"]
    return tuple(compile_args), tuple(link_args)


#: Cython directives (also in the generated header; part of the cache key).
COMPILER_DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False, "cdivision": True}
#: environment variables the compiler reads (part of the cache key)
COMPILER_ENV = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")
#: build-time guess before any build was timed on this machine
DEFAULT_BUILD_SECONDS = 3.0
LOCK_TIMEOUT_S = 900


class BuildError(FrictionkitError, RuntimeError):
    """A generated Cython module could not be compiled (the message gives the log path)."""


def cache_dir() -> Path:
    """Per-user cache folder: ``$FRICTIONKIT_CACHE`` or ``$XDG_CACHE_HOME/frictionkit``."""
    root = os.environ.get("FRICTIONKIT_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "frictionkit"


def build_flags(compile_args=None) -> tuple:
    """Compiler and linker flags of a build: ``compile_args`` as given, or by default
    :data:`COMPILE_ARGS` followed by this machine's :func:`platform_args`; the link flags
    are always the machine's (linking libmvec unused costs nothing)."""
    extra, link = platform_args()
    return (tuple(compile_args) if compile_args else COMPILE_ARGS + extra), link


#: the code templates' folder (their digest is part of the build key: a template change rebuilds every model)
TEMPLATES = Path(__file__).resolve().parent / "templates"


def template_digest() -> str:
    """Hash of the templates (part of the build-cache key)."""
    h = hashlib.sha256()
    for p in sorted(TEMPLATES.glob("*.j2")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_key(pyx_source: str, compile_args=None) -> str:
    """Hash of everything that changes the compiled binary.

    Reads Cython's version from its metadata and the templates from their files: a model whose
    binary is cached loads without importing Cython, jinja2 or the printers."""
    h = hashlib.sha256()
    env = [f"{k}={os.environ.get(k, '')}" for k in COMPILER_ENV]
    args, link = build_flags(compile_args)
    for part in (pyx_source, template_digest(), " ".join(args), " ".join(link),
                 json.dumps(COMPILER_DIRECTIVES, sort_keys=True), "\n".join(env),
                 sysconfig.get_config_var("EXT_SUFFIX") or "", sys.version, importlib.metadata.version("Cython")):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


_BUILD_SCRIPT = textwrap.dedent("""
    import json, sys
    from setuptools import Distribution, Extension
    from Cython.Build import cythonize
    name, pyx, out, tmp, directives, link = sys.argv[1:7]
    flags = sys.argv[7:]
    ext = Extension(name, [pyx], extra_compile_args=flags, extra_link_args=json.loads(link))
    dist = Distribution({"ext_modules": cythonize([ext], quiet=True, build_dir=tmp,
                                                   compiler_directives=json.loads(directives))})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = out
    cmd.build_temp = tmp
    cmd.inplace = False
    dist.run_command("build_ext")
""")


def atomic_write(path: Path, text: str):
    """Write ``text`` to ``path`` atomically (temporary file in the same folder + os.replace)."""
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verified(target: Path) -> bool:
    """True if ``target`` exists and matches the size and hash its build recorded."""
    manifest = target.with_name("MANIFEST.json")
    try:
        info = json.loads(manifest.read_text())
        return (target.stat().st_size == info["size"] and info["size"] > 0
                and _digest(target) == info["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _import_extension(name: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    sys.modules[name] = mod
    return mod


_fallback_root: Path | None = None


def _writable_root() -> Path:
    """The cache folder, or (once per process, with one warning) a temporary one if the
    cache folder cannot be written."""
    global _fallback_root
    if _fallback_root is not None:
        return _fallback_root
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=str(root)):
            pass
        return root
    except OSError as exc:
        try:
            _fallback_root = Path(tempfile.mkdtemp(prefix="frictionkit-build-"))
        except OSError as exc2:
            raise BuildError(f"neither the cache folder {root} ({exc.strerror or exc}) nor a temporary "
                             f"folder ({exc2.strerror or exc2}) can be written") from None
        warnings.warn(f"frictionkit cache folder {root} cannot be written ({exc.strerror or exc}); compiled "
                      f"models are built in {_fallback_root} for this process only (set FRICTIONKIT_CACHE to "
                      f"a writable folder to keep them)", RuntimeWarning, stacklevel=3)
        return _fallback_root


def _estimate(root: Path) -> float:
    try:
        times = json.loads((root / "build_seconds.json").read_text())
        return float(statistics.median(times[-9:]))
    except (OSError, ValueError, TypeError, statistics.StatisticsError):
        return DEFAULT_BUILD_SECONDS


def _record(root: Path, seconds: float):
    try:
        path = root / "build_seconds.json"
        try:
            times = json.loads(path.read_text())[-20:]
        except (OSError, ValueError):
            times = []
        atomic_write(path, json.dumps(times + [round(seconds, 2)]))
    except OSError:  # statistics only: never fail a build for them
        pass


def compile_module(pyx_source: str, stem: str, compile_args=None, label: str | None = None):
    """Compile ``pyx_source`` (cached) and import it.

    Parameters
    ----------
    pyx_source : str
        Generated Cython source.
    stem : str
        Readable part of the extension's name (e.g. ``belt__Vb``).
    compile_args : sequence of str, optional
        C compiler flags (default :data:`COMPILE_ARGS` followed by :func:`platform_args`;
        part of the cache key).
    label : str, optional
        What the first-use message says is compiled (default ``"model <stem>"``).

    Returns
    -------
    module, dict
        The imported extension module and build info (``key``, ``path``, ``cached``).

    Raises
    ------
    BuildError
        If compilation fails now or failed before for the same inputs; the message gives
        the path of ``build.log``, which holds the compiler output.
    """
    args, link = build_flags(compile_args)
    key = build_key(pyx_source, compile_args)
    name = f"_fk_{stem}_{key}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    if name in sys.modules:
        return sys.modules[name], dict(key=key, path=getattr(sys.modules[name], "__file__", ""), cached=True)
    # lookup first: a verified entry is used even from a read-only cache
    for root in (cache_dir(), _fallback_root):
        if root is not None and _verified(root / key / f"{name}{suffix}"):
            target = root / key / f"{name}{suffix}"
            return _import_extension(name, target), dict(key=key, path=str(target), cached=True)
    # only a build takes the lock: a warm load does not import filelock (4.5 ms of a 15 ms load)
    import filelock
    root = _writable_root()
    folder = root / key
    target = folder / f"{name}{suffix}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(str(folder / ".lock"), timeout=LOCK_TIMEOUT_S)
        with lock:
            cached = _verified(target)
            if not cached:
                _build(pyx_source, stem, name, folder, target, args, link, root, label)
    except filelock.Timeout:
        raise BuildError(f"waited {LOCK_TIMEOUT_S} s for another process building {stem} in {folder}; "
                         f"remove {folder / '.lock'} if no build is running") from None
    except OSError as exc:
        raise BuildError(f"cannot build {stem} in {folder}: {exc}") from None
    return _import_extension(name, target), dict(key=key, path=str(target), cached=cached)


def _build(pyx_source, stem, name, folder, target, args, link, root, label=None):
    """Build under the key's lock; records a failure, or the manifest of a success."""
    log = folder / "build.log"
    failed = folder / "FAILED.json"
    if failed.exists():
        try:
            info = json.loads(failed.read_text())
        except (OSError, ValueError):
            info = {}
        raise BuildError(f"compiling the Cython module {stem} failed before with the same source, flags and "
                         f"compiler (exit code {info.get('returncode', '?')}); compiler output kept in "
                         f"{info.get('log', log)}; not retried until these change (delete {folder} to retry)")
    for stale in (target, folder / "MANIFEST.json"):     # a corrupt entry: rebuilt from scratch
        stale.unlink(missing_ok=True)
    print(f"frictionkit: compiling {label or 'model ' + stem} (first use, about {_estimate(root):.0f} s)",
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(dir=str(folder), prefix="build-"))
    try:
        pyx = tmp / f"{name}.pyx"
        pyx.write_text(pyx_source, encoding="utf-8")
        with open(log, "w") as fh:
            proc = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT, name, str(pyx), str(tmp), str(tmp),
                                   json.dumps(COMPILER_DIRECTIVES), json.dumps(list(link)), *args], stdout=fh,
                                  stderr=subprocess.STDOUT, cwd=str(tmp))
        built = tmp / target.name
        if proc.returncode != 0 or not built.exists():
            atomic_write(failed, json.dumps({"returncode": proc.returncode, "log": str(log),
                                              "time": time.strftime("%Y-%m-%d %H:%M:%S")}))
            raise BuildError(f"compiling the Cython module {stem} failed (exit code {proc.returncode}); "
                             f"compiler output kept in {log}")
        shutil.copy2(pyx, folder / pyx.name)         # kept next to the binary, for reading
        os.replace(built, target)
        atomic_write(folder / "MANIFEST.json", json.dumps({"size": target.stat().st_size,
                                                            "sha256": _digest(target)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _record(root, time.perf_counter() - t0)
