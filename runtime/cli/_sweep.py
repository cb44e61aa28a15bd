"""``frictionkit sweep`` and ``frictionkit plot-sweep`` (listed in ``runtime.cli.COMMANDS``)."""
from __future__ import annotations

from pathlib import Path
import time

import click

from ..drivers._choices import PERIODIC_METHODS
from ..errors import FrictionkitError, InputError
from ..sweeps._limits import MAX_TASKS
from ._params import ASSIGNMENT, check_sizes, param_values

# the sweeps (Dask, pandas, h5py) and the runtime are imported by the functions that use them,
# not here: `sweep --help` and `plot-sweep --help` import this module to show the options (as
# in _continuation.py)


class _GridType(click.ParamType):
    """``--over NAME=START:STOP:COUNT`` or ``NAME=V1,V2,...``, checked for its form; the grid is
    made once its size is checked against ``--max-tasks`` (``parse_grid``)."""

    name = "NAME=START:STOP:COUNT"

    def convert(self, value, param, ctx):
        from ..sweeps._spec import grid_count
        try:
            grid_count(value)
        except InputError as exc:
            self.fail(str(exc), param, ctx)
        return value


def _write_map(store, plot, curves, at):
    from ..analysis._curves import BifurcationCurve
    from ..sweeps import plot_sweep_map
    curves = [BifurcationCurve.load(c) for c in curves]
    plot_sweep_map(store.table(), store.spec, plot, curves=curves, at=at)
    click.echo(f"wrote {plot}")


@click.command("sweep")
@click.argument("model")
@click.argument("assignments", nargs=-1, type=ASSIGNMENT)
@click.option("--param", "-p", required=True, help="Main (continuation) parameter, e.g. Vb.")
@click.option("--start", type=float, required=True, help="Start of --param (orbit/simulate tasks: its value).")
@click.option("--stop", type=float, required=True, help="End of the --param range.")
@click.option("--over", multiple=True, type=_GridType(), required=True,
              help="A swept parameter: NAME=START:STOP:COUNT (linspace) or NAME=V1,V2,... (repeat for 2-D).")
@click.option("--set", "set_", multiple=True, type=ASSIGNMENT, help="Fixed parameter values NAME=VALUE.")
@click.option("--task", type=click.Choice(["continuation", "orbit", "simulate"]), default="continuation",
              show_default=True, help="What each grid point runs.")
@click.option("--from-hopf", "from_hopf", type=int, default=1, show_default=True,
              help="continuation: periodic branch from Hopf point K of the equilibria.")
@click.option("--method", "discretization", type=click.Choice(PERIODIC_METHODS), default=None,
              help="Periodic-orbit method, as in `frictionkit continue`.")
@click.option("--engine", "method", type=click.Choice(["anm", "newton"]), default=None,
              help="Continuation engine, as in `frictionkit continue`.")
@click.option("--harmonics", "-H", type=int, default=30, show_default=True, help="Number of harmonics.")
@click.option("--intervals", type=int, default=40, show_default=True, help="Collocation sub-intervals.")
@click.option("--degree", type=int, default=3, show_default=True, help="Collocation degree.")
@click.option("--max-steps", type=int, default=5000, show_default=True, help="Step budget per branch.")
@click.option("--t-end", type=float, default=200.0, show_default=True, help="simulate: integration time.")
@click.option("--seed", type=int, default=0, show_default=True, help="simulate: random initial states' seed.")
@click.option("--at", multiple=True, type=float,
              help="Report period, amplitude and motion of the stable orbit at this --param value (repeatable).")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=Path("sweep.h5"),
              show_default=True, help="HDF5 store; rerunning the same command resumes it.")
