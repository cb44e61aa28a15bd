"""``frictionkit nlmode``: a nonlinear mode of a damped structure by the extended periodic motion
concept (listed in ``runtime.cli.COMMANDS``)."""
from __future__ import annotations

from pathlib import Path
import math
import time

import click

from ..drivers._choices import TOLERANCE
from ..errors import FrictionkitError, InputError
from ._continuation import EXIT_CODES, EXIT_INCOMPLETE, check_run_options
from ._params import ASSIGNMENT, param_values, save_or_rescue


def _continuation_parameter(model):
    """The parameter the model is generated for: its forcing frequency (forced models: the
    EPMC's frequency takes its place), else its first parameter (it stays fixed)."""
    # the codegen API (sympy), imported where it is needed, as model/_load.py and `frf` do, so
    # that the command line starts without it
    from frictionkit.codegen import resolve_spec
    from frictionkit.modelspec.errors import ModelSpecError
    try:
        spec = resolve_spec(model)
    except ModelSpecError as exc:
        raise InputError(str(exc)) from None
    if spec.forcing_frequency is not None:
        return spec.forcing_frequency.name
    if not spec.parameters:
        raise InputError(f"model {model!r} has no parameter")
    return next(iter(spec.parameters))


@click.command("nlmode", epilog=EXIT_CODES)
@click.argument("model")
@click.option("--mode", type=int, default=1, show_default=True,
              help="Linear mode (1 the lowest) the nonlinear mode starts from.")
@click.option("--start", type=float, required=True, help="Modal amplitude a of the first point (> 0, small).")
@click.option("--stop", type=float, required=True, help="Modal amplitude a the branch ends at (> 0).")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
              help="Parameter values NAME=VALUE (several allowed); a forced model needs its forcing "
                   "amplitude set to 0.")
@click.option("--harmonics", "-H", type=int, default=None,
              help="Number of harmonics [default: chosen for --tolerance].")
@click.option("--tolerance", type=float, default=TOLERANCE, show_default=True,
              help="Relative accuracy of the orbit's coefficients the default harmonic count is chosen for.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine: asymptotic numerical method or pseudo-arclength Newton "
                   "[default: anm; newton for non-analytic laws and condensed structures].")
@click.option("--method", "discretization", type=click.Choice(["aft", "aft-condensed"]), default=None,
              help="Harmonic balance: the AFT of the states (the default), or condensed onto the contacts "
                   "of a structure given as modal data or matrices (Newton only).")
@click.option("--max-steps", type=int, default=2000, show_default=True, help="Step budget (>= 1).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HDF5 file of the branch (group /periodic, with /periodic/nlmode: amplitude, omega, xi, "
                   "damping_ratio).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file of omega and D against the modal amplitude (.png, .pdf, .svg, ...).")
@click.option("--no-clobber", is_flag=True, help="Refuse to replace an existing --out or --plot file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def nlmode_cmd(model, mode, start, stop, set_, harmonics, tolerance, method, discretization, max_steps, out, plot,
               no_clobber, quiet):
    """Nonlinear mode of the damped structure MODEL (extended periodic motion concept).

    Continues the periodic motion of the free structure with an extra negative modal damping
    term -xi M x' (Krack 2015) in its modal amplitude from --start to --stop, and prints the
    frequency omega and the equivalent modal damping ratio D = xi / (2 omega) along it.  The
    normalization takes unit masses (give the mass matrix from Python: nonlinear_mode(..., mass=M)).

    \b
    Examples:
      frictionkit nlmode examples/friction_damper.py --set F0=0 --set muN=0.05 --start 0.01 --stop 3 -H 20 -q
      frictionkit nlmode examples/friction_damper.py --set F0=0 --mode 2 --start 0.01 --stop 1 -H 20 --out nm.h5 -q
    """
    # the runtime, imported here: `nlmode --help` imports this module (tests/cli/test_lazy_cli.py)
    from ..drivers._compose import _Progress, _summary
    from ..drivers._nlmode import nonlinear_mode, save_nonlinear_mode
    from ..model._load import load_model
    from ..results._plots import plot_nonlinear_mode
    t0 = time.perf_counter()
    try:
        check_run_options(out, plot, no_clobber, max_steps, harmonics)
        if not (math.isfinite(tolerance) and 0 < tolerance < 1):
            raise InputError(f"--tolerance {tolerance}: a relative accuracy between 0 and 1, e.g. 1e-8")
        param = _continuation_parameter(model)
        params = param_values(set_)
        m = load_model(model, continuation=param, params=params)
        bar = _Progress(start, stop, "nonlinear mode") if not quiet else None
        try:
            br = nonlinear_mode(m, mode, (start, stop), harmonics=harmonics, tolerance=tolerance, method=method,
                                discretization=discretization, options=dict(max_steps=max_steps), progress=bar)
        finally:
            if bar:
                bar.close()
    except (InputError, NotImplementedError) as exc:
        raise click.ClickException(str(exc)) from None
    except FrictionkitError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    click.echo(_summary(br))
    click.echo(f"  harmonics {br.harmonics}, phase fixed on {br.provenance['nonlinear_mode']['phase_state']}, "
               f"engine {br.provenance.get('method', '?')}, {br.provenance['nonlinear_mode']['discretization']}")
    nm = br.nlmode
    picks = sorted(set(int(i) for i in [0, len(br) // 4, len(br) // 2, 3 * len(br) // 4, len(br) - 1]))
    click.echo(f"  {'a':>12} {'omega':>14} {'D':>14}")
    for i in picks:
        click.echo(f"  {nm['amplitude'][i]:12.6g} {nm['omega'][i]:14.10g} {nm['damping_ratio'][i]:14.8g}")
    if out is not None:
        save_or_rescue(lambda path: save_nonlinear_mode(path, br), out, "nonlinear mode")
        click.echo(f"wrote {out}")
    if plot is not None:
        plot_nonlinear_mode(br, path=plot)
        click.echo(f"wrote {plot}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not br.success:
        click.echo(f"Error: the continuation stopped early ({br.status}): {br.message}", err=True)
        raise SystemExit(EXIT_INCOMPLETE)
