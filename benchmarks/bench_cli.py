"""Whole-process CPU of the command line (issue 29): what a user waits for, imports included,
against AUTO-07p's whole process.

* ``frictionkit --version`` and ``frictionkit --help`` (no command module imported), and the
  ``--help`` of every command (the command's module imported, not the numerical libraries it
  calls): the target is under 0.3 s of CPU each, median of ``ROUNDS``;
* the seed-000 belt diagram from the command line at H = 30 (the default until the harmonic
  count was chosen for an error tolerance, issue 26):
  ``frictionkit continue belt --param Vb --start 0.05 --stop 12 --set n=10 FN=5 --from-hopf 1
  -H 30 --out belt.h5 -q``, warm build cache (a run before the measured ones fills it), the same
  at H = 48 (the H whose fold is within 1e-8 of the converged value, ``bench_auto.py``) and
  without ``-H`` (``cli_default``: the count chosen for an estimated orbit error of 1e-6);
* AUTO-07p's whole process for the same diagram (``bench_auto.py``'s belt case, bifpy's native
  path): a fresh Python that imports bifpy and the model module (printed from the ModelSpec by
  ``bench_auto.auto_model_source`` before the rounds, not timed), runs the equilibria (IPS = 1)
  and the periodic orbits from the first HB label at NTST = 100, NCOL = 4 (IPS = 2), each run
  transpiled to Fortran and compiled by gfortran, as ``bench_auto.py`` does: compilation
  included;
* the in-process figures of both, next to the whole-process ones: frictionkit's is the CPU of
  the ``continue`` command run a second time in the same process (every module imported, the
  model loaded once before), AUTO's the CPU of its two runs after ``import bifpy``
  (compilation included, as in ``bench_auto.py``); ``cli_h30_outside_the_command_s`` is the
  rest of the CLI's whole process: the interpreter's start, the imports, first-use loads
  (the same at the default H: ``cli_in_process_default``, ``cli_default_outside_the_command_s``).

Each figure is the CPU time (user + system) of the finished child process and its own finished
children (gfortran, the AUTO executable), read with ``getrusage(RUSAGE_CHILDREN)`` around it;
medians over the rounds, the commands alternating within a round (CLI, AUTO, CLI at H = 48,
CLI at the default H, in-process CLI at H = 30 and at the default H).  The children run with Python's bytecode cache on, as in a user's shell
(``PYTHONDONTWRITEBYTECODE`` removed from their environment: with it, the 70 modules of
frictionkit a run imports are compiled from source every time).

``imports`` says what the belt diagram imports: whether sympy, frictionkit.codegen,
matplotlib, scipy.optimize or scipy.interpolate are among the modules (``sys.modules`` at the end of the process), and the shares
of its import time by top-level package (``python -X importtime``, one run).

Run: ``python benchmarks/run.py cli`` (writes ``benchmarks/results/cli.json``); AUTO-07p
needs ``make bench-peers`` (bifpy, gfortran), else its half is reported unavailable.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# 9 rounds of the belt diagram: on the shared 2-core machine one command's CPU varies by +-20 %
# from round to round (2.2 to 3.3 s at the default H in one run of 5), which moved the medians of 5
# by 0.2 s between two runs of the same code
ROUNDS = 9
HELP_ROUNDS = 3
EXE = str(Path(sys.executable).with_name("frictionkit"))
BELT_DEFAULT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
                "--from-hopf", "1", "--out", "belt_default.h5", "-q"]
BELT = BELT_DEFAULT[:-3] + ["-H", "30", "--out", "belt.h5", "-q"]
BELT_H48 = BELT_DEFAULT[:-3] + ["-H", "48", "--out", "belt48.h5", "-q"]
FORBIDDEN = ("sympy", "frictionkit.codegen", "matplotlib", "scipy.optimize", "scipy.interpolate")
AUTO_NTST = 100


def _env():
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def child_cpu(argv, cwd):
    """CPU seconds (user + system) of the process ``argv`` and its children, run to its end;
    and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... failed ({run.returncode}): {run.stderr[-1500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), run.stdout


_MODULES = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules)) + "\\n"))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def imported_modules(argv, cwd):
    """The modules the process ``frictionkit *argv`` has imported when it ends."""
    run = subprocess.run([sys.executable, "-c", _MODULES, EXE, *argv], cwd=cwd, env=_env(), check=True,
                         capture_output=True, text=True)
    return set(run.stderr.rsplit("MODULES ", 1)[1].split())


