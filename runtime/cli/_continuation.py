"""``frictionkit continue`` and ``frictionkit demo`` (registered on ``runtime.cli.main``)."""
from __future__ import annotations

import math
from pathlib import Path
import sys
import time

import click
import numpy as np
from tqdm import tqdm

from ..analysis._curves import fold_curve, hopf_curve
from ..analysis._equilibria import _use_aft
from ..cli import main
from ..discretizations._collocation import CollocationDiscretization
from ..discretizations._shooting import find_periodic_orbit
from ..drivers._branches import (
    _resolve_method,
    equilibrium_branch,
    periodic_branch,
    periodic_start_from_hopf,
    periodic_start_from_simulation,
)
from ..engine._newton import correct, tangent_at
from ..errors import ConvergenceError, FrictionkitError, InputError
from ..model._load import load_model
from ..results._plots import plot_branches
from ._params import ASSIGNMENT, param_values


class _Progress:
    """tqdm counter of continuation steps: step count, current lam, elapsed time.

    Not a percentage of [start, stop]: a branch turns back at folds, so that position is no
    measure of progress.  Shown on a terminal only (``disable=None``): redirected to a file or
    a CI log, the bar's carriage-return updates would pile up; the summaries are printed anyway.
    """

    def __init__(self, lam_start, lam_stop, desc):
        del lam_start, lam_stop            # kept in the signature: the callers pass the range
        self.bar = tqdm(desc=desc, unit=" steps", leave=False, file=sys.stderr, disable=None,
                        bar_format="{desc}: {n} steps, {elapsed} elapsed{postfix}")

    def __call__(self, rec):
        if self.bar.disable:
            return
        lam = float(rec.points[-1][-1])
        self.bar.n = int(rec.counters.steps)
        self.bar.set_postfix_str(f"lam={lam:.6g}, {len(rec.points)} points", refresh=True)

    def close(self):
        self.bar.close()


def _pick(points, index, option, what, where):
    """The ``index``-th (1-based) of ``points``, or an InputError naming the option, what
    exists and where (e.g. ``--from-hopf 3: ... has 2 Hopf point(s) (at Vb = ...)``)."""
    if 1 <= index <= len(points):
        return points[index - 1]
    if not points:
        raise InputError(f"{option} {index}: no {what} on {where}; widen the range")
    at = ", ".join(f"{p.param:.6g}" for p in points)
    raise InputError(f"{option} {index}: {where} has {len(points)} {what}(s) (at {at}); choose 1..{len(points)}")


def _load(model_name, param, params):
    return load_model(model_name, continuation=param, **params)


def _summary(br):
    c = br.counters
    sp = ", ".join(f"{s.kind} at {s.param:.10g}" + (f" (omega {s.omega:.8g})" if math.isfinite(s.omega) else "")
                   for s in br.special) or "none"
    return (f"{br.kind} branch: {len(br)} points, {c.get('steps', 0)} steps, "
            f"{c.get('factorizations', 0)} LU factorizations, {c.get('residual_evaluations', 0)} residuals; "
            f"status {br.status}: {br.message}\n  special points: {sp}")


def _to_collocation(model, disc, Z, n_intervals, degree, direction):
    """An HBM periodic start as a collocation unknown vector, corrected at fixed ``lam``.

    The HBM orbit is evaluated at the collocation nodes and Gauss points
    (``CollocationDiscretization.from_states``); Newton then also enforces the collocation
    phase condition.  ``direction`` (the HBM start's direction) gives the sign of the first
    step in ``lam``.
    """
    U, omega, lam = disc.split(Z)
    n, H = model.n, disc.H
    k = np.arange(1, H + 1)

    def states(t):
        th = omega * np.asarray(t, dtype=float)[None, :]
        c, s_ = np.cos(k[:, None] * th), np.sin(k[:, None] * th)
        return U[:n, :1] + U[:n, 1::2] @ c + U[:n, 2::2] @ s_

    coll = CollocationDiscretization(model, n_intervals, degree)
    e = np.zeros(coll.size)
    e[-1] = 1.0
    try:
        Zc, _ = correct(coll, coll.from_states(states, lam, omega), e, lam, max_iter=30)
    except ConvergenceError:
        # a truncated HBM orbit can be a poor guess (e.g. a validity dip of a sqrt auxiliary):
        # refine it by shooting on the original ODE first
        tt = np.arange(512) * (2 * np.pi / omega) / 512
        xs = states(tt)
        x0 = xs[:, int(np.argmax(xs[0]))]           # shooting's phase: an extremum of the first state
        orbit = find_periodic_orbit(model, lam, x0, 2 * np.pi / omega if coll.autonomous else None)
        Zc, _ = correct(coll, coll.from_orbit(orbit), e, lam, max_iter=30)
    if np.ndim(direction) == 0:
        return coll, Zc, float(np.sign(direction) or 1.0)
    t = tangent_at(disc, Z, direction)
    return coll, Zc, (1.0 if t[-1] >= 0 else -1.0)


