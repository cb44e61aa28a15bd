"""``frictionkit torus`` (listed in ``runtime.cli.COMMANDS``).

The periodic branch is continued with its multipliers at every step (``multiplier_stride =
1``): from the linear forced response at ``--start`` for a forced model, from a Hopf point of
the equilibria (``--from-hopf``) for an autonomous one.  The chosen Neimark–Sacker point
(``--ns``) starts the branch of tori (``drivers/_torus.py``), continued in the same parameter
within ``[--start, --stop]``.  With ``--from-simulation`` there is no periodic branch: the
torus is fitted to a simulation at ``--start`` (``drivers/_torus.torus_from_simulation``).
Every printed number carries its estimated error, and each torus its leading transverse
Lyapunov exponent.
"""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import FrictionkitError, InputError
from ._params import ASSIGNMENT, check_sizes, param_values, write_outputs

#: Statuses of a torus branch that ended where it was asked to.
_DONE = ("range",)


@click.command("torus")
@click.argument("model")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", required=True, help="The continuation parameter, e.g. the forcing amplitude A.")
@click.option("--start", type=float, required=True, help="Start of the periodic branch in --param.")
@click.option("--stop", type=float, required=True, help="End of the parameter range (the tori stay in it too).")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT, help="Parameter values NAME=VALUE (several allowed).")
@click.option("--from-hopf", "hopf", type=int, default=1, show_default=True,
              help="Autonomous models: the Hopf point of the equilibria the periodic branch starts from.")
@click.option("--ns", "index", type=int, default=1, show_default=True,
              help="Which Neimark-Sacker point of the periodic branch starts the tori (1 = first).")
@click.option("--harmonics", "-H", type=int, default=10, show_default=True,
              help="Harmonics H of the periodic branch.")
@click.option("--torus-harmonics", nargs=2, type=int, default=(8, 8), show_default=True,
              help="Harmonics H1 H2 of the two angles of the torus.")
@click.option("--truncation", type=click.Choice(["box", "diamond"]), default="box", show_default=True,
              help="Harmonics (k1, k2) kept: |k1| <= H1 and |k2| <= H2 (box), or |k1|/H1 + |k2|/H2 <= 1.")
@click.option("--eps", type=float, default=1e-2, show_default=True,
              help="Size of the first torus relative to the periodic orbit's.")
@click.option("--max-steps", type=int, default=100, show_default=True, help="Points of the torus branch at most.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine of the tori (asymptotic numerical method or pseudo-arclength Newton) "
                   "[default: anm wherever the model's Taylor kernels allow it; newton otherwise].")
@click.option("--from-simulation", "from_sim", is_flag=True,
              help="Start from a simulation at --start instead of an NS point: past --transient periods, the "
                   "frequencies from the spectrum, a least-squares fit of the torus's harmonics, then Newton.")
@click.option("--x0", default=None, help="--from-simulation: the initial state, comma-separated (default all 0).")
@click.option("--transient", type=float, default=300.0, show_default=True,
              help="--from-simulation: periods (of the forcing; 2 pi time units if autonomous) simulated first.")
