"""Whole-process CPU of the command line (issue 29): what a user waits for, imports included.

* ``frictionkit --version`` and ``frictionkit --help`` (no command module imported: the
  target is under 0.3 s of CPU, median of ``ROUNDS``);
* ``frictionkit continue --help``: the imports of the ``continue`` command alone (its module
  and the runtime layers it uses), which every run of the command pays;
* the seed-000 belt diagram from the command line at the default H (30):
  ``frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 --from-hopf 1
  -q``, warm build cache (one run before the measured ones fills it), its CPU split into the
  imports (``continue --help``) and the rest.

Each figure is the CPU time (user + system) of the finished child process, read with
``getrusage(RUSAGE_CHILDREN)`` around it, median over the rounds, the commands alternating
within a round.  ``sympy_imported_by_belt_diagram`` says whether ``continue`` of the cached
zoo model imports sympy (``sys.modules`` at the end of the process).

Run: ``python benchmarks/run.py cli`` (writes ``benchmarks/results/cli.json``).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROUNDS = 5
EXE = str(Path(sys.executable).with_name("frictionkit"))
BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "-q"]
COMMANDS = {"version": ["--version"], "help": ["--help"], "continue_help": ["continue", "--help"],
            "belt_diagram": BELT}


def _env():
    env = dict(os.environ, MPLBACKEND="Agg")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def child_cpu(argv, cwd):
    """CPU seconds (user + system) of the process ``argv``, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=_env(), check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


_WRAPPER = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def imported_modules(argv, cwd):
    """The modules the process ``frictionkit *argv`` has imported when it ends."""
    run = subprocess.run([sys.executable, "-c", _WRAPPER, EXE, *argv], cwd=cwd, env=_env(), check=True,
                         capture_output=True, text=True)
    return set(run.stderr.rsplit("MODULES ", 1)[1].split())


def main(rounds=ROUNDS) -> dict:
    with tempfile.TemporaryDirectory() as cwd:
        child_cpu([EXE, *BELT], cwd)                 # fills the build cache: not measured
        runs = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            for name, argv in COMMANDS.items():
                runs[name].append(round(child_cpu([EXE, *argv], cwd), 3))
        sympy = "sympy" in imported_modules(BELT, cwd)
    med = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "rounds": rounds,
        "cpu_s": med,
        "per_round_cpu_s": runs,
        "belt_diagram_imports_share": med["continue_help"] / med["belt_diagram"],
        "belt_diagram_after_imports_s": med["belt_diagram"] - med["continue_help"],
        "sympy_imported_by_belt_diagram": sympy,
        "targets": {"version_cpu_s": [med["version"], 0.3, med["version"] < 0.3],
                    "help_cpu_s": [med["help"], 0.3, med["help"] < 0.3]},
    }


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
