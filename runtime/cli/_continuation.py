"""``frictionkit continue`` and ``frictionkit demo`` (listed in ``runtime.cli.COMMANDS``)."""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
import sys
import time
import warnings

import click

from ..drivers._choices import PERIODIC_METHODS
from ..errors import ConvergenceError, FrictionkitError, InputError
from ._params import ASSIGNMENT, check_sizes, param_values, runtime_loaded_frozen, save_or_rescue, write_outputs

# The runtime (NumPy, SciPy, h5py, the drivers and the results) is imported by the functions
# that use it, not here: `frictionkit continue --help` (demo, hopf-curve, fold-curve) imports
# this module to show the options, and loading the runtime would cost it 0.3 s of CPU
# (benchmarks/bench_cli.py; tests/cli/test_lazy_cli.py checks what --help imports).
_COMPOSE = ("_pick", "_Progress", "_summary", "_to_collocation", "run_continuation")


def __getattr__(name):
    """The drivers' names this module re-exported when it imported them at the top (PEP 562)."""
    if name in _COMPOSE:
        from ..drivers import _compose
        return getattr(_compose, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load(model_name, param, params):
    from ..model._load import load_model
    return load_model(model_name, continuation=param, params=params)


EXIT_CODES = """\b
Exit codes: 0 success; 1 bad input or an error (message on stderr); 2 command-line usage;
3 the branch stopped early (failed, step budget exhausted; the partial branch is saved);
130 interrupted by Ctrl-C or SIGTERM (the branch so far is saved)."""
EXIT_INCOMPLETE, EXIT_INTERRUPTED = 3, 130
# bytes per float64 times the dense copies of the Jacobian a run holds (LU, bordered buffer, ...)
_JACOBIAN_COPIES = 4


def _check_size(model, harmonics, intervals, degree, discretization):
    """Refuse a size whose dense Jacobian needs more memory than the machine has (before allocating).

    The collocations are sized by their mesh (the harmonic-balance start is far smaller): the
    recast one carries every recast variable (``model.N``), that of the states ``model.n``."""
    from ..drivers._methods import COLLOCATION_KINDS, periodic_kind
    kind = periodic_kind(model, discretization)
    variables = model.n if kind in ("aft", "collocation-states") else model.N
    collocation = kind in COLLOCATION_KINDS
    unknowns = variables * (intervals * (degree + 1) if collocation else 2 * harmonics + 1) + 2
    need = _JACOBIAN_COPIES * 8 * unknowns ** 2
    avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > avail:
        what = f"--intervals {intervals} --degree {degree}" if collocation else f"--harmonics {harmonics}"
        raise InputError(f"{what}: {unknowns} unknowns need about {need / 2**30:.3g} GiB for the Jacobian, "
                         f"more than the {avail / 2**30:.3g} GiB of memory of this machine; choose a smaller size")


def _parse_restart(text):
    """``FILE.h5[@POINT]`` -> (path, :class:`PointRef`); the default point is the main
    branch's last.  POINT is an index, a special point (``fold``, ``hopf2``, AUTO's ``PD1``)
    or ``GROUP:POINT`` (``results/_labels.py``); a POINT that is none of these is an error
    naming it, never read as part of the file name."""
    from ..results._labels import PointRef, parse_point
    text = str(text)
    path, sep, point = text.rpartition("@")
    if not sep or Path(text).is_file():
        return Path(text), PointRef(text, index=-1)
    if not path:
        raise InputError(f"--restart {text!r}: give the file before the '@', e.g. --restart run.h5@fold")
    ref = parse_point(point, f"--restart {path}@{point}: point")
    if not Path(path).is_file():
        raise InputError(f"--restart {text!r}: no file {path!r}")
    return Path(path), ref


def _save_run_groups(out, branches):
    """One run file: /equilibria and /periodic groups."""
    from ..results._branch import save_run
    save_run(out, **{"equilibria" if b.kind == "equilibrium" else "periodic": b for b in branches})


def _append_restart(path, branches):
    """``--append``: the restarted branch as a further group of the restart file."""
    from ..results._branch import append_branch
    click.echo(f"appended the restarted branch to {path} as group {append_branch(path, branches[0])!r}")


def _finish_branch(main_branch, branches, out, plot, t0, interrupted=False, save=_save_run_groups):
    """Save, plot and set the exit status of ``continue`` (saves cannot be interrupted halfway).

    ``save(out, branches)`` writes the file (default: a new run file; ``--append``: a further
    group of the restarted file).  A signal during the save is held back until the file is
    complete, then ends the command with exit code 130, naming the save."""
    from ..engine._checkpoint import deferred_interrupts
    from ..results._plots import plot_branches
    if main_branch.status == "max_steps":
        main_branch.success = False
        main_branch.message += "; raise --max-steps or continue with --restart"
    branches = branches or [main_branch]
    try:
        with deferred_interrupts():       # a signal during the save is raised once the file is complete
            if out is not None:
                # a failed save (full disk, folder gone) writes the branch to a rescue file and says where
                save_or_rescue(lambda path: (save if path == out else _save_run_groups)(path, branches), out,
                               "branch")
                click.echo(f"wrote {out}")
    except KeyboardInterrupt as exc:
        interrupted = f"interrupted ({exc}) during the save; the file {out} is complete"
    if plot is not None and not interrupted:
        with deferred_interrupts():
            try:
                plot_branches(branches, path=plot)
            except FrictionkitError as exc:
                raise click.ClickException(f"{exc}" + (f" (the branch is in {out})" if out else "")) from None
            click.echo(f"wrote {plot}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if isinstance(interrupted, str):
        click.echo(f"Error: {interrupted}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if main_branch.status == "interrupted" or interrupted:
        click.echo(f"Error: interrupted: {main_branch.message}" + (f"; the branch so far is in {out}" if out else ""),
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    if not main_branch.success:
        click.echo(f"Error: the continuation stopped early ({main_branch.status}): {main_branch.message}; "
                   "the partial branch was kept", err=True)
        sys.exit(EXIT_INCOMPLETE)


@click.command("continue", epilog=EXIT_CODES)
@click.argument("model", required=False)
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", default=None,
              help="Continuation parameter, e.g. Vb (with --restart: continue the saved point in it).")
@click.option("--start", type=float, default=None, help="Start value of the parameter.")
@click.option("--stop", type=float, default=None,
              help="End of the parameter range; below --start continues downwards.")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
              help="Parameter values NAME=VALUE (several allowed).")
@click.option("--equilibria", "mode", flag_value="equilibria", default=True,
              help="Continue the equilibria (default).")
@click.option("--from-hopf", "hopf", type=int, default=None,
              help="Periodic branch from Hopf point K (1-based) of the equilibria.")
@click.option("--from-simulation", "mode", flag_value="simulation",
              help="Periodic branch from a time simulation at --start.")
@click.option("--method", "discretization", type=click.Choice(PERIODIC_METHODS), default=None,
              help="Periodic-orbit method: aft, the harmonic balance of the states with the recast "
                   "applied pointwise at the time samples (the default); hbm, the harmonic balance of "
                   "the quadratic recast in the frequency domain (MANLAB's); collocation, Gauss "
                   "collocation of the states with the recast applied pointwise at the Gauss points; "
                   "collocation-recast, orthogonal collocation of the quadratic recast "
                   "[default: aft; hand-written modules without Taylor kernels: hbm, and "
                   "collocation means collocation-recast].")
@click.option("--discretization", "discretization_renamed", type=click.Choice(PERIODIC_METHODS),
              default=None, hidden=True, deprecated="Use --method instead.", help="Old spelling of --method.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine: asymptotic numerical method or pseudo-arclength Newton "
                   "[default: anm; newton for non-analytic laws].")
@click.option("--harmonics", "-H", type=int, default=None,
              help="Number of harmonics (HBM, AFT; also the HBM start of collocation) [default: AFT: chosen "
                   "for an estimated orbit error below 1e-6, from 30 up; others: 30; "
                   "with --restart: the file's].")
@click.option("--intervals", type=int, default=None, help="Collocation sub-intervals N_int [default: 40].")
@click.option("--degree", type=int, default=None, help="Collocation polynomial degree p [default: 3].")
@click.option("--max-steps", type=int, default=5000, show_default=True, help="Step budget (>= 1).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HDF5 file of the run (groups /equilibria and /periodic); an existing file "
                   "is replaced only once the new one is complete.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file of the bifurcation diagram (.png, .pdf, .svg, ...).")
@click.option("--no-clobber", is_flag=True, help="Refuse to replace an existing --out or --plot file.")
@click.option("--checkpoint-steps", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also save the branch so far to --out every this many steps (0: by time only, so "
                   "that a run shorter than --checkpoint-seconds writes no checkpoint).")
@click.option("--checkpoint-seconds", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Save the branch so far to --out every this many seconds (0: never).")
@click.option("--restart", "restart", default=None, metavar="FILE.h5[@POINT]",
              help="Continue the branch saved in FILE from its POINT, like AUTO's IRS: an index "
                   "(default: the last; negative counts from the end), a special point (fold, hopf2, "
                   "pd1; AUTO's LP1, HB2, PD1) or GROUP:POINT (equilibria:hopf1, restart_1:-1; "
                   "`frictionkit info FILE` lists them); with --method (and -H or "
                   "--intervals/--degree) in another discretization, the saved orbit converted "
                   "through its time samples and corrected; with another --param or with --set, "
                   "the point continued in that parameter with those values (AUTO's new ICP).")
@click.option("--model", "restart_model", default=None, metavar="MODEL_FILE",
              help="With --restart: the model file the branch was computed with (needed unless it is a "
                   "zoo model; a branch file is data: a model file it names is never run), refused "
                   "unless its hash is the branch's.")
@click.option("--append", is_flag=True,
              help="With --restart: write the continued branch into FILE itself as a further group "
                   "(restart_1, restart_2, ...; read it with load_branch(FILE, 'restart_1')), keeping "
                   "the groups already there; the file is replaced only once the new one is complete.")
@click.option("--direction", type=click.Choice(["up", "down"]), default=None,
              help="With --restart: continue with the parameter rising or falling [default: along the branch].")
@click.option("--validity", type=click.Choice(["stop", "warn"]), default="stop", show_default=True,
              help="A point violating a validity condition of the recast (a sqrt auxiliary on the wrong "
                   "root, a denominator through zero) stops the branch before it (exit code 3), or only "
                   "warns.")
@click.option("--multiplier-stride", type=click.IntRange(min=1), default=1, show_default=True,
              help="Periodic branches: Floquet multipliers at every K-th step end, bisected where the "
                   "stability changes (1: every step end; a larger K saves CPU but misses two crossings "
                   "that cancel within K steps).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@runtime_loaded_frozen(".engine._checkpoint", ".drivers._compose")
def continue_cmd(model, assignments, param, start, stop, set_, mode, hopf, method, discretization,
                 discretization_renamed, harmonics, intervals, degree, max_steps, out, plot, no_clobber,
                 checkpoint_steps, checkpoint_seconds, restart, restart_model, append, direction, validity,
                 multiplier_stride, quiet):
    """Continue equilibria or periodic orbits of MODEL in --param from --start to --stop.

    --stop may lie below --start (the continuation then runs downwards).  With --out, the
    branch so far is saved every --checkpoint-seconds seconds (and every --checkpoint-steps
    steps if given), and on Ctrl-C or SIGTERM; every file is replaced only after the new one
    is complete.

    \b
    Examples:
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --from-hopf 1 --harmonics 40 --out branch.h5 --plot branch.png
      frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --from-hopf 1 --method collocation --intervals 60 --degree 3 --engine newton
      frictionkit continue drill --param eta --start 0.5 --stop 5 --set kappa=1 \\
          --from-hopf 1 -H 20                                  # sampled law: AFT + Newton
      frictionkit continue --restart branch.h5@40 --stop 12 -H 60 --out more.h5
      frictionkit continue --restart branch.h5@40 --method collocation --intervals 100 --append
      frictionkit continue --restart mine.h5 --model my_model.py --stop 3 --out more.h5
    """
    from ..engine._checkpoint import interrupt_signals
    t0 = time.perf_counter()
    # its own name, so that click warns about the old spelling only when it is used
    discretization = discretization if discretization_renamed is None else discretization_renamed
    try:
        check_run_options(out, plot, no_clobber, max_steps, harmonics)
        check_sizes(None, intervals, degree)       # a restart too (it ignored --intervals 0)
        if hopf is not None and hopf < 1:
            raise InputError(f"--from-hopf {hopf}: Hopf points are numbered from 1")
        if append and (restart is None or out is not None):
            raise InputError("--append writes into the --restart FILE: " + ("drop --out" if restart else
                             "give --restart FILE.h5[@INDEX]"))
        if restart_model is not None and restart is None:
            raise InputError(f"--model {restart_model}: goes with --restart FILE.h5 (a new run takes the model "
                             "as its first argument)")
        checkpoint = _checkpointer(out, checkpoint_steps, checkpoint_seconds)
        with interrupt_signals():
            if restart is not None:
                _refuse_with_restart(click.get_current_context(), model, start, hopf, mode)
                br = _restart(restart, stop, direction, method, harmonics,
                              dict(max_steps=max_steps, on_invalid=validity, multiplier_stride=multiplier_stride),
                              quiet, checkpoint,
                              dict(discretization=discretization, intervals=intervals, degree=degree,
                                   model=restart_model),
                              param=param, values=param_values(set_, assignments))
                branches = [br]
            else:
                eq, per = _fresh(model, assignments, param, start, stop, set_, mode, hopf, method, discretization,
                                 harmonics, intervals, degree,
                                 dict(max_steps=max_steps, on_invalid=validity, multiplier_stride=multiplier_stride),
                                 quiet, checkpoint)
                br = per or eq
                branches = [b for b in (eq, per) if b is not None]
    except (InputError, NotImplementedError) as exc:
        raise click.ClickException(str(exc)) from None
    except FrictionkitError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    except KeyboardInterrupt:
        click.echo("Error: interrupted before the first point of a branch: nothing to save", err=True)
        sys.exit(EXIT_INTERRUPTED)
    save = _save_run_groups
    if append:                           # into the restart file itself, as a further group
        out, save = _parse_restart(restart)[0], _append_restart
    try:
        _finish_branch(br, branches, out, plot, t0, save=save)
    except KeyboardInterrupt:            # during the plot after the save: the branch is on disk
        _finish_branch(br, [], None, None, t0, interrupted=True)


def check_run_options(out, plot, no_clobber, max_steps, harmonics):
    """The options ``continue`` and ``frf`` share: the output files (writable, the right
    format, not clobbered with ``--no-clobber``), the step budget, the harmonic count."""
    from ..results._atomic import FIGURE_FORMATS, HDF5_FORMATS, check_output
    check_output(out, HDF5_FORMATS, "--out", no_clobber)
    check_output(plot, FIGURE_FORMATS, "--plot", no_clobber)
    if max_steps < 1:
        raise InputError(f"--max-steps {max_steps}: the step budget must be >= 1")
    check_sizes(harmonics)


def _checkpointer(out, every_steps, every_seconds):
    """The ``checkpoint`` hook of :func:`run_continuation`: saves to ``out`` (None: no checkpoints).

    By default the trigger is time only (``--checkpoint-seconds 60``, ``--checkpoint-steps 0``):
    a checkpoint bounds what a SIGKILL loses in time, and a run shorter than the interval pays
    nothing for it (a step count forced one save, about 0.15 s of CPU, into the 2-second
    seed-000 diagram, ``benchmarks/bench_cli.py``).  Ctrl-C and SIGTERM do not depend on it:
    they save the branch so far whenever they come (``tests/engine/test_restart_and_interrupts.py``)."""
    from ..engine._checkpoint import Checkpoint
    from ..engine._run import _provenance as run_provenance
    if out is None or not (every_steps or every_seconds):
        return None

    def wrap(label, bar):
        failed = []

        def save(br):
            # a checkpoint that cannot be written (full disk) does not stop the run: the branch
            # stays in memory and its final save rescues it if --out still fails then
            try:
                br.save(out)
            except FrictionkitError as exc:
                if not failed:
                    click.echo(f"Warning: checkpoint not saved ({exc}); the run goes on, the final save "
                               "is tried again", err=True)
                failed.append(exc)
        return Checkpoint(save, run_provenance, every_steps, every_seconds, bar, label)
    return wrap


def _fresh(model, assignments, param, start, stop, set_, mode, hopf, method, discretization, harmonics,
           intervals, degree, options, quiet, checkpoint):
    """A new run of ``continue`` (not ``--restart``): (equilibria, periodic branch or None)."""
    from ..drivers._compose import run_continuation
    missing = [o for o, v in (("MODEL", model), ("--param", param), ("--start", start), ("--stop", stop))
               if v is None]
    if missing:
        raise InputError(f"missing {', '.join(missing)} (or give --restart FILE.h5); see --help")
    # no --harmonics: the AFT branch chooses its count for the error tolerance (run_continuation)
    intervals, degree = 40 if intervals is None else intervals, 3 if degree is None else degree
    params = param_values(set_, assignments)
    params.pop(param, None)
    m = _load(model, param, params)
    m.value(param)
    kind = "hopf" if hopf is not None else mode
    if kind != "equilibria":
        _check_size(m, 30 if harmonics is None else harmonics, intervals, degree, discretization)
    try:
        return run_continuation(m, start, stop, start=kind, hopf_index=hopf or 1, harmonics=harmonics,
                                method=method, options=options, progress=not quiet,
                                echo=click.echo, discretization=discretization, intervals=intervals,
                                degree=degree, checkpoint=checkpoint)
    except ConvergenceError as exc:
        raise explain_no_equilibrium(m, param, start, params, exc) from None


def explain_no_equilibrium(m, param, start, params, exc):
    """The error to show for ``exc``, a failure of a run of ``m`` from ``--start`` with the
    ``--set`` values ``params``: ``exc`` itself unless it is that no equilibrium is found at
    the start (checked by looking for one again); then an :class:`InputError` whose first
    sentence names the culprit, the solver's words (scipy's) only after it in parentheses.

    The culprit is the option whose value, put back to the model's default with every other
    value kept, gives an equilibrium (or satisfies the validity conditions of the recast that
    fail at the start): ``--start 1e300`` is blamed for itself, not a ``--set n=10`` whose name
    appears in the failing condition."""
    import numpy as np
    from ..analysis._equilibria import find_equilibrium
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            find_equilibrium(m, start)
            return exc                        # an equilibrium exists: the failure is elsewhere
        except FrictionkitError:
            pass
        defaults = dataclasses.replace(m, params={})        # the model at its default values
        options = [(f"--start {start:g}", param, start)] + [(f"--set {k}={v:g}", k, v) for k, v in params.items()]
        failing = _failing_condition(m, start)
        for option, name, value in options:
            default = defaults.value(name)
            if value == default:
                continue
            try:
                trial = m if name == param else m.with_params(**{name: default})
                lam = default if name == param else start
                if failing is not None:
                    if _failing_condition(trial, lam) is None:
                        return InputError(f"{option}: the validity condition of the recast ({failing}) fails with "
                                          f"{name} = {value:g} at the states 0, and no equilibrium was found; with "
                                          f"{name}'s default {default:g} it holds: choose a value in the model's "
                                          f"domain ({_solver_words(exc)})")
                    continue
                find_equilibrium(trial, lam)
            except FrictionkitError:
                continue
            return InputError(f"{option}: no equilibrium of model {m.name!r} is found with {name} = {value:g} (one is "
                              f"found with {name}'s default {default:g}, the other values kept); choose a value nearer "
                              f"the model's range ({_solver_words(exc)})")
    given = f"--start {start:g}" + (" with --set " + " ".join(f"{k}={v:g}" for k, v in params.items())
                                    if params else "")
    why = f" (the validity condition of the recast {failing} fails there at the states 0)" if failing else ""
    return InputError(f"no equilibrium of model {m.name!r} is found at {given}{why}: change --start or the --set "
                      f"values (`frictionkit models {m.name}` lists the defaults), or start a periodic branch "
                      f"--from-simulation ({_solver_words(exc)})")


def _solver_words(exc) -> str:
    """The solver's message of ``exc`` on one line, after ours."""
    return "solver: " + " ".join(str(exc).split())


def _failing_condition(m, lam):
    """The text of the first validity condition of the recast that fails at ``lam`` for the
    states 0 (a sqrt of a negative number, a denominator through zero), None if all hold."""
    import numpy as np
    u = np.asarray(m.aux(np.zeros((m.n, 1)), 0.0, lam), dtype=float)
    for var, cond, text in m.validity:
        row = u[m.variables.index(var)]
        if not (np.all(np.isfinite(row)) and np.all(row > 0 if cond == "positive" else row != 0)):
            return text
    return None


def _restart(text, stop, direction, method, harmonics, options, quiet, checkpoint, sizes, param=None, values=None):
    """``continue --restart FILE[@POINT]``: the continued branch (``sizes``: the new
    discretization and its intervals/degree, None to keep the saved ones).  A new
    continuation parameter (``param``) or parameter values (``values``, from ``--set``)
    start from the point and continue in that parameter (AUTO's restart with a new ICP)."""
    from ..drivers._compose import _Progress, _summary
    from ..drivers._reparam import restart_in_parameter
    from ..results._branch import load_branch
    from ..results._labels import check_restart_point, point_index, special_point
    path, ref = _parse_restart(text)
    saved = load_branch(path, ref.group)
    if sizes.get("model") is None:
        sizes = dict(sizes, model=_cached_zoo_name(saved.provenance))
    where = f"--restart {text}:"
    index = check_restart_point(saved, point_index(saved, ref, where), f"{where} point")
    special = special_point(saved, ref, where)
    if stop is not None and not math.isfinite(stop):
        raise InputError(f"--stop {stop}: must be finite")
    old = saved.provenance.get("continuation_parameter")
    sign = None if direction is None else (1.0 if direction == "up" else -1.0)
    reparam = (param is not None and param != old) or bool(values)
    name = param or old
    lam = float(values[name]) if values and name in values else (
        float(saved.provenance.get("parameters", {}).get(name, math.nan)) if name != old else float(saved.param[index]))
    if stop is not None and sign is not None and (stop - lam) * sign < 0:
        raise InputError(f"--stop {stop:g} lies {'below' if sign > 0 else 'above'} the restart point "
                         f"{lam:g} but --direction is {direction}")
    if stop is not None and sign is None and stop != lam:
        sign = 1.0 if stop > lam else -1.0
    label = "restarted branch"
    bar = _Progress(lam, stop if stop is not None else lam + 1, label) if not quiet and math.isfinite(lam) else None
    progress = checkpoint(label, bar) if checkpoint else bar
    try:
        if reparam:
            br = restart_in_parameter(saved, index, param=name, values=values, stop=stop, direction=sign,
                                      method=method, harmonics=harmonics, options=options, progress=progress,
                                      special=special, **sizes)
        else:
            br = saved.restart(index, stop=stop, direction=sign, method=method, harmonics=harmonics,
                               options=options, **sizes, progress=progress)
    finally:
        if bar:
            bar.close()
    what = f"{saved.provenance.get('group', '/')}:{index} ({old} = {float(saved.param[index]):.10g})"
    if special is not None:
        what += (f", the {special.kind} point ({old} = {special.param:.10g})" if reparam
                 and saved.kind == "equilibrium" else f", the saved point nearest {ref.kind}{ref.rank} "
                 f"({old} = {special.param:.10g})")
    if reparam:
        changed = ", ".join(f"{k} = {v:g}" for k, v in (values or {}).items())
        what += f", continued in {name}" + (f" with {changed}" if changed else "")
    click.echo(f"restarted {path} at point {what}")
    click.echo(_summary(br))
    return br


def _cached_zoo_name(prov):
    """The zoo name a saved branch was computed with when its compiled module is cached and
    current (``model/_fast_load.py``), else None.

    Given to the restart as its model, it is loaded through the fast path, and the restart
    need not import the zoo's sympy definitions to check the name (a current manifest exists
    only for a zoo name).  The restart still checks the model's hash against the file's."""
    from ..model._fast_load import is_cached_zoo
    named = prov.get("model_source") or prov.get("model")
    lam_name = prov.get("continuation_parameter")
    if isinstance(named, str) and isinstance(lam_name, str) and is_cached_zoo(named, lam_name):
        return named
    return None


def _refuse_with_restart(ctx, model, start, hopf, mode):
    """Options a restart cannot honour: an error naming them (never silently ignored)."""
    if model is not None:
        raise InputError(f"--restart takes the file's zoo model, or the model file given with --model "
                         f"MODEL_FILE; drop the argument {model!r}")
    if start is not None:
        raise InputError("--start: a restart starts at the saved point; drop --start (to start another "
                         "parameter from there: --param NAME --stop VALUE, with --set for other values)")
    if hopf is not None or ctx.get_parameter_source("mode") is not click.core.ParameterSource.DEFAULT:
        what = "--from-hopf" if hopf is not None else f"--{mode.replace('simulation', 'from-simulation')}"
        raise InputError(f"{what}: a restart continues the saved branch's kind of solution; drop {what} "
                         "(a periodic branch from a Hopf point of a saved equilibrium branch: continue its model "
                         "with --from-hopf)")


def _curve_options(command):
    """The arguments and options ``hopf-curve`` and ``fold-curve`` share."""
    shared = [
        click.argument("model"),
        click.argument("assignments", nargs=-1, type=ASSIGNMENT),
        click.option("--param", "-p", default=None,
                     help="First parameter (the branches'), e.g. Vb (not with a saved point FILE.h5@LABEL)."),
        click.option("--start", type=float, default=None, help="Start of the equilibrium branch in --param."),
        click.option("--stop", type=float, default=None, help="End of the parameter range."),
        click.option("--set", "set_", multiple=True, type=ASSIGNMENT,
                     help="Parameter values NAME=VALUE (several allowed)."),
        click.option("--second", required=True, help="Second parameter, e.g. FN."),
        click.option("--min", "mu_min", type=float, required=True, help="Lower bound of the second parameter."),
        click.option("--max", "mu_max", type=float, required=True, help="Upper bound of the second parameter."),
        click.option("--direction", type=click.Choice(["up", "down"]), default="up", show_default=True,
                     help="First step: the second parameter rising or falling."),
        click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="HDF5 file of the curve."),
        click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="PNG of the curve."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
    ]
    for decorate in reversed(shared):
        command = decorate(command)
    return command


@click.command("hopf-curve")
@_curve_options
@click.option("--from-hopf", "hopf", type=int, default=1, show_default=True,
              help="Which Hopf point of the equilibrium branch to start from (1 = first).")
@click.option("--hopf", "hopf_renamed", type=int, default=None, hidden=True, deprecated="Use --from-hopf instead.",
              help="Old spelling of --from-hopf.")
def hopf_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot,
                   quiet, hopf, hopf_renamed):
    """Continue a Hopf point of the equilibria in a second parameter (the stability boundary
    of steady sliding in the plane of two parameters).

    \b
    Example:
      frictionkit hopf-curve belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --second FN --min 0.01 --max 5 --direction down --plot hopf.png
    """
    from ..analysis._curves import hopf_curve
    from ..drivers._branches import equilibrium_branch
    from ..drivers._compose import _pick, _Progress
    try:
        _check_curve_outputs(out, plot)
        _check_curve_range(mu_min, mu_max, direction)
        saved = saved_point(model, "hopf", "Hopf point", (param, set_, assignments))
        if saved is not None:
            branch, h, param = saved
            curve = hopf_curve(branch.discretization.model, h, second, mu_min, mu_max,
                               direction=1.0 if direction == "up" else -1.0)
            _report_curve(curve, param, second, out, plot)
            return
        branch_args(model, param, start, stop)
        params = param_values(set_, assignments)
        m = _load(model, param, params)
        params.pop(param, None)
        hopf = hopf if hopf_renamed is None else hopf_renamed
        bar = None if quiet else _Progress(start, stop, "equilibria")
        try:
            eq = equilibrium_branch(m, start, stop, progress=bar)
        except ConvergenceError as exc:
            raise explain_no_equilibrium(m, param, start, params, exc) from None
        finally:
            if bar:
                bar.close()
        h = _pick(eq.special_points("hopf"), hopf, "--from-hopf", "Hopf point",
                  f"the equilibrium branch on [{min(start, stop):g}, {max(start, stop):g}] of {param}")
        curve = hopf_curve(m, h, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    _report_curve(curve, param, second, out, plot)


def saved_point(model, kind, what, given=()):
    """MODEL given as a saved point ``FILE.h5@LABEL`` (e.g. ``run.h5@fold``, ``run.h5@equilibria:hopf2``):
    ``(branch, point, continuation parameter)`` with the branch's discretization rebuilt
    (``attach_discretization``: zoo models); None when MODEL is a model.  The point must be a
    special point of ``kind``; ``given`` (--param, --set values): refused with a saved point,
    whose branch fixes the parameters."""
    from ..drivers._branches import attach_discretization
    from ..results._branch import load_branch
    from ..results._labels import parse_point, special_point
    path, sep, label = str(model).rpartition("@")
    if not sep or not path.lower().endswith((".h5", ".hdf5")):
        return None
    where = f"MODEL {model}:"
    ref = parse_point(label, f"{where} point")
    if ref.kind != kind:
        raise InputError(f"{where} give a {what} of the file ({path}@{kind}, {path}@{kind}2, ...), not {label!r}")
    if not Path(path).is_file():
        raise InputError(f"{where} no file {path!r}")
    if any(given):
        raise InputError(f"MODEL {model} is a saved point: its branch fixes the parameters (no --param, --set)")
    branch = load_branch(Path(path), ref.group)
    point = special_point(branch, ref, where)
    return attach_discretization(branch), point, branch.provenance.get("continuation_parameter", "lam")


def branch_args(model, param, start, stop):
    """``--param``, ``--start`` and ``--stop``: needed with a model, refused with a saved point."""
    given = [o for o, v in (("--param", param), ("--start", start), ("--stop", stop)) if v is not None]
    if len(given) < 3:
        missing = ", ".join(o for o in ("--param", "--start", "--stop") if o not in given)
        raise InputError(f"{missing}: needed to compute the branch of {model} (or give a saved point as MODEL, "
                         "e.g. run.h5@fold)")


def _check_curve_range(mu_min, mu_max, direction):
    """``--min`` and ``--max`` of ``hopf-curve`` / ``fold-curve``: finite, in that order."""
    if not (math.isfinite(mu_min) and math.isfinite(mu_max)):
        raise InputError(f"--min {mu_min:g} / --max {mu_max:g}: the bounds of the second parameter must be finite")
    if mu_min >= mu_max:
        raise InputError(f"--min {mu_min:g} is {'above' if mu_min > mu_max else 'equal to'} --max {mu_max:g}: "
                         "--min is the lower bound of the second parameter and --max the upper one (to start "
                         "downwards, keep them in order and give --direction down)")


def _check_curve_outputs(out, plot):
    """``--out`` and ``--plot`` of ``hopf-curve`` / ``fold-curve``, before any computation."""
    from ..results._atomic import FIGURE_FORMATS, HDF5_FORMATS, check_output
    check_output(out, HDF5_FORMATS, "--out")
    check_output(plot, FIGURE_FORMATS, "--plot")


def _report_curve(curve, param, second, out, plot):
    """Summary, files and exit status of ``hopf-curve`` / ``fold-curve``."""
    what = "Hopf curve" if curve.kind == "hopf" else "fold curve"
    click.echo(f"{what} in ({param}, {second}): {len(curve)} points, status {curve.status}: {curve.message}")
    for f in curve.folds_mu:
        click.echo(f"  turning point in {second}: {f:.10g}")
    if len(curve):
        click.echo(f"  ends at {param} = {curve.lam[-1]:.10g}, {second} = {curve.mu[-1]:.10g}")
    write_outputs(curve, out, plot, what)
    if curve.status not in ("range", "bogdanov-takens"):
        raise click.ClickException(f"the {what} stopped early: {curve.message}")


@click.command("fold-curve")
@_curve_options
@click.option("--from-hopf", "hopf", type=int, default=1, show_default=True,
              help="Hopf point of the equilibria the periodic branch starts from (1 = first).")
@click.option("--harmonics", "-H", type=int, default=30, show_default=True, help="Number of harmonics H.")
@click.option("--method", "discretization", type=click.Choice(PERIODIC_METHODS), default="aft", show_default=True,
              help="Periodic-orbit method (as in `frictionkit continue`; not collocation-recast, which "
                   "cannot be rebuilt for another value of --second).")
@click.option("--intervals", type=int, default=40, show_default=True, help="Collocation sub-intervals N_int.")
@click.option("--degree", type=int, default=3, show_default=True, help="Collocation polynomial degree p.")
@click.option("--fold", "fold", type=int, default=1, show_default=True,
              help="Which fold of the periodic branch to continue (1 = first).")
def fold_curve_cmd(model, assignments, param, start, stop, set_, second, mu_min, mu_max, direction, out, plot,
                   quiet, hopf, harmonics, discretization, intervals, degree, fold):
    """Continue a fold of the periodic branch from a Hopf point in a second parameter
    (e.g. the upper end of a bistable band against a friction-law parameter).

    \b
    Examples:
      frictionkit fold-curve weakstrong --param vd --start 3 --stop 0.3 --set delta=0.1 \\
          -H 20 --second muv --min 0 --max 0.05 --plot folds.png
      frictionkit fold-curve belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --method collocation --intervals 100 --degree 4 --second FN --min 5 --max 5.5
      frictionkit fold-curve belt.h5@fold --second FN --min 5 --max 5.5
    """
    from ..analysis._curves import fold_curve
    from ..drivers._compose import _pick, run_continuation
    from ..drivers._methods import periodic_kind
    try:
        _check_curve_outputs(out, plot)
        _check_curve_range(mu_min, mu_max, direction)
        saved = saved_point(model, "fold", "fold", (param, set_, assignments))
        if saved is not None:
            branch, f, param = saved
            curve = fold_curve(branch, f, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0)
            _report_curve(curve, param, second, out, plot)
            return
        branch_args(model, param, start, stop)
        check_sizes(harmonics, intervals, degree)
        params = param_values(set_, assignments)
        m = _load(model, param, params)
        params.pop(param, None)
        if periodic_kind(m, discretization) == "collocation-recast":
            # refused before the branch is computed (fold_curve would refuse it after)
            raise InputError(f"fold_curve: a collocation-recast branch cannot be rebuilt with another {second} (no "
                             "on_model); continue the fold on an AFT, HBM or collocation-of-the-states branch")
        try:
            _, per = run_continuation(m, start, stop, start="hopf", hopf_index=hopf, harmonics=harmonics,
                                      options=dict(stability=False), progress=not quiet,
                                      echo=click.echo, discretization=discretization, intervals=intervals,
                                      degree=degree)
        except ConvergenceError as exc:
            raise explain_no_equilibrium(m, param, start, params, exc) from None
        f = _pick(per.special_points("fold"), fold, "--fold", "fold", "the periodic branch")
        curve = fold_curve(per, f, second, mu_min, mu_max, direction=1.0 if direction == "up" else -1.0)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    _report_curve(curve, param, second, out, plot)


#: the demo's harmonic count for the frequency-domain balance of the recast (``--method hbm``),
#: which has no adaptive count (its fold 1e-4 off at 40, 6e-3 at continue's default 30)
DEMO_HBM_HARMONICS = 40


def _harmonics_label(branch, harmonics):
    """``H = 40``, or the harmonic counts an adaptive branch chose (``H = 40..56``)."""
    import numpy as np
    from ..drivers._compose import DEFAULT_HARMONICS
    counts = (getattr(branch, "accuracy", None) or {}).get("harmonics")
    if harmonics is not None or counts is None or not np.any(np.isfinite(counts)):
        return f"H = {harmonics if harmonics is not None else DEFAULT_HARMONICS}"
    lo, hi = int(np.nanmin(counts)), int(np.nanmax(counts))
    return f"H = {lo}" if lo == hi else f"H = {lo}..{hi}"


@click.command("demo")
@click.option("--harmonics", "-H", type=int, default=None,
              help="Number of harmonics [default: chosen for an estimated orbit error below 1e-6, as by "
                   "continue].")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              help="Folder for belt.h5 and belt.png.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default="anm",
              show_default=True, help="Continuation engine (as everywhere).")
@click.option("--method", "discretization", type=click.Choice(PERIODIC_METHODS), default="aft",
              show_default=True, help="Periodic-orbit method, the discretization (as everywhere).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def demo_cmd(harmonics, out_dir, method, discretization, quiet):
    """The seed-000 belt oscillator: n = 10, FN = 5 N, continuation in the belt speed Vb.

    Equilibria on 0.05 <= Vb <= 12 m/s with both Hopf points, then the periodic branch
    from the first Hopf point through the fold (converged: 10.2874838639 m/s) back to the
    second Hopf point.  Writes belt.h5 (groups /periodic and /equilibria) and belt.png.
    The harmonic count is chosen along the branch for an estimated orbit error below 1e-6,
    as by continue, unless --harmonics fixes it.

    \b
    Examples:
      frictionkit demo
      frictionkit demo --engine newton --out-dir newton/
      frictionkit report belt.h5 -o report.html
    """
    from ..results._atomic import FIGURE_FORMATS, HDF5_FORMATS, check_output
    from ..drivers._compose import run_continuation
    from ..results._branch import save_run
    from ..results._plots import plot_branches
    t0 = time.perf_counter()
    try:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out-dir {out_dir}: cannot create it ({exc.strerror})") from None
        for name, formats in (("belt.h5", HDF5_FORMATS), ("belt_equilibria.h5", HDF5_FORMATS),
                              ("belt.png", FIGURE_FORMATS)):
            check_output(out_dir / name, formats, "--out-dir")
        m = _load("belt", "Vb", dict(n=10, FN=5))
        if harmonics is None and discretization == "hbm":
            harmonics = DEMO_HBM_HARMONICS        # no adaptive count for the recast's balance
        eq, per = run_continuation(m, 0.05, 12.0, start="hopf", hopf_index=1, harmonics=harmonics,
                                   method=method, progress=not quiet, echo=click.echo,
                                   discretization=discretization)
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    save_or_rescue(lambda path: save_run(path, equilibria=eq, periodic=per), out_dir / "belt.h5", "run")
    size = (f"{per.provenance['sizes']['n_intervals']} x {per.provenance['sizes']['degree']}"
            if discretization.startswith("collocation") else _harmonics_label(per, harmonics))
    try:
        plot_branches([eq, per], path=out_dir / "belt.png",
                      title=f"belt, n = 10, FN = 5 N, {discretization} {size}, {method.upper()}")
    except FrictionkitError as exc:
        raise click.ClickException(f"{exc} (the branches are in {out_dir / 'belt.h5'})") from None
    for name in ("belt.h5", "belt.png"):
        click.echo(f"wrote {out_dir / name}")
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if not per.success:
        raise click.ClickException(f"the periodic branch stopped early: {per.message}")
