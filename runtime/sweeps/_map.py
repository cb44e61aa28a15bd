"""Two-parameter maps from a continuation sweep: regions by behaviour, codim-2 curves on top.

The regions (stable sliding, stick-slip only, coexistence, other) and the grid of the map
are computed one layer down, in ``results/_sweeps.py`` (the interactive report draws the same
map); this module draws it with matplotlib.
"""
from __future__ import annotations

from ..results._figure import finish, subplots
from ..results._plots import drawable
from ..results._sweeps import REGION_COLOURS as _COLOURS
from ..results._sweeps import REGIONS, region_codes, region_grid

__all__ = ["REGIONS", "region_codes", "region_grid", "plot_sweep_map"]


#: line styles of the codim-2 curves over a map, by kind
_CURVE_STYLES = {"hopf": "k-", "fold": "k--", "pd": "k-.", "ns": "k:"}


def plot_sweep_map(table, spec, path=None, *, curves=(), at=None, ax=None, title=None):
    """Draw the map of :func:`region_grid` (regions coloured, failed tasks white) with the
    codim-2 curves ``curves`` (``BifurcationCurve`` of ``hopf_curve``, ``fold_curve``,
    ``pd_curve`` or ``ns_curve``: their ``lam`` on the main-parameter axis, ``mu`` on the swept
    one; the codimension-2 points found along PD and NS curves marked and named) on top.

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
        style = _CURVE_STYLES.get(curve.kind, "k-")
        line, = ax.plot(curve.lam, curve.mu, style, lw=1.5, label=f"{curve.kind} curve")
        if curve.kind not in labelled:          # one legend entry per kind of curve
            labelled.add(curve.kind)
            handles.append(line)
        for c in getattr(curve, "codim2", ()):
            ax.plot([c["lam"]], [c["mu"]], "o", color="k", ms=5, mfc="white")
            ax.annotate(drawable(c["kind"]), (c["lam"], c["mu"]), textcoords="offset points", xytext=(5, 4),
                        fontsize=8)
    ax.set_xlabel(drawable(xname))
    ax.set_ylabel(drawable(yname))
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(y.min(), y.max())
    ax.legend(handles=handles, loc="best", fontsize="small")
    ax.set_title(drawable(title or f"{spec.model_label}: {spec.task} sweep"
                          + (f" at {spec.param} = {at:g}" if at is not None and len(spec.names) == 2 else "")))
    finish(fig, path)
    return fig