def run_continuation(model, lam_start, lam_stop, start="equilibria", hopf_index=1, harmonics=30,
                     method=None, options=None, progress=True, echo=print, discretization=None,
                     intervals=40, degree=3):
    """The work behind ``frictionkit continue``; returns ``(equilibrium_branch, periodic_branch)``.

    ``start`` is ``"equilibria"`` (equilibria only), ``"hopf"`` (periodic branch from Hopf
    point ``hopf_index``, 1-based in the order of the equilibrium branch) or
    ``"simulation"`` (periodic branch from a time simulation at ``lam_start``).
    ``discretization`` is ``"hbm"`` (quadratic recast), ``"collocation"`` (orthogonal
    collocation of the quadratic recast with ``intervals`` sub-intervals of degree
    ``degree``, started from the HBM orbit) or ``"aft"`` (alternating frequency-time on the
    original ODE); ``None`` picks ``"aft"`` for sampled models (non-analytic laws) and
    ``"hbm"`` otherwise.  ``method`` is the continuation engine: ``None`` picks ``"anm"`` on
    the quadratic recast and ``"newton"`` for the AFT (the ANM needs the quadratic recast).
    """
    colloc = discretization == "collocation"
    if colloc:
        if model.sampled:
            raise InputError(f"--method collocation: model {model.name!r} has a non-analytic law (no "
                             "quadratic recast); use --method aft")
        if int(intervals) < 2 or not 1 <= int(degree) <= 12:
            raise InputError(f"--intervals {intervals} / --degree {degree}: need intervals >= 2 and "
                             "1 <= degree <= 12")
        discretization = "hbm"
    method = _resolve_method(model, method, _use_aft(model, discretization))
    if not (math.isfinite(lam_start) and math.isfinite(lam_stop)) or lam_start == lam_stop:
        raise InputError(f"--start {lam_start:g} and --stop {lam_stop:g} must be finite and different")
    if start != "equilibria" and int(harmonics) < 1:
        raise InputError(f"--harmonics {harmonics}: a periodic orbit needs at least 1 harmonic")
    lo, hi = sorted((lam_start, lam_stop))
    eq = per = None
    if start in ("equilibria", "hopf"):
        bar = _Progress(lam_start, lam_stop, "equilibria") if progress else None
        try:
            eq = equilibrium_branch(model, lam_start, lam_stop, method=method, progress=bar,
                                    discretization=discretization)
        finally:
            if bar:
                bar.close()
        echo(_summary(eq))
    if start == "hopf":
        hopf = _pick(eq.special_points("hopf"), hopf_index, "--from-hopf", "Hopf point",
                     f"the equilibrium branch on [{lo:g}, {hi:g}] of {model.continuation}")
        disc, Z, direction = periodic_start_from_hopf(model, hopf, harmonics, discretization=discretization)
    elif start == "simulation":
        disc, Z = periodic_start_from_simulation(model, lam_start, harmonics, discretization=discretization)
        direction = 1.0 if lam_stop > lam_start else -1.0
    if start in ("hopf", "simulation"):
        label = f"collocation {intervals}x{degree}" if colloc else f"periodic H={harmonics}"
        if colloc:
            if start == "hopf":
                # a few HBM steps first: right next to the Hopf point the orbit is tiny and
                # the collocation steps would be, too
                pre = periodic_branch(disc, Z, lo, hi, direction, method="anm",
                                      options=dict(max_steps=20, stability=False, branch_points=False))
                Z, direction = pre.solutions[-1], pre.tangents[-1]
            disc, Z, direction = _to_collocation(model, disc, Z, int(intervals), int(degree), direction)
        bar = _Progress(lam_start, lam_stop, label) if progress else None
        try:
            opts = dict(options or {})
            opts.setdefault("max_steps", 5000)
            if method == "anm":
                opts.setdefault("points_per_step", 4)     # smooth curves, no extra LU
            per = periodic_branch(disc, Z, lo, hi, direction, method=method, options=opts, progress=bar)
        finally:
            if bar:
                bar.close()
        echo(_summary(per))
    return eq, per


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
          --from-hopf 1 -H 20                                  # sampled law: AFT + Newton
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
    of steady sliding in the plane of two parameters).

    \b
    Example:
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
    (e.g. the upper end of a bistable band against a friction-law parameter).

    \b
    Example:
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
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default="anm",
              show_default=True, help="Continuation engine (as everywhere).")
@click.option("--method", "discretization", type=click.Choice(["hbm", "collocation"]), default="hbm",
              show_default=True, help="Periodic-orbit method, the discretization (as everywhere).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def demo_cmd(harmonics, out_dir, method, discretization, quiet):
    """The seed-000 belt oscillator: n = 10, FN = 5 N, continuation in the belt speed Vb.

    Equilibria on 0.05 <= Vb <= 12 m/s with both Hopf points, then the periodic branch
    from the first Hopf point through the fold (seeds: about 10.26 m/s) back to the
    second Hopf point.  Writes belt.h5 (periodic branch), belt_equilibria.h5 and belt.png.

    \b
    Examples:
      frictionkit demo
      frictionkit demo --engine newton --out-dir newton/
      frictionkit report belt_equilibria.h5 belt.h5 -o report.html
    """
    t0 = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        m = _load("belt", "Vb", dict(n=10, FN=5))
        eq, per = run_continuation(m, 0.05, 12.0, start="hopf", hopf_index=1, harmonics=harmonics,
                                   method=method, progress=not quiet, echo=click.echo,
                                   discretization=discretization)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    per.save(out_dir / "belt.h5")
    eq.save(out_dir / "belt_equilibria.h5")
    plot_branches([eq, per], path=out_dir / "belt.png",
                  title=f"belt, n = 10, FN = 5 N, {discretization.upper()} H = {harmonics}, {method.upper()}")
    for name in ("belt.h5", "belt_equilibria.h5", "belt.png"):
        click.echo(f"wrote {out_dir / name}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not per.success:
        raise click.ClickException(f"the periodic branch stopped early: {per.message}")
