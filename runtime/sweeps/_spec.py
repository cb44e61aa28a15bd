"""What a sweep is: the model it carries, the grid, the task and its options (one frozen object).

A :class:`SweepSpec` is everything a worker needs to run any task of the sweep and nothing
else: the model as a zoo name or as the *source text* of a model file (workers need no shared
file system), the model's hash, the continuation parameter and range, the fixed parameter
values, the grid of the swept parameters and the task options.  Its JSON form travels to the
workers and is stored in the sweep's HDF5 file; :attr:`SweepSpec.key` (a SHA-256 of that JSON)
tells a store written by the same sweep from one written by another.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
import itertools
import json
import math
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._limits import MAX_TASKS

__all__ = ["SweepSpec", "parse_grid", "grid_count", "check_grid_size", "TASKS", "MAX_TASKS"]

TASKS = ("continuation", "orbit", "simulate")

# Task options and their defaults; an option a task does not use is refused (STYLE §9).
_OPTIONS = {
    "continuation": dict(from_hopf=1, harmonics=30, discretization=None, method=None, max_steps=5000,
                         intervals=40, degree=3, at=()),
    "orbit": dict(harmonics=30, discretization=None, at=()),
    "simulate": dict(t_end=200.0, x0=None, seed=0, at=()),
}




def _split_grid(text: str, option: str):
    """``(name, (start, stop, count))`` of ``NAME=START:STOP:COUNT`` or ``(name, [values])`` of
    ``NAME=V1,V2,...`` (nothing allocated for the linspace form)."""
    name, sep, rest = str(text).partition("=")
    name = name.strip()
    if not sep or not name:
        raise InputError(f"{option} {text!r}: expected NAME=START:STOP:COUNT or NAME=V1,V2,..., "
                         "e.g. --over FN=0.5:10:40")
    try:
        if ":" in rest:
            lo, hi, count = rest.split(":")
            return name, (float(lo), float(hi), int(count))
        return name, [float(v) for v in rest.replace(",", " ").split()]
    except ValueError:
        raise InputError(f"{option} {text!r}: expected NAME=START:STOP:COUNT (COUNT an integer) or "
                         "NAME=V1,V2,... of numbers") from None


def grid_count(text: str, option: str = "--over") -> tuple:
    """``(name, number of points)`` of a grid text (see :func:`parse_grid`), checked for its
    form but not made: what the limit on the size of a sweep is checked with."""
    name, grid = _split_grid(text, option)
    return name, max(grid[2], 0) if isinstance(grid, tuple) else len(grid)


def check_grid_size(counts, max_tasks: int = MAX_TASKS, option: str = "--over", limit: str = "--max-tasks ") -> int:
    """The number of tasks of the grids ``counts`` (``[(name, number of points)]``), refused past
    ``max_tasks`` before any grid or task is made (``option`` and ``limit`` name the grid's
    option and the limit's, as the caller spells them).

    Raises
    ------
    InputError
        Naming each swept parameter with its count, the product, the limit and the option
        that raises it.
    """
    total = math.prod(int(n) for _, n in counts) if counts else 0
    if max_tasks is not None and total > max_tasks:
        sizes = " x ".join(f"{name} ({n:,} values)" for name, n in counts)
        raise InputError(f"{option}: the grid {sizes} has {total:,} points, more than the limit of {max_tasks:,} "
                         f"tasks of one sweep (each task is a whole run); use fewer points, or raise the limit: "
                         f"{limit}{total}")
    return total


def parse_grid(text: str, option: str = "--over", max_points: int | None = MAX_TASKS):
    """``NAME=START:STOP:COUNT`` (``numpy.linspace``) or ``NAME=V1,V2,...`` -> ``(name, values)``.

    Raises
    ------
    InputError
        Naming ``option`` and the text when it is not of either form, or when it has more
        than ``max_points`` points (checked before the grid is made; None: no limit).
    """
    name, grid = _split_grid(text, option)
    check_grid_size([(name, grid[2] if isinstance(grid, tuple) else len(grid))], max_points, option)
    if isinstance(grid, tuple):
        lo, hi, n = grid
        return name, np.linspace(lo, hi, n) if n > 0 else np.zeros(0)
    return name, np.array(grid)


@dataclass(frozen=True)
class SweepSpec:
    """One sweep: model, continuation range, grid, task and task options.

    Parameters
    ----------
    model : str
        A zoo name (``"belt"``) or the source text of a model file (``model_file`` then names it).
    model_hash : str
        ``Model.model_hash`` of the model (workers check theirs against it).
    param : str
        The continuation (main) parameter.
    start, stop : float
        Its range (``continuation``); ``start`` is the parameter value of ``orbit`` and
        ``simulate`` tasks.
    over : tuple of (name, tuple of float)
        The swept parameters and their values; the tasks are their Cartesian product, the last
        name varying fastest.
    fixed : tuple of (name, float)
        Parameter values common to all tasks (``--set``).
    task : {"continuation", "orbit", "simulate"}
    options : tuple of (name, value)
        Task options (see ``_OPTIONS``), JSON-able.
    model_file : str
        File name of ``model`` when it is a model file's source ("" for a zoo name).
    """

    model: str
    model_hash: str
    param: str
    start: float
    stop: float
    over: tuple
    fixed: tuple = ()
    task: str = "continuation"
    options: tuple = ()
    model_file: str = ""
    _points: list = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.task not in TASKS:
            raise InputError(f"--task {self.task!r}: choose one of {', '.join(TASKS)}")
        unknown = sorted(set(dict(self.options)) - set(_OPTIONS[self.task]))
        if unknown:
            raise InputError(f"option(s) {', '.join(unknown)} do not apply to task {self.task!r} "
                             f"(it takes {', '.join(_OPTIONS[self.task])})")
        if not self.over:
            raise InputError("the sweep has no grid: give at least one --over NAME=START:STOP:COUNT")
        for name, values in self.over:
            if len(values) == 0:
                raise InputError(f"--over {name}: the grid has no points (COUNT must be >= 1)")
            if not all(math.isfinite(v) for v in values):
                raise InputError(f"--over {name}: every grid value must be finite")
        names = [n for n, _ in self.over]
        if len(set(names)) != len(names) or self.param in names:
            raise InputError(f"--over {', '.join(names)}: each swept parameter once, and not the "
                             f"continuation parameter {self.param!r}")
        if not (math.isfinite(self.start) and math.isfinite(self.stop)):
            raise InputError(f"--start {self.start:g} / --stop {self.stop:g} must be finite")

    @classmethod
    def build(cls, model, model_hash, param, start, stop, over, fixed=None, task="continuation", **options):
        """A spec from friendly arguments: ``over`` a dict ``{name: values}``, ``model`` a zoo
        name or a path to a model file (its source text is carried)."""
        model_file = ""
        path = Path(str(model))
        if path.suffix == ".py" or path.is_file():
            if not path.is_file():
                raise InputError(f"model file {str(model)!r} does not exist")
            model_file, model = path.name, path.read_text()
        over = tuple((str(k), tuple(float(v) for v in np.atleast_1d(np.asarray(vals, dtype=float))))
                     for k, vals in dict(over or {}).items())
        fixed = tuple(sorted((str(k), float(v)) for k, v in dict(fixed or {}).items()))
        opts = {**_OPTIONS.get(task, {}), **options}
        opts["at"] = tuple(float(a) for a in (opts.get("at") or ()))
        return cls(model=str(model), model_hash=str(model_hash), param=str(param), start=float(start),
                   stop=float(stop), over=over, fixed=fixed, task=str(task),
                   options=tuple(sorted(opts.items())), model_file=model_file)

    # -- the grid ------------------------------------------------------------------------
    @property
    def names(self) -> list:
        """The swept parameters' names."""
        return [n for n, _ in self.over]

    @property
    def points(self) -> list:
        """The grid points, one dict ``{name: value}`` per task, in task-index order."""
        if self._points is None:
            pts = [dict(zip(self.names, combo)) for combo in itertools.product(*(v for _, v in self.over))]
            object.__setattr__(self, "_points", pts)
        return self._points

    def point(self, index: int) -> dict:
        """Grid point ``index`` (``points[index]``, without making the whole grid)."""
        shape = [len(v) for _, v in self.over]
        coords = np.unravel_index(int(index), shape)
        return {name: values[k] for (name, values), k in zip(self.over, coords)}

    def __len__(self):
        """The number of tasks (the product of the grids' sizes; the grid is not made)."""
        return math.prod(len(v) for _, v in self.over)

    def option(self, name):
        return dict(self.options)[name]

    # -- identity -------------------------------------------------------------------------
    def to_json(self) -> str:
        """Canonical JSON (sorted keys): what the workers and the store receive."""
        d = dict(model=self.model, model_hash=self.model_hash, param=self.param, start=self.start,
                 stop=self.stop, over=[[n, list(v)] for n, v in self.over], fixed=[list(p) for p in self.fixed],
                 task=self.task, options=[[k, list(v) if isinstance(v, tuple) else v] for k, v in self.options],
                 model_file=self.model_file)
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "SweepSpec":
        d = json.loads(text)
        return cls(model=d["model"], model_hash=d["model_hash"], param=d["param"], start=d["start"],
                   stop=d["stop"], over=tuple((n, tuple(v)) for n, v in d["over"]),
                   fixed=tuple((n, v) for n, v in d["fixed"]), task=d["task"],
                   options=tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in d["options"]),
                   model_file=d["model_file"])

    @property
    def key(self) -> str:
        """SHA-256 of :meth:`to_json`: equal for the same sweep, different for any other."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def grid_key(self) -> str:
        """SHA-256 of everything but the model (to name what differs when a store is refused)."""
        d = json.loads(self.to_json())
        for k in ("model", "model_hash", "model_file"):
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()

    @property
    def model_label(self) -> str:
        return self.model_file or self.model
