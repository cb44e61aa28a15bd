"""``frictionkit study convergence``: the seed-003 accuracy study (listed in ``runtime.cli.COMMANDS``)."""
from __future__ import annotations

import math
from pathlib import Path
import sys
import time

import click

from ..errors import FrictionkitError, InputError
from ._params import ASSIGNMENT, param_values, write_outputs

# tqdm and the runtime are imported by the functions that use them, not here: `study
# convergence --help` imports this module to show the options (as in _continuation.py)


def _parse_scales(items, model):
    """``NAME=VALUE`` with VALUE a number, a parameter name or ``1/<parameter>``."""
    out = {}
    for item in items:
        for tok in str(item).replace(",", " ").split():
            if "=" not in tok:
                raise InputError(f"--scale {tok!r}: expected VARIABLE=FACTOR, e.g. --scale v=1/omega1")
            name, text = tok.split("=", 1)
            inverse = text.startswith("1/")
            body = text[2:] if inverse else text
            try:
                value = float(body)
            except ValueError:
                value = model.value(body)        # InputError names the unknown parameter
            out[name.strip()] = 1.0 / value if inverse else value
    return out


def run_study(model_name, param, at, params, *, harmonics="1..60", intervals="10..160:5", degree=3,
              reference_harmonics=500, n_t=100_000, energy_variable=None, energy="mean", scales=(),
              progress=True, echo=print):
    """The work behind ``frictionkit study convergence``; returns the :class:`ConvergenceStudy`."""
    from tqdm import tqdm
    from ..drivers._study import convergence_study, parse_int_range
    from ..model._load import load_model
    H_list = parse_int_range(harmonics, "--harmonics") if harmonics else []
    N_list = parse_int_range(intervals, "--intervals") if intervals else []
    if any(h < 1 for h in H_list):
        raise InputError(f"--harmonics {harmonics}: the number of harmonics H must be >= 1")
    if reference_harmonics < 1:
        raise InputError(f"--reference-harmonics {reference_harmonics}: must be >= 1")
    params = {k: v for k, v in params.items() if k != param}
    model = load_model(model_name, continuation=param, params=params)
    model.value(param)
    variable_scales = _parse_scales(scales, model)
    bar = None
    if progress:
        bar = tqdm(total=len(H_list) + len(N_list), desc="test solutions", leave=False, file=sys.stderr, disable=None)

    def report(method, size, message):
        if bar is not None:
            bar.set_postfix_str(f"{method} {size}", refresh=False)
            bar.update(1)
        if message:
            echo(f"  {method} {size}: not converged ({message})")

    echo(f"reference: HBM H = {reference_harmonics} at {param} = {at:g} ...")
    try:
        study = convergence_study(model, at, harmonics=H_list, intervals=N_list, degree=degree,
                                  reference_harmonics=reference_harmonics, n_t=n_t,
                                  energy_variable=energy_variable, energy=energy,
                                  variable_scales=variable_scales, progress=report)
    finally:
        if bar is not None:
            bar.close()
    return study


def _summary(study, echo):
    echo(f"reference: omega = {study.reference_omega:.12g} rad/s, {study.param} = {study.reference_lam:g}, "
         f"energy ({study.energy} of {study.energy_variable}^2) = {study.reference_energy:.12g}")
    for res, fit, label in ((study.hbm, "fit_hbm", "HBM semilog slope (seed 003 W1: -0.052, c = 1.27)"),
                            (study.collocation, "fit_collocation",
                             f"collocation log-log slope (theory {-(study.degree + 1)}, seed 003 W1: -4.3)")):
        if res is None:
            continue
        ok = int(res.converged.sum())
        echo(f"{res.method}: {ok}/{len(res.size)} test solutions converged; mean error (eq. 16) from "
             f"{res.mean_error[res.converged].max():.3e} to {res.mean_error[res.converged].min():.3e}")
        try:
            f = getattr(study, fit)()
            extra = f", c = {f['c']:.4f}" if "c" in f else ""
            echo(f"  {label}: {f['slope']:.4f}{extra} over {f['n_dis_min']:g} <= N_dis <= {f['n_dis_max']:g} "
                 f"({f['points']} points)")
        except InputError as exc:
            echo(f"  {label}: no fit ({exc})")
        for target in (1e-6, 1e-10):
            nd = study.n_dis_for(res.method, target)
            echo(f"  N_dis for mean error < {target:g}: {nd if nd is not None else 'not reached'}")


@click.group()
def study():
    """Accuracy studies of the discretizations (seed 003)."""


@study.command("convergence")
@click.argument("model")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", required=True, help="Continuation parameter (e.g. Vb).")
@click.option("--at", "at", type=float, required=True, help="Parameter value of the reference orbit.")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
              help="Parameter values NAME=VALUE (several allowed).")
@click.option("--harmonics", "-H", default="1..60", show_default=True,
              help="HBM test harmonics: A..B, A..B:STEP or a comma list; '' to skip the HBM.")
@click.option("--intervals", default="10..160:5", show_default=True,
              help="Collocation N_int values (same syntax); '' to skip collocation.")
@click.option("--degree", type=int, default=3, show_default=True, help="Collocation degree p.")
@click.option("--reference-harmonics", type=int, default=500, show_default=True, help="H of the reference.")
@click.option("--n-t", "n_t", type=int, default=100_000, show_default=True,
              help="Evaluation points per period (seed 003 §3.2).")
@click.option("--energy-variable", default=None, help="Velocity whose kinetic energy is matched "
              "(default the second state).")
@click.option("--energy", type=click.Choice(["mean", "integral"]), default="mean", show_default=True,
              help="Kinetic energy averaged over (mean) or integrated over (integral) a period.")
@click.option("--scale", "scales", multiple=True,
              help="VARIABLE=FACTOR applied before the mean error (eq. 16), e.g. v=1/omega1 for seed 003's z.")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None, help="HDF5 results.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Image of the errors.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def convergence_cmd(model, assignments, param, at, set_, harmonics, intervals, degree, reference_harmonics, n_t,
                    energy_variable, energy, scales, out, plot, quiet):
    """HBM and collocation errors against an HBM reference orbit of MODEL at --param = --at.

    Seed 003 protocol: reference HBM (H = 500), test solutions matched by equal kinetic
    energy over a period, relative errors without bias per variable (eq. 15) and mean
    relative error (eq. 16) against N_dis = 2H+1 (HBM) and p N_int + 1 (collocation).

    \b
    Example (seed 003 case W1):
      frictionkit study convergence belt --param Vb --at 0.5 --set n=10 FN=5 \\
          --harmonics 1..100 --intervals 10..170:4 --scale v=1/omega1 --out w1.h5 --plot w1.png
    """
    from ..results._atomic import FIGURE_FORMATS, HDF5_FORMATS, check_output
    t0 = time.perf_counter()
    try:
        if not math.isfinite(at):
            raise InputError(f"--at {at}: the parameter value of the reference orbit must be a finite number")
        check_output(out, HDF5_FORMATS, "--out")
        check_output(plot, FIGURE_FORMATS, "--plot")
        params = param_values(set_, assignments)
        result = run_study(model, param, at, params, harmonics=harmonics, intervals=intervals, degree=degree,
                           reference_harmonics=reference_harmonics, n_t=n_t, energy_variable=energy_variable,
                           energy=energy, scales=scales, progress=not quiet, echo=click.echo)
    except (InputError, NotImplementedError) as exc:
        raise click.ClickException(str(exc)) from None
    except FrictionkitError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    _summary(result, click.echo)
    write_outputs(result, out, plot)
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
