"""Two-parameter maps from a continuation sweep: regions by behaviour, codim-2 curves on top.

At a main-parameter value ``lam`` a task's row says whether the equilibrium is stable
(``eq_stable`` intervals) and whether a stable periodic orbit exists (``orbit_stable``); the
region is

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

import json

import numpy as np

from ..errors import InputError
from ..results._figure import finish, subplots

__all__ = ["REGIONS", "region_codes", "region_grid", "plot_sweep_map"]

REGIONS = ("stable sliding", "stick-slip only", "coexistence (bistable)", "other")
_COLOURS = ("#a6cee3", "#fb9a99", "#b2df8a", "#d9d9d9")


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

    One swept parameter: ``x = lam`` (default 200 values over the continuation range),
    ``y`` the swept values, ``codes[j, i]`` the region of task ``j`` at ``lam[i]``.  Two swept
    parameters: ``x``, ``y`` their values and the regions at main-parameter value ``at``.
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
    codes = np.full((len(y), len(x)), -1)
    for k in range(len(x) * len(y)):
        if k in rows:
            codes[k % len(y), k // len(y)] = region_codes(rows[k], at)[0]
    return x, y, codes, (names[0], names[1])


def plot_sweep_map(table, spec, path=None, *, curves=(), at=None, ax=None, title=None):
    """Draw the map of :func:`region_grid` (regions coloured, failed tasks white) with the
    codim-2 curves ``curves`` (``BifurcationCurve`` of ``hopf_curve``/``fold_curve``: their
    ``lam`` on the main-parameter axis, ``mu`` on the swept one) on top.

    Returns the matplotlib figure (written to ``path`` when given, the user's backend untouched).
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    x, y, codes, (xname, yname) = region_grid(table, spec, at=at)
    if ax is None:
        fig, ax = subplots(path, figsize=(7, 5), layout="constrained")
    else:
        fig = ax.figure
    cmap = ListedColormap(["white", *_COLOURS])
    ax.pcolormesh(x, y, codes + 1, cmap=cmap, vmin=-0.5, vmax=len(_COLOURS) + 0.5, shading="nearest")
    handles = [Patch(color=c, label=r) for c, r in zip(_COLOURS, REGIONS)]
    labelled = set()
    for curve in curves:
        style = "k-" if curve.kind == "hopf" else "k--"
        line, = ax.plot(curve.lam, curve.mu, style, lw=1.5, label=f"{curve.kind} curve")
        if curve.kind not in labelled:          # one legend entry per kind of curve
            labelled.add(curve.kind)
            handles.append(line)
    ax.set_xlabel(xname)
    ax.set_ylabel(yname)
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(y.min(), y.max())
    ax.legend(handles=handles, loc="best", fontsize="small")
    ax.set_title(title or f"{spec.model_label}: {spec.task} sweep" + (f" at {spec.param} = {at:g}" if at is not None
                                                                     and len(spec.names) == 2 else ""))
    finish(fig, path)
    return fig
