"""``frictionkit report``, ``plot``, ``export`` and ``models``: look at saved results and models."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import FrictionkitError, InputError

# h5py and the results are imported by the functions that use them, not here: `--help` of
# these commands imports this module to show the options (as in _continuation.py)

_H5 = click.Path(exists=True, dir_okay=False, path_type=Path)


def _load(path: Path) -> list:
    """The branches of a file (a run file: equilibria and periodic), a two-parameter curve
    (root attribute ``kind`` = ``hopf_curve``/``fold_curve``), a torus branch (``kind`` =
    ``torus_branch``, ``frictionkit torus``) or a sweep store (root attribute ``format`` =
    ``frictionkit-sweep``), as a list."""
    import h5py
    from ..analysis._curves import BifurcationCurve
    from ..results._branch import load_run
    from ..results._sweeps import FORMAT as SWEEP_FORMAT, load_sweep_map
    try:
        with h5py.File(path, "r") as f:
            kind, fmt = str(f.attrs.get("kind", "")), str(f.attrs.get("format", ""))
        if fmt == SWEEP_FORMAT:
            return [load_sweep_map(path)]
        if kind == "torus_branch":
            from ..drivers._torus import TorusBranch
            return [TorusBranch.load(path)]
        return [BifurcationCurve.load(path)] if kind.endswith("_curve") else load_run(path)
    except (OSError, KeyError, ValueError, InputError) as exc:
        raise click.ClickException(f"{path}: not a frictionkit result file ({exc}); give a file written by "
                                   "frictionkit continue/demo/hopf-curve/fold-curve/sweep") from None


def _branches(paths):
    loaded = [(p, x) for p in paths for x in _load(p)]
    items = [x for _, x in loaded]
    curves = [p for p, x in loaded if not hasattr(x, "time_series")]     # curves and sweep maps
    return items, curves


def _attach(branch, model_file=None):
    """``branch`` with its discretization rebuilt (``attach_discretization``): by its zoo model,
    or by ``model_file`` (the user's ``--model``, checked against the hash the branch saved)
    when the branch names a model file; raises FrictionkitError when neither serves."""
    from ..drivers._branches import attach_discretization
    if model_file is not None:
        try:
            return attach_discretization(branch, model_file)
        except FrictionkitError:
            named = str((getattr(branch, "provenance", None) or {}).get("model_source") or "")
            if named.endswith(".py") or "/" in named:
                raise                       # a model file's branch: --model was meant for it
    return attach_discretization(branch)


def _with_orbits(items, model_file=None):
    """Branches whose orbits are not their coefficients (collocation, shooting: harmonics -1)
    get their discretization back (the restart's rebuild) when their model is a zoo model or
    the ``--model`` file, so that the report and ``plot --orbit`` show their orbits; a model
    file a branch names is never run (without --model the orbit panels stay empty and say
    so)."""
    for x in items:
        if getattr(x, "harmonics", 0) == -1 and getattr(x, "discretization", True) is None:
            try:
                _attach(x, model_file)
            except FrictionkitError:
                pass
    return items


_MODEL_HELP = ("The model file the branches were computed with, when they were not computed with a zoo "
               "model (checked against the hash each branch saved): their multipliers and collocation "
               "orbits are then computed. A model file a branch file names is never run without it.")


@click.command("report")
@click.argument("files", nargs=-1, required=True, type=_H5)
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="The HTML file to write.")
@click.option("--state", default=None, help="State whose amplitude is plotted (default: the first).")
@click.option("--cdn", is_flag=True,
              help="Load Plotly from its CDN (a small page that needs the network) instead of inlining it "
                   "(a page that opens offline).")
@click.option("--multipliers/--saved-multipliers", default=True, show_default=True,
              help="Compute the Floquet multipliers of the points of periodic branches that have none (a "
                   "continuation computes them at step ends only; zoo models, or the --model file) so that "
                   "every click shows them, or show the saved ones only.")
@click.option("--model", "model_file", default=None, metavar="MODEL_FILE", help=_MODEL_HELP)
@click.option("--quiet", "-q", is_flag=True, help="Print only the file written.")
def report_cmd(files, out, state, cdn, multipliers, model_file, quiet):
    """Write one self-contained interactive HTML report of saved branches, curves and sweeps.

    Torus branches too (`frictionkit torus --out`).

    Click a point of the diagram to see its orbit, phase portrait, Floquet multipliers
    (equilibria: eigenvalues), numbers and the `frictionkit continue --restart FILE@LABEL`
    line that continues from it; the model and its parameters are listed with their units.
    A torus branch shows the rotation numbers; click a torus for its Poincare section.  A sweep store (`frictionkit sweep --out`) shows its map, one point
    per task coloured by outcome, hover for the task's parameters; Hopf and fold curves of
    the same two parameters are drawn over it.  The file opens offline (Plotly's JavaScript
    is inlined, 1.5 MB) unless --cdn.

    \b
    Examples:
      frictionkit demo
      frictionkit report belt.h5 -o report.html
      frictionkit report belt.h5 --cdn -o report_online.html
      frictionkit report belt.h5 belt_sweep.h5 -o report.html
      frictionkit report lugre.h5 --model my_lugre.py -o report.html
    """
    # the report's module imports matplotlib's colours (0.3 s of CPU), which plot, export and
    # models, loaded with this module, do not need: imported here for laziness (not a cycle)
    from ..results._report import report
    loaded = [(p, x) for p in files for x in _load(p)]
    items = [x for _, x in loaded]
    try:
        items = _with_orbits(items, model_file)
        if multipliers:
            _fill_multipliers(items, quiet, model_file)
        report(items, out, state=state, sources=[str(p) for p, _ in loaded], cdn=cdn)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out}")


def _fill_multipliers(items, quiet, model_file=None):
    """``--multipliers``: the Floquet multipliers of the periodic points that have none,
    computed by the analysis the continuation uses (``point_stability`` on the branch's
    rebuilt discretization: a zoo model or the ``--model`` file; a model file a branch names
    is never run, its points keep their note)."""
    import numpy as np
    from ..analysis._stability import point_stability
    for br in items:
        if getattr(br, "kind", "") != "periodic" or getattr(br, "multipliers", None) is None:
            continue
        todo = np.flatnonzero(~np.isfinite(br.multipliers).any(axis=1))
        if not todo.size:
            continue
        try:
            disc = _attach(br, model_file).discretization
        except FrictionkitError as exc:
            if not quiet:
                hint = "" if model_file else " (`frictionkit report FILE --model MODEL_FILE` computes them)"
                click.echo(f"--multipliers: {exc}; the saved multipliers are shown{hint}")
            continue
        # the continuation's own settings (engine/_options.py: multiplier_rtol, the refined
        # monodromy's tolerance; 0 = the discretization's grid), as analysis/_pass.py passes them
        opts = br.provenance.get("options") or {}
        rtol = opts.get("multiplier_rtol", 1e-3)
        rtol = float(rtol) or None if isinstance(rtol, (int, float)) and not isinstance(rtol, bool) else 1e-3
        for i in todo:
            mult = np.asarray(point_stability(disc, br.solutions[i], which="primary", rtol=rtol)[0].multipliers)
            k = min(len(mult), br.multipliers.shape[1])
            br.multipliers[i, :k] = mult[:k]
        if not quiet:
            click.echo(f"--multipliers: computed at {todo.size} points of {br!r}")


@click.command("plot")
@click.argument("files", nargs=-1, required=True, type=_H5)
@click.option("--orbit", "orbit", type=int, default=None,
              help="Plot the orbit of point INDEX of the last branch instead of the diagram.")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file (.png, .pdf or .svg); default: FILE.png.")
@click.option("--state", default=None, help="State whose amplitude is plotted (default: the first).")
@click.option("--model", "model_file", default=None, metavar="MODEL_FILE", help=_MODEL_HELP)
def plot_cmd(files, orbit, out, state, model_file):
    """Plot saved branches (bifurcation diagram) or the orbit of one point.

    \b
    Examples:
      frictionkit plot belt.h5 -o belt.pdf
      frictionkit plot belt.h5 --orbit 100 -o orbit.svg
      frictionkit plot coll.h5 --orbit 10 --model my_model.py -o orbit.png
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
                if br.harmonics == -1 and br.discretization is None:
                    try:
                        _attach(br, model_file)
                    except FrictionkitError as exc:
                        hint = "" if model_file else "; give it with `frictionkit plot FILE --orbit INDEX --model MODEL_FILE`"
                        raise InputError(f"--orbit {orbit}: the orbit of a collocation or shooting branch is sampled "
                                         f"through its model: {exc}{hint}") from None
                plot_orbit(br, orbit, path=tmp)
    except InputError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {out}")


@click.command("export")
@click.argument("file", metavar="FILE[@POINT]")
@click.option("--csv", "formats", flag_value="csv", multiple=True,
              help="CSV: units in the header names (`ptp_y [m]`), read by a plain pandas.read_csv (the default format).")
@click.option("--mat", "formats", flag_value="mat", multiple=True, help="MATLAB .mat file (scipy.io.savemat).")
@click.option("--h5", "formats", flag_value="h5", multiple=True,
              help="HDF5 file (h5py): one dataset per column, each with a `units` attribute.")
@click.option("--orbit", is_flag=True,
              help="Export the orbit of the point FILE@POINT names (columns t and each state over one period) "
                   "instead of the branch's table.")
@click.option("--samples", type=click.IntRange(min=2), default=512, show_default=True,
              help="With --orbit: the number of times over the period.")
@click.option("--model", "model_file", default=None, metavar="MODEL_FILE",
              help="With --orbit of a collocation branch of a model file: that file (a file the branch names "
                   "is never run; its hash must be the branch's).")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file; with several formats, a stem: -o res/belt writes res/belt.csv, res/belt.mat "
                   "(a .csv, .mat or .h5 suffix given is dropped).  Default: FILE's stem, with _GROUP_INDEX "
                   "for an orbit (belt_periodic_477.csv) and _table for the HDF5 table (belt_table.h5).")
def export_cmd(file, formats, orbit, samples, model_file, out):
    """Export a saved branch (of a run file: its main branch) as a table with units.

    Or, with --orbit, the orbit of one of its points; in one or several formats at once.
    FILE@POINT names a point as `continue --restart` does: an index (477, -1), a special point
    (fold, hopf2, pd1; AUTO's LP1, HB2, PD1) or GROUP:POINT (periodic:40, restart_1:fold).  Each
    file is written completely, then put in place (never half-written).

    \b
    Examples:
      frictionkit export belt.h5                        # belt.csv
      frictionkit export belt.h5 --csv --mat --h5       # belt.csv, belt.mat, belt_table.h5
      frictionkit export belt.h5 --mat -o belt_v2.mat
      frictionkit export belt.h5@fold --orbit --csv --mat -o fold_orbit   # fold_orbit.csv, .mat
    """
    formats = list(dict.fromkeys(formats)) or ["csv"]           # in the order given, each once
    path, ref = _parse_point_file(file)
    if ref is not None and not orbit:
        raise click.BadParameter(f"{file}: a point goes with --orbit (the table holds every point of the branch); "
                                 f"give `{path}` alone or add --orbit", param_hint="FILE")
    if model_file is not None and not orbit:
        raise click.BadParameter(f"--model {model_file}: goes with --orbit (the table needs no model)",
                                 param_hint="--model")
    if orbit and ref is None:
        raise click.BadParameter(f"--orbit: name the point, e.g. {path}@fold or {path}@-1", param_hint="FILE")
    from ..results import _export
    try:
        if orbit:
            br, index, what = _orbit_point(path, ref, file, model_file)
            default_stem = path.with_name(f"{path.stem}_{br.provenance.get('group', 'periodic')}_{index}")
        else:
            br = _load(path)[-1]                 # a run file: its main branch (periodic, else equilibria)
            if not hasattr(br, "time_series"):
                raise click.BadParameter(f"{path} holds a two-parameter curve or a sweep store, not a branch",
                                         param_hint="FILE")
            default_stem = path.with_suffix("")
        targets = _export_targets(formats, out, default_stem, orbit)
        for fmt, target in targets.items():
            if target.resolve() == path.resolve():
                raise InputError(f"{target}: is the file being exported; give another name with -o")
        for fmt, target in targets.items():
            if orbit:
                _export.write_orbit(br, index, target, fmt, n_t=samples)
            else:
                {"csv": _export.write_csv, "mat": _export.write_mat, "h5": _export.write_h5}[fmt](br, target)
            click.echo(f"wrote {target}" + (f" (the orbit of {what})" if orbit else ""))
    except InputError as exc:
        raise click.ClickException(str(exc)) from None


def _parse_point_file(text):
    """``FILE[@POINT]`` -> (path, :class:`PointRef` or None), as ``continue --restart`` reads
    it (``cli/_continuation._parse_restart``): a name that is an existing file is the file."""
    from ..results._labels import parse_point
    text = str(text)
    path, sep, point = text.rpartition("@")
    if not sep or Path(text).is_file():
        path, ref = text, None
    elif not path:
        raise click.BadParameter(f"{text!r}: give the file before the '@', e.g. run.h5@fold", param_hint="FILE")
    else:
        try:
            ref = parse_point(point, f"{path}@{point}: point")
        except InputError as exc:
            raise click.BadParameter(str(exc), param_hint="FILE") from None
    if not Path(path).is_file():
        raise click.BadParameter(f"no file {path!r}", param_hint="FILE")
    return Path(path), ref


def _orbit_point(path, ref, text, model_file=None):
    """(branch, index, description) of the point ``ref`` names in the file ``path``; a saved
    collocation branch gets its discretization back (rebuilt from the file's sizes and model,
    as a restart rebuilds it), which its orbit's samples need."""
    from ..results._branch import load_branch
    from ..results._labels import point_index, special_point
    try:
        br = load_branch(path, ref.group)
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"{path}: not a frictionkit run or branch file ({exc}); give a file written by "
                         "frictionkit continue or demo") from None
    where = f"{text}:"
    index = point_index(br, ref, f"{where} point")
    special = special_point(br, ref, where)
    if br.kind == "equilibrium":
        raise InputError(f"{text}: point {index} of the {br.provenance.get('group', '')} branch is an equilibrium, "
                         "which has no orbit: export a point of a periodic branch (FILE@periodic:POINT), or the "
                         "equilibria's table without --orbit")
    if br.harmonics < 0 and br.discretization is None:
        br.discretization = _saved_discretization(br, index, model_file)
    pname = br.provenance.get("continuation_parameter", "lam")
    what = f"{br.provenance.get('group', '/')}:{index} ({pname} = {float(br.param[index]):.10g}"
    what += f", the saved point nearest {ref.kind}{ref.rank})" if special is not None else ")"
    return br, index, what


