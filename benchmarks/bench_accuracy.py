"""The adaptive harmonic count (issue 26 item 2): accuracy met and CPU against the fixed H = 30.

For the seed-000 belt (n = 10, FN = 5, Vb from 0.05 to 12) and the tanh x exp belt
(examples/tanh_exp_belt.py, vb from 1.5 down to 0.1), from the first Hopf point:

* the CPU (user + system) of the whole ``frictionkit continue ... --from-hopf 1 -q`` process
  without ``--harmonics`` (the adaptive count for the error tolerance 1e-6) and with ``-H 30``
  (the fixed default before issue 26), read with ``getrusage(RUSAGE_CHILDREN)`` around each
  child, the two commands alternating, medians over ``ROUNDS`` (a run before the rounds fills
  the build cache);
* the H the adaptive branch chose along itself (smallest and largest, and each segment's H and
  parameter range) and its largest estimated orbit error;
* the fold of cycles of each branch against AUTO-07p's (NTST 100 and 200 agree to all printed
  digits, README "Comparison with AUTO-07p", ``benchmarks/bench_auto.py``): relative error;
* the relative error of the period at ``CHECKS`` points of each branch (evenly spread step
  ends) against the same orbit corrected at fixed parameter with ``H_REF`` harmonics and
  twice the default samples: the adaptive branch's and the fixed H = 30 branch's.

Run: ``python benchmarks/run.py accuracy`` (writes ``benchmarks/results/accuracy.json``).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ROUNDS = 3
CHECKS = 12
H_REF = 150
EXE = str(Path(sys.executable).with_name("frictionkit"))
CASES = {
    "belt": dict(cli=["belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5"],
                 model=("belt", "Vb", dict(n=10, FN=5)), range=(0.05, 12.0), auto_fold=10.2874838639),
    "tanh_exp_belt": dict(cli=[str(ROOT / "examples" / "tanh_exp_belt.py"), "--param", "vb", "--start", "1.5",
                               "--stop", "0.1"],
                          model=(str(ROOT / "examples" / "tanh_exp_belt.py"), "vb", {}), range=(1.5, 0.1),
                          auto_fold=0.98434561264),
}


def _cpu(args, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([EXE, "continue", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _period_errors(br, checks=CHECKS):
    from frictionkit.runtime.discretizations._aft import default_n_t
    from frictionkit.runtime.engine._newton import correct
    disc = br.discretization
    ends = np.unique(br.step_ends)[:-1]
    out = []
    for i in ends[np.linspace(0, len(ends) - 1, checks).astype(int)]:
        Z = br.solutions[i]
        big, Zb = disc.resize(Z, H_REF, n_t=2 * default_n_t(H_REF, True))
        Zr, _ = correct(big, Zb, np.eye(big.size)[-1], Z[-1], max_iter=30)
        w, wr = disc.unpack(Z)["omega"], big.unpack(Zr)["omega"]
        out.append(dict(param=float(Z[-1]), period_error=abs(wr / w - 1)))
    return out


def main() -> dict:
    from frictionkit.runtime import load_model
    from frictionkit.runtime.drivers._compose import run_continuation
    from frictionkit.runtime.drivers._accuracy import error_of
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            adaptive = [*case["cli"], "--from-hopf", "1", "-q"]
            fixed = [*adaptive, "-H", "30"]
            _cpu(fixed, tmp)                         # fills the build cache
            times = {"adaptive": [], "fixed_h30": []}
            for _ in range(ROUNDS):
                times["adaptive"].append(_cpu(adaptive, tmp))
                times["fixed_h30"].append(_cpu(fixed, tmp))
            med = {k: statistics.median(v) for k, v in times.items()}
            path, param, values = case["model"]
            model = load_model(path, continuation=param, **values)
            lo, hi = case["range"]
            per = {}
            for label, H in (("adaptive", None), ("fixed_h30", 30)):
                _, br = run_continuation(model, lo, hi, start="hopf", harmonics=H, progress=False,
                                         echo=lambda *a: None)
                errs = _period_errors(br)
                folds = [sp.param for sp in br.special_points("fold")]
                per[label] = dict(harmonics=int(br.discretization.H), n_t=int(br.discretization.n_t),
                                  harmonics_range=[int(np.min(br.accuracy["harmonics"])),
                                                   int(np.max(br.accuracy["harmonics"]))],
                                  folds=folds, fold_error=[abs(f / case["auto_fold"] - 1) for f in folds],
                                  worst_estimated_error=float(np.nanmax(error_of(br.accuracy))),
                                  worst_period_error=max(e["period_error"] for e in errs), periods=errs,
                                  segments=(br.provenance.get("adaptive_harmonics") or {}).get("segments"))
            res[name] = dict(cpu_s=times, cpu_median_s=med, cpu_ratio=med["adaptive"] / med["fixed_h30"],
                             **per)
    return res


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2, default=str))
