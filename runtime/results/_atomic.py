"""Atomic, validated output files: the one way the package writes a file.

Every file frictionkit writes (HDF5 branches, curves, studies and non-smooth results;
PNG/PDF/SVG figures; CSV; generated sources) goes through :func:`atomic_path`: the content
is written to a temporary file in the target's directory and renamed over the target with
:func:`os.replace` only once it is complete (and flushed to disk).  A kill, a full disk or an
exception during the write leaves the previous file untouched and removes the temporary
file.  :func:`check_output` validates a target before any computation starts (the command
line calls it on ``--out`` and ``--plot``), so that a finished result is never thrown away
for a wrong path.
"""
from __future__ import annotations

from contextlib import contextmanager
import os
from pathlib import Path
import tempfile

from ..errors import InputError

__all__ = ["atomic_path", "check_output", "read_hdf5", "FIGURE_FORMATS", "HDF5_FORMATS"]

HDF5_FORMATS = (".h5", ".hdf5")
# what matplotlib's Agg/PDF/SVG/PS backends write (FigureCanvasBase.get_supported_filetypes)
FIGURE_FORMATS = (".png", ".pdf", ".svg", ".svgz", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff",
                  ".webp", ".pgf", ".raw", ".rgba")


@contextmanager
def atomic_path(target):
    """Yield a temporary path next to ``target``; on success rename it over ``target``.

    The temporary file keeps the target's suffix (matplotlib picks the format from it).  On
    any exception, ``KeyboardInterrupt`` included, the temporary file is removed, the
    previous ``target`` (if any) is left as it was, and the exception propagates.

    Examples
    --------
    >>> import h5py                                                     # doctest: +SKIP
    >>> with atomic_path("branch.h5") as tmp:                            # doctest: +SKIP
    ...     with h5py.File(tmp, "w") as f:
    ...         f["x"] = 1.0
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}",
                                   dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:           # the data on disk before the rename
            os.fsync(fh.fileno())
        mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)                    # mkstemp's 0600 would hide results from others
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_output(path, formats=None, option="--out", no_clobber=False):
    """Raise :class:`InputError` unless ``path`` can be written (call before any computation).

    Checks that the directory exists and is writable, that ``path`` is not a directory,
    that its extension is one of ``formats`` (if given) and, with ``no_clobber``, that it
    does not exist yet.  The message names the option, the path and the problem.
    """
    if path is None:
        return
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if formats is not None and path.suffix.lower() not in formats:
        raise InputError(f"{option} {path}: unknown file type {path.suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(formats)}")
    if path.is_dir():
        raise InputError(f"{option} {path}: is a directory; give a file name")
    if not directory.is_dir():
        raise InputError(f"{option} {path}: the directory {directory} does not exist; create it first")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: the directory {directory} is not writable")
    if path.exists():
        if no_clobber:
            raise InputError(f"{option} {path}: the file exists and --no-clobber was given")
        if not os.access(path, os.W_OK) and not os.access(directory, os.W_OK):
            raise InputError(f"{option} {path}: the file exists and cannot be replaced")


def read_hdf5(path, reader, what="branch file"):
    """``reader(h5py.File)`` of the HDF5 file ``path``; every way it can be unreadable is an
    :class:`InputError` naming the path: missing, a directory, not HDF5 (empty, truncated,
    text, random bytes), or without the expected layout (``reader`` raising KeyError,
    ValueError, TypeError, AttributeError, OSError or IndexError)."""
    import h5py
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} {path}: " + ("is a directory" if path.is_dir() else "does not exist"))
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"{what} {path}: not a readable HDF5 file (empty, truncated or another "
                         f"format): {exc}") from None
    try:
        with f:
            return reader(f)
    except (KeyError, ValueError, TypeError, AttributeError, OSError, IndexError) as exc:
        what_ = f"missing {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise InputError(f"{what} {path}: not a frictionkit {what} or damaged ({what_})") from None
