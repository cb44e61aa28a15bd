"""Reading a sweep store, and the regions of its map (one layer below ``sweeps/``).

The store's layout is documented in ``runtime/sweeps/_store.py`` (``format =
"frictionkit-sweep"``); :func:`read_sweep_store` is its one reader (``SweepStore`` writes the
store and reads it back through this function), so the report (:mod:`._report`) can show a
sweep without importing the Dask layer above it.

The regions of a continuation sweep at a main-parameter value ``lam``: a task's row says
whether the equilibrium is stable (``eq_stable`` intervals) and whether a stable periodic
orbit exists (``orbit_stable``):

    ============================  =================  =====================
    region                         equilibrium        stable periodic orbit
    ============================  =================  =====================
    0  stable sliding              stable             no
    1  stick-slip only             unstable           yes
    2  coexistence (bistable)      stable             yes
    3  other                       unstable           no
    ============================  =================  =====================

(for friction oscillators the equilibrium is steady sliding and the orbits are stick-slip
cycles; ``motion`` in the table says which orbits actually stick).  With one swept parameter
the map is drawn in (main parameter, swept parameter); with two, in the two swept parameters
at a given main-parameter value.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path

import h5py
import numpy as np

from ..errors import InputError
from ._atomic import read_hdf5
from ._checked import Damaged, json_text, physical_memory, text_attr

__all__ = ["FORMAT", "FORMAT_VERSION", "read_sweep_store", "SweepMap", "load_sweep_map", "REGIONS",
           "REGION_COLOURS", "region_codes", "region_grid"]

FORMAT = "frictionkit-sweep"
FORMAT_VERSION = 1

REGIONS = ("stable sliding", "stick-slip only", "coexistence (bistable)", "other")
REGION_COLOURS = ("#a6cee3", "#fb9a99", "#b2df8a", "#d9d9d9")


def read_sweep_store(path) -> tuple[str, dict]:
    """``(spec_json, rows)`` of the sweep store at ``path``: the root attribute ``spec`` (the
    sweep's JSON) and ``{task index: summary row}`` from ``/tasks/*/`` attribute ``row``.

    Raises
    ------
    InputError
        ``path`` is not an HDF5 file or not a sweep store (its root ``format`` differs), or
        its spec or rows are damaged (the message names the attribute).
    """
    path = Path(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise InputError(f"{path}: not an HDF5 file ({exc}); choose another --out") from None
    with f:
        if f.attrs.get("format") != FORMAT:
            raise InputError(f"{path} is not a sweep store (format {f.attrs.get('format')!r}); "
                             "choose another --out")
    return read_hdf5(path, _read_store, "sweep store")


def _read_store(f) -> tuple[str, dict]:
    spec = text_attr(f, "spec")
    json_text(spec, "attribute 'spec' of /", "table")           # checked here, parsed by its user
    tasks = f.get("tasks", {})
    rows = {}
    for name in tasks:
        if not name.isdigit():
            raise Damaged(f"group /tasks/{name}: not a task index")
        rows[int(name)] = json_text(text_attr(tasks[name], "row"), f"attribute 'row' of /tasks/{name}",
                                    "table")
    return spec, rows


def _spec_fields(spec: str, where: str) -> dict:
    """The fields of a stored sweep's JSON that a map needs, checked (``where`` names it)."""
    d = json_text(spec, where, "table")
    numbers = lambda v: isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)  # noqa: E731
                                                    for x in v)
    ok = (isinstance(d.get("task"), str) and isinstance(d.get("param"), str)
          and all(isinstance(d.get(k), (int, float)) and not isinstance(d.get(k), bool) for k in ("start", "stop"))
          and isinstance(d.get("over"), list) and d["over"]
          and all(isinstance(o, list) and len(o) == 2 and isinstance(o[0], str) and numbers(o[1]) and o[1]
                  for o in d["over"])
          and isinstance(d.get("model_file", ""), str) and isinstance(d.get("model", ""), str)
          and isinstance(d.get("options", []), list)
          and all(isinstance(o, list) and len(o) == 2 and isinstance(o[0], str) for o in d.get("options", [])))
    if not ok:
        raise Damaged(f"{where}: not the spec of a frictionkit sweep (task, param, start, stop, over, options)")
    at = dict(d.get("options", [])).get("at")
    if at is not None and not numbers(at):
        raise Damaged(f"{where}: option 'at' is {at!r}, not a list of numbers")
    return d


def _check_rows(rows: dict, names: list) -> None:
    """The values of the stored rows a map reads: the grid values numbers, the stability
    intervals JSON lists of ``[lo, hi]``, the labels text (each problem names the task)."""
    def intervals(text):
        try:
            v = json.loads(text or "[]")
        except (ValueError, RecursionError):
            return False
        return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in p) for p in v)
    for i, row in rows.items():
        where = f"attribute 'row' of /tasks/{i:06d}"
        for name in names:
            if name in row and (not isinstance(row[name], (int, float)) or isinstance(row[name], bool)):
                raise Damaged(f"{where}: {name} = {row[name]!r}, not a number")
        for key in ("eq_stable", "orbit_stable"):
            if key in row and (not isinstance(row[key], (str, type(None))) or not intervals(row[key])):
                raise Damaged(f"{where}: {key} is not a JSON list of [lo, hi] intervals")
        for key in ("status", "message", "motion"):
            if row.get(key) is not None and not isinstance(row[key], str):
                raise Damaged(f"{where}: {key} = {row[key]!r}, not text")


