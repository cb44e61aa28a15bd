"""Checkpoints and interrupts: a long run never loses more than the last interval.

* :func:`interrupt_signals` turns SIGTERM (a batch system's stop, ``kill``) into the same
  :class:`KeyboardInterrupt` as Ctrl-C (SIGINT), so that every phase that keeps its partial
  result on Ctrl-C (the engine run, the fold location, the analysis pass) does so on
  SIGTERM too (the exception's text names the signal).
* :func:`deferred_interrupts` holds SIGINT/SIGTERM back while a file is being saved and
  raises the interrupt afterwards: the save completes, so the branch is on disk.
* :class:`Checkpoint` is a ``progress`` callback of :func:`~._run.run`: every ``every_steps``
  steps or ``every_seconds`` seconds (whichever comes first) it builds the branch computed so
  far (:func:`partial_branch`, status ``"checkpoint"``) and hands it to ``save`` (e.g.
  ``Branch.save`` to the ``--out`` file, which is atomic).  A SIGKILL then loses at most one
  interval; the checkpoint file loads with ``load_branch`` and can be restarted from.
"""
from __future__ import annotations

from contextlib import contextmanager
import signal
import threading
import time

from ..results._branch import Branch
from ._options import ANMOptions

__all__ = ["interrupt_signals", "deferred_interrupts", "Checkpoint", "partial_branch"]


def _raise(signum, frame):
    # a plain KeyboardInterrupt: every phase that keeps its branch on Ctrl-C catches it
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _main_thread():
    return threading.current_thread() is threading.main_thread()


@contextmanager
def interrupt_signals():
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` like Ctrl-C."""
    if not _main_thread():           # signal handlers can only be set in the main thread
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextmanager
def deferred_interrupts():
    """Within the block, SIGINT and SIGTERM are recorded; the first is raised after the block."""
    if not _main_thread():
        yield
        return
    caught = []
    olds = {s: signal.signal(s, lambda signum, frame: caught.append(signum))
            for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, old in olds.items():
            signal.signal(s, old)
    if caught:
        raise KeyboardInterrupt(signal.Signals(caught[0]).name)


def partial_branch(rec, status, message, provenance):
    """The branch a recorder holds so far (no folds located, no analysis), ``success = False``."""
    n = len(rec.points)
    br = Branch.from_solutions(rec.disc, rec.points[:n], rec.tangents[:n], special=list(rec.special),
                               counters=rec.counters.as_dict(), status=status, message=message,
                               success=False, provenance=provenance)
    br.discretization = rec.disc
    return br


def method_of(options) -> str:
    """The engine name of an options object (``"anm"`` or ``"newton"``)."""
    return "anm" if isinstance(options, ANMOptions) else "newton"


class Checkpoint:
    """A ``progress`` callback saving the branch so far every ``every_steps`` steps or ``every_seconds`` s.

    Parameters
    ----------
    save : callable
        ``save(branch)``; called with interrupts deferred (a Ctrl-C during a checkpoint lets
        it finish, then interrupts the run).
    provenance : callable
        ``provenance(disc, method, options) -> dict`` (the run's provenance).
    every_steps, every_seconds : int, float
        Checkpoint interval; ``0`` or None disables that criterion.
    progress : callable, optional
        Another progress callback, called first.
    label : str
        Names the phase in the status message (e.g. ``"equilibria"``).
    """

    def __init__(self, save, provenance, every_steps=100, every_seconds=60.0, progress=None, label="branch"):
        self.save, self.provenance, self.progress, self.label = save, provenance, progress, label
        self.every_steps = int(every_steps or 0)
        self.every_seconds = float(every_seconds or 0.0)
        self._last_steps, self._last_time = 0, time.monotonic()
        self.saved = 0

    def __call__(self, rec):
        if self.progress is not None:
            self.progress(rec)
        steps, now = rec.counters.steps, time.monotonic()
        due = ((self.every_steps and steps - self._last_steps >= self.every_steps)
               or (self.every_seconds and now - self._last_time >= self.every_seconds))
        if not due:
            return
        self._last_steps, self._last_time = steps, now
        lam = float(rec.points[-1][-1])
        br = partial_branch(rec, "checkpoint",
                            f"checkpoint of the {self.label} after {steps} steps (lam = {lam:.10g}); the run "
                            "did not finish: restart from it with `frictionkit continue --restart FILE`",
                            self.provenance(rec.disc, method_of(rec.options), rec.options))
        with deferred_interrupts():
            self.save(br)
        self.saved += 1

    def close(self):
        if self.progress is not None and hasattr(self.progress, "close"):
            self.progress.close()
