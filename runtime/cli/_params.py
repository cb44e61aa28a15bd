"""The one ``--set NAME=VALUE`` parameter type of every command."""
from __future__ import annotations

import click


class AssignmentType(click.ParamType):
    """``NAME=VALUE`` items of parameter values, converted to ``((name, float), ...)``.

    One command-line word may hold several items separated by commas or spaces
    (``--set n=10,FN=5``); an item without ``=``, without a name or with a value that is not a
    number is rejected by click with a message naming the item.
    """

    name = "NAME=VALUE"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):        # already converted (a default, or a second pass)
            return value
        pairs = []
        for item in str(value).replace(",", " ").split():
            name, sep, text = item.partition("=")
            if not sep or not name.strip():
                self.fail(f"{item!r}: expected NAME=VALUE, e.g. --set n=10 FN=5", param, ctx)
            try:
                pairs.append((name.strip(), float(text)))
            except ValueError:
                self.fail(f"{item!r}: {text!r} is not a number", param, ctx)
        return tuple(pairs)


ASSIGNMENT = AssignmentType()


def write_outputs(result, out, plot):
    """Save ``result`` to ``--out`` and plot it to ``--plot`` (either may be None), saying so."""
    if out is not None:
        result.save(out)
        click.echo(f"wrote {out}")
    if plot is not None:
        result.plot(plot)
        click.echo(f"wrote {plot}")


def param_values(*groups) -> dict:
    """``{name: value}`` of converted ``--set`` groups (a later item wins)."""
    return {name: value for group in groups for pairs in group for name, value in pairs}
