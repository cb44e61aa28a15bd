"""The installed ``frictionkit`` script run in a subprocess that reports its imports: what the
fast-load tests read (``sys.modules`` at the end of the process, not a time)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXE = Path(sys.executable).with_name("frictionkit")

#: runs the script given as first argument and writes ``MODULES name name ...`` to stderr at exit
WRAPPER = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_script(argv, cwd, code=WRAPPER, script=True, returncodes=(0,)):
    """``code`` in a fresh interpreter with the installed script (``script``) and ``argv``;
    its exit status must be one of ``returncodes`` (None: not checked)."""
    cmd = [sys.executable, "-c", code] + ([str(EXE)] if script else []) + list(argv)
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if returncodes is not None:
        assert run.returncode in returncodes, run.stderr[-3000:]
    return run


def modules_of(run) -> set:
    """The modules a :data:`WRAPPER` run had imported at its end."""
    return set(run.stderr.rsplit("MODULES ", 1)[1].split())