@click.option("--record", type=float, default=200.0, show_default=True,
              help="--from-simulation: periods recorded after the transient for the fit.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HDF5 file of the torus branch.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PNG of the tori's Poincare sections (theta1 = 0) and their rotation numbers.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def torus_cmd(model, assignments, param, start, stop, set_, hopf, index, harmonics, torus_harmonics, truncation,
              eps, from_sim, x0, transient, record, max_steps, method, out, plot, quiet):
    """Quasi-periodic solutions (tori) born at a Neimark-Sacker point of a periodic branch.

    Two-frequency AFT harmonic balance on the torus, continued by the ANM (or pseudo-arclength
    Newton, --engine newton); the columns
    are both frequencies, the rotation number omega2/omega1, the torus size and the amplitudes,
    each with its estimated error (truncation + aliasing), and the torus's stability: its
    leading transverse Lyapunov exponent.

    With --from-simulation the torus is fitted to a simulation at --start (the attractor
    reached from --x0) and continued towards --stop; a periodic or diverging simulation is an
    error.

    \b
    Examples (the forced cubic-friction belt oscillator of tests/models/torus_specs.py):
      frictionkit torus tests/models/torus_specs.py --param A --start 0.3 --stop 1.3 \\
          --set w=2.5 --out torus.h5 --plot torus.png
      frictionkit torus tests/models/torus_specs.py --param A --start 1.0 --stop 1.2 \\
          --set w=2.5 --from-simulation
    """
    # the runtime, imported here: `torus --help` imports this module (tests/cli/test_lazy_cli.py)
    import numpy as np

    from ..results._atomic import check_output
    from ._continuation import _load
    try:
        check_output(out, (".h5", ".hdf5"))
        check_output(plot, (".png", ".svg", ".pdf"), option="--plot")
        check_sizes(harmonics)
        if eps <= 0 or max_steps < 1:
            raise InputError(f"--eps {eps:g} must be > 0 and --max-steps {max_steps} >= 1")
        m = _load(model, param, param_values(set_, assignments))
        if from_sim:
            tb = _from_simulation(m, param, start, stop, x0, transient, record, torus_harmonics, truncation,
                                  max_steps, quiet, method)
        else:
            tb = _from_ns(m, param, start, stop, hopf, index, harmonics, torus_harmonics, truncation, eps, max_steps,
                          quiet, method)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"tori in {param}: {len(tb)} points, status {tb.status}: {tb.message}")
    click.echo("each value +- its estimated error (truncation + aliasing of the torus: one Newton step of the "
               "balance in a 1.5x larger box at fixed parameter); orbit_err: relative error of the torus's states; "
               f"{param} is exact")
    click.echo(f"stability: exponent = the leading transverse Lyapunov exponent of the torus (per unit time; "
               f"{'1 zero exponent along the torus' if tb.discretization.forced else '2 zero exponents along the torus'}"
               " left out); stable = yes if exponent < -2 err, no if > 2 err, ? in between")
    units = tb.provenance.get("units") or {}
    if units.get("t") or units.get(param):
        tu = units.get("t", "")
        click.echo(f"units: {param} [{units.get(param) or '-'}]" + (f", omega1 and omega2 [rad/{tu}], exponent [1/{tu}]"
                                                                     if tu else ""))
    click.echo(f"{param:>12} {'omega1':>14} {'+-':>8} {'omega2':>14} {'+-':>8} {'rotation':>14} {'+-':>8} "
               f"{'size':>11} {'+-':>8} {'orbit_err':>9} {'exponent':>11} {'+-':>8} {'stable':>6}")
    x = tb.columns()
    for i in sorted(set(range(0, len(tb), max(1, len(tb) // 10))) | {len(tb) - 1}):
        st = x["stable"][i]
        click.echo(f"{tb.lam[i]:12.8g} {tb.omega1[i]:14.10g} {x['omega1_error'][i]:8.1e} {tb.omega2[i]:14.10g} "
                   f"{x['omega2_error'][i]:8.1e} {tb.rotation_number[i]:14.10g} {x['rotation_error'][i]:8.1e} "
                   f"{tb.torus_size[i]:11.6g} {x['size_error'][i]:8.1e} {x['orbit_error'][i]:9.1e} "
                   f"{x['transverse_exponent'][i]:11.4e} {x['exponent_error'][i]:8.1e} "
                   f"{'?' if not np.isfinite(st) else 'yes' if st else 'no':>6}")
    c = tb.counters
    click.echo(f"work ({tb.provenance['method']}): {c['unknowns']} unknowns, {c['steps']} steps, "
               f"{c['factorizations']} LU factorizations")
    write_outputs(tb, out, plot if len(tb) else None, "torus branch")
    if tb.status not in _DONE:
        raise click.ClickException(f"the torus branch stopped early: {tb.message}")


def _from_ns(m, param, start, stop, hopf, index, harmonics, torus_harmonics, truncation, eps, max_steps, quiet,
             method=None):
    """The periodic branch with multipliers, then the tori from its ``index``-th NS point."""
    from ..drivers._branches import periodic_branch
    from ..drivers._compose import _pick, run_continuation
    from ..drivers._forced import forced_start
    from ..drivers._torus import torus
    lo, hi = sorted((start, stop))
    opts = dict(multiplier_stride=1)
    if m.forced:
        disc, Z, _ = forced_start(m, start, harmonics)
        per = periodic_branch(disc, Z, lo, hi, 1.0 if stop > start else -1.0, options=opts)
    else:
        _, per = run_continuation(m, start, stop, start="hopf", hopf_index=hopf, harmonics=harmonics,
                                  options=opts, progress=not quiet, echo=click.echo)
    point = _pick(per.special_points("ns"), index, "--ns", "Neimark-Sacker point", "the periodic branch")
    if not quiet:
        click.echo(f"Neimark-Sacker point at {param} = {point.param:.10g}: continuing the tori")
    return torus(per, point, lo, hi, harmonics=tuple(torus_harmonics), truncation=truncation, eps=eps,
                 max_steps=max_steps, method=method)


def _from_simulation(m, param, start, stop, x0, transient, record, torus_harmonics, truncation, max_steps, quiet,
                     method=None):
    """The torus fitted to a simulation at ``start``, then continued towards ``stop``."""
    import numpy as np

    from ..drivers._torus import torus_from_simulation
    if x0 is None:
        state = np.zeros(m.n)
    else:
        try:
            state = np.array([float(v) for v in str(x0).split(",")])
        except ValueError:
            raise InputError(f"--x0 {x0!r}: give {m.n} comma-separated numbers, the states "
                             f"{', '.join(m.states)}") from None
    if transient <= 0 or record < 10:
        raise InputError(f"--transient {transient:g} must be > 0 and --record {record:g} >= 10 periods")
    lo, hi = sorted((start, stop))
    if not quiet:
        click.echo(f"simulating at {param} = {start:.10g} ({transient:g} + {record:g} periods)")
    return torus_from_simulation(m, start, state, lo, hi, harmonics=tuple(torus_harmonics), truncation=truncation,
                                 transient=transient, record=record, direction=1.0 if stop >= start else -1.0,
                                 max_steps=max_steps, method=method)
