"""Atomic, validated output files: the one way the package writes a file.

Every file frictionkit writes (HDF5 branches, curves, studies and non-smooth results;
PNG/PDF/SVG figures; CSV; generated sources) goes through :func:`atomic_path`: the content
is written to a temporary file in the target's directory and renamed over the target with
:func:`os.replace` only once it is complete (and flushed to disk).  A kill, a full disk or an
exception during the write leaves the previous file untouched and removes the temporary
file.  :func:`check_output` validates a target before any computation starts (the command
line calls it on ``--out`` and ``--plot``), so that a finished result is never thrown away
for a wrong path.

The replacement is the same file to its reader: it keeps the previous file's mode (a 0600
result stays private; a read-only file is refused, not replaced), a new file gets the mode
the umask gives (created like any other file, not mkstemp's 0600), and a target that is a
symbolic link is written through to the file it points to (the link stays a link).
"""
from __future__ import annotations

from contextlib import contextmanager
import errno
import os
from pathlib import Path
import secrets
import stat

from ..errors import InputError
from ._checked import Damaged

__all__ = ["atomic_path", "check_output", "read_hdf5", "WriteFailed", "FIGURE_FORMATS", "HDF5_FORMATS"]

HDF5_FORMATS = (".h5", ".hdf5")
# what matplotlib's Agg/PDF/SVG/PS backends write (FigureCanvasBase.get_supported_filetypes)
FIGURE_FORMATS = (".png", ".pdf", ".svg", ".svgz", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff",
                  ".webp", ".pgf", ".raw", ".rgba")


class WriteFailed(InputError):
    """Writing a file failed midway (the system's ``OSError``): a full disk or quota, a folder
    removed, an I/O error.  The previous file is unchanged and no temporary file is left."""


@contextmanager
def atomic_path(target):
    """Yield a temporary path next to ``target``; on success rename it over ``target``.

    The temporary file keeps the target's suffix (matplotlib picks the format from it).  On
    any exception, ``KeyboardInterrupt`` included, the temporary file is removed, the
    previous ``target`` (if any) is left as it was, and the exception propagates.  The new
    file has the previous one's mode (and owner, where allowed), or the umask's for a new
    file; a symbolic link is written through.

    Raises
    ------
    InputError
        The folder cannot be written, or ``target`` is a read-only file.
    WriteFailed
        The write failed with an ``OSError`` (a full disk: the message says so; the temporary
        file is removed).

    Examples
    --------
    >>> import h5py                                                     # doctest: +SKIP
    >>> with atomic_path("branch.h5") as tmp:                            # doctest: +SKIP
    ...     with h5py.File(tmp, "w") as f:
    ...         f["x"] = 1.0
    """
    target = Path(target)
    final = _final(target)
    try:
        previous = final.stat()
    except OSError:
        previous = None
    if previous is not None and _read_only(final, previous):
        raise InputError(f"cannot write {target}: the file is read-only (mode {stat.S_IMODE(previous.st_mode):04o}); "
                         "make it writable (chmod u+w) or choose another name")
    tmp = _create_beside(final, target)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:           # the data on disk before the rename
            os.fsync(fh.fileno())
        if previous is not None:
            _keep_identity(tmp, previous)
        os.replace(tmp, final)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):         # a full disk, a quota, a vanished folder, an I/O error
            raise WriteFailed(_write_failure(target, exc, previous is not None)) from None
        raise


def _write_failure(target: Path, exc: OSError, existed: bool) -> str:
    """Why ``target`` could not be written (``exc``, from the system or from h5py, whose
    OSError carries the errno in its text only) and what was kept."""
    text = str(exc)
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in text or "Disk quota" in text
    reason = "the disk is full (or over quota)" if full else (exc.strerror or text)
    kept = "the previous file is unchanged" if existed else "no file was written"
    remedy = "free some space or choose a folder on another disk" if full else "choose another file or folder"
    return f"cannot write {target}: {reason}; {kept}; {remedy}"


