"""An instant command line (issue 29): ``frictionkit --version`` and ``--help`` import no
command module and none of the numerical libraries; each command is loaded from the table
``frictionkit.runtime.cli.COMMANDS``, whose ``--help`` lines are the commands' own.

These tests check *what is imported* (``sys.modules`` after the installed script ran), not
a time: the CPU figures are in ``benchmarks/bench_cli.py``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import COMMANDS, main

EXE = Path(sys.executable).with_name("frictionkit")
HEAVY = ("sympy", "scipy", "matplotlib", "h5py", "numpy", "pandas", "dask", "plotly", "Cython")


# the installed script run as it is, then the modules it left in sys.modules (-X importtime
# would miss those imported by importlib.import_module, as the lazy loading does)
_WRAPPER = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def imported(*argv):
    """Names of the modules the installed ``frictionkit *argv`` imports, and its stdout."""
    run = subprocess.run([sys.executable, "-c", _WRAPPER, str(EXE), *argv], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return set(run.stderr.rsplit("MODULES ", 1)[1].split()), run.stdout


@pytest.mark.parametrize("argv", [["--version"], ["--help"]], ids=["version", "help"])
def test_version_and_help_import_no_numerical_library(argv):
    names, out = imported(*argv)
    assert out                                       # the command ran and printed
    assert "click" in names                          # the import log is read
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    assert not heavy, f"frictionkit {' '.join(argv)} imports {heavy[:10]}"
    modules = sorted(n for n in names if n.startswith("frictionkit.runtime.cli._"))
    assert not modules, f"frictionkit {' '.join(argv)} imports command modules {modules}"


def _every_command():
    ctx = click.Context(main)
    names = []
    for name, (module, obj, _) in COMMANDS.items():
        cmd = getattr(__import__(f"frictionkit.runtime.cli.{module}", fromlist=[obj]), obj)
        names += [[name, sub] for sub in cmd.list_commands(ctx)] if isinstance(cmd, click.Group) else [[name]]
    return names


@pytest.mark.parametrize("argv", _every_command(), ids=" ".join)
def test_every_commands_help_imports_no_numerical_library(argv):
    """``frictionkit COMMAND --help`` imports the command's module, for its options, and not the
    runtime it calls: the numerical libraries are imported by the command when it runs."""
    names, out = imported(*argv, "--help")
    assert "Usage:" in out and f"frictionkit.runtime.cli.{COMMANDS[argv[0]][0]}" in names
    heavy = sorted({n.split(".")[0] for n in names if n.split(".")[0] in HEAVY + ("tqdm", "h5py")})
    assert not heavy, f"frictionkit {' '.join(argv)} --help imports {heavy}"


def test_a_command_imports_its_module_only():
    """``frictionkit coulomb`` loads the non-smooth commands, not the continuation's, nor plots, nor Dask."""
    names, out = imported("coulomb", "--set", "Vb=0.5")
    assert "stick-slip" in out
    assert "frictionkit.runtime.cli._nonsmooth" in names
    assert not {"frictionkit.runtime.cli._continuation", "frictionkit.runtime.cli._sweep", "matplotlib",
                "dask", "pandas", "h5py"} & names


def test_the_help_lines_are_the_commands_own():
    """The table's line is what click makes of the command's docstring, at any width."""
    ctx = click.Context(main)
    for name, (_, _, line) in COMMANDS.items():
        cmd = main.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
        for limit in (30, 45, 74, 10_000):
            assert click.Command(name, help=line).get_short_help_str(limit) == cmd.get_short_help_str(limit), name


def test_help_lists_every_command_the_same_before_and_after_loading():
    env = dict(os.environ, COLUMNS="80")
    lazy = subprocess.run([str(EXE), "--help"], capture_output=True, text=True, check=True, env=env).stdout
    code = ("import click, sys; from frictionkit.runtime.cli import main; ctx = click.Context(main); "
            "[main.get_command(ctx, n) for n in main.list_commands(ctx)]; "      # every module: click's own lines
            "main(['--help'], prog_name='frictionkit')")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout
    assert lazy == loaded
    assert set(COMMANDS) <= set(lazy.split())