def _saved_discretization(br, index, model_file=None):
    """The discretization of a saved collocation branch, rebuilt from its provenance as
    ``Branch.restart`` rebuilds it (its model: the zoo name, or ``model_file``, checked against
    the file's hash)."""
    from ..drivers._branches import _restart_discretization, _restart_model
    from ..model._fast_load import is_cached_zoo
    prov = br.provenance
    named = prov.get("model_source") or prov.get("model")
    lam = prov.get("continuation_parameter")
    # a zoo model whose compiled module is cached: loaded without sympy (model/_fast_load.py)
    model = model_file
    if model is None and isinstance(named, str) and isinstance(lam, str) and is_cached_zoo(named, lam):
        model = named
    try:
        loaded = _restart_model(prov, model)
    except InputError as exc:
        hint = "" if model_file else "; to export: frictionkit export FILE@POINT --orbit --model MODEL_FILE"
        raise InputError(f"the orbit of a saved collocation branch is sampled through its model: {exc}{hint}") from None
    disc, _ = _restart_discretization(br, loaded, index, None)
    return disc


def _export_targets(formats, out, default_stem, orbit):
    """format -> output path: ``-o`` as given for one format; with several, ``-o`` is a stem
    (a .csv/.mat/.h5 suffix dropped) and each format adds its suffix.  The default stem is
    ``default_stem``; the HDF5 table is ``<stem>_table.h5`` (``<stem>.h5`` is the run file)."""
    from ..results._export import FORMATS
    if out is not None and len(formats) == 1:
        return {formats[0]: out}
    if out is not None:
        stem = out.with_suffix("") if out.suffix.lower() in FORMATS.values() else out
    else:
        stem = default_stem
    targets = {}
    for fmt in formats:
        name = stem.name + ("_table" if fmt == "h5" and out is None and not orbit else "") + FORMATS[fmt]
        targets[fmt] = stem.with_name(name)
    return targets


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
