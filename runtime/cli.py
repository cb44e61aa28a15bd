"""Command-line interface: ``frictionkit <command>`` (click).

Subcommands are registered by the modules that implement them, so each job keeps its
code in its own place.
"""
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