def test_an_unknown_command_is_a_usage_error():
    res = CliRunner().invoke(main, ["contiue"])
    assert res.exit_code == 2 and "No such command 'contiue'" in res.output


def test_runtime_names_still_resolve():
    """``frictionkit.runtime`` loads its public names at first use, every one of them; a
    branch it hands out can be restarted (the drivers register ``Branch.restart``)."""
    code = ("import sys, frictionkit.runtime as r; assert 'scipy' not in sys.modules, 'eager'\n"
            "from frictionkit.runtime import load_branch, load_model, nonsmooth\n"
            "from frictionkit.runtime.results import _branch\n"
            "assert _branch._RESTART is not None, 'Branch.restart not registered'\n"
            "print(r.continuation.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "continuation"


def test_the_fft_lengths_are_scipys():
    """``fast_length`` (the discretizations' FFT sizes, computed without importing scipy.fft
    and with it scipy.special) is ``scipy.fft.next_fast_len(n, real=True)``."""
    import scipy.fft
    from frictionkit.runtime.discretizations._hbm import fast_length
    for n in list(range(1, 5000)) + [99991, 2 ** 20 + 1, 3 ** 11 - 1]:
        assert fast_length(n) == scipy.fft.next_fast_len(n, real=True), n


def test_a_command_leaves_numpys_test_and_fortran_packages_unloaded(tmp_path):
    """The belt diagram from the installed script: SciPy's ``from numpy import *`` no longer
    loads ``numpy.testing`` (with ``unittest``) and ``numpy.f2py`` (with ``charset_normalizer``),
    nor ``scipy.sparse`` (the structures' modules import it), and the diagram is the one computed
    without the deferral (its fold of cycles)."""
    out = tmp_path / "belt.h5"
    names, _ = imported("continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10",
                        "FN=5", "--from-hopf", "1", "-H", "30", "--out", str(out), "-q")
    assert "scipy.linalg" in names
    assert not {"unittest", "charset_normalizer", "numpy.f2py.crackfortran", "numpy.testing._private.utils",
                "scipy.sparse"} & names
    code = ("import sys; from frictionkit.runtime.cli import main\n"
            f"main(['continue', 'belt', '--param', 'Vb', '--start', '0.05', '--stop', '12', '--set', 'n=10', "
            f"'FN=5', '--from-hopf', '1', '-H', '30', '--out', {str(tmp_path / 'plain.h5')!r}, '-q'], "
            "standalone_mode=False)\n"
            "assert 'unittest' in sys.modules")           # a program importing frictionkit: untouched
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    from frictionkit.runtime import load_branch
    folds = [load_branch(p).special_points("fold")[0].param for p in (out, tmp_path / "plain.h5")]
    assert folds[0] == folds[1]


def test_the_deferred_numpy_packages_load_when_touched():
    """In the console script the two packages are lazy modules that load at first use, and work."""
    code = ("import sys; sys.argv[0] = 'frictionkit'\n"
            "import frictionkit; frictionkit._defer_unused_numpy()\n"
            "import numpy, scipy.linalg\n"
            "assert 'unittest' not in sys.modules and 'numpy.testing' in sys.modules\n"
            "numpy.testing.assert_allclose(scipy.linalg.inv([[2.0]]), [[0.5]])\n"
            "from numpy.testing import assert_array_equal; assert_array_equal([1], [1])\n"
            "import numpy.f2py; assert callable(numpy.f2py.run_main)\n"
            "assert 'unittest' in sys.modules and 'numpy.f2py.crackfortran' in sys.modules\n"
            "print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_console_script_alone_tunes_malloc():
    """``malloc`` keeps freed memory in the console script (both thresholds set, glibc's mallopt
    says so), never in a program importing frictionkit."""
    code = ("import sys; sys.argv[0] = {!r}\n"
            "import frictionkit; print(frictionkit._keep_freed_memory())")
    for argv0, expect in (("/usr/local/bin/frictionkit", "True"), ("analysis.py", "False")):
        run = subprocess.run([sys.executable, "-c", code.format(argv0)], capture_output=True, text=True)
        assert run.returncode == 0 and run.stdout.strip() == expect, (argv0, run.stdout, run.stderr[-2000:])
