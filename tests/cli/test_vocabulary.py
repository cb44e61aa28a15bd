"""One vocabulary across commands (issue 29): the same option names for the same things.

The test walks every command's options: parameter values are ``--set NAME=VALUE``, a Hopf
point to start from is ``--from-hopf``, the file a command writes is ``--out`` (``-o``), no
progress bar is ``-q/--quiet`` on every command that computes, ``-p`` is ``--param`` and
``-H`` ``--harmonics``; an old spelling is kept only as a hidden option marked deprecated that
names its replacement.
"""
import re

import click
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.cli._params import AssignmentType

#: commands that compute (a continuation, a study, a sweep, a reference branch, a calibration)
COMPUTING = {"continue", "demo", "hopf-curve", "fold-curve", "sweep", "study convergence", "compare coulomb",
             "calibrate"}
#: spellings that say "the output file" in another way than --out / --plot / --out-dir / --out-prefix
OTHER_OUTPUT_WORDS = {"--save", "--output", "--map", "--image", "--file", "--out-file", "--write"}
#: short option -> the one long option it may stand for
SHORT = {"-o": "--out", "-q": "--quiet", "-p": "--param", "-H": "--harmonics", "-h": "--help"}


def commands():
    """``{"name [sub]": command}`` of every command of ``frictionkit``."""
    ctx = click.Context(main)
    out = {}
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out.update({f"{name} {sub}": cmd.get_command(ctx, sub) for sub in cmd.list_commands(ctx)})
        else:
            out[name] = cmd
    return out


COMMANDS = commands()


def options(cmd, hidden=False):
    return [p for p in cmd.params if isinstance(p, click.Option) and bool(p.hidden) == hidden]


def test_the_walk_sees_every_command():
    assert len(COMMANDS) >= 17 and COMPUTING <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_options_use_the_vocabulary(name):
    cmd = COMMANDS[name]
    wrong = []
    for opt in options(cmd):
        names = opt.opts + opt.secondary_opts
        long_names = [n for n in names if n.startswith("--")]
        if isinstance(opt.type, AssignmentType) and long_names != ["--set"]:
            wrong.append(f"{'/'.join(names)}: parameter values are --set NAME=VALUE")
        if any("hopf" in n for n in long_names) and long_names != ["--from-hopf"]:
            wrong.append(f"{'/'.join(names)}: a Hopf point to start from is --from-hopf K")
        if OTHER_OUTPUT_WORDS & set(long_names):
            wrong.append(f"{'/'.join(names)}: the file a command writes is --out (an image of it: --plot)")
        for short, long in SHORT.items():
            if short in names and long not in names:
                wrong.append(f"{'/'.join(names)}: {short} stands for {long} only")
            if long in names and short not in names and long != "--help":
                wrong.append(f"{'/'.join(names)}: {long} has the short form {short} everywhere")
    assert not wrong, f"frictionkit {name}: " + "; ".join(wrong)


def test_every_computing_command_has_quiet():
    quiet = {name for name, cmd in COMMANDS.items() if any("--quiet" in o.opts for o in options(cmd))}
    with_param = {name for name, cmd in COMMANDS.items() if any("--param" in o.opts for o in options(cmd))}
    assert COMPUTING <= quiet, sorted(COMPUTING - quiet)
    assert with_param - {"codegen"} <= quiet, sorted(with_param - {"codegen"} - quiet)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_old_spellings_are_hidden_deprecated_aliases(name):
    cmd = COMMANDS[name]
    visible = {n for o in options(cmd) for n in o.opts + o.secondary_opts}
    for opt in options(cmd, hidden=True):
        assert opt.deprecated, f"{name} {opt.opts}: a hidden option is an old spelling, marked deprecated"
        replacement = re.search(r"Use (--[\w-]+)", str(opt.deprecated))
        assert replacement and replacement.group(1) in visible, (name, opt.opts, opt.deprecated)


@pytest.mark.parametrize("argv, new", [
    (["hopf-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--second", "FN", "--min", "1",
      "--max", "5", "--hopf", "3", "-q"], "--from-hopf"),
    (["plot-sweep", "no-such-store.h5", "--map", "m.png"], "--out"),
])
def test_an_old_spelling_still_works_and_says_what_replaces_it(argv, new, tmp_path):
    res = CliRunner().invoke(main, argv)
    assert "is deprecated" in res.output and f"Use {new} instead" in res.output, res.output
    assert "no such option" not in res.output.lower()
