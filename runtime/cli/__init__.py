"""Command-line interface: ``frictionkit <command>`` (click).

Each job defines its subcommands in its own module; :data:`COMMANDS` says which module and
which object holds each one, with the line ``frictionkit --help`` shows for it.  A command's
module is imported only when that command runs (or its own ``--help`` is asked for): the
modules import the numerical runtime (NumPy, SciPy, h5py, matplotlib, ...), which
``frictionkit --version`` and ``frictionkit --help`` do not need (click's "lazily loading
subcommands" pattern; ``tests/cli/test_lazy_cli.py`` checks both the imports and that the
lines below are the commands' own).  Every command that takes parameter values reads them
with the one ``--set NAME=VALUE`` type of ``_params``.
"""
from __future__ import annotations

import sys

#: exit code of a command interrupted by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130
_INTERRUPTED = "Error: interrupted (Ctrl-C) while {}; nothing was computed or written\n"

try:                                     # Ctrl-C while the command line itself loads: a sentence, no traceback
    import importlib

    import click

    from ... import _ignore_interrupt_at_exit, _release_interrupt
    from .._version import __version__
except KeyboardInterrupt:
    sys.stderr.write(_INTERRUPTED.format("starting"))
    raise SystemExit(EXIT_INTERRUPTED) from None

#: ``name: (module, object, short help)`` of every subcommand.  The short help is the first
#: sentence of the command's docstring, copied here so that ``--help`` need not import the
#: module (a test compares the two).
COMMANDS = {
    "calibrate": ("_nonsmooth", "calibrate_cmd",
                  "Seed 001 Table 1 procedure on a synthetic record with known parameters."),
    "codegen": ("_codegen", "codegen_cmd", "Recast MODEL to quadratic form and generate its solver modules."),
    "compare": ("_nonsmooth", "compare_group", "Compare regularized branches with the non-smooth references."),
    "continue": ("_continuation", "continue_cmd",
                 "Continue equilibria or periodic orbits of MODEL in --param from --start to --stop."),
    "coulomb": ("_nonsmooth", "coulomb_cmd",
                "Exact damped Coulomb stick-slip cycle of the belt oscillator (seed 000 §3)."),
    "demo": ("_continuation", "demo_cmd",
             "The seed-000 belt oscillator: n = 10, FN = 5 N, continuation in the belt speed Vb."),
    "export": ("_report", "export_cmd",
               "Export a saved branch (of a run file: its main branch) as a table with units."),
    "fold-curve": ("_continuation", "fold_curve_cmd",
                   "Continue a fold of the periodic branch from a Hopf point in a second parameter "
                   "(e.g. the upper end of a bistable band against a friction-law parameter)."),
    "info": ("_info", "info_cmd",
             "List the branches of a result FILE, their status and special points with their labels."),
    "frf": ("_frf", "frf_cmd",
            "Frequency response of the forced MODEL from --start to --stop of its forcing frequency."),
    "hopf-curve": ("_continuation", "hopf_curve_cmd",
                   "Continue a Hopf point of the equilibria in a second parameter (the stability boundary "
                   "of steady sliding in the plane of two parameters)."),
    "models": ("_report", "models_cmd",
               "List the model zoo, or the parameters of one model (zoo name or model file)."),
    "nlmode": ("_nlmode", "nlmode_cmd",
               "Nonlinear mode of the damped structure MODEL (extended periodic motion concept)."),
    "ns-curve": ("_pd_ns", "ns_curve_cmd",
                 "Continue a Neimark-Sacker point of the periodic branch from a Hopf point in a second parameter."),
    "pd-curve": ("_pd_ns", "pd_curve_cmd",
                 "Continue a period doubling of the periodic branch from a Hopf point in a second parameter."),
    "plot": ("_report", "plot_cmd", "Plot saved branches (bifurcation diagram) or the orbit of one point."),
    "plot-sweep": ("_sweep", "plot_sweep_cmd",
                   "Draw the map of a continuation sweep's STORE (regions: stable sliding, stick-slip only, "
                   "coexistence, other), optionally with codim-2 curves on top."),
    "report": ("_report", "report_cmd",
               "Write one self-contained interactive HTML report of saved branches, curves and sweeps."),
    "study": ("_study", "study", "Accuracy studies of the discretizations (seed 003)."),
    "sweep": ("_sweep", "sweep_cmd",
              "Run one task per grid point of --over on Dask (a local cluster, or --scheduler)."),
    "torus": ("_torus", "torus_cmd",
              "Quasi-periodic solutions (tori) born at a Neimark-Sacker point of a periodic branch."),
    "twophase": ("_nonsmooth", "twophase_cmd",
                 "Seed 001 two-phase model, parameter set (P): explicit scheme of §3.1 (Figs."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported at first use, from a table
    ``{name: (module, object, short help)}`` (modules relative to this package)."""

    def __init__(self, *args, lazy_commands: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            module, name, _ = self.lazy_commands[cmd_name]
            self.add_command(getattr(importlib.import_module(f"{__name__}.{module}"), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx):
        """Run the command; the last net under every command: Ctrl-C before a command handles it
        (while its modules load) exits with code 130 and a sentence, and a frictionkit error no
        command caught (a bad input found late, a failed write) is its message, never a traceback."""
        try:
            _release_interrupt()         # from here Ctrl-C is a KeyboardInterrupt the command handles
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(_INTERRUPTED.format(f"loading or starting {ctx.invoked_subcommand or 'the command'}"),
                       err=True, nl=False)
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:
            # frictionkit's errors are loaded once a command ran (importing them here would load sympy)
            errors = sys.modules.get("frictionkit.modelspec.errors")
            if errors is None or not isinstance(exc, errors.FrictionkitError):
                raise
            raise click.ClickException(str(exc)) from None
        finally:
            _ignore_interrupt_at_exit()      # the command has ended: a late Ctrl-C changes nothing

    def format_commands(self, ctx, formatter):
        """The command list of ``--help`` from the table (no command module imported); a
        command already loaded gives its own line (the same text, as a test checks)."""
        rows = [(name, self.commands[name] if name in self.commands
                 else click.Command(name, help=self.lazy_commands[name][2]))
                for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in rows if not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="frictionkit")
def main():
    """frictionkit: periodic solutions of systems with friction.

    \b
    Typical session:
      frictionkit codegen belt --param Vb --explain
      frictionkit demo
    """
