"""Subcommands of `frictionkit` (registered on runtime.cli.main)."""
from .cli import main  # noqa: F401
