"""``frictionkit pd-curve`` and ``frictionkit ns-curve`` (listed in ``runtime.cli.COMMANDS``).

The periodic branch is continued from a Hopf point of the equilibria with the multipliers at
every step (``multiplier_stride = 1``: no pair of crossings is lost between two computed
points), the chosen period doubling or Neimark–Sacker point is taken from it and continued in
the second parameter (``analysis/_pd_ns_curves.py``).
"""
from __future__ import annotations

import math

import click

from ..errors import FrictionkitError
from ._continuation import _check_curve_outputs, _check_curve_range, _curve_options, _load, branch_args, saved_point
from ._params import param_values, write_outputs

_WHAT = {"pd": ("period doubling", "PD curve", "pd_curve"), "ns": ("Neimark-Sacker point", "NS curve", "ns_curve")}
#: Statuses of a curve that reached the end it was asked for (the others stopped early).
_DONE = ("range", "resonance-1:1", "resonance-1:2")


def _branch_options(command):
    options = [
        click.option("--from-hopf", "hopf", type=int, default=1, show_default=True,
                     help="Hopf point of the equilibria the periodic branch starts from (1 = first)."),
        click.option("--harmonics", "-H", type=int, default=30, show_default=True, help="Number of harmonics H."),
        click.option("--method", "discretization", type=click.Choice(["aft", "collocation"]), default="aft",
                     show_default=True,
                     help="Periodic-orbit method (the curve needs the orbit's monodromy matrix: the AFT harmonic "
                          "balance or the collocation of the states)."),
        click.option("--intervals", type=int, default=40, show_default=True, help="Collocation sub-intervals N_int."),
        click.option("--degree", type=int, default=3, show_default=True, help="Collocation polynomial degree p."),
        click.option("--at", "at", type=float, multiple=True,
                     help="A value of the second parameter where the curve must have a point (repeatable)."),
        click.option("--monodromy-steps", "steps", type=click.IntRange(min=1), default=None,
                     help="AFT: Magnus steps per period of the curve's monodromy (default: the AFT's samples "
                          "doubled until the critical multiplier converges)."),
    ]
    for decorate in reversed(options):
        command = decorate(command)
    return command


def _run(kind, model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot, quiet,
         hopf, harmonics, discretization, intervals, degree, at, index, steps=None):
    # the runtime, imported here: `pd-curve --help` imports this module (tests/cli/test_lazy_cli.py)
    from ..analysis import _pd_ns_curves
    from ..drivers._compose import _pick, run_continuation
    from ._params import check_sizes
    what, title, function = _WHAT[kind]
    curve_of = getattr(_pd_ns_curves, function)
    try:
        _check_curve_outputs(out, plot)
        _check_curve_range(mu_min, mu_max, direction)
        saved = saved_point(model, kind, what, (param, set_, assignments))
        if saved is not None:
            per, point, param = saved
        else:
            branch_args(model, param, start, stop)
        check_sizes(harmonics, intervals, degree)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if saved is None:
            params = param_values(set_, assignments)
            m = _load(model, param, params)
            _, per = run_continuation(m, start, stop, start="hopf", hopf_index=hopf, harmonics=harmonics,
                                      # error-controlled multipliers (the default), as the curve's own
                                      # refined monodromy: the curve passes through the point located
                                      options=dict(multiplier_stride=1), progress=not quiet,
                                      echo=click.echo, discretization=discretization, intervals=intervals,
                                      degree=degree)
            point = _pick(per.special_points(kind), index, f"--{kind}", what, "the periodic branch")
        curve = curve_of(per, point, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0,
                         mu_values=at, intervals=steps)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{title} in ({param}, {second}): {len(curve)} points, status {curve.status}: {curve.message}")
    for f in curve.folds_mu:
        click.echo(f"  turning point in {second}: {f:.10g}")
    for c in curve.codim2:
        how = "located" if c["located"] else "detected between two points (not located)"
        click.echo(f"  {c['kind']} point ({how}): {param} = {c['lam']:.10g}, {second} = {c['mu']:.10g}")
    err = [float(e) for e in curve.columns.get("orbit_error", [])]

    def accuracy(i):
        return f" (estimated orbit error {err[i]:.1e})" if err and math.isfinite(err[i]) else ""
    for v in at:
        hit = [i for i, mu in enumerate(curve.mu) if abs(mu - v) <= 1e-13 * abs(v)]
        if hit:
            click.echo(f"  at {second} = {v:.10g}: {param} = {curve.lam[hit[0]]:.10g}{accuracy(hit[0])}")
        else:
            click.echo(f"  at {second} = {v:.10g}: not crossed by the curve")
    if len(curve):
        extra = f", theta = {curve.columns['theta'][-1]:.10g}" if kind == "ns" else ""
        click.echo(f"  ends at {param} = {curve.lam[-1]:.10g}, {second} = {curve.mu[-1]:.10g}{extra}"
                   f"{accuracy(-1)}")
    finite = [e for e in err if math.isfinite(e)]
    if finite:
        click.echo(f"  accuracy: estimated orbit error <= {max(finite):.1e} along the curve (H = "
                   f"{per.discretization.H}; more --harmonics reduce it)")
    write_outputs(curve, out, plot)
    if curve.status not in _DONE:
        raise click.ClickException(f"the {title} stopped early: {curve.message}")


@click.command("pd-curve")
@_curve_options
@_branch_options
@click.option("--pd", "index", type=int, default=1, show_default=True,
              help="Which period doubling of the periodic branch to continue (1 = first).")
def pd_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot, quiet,
                 hopf, harmonics, discretization, intervals, degree, at, steps, index):
    """Continue a period doubling of the periodic branch from a Hopf point in a second parameter.

    The LuGre belt of tests/models/state_law_specs.py at H = 30: its third period doubling
    (vb = 1.245) continued in the bristle damping s1.

    \b
    Example:
      frictionkit pd-curve tests/models/state_law_specs.py --param vb --start 0.01 --stop 2 \\
          --pd 3 --second s1 --min 2.83 --max 3.2 --at 3.0 --plot pd.png
    """
    _run("pd", model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot, quiet,
         hopf, harmonics, discretization, intervals, degree, at, index, steps)


@click.command("ns-curve")
@_curve_options
@_branch_options
@click.option("--ns", "index", type=int, default=1, show_default=True,
              help="Which Neimark-Sacker point of the periodic branch to continue (1 = first).")
def ns_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot, quiet,
                 hopf, harmonics, discretization, intervals, degree, at, steps, index):
    """Continue a Neimark-Sacker point of the periodic branch from a Hopf point in a second parameter.

    \b
    The run stops at the strong resonances 1:1 and 1:2 (the critical pair exp(+-i theta)
    reaching +1 or -1).
    """
    _run("ns", model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot, quiet,
         hopf, harmonics, discretization, intervals, degree, at, index, steps)
