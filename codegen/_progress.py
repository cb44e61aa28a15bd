"""Progress inside the stages of a code generation (issue 28: a 200-state model was silent for
many seconds inside its recast).

:func:`_generate <frictionkit.codegen.api._generate>` shows one tqdm bar per generation, one
step per stage (recast, each backend's sources); inside a stage the loops over equations, rows
and expressions call :func:`report`, which writes ``what done/total`` into that bar's postfix
when a bar is shown (on request, or for models of 20 states and more), at most four times a
second.  Without a bar (the default in tests and for small models) :func:`report` is one
context-variable lookup: nothing measurable next to the symbolic work of one item.
"""
from __future__ import annotations

import contextlib
import contextvars
import time

#: the reporter of the generation in progress (None: nothing shown)
_REPORTER = contextvars.ContextVar("frictionkit_codegen_progress", default=None)
#: seconds between two refreshes of the bar from inside a stage
INTERVAL = 0.25


def report(what: str, done: int, total: int) -> None:
    """``done`` of ``total`` items of ``what`` (e.g. ``"recast: equation"``) are finished."""
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter(what, done, total)


@contextlib.contextmanager
def reporting(bar):
    """Send :func:`report` to the postfix of the tqdm ``bar`` while the block runs (nothing
    if ``bar`` is disabled)."""
    if getattr(bar, "disable", True):
        yield
        return
    last = [0.0]

    def reporter(what, done, total):
        now = time.monotonic()
        if now - last[0] >= INTERVAL or done == total:
            last[0] = now
            bar.set_postfix_str(f"{what} {done}/{total}", refresh=True)
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)
