"""Cost of a period-doubling curve (``pd_curve``) on the LuGre belt of issue 26.

The LuGre belt (``tests/models/state_law_specs.py``), AFT H = 30 (128 samples), its doubling
near vb = 1.245 continued in s1 from 2.83 to 3.2 on the minimally augmented system
(``analysis/_pd_ns_curves.py``).  Reported per run: points, continuation steps, Newton
iterations (one Jacobian of the augmented system and one dense bordered LU each), residuals,
monodromy matrices (one per residual, ``m + 3`` per Jacobian for the differences of ``g``:
forward in the orbit's unknowns, central in ``mu``), CPU (``time.process_time``) and wall
time; then the CPU of one monodromy and of one AFT Jacobian, to show where the time goes (the
share is an estimate from those two timings), and for comparison the CPU of the one-parameter
branch in vb (1.35 -> 1.15, multipliers at every point) that locates the same doubling at one
s1.  Three runs of each, alternated; medians (shared, noisy machine).
"""
import statistics
import time

import numpy as np

from frictionkit.runtime import equilibrium_branch, load_model, pd_curve, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.analysis._pd_ns_curves import monodromy_of

try:
    from tests.models.state_law_specs import lugre
except ImportError:  # run from benchmarks/ without the repository root on sys.path
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.models.state_law_specs import lugre

RUNS = 3


def _cpu(f, *a, **k):
    c0, t0 = time.process_time(), time.perf_counter()
    out = f(*a, **k)
    return out, time.process_time() - c0, time.perf_counter() - t0


def main() -> dict:
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 2.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    br = periodic_branch(disc, Z, 0.0, 2.0, d, options=dict(points_per_step=4, multiplier_stride=1))
    pd = [s for s in br.special_points("pd") if 1.2 < s.param < 1.3][0]
    after = np.arange(pd.index + 1, len(br))
    start = br.solutions[after[np.argmax(br.param[after] >= 1.3)]]
    curve_runs, branch_runs = [], []
    for _ in range(RUNS):
        curve, cpu, wall = _cpu(pd_curve, br, pd, "s1", 2.83, 3.2)
        curve_runs.append(dict(cpu_s=cpu, wall_s=wall, status=curve.status, **curve.counters))
        one, cpu, wall = _cpu(periodic_branch, disc.on_model(model.with_params(s1=3.2)), start, 1.15, 1.35,
                              direction=-1.0, options=dict(points_per_step=4, multiplier_stride=1))
        branch_runs.append(dict(cpu_s=cpu, wall_s=wall, points=len(one), **one.counters))
    M_cpu = statistics.median(_cpu(monodromy_of, disc, pd.solution)[1] for _ in range(50))
    J_cpu = statistics.median(_cpu(disc.jacobian, pd.solution)[1] for _ in range(50))
    c = curve_runs[0]
    return dict(
        model="LuGre belt (issue 26), AFT H = 30, n_t = 128", curve="PD near vb = 1.245, s1 from 2.83 to 3.2",
        unknowns=c["unknowns"], points=c["points"], newton_iterations_with_lu=c["jacobians"],
        lu_per_point=c["jacobians"] / max(c["points"] - 1, 1), residuals=c["residuals"],
        monodromies=c["monodromies"], monodromies_per_jacobian=c["unknowns"] + 2,
        curve_cpu_s_median=statistics.median(r["cpu_s"] for r in curve_runs),
        curve_wall_s_median=statistics.median(r["wall_s"] for r in curve_runs),
        curve_cpu_per_point_s=statistics.median(r["cpu_s"] for r in curve_runs) / max(c["points"] - 1, 1),
        one_monodromy_cpu_s=M_cpu, one_aft_jacobian_cpu_s=J_cpu,
        monodromy_share_estimate=c["monodromies"] * M_cpu / statistics.median(r["cpu_s"] for r in curve_runs),
        one_parameter_branch_cpu_s_median=statistics.median(r["cpu_s"] for r in branch_runs),
        one_parameter_branch_points=branch_runs[0]["points"],
        runs=dict(curve=curve_runs, one_parameter_branch=branch_runs),
    )


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2, default=str))
