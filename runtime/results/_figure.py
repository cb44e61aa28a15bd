"""Figures that never switch the user's matplotlib backend.

A figure written to a file is a plain :class:`matplotlib.figure.Figure`, not managed by
pyplot: it needs no interactive backend and leaves the user's (a notebook's, a GUI's) alone.
A figure to be shown (no path) comes from pyplot, in the user's backend.
"""
from __future__ import annotations

from pathlib import Path

from ._atomic import atomic_path

__all__ = ["subplots", "file_subplots", "finish"]


def subplots(path=None, nrows: int = 1, ncols: int = 1, **kwargs):
    """``(fig, axes)`` like :func:`matplotlib.pyplot.subplots`; outside pyplot when ``path`` is set."""
    if path is None:
        import matplotlib.pyplot as plt
        return plt.subplots(nrows, ncols, **kwargs)
    return file_subplots(nrows, ncols, **kwargs)


def file_subplots(nrows: int = 1, ncols: int = 1, **kwargs):
    """``(fig, axes)`` of a figure meant for a file only (outside pyplot, any backend)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=kwargs.pop("figsize", None), layout=kwargs.pop("layout", None))
    return fig, fig.subplots(nrows, ncols, **kwargs)


def finish(fig, path=None, **savefig):
    """Write ``fig`` to ``path`` when given (the figure is then released)."""
    if path is not None:
        with atomic_path(path) as tmp:          # the format from the target's suffix
            fig.savefig(tmp, format=_format(path, savefig), **savefig)


def _format(path, savefig):
    """The image format: ``savefig``'s ``format`` or the target's extension."""
    return savefig.pop("format", None) or (Path(path).suffix[1:].lower() or None)
