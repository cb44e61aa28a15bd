"""Cost of a 100-point torus branch (``torus``, two-frequency AFT), and the ANM against
pseudo-arclength Newton.

The forced cubic-friction belt oscillator of ``tests/models/torus_specs.py`` (w = 2.5): the
periodic AFT branch in A (H = 10) locates its Neimark-Sacker point (A ~ 1.214); the torus
branch is continued from there towards A = 0.05 with at most 100 points (``max_step`` 0.01 so
that the budget, not the range, ends it), for the box truncation (8, 8) and the diamond one
(8, 8) (about half the harmonics).  Reported per truncation: unknowns, points, continuation
steps, LU factorizations (each of the dense bordered Jacobian) and Jacobians per step, CPU
(``time.process_time``) and wall time, CPU per step; then the CPU of one Jacobian assembly
and of one dense LU of that size, to show where the time goes.  These two runs are pseudo-arclength
Newton with the error and stability columns (as the command's default output).

``engines``: the same box (8, 8) continued by the ANM (order 20, the default where the model has
Taylor kernels) and by Newton, without the error and stability columns (the engines' own cost):
with the bench's step cap (``max_step`` 0.01, 100 steps) and over a fixed range (A from the NS
point down to 0.8, the default ``max_step`` 0.2).  Two runs of each, alternated; medians
(shared, noisy machine).
"""
import statistics
import time

import numpy as np
import scipy.linalg

from frictionkit.runtime import load_model, periodic_branch, torus
from frictionkit.runtime.discretizations._aft import AFTDiscretization

try:
    from tests.models.torus_specs import forced_cubic_belt
except ImportError:  # run from benchmarks/ without the repository root on sys.path
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.models.torus_specs import forced_cubic_belt

RUNS = 2
W = 2.5
ENGINES = ("newton", "anm")


def _cpu(f, *a, **k):
    c0, t0 = time.process_time(), time.perf_counter()
    out = f(*a, **k)
    return out, time.process_time() - c0, time.perf_counter() - t0


def main() -> dict:
    model = load_model(forced_cubic_belt(), "A", backend="numpy")
    disc = AFTDiscretization(model, 10)
    t = np.arange(64) * 2 * np.pi / W / 64
    amp = 0.3 / (1 - W * W)
    Z0 = disc.from_samples(np.vstack([0.4 + amp * np.cos(W * t), -amp * W * np.sin(W * t)]), W, 0.3)
    br = periodic_branch(disc, Z0, 0.3, 2.0, 1.0, options=dict(multiplier_stride=1))
    ns = br.special_points("ns")[0]
    cases = {"box (8, 8)": "box", "diamond (8, 8)": "diamond"}
    runs = {k: [] for k in cases}
    last = {}
    for _ in range(RUNS):
        for name, trunc in cases.items():
            tb, cpu, wall = _cpu(torus, br, ns, 0.05, 1.3, harmonics=(8, 8), truncation=trunc, eps=0.05,
                                 max_steps=100, step=0.01, max_step=0.01, method="newton")
            runs[name].append((cpu, wall))
            last[name] = tb
    engines = {"100 steps, max_step 0.01": dict(lam_min=0.05, max_steps=100, step=0.01, max_step=0.01),
               "A from the NS point to 0.8, max_step 0.2": dict(lam_min=0.8, max_steps=1000)}
    eng_runs = {(c, e): [] for c in engines for e in ENGINES}
    eng_last = {}
    for _ in range(RUNS):
        for case, kw in engines.items():
            for method in ENGINES:
                tb, cpu, wall = _cpu(torus, br, ns, lam_max=1.3, harmonics=(8, 8), eps=0.05, errors=False,
                                     stability=False, method=method, **kw)
                eng_runs[case, method].append((cpu, wall))
                eng_last[case, method] = tb
    out = {"model": "forced_cubic_belt (tests/models/torus_specs.py), w = 2.5, torus in A from the NS point",
           "ns_point_A": float(ns.param)}
    for name, tb in last.items():
        c = tb.counters
        cpu = statistics.median(r[0] for r in runs[name])
        wall = statistics.median(r[1] for r in runs[name])
        d = tb.discretization
        Z = tb.solutions[len(tb) // 2]
        _, jac_cpu, _ = _cpu(lambda: [d.jacobian(Z) for _ in range(5)])
        J = d.jacobian(Z)
        K = np.vstack([J, np.ones(d.size)])
        _, lu_cpu, _ = _cpu(lambda: [scipy.linalg.lu_factor(K) for _ in range(5)])
        out[name] = dict(unknowns=c["unknowns"], harmonics_kept=int(d.nk), grid=[d.N1, d.N2], points=c["points"],
                         steps=c["steps"], status=tb.status, lam_end=float(tb.lam[-1]),
                         lu_factorizations=c["factorizations"],
                         lu_per_step=round(c["factorizations"] / max(c["steps"], 1), 2),
                         jacobians_per_step=round(c["jacobian_evaluations"] / max(c["steps"], 1), 2),
                         cpu_s=round(cpu, 2), wall_s=round(wall, 2),
                         cpu_per_step_s=round(cpu / max(c["steps"], 1), 3),
                         one_jacobian_cpu_s=round(jac_cpu / 5, 4), one_lu_cpu_s=round(lu_cpu / 5, 4))
    out["engines"] = {"truncation": "box (8, 8)", "columns": "none (errors=False, stability=False)"}
    for case in engines:
        row = {}
        for method in ENGINES:
            tb = eng_last[case, method]
            c = tb.counters
            cpu = statistics.median(r[0] for r in eng_runs[case, method])
            row[method] = dict(points=c["points"], steps=c["steps"], status=tb.status, lam_end=float(tb.lam[-1]),
                               lu_factorizations=c["factorizations"],
                               lu_per_step=round(c["factorizations"] / max(c["steps"], 1), 2),
                               residuals=c["residual_evaluations"], cpu_s=round(cpu, 2),
                               wall_s=round(statistics.median(r[1] for r in eng_runs[case, method]), 2),
                               cpu_per_step_s=round(cpu / max(c["steps"], 1), 3))
        row["anm_cpu_over_newton"] = round(row["anm"]["cpu_s"] / max(row["newton"]["cpu_s"], 1e-9), 3)
        out["engines"][case] = row
    return out
