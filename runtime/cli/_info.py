"""``frictionkit info FILE``: what a result file holds, and the labels of its points.

For each branch of a run file (``equilibria``, ``periodic``, the appended ``restart_K``): its
kind, points, status, model and parameter values with units, method, continuation parameter
and range, and its special points with their labels (``GROUP:KIND<rank>``, the saved point
nearest to each, its parameter value and frequency), which ``continue --restart FILE@LABEL``
takes (``results/_labels.py``).
"""
from __future__ import annotations

import math
from pathlib import Path

import click

from ..errors import InputError


def _unit(units, name):
    unit = (units or {}).get(name) or ""
    return f" [{unit}]" if unit else ""


def _describe(branch, echo):
    from ..results._labels import point_index, parse_point, special_labels
    prov = branch.provenance
    units = prov.get("units", {})
    group = prov.get("group") or "/"
    lam = prov.get("continuation_parameter", "lam")
    n = len(branch)
    echo(f"{group}: {branch.kind} branch, {n} points (labels {group}:0 .. {group}:{n - 1}), status "
         f"{branch.status}: {branch.message}")
    method = prov.get("discretization", "?")
    sizes = prov.get("sizes") or {}
    # a non-uniform mesh's boundaries are data (up to 400 numbers): said, not listed
    size = ", ".join(f"{k} {v}" if k != "mesh" else "non-uniform mesh" for k, v in sizes.items()
                     if v is not None) if isinstance(sizes, dict) else ""
    echo(f"  model {prov.get('model', '?')} ({prov.get('model_source') or '?'}), {method}"
         + (f" ({size})" if size else "") + f", engine {prov.get('method', '?')}")
    if n:
        echo(f"  continued in {lam}{_unit(units, lam)} from {branch.param[0]:.10g} to {branch.param[-1]:.10g}")
    params = prov.get("parameters") or {}
    if params:
        echo("  parameters: " + ", ".join(f"{k} = {v:g}{_unit(units, k)}" for k, v in params.items() if k != lam))
    if not branch.special:
        echo("  special points: none")
        return
    echo(f"  {'label':<22} {'point':>7}  {lam + _unit(units, lam):>18}  {'omega rad/s':>14}")
    for label, sp in zip(special_labels(branch), branch.special):
        index = point_index(branch, parse_point(label))
        omega = f"{sp.omega:.8g}" if math.isfinite(sp.omega) else "-"
        echo(f"  {group + ':' + label:<22} {index:>7}  {sp.param:>18.10g}  {omega:>14}")


@click.command("info")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def info_cmd(file):
    """List the branches of a result FILE, their status and special points with their labels.

    A point's label is GROUP:INDEX (periodic:40); a special point's also GROUP:KIND<rank>
    (periodic:fold1, equilibria:hopf2), the form `frictionkit continue --restart FILE@LABEL`
    takes (without GROUP: the file's main branch).

    \b
    Examples:
      frictionkit info belt.h5
      frictionkit continue --restart belt.h5@fold1 --stop 12 --out more.h5
      frictionkit continue --restart belt.h5@equilibria:hopf2 --param FN --stop 3 --out fn.h5
    """
    # the results (NumPy, h5py) at the run, not for --help (as in _continuation.py)
    from ..results._branch import load_run
    try:
        branches = load_run(file)
    except (OSError, KeyError, ValueError, InputError) as exc:
        raise click.ClickException(f"{file}: not a run file of frictionkit continue/demo ({exc}); "
                                   "`frictionkit report FILE` shows curves and sweep stores") from None
    click.echo(f"{file}: {len(branches)} branch(es); the main one (FILE@POINT) is "
               f"{branches[-1 if len(branches) == 1 else _main(branches)].provenance.get('group') or '/'}")
    for branch in branches:
        click.echo("")
        _describe(branch, click.echo)


def _main(branches):
    """Index in ``branches`` of the main branch (``load_branch``'s default: periodic, else equilibria)."""
    groups = [b.provenance.get("group") for b in branches]
    return groups.index("periodic") if "periodic" in groups else 0