def imports_by_package(argv, cwd, top=12):
    """Where the imports of ``frictionkit *argv`` spend their time, by top-level package: the
    self times of ``python -X importtime`` summed per package, as shares of their total (the
    largest ``top``).  Shares, not seconds: importtime measures wall time, which on a loaded
    machine counts the waits for a core too."""
    run = subprocess.run([sys.executable, "-X", "importtime", EXE, *argv], cwd=cwd, env=_env(), check=True,
                         capture_output=True, text=True)
    totals = {}
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line[len("import time:"):].split("|")
        name = name.strip()
        package = "frictionkit." + name.split(".")[1] if name.startswith("frictionkit.") else name.split(".")[0]
        totals[package] = totals.get(package, 0) + int(self_us)
    total = sum(totals.values())
    return {"modules": sum(1 for line in run.stderr.splitlines() if line.startswith("import time:")) - 1,
            "share_by_package": {k: round(v / total, 3) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])[:top]}}


# the command run twice in one process: the second run's CPU is the in-process figure
_IN_PROCESS = """
import json, resource, sys
from frictionkit.runtime.cli import main
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
argv = sys.argv[1:]
t0 = cpu()
main(argv, prog_name="frictionkit", standalone_mode=False)
t1 = cpu()
main(argv, prog_name="frictionkit", standalone_mode=False)
t2 = cpu()
print("IN_PROCESS " + json.dumps({"first_s": t1 - t0, "second_s": t2 - t1}))
"""

# AUTO-07p's whole process: bifpy imported, the model module loaded, the two runs (native path)
_AUTO = """
import importlib.util, json, resource, sys
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
from bifpy import auto
from bifpy.results import PointType
path, settings = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("belt_auto", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
t0 = cpu()
eq = auto.run(mod.func, mod.stpnt, settings["eq"], icu=[1], jac=mod.jac_equilibrium, transpile=True)
hopf = [p for b in eq.branches for p in b.points if p.point_type == PointType.HOPF_BIFURCATION]
po = auto.restart(mod.func, settings["po"], restart_point=hopf[0], icu=[1, auto.PERIOD_INDEX],
                  isw=auto.ISW_HOPF_TO_PERIODIC_ORBIT, source_ips=auto.IPS_EQUILIBRIUM, jac=mod.jac_periodic,
                  transpile=True, stop=settings["stop"])
t1 = cpu()
pts = [p for b in po.branches for p in b.points]
print("AUTO " + json.dumps({"in_process_s": t1 - t0, "hopf": [float(p.parameters[0]) for p in hopf],
                            "folds": [float(p.parameters[0]) for p in pts if p.point_type == PointType.FOLD],
                            "points": len(pts)}))
"""


def _tagged(stdout, tag):
    return json.loads(stdout.rsplit(tag + " ", 1)[1].splitlines()[0])


def auto_setup(directory):
    """``(argv, info)``: the command of AUTO-07p's whole process for the belt diagram, with the
    model module written to ``directory``; ``argv`` is None (``info`` says why) without the peer."""
    from benchmarks import bench_auto as ba
    auto, info = ba.auto_peer()
    if auto is None:
        return None, info
    if not info.get("native_path"):
        return None, dict(info, available=False, reason="gfortran missing: no native AUTO-07p path to compare")
    from frictionkit.runtime import load_model
    case = next(c for c in ba.CASES if c["name"] == "belt")
    spec = case["spec"]()
    model = load_model(spec, continuation=case["continuation"], **case["params"])
    mod, check = ba.auto_model(directory, case, spec, model)
    if mod is None:
        return None, dict(info, available=False, reason=f"the printed AUTO model failed its check: {check}")
    a, b = case["eq_range"]
    settings = {
        "eq": dict(ba.EQ_SETTINGS, ips=auto.IPS_EQUILIBRIUM, ndim=case["ndim"], ds=0.01 * (1 if b > a else -1),
                   rl0=case["auto_eq_bounds"][0], rl1=case["auto_eq_bounds"][1]),
        "po": dict(ba.PO_SETTINGS, ips=auto.IPS_PERIODIC_ORBIT, ndim=case["ndim"], ntst=AUTO_NTST,
                   rl0=case["po_range"][0], rl1=case["po_range"][1]),
        "stop": case["auto_stop"],
    }
    script = Path(directory) / "auto_whole_process.py"
    script.write_text(_AUTO)
    return [sys.executable, str(script), str(Path(directory) / "belt_auto.py"), json.dumps(settings)], info


def help_commands():
    """``frictionkit ... --help`` of every command (subcommands of the groups included)."""
    import click
    from frictionkit.runtime.cli import main
    ctx = click.Context(main)
    out = {}
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        subs = cmd.list_commands(ctx) if isinstance(cmd, click.Group) else [None]
        for sub in subs:
            label = name if sub is None else f"{name} {sub}"
            out[label] = label.split() + ["--help"]
    return out


def _fold(path):
    from frictionkit.runtime import load_branch
    folds = load_branch(path, "periodic").special_points("fold")
    return float(folds[0].param) if folds else None