def _inside(intervals, lam):
    lam = np.asarray(lam, dtype=float)
    hit = np.zeros(lam.shape, dtype=bool)
    for lo, hi in intervals:
        hit |= (lam >= lo) & (lam <= hi)
    return hit


def region_codes(row, lam) -> np.ndarray:
    """Region code (index into :data:`REGIONS`) of one table row at main-parameter values ``lam``;
    -1 where the task failed."""
    lam = np.atleast_1d(np.asarray(lam, dtype=float))
    if row.get("status") in ("failed", "error") or "eq_stable" not in row:
        return np.full(lam.shape, -1)
    eq = _inside(json.loads(row["eq_stable"]), lam)
    orb = _inside(json.loads(row["orbit_stable"] or "[]"), lam)
    return np.where(eq & ~orb, 0, np.where(~eq & orb, 1, np.where(eq & orb, 2, 3)))


def region_grid(table, spec, lam=None, at=None):
    """``(x, y, codes, names)`` of the map.

    ``table`` is the summary table (a DataFrame indexed by task), ``spec`` the sweep
    (``SweepSpec`` or :class:`SweepMap`: ``task``, ``names``, ``over``, ``param``, ``start``,
    ``stop``).  One swept parameter: ``x = lam`` (default 200 values over the continuation
    range), ``y`` the swept values, ``codes[j, i]`` the region of task ``j`` at ``lam[i]``.
    Two swept parameters: ``x``, ``y`` their values and the regions at main-parameter value
    ``at``.
    """
    if spec.task != "continuation":
        raise InputError(f"a map needs a continuation sweep (this one ran {spec.task!r} tasks)")
    rows = {i: r for i, r in zip(table.index, table.to_dict("records"))}
    names = spec.names
    if len(names) == 1:
        x = np.linspace(min(spec.start, spec.stop), max(spec.start, spec.stop), 200) if lam is None \
            else np.asarray(lam, dtype=float)
        y = np.asarray(spec.over[0][1])
        codes = np.full((len(y), len(x)), -1)
        for j in range(len(y)):
            if j in rows:
                codes[j] = region_codes(rows[j], x)
        return x, y, codes, (spec.param, names[0])
    if len(names) != 2 or at is None:
        raise InputError(f"a map of a sweep over {', '.join(names)}: give --at VALUE of {spec.param} "
                         "(two swept parameters) — maps over more than two are not drawn")
    x, y = np.asarray(spec.over[0][1]), np.asarray(spec.over[1][1])
    cells = len(x) * len(y)
    if cells * 8 > physical_memory() // 4:       # a grid a stored spec claims, never run: refused before allocating
        raise InputError(f"the map over {names[0]} ({len(x):,} values) x {names[1]} ({len(y):,} values) has "
                         f"{cells:,} cells, more than a quarter of this machine's memory holds")
    codes = np.full((len(y), len(x)), -1)
    for k, row in rows.items():                   # the stored tasks, not the whole grid
        if 0 <= k < cells:
            codes[k % len(y), k // len(y)] = region_codes(row, at)[0]
    return x, y, codes, (names[0], names[1])


@dataclass
class SweepMap:
    """A sweep store as the report shows it (:func:`load_sweep_map`).

    Attributes
    ----------
    path : Path
    task, param, start, stop, over, model :
        From the stored sweep (its JSON): the task kind, the main parameter and its range,
        the swept parameters ``((name, values), ...)`` and the model's label.
    options : dict
        The task options (``at``: main-parameter values of the summary columns).
    rows : dict
        ``{task index: summary row}`` (grid values, ``status``, ``message``, task columns).
    """

    path: Path
    task: str
    param: str
    start: float
    stop: float
    over: tuple
    model: str
    options: dict
    rows: dict

    @property
    def names(self) -> list:
        """The swept parameters' names."""
        return [n for n, _ in self.over]

    def at(self) -> float:
        """Main-parameter value of a map over two swept parameters: the sweep's first ``at``
        value, else the middle of its range."""
        at = self.options.get("at") or ()
        return float(at[0]) if len(at) else 0.5 * (self.start + self.stop)

    def outcomes(self) -> list:
        """``(task index, outcome)`` of every stored task, in task order: for a continuation
        sweep the region (:data:`REGIONS`, ``"failed"``) at :meth:`at`, as ``frictionkit
        plot-sweep`` colours it; for ``orbit``/``simulate`` tasks the motion type, else
        the status."""
        out = []
        for i in sorted(self.rows):
            row = self.rows[i]
            if self.task == "continuation":
                code = int(region_codes(row, self.at())[0])
                out.append((i, REGIONS[code] if code >= 0 else "failed"))
            else:
                out.append((i, row.get("motion") or row.get("status", "")))
        return out


def load_sweep_map(path) -> SweepMap:
    """Read the sweep store at ``path`` (``frictionkit sweep --out``) for :func:`report`."""
    spec, rows = read_sweep_store(path)
    try:
        d = _spec_fields(spec, "attribute 'spec' of /")
        _check_rows(rows, [n for n, _ in d["over"]])
    except Damaged as exc:
        raise InputError(f"sweep store {path}: damaged, or not written by frictionkit: {exc}") from None
    return SweepMap(path=Path(path), task=d["task"], param=d["param"], start=float(d["start"]),
                    stop=float(d["stop"]), over=tuple((n, tuple(v)) for n, v in d["over"]),
                    model=d.get("model_file") or d.get("model", ""), options=dict(d.get("options", [])), rows=rows)
