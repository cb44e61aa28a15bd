"""Compile generated Cython modules into a per-user cache (STYLE §5-6).

* The cache key hashes everything that changes the binary: the ``.pyx`` source (which
  embeds the model hash and generator version), the templates, the compiler flags and
  Cython directives, the user's ``CC``/``CFLAGS``/``LDFLAGS``, the Python ABI and the
  Cython version — nothing else.
* Lookup before compile.  An entry is trusted only if its manifest (written after the
  build: the key, the module's name, the SHA-256 of the ``.pyx`` it was built from, the size
  and SHA-256 of the extension) matches the key and source asked for and the file on disk:
  anything else (a truncated, edited or swapped file, another key's manifest) is rebuilt with
  one :class:`CacheWarning` naming the file, never imported (importing a truncated ``.so``
  kills Python with SIGBUS).
* A portable lock (:mod:`filelock`) on the key's folder makes concurrent builds of the
  same model safe: the second process waits, then finds the result.  The extension is
  built in a private temporary folder and moved into place with ``os.replace``, so no
  process ever maps a half-written file.
* The build runs in a child process whose output goes to ``build.log``; a failed build is
  remembered (``FAILED.json`` under its key, with the log path) and not retried until the
  inputs change.  A failure that is not the source's (a full disk or quota, no memory, an
  interrupt, a compiler killed by a signal: :func:`_transient`) is not remembered: the next
  load builds again.  The caller then falls back to NumPy with one warning, or raises
  :class:`BuildError` when ``FRICTIONKIT_REQUIRE_COMPILED=1``.
* A cache folder that cannot be written is replaced by a temporary folder for this
  process (one warning); a file where the cache or one of its folders belongs is a
  :class:`CacheFolderError` that names it and says what to do (:func:`cache_folder`).
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


class CacheFolderError(FrictionkitError, RuntimeError):
    """A file stands where the cache folder, or one of its folders, belongs.

    Typical causes: ``FRICTIONKIT_CACHE`` set to a file's path; a file written by hand (or by
    another program) as ``<cache>/modules``, ``<cache>/sources`` or a key's folder.  The
    message names the file and says what to do (move it away, or point ``FRICTIONKIT_CACHE``
    to a folder)."""


class CacheWarning(FrictionkitError, RuntimeWarning):
    """A cached artefact did not match its manifest or its model and was rebuilt (the message
    names the file and what did not match); its content was not used."""


def rebuilt(path, reason: str, stacklevel: int = 3):
    """The one warning for a cached artefact that was not trusted: ``path`` and ``reason``
    (what did not match), and that it was rebuilt."""
    warnings.warn(f"frictionkit cache: {path} {reason}; it was not used and has been rebuilt",
                  CacheWarning, stacklevel=stacklevel)


def cache_folder(folder: Path) -> Path:
    """``folder`` (in the cache), created with its parents if missing.

    Raises
    ------
    CacheFolderError
        A file stands where the cache folder (``$FRICTIONKIT_CACHE``) or a folder inside it
        belongs: the message names it and the remedy, instead of the operating system's
        ``[Errno 17] File exists``.
    OSError
        Any other reason (a read-only cache, a file above the cache folder): the callers
        fall back to a temporary folder or to memory.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    except (FileExistsError, NotADirectoryError):
        root = cache_dir()
        blocker = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        if blocker is None or not (blocker == root or root in blocker.parents):
            raise
        if blocker == root:
            raise CacheFolderError(
                f"the frictionkit cache folder {root} is a file, not a folder: move or delete that file, or set "
                f"FRICTIONKIT_CACHE to a folder (it is created if missing)") from None
        raise CacheFolderError(
            f"{blocker} is a file where the frictionkit cache keeps a folder: delete it (the cache is rebuilt "
            f"as needed), or set FRICTIONKIT_CACHE to another folder") from None


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
    import errno, json, sys
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
    try:
        dist.run_command("build_ext")
    except KeyboardInterrupt:
        print("build interrupted (KeyboardInterrupt)")
        sys.exit(75)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM, errno.EINTR, errno.EAGAIN):
            raise
        print(f"build failed for want of resources: {exc}")
        sys.exit(75)
