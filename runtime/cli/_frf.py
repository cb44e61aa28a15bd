"""``frictionkit frf``: the frequency response of a forced model (listed in ``runtime.cli.COMMANDS``)."""
from __future__ import annotations

from pathlib import Path
import math
import time

import click

from ..drivers._choices import PERIODIC_METHODS, TOLERANCE
from ..errors import FrictionkitError, InputError
from ._continuation import EXIT_CODES, EXIT_INCOMPLETE, check_run_options
from ._params import ASSIGNMENT, param_values, save_or_rescue


def _forcing_parameter(model):
    """The name given to ``m.forcing`` in the declaration of ``model`` (zoo name or file)."""
    # the codegen API (sympy), imported where it is needed, as model/_load.py does, so that the
    # command line starts without it
    from frictionkit.codegen import resolve_spec
    from frictionkit.modelspec.errors import ModelSpecError
    try:
        spec = resolve_spec(model)
    except ModelSpecError as exc:
        raise InputError(str(exc)) from None
    if spec.forcing_frequency is None:
        raise InputError(f"model {model!r} is autonomous (no m.forcing(w) in its declaration): it has no "
                         "frequency response; continue its self-excited orbits with `frictionkit continue "
                         f"{model} --param P --start A --stop B --from-hopf 1`")
    return spec.forcing_frequency.name


@click.command("frf", epilog=EXIT_CODES)
@click.argument("model")
@click.option("--param", "-p", default=None,
              help="Continuation parameter [default: the forcing frequency, a frequency response; any "
                   "other parameter gives a response curve at the fixed forcing frequency of --set].")
@click.option("--start", type=float, required=True, help="Start value of the parameter (far from resonance).")
@click.option("--stop", type=float, required=True, help="End of the range; below --start continues downwards.")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT, help="Parameter values NAME=VALUE (several allowed).")
@click.option("--harmonics", "-H", type=int, default=None,
              help="Number of harmonics [default: chosen for --tolerance].")
@click.option("--tolerance", type=float, default=TOLERANCE, show_default=True,
              help="Relative accuracy of the orbit's coefficients the default harmonic count is chosen for.")
@click.option("--method", "discretization", type=click.Choice([m for m in PERIODIC_METHODS if m in ("aft", "hbm")]),
              default=None, help="Harmonic balance: aft (the states, the recast applied pointwise; default) or "
                                 "hbm (the quadratic recast; needs --harmonics).")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine [default: anm wherever the model's Taylor kernels allow it].")
@click.option("--from-simulation", "initial", flag_value="simulation", default="linear",
              help="First point from a time simulation sampled at a forcing phase [default: the linear "
                   "response, and a simulation only if Newton fails from it].")
@click.option("--peaks", default=None, metavar="STATE",
              help="State whose first-harmonic amplitude maxima are located as resonance peaks "
                   "[default: the first state; 'none' for none].")
@click.option("--max-steps", type=int, default=5000, show_default=True, help="Step budget (>= 1).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HDF5 file of the branch (group /periodic, as `continue` writes it).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file of the response curve (.png, .pdf, .svg, ...).")
@click.option("--no-clobber", is_flag=True, help="Refuse to replace an existing --out or --plot file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def frf_cmd(model, param, start, stop, set_, harmonics, tolerance, discretization, method, initial, peaks,
            max_steps, out, plot, no_clobber, quiet):
    """Frequency response of the forced MODEL from --start to --stop of its forcing frequency.

    Starts from the linear response at --start (no equilibrium is needed), follows the curve
    through its folds with stability, locates the resonance peaks, and saves the amplitude and
    phase of every harmonic of every state (groups amplitude/, phase/, rms/ of the branch).

    \b
    Examples:
      frictionkit frf shaw --start 0.6 --stop 0.9
      frictionkit frf examples/friction_damper.py --start 0.4 --stop 2 --set muN=0.05 --out frf.h5
      frictionkit frf shaw --param beta --start 1 --stop 6 --set w=0.8     # amplitude-force curve
    """
    # the runtime at the run, not for --help (as in _continuation.py)
    from ..drivers._compose import _Progress, _summary
    from ..drivers._forced import frequency_response
    from ..model._load import load_model
    from ..results._branch import save_run
    from ..results._plots import plot_branches
    t0 = time.perf_counter()
    try:
        check_run_options(out, plot, no_clobber, max_steps, harmonics)
        if not (math.isfinite(tolerance) and 0 < tolerance < 1):
            raise InputError(f"--tolerance {tolerance}: a relative accuracy between 0 and 1, e.g. 1e-8")
        forcing = _forcing_parameter(model)
        param = param or forcing
        params = param_values(set_)
        params.pop(param, None)
        m = load_model(model, continuation=param, params=params)
        m.value(param)
        peaks = None if (peaks or "").lower() == "none" else (peaks or "auto")
        if peaks not in (None, "auto") and m.structure is None and peaks not in m.states:
            # refused before the branch is computed (a structure's condensed harmonic balance
            # has its contacts' inputs among its variables: the driver checks those)
            raise InputError(f"peaks: {peaks!r} is not a state of model {m.name!r}; its states are "
                             f"{', '.join(m.states)}")
        bar = _Progress(start, stop, "frequency response") if not quiet else None
        try:
            br = frequency_response(m, start, stop, harmonics=harmonics, tolerance=tolerance, method=method,
                                    options=dict(max_steps=max_steps), initial=initial,
                                    peaks=peaks,
                                    discretization=discretization, progress=bar)
        finally:
            if bar:
                bar.close()
    except (InputError, NotImplementedError) as exc:
        raise click.ClickException(str(exc)) from None
    except FrictionkitError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    click.echo(_summary(br))
    search = br.provenance["forced_response"]["search"]
    how = ("given" if harmonics else "not checked: the branch stopped early" if not search
           else f"chosen for tolerance {tolerance:g}" if search[-1]["change"] <= tolerance
           else f"the largest count of the search; the coefficients change by {search[-1]['change']:.1e} beyond it")
    click.echo(f"  harmonics {br.harmonics} ({how}), first point from the "
               f"{br.provenance['forced_response']['start']} response")
    for s in br.special_points("peak"):
        click.echo(f"  peak of {s.data['state']}: {param} = {s.param:.10g}, amplitude {s.data['amplitude']:.10g}, "
                   f"phase {s.data['phase']:.6g} rad")
    if out is not None:
        save_or_rescue(lambda path: save_run(path, periodic=br), out, "frequency response")
        click.echo(f"wrote {out}")
    if plot is not None:
        try:
            plot_branches([br], path=plot)
        except FrictionkitError as exc:
            raise click.ClickException(f"{exc}" + (f" (the frequency response is in {out})" if out else "")) \
                from None
        click.echo(f"wrote {plot}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not br.success:
        click.echo(f"Error: the continuation stopped early ({br.status}): {br.message}", err=True)
        raise SystemExit(EXIT_INCOMPLETE)
