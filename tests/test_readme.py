"""The README runs as written: every Python and shell block, and the numbers it quotes.

Blocks are fenced ```python or ```sh (```text blocks are output or pictures, not run).  An
HTML comment on the line before a block directs this test::

    <!-- readme: name=NAME needs=A,B reduce="OLD=>NEW" output-of=NAME skip="why" -->

``save-as``: the block is also written to that file, reduced (for the blocks that use it; a
skipped block with ``save-as`` is only written, e.g. a script a later ``python FILE`` runs);
``needs``: run after the named blocks, in the same Python process and folder (the README says
so in the text); ``reduce``: a long block runs with ``OLD`` replaced by ``NEW`` (a smaller
size, range or budget); ``output-of``: a ```text block that must appear verbatim in the
output of the named shell block; ``skip``: not run (the reason is printed).

Numbers quoted in Python comments are checked: on a line that is a bare expression, a comment
starting with a literal (``# 1.8414 (...)``, ``# [0.0543761]: ...``, ``# 6, 2, ('y', ...)``)
is compared with the expression's value, to the digits quoted.  Every ``--help`` example
(click ``\\b`` paragraphs) runs the same way as a shell block.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path
import re
import shlex
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*readme:(.*?)-->\s*$")


def blocks():
    """``[(lang, code, directives, line)]`` of every fenced block of the README."""
    out, lines = [], README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        d = _DIRECTIVE.match(lines[i - 1]) if i else None
        opts = dict(tok.split("=", 1) for tok in shlex.split(d.group(1))) if d else {}
        out.append((m.group(1), "\n".join(lines[i + 1:j]), opts, i + 1))
        i = j + 1
    return out


BLOCKS = blocks()
NAMED = {b[2]["name"]: b for b in BLOCKS if "name" in b[2]}
RUN = [b for b in BLOCKS if b[0] in ("python", "sh")]


def _reduced(code, opts):
    for pair in opts.get("reduce", "").split(";"):
        if "=>" in pair:
            old, new = pair.split("=>")
            assert old in code, f"reduce: {old!r} is not in the block"
            code = code.replace(old, new)
    return code


def _quoted(comment):
    """The literal a comment starts with (``None`` if it starts with words)."""
    text = comment.lstrip("#").strip()
    for end in range(len(text), 0, -1):
        try:
            return ast.literal_eval(text[:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _with_checks(code):
    """``code`` with ``__check(expr, quoted)`` for every bare expression quoting a literal."""
    out = []
    tree = ast.parse(code)
    checked = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and node.lineno == node.end_lineno:
            line = code.splitlines()[node.lineno - 1]
            if "#" in line[node.end_col_offset:]:
                q = _quoted(line[node.end_col_offset:].split("#", 1)[1])
                if q is not None:
                    checked[node.lineno] = (ast.get_source_segment(code, node), q)
    for k, line in enumerate(code.splitlines(), 1):
        if k in checked:
            expr, q = checked[k]
            out.append(f"__check(({expr}), {q!r}, {line.strip()!r})")
        else:
            out.append(line)
    return "\n".join(out), len(checked)


_CHECK = '''
import math as _m
def _digits(q):
    s = repr(q).lower().split("e")[0]
    return len(s.split(".")[1]) if "." in s else 0
def _same(v, q):
    if isinstance(q, (tuple, list)):
        v = list(v)
        return len(v) == len(q) and all(_same(a, b) for a, b in zip(v, q))
    if isinstance(q, str) or isinstance(q, bool):
        return v == q
    e = int(_m.floor(_m.log10(abs(q)))) if q and "e" in repr(q).lower() else 0
    half = 0.5 * 10.0 ** (e - _digits(q)) * (1 + 1e-9)
    return abs(float(v) - q) <= max(half, 1e-300)
def __check(v, q, line):
    if isinstance(v, (tuple, list)) and not isinstance(q, (tuple, list)):
        v = v[0]
    import numpy as _np
    if isinstance(v, _np.ndarray):
        v = v.tolist()
    assert _same(v, q), f"README quotes {q!r} but the code gives {v!r}: {line}"
'''


def _env():
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", MPLBACKEND="Agg",
               PYTHONPATH=str(ROOT))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def _chain(opts):
    names, seen = [], set()

    def visit(o):
        for n in filter(None, o.get("needs", "").split(",")):
            if n not in seen:
                seen.add(n)
                visit(NAMED[n][2])
                names.append(n)
    visit(opts)
    return [NAMED[n] for n in names]


def _run_python(code, cwd):
    r = subprocess.run([sys.executable, "-c", _CHECK + code], cwd=cwd, env=_env(), capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def _commands(code):
    """``(command, expected exit code)`` of a block: continuation lines joined, comments
    dropped; a comment saying ``exit code N`` sets the expected code (default 0)."""
    joined = re.sub(r"\\\n\s*", " ", code)
    for line in joined.splitlines():
        parts = re.split(r"\s+#", line, maxsplit=1)
        cmd, comment = parts[0].strip(), (parts[1] if len(parts) > 1 else "")
        if cmd and not cmd.startswith("#"):
            code_ = re.search(r"exit code (\d+)", comment)
            yield cmd, int(code_.group(1)) if code_ else 0


def _run_sh(code, cwd):
    out = []
    for cmd, expected in _commands(code):
        argv = shlex.split(cmd)
        if argv[0] == "python":
            argv[0] = sys.executable
        r = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900)
        assert r.returncode == expected, f"`{cmd}` exited {r.returncode}, not {expected}:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        out.append(r.stdout)
    return "\n".join(out)


def _folders():
    """The folder shared by this test session's processes (pytest-xdist workers included)
    where the folder a chain of shell blocks leaves is kept (:func:`_run`)."""
    base = _BASETEMP[0]
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


_BASETEMP: list = []


def _folder_after(names, build, cwd, reuse=True):
    """``build(cwd)``: the shell blocks ``names`` (a chain ending in a named block) run in the
    fresh folder ``cwd``.  The first test of the session that runs them (whole, in a fresh
    folder: as its own test or as the chain of another block) keeps the folder they leave;
    with ``reuse``, a later one gets a copy of it instead of running them again (their
    commands only write files in the folder, so the block that needs them sees the same
    files).  Returns what ``build`` returned, None for a copy."""
    import shutil
    from filelock import FileLock, Timeout
    root = _folders() / "readme-folders"
    root.mkdir(exist_ok=True)
    key = "+".join(names)
    kept, partial = root / key, root / f"{key}.partial"
    lock = FileLock(str(root / f"{key}.lock"))
    try:
        # the named block's own test does not wait for another test building the folder
        lock.acquire(timeout=-1 if reuse else 0)
    except Timeout:
        return build(cwd)
    try:
        if not kept.is_dir():
            result = build(cwd)
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(cwd, partial)
            partial.rename(kept)
            return result
        if reuse:
            shutil.copytree(kept, cwd, dirs_exist_ok=True)
            return None
    finally:
        lock.release()
    return build(cwd)                      # the named block's own test: run as written


def _run(block, cwd):
    lang, code, opts, _ = block
    for _, c, o, _ in _chain(opts) + [block]:
        if "save-as" in o:
            (Path(cwd) / o["save-as"]).write_text(_reduced(c, o) + "\n", encoding="utf-8")
    chain = [b for b in _chain(opts) if "skip" not in b[2]]     # skipped ones are only saved

    def run_chain(folder):
        for l2, c, o, _ in chain:
            if lang == "sh" or l2 == "sh":                         # python ones join the block's process
                (_run_sh if l2 == "sh" else _run_python)(_reduced(c, o), folder)

    if chain and all(b[0] == "sh" for b in chain):
        _folder_after([b[2]["name"] for b in chain], run_chain, cwd)
    else:
        run_chain(cwd)
    if lang == "python":
        prefix = "\n".join(_reduced(c, o) for l2, c, o, _ in chain if l2 == "python")
        checked, _ = _with_checks(_reduced(code, opts))
        return _run_python(prefix + "\n" + checked, cwd)
    if "name" in opts and not chain and any(opts["name"] in b[2].get("needs", "").split(",") for b in RUN):
        # a named shell block other blocks need: its folder is kept for them
        return _folder_after([opts["name"]], lambda folder: _run_sh(_reduced(code, opts), folder), cwd,
                             reuse=False)
    return _run_sh(_reduced(code, opts), cwd)


@pytest.mark.parametrize("block", RUN, ids=[f"line{b[3]}" for b in RUN])
def test_readme_block_runs_as_written(block, tmp_path, tmp_path_factory):
    _BASETEMP[:] = [tmp_path_factory.getbasetemp()]
    if "skip" in block[2]:
        pytest.skip(f"README line {block[3]}: {block[2]['skip']}")     # says why, in the README too
    out = _run(block, tmp_path)
    for lang, text, opts, line in BLOCKS:
        if opts.get("output-of") and opts["output-of"] == block[2].get("name"):
            assert text.strip() in out, f"README line {line}: the output shown is not what the command prints:\n{out}"


def test_every_runnable_block_is_run_or_says_why():
    """No block falls through: every block is python, sh or text, and each skip has a reason."""
    for lang, _, opts, line in BLOCKS:
        assert lang in ("python", "sh", "text"), f"README line {line}: fence it ```python, ```sh or ```text"
        assert "skip" not in opts or len(opts["skip"]) > 10, f"README line {line}: say why it is skipped"
    for _, _, opts, line in BLOCKS:
        for n in filter(None, opts.get("needs", "").split(",") + [opts.get("output-of", "")]):
            assert n in NAMED, f"README line {line}: no block named {n!r}"


def test_quoted_numbers_are_checked():
    """The checker sees the README's quoted values (it is not blind)."""
    n = sum(_with_checks(_reduced(c, o))[1] for lang, c, o, _ in BLOCKS if lang == "python")
    assert n >= 6


