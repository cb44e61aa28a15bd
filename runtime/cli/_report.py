"""``frictionkit report``, ``plot``, ``export`` and ``models``: look at saved results and models."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError

# h5py and the results are imported by the functions that use them, not here: `--help` of
# these commands imports this module to show the options (as in _continuation.py)

_H5 = click.Path(exists=True, dir_okay=False, path_type=Path)


def _load(path: Path) -> list:
    """The branches of a file (a run file: equilibria and periodic), a two-parameter curve
    (root attribute ``kind`` = ``hopf_curve``/``fold_curve``) or a sweep store (root
    attribute ``format`` = ``frictionkit-sweep``), as a list."""
    import h5py
    from ..analysis._curves import BifurcationCurve
    from ..results._branch import load_run
    from ..results._sweeps import FORMAT as SWEEP_FORMAT, load_sweep_map
    try:
        with h5py.File(path, "r") as f:
            kind, fmt = str(f.attrs.get("kind", "")), str(f.attrs.get("format", ""))
        if fmt == SWEEP_FORMAT:
            return [load_sweep_map(path)]
        return [BifurcationCurve.load(path)] if kind.endswith("_curve") else load_run(path)
    except (OSError, KeyError, ValueError, InputError) as exc:
        raise click.ClickException(f"{path}: not a frictionkit result file ({exc}); give a file written by "
                                   "frictionkit continue/demo/hopf-curve/fold-curve/sweep") from None


def _branches(paths):
    loaded = [(p, x) for p in paths for x in _load(p)]
    items = [x for _, x in loaded]
    curves = [p for p, x in loaded if not hasattr(x, "time_series")]     # curves and sweep maps
    return items, curves


@click.command("report")
@click.argument("files", nargs=-1, required=True, type=_H5)
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="The HTML file to write.")
@click.option("--state", default=None, help="State whose amplitude is plotted (default: the first).")
def report_cmd(files, out, state):
    """Write one self-contained interactive HTML report of saved branches, curves and sweeps.

    Click a point of the diagram to see its orbit, phase portrait, Floquet multipliers
    and numbers; a sweep store (`frictionkit sweep --out`) shows its map, one point per
    task coloured by outcome, hover for the task's parameters.  The file opens offline
    (Plotly's JavaScript is inlined).

    \b
    Examples:
      frictionkit demo
      frictionkit report belt.h5 -o report.html
      frictionkit report belt.h5 belt_sweep.h5 -o report.html
    """
    # the report's module imports matplotlib's colours (0.3 s of CPU), which plot, export and
    # models, loaded with this module, do not need: imported here for laziness (not a cycle)
    from ..results._report import report
    items, _ = _branches(files)
    try:
        report(items, out, state=state)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out}")


@click.command("plot")
@click.argument("files", nargs=-1, required=True, type=_H5)
@click.option("--orbit", "orbit", type=int, default=None,
              help="Plot the orbit of point INDEX of the last branch instead of the diagram.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file (.png, .pdf or .svg); default: FILE.png.")
@click.option("--state", default=None, help="State whose amplitude is plotted (default: the first).")
def plot_cmd(files, orbit, out, state):
    """Plot saved branches (bifurcation diagram) or the orbit of one point.

    \b
    Examples:
      frictionkit plot belt.h5 -o belt.pdf
      frictionkit plot belt.h5 --orbit 100 -o orbit.svg
    """
    from ..results._export import replacing
    from ..results._plots import plot_branches, plot_orbit
    items, curves = _branches(files)
    if curves:
        raise click.BadParameter(f"{curves[0]} holds a two-parameter curve or a sweep store: use `frictionkit "
                                 "report` (or `frictionkit plot-sweep` for a sweep's map)", param_hint="FILES")
    out = out or files[-1].with_suffix(".png")
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise click.BadParameter(f"{out}: give a .png, .pdf or .svg file", param_hint="-o")
    try:
        with replacing(out) as tmp:
            if orbit is None:
                plot_branches(items, state=state, path=tmp)
            else:
                br = items[-1]
                if not -len(br) <= orbit < len(br):
                    raise InputError(f"--orbit {orbit}: {files[-1]} has points 0..{len(br) - 1}")
                plot_orbit(br, orbit, path=tmp)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out}")


@click.command("export")
@click.argument("file", type=_H5)
@click.option("--csv", "fmt", flag_value="csv", default=True, help="CSV, one row per point (default).")
@click.option("--mat", "fmt", flag_value="mat", help="MATLAB .mat file (scipy.io.savemat).")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: FILE with .csv or .mat).")
def export_cmd(file, fmt, out):
    """Export a saved branch (of a run file: its main branch) as a table with units.

    \b
    Examples:
      frictionkit export belt.h5 --csv
      frictionkit export belt.h5 --mat -o belt.mat
    """
    from ..results._export import write_csv, write_mat
    br = _load(file)[-1]                 # a run file: its main branch (periodic, else equilibria)
    if not hasattr(br, "time_series"):
        raise click.BadParameter(f"{file} holds a two-parameter curve, not a branch", param_hint="FILE")
    out = out or file.with_suffix(f".{fmt}")
    try:
        (write_csv if fmt == "csv" else write_mat)(br, out)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out}")


@click.command("models")
@click.argument("name", required=False)
def models_cmd(name):
    """List the model zoo, or the parameters of one model (zoo name or model file).

    \b
    Examples:
      frictionkit models
      frictionkit models belt
      frictionkit models my_model.py
    """
    # sympy is imported here only: 0.5 s that the other commands need not pay
    from frictionkit.codegen.api import resolve_spec
    from frictionkit.modelspec.errors import ModelSpecError
    from frictionkit.modelspec.zoo import ZOO
    if name is None:
        for key, (builder, params) in ZOO.items():
            spec = builder()
            click.echo(f"{key:<12} {spec.description}  [shipped for: {', '.join(params)}]")
        click.echo("\nfrictionkit models NAME lists a model's parameters.")
        return
    try:
        spec = resolve_spec(name)
    except ModelSpecError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{spec.name}: {spec.description}")
    click.echo(f"states: {', '.join(s.name for s in spec.states)}")
    click.echo(f"{'parameter':<10} {'default':>12}  {'unit':<8} doc")
    for p in spec.parameters.values():
        click.echo(f"{p.name:<10} {p.default:>12.6g}  {p.unit or '-':<8} {p.doc or ''}")
