"""``frictionkit continue`` and ``frictionkit demo`` (registered on ``runtime.cli.main``)."""
from __future__ import annotations

from pathlib import Path
import time

import click

from ..analysis._curves import fold_curve, hopf_curve
from ..cli import main
from ..drivers._branches import equilibrium_branch
from ..drivers._compose import _pick, _to_collocation, run_continuation  # noqa: F401  (moved; re-exported)
from ..errors import FrictionkitError, InputError
from ..model._load import load_model
from ..results._plots import plot_branches
from ._params import ASSIGNMENT, param_values


def _load(model_name, param, params):
    return load_model(model_name, continuation=param, **params)


@main.command("continue")
@click.argument("model")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", required=True, help="Continuation parameter, e.g. Vb.")
@click.option("--start", type=float, required=True, help="Start value of the parameter.")
@click.option("--stop", type=float, required=True, help="End of the parameter range.")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
              help="Parameter values NAME=VALUE (several allowed).")
@click.option("--equilibria", "mode", flag_value="equilibria", default=True,
              help="Continue the equilibria (default).")
@click.option("--from-hopf", "hopf", type=int, default=None,
              help="Periodic branch from Hopf point K (1-based) of the equilibria.")
@click.option("--from-simulation", "mode", flag_value="simulation",
              help="Periodic branch from a time simulation at --start.")
@click.option("--method", "discretization", type=click.Choice(["hbm", "collocation", "aft"]), default=None,
              help="Periodic-orbit method: harmonic balance of the quadratic recast, orthogonal "
                   "collocation of it, or AFT harmonic balance of the original ODE "
                   "[default: hbm; aft for models with a non-analytic law].")
@click.option("--discretization", "discretization", type=click.Choice(["hbm", "collocation", "aft"]),
              default=None, hidden=True, help="Same as --method.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine: asymptotic numerical method or pseudo-arclength Newton "
                   "[default: anm; newton on the AFT path].")
@click.option("--harmonics", "-H", type=int, default=30, show_default=True,
              help="Number of harmonics (HBM, AFT; also the HBM start of collocation).")
@click.option("--intervals", type=int, default=40, show_default=True, help="Collocation sub-intervals N_int.")
@click.option("--degree", type=int, default=3, show_default=True, help="Collocation polynomial degree p.")
@click.option("--max-steps", type=int, default=5000, show_default=True, help="Step budget.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HDF5 file for the branch (periodic if computed, else equilibria).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file of the bifurcation diagram.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def continue_cmd(model, assignments, param, start, stop, set_, mode, hopf, method, discretization, harmonics,
                 intervals, degree, max_steps, out, plot, quiet):
    """Continue equilibria or periodic orbits of MODEL in --param from --start to --stop.

    \b
    Examples:
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --from-hopf 1 --harmonics 40 --out branch.h5 --plot branch.png
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --from-hopf 1 --method collocation --intervals 60 --degree 3 --engine newton
      frictionkit continue drill --param eta --start 0.5 --stop 5 --set kappa=1 \\
          --from-hopf 1 -H 20                                  (sampled law: AFT + Newton)
    """
    t0 = time.perf_counter()
    try:
        params = param_values(set_, assignments)
        if param in params:
            params.pop(param)
        if harmonics < 1:
            raise InputError(f"--harmonics {harmonics}: the number of harmonics must be >= 1")
        m = _load(model, param, params)
        m.value(param)
        kind = "hopf" if hopf is not None else mode
        eq, per = run_continuation(m, start, stop, start=kind, hopf_index=hopf or 1, harmonics=harmonics,
                                   method=method, options=dict(max_steps=max_steps), progress=not quiet,
                                   echo=click.echo, discretization=discretization, intervals=intervals,
                                   degree=degree)
    except (InputError, NotImplementedError) as exc:
        raise click.ClickException(str(exc)) from None
    except FrictionkitError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    main_branch = per or eq
    if out is not None:
        main_branch.save(out)
        click.echo(f"wrote {out}")
    if plot is not None:
        plot_branches([b for b in (eq, per) if b is not None], path=plot)
        click.echo(f"wrote {plot}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not main_branch.success:
        raise click.ClickException(f"the continuation stopped early ({main_branch.status}): "
                                   f"{main_branch.message}; the partial branch was kept")


def _curve_options(command):
    """The arguments and options ``hopf-curve`` and ``fold-curve`` share."""
    shared = [
        click.argument("model"),
        click.argument("assignments", nargs=-1, type=ASSIGNMENT),
        click.option("--param", "-p", required=True, help="First parameter (the branches'), e.g. Vb."),
        click.option("--start", type=float, required=True, help="Start of the equilibrium branch in --param."),
        click.option("--stop", type=float, required=True, help="End of the parameter range."),
        click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
                     help="Parameter values NAME=VALUE (several allowed)."),
        click.option("--second", required=True, help="Second parameter, e.g. FN."),
        click.option("--min", "mu_min", type=float, required=True, help="Lower bound of the second parameter."),
        click.option("--max", "mu_max", type=float, required=True, help="Upper bound of the second parameter."),
        click.option("--direction", type=click.Choice(["up", "down"]), default="up", show_default=True,
                     help="First step: the second parameter rising or falling."),
        click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="HDF5 file of the curve."),
        click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="PNG of the curve."),
    ]
    for decorate in reversed(shared):
        command = decorate(command)
    return command


