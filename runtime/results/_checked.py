"""Checked reading of HDF5 content that frictionkit did not necessarily write.

A result file may come from anywhere (a colleague, a mail, an edited copy), so every value
is checked before it is used or allocated: a JSON attribute for its nesting and its types
(:func:`json_attr`), a dataset for its kind, its shape against the shape the layout implies
and its size against this machine's memory and against the bytes the file really stores
(:func:`dataset`), before a single value is read.  A chunked dataset of shape (1e9, 1e9) in
a 30 kB file would otherwise be an allocation of 7 EiB; 200,000 nested brackets in an
attribute a ``RecursionError``.  Each problem is a :class:`Damaged` error naming the
attribute or dataset; :func:`~._atomic.read_hdf5` adds the file's name.
"""
from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:                   # h5py is imported by the readers that call these
    import h5py

__all__ = ["Damaged", "checked", "dataset", "json_attr", "text_attr", "int_attr", "physical_memory"]

#: a dataset may hold up to this many bytes of values whatever the file stores (chunked or
#: compressed data legitimately hold more values than bytes on disk)
_HOLLOW_FLOOR = 256 * 2**20
#: ... beyond it, at most this many bytes of values per byte stored (gzip of a column of
#: zeros: about 600; of real branch data: below 10)
_HOLLOW_RATIO = 1000

#: dtype kinds by name: real numbers, complex numbers, integers, strings
NUMBERS, COMPLEX, INTEGERS, STRINGS = "fiu", "fiuc", "iu", "OSU"


class Damaged(InputError):
    """A value of an HDF5 file contradicts the layout it claims (the message names it; the
    reader adds the file's name).

    Typical causes: a file edited by hand or by another program, a truncated copy, a file
    made to crash or exhaust its reader."""


def physical_memory() -> int:
    """Bytes of physical memory of this machine."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _bytes(n: float) -> str:
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def dataset(group, name: str, shape: tuple, kinds: str = NUMBERS):
    """The values of dataset ``name`` of ``group``, checked (:func:`checked`) before they are read."""
    return checked(group, name, shape, kinds)[()]


def checked(group, name: str, shape: tuple, kinds: str = NUMBERS) -> h5py.Dataset:
    """Dataset ``name`` of ``group`` (not read), checked against what the layout implies.

    ``shape`` is the shape the layout implies, ``None`` for a free extent; ``kinds`` the
    accepted dtype kinds.  The values must fit in a quarter of the physical memory, and
    beyond 256 MiB the file must store at least a thousandth of their bytes (an unwritten
    chunked dataset stores none).

    Raises
    ------
    Damaged
        Missing, not a dataset, another kind or shape, or too large; naming the dataset.
    """
    d = group.get(name)
    where = f"{group.name.rstrip('/')}/{name}"
    import h5py  # at first use, as the results' writers do: a command that reads no file does not load h5py
    if not isinstance(d, h5py.Dataset):
        raise Damaged(f"dataset {where}: " + ("missing" if d is None else "is a group, not a dataset"))
    if d.dtype.kind not in kinds:
        expected = {NUMBERS: "real numbers", COMPLEX: "numbers", INTEGERS: "integers", STRINGS: "text"}
        raise Damaged(f"dataset {where}: holds {d.dtype}, not {expected.get(kinds, kinds)}")
    if len(d.shape) != len(shape) or any(e is not None and s != e for s, e in zip(d.shape, shape)):
        want = "(" + ", ".join("any" if e is None else str(e) for e in shape) + ("," if len(shape) == 1 else "") + ")"
        raise Damaged(f"dataset {where}: shape {d.shape}, expected {want}")
    nbytes = math.prod(d.shape) * d.dtype.itemsize
    if nbytes > physical_memory() // 4:
        raise Damaged(f"dataset {where}: shape {d.shape} needs {_bytes(nbytes)}, more than a quarter of this "
                      f"machine's memory ({_bytes(physical_memory())})")
    stored = d.id.get_storage_size()
    if nbytes > max(_HOLLOW_FLOOR, _HOLLOW_RATIO * stored):
        raise Damaged(f"dataset {where}: shape {d.shape} claims {_bytes(nbytes)} of values but the file stores "
                      f"{_bytes(stored)} of them (an unwritten or corrupt dataset)")
    return d


def text_attr(obj, name: str, default=None) -> str:
    """Attribute ``name`` of ``obj`` as text (bytes decoded; a missing one ``default``)."""
    if name not in obj.attrs:
        if default is None:
            raise Damaged(f"attribute {name!r} of {obj.name}: missing")
        return default
    value = obj.attrs[name]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise Damaged(f"attribute {name!r} of {obj.name}: {type(value).__name__}, not text")
    return value


def int_attr(obj, name: str) -> int:
    """Integer attribute ``name`` of ``obj``."""
    value = obj.attrs.get(name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Damaged(f"attribute {name!r} of {obj.name}: {value!r}, not an integer")
    return int(value)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_KINDS = {
    "list of names": lambda v: isinstance(v, list) and all(isinstance(x, str) and x and "/" not in x for x in v),
    "table of numbers": lambda v: isinstance(v, dict) and all(_is_number(x) for x in v.values()),
    "table of text": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "table": lambda v: isinstance(v, dict),
}


def json_attr(obj, name: str, kind: str, default=None):
    """JSON attribute ``name`` of ``obj``, parsed and checked to be a ``kind`` (a key of
    ``_KINDS``: ``"list of names"``, ``"table of numbers"``, ``"table of text"``,
    ``"table"``); ``default`` when missing (None: required)."""
    if name not in obj.attrs and default is not None:
        return default
    return json_text(text_attr(obj, name), f"attribute {name!r} of {obj.name}", kind)


def json_text(text: str, where: str, kind: str):
    """``text`` parsed as JSON and checked to be a ``kind`` (see :func:`json_attr`)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise Damaged(f"{where}: JSON nested too deeply to be a frictionkit {kind}") from None
    except ValueError as exc:
        raise Damaged(f"{where}: not JSON ({exc})") from None
    if not _KINDS[kind](value):
        raise Damaged(f"{where}: {text[:60]!r}{'...' if len(text) > 60 else ''} is not a {kind}")
    return value
