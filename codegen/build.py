"""Compile generated Cython modules into a per-user cache (STYLE §5-6).

* The cache key hashes everything that changes the binary: the ``.pyx`` source (which
  embeds the model hash and generator version), the templates, the compiler flags, the
  Python ABI, and the Cython and NumPy versions — nothing else.
* Lookup before compile; an exclusive ``flock`` on the key's folder makes concurrent
  builds of the same model safe (the second process waits, then finds the result).
* The build runs in a child process whose output goes to ``build.log`` in the key's
  folder, so a failed build keeps its log; the caller then falls back to NumPy with one
  warning, or raises :class:`BuildError` when ``FRICTIONKIT_REQUIRE_COMPILED=1``.
* Never ``os.chdir`` in this process, never a global module counter.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

COMPILE_ARGS = ("-O3",)


class BuildError(RuntimeError):
    """A generated Cython module failed to compile (the message gives the log path)."""


def cache_dir() -> Path:
    """Per-user cache folder: ``$FRICTIONKIT_CACHE`` or ``$XDG_CACHE_HOME/frictionkit``."""
    root = os.environ.get("FRICTIONKIT_CACHE")
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "frictionkit"


def build_key(pyx_source: str) -> str:
    """Hash of everything that changes the compiled binary."""
    import Cython
    import numpy

    from .emit import template_digest
    h = hashlib.sha256()
    for part in (pyx_source, template_digest(), " ".join(COMPILE_ARGS), sysconfig.get_config_var("EXT_SUFFIX") or "",
                 sys.version, Cython.__version__, numpy.__version__):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


_BUILD_SCRIPT = textwrap.dedent("""
    import sys
    from setuptools import Distribution, Extension
    from Cython.Build import cythonize
    name, pyx, out, tmp = sys.argv[1:5]
    flags = sys.argv[5:]
    ext = Extension(name, [pyx], extra_compile_args=flags)
    dist = Distribution({"ext_modules": cythonize([ext], quiet=True, build_dir=tmp,
                                                   compiler_directives={"language_level": 3})})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = out
    cmd.build_temp = tmp
    cmd.inplace = False
    dist.run_command("build_ext")
""")


def _import_extension(name: str, path: Path):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    sys.modules[name] = mod
    return mod


def compile_module(pyx_source: str, stem: str):
    """Compile ``pyx_source`` (cached) and import it.

    Parameters
    ----------
    pyx_source : str
        Generated Cython source.
    stem : str
        Readable part of the extension's name (e.g. ``belt__Vb``).

    Returns
    -------
    module, dict
        The imported extension module and build info (``key``, ``path``, ``cached``).

    Raises
    ------
    BuildError
        If compilation fails; ``build.log`` in the key's folder holds the compiler output.
    """
    key = build_key(pyx_source)
    name = f"_fk_{stem}_{key}"
    folder = cache_dir() / key
    folder.mkdir(parents=True, exist_ok=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = folder / f"{name}{suffix}"
    if name in sys.modules:
        return sys.modules[name], dict(key=key, path=str(target), cached=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cached = target.exists()
            if not cached:
                failed = folder / "FAILED"
                pyx = folder / f"{name}.pyx"
                pyx.write_text(pyx_source)
                tmp = folder / "tmp"
                tmp.mkdir(exist_ok=True)
                import numpy
                env = dict(os.environ, CFLAGS=f"-I{numpy.get_include()} " + os.environ.get("CFLAGS", ""))
                log = folder / "build.log"
                with open(log, "w") as fh:
                    proc = subprocess.run([sys.executable, "-c", _BUILD_SCRIPT, name, str(pyx), str(folder),
                                           str(tmp), *COMPILE_ARGS], stdout=fh, stderr=subprocess.STDOUT,
                                          cwd=str(folder), env=env)
                if proc.returncode != 0 or not target.exists():
                    failed.write_text(f"exit code {proc.returncode}\n")
                    raise BuildError(f"compiling the Cython module {stem} failed (exit code {proc.returncode}); "
                                     f"compiler output kept in {log}")
                if failed.exists():
                    failed.unlink()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return _import_extension(name, target), dict(key=key, path=str(target), cached=cached)
