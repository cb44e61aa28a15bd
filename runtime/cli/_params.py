"""The one ``--set NAME=VALUE`` parameter type of every command, the writing of a
command's computed result (:func:`save_or_rescue`: never lost to a failed save), and the
loading of the runtime with the cyclic garbage collector's work kept off it
(:func:`runtime_loaded_frozen`)."""
from __future__ import annotations

import atexit
import functools
import gc
import importlib
from pathlib import Path
import tempfile
import time

import click

from ... import _prepare_command
from ..errors import FrictionkitError, InputError


class AssignmentType(click.ParamType):
    """``NAME=VALUE`` items of parameter values, converted to ``((name, float), ...)``.

    One command-line word may hold several items separated by commas or spaces
    (``--set n=10,FN=5``); an item without ``=``, without a name or with a value that is not a
    number is rejected by click with a message naming the item.
    """

    name = "NAME=VALUE"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):        # already converted (a default, or a second pass)
            return value
        pairs = []
        for item in str(value).replace(",", " ").split():
            name, sep, text = item.partition("=")
            if not sep or not name.strip():
                self.fail(f"{item!r}: expected NAME=VALUE, e.g. --set n=10 FN=5", param, ctx)
            try:
                pairs.append((name.strip(), float(text)))
            except ValueError:
                self.fail(f"{item!r}: {text!r} is not a number", param, ctx)
        return tuple(pairs)


ASSIGNMENT = AssignmentType()


#: the atexit handler of :func:`runtime_loaded_frozen`, once registered
_FREEZE_AT_EXIT: list = []


def runtime_loaded_frozen(*modules):
    """Decorator of a command: import ``modules`` (``".engine"``: relative to ``frictionkit.runtime``) with the
    cyclic garbage collector paused, then run the command with every object alive at that point
    frozen (:func:`gc.freeze`), and unfreeze them when it ends, however it ends.  In the
    console script, ``malloc`` first keeps freed memory for reuse and NumPy's test and
    Fortran-wrapper packages, which SciPy's import would load unused, become lazy modules
    (:func:`frictionkit._prepare_command`).

    Importing NumPy, SciPy and the runtime creates some 40 000 objects that live as long as the
    process and form almost no garbage (about 700 unreachable objects after them); while they
    are being created the collector runs its young generations over them about a hundred times,
    and every later collection of the oldest generation walks them all again: about 0.1 s of CPU
    of the 2-second seed-000 diagram (``benchmarks/bench_cli.py``), about 0.01 s with them frozen.  This
    is the pattern of the :func:`gc.freeze` documentation (collector disabled while the long-lived
    objects are made, then frozen); the results do not depend on it.  Unfreezing at the end
    hands the objects back to the collector, so a command run many times in one process (tests,
    ``main(...)`` from Python) leaks nothing that a collection would have freed.

    At the interpreter's exit everything is frozen again (:func:`gc.freeze` as an :mod:`atexit`
    handler, registered once): the collections of the interpreter's finalization otherwise walk
    all those objects once more, about 0.14 s of CPU after ``import numpy, scipy.linalg`` alone
    and 0.2 s after the seed-000 diagram, 0.02 s frozen.  Objects alive at the exit are then
    left to the operating system rather than collected, as Python leaves any object alive at
    exit (its ``__del__`` is not guaranteed); atexit handlers and ``weakref.finalize`` callbacks
    run as before, and every file of a command is written and closed before it returns.
    """
    def decorate(command):
        @functools.wraps(command)
        def run(*args, **kwargs):
            if not _FREEZE_AT_EXIT:
                atexit.register(gc.freeze)
                _FREEZE_AT_EXIT.append(gc.freeze)
            enabled = gc.isenabled()
            gc.disable()
            try:
                _prepare_command()           # the console script only: before the runtime is imported
                for name in modules:
                    importlib.import_module(name, "frictionkit.runtime")
            finally:
                if enabled:
                    gc.enable()
            gc.freeze()
            try:
                return command(*args, **kwargs)
            finally:
                gc.unfreeze()
        return run
    return decorate


def save_or_rescue(save, out, what="result"):
    """``save(out)`` of a computed result; when it fails although ``--out`` passed its check
    (a full disk, a folder removed or made read-only during the run), the result is saved
    to a rescue file instead, in the current folder or else the temporary folder, and a
    :class:`click.ClickException` names the failure and the rescue file.

    ``save(path)`` writes the result (atomically: a failed save leaves nothing half-written).
    """
    try:
        save(out)
        return
    except FrictionkitError as exc:
        error = exc
    out = Path(out)
    name = f"{out.stem}.rescued-{time.strftime('%Y%m%d-%H%M%S')}{out.suffix}"
    tried = []
    try:
        here = [Path.cwd()]
    except OSError:                      # the current folder was removed too
        here = []
    for folder in dict.fromkeys(here + [Path(tempfile.gettempdir())]):
        rescue = folder / name
        try:
            save(rescue)
        except (FrictionkitError, OSError) as exc:
            tried.append(f"{rescue}: {exc}")
            continue
        raise click.ClickException(f"{error}; the computed {what} was saved to {rescue} instead")
    raise click.ClickException(f"{error}; the computed {what} could not be saved elsewhere either "
                               f"({'; '.join(tried)})")


def write_outputs(result, out, plot, what="result"):
    """Save ``result`` to ``--out`` (a failed save rescued: :func:`save_or_rescue`) and plot it to
    ``--plot`` (either may be None), saying so."""
    if out is not None:
        save_or_rescue(result.save, out, what)
        click.echo(f"wrote {out}")
    if plot is not None:
        try:
            result.plot(plot)
        except FrictionkitError as exc:
            raise click.ClickException(f"{exc}" + (f" (the {what} is in {out})" if out else "")) from None
        click.echo(f"wrote {plot}")


def check_sizes(harmonics=None, intervals=None, degree=None):
    """The discretization sizes a command was given (None: not given), checked before any
    work, for a new run and a restart alike: ``--harmonics`` >= 1, ``--intervals`` >= 2,
    ``--degree`` in 1..12 (the collocations' Gauss-Legendre orders)."""
    if harmonics is not None and harmonics < 1:
        raise InputError(f"--harmonics {harmonics}: the number of harmonics must be >= 1")
    if intervals is not None and intervals < 2:
        raise InputError(f"--intervals {intervals}: a collocation mesh needs at least 2 sub-intervals")
    if degree is not None and not 1 <= degree <= 12:
        raise InputError(f"--degree {degree}: the collocation degree must be between 1 and 12")


def param_values(*groups) -> dict:
    """``{name: value}`` of converted ``--set`` groups (a later item wins)."""
    return {name: value for group in groups for pairs in group for name, value in pairs}
