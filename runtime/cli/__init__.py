"""Command-line interface: ``frictionkit <command>`` (click).

Each job registers its subcommands in its own module (listed in ``_COMMAND_MODULES``:
``_codegen``, ``_continuation``, ``_nonsmooth``, ``_study``, ``_frf``, ...); every command that takes
parameter values reads them with the one ``--set NAME=VALUE`` type of ``_params``.
"""
import importlib

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="frictionkit")
def main():
    """frictionkit: periodic solutions of systems with friction.

    \b
    Typical session:
      frictionkit codegen belt --param Vb --explain
      frictionkit demo
    """


_COMMAND_MODULES = ("_codegen", "_continuation", "_nonsmooth", "_study", "_sweep", "_report", "_frf")

for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_name}")
