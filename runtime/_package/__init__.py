"""The top-level package ``frictionkit``: the one import name of the four folders
``modelspec``, ``codegen``, ``generated`` and ``runtime`` (``pyproject.toml`` maps them to
``frictionkit.<folder>``, and this folder to ``frictionkit`` itself: no fifth top-level folder).

It holds the version, the one source of truth: ``pyproject.toml`` reads it from here
(``[tool.setuptools.dynamic] version = {attr = "frictionkit.__version__"}``; setuptools reads
the literal without importing anything), and ``frictionkit.runtime.__version__``, the
installed metadata and ``frictionkit --version`` all say the same.  It imports nothing heavy:
``import frictionkit`` stays cheap.

Ctrl-C while the command line starts (issue 28).  The ``frictionkit`` console script's first
line imports this package: here, before anything else, and in that script only (``import
frictionkit`` in a program or a notebook leaves SIGINT alone), SIGINT gets a handler that
writes one sentence and ends the process with code 130 (128 + SIGINT, as shells report it):
nothing has been computed or written while the command line loads, and Python's
``KeyboardInterrupt`` would otherwise surface in any import (click, NumPy, ...) with a
traceback.  The command group gives SIGINT back (:func:`_release_interrupt`) as it starts a
command, whose own handling (partial results saved, its message) then applies, and ignores it
once the command has ended (:func:`_ignore_interrupt_at_exit`).  The handler
lives in this file, not a module of its own, so that no import precedes it; ``_signal`` (built
in) rather than ``signal`` (which imports ``enum``).  What runs before this file (the
interpreter's ``site`` and the environment's ``.pth`` files) is out of frictionkit's reach.
"""
import os as _os
import sys as _sys

import _signal


def _interrupted(signum, frame):
    """SIGINT while the command line loads: one sentence on stderr, exit code 130 at once."""
    try:
        _os.write(2, b"Error: interrupted (Ctrl-C) while starting; nothing was computed or written\n")
    finally:
        _os._exit(130)


_released = False                        # whether _release_interrupt gave SIGINT back


def _release_interrupt():
    """Give SIGINT back to Python's ``KeyboardInterrupt`` if the start-up handler holds it."""
    global _released
    if _signal.getsignal(_signal.SIGINT) is _interrupted:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        _released = True


def _ignore_interrupt_at_exit():
    """Once the command has ended (its results written, its message and exit status set),
    ignore SIGINT in a process whose start-up handler :func:`_release_interrupt` released: a
    Ctrl-C in the last milliseconds, while click and the interpreter wind down, would otherwise
    turn a finished command's status into 1 with a bare ``KeyboardInterrupt``, click's
    ``Aborted!`` or an ignored exception's traceback (seen under load in
    ``tests/faults/test_startup_interrupt.py``)."""
    if _released:
        try:
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        except ValueError:               # not the main thread
            pass


#: whether this process is the ``frictionkit`` console script (not a program importing frictionkit)
_console_script = (_os.path.basename(str((getattr(_sys, "argv", None) or [""])[0])).removesuffix(".exe")
                   == "frictionkit")

#: NumPy's submodules that SciPy's array-API layer loads without using them
_NUMPY_UNUSED = ("numpy.testing", "numpy.f2py")


def _defer_unused_numpy():
    """In the console script only, make :data:`_NUMPY_UNUSED` lazy modules
    (``importlib.util.LazyLoader``): loaded at their first attribute access, not before.

    SciPy's array-API layer (``scipy._lib.array_api_compat.numpy``, imported by every
    ``scipy.linalg`` and ``scipy.sparse``) clones NumPy's namespace with ``from numpy import *``;
    NumPy 2 lists its submodules in ``__all__`` and loads them on access, so that clone imports
    ``numpy.testing`` (with ``unittest`` and ``importlib.metadata``) and ``numpy.f2py`` (with
    ``charset_normalizer``), which no command uses: 0.03 s of CPU of the seed-000 diagram's
    whole process (0.760 -> 0.729 s, medians of 9 alternated runs, ``python benchmarks/run.py
    cli``).  The commands call this as they import the runtime (:func:`_prepare_command`),
    never for ``--help``.  A lazy module is the
    module itself once touched.  Python 3.11's lazy modules are not safe to touch first from
    two threads at once, hence only these two, which nothing in NumPy, SciPy or frictionkit
    touches while computing (``numpy.ma``, as heavy, stays as it is: ``numpy.unique`` calls
    it), and only in the console script.
    """
    if not _console_script:
        return
    import importlib.util

    import numpy
    for name in _NUMPY_UNUSED:
        if name in _sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        spec.loader = importlib.util.LazyLoader(spec.loader)
        module = importlib.util.module_from_spec(spec)
        _sys.modules[name] = module
        spec.loader.exec_module(module)
        # what the import system does once a submodule is loaded: ``numpy.<name>`` is it
        setattr(numpy, name.rpartition(".")[2], module)


#: glibc's ``mallopt`` parameters (``malloc.h``) and the values the console script gives them
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM_BYTES, _MMAP_BYTES = 64 << 20, 32 << 20


def _keep_freed_memory() -> bool:
    """In the console script on glibc (Linux), let ``malloc`` keep freed memory for reuse:
    blocks up to 32 MB come from the heap, not from a fresh ``mmap`` each (``M_MMAP_THRESHOLD``),
    and the heap is given back to the system only above 64 MB free (``M_TRIM_THRESHOLD``);
    ``mallopt(3)``.  Returns whether both were set.

    A command allocates and frees arrays of a few hundred kB to a few MB thousands of times
    (the error estimates' Jacobians, the branch's samples).  With glibc's defaults (a dynamic
    mmap threshold from 128 kB, trimming above 128 kB free) many of them return to the system
    and come back as fresh pages, each page a fault: the seed-000 diagram took 24 700 minor
    page faults, 17 200 with these values, and 0.70 -> 0.67 s of CPU (medians of 9 alternated
    runs of ``frictionkit continue belt ... -q`` under ``/usr/bin/time``), for 5-10 MB more
    resident memory.  Both are set or neither: setting one turns off glibc's adjustment of the
    other (either alone: 100 000 to 150 000 faults and 0.84 to 0.91 s).  Elsewhere, and in a program
    importing frictionkit, nothing changes.
    """
    if not _console_script or not _sys.platform.startswith("linux"):
        return False
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):     # not glibc's C library
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES) != 1:
        return False
    return mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES) == 1


def _warning_line(message, category, filename, lineno, line=None):
    """A warning as the console script prints it: ``frictionkit: warning: <message>``, one
    line of the words that say what happened and what to do, without Python's file name,
    line number, category and source line (``warnings.formatwarning``'s)."""
    return f"frictionkit: warning: {message}\n"


def _prepare_command():
    """What the console script does as a command starts computing (before it imports the
    runtime, ``cli._params.runtime_loaded_frozen``): :func:`_keep_freed_memory`,
    :func:`_defer_unused_numpy`, and warnings printed as :func:`_warning_line`; nothing in a
    program importing frictionkit."""
    if not _console_script:
        return
    _keep_freed_memory()
    _defer_unused_numpy()
    import warnings
    warnings.formatwarning = _warning_line


if _console_script and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    try:
        _signal.signal(_signal.SIGINT, _interrupted)
    except ValueError:                   # not the main thread: signal handlers cannot be set there
        pass

__version__ = "0.1.0"

__all__ = ["__version__"]
