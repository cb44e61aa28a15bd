"""The error estimates' bordered Newton step of the seed-000 belt's default diagram (issue 29):
the 2H balance solved through the Schur complement of its kinematic rows by an LU at every
point (``_BorderedSystem``, today's path) against the full matrix solved by a kept LU
(``_FrozenLU`` on the whole bordered matrix, the path before).

The estimator's calls of ``frictionkit continue belt --param Vb --start 0.05 --stop 12 --set
n=10 FN=5 --from-hopf 1`` (the CLI's default: adaptive H, an estimate at every step end) are
recorded in-process, then replayed by fresh estimators of each path, the two paths alternating
over ``ROUNDS`` rounds (CPU of this process, ``OPENBLAS_NUM_THREADS=1`` recommended); medians.
``max_relative_difference``: the largest relative difference of each estimate between the two
(the kept LU accepts an answer within 1e-3 of the exact Newton step, the LU at every point is
the exact one).

Run: ``python benchmarks/run.py estimates`` (writes ``benchmarks/results/estimates.json``).
"""
import resource
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ROUNDS = 5
ARGV = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
        "--from-hopf", "1", "--out", "belt_default.h5", "-q"]


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def recorded_calls():
    """``[(disc, Z, t), ...]``: the estimator's calls of the default belt diagram."""
    import os
    from frictionkit.runtime.cli import main
    from frictionkit.runtime.discretizations import _error
    calls, own = [], _error._AFTErrors.__call__

    def record(self, Z, t):
        calls.append((self.disc, Z.copy(), t.copy()))
        return own(self, Z, t)
    _error._AFTErrors.__call__ = record
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            main(ARGV, prog_name="frictionkit", standalone_mode=False)
    finally:
        os.chdir(cwd)
        _error._AFTErrors.__call__ = own
    return calls


def replay(calls, path):
    """``(cpu_s, estimates)`` of the calls by fresh estimators (one per discretization)."""
    from frictionkit.runtime.discretizations import _error

    class FullKeptLU(_error._BorderedSystem):
        DIRECT_BELOW = 0                      # the kept LU at every size

        def __init__(self, disc):
            super().__init__(disc)
            self.red = self.K = None          # no elimination: the full bordered matrix

    estimators, out = {}, []
    t0 = _cpu()
    for disc, Z, t in calls:
        one = estimators.get(id(disc))
        if one is None:
            one = estimators[id(disc)] = _error._AFTErrors(disc)
            if path == "full_kept_lu":
                one.system = FullKeptLU(one.big)
        try:
            out.append(one(Z, t))
        except ValueError:                    # an equilibrium: no estimate
            out.append(None)
    return _cpu() - t0, out


def main(rounds=ROUNDS) -> dict:
    calls = recorded_calls()
    runs = {"reduced_lu": [], "full_kept_lu": []}
    got = {}
    for _ in range(rounds):
        for path in runs:
            cpu, got[path] = replay(calls, path)
            runs[path].append(cpu)
    worst = {}
    for a, b in zip(got["full_kept_lu"], got["reduced_lu"]):
        if a is None or b is None:
            continue
        for k, v in a.items():
            if np.isfinite(v) and v != 0:
                worst[k] = max(worst.get(k, 0.0), abs(b[k] - v) / abs(v))
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {"rounds": rounds, "estimates": len(calls), "cpu_s": med,
            "per_round_cpu_s": {k: [round(x, 3) for x in v] for k, v in runs.items()},
            "ms_per_estimate": {k: 1e3 * v / max(len(calls), 1) for k, v in med.items()},
            "ratio_reduced_over_full": med["reduced_lu"] / med["full_kept_lu"],
            "max_relative_difference": worst}


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