def _final(target: Path) -> Path:
    """The file ``target`` names: a symbolic link's final target (written through, so the link
    and every other link to the file see the new content), else ``target`` itself."""
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _read_only(path: Path, st: os.stat_result) -> bool:
    """A file its owner marked read-only (no write bit at all; root could write it anyway),
    or one this process may not write."""
    return stat.S_ISREG(st.st_mode) and (not st.st_mode & 0o222 or not os.access(path, os.W_OK))


def _create_beside(final: Path, target: Path) -> Path:
    """A new empty file next to ``final``, created with mode 0666 so that the umask (and a
    default ACL of the folder) decides its mode as for any file the user creates."""
    directory = final.parent if str(final.parent) else Path(".")
    for _ in range(100):
        tmp = directory / f".{final.name}.{secrets.token_hex(4)}.tmp{final.suffix}"
        try:
            os.close(os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    raise InputError(f"cannot write {target}: no free temporary name in {directory}")


def _keep_identity(tmp: Path, previous: os.stat_result) -> None:
    """Give the new file the previous one's mode, and its owner and group where the system
    allows it (root replacing a user's file; a group of a shared folder)."""
    try:
        os.chown(tmp, previous.st_uid, previous.st_gid)
    except OSError:
        try:
            os.chown(tmp, -1, previous.st_gid)
        except OSError:
            pass
    os.chmod(tmp, stat.S_IMODE(previous.st_mode))


def check_output(path, formats=None, option="--out", no_clobber=False):
    """Raise :class:`InputError` unless ``path`` can be written (call before any computation).

    Checks that the directory exists and is writable, that ``path`` is not a directory,
    that its extension is one of ``formats`` (if given) and, with ``no_clobber``, that it
    does not exist yet.  The message names the option, the path and the problem.
    """
    if path is None:
        return
    path = Path(path)
    final = _final(path)
    link = f" (a link to {final})" if final != path else ""
    directory = final.parent if str(final.parent) else Path(".")
    if formats is not None and path.suffix.lower() not in formats:
        raise InputError(f"{option} {path}: unknown file type {path.suffix or '(no extension)'!r}; "
                         f"use one of {', '.join(formats)}")
    if path.is_dir():
        raise InputError(f"{option} {path}: is a directory; give a file name")
    if not directory.is_dir():
        raise InputError(f"{option} {path}{link}: the directory {directory} does not exist; create it first")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}{link}: the directory {directory} is not writable")
    if final.exists():
        if no_clobber:
            raise InputError(f"{option} {path}: the file exists and --no-clobber was given")
        st = final.stat()
        if _read_only(final, st):
            raise InputError(f"{option} {path}{link}: the file exists and is read-only (mode "
                             f"{stat.S_IMODE(st.st_mode):04o}); make it writable (chmod u+w) or choose another "
                             f"{option}")


def read_hdf5(path, reader, what="branch file"):
    """``reader(h5py.File)`` of the HDF5 file ``path``; every way it can be unreadable is an
    :class:`InputError` naming the path: missing, a directory, not HDF5 (empty, truncated,
    text, random bytes), content that contradicts the layout (``reader`` raising
    :class:`~._checked.Damaged`, which names the attribute or dataset), or without the
    expected layout (``reader`` raising KeyError, ValueError, TypeError, AttributeError,
    OSError or IndexError; RecursionError and MemoryError too, should a check miss one)."""
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
    except Damaged as exc:
        raise InputError(f"{what} {path}: damaged, or not written by frictionkit: {exc}") from None
    except (RecursionError, MemoryError) as exc:
        raise InputError(f"{what} {path}: not a frictionkit {what} or damaged (a value too deeply nested or too "
                         f"large to read: {type(exc).__name__})") from None
    except (KeyError, ValueError, TypeError, AttributeError, OSError, IndexError) as exc:
        what_ = f"missing {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise InputError(f"{what} {path}: not a frictionkit {what} or damaged ({what_})") from None