def _median(values):
    return statistics.median(values) if values else None


def main(rounds=ROUNDS, help_rounds=HELP_ROUNDS) -> dict:
    with tempfile.TemporaryDirectory() as cwd:
        auto_argv, auto_info = auto_setup(cwd)
        # fills the build cache and the bytecode caches: not measured
        for argv in (BELT, BELT_H48, BELT_DEFAULT, ["--help"]):
            child_cpu([EXE, *argv], cwd)
        helps = help_commands()
        help_runs = {name: [] for name in ["version", "help", *helps]}
        for _ in range(help_rounds):
            for name, argv in [("version", ["--version"]), ("help", ["--help"]), *helps.items()]:
                help_runs[name].append(round(child_cpu([EXE, *argv], cwd)[0], 3))
        runs = {"cli_h30": [], "cli_h48": [], "cli_default": [], "auto": [], "cli_in_process_h30": [],
                "cli_in_process_default": [], "auto_in_process": []}
        auto_out = None
        for _ in range(rounds):
            runs["cli_h30"].append(child_cpu([EXE, *BELT], cwd)[0])
            if auto_argv is not None:
                cpu, out = child_cpu(auto_argv, cwd)
                auto_out = _tagged(out, "AUTO")
                runs["auto"].append(cpu)
                runs["auto_in_process"].append(auto_out["in_process_s"])
            runs["cli_h48"].append(child_cpu([EXE, *BELT_H48], cwd)[0])
            runs["cli_default"].append(child_cpu([EXE, *BELT_DEFAULT], cwd)[0])
            _, out = child_cpu([sys.executable, "-c", _IN_PROCESS, *BELT], cwd)
            runs["cli_in_process_h30"].append(_tagged(out, "IN_PROCESS")["second_s"])
            _, out = child_cpu([sys.executable, "-c", _IN_PROCESS, *BELT_DEFAULT], cwd)
            runs["cli_in_process_default"].append(_tagged(out, "IN_PROCESS")["second_s"])
        modules = imported_modules(BELT, cwd)
        forbidden = [f for f in FORBIDDEN if any(m == f or m.startswith(f + ".") for m in modules)]
        imports = dict(forbidden_imported=forbidden, **imports_by_package(BELT, cwd))
        folds = {"cli_h30": _fold(Path(cwd) / "belt.h5"), "cli_h48": _fold(Path(cwd) / "belt48.h5"),
                 "cli_default": _fold(Path(cwd) / "belt_default.h5"),
                 "auto_ntst100": (auto_out or {}).get("folds", [None])[0]}
    med = {name: _median(values) for name, values in runs.items()}
    helps_med = {name: _median(values) for name, values in help_runs.items()}
    slowest_help = max(helps_med, key=helps_med.get)
    belt = {"cpu_s": med, "per_round_cpu_s": {k: [round(v, 3) for v in vals] for k, vals in runs.items()},
            "folds": folds, "fold_converged": 10.2874838639, "auto07p": auto_info}
    if med["auto"]:
        belt["whole_process_ratio_h30"] = med["cli_h30"] / med["auto"]
        belt["whole_process_ratio_h48"] = med["cli_h48"] / med["auto"]
        belt["whole_process_ratio_default"] = med["cli_default"] / med["auto"]
        belt["in_process_ratio_h30"] = med["cli_in_process_h30"] / med["auto_in_process"]
        belt["in_process_ratio_default"] = med["cli_in_process_default"] / med["auto_in_process"]
    belt["cli_h30_outside_the_command_s"] = med["cli_h30"] - med["cli_in_process_h30"]
    belt["cli_default_outside_the_command_s"] = med["cli_default"] - med["cli_in_process_default"]
    targets = {"version_cpu_s": [helps_med["version"], 0.3, helps_med["version"] < 0.3],
               "help_cpu_s": [helps_med["help"], 0.3, helps_med["help"] < 0.3],
               "every_command_help_cpu_s": [helps_med[slowest_help], 0.3, helps_med[slowest_help] < 0.3,
                                            slowest_help],
               "belt_diagram_without_sympy_codegen_matplotlib": not imports["forbidden_imported"]}
    if med["auto"]:
        targets["belt_whole_process_vs_auto"] = [belt["whole_process_ratio_h30"], 1.0,
                                                 belt["whole_process_ratio_h30"] <= 1.0]
        targets["belt_whole_process_vs_auto_default_h"] = [belt["whole_process_ratio_default"], 1.0,
                                                           belt["whole_process_ratio_default"] <= 1.0]
    return {"rounds": rounds, "help_rounds": help_rounds, "help_cpu_s": helps_med, "help_per_round_cpu_s": help_runs,
            "belt_diagram": belt, "imports": imports, "targets": targets}


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