@click.option("--workers", type=int, default=None, help="Local cluster size [default: one per core].")
@click.option("--scheduler", default=None, help="Address of an existing Dask scheduler, tcp://host:port.")
@click.option("--plot", "map_", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the two-parameter map to this image file.")
@click.option("--map", "map_renamed", type=click.Path(dir_okay=False, path_type=Path), default=None, hidden=True,
              deprecated="Use --plot instead.", help="Old spelling of --plot.")
@click.option("--commit-seconds", type=float, default=2.0, show_default=True,
              help="Seconds between atomic commits of finished tasks to --out.")
@click.option("--max-tasks", type=click.IntRange(min=1), default=MAX_TASKS, show_default=True,
              help="Largest number of grid points (tasks) accepted; a larger grid is refused before it is made.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sweep_cmd(model, assignments, param, start, stop, over, set_, task, from_hopf, discretization, method,
              harmonics, intervals, degree, max_steps, t_end, seed, at, out, workers, scheduler, map_,
              map_renamed, commit_seconds, max_tasks, quiet):
    """Run one task per grid point of --over on Dask (a local cluster, or --scheduler).

    \b
    Examples:
      frictionkit sweep belt --param Vb --start 0.05 --stop 12 --set n=10 \\
          --over FN=0.5:10:40 --from-hopf 1 -H 10 --out belt_sweep.h5 --plot belt_map.png
      frictionkit sweep belt --param Vb --start 0.05 --stop 12 --set n=10 \\
          --over FN=0.5:10:40 -H 10 --out belt_sweep.h5 --scheduler tcp://10.0.0.5:8786
    """
    from ..sweeps import SweepStore, sweep
    from ..sweeps._spec import check_grid_size, grid_count, parse_grid
    t0 = time.perf_counter()
    map_ = map_ if map_renamed is None else map_renamed
    if workers is not None and scheduler is not None:
        raise click.UsageError("--workers and --scheduler exclude each other (an existing cluster has its own)")
    opts = {"continuation": dict(from_hopf=from_hopf, harmonics=harmonics, discretization=discretization,
                                 method=method, max_steps=max_steps, intervals=intervals, degree=degree),
            "orbit": dict(harmonics=harmonics, discretization=discretization),
            "simulate": dict(t_end=t_end, seed=seed)}[task]
    try:
        check_grid_size([grid_count(text) for text in over], max_tasks)     # before any grid is made
        check_sizes(harmonics, intervals, degree)
        grids = dict(parse_grid(text, max_points=max_tasks) for text in over)
        params = param_values(set_, assignments)
        params.pop(param, None)
        res = sweep(model, param, start, stop, grids, task=task, fixed=params, out=out, workers=workers,
                    scheduler=scheduler, progress=not quiet, echo=click.echo, commit_every=commit_seconds,
                    at=at, max_tasks=max_tasks, **opts)
    except KeyboardInterrupt:
        raise click.ClickException(f"interrupted: the finished tasks are in {out}; rerun the same command "
                                   "to resume") from None
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
    counts = res.table["status"].value_counts().to_dict() if len(res.table) else {}
    click.echo(f"{res.message} ({res.ran} run now, {res.skipped} already there); status: "
               + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if map_ is not None:
        _write_map(SweepStore(out), map_, (), at[0] if at else None)
    click.echo(f"wall time {time.perf_counter() - t0:.1f} s")
    if res.failed:
        raise click.ClickException(f"{res.failed} task(s) failed with an error (see the 'message' column); "
                                   "they are stored and will not be rerun")


@click.command("plot-sweep")
@click.argument("store", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "-o", "map_", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file of the two-parameter map (required).")
@click.option("--map", "map_renamed", type=click.Path(dir_okay=False, path_type=Path), default=None, hidden=True,
              deprecated="Use --out instead.", help="Old spelling of --out.")
@click.option("--curve", "curves", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A hopf-curve, fold-curve, pd-curve or ns-curve HDF5 file (their --out) to overlay; "
                   "repeatable.")
@click.option("--at", type=float, default=None, help="Main-parameter value of a map over two swept parameters.")
@click.option("--table", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the summary table as CSV.")
def plot_sweep_cmd(store, map_, map_renamed, curves, at, table):
    """Draw the map of a continuation sweep's STORE (regions: stable sliding, stick-slip only,
    coexistence, other), optionally with codim-2 curves on top.

    \b
    Example:
      frictionkit hopf-curve belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 \\
          --second FN --min 0.5 --max 10 --out hopf.h5
      frictionkit plot-sweep belt_sweep.h5 --out belt_map.png --curve hopf.h5
    """
    from ..sweeps import SweepStore
    map_ = map_ if map_renamed is None else map_renamed
    if map_ is None:
        raise click.UsageError("give the image file of the map: --out FILE.png", ctx=click.get_current_context())
    try:
        s = SweepStore(store)
        _write_map(s, map_, curves, at)
        if table is not None:
            s.table().to_csv(table)
            click.echo(f"wrote {table}")
    except FrictionkitError as exc:
        raise click.ClickException(str(exc)) from None
