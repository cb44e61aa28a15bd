"""Seed 004 Table 1: error of the arctan-smoothed 1-DOF stick-slip cycles at V_dr = 0.2.

Run:  python examples/seed004_table1.py [--eps 1e2 1e3 ...] [--aft]

Exact cycle: event-driven integration of seed 004 eqs. (2)-(3) (stick while |X| <= 1).
Smoothed cycles: the zoo model ``vrande1`` (eqs. 2, 4; |V| ~ sqrt(V^2 + 1e-6^2)) by shooting
(``solve_ivp`` LSODA with the model's exact Jacobian, ``seeds.seed004_cycles.seed004_cycle``), both sampled
at N = 200 points from the maximum of X; error e of eq. (5).  With ``--aft``, also the AFT
harmonic balance of the original ODE where it is affordable (eps <= 1e3: H = 200 / 800; the
recast HBM does not converge on these cycles, see the README).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from seeds.seed004_cycles import aft_cycle_from_max, seed004_cycle, seed004_exact_cycle, \
    seed004_smoothed_cycle
from frictionkit.runtime.nonsmooth import orbit_error

VDR, N = 0.2, 200
#: seed 004 Table 1
PAPER = {1e2: 2.9e-1, 1e3: 8.9e-2, 1e4: 2.4e-2, 1e5: 6.2e-3, 1e6: 1.5e-3}
#: AFT harmonics per eps (the smoothed corner needs H ~ eps)
AFT_H = {1e2: 200, 1e3: 800}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", nargs="*", type=float, default=list(PAPER))
    ap.add_argument("--aft", action="store_true")
    args = ap.parse_args(argv)
    exact = P, X, V = seed004_exact_cycle(VDR, n_samples=N)
    print(f"exact cycle: P = {P:.12f}, max X = {X[0]:.12f}")
    print("eps | paper e | shooting e | P (shooting) | AFT e (H) | seconds")
    rows = []
    for eps in args.eps:
        t = time.time()
        model, Ps, Xs, Vs, info = seed004_cycle(eps, VDR, exact=exact, n_samples=N)
        e = orbit_error(Xs, Vs, Ps, X, V, P)
        aft = ""
        if args.aft and eps in AFT_H:
            H = AFT_H[eps]
            _, Xf, Vf, _ = seed004_smoothed_cycle(model, VDR, info["x0"], Ps, n_samples=8 * H)
            Pa, Xa, Va = aft_cycle_from_max(model, VDR, Xf, Vf, Ps, H, n_samples=N)
            aft = f"{orbit_error(Xa, Va, Pa, X, V, P):.4e} (H={H})"
        rows.append((eps, e))
        print(f"{eps:.0e} | {PAPER.get(eps, float('nan')):.1e} | {e:.4e} | {Ps:.10f} | {aft} | "
              f"{time.time() - t:.1f}", flush=True)
    if len(rows) > 1:
        le, lr = np.log10([r[0] for r in rows]), np.log10([r[1] for r in rows])
        lp = np.log10([PAPER[r[0]] for r in rows if r[0] in PAPER])
        paper = f"{np.polyfit(le, lp, 1)[0]:.3f}" if len(lp) == len(le) else "n/a"
        print(f"fitted slope d log e / d log eps = {np.polyfit(le, lr, 1)[0]:.3f} (paper: {paper})")


if __name__ == "__main__":
    main()