""")

#: exit code of the build child for a failure that is not the source's (EX_TEMPFAIL of sysexits.h)
_TRANSIENT_EXIT = 75
#: what a compiler's or setuptools' output says when the machine, not the source, failed the build
_TRANSIENT_LOG = ("No space left on device", "Disk quota exceeded", "Cannot allocate memory",
                  "out of memory", "virtual memory exhausted", "KeyboardInterrupt", "Killed",
                  "terminated by signal", "Interrupted system call", "Resource temporarily unavailable")


def _transient(returncode: int, log_text: str) -> str | None:
    """Why a failed build is not the source's fault (then it is not remembered), or None.

    A child killed by a signal (``returncode < 0``: an interrupt, the out-of-memory killer), the
    build script's own :data:`_TRANSIENT_EXIT`, or a log that reports a full disk, a quota, no
    memory, an interrupt or a killed compiler (gcc: ``fatal error: error writing to ...: No space
    left on device``; ``internal compiler error: Killed``)."""
    if returncode is not None and returncode < 0:
        return f"the compiler was stopped by signal {-returncode}"
    if returncode == _TRANSIENT_EXIT:
        return "the build was interrupted or ran out of resources"
    found = next((m for m in _TRANSIENT_LOG if m in log_text), None)
    return f"the compiler output says {found!r}" if found else None


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


#: what :func:`_check` returns for an entry that is simply not there (a cold cache)
MISSING = "missing"


def _manifest(key: str, name: str, pyx_source: str, target: Path) -> dict:
    """What a successful build records next to its extension (``MANIFEST.json``)."""
    return {"key": key, "name": name, "pyx_sha256": hashlib.sha256(pyx_source.encode()).hexdigest(),
            "size": target.stat().st_size, "sha256": _digest(target)}


def _check(target: Path, key: str, pyx_source: str) -> str | None:
    """None if the extension ``target`` can be trusted for ``key`` and ``pyx_source``;
    :data:`MISSING` if there is no entry; otherwise what did not match.

    Trusted means: its manifest names this key, this module and the SHA-256 of this ``.pyx``
    source (which embeds the model's hash), and the file has the size and SHA-256 its build
    recorded.  The hash is read from the file itself, never from its name.
    """
    manifest = target.with_name("MANIFEST.json")
    if not target.exists():
        return MISSING
    try:
        info = json.loads(manifest.read_text())
        if not isinstance(info, dict):
            raise ValueError
    except FileNotFoundError:
        return "has no manifest (MANIFEST.json)"
    except (OSError, ValueError):
        return "has a damaged manifest (MANIFEST.json is not a JSON object)"
    if set(info) == {"size", "sha256"}:
        return MISSING          # an earlier version's manifest (no key, no source): built again, silently
    if info.get("key") != key or info.get("name") != target.name.split(".")[0]:
        return (f"belongs to another build (its manifest names {info.get('name')!r} under key "
                f"{info.get('key')!r})")
    if info.get("pyx_sha256") != hashlib.sha256(pyx_source.encode()).hexdigest():
        return "was built from another source than this model's (the manifest's .pyx hash differs)"
    try:
        size = target.stat().st_size
    except OSError:
        return "cannot be read"
    if size != info.get("size") or size == 0:
        return f"has {size} bytes, its manifest {info.get('size')!r} (truncated or replaced)"
    if _digest(target) != info.get("sha256"):
        return "does not have the SHA-256 its manifest recorded (edited or replaced)"
    return None


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
        cache_folder(root)          # a file in its place is the user's to fix: an error, not a fallback
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
    untrusted = None
    for root in (cache_dir(), _fallback_root):
        if root is None:
            continue
        target = root / key / f"{name}{suffix}"
        problem = _check(target, key, pyx_source)
        if problem is None:
            return _import_extension(name, target), dict(key=key, path=str(target), cached=True)
        if problem != MISSING and untrusted is None:
            untrusted = (target, problem)
    # only a build takes the lock: a warm load does not import filelock (4.5 ms of a 15 ms load)
    import filelock
    root = _writable_root()
    folder = root / key
    target = folder / f"{name}{suffix}"
    try:
        cache_folder(folder)
        lock = filelock.FileLock(str(folder / ".lock"), timeout=LOCK_TIMEOUT_S)
        with lock:
            problem = _check(target, key, pyx_source)     # another process may have built it meanwhile
            cached = problem is None
            if not cached:
                if problem != MISSING:
                    untrusted = (target, problem)
                _build(pyx_source, stem, key, name, folder, target, args, link, root, label)
                if untrusted is not None:
                    rebuilt(*untrusted)
    except filelock.Timeout:
        raise BuildError(f"waited {LOCK_TIMEOUT_S} s for another process building {stem} in {folder}; "
                         f"remove {folder / '.lock'} if no build is running") from None
    except OSError as exc:
        raise BuildError(f"cannot build {stem} in {folder}: {exc.strerror or exc}"
                         f"{f' ({exc.filename})' if exc.filename else ''}; not remembered as a failure: the "
                         f"next load tries again") from None
    return _import_extension(name, target), dict(key=key, path=str(target), cached=cached)


def _remembered_failure(failed: Path, log: Path) -> dict | None:
    """The failure ``FAILED.json`` records, or None if there is none or it was transient (a
    record from a version that remembered a full disk as a compiler failure is dropped).  Only
    the key's own ``build.log`` is read, never a path the record names."""
    if not failed.exists():
        return None
    try:
        info = json.loads(failed.read_text())
        info = info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        info = {}
    try:
        with open(log, "rb") as fh:
            text = fh.read(1 << 20).decode(errors="replace")
    except OSError:
        text = ""
    if _transient(info.get("returncode") if isinstance(info.get("returncode"), int) else None, text):
        failed.unlink(missing_ok=True)
        return None
    return info


def _build(pyx_source, stem, key, name, folder, target, args, link, root, label=None):
    """Build under the key's lock; records a genuine failure, or the manifest of a success.

    A failure that is not the source's (:func:`_transient`, or an ``OSError`` here such as a
    full disk) raises :class:`BuildError` without being recorded; ``KeyboardInterrupt``
    propagates, and nothing is recorded either."""
    log = folder / "build.log"
    failed = folder / "FAILED.json"
    info = _remembered_failure(failed, log)
    if info is not None:
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
            try:
                with open(log, "rb") as fh:
                    text = fh.read(1 << 20).decode(errors="replace")
            except OSError:
                text = ""
            why = _transient(proc.returncode, text)
            if why:
                raise BuildError(f"compiling the Cython module {stem} did not finish: {why} (output in {log}); "
                                 f"not remembered as a failure: the next load tries again")
            atomic_write(failed, json.dumps({"returncode": proc.returncode, "log": str(log),
                                              "time": time.strftime("%Y-%m-%d %H:%M:%S")}))
            raise BuildError(f"compiling the Cython module {stem} failed (exit code {proc.returncode}); "
                             f"compiler output kept in {log}")
        shutil.copy2(pyx, folder / pyx.name)         # kept next to the binary, for reading
        os.replace(built, target)
        try:
            atomic_write(folder / "MANIFEST.json", json.dumps(_manifest(key, name, pyx_source, target)))
        except BaseException:       # no manifest, no entry: a full disk here leaves nothing half-made
            target.unlink(missing_ok=True)
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _record(root, time.perf_counter() - t0)