def _help_examples():
    """``[(command, example line)]`` of every ``--help`` "Example(s):" paragraph, as printed."""
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    out = []
    import click
    ctx = click.Context(main)
    commands = {n: main.get_command(ctx, n) for n in main.list_commands(ctx)}     # imports them all
    names = [[n] if not isinstance(c, click.Group) else [n, s] for n, c in commands.items()
             for s in (c.commands if isinstance(c, click.Group) else [None])]
    for name in names:
        text = CliRunner().invoke(main, [*name, "--help"], terminal_width=200).output
        m = re.search(r"Examples?:\n((?:  .*\n?)+)", text)
        if m:
            out += [(" ".join(name), line) for line, _ in _commands(m.group(1))]
    return out


def test_help_examples_print_verbatim_and_parse():
    """``--help`` examples are printed as written (not re-wrapped by click: one command per
    line, backslash continuations kept) and each parses: its options and arguments exist."""
    import click
    from frictionkit.runtime.cli import main
    ex = _help_examples()
    assert len(ex) >= 15
    for name, line in ex:
        assert line.startswith(("frictionkit ", "python ")), f"{name} --help: {line!r} is not a command"
        argv = shlex.split(line)
        if argv[0] != "frictionkit":
            continue
        cmd = main.get_command(click.Context(main), argv[1])
        if isinstance(cmd, click.Group):
            cmd, argv = cmd.commands[argv[2]], argv[1:]
        try:
            cmd.make_context(argv[1], argv[2:])
        except click.BadParameter as exc:       # an input file of the example that is not here
            assert "does not exist" in str(exc), f"{line}: {exc}"
        except click.UsageError as exc:
            raise AssertionError(f"{name} --help example does not parse: {line}: {exc}") from None