@main.command("hopf-curve")
@_curve_options
@click.option("--hopf", "hopf", type=int, default=1, show_default=True,
              help="Which Hopf point of the equilibrium branch to start from (1 = first).")
def hopf_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot,
                   hopf):
    """Continue a Hopf point of the equilibria in a second parameter (the stability boundary
    of steady sliding in the plane of two parameters), e.g.::

        frictionkit hopf-curve belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
            --second FN --min 0.01 --max 5 --direction down --plot hopf.png
    """
    try:
        params = param_values(set_, assignments)
        m = _load(model, param, params)
        eq = equilibrium_branch(m, start, stop)
        h = _pick(eq.special_points("hopf"), hopf, "--hopf", "Hopf point",
                  f"the equilibrium branch on [{min(start, stop):g}, {max(start, stop):g}] of {param}")
        curve = hopf_curve(m, h, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    _report_curve(curve, param, second, out, plot)


def _report_curve(curve, param, second, out, plot):
    """Summary, files and exit status of ``hopf-curve`` / ``fold-curve``."""
    what = "Hopf curve" if curve.kind == "hopf" else "fold curve"
    click.echo(f"{what} in ({param}, {second}): {len(curve)} points, status {curve.status}: {curve.message}")
    for f in curve.folds_mu:
        click.echo(f"  turning point in {second}: {f:.10g}")
    if len(curve):
        click.echo(f"  ends at {param} = {curve.lam[-1]:.10g}, {second} = {curve.mu[-1]:.10g}")
    if out is not None:
        curve.save(out)
        click.echo(f"wrote {out}")
    if plot is not None:
        curve.plot(plot)
        click.echo(f"wrote {plot}")
    if curve.status not in ("range", "bogdanov-takens"):
        raise click.ClickException(f"the {what} stopped early: {curve.message}")


@main.command("fold-curve")
@_curve_options
@click.option("--from-hopf", "hopf", type=int, default=1, show_default=True,
              help="Hopf point of the equilibria the periodic branch starts from (1 = first).")
@click.option("--harmonics", "-H", type=int, default=30, show_default=True, help="Number of harmonics H.")
@click.option("--fold", "fold", type=int, default=1, show_default=True,
              help="Which fold of the periodic branch to continue (1 = first).")
def fold_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot,
                   hopf, harmonics, fold):
    """Continue a fold of the periodic branch from a Hopf point (HBM) in a second parameter
    (e.g. the upper end of a bistable band against a friction-law parameter)::

        frictionkit fold-curve weakstrong --param vd --start 3 --stop 0.3 --set delta=0.1 \\
            -H 20 --second muv --min 0 --max 0.05 --plot folds.png
    """
    try:
        params = param_values(set_, assignments)
        m = _load(model, param, params)
        _, per = run_continuation(m, start, stop, start="hopf", hopf_index=hopf, harmonics=harmonics,
                                  discretization="hbm", options=dict(stability=False), progress=False,
                                  echo=click.echo)
        f = _pick(per.special_points("fold"), fold, "--fold", "fold", "the periodic branch")
        curve = fold_curve(per, f, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    _report_curve(curve, param, second, out, plot)


@main.command("demo")
@click.option("--harmonics", "-H", type=int, default=40, show_default=True, help="Number of harmonics.")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              help="Folder for belt.h5 and belt.png.")
@click.option("--engine", "--method", "method", type=click.Choice(["anm", "newton"]), default="anm",
              show_default=True, help="Continuation engine.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def demo_cmd(harmonics, out_dir, method, quiet):
    """The seed-000 belt oscillator: n = 10, FN = 5 N, continuation in the belt speed Vb.

    Equilibria on 0.05 <= Vb <= 12 m/s with both Hopf points, then the periodic branch
    from the first Hopf point through the fold (seeds: about 10.26 m/s) back to the
    second Hopf point.  Writes belt.h5 (periodic branch), belt_equilibria.h5 and belt.png.
    """
    t0 = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        m = _load("belt", "Vb", dict(n=10, FN=5))
        eq, per = run_continuation(m, 0.05, 12.0, start="hopf", hopf_index=1, harmonics=harmonics,
                                   method=method, progress=not quiet, echo=click.echo)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    per.save(out_dir / "belt.h5")
    eq.save(out_dir / "belt_equilibria.h5")
    plot_branches([eq, per], path=out_dir / "belt.png",
                  title=f"belt, n = 10, FN = 5 N, HBM H = {harmonics}, {method.upper()}")
    for name in ("belt.h5", "belt_equilibria.h5", "belt.png"):
        click.echo(f"wrote {out_dir / name}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not per.success:
        raise click.ClickException(f"the periodic branch stopped early: {per.message}")
