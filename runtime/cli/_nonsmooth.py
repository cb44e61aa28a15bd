"""Subcommands of `frictionkit` for the non-smooth references (listed in runtime.cli.COMMANDS).

* ``frictionkit coulomb --vb 0.5 --fn 5``: the exact Coulomb stick-slip cycle (seed 000 §3)
* ``frictionkit compare coulomb --param Vb --start 0.05 --stop 1.2 --branch n10.h5 ...``:
  Coulomb amplitude / pulsation with regularized branches overlaid (seed 000 Figs. 5-7, 10, 11)
* ``frictionkit twophase --h 1e-4 [--ou]``: seed 001 Figs. 1 and 2
* ``frictionkit calibrate --runs 10``: seed 001 Table 1 procedure on a synthetic record
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import click

from ..errors import InputError
from ._params import ASSIGNMENT, param_values

# NumPy, SciPy and the non-smooth references are imported by the commands that use them, not
# here: the `--help` of these commands imports this module to show the options (as in
# _continuation.py)

_BELT_FIELDS = ("zeta", "omega1", "M1", "FN", "Vb", "mus", "mud")


def _belt_params(settings, **explicit):
    """``BeltParameters`` from the converted ``--set`` groups and the explicit options."""
    from ..nonsmooth import BeltParameters
    values = param_values(settings)
    unknown = [name for name in values if name not in _BELT_FIELDS]
    if unknown:
        raise click.BadParameter(f"unknown belt parameter {unknown[0]!r}; known: {', '.join(_BELT_FIELDS)}",
                                 param_hint="--set")
    values.update({k: v for k, v in explicit.items() if v is not None})
    try:
        return BeltParameters(**values)
    except InputError as exc:
        raise click.UsageError(str(exc)) from None


@click.command("coulomb")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--set", "settings", multiple=True, type=ASSIGNMENT,
              help="Belt parameters: Vb [m/s] (default 0.2), FN [N] (default 5), zeta, omega1, M1, mus, mud "
                   "(seed 000 Appendix B defaults).")
@click.option("--vb", type=float, default=None, hidden=True, deprecated="Use --set Vb=VALUE instead.",
              help="Old spelling of --set Vb=VALUE.")
@click.option("--fn", type=float, default=None, hidden=True, deprecated="Use --set FN=VALUE instead.",
              help="Old spelling of --set FN=VALUE.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def coulomb_cmd(assignments, settings, vb, fn, as_json):
    """Exact damped Coulomb stick-slip cycle of the belt oscillator (seed 000 §3).

    Prints period, pulsation, peak-to-peak amplitude, V_max(F_N) and F_min(V_b).

    \b
    Example:
      frictionkit coulomb --set Vb=0.5 FN=5
    """
    from ..nonsmooth import coulomb_cycle, max_belt_speed, min_normal_force
    p = _belt_params(settings + assignments, Vb=vb, FN=fn)
    cyc = coulomb_cycle(p)
    vmax = max_belt_speed(p)
    fmin = min_normal_force(p)
    out = {"Vb": p.Vb, "FN": p.FN, "exists": cyc.exists, "margin_ineq16": cyc.margin,
           "period": cyc.period, "omega": cyc.omega, "t1": cyc.t1, "ptp_y": cyc.ptp["y"], "ptp_v": cyc.ptp["v"],
           "V_max": vmax[0], "V_max_bracket": list(vmax), "F_min": fmin[0], "F_min_bracket": list(fmin)}
    if as_json:
        # NaN (no cycle) is not JSON: null instead
        click.echo(json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()},
                              indent=2))
        return
    click.echo(f"belt oscillator, Coulomb law (mus={p.mus}, mud={p.mud}), Vb={p.Vb} m/s, FN={p.FN} N")
    if cyc.exists:
        click.echo(f"  stick-slip cycle exists (inequality 16 margin {cyc.margin:.6g} m/s)")
        click.echo(f"  period t2          = {cyc.period:.12g} s")
        click.echo(f"  pulsation 2pi/t2   = {cyc.omega:.12g} rad/s")
        click.echo(f"  stick onset t1     = {cyc.t1:.12g} s")
        click.echo(f"  amplitude ptp(y)   = {cyc.ptp['y']:.12g} m,  ptp(y') = {cyc.ptp['v']:.12g} m/s")
    else:
        click.echo(f"  no stick-slip: inequality 16 holds (margin {cyc.margin:.6g} m/s)")
    click.echo(f"  V_max(FN={p.FN})   = {vmax[0]:.12g} m/s  (exists at {vmax[0]:.12g}, not at {vmax[1]:.12g})")
    click.echo(f"  F_min(Vb={p.Vb})   = {fmin[0]:.12g} N    (exists at {fmin[0]:.12g}, not at {fmin[1]:.12g})")


@click.group("compare")
def compare_group():
    """Compare regularized branches with the non-smooth references."""


@compare_group.command("coulomb")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", type=click.Choice(["Vb", "FN"]), default="Vb", show_default=True,
              help="Swept parameter.")
@click.option("--start", type=float, default=None, help="First value (default 0.02 m/s or 0.5 N).")
@click.option("--stop", type=float, default=None, help="Last value (default 1.2 m/s or 40 N).")
@click.option("--points", type=int, default=300, show_default=True, help="Coulomb branch points.")
@click.option("--branch", "branches", multiple=True, type=click.Path(dir_okay=False),
              help="Regularized branch file (HDF5 from `frictionkit continue --out`); repeatable.")
@click.option("--label", "labels", multiple=True, help="Legend label per --branch (default: file name).")
@click.option("--set", "settings", multiple=True, type=ASSIGNMENT,
              help="Fixed belt parameters (default FN=5 for --param Vb, Vb=0.2 for --param FN).")
@click.option("--out-prefix", default="coulomb", show_default=True, help="Prefix of the PNG files.")
@click.option("--out", "-o", "save_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the Coulomb branch to this HDF5 file (branch layout).")
@click.option("--save", "save_renamed", type=click.Path(dir_okay=False), default=None, hidden=True,
              deprecated="Use --out instead.", help="Old spelling of --out.")
@click.option("--phase-amplitude", type=float, default=5.5e-4, show_default=True,
              help="Peak-to-peak amplitude [m] of the Coulomb phase portrait (seed 000 Fig. 6).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def compare_coulomb_cmd(assignments, param, start, stop, points, branches, labels, settings, out_prefix, save_path,
                        save_renamed, phase_amplitude, quiet):
    """Coulomb amplitude and pulsation versus V_b or F_N, regularized branches overlaid.

    Writes <prefix>_amplitude_<param>.png, <prefix>_pulsation_<param>.png (seed 000 Figs. 5, 7,
    10, 11) and <prefix>_phase.png (Coulomb cycles at the given amplitude and near the
    existence limit, Figs. 3, 6).
    """
    import numpy as np
    from .._roots import bracketed_root
    from ..nonsmooth import (coulomb_branch, coulomb_cycle, load_coulomb_branch, max_belt_speed,
                             min_normal_force)
    from ..nonsmooth._plots import plot_coulomb_comparison, plot_coulomb_phase
    p = _belt_params(settings + assignments)
    save_path = save_path if save_renamed is None else save_renamed
    if start is None:
        start = 0.02 if param == "Vb" else 0.5
    if stop is None:
        stop = 1.2 if param == "Vb" else 40.0
    if not 0 < start < stop:
        raise click.BadParameter(f"need 0 < start < stop (got {start}, {stop})", param_hint="--start/--stop")
    if points < 2:
        raise click.BadParameter("need at least 2 points", param_hint="--points")
    if labels and len(labels) != len(branches):
        raise click.BadParameter(f"{len(labels)} labels for {len(branches)} branches", param_hint="--label")
    regs = []
    for k, path in enumerate(branches):
        try:
            data = load_coulomb_branch(path)
        except InputError as exc:
            raise click.UsageError(str(exc)) from None
        cp = data["attrs"].get("continuation_parameter")
        if cp is not None and cp != param:
            raise click.UsageError(f"branch file {path!r} was continued in {cp!r}, not {param!r}; "
                                   f"use --param {cp}")
        regs.append((labels[k] if labels else Path(path).stem, data))
    br = coulomb_branch(param, np.geomspace(start, stop, points), p, progress=not quiet)
    files = plot_coulomb_comparison(br, regs, out_prefix, omega1=p.omega1)
    if save_path:
        files.append(br.save(save_path))
    # phase portraits: at the requested amplitude (Fig. 6) and near the existence limit (Fig. 3)
    cycles, names = [], []
    limit = max_belt_speed(p)[0] if param == "Vb" else min_normal_force(p)[0]
    try:
        def gap(val):
            return coulomb_cycle(p.with_(**{param: val})).ptp["y"] - phase_amplitude
        lo, hi = (min(start, limit) * 1e-3, limit) if param == "Vb" else (limit, stop)
        if gap(lo) * gap(hi) < 0:
            val = bracketed_root(gap, lo, hi, rtol=1e-12)
            cycles.append(coulomb_cycle(p.with_(**{param: val})))
            names.append(f"ptp(y)={phase_amplitude:.3g} m at {param}={val:.4g}")
    except (ValueError, InputError):
        pass
    near = limit * (0.999 if param == "Vb" else 1.001)
    cycles.append(coulomb_cycle(p.with_(**{param: near})))
    names.append(f"{param}={near:.4g} (near {'V_max' if param == 'Vb' else 'F_min'})")
    # regularized orbits of the same amplitude, reconstructed from the branch coefficients
    extra = []
    for (label, data), path in zip(regs, branches):
        orbit = _orbit_at_amplitude(path, phase_amplitude)
        if orbit is not None:
            extra.append((f"{label}, {param}={orbit[0]:.4g}", orbit[1], orbit[2]))
    files.append(plot_coulomb_phase(cycles, names, f"{out_prefix}_phase.png", extra=extra))
    for f in files:
        click.echo(f"written {f}")


def _orbit_at_amplitude(path, amplitude):
    """(param, y, v) of the branch point where ptp(y) first reaches ``amplitude``, or None.

    Needs a runtime-core branch file with Fourier coefficients (``load_branch``).
    """
    import numpy as np
    from ..results._branch import load_branch
    try:
        br = load_branch(path)
    except Exception:  # not a full branch file (e.g. only the column layout): skip the overlay
        return None
    if br.harmonics < 1 or "y" not in br.states or "v" not in br.states:
        return None
    ptp = np.nan_to_num(br.ptp["y"], nan=-np.inf)
    above = np.nonzero(ptp >= amplitude)[0]
    if above.size == 0:
        return None
    # the first crossing along the branch (the Helmholtz branch born at the first Hopf point,
    # seed 000 Fig. 6), not a point of the same amplitude on the returning unstable branch
    k = int(above[0])
    if k > 0 and abs(ptp[k - 1] - amplitude) < abs(ptp[k] - amplitude):
        k -= 1
    _, x = br.time_series(k, n_t=1024)
    return float(br.param[k]), x[br.states.index("y")], x[br.states.index("v")]


@click.command("twophase")
@click.option("--h", "step", type=float, default=1e-4, show_default=True, help="Time step of the explicit scheme.")
@click.option("--t-end", type=float, default=28.0, show_default=True, help="Horizon.")
@click.option("--x0", type=float, default=5.0, show_default=True, help="Initial displacement (x'(0) = 0).")
@click.option("--ou", is_flag=True, help="Ornstein-Uhlenbeck-perturbed temperature (seed 001 §3.1.4, Fig. 2).")
@click.option("--rho", type=float, default=0.25, show_default=True, help="Noise amplitude rho (with --ou).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the noise (with --ou).")
@click.option("--out", "-o", "out", default=None, help="PNG file (default seed001_fig1.png / seed001_fig2.png).")
def twophase_cmd(step, t_end, x0, ou, rho, seed, out):
    """Seed 001 two-phase model, parameter set (P): explicit scheme of §3.1 (Figs. 1, 2).

    Prints the phase-transition times and, without --ou, the event-driven reference times.
    """
    import numpy as np
    from ..nonsmooth import (SHAW_P, OrnsteinUhlenbeck, shaw_forcing, thermal_forcing,
                             two_phase_event_driven, two_phase_explicit)
    from ..nonsmooth._plots import plot_two_phase
    P = SHAW_P
    if ou:
        noise = OrnsteinUhlenbeck(t_end=t_end + 1.0, dt=min(step, 1e-3), seed=seed)
        omega, beta = P["omega"], P["beta"]

        def temperature(t):
            return math.cos(omega * t) + rho * float(noise(t))
        b = thermal_forcing(K=1.0, beta=beta, temperature=temperature)
        title = f"seed 001 §3.1.4: OU-perturbed forcing, rho={rho}, seed={seed}, h={step}"
    else:
        b = shaw_forcing(P["beta"], P["omega"], P["alpha"])
        title = f"seed 001 §3.1.3: Shaw's forced oscillator, set (P), h={step}"
    try:
        res = two_phase_explicit(b, P["m"], P["f_d"], P["f_s"], x0, t_end, step)
    except InputError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"explicit scheme, h={step}: static entries tau_j = {np.round(res.tau_static, 6).tolist()}")
    click.echo(f"                      dynamic entries tau_(j+1/2) = {np.round(res.tau_dynamic, 6).tolist()}")
    click.echo(f"                      sub-phase starts = {np.round(res.tau_sub, 6).tolist()}")
    if not ou:
        ref = two_phase_event_driven(b, P["m"], P["f_d"], P["f_s"], x0, t_end)
        click.echo(f"event-driven reference: tau_j = {np.round(ref.tau_static, 9).tolist()}")
        click.echo(f"                        tau_(j+1/2) = {np.round(ref.tau_dynamic, 9).tolist()}")
        click.echo(f"                        sub-phase starts = {np.round(ref.tau_sub, 9).tolist()}")
    path = out or ("seed001_fig2.png" if ou else "seed001_fig1.png")
    click.echo(f"written {plot_two_phase(res, b, path, title)}")


@click.command("calibrate")
@click.option("--runs", type=int, default=10, show_default=True, help="Independent optimisation runs.")
@click.option("--days", type=float, default=20.0, show_default=True, help="Length of the synthetic record.")
@click.option("--noise", type=float, default=0.05, show_default=True, help="Noise std of z [mm].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic record.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def calibrate_cmd(runs, days, noise, seed, as_json, quiet):
    """Seed 001 Table 1 procedure on a synthetic record with known parameters.

    The bridge record of seed 001 §4 is not public: a synthetic (temperature, displacement)
    record is generated with known (z0, K, f_d, f_s, beta), noise is added, and the
    quasi-static model is calibrated ``--runs`` times from different random populations.
    """
    from tqdm import tqdm
    from ..nonsmooth import (CALIBRATION_PARAMETERS, calibrate_quasi_static, calibration_table,
                             synthetic_record)
    from ..nonsmooth._calibration import SYNTHETIC_BOUNDS, SYNTHETIC_K_BP, SYNTHETIC_TRUTH
    if runs < 1:
        raise click.BadParameter("need at least one run", param_hint="--runs")
    _, T, z, _ = synthetic_record(days=days, noise=noise, seed=seed)
    fits = [calibrate_quasi_static(T, z, SYNTHETIC_BOUNDS, K_BP=SYNTHETIC_K_BP, seed=1000 + r, popsize=15, maxiter=300)
            for r in tqdm(range(runs), desc="calibration runs", disable=True if quiet else None)]
    table = calibration_table(fits)
    table["truth"] = [SYNTHETIC_TRUTH[k] for k in CALIBRATION_PARAMETERS]
    table["rms"] = [f.rms for f in fits]
    if as_json:
        click.echo(json.dumps(table, indent=2))
        return
    head = "run  " + "".join(f"{k:>12s}" for k in CALIBRATION_PARAMETERS) + f"{'rms':>12s}"
    click.echo(head)
    for i, (row, f) in enumerate(zip(table["runs"], fits), 1):
        click.echo(f"{i:<5d}" + "".join(f"{v:12.5g}" for v in row) + f"{f.rms:12.4g}")
    for name in ("truth", "mean", "std", "cv"):
        click.echo(f"{name:<5s}" + "".join(f"{v:12.5g}" for v in table[name]))
