"""Seed 002 Fig. 3: continued bifurcation diagram of the weakening-strengthening belt oscillator.

Run:  python examples/seed002_fig3.py [--sets mu0 ...] [--out DIR] [--quick]

For each parameter set (seed 002 eq. 16: xi = 0.05, mu_d = 0.5, mu_st/mu_d = 2, v0 = 0.5,
mu_v in {-0.03, 0, 0.02, 0.05}; eq. 19: the Saha VW and VWS sets with xi = 0.0113):

1. the bounds of the paper: v_lw (formula after eq. 9) and v_up (eq. 15 with A omega = v_d);
2. the fold of cycles of the non-smooth model, exactly: the unstable sliding cycle that
   grazes v_rel = 0 (shooting on the slip branch of the law, ``seeds.seed002.grazing_fold``);
3. the zoo model ``weakstrong`` (|v| regularized by sqrt(v^2 + delta^2)) continued in vd:
   the sliding equilibrium and its Hopf point, the periodic branch from the Hopf point by
   the ANM (HBM) for each delta of the plan, H rising along a ladder until the fold moves by
   less than 1e-4 (relative) between two H; its fold of cycles and stability; the fold of the
   last H recomputed by shooting (``seeds.seed002.shooting_fold``);
4. HDF5 files per branch and a PNG like Fig. 3 (peak-to-peak amplitude of x: 2 A).

Printed: one table row per set and delta (paper v_lw / v_up, Hopf, folds per H, relative
change of the fold between the two H, shooting fold, grazing fold).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from frictionkit.runtime import (HBMDiscretization, equilibrium_branch, load_branch, load_model, periodic_branch,
                                 periodic_start_from_hopf, plot_branches)
from frictionkit.runtime.analysis._energy import v_lw_exponential, v_up
from frictionkit.runtime import ContinuationProblem, NewtonOptions, continuation
from seeds.seed002 import grazing_fold, shooting_fold, shooting_start

#: seed 002 eq. (16) (mu_st / mu_d = 2) and eq. (19) (Saha et al. VW / VWS, xi = 0.0113)
SETS = {
    "muv-0.03": dict(xi=0.05, mud=0.5, mus=1.0, muv=-0.03, v0=0.5),
    "muv0": dict(xi=0.05, mud=0.5, mus=1.0, muv=0.0, v0=0.5),
    "muv0.02": dict(xi=0.05, mud=0.5, mus=1.0, muv=0.02, v0=0.5),
    "muv0.05": dict(xi=0.05, mud=0.5, mus=1.0, muv=0.05, v0=0.5),
    "saha-VW": dict(xi=0.0113, mud=0.48, mus=1.0, muv=0.0, v0=0.057),
    "saha-VWS": dict(xi=0.0113, mud=0.38, mus=1.0, muv=0.009, v0=0.08),
}

#: (delta, H ladder): H rises along the ladder until the fold changes by < 1e-4 (relative)
#: between two consecutive H
PLAN = [(1e-2, (30, 60, 120)), (1e-3, (80, 120, 160))]
QUICK_PLAN = [(1e-2, (30, 60))]
TOL = 1e-4


def exact_law(mud, mus, muv, v0, **_):
    """Signed friction force of seed 002 eqs. (2)-(3) (no regularization): F(v_rel)."""
    def F(v):
        s = np.abs(v)
        return -np.sign(v) * (mud + (mus - mud) * np.exp(-s / v0) + muv * s / v0)
    return F


def shooting_branch(model, hopf, lam_lo, lam_hi, max_steps=400):
    """The periodic branch by pseudo-arclength shooting from a small HBM cycle near the Hopf point.

    For the steep Saha laws, where the HBM with H <= 60 does not converge: shooting on the
    original ODE (LSODA, rtol 1e-10) through the fold of cycles to the stick-slip cycles.
    """
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=20)
    small = periodic_branch(disc, Z, lam_lo, lam_hi, d, method="anm", options=dict(max_steps=4, stability=False))
    sd, Zs = shooting_start(model, disc, small.solutions[-1], rtol=1e-10, atol=1e-12)
    opts = NewtonOptions(lam_min=lam_lo, lam_max=lam_hi, step=0.05, max_step=0.1, max_steps=max_steps,
                         stop_on_return=False, branch_points=False, stability=False, newton_xtol=1e-8,
                         residual_tolerance=1e-8)
    return continuation(ContinuationProblem(sd, Zs, 1.0), "newton", opts)


def run_set(name, p, plan, out, log, reuse=False, shooting=False):
    row = dict(set=name, **p)
    row["v_lw_paper"] = v_lw_exponential(p["xi"], p["mud"], p["mus"], p["muv"], p["v0"])
    row["v_up_paper"] = v_up(p["xi"], (1e-3, 50.0), law=exact_law(**p))
    t = time.time()
    try:
        g = grazing_fold(**p, vd_max=max(20.0, 3 * row["v_up_paper"]))
        row["slip_hopf"] = g["hopf"]
        row["grazing_fold"] = g["vd"]
        row["grazing_amplitude"] = g["amplitude"]
    except Exception as exc:                  # reported, not hidden
        g = dict(vd=float("nan"))
        row["grazing_fold"] = float("nan")
        row["grazing_error"] = str(exc)
        log(f"[{name}] grazing fold failed: {exc}")
    row["grazing_time_s"] = time.time() - t
    log(f"[{name}] v_lw = {row['v_lw_paper']:.6f}, v_up = {row['v_up_paper']:.6f}, "
        f"grazing fold (delta = 0, shooting) = {g['vd']:.8f}")
    lam_lo = 0.5 * row["v_lw_paper"]
    lam_hi = 1.5 * np.nanmax([row["v_up_paper"], g["vd"]])
    row["runs"] = []
    for delta, Hs in plan:
        model = load_model("weakstrong", continuation="vd", **p, delta=delta)
        eq = equilibrium_branch(model, lam_hi, lam_lo)
        eq.save(out / f"{name}_delta{delta:g}_equilibria.h5")
        hopf = eq.special_points("hopf")
        if len(hopf) != 1:
            log(f"[{name}] delta = {delta:g}: {len(hopf)} Hopf points, skipped")
            continue
        h = hopf[0]
        run = dict(delta=delta, hopf=h.param, folds={}, branches=[])
        branches = [eq]
        for H in Hs:
            t = time.time()
            path = out / f"{name}_delta{delta:g}_H{H}.h5"
            if reuse and path.exists():
                br = load_branch(path)
                disc = HBMDiscretization(model, H)
            else:
                disc, Z, d = periodic_start_from_hopf(model, h, harmonics=H)
                br = periodic_branch(disc, Z, lam_lo, lam_hi, d, method="anm", options=dict(max_steps=600))
                br.save(path)
            folds = [s.param for s in br.special if s.kind == "fold"]
            run["folds"][H] = folds
            run["branches"].append(dict(H=H, file=path.name, status=br.status, points=len(br),
                                        seconds=round(time.time() - t, 1), folds=folds,
                                        stable_first=float(br.stable[1]), stable_last=float(br.stable[-1]),
                                        start_direction=float(np.sign(br.param[1] - br.param[0]))))
            log(f"[{name}] delta = {delta:g}, H = {H}: {br.status}, {len(br)} points, folds {folds}, "
                f"{time.time() - t:.1f} s")
            branches.append(br)
            done = [k for k in run["folds"] if len(run["folds"][k]) == 1]
            if len(done) >= 2 and len(folds) == 1:
                f_prev = run["folds"][done[-2]][0]
                run["fold"], run["H"] = folds[0], H
                run["fold_change"] = abs(folds[0] - f_prev) / abs(folds[0])
                if run["fold_change"] < TOL:
                    break
        if "fold" in run:
            if run["fold_change"] >= TOL:
                log(f"[{name}] delta = {delta:g}: fold NOT converged to {TOL:g} at H = {run['H']} "
                    f"(change {run['fold_change']:.2e})")
            try:
                t = time.time()
                sf = shooting_fold(model, disc, br.special_points("fold")[0].solution, method="LSODA")
                run["shooting_fold"] = sf["lam"]
                run["shooting_seconds"] = round(time.time() - t, 1)
                log(f"[{name}] delta = {delta:g}: shooting fold {sf['lam']:.10f} "
                    f"(HBM H = {run['H']}: {run['fold']:.10f}), {time.time() - t:.1f} s")
            except Exception as exc:          # reported, not hidden
                run["shooting_error"] = str(exc)
                log(f"[{name}] delta = {delta:g}: shooting fold failed: {exc}")
        else:
            run["fold"] = None
            log(f"[{name}] delta = {delta:g}: no H with exactly one fold ({run['folds']}): not converged")
            if shooting:
                t = time.time()
                sb = shooting_branch(model, h, lam_lo, lam_hi)
                sb.save(out / f"{name}_delta{delta:g}_shooting.h5")
                sfolds = [s.param for s in sb.special if s.kind == "fold"]
                run["shooting_branch_folds"] = sfolds
                log(f"[{name}] delta = {delta:g}: shooting branch {sb.status}, {len(sb)} points, folds {sfolds}, "
                    f"{time.time() - t:.1f} s")
        row["runs"].append(run)
        fig = plot_branches(branches, state="x", title=f"seed 002 Fig. 3, {name}, delta = {delta:g}: "
                                                         "solid stable, dashed unstable")
        ax = fig.axes[0]
        for v, lab, c in ((row["v_lw_paper"], "v_lw (eq. 9)", "tab:red"),
                          (row["v_up_paper"], "v_up (eq. 15)", "tab:green"),
                          (g["vd"], "grazing fold (delta = 0)", "k")):
            if np.isfinite(v):
                ax.axvline(v, color=c, ls=":", lw=1, label=lab)
        ax.legend(fontsize=7, loc="best")
        fig.savefig(out / f"{name}_delta{delta:g}.png", dpi=120)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    ap.add_argument("--out", default="seed002_fig3")
    ap.add_argument("--quick", action="store_true", help="delta = 1e-2 only (H = 30, 60)")
    ap.add_argument("--reuse", action="store_true", help="load branches already saved in --out")
    ap.add_argument("--shooting", action="store_true",
                    help="where the HBM fold does not converge: the branch by pseudo-arclength shooting")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plan = QUICK_PLAN if args.quick else PLAN
    rows = []
    with open(out / "log.txt", "a") as logf:
        def log(msg):
            print(msg, flush=True)
            logf.write(msg + "\n")
            logf.flush()
        for name in args.sets:
            rows.append(run_set(name, SETS[name], plan, out, log, args.reuse, args.shooting))
            (out / "summary.json").write_text(json.dumps(rows, indent=1, default=float))
    print("\nset | v_lw (eq. 9) | v_up (eq. 15) | grazing fold (delta=0) | delta | Hopf | fold (H) | "
          "rel. change | shooting fold")
    for r in rows:
        for run in r["runs"]:
            print(f"{r['set']} | {r['v_lw_paper']:.6f} | {r['v_up_paper']:.6f} | {r['grazing_fold']:.6f} | "
                  f"{run['delta']:g} | {run['hopf']:.8f} | "
                  f"{run.get('fold') if run.get('fold') is None else round(run['fold'], 8)} (H={run.get('H')}) | "
                  f"{run.get('fold_change', float('nan')):.2e} | {run.get('shooting_fold', float('nan')):.8f}")


if __name__ == "__main__":
    main()
