"""Issue 24's "same answers" figures, measured the way ``tests/structures/test_condensed.py``
checks them (the tests assert the issue's tolerances; this records the values reached).

* The bowed string of ``tests/structures/_models.string`` with 8 modes, H = 20: the branch
  from the highest Hopf point by the condensed harmonic balance and by the uncondensed one of
  the reduced system (``discretization="aft-full"``); the condensed points' largest relative
  residual in the uncondensed system, the branch ends (the Hopf point) against each other, and
  at the middle orbit the multipliers of the condensed monodromy against the uncondensed
  Magnus monodromy on 8 times its grid.
* The fold of cycles of ``_models.fold_string(4)``, condensed and not: its parameter and
  frequency, and the condensed branch's multiplier crossing against the fold.
* 32 modes, H = 20: the residual of 12 steps' points in the uncondensed system, and the
  multipliers at the last one (uncondensed Magnus on 4 times its grid).
* 4 modes, H = 40: periods and peak-to-peak bow velocities at three points against the periodic
  orbit of an independent NumPy copy of the modal ODE by shooting (solve_ivp, rtol 1e-11).

Run: ``python benchmarks/run.py structure_answers`` (writes
``benchmarks/results/structure_answers.json``; about 3 s).
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _hopf_branch(model, method, harmonics, lam=(0.05, 0.6), **options):
    from frictionkit.runtime import equilibrium_branch, periodic_branch, periodic_start_from_hopf
    eq = equilibrium_branch(model, lam[1], lam[0])
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=harmonics, discretization=method)
    return periodic_branch(disc, Z, lam[0], lam[1], d, options=dict(stability=False, **options))


def _relative_residual(disc, Z):
    full, Zf = disc.full_solution(Z)
    return float(np.max(np.abs(full.residual(Zf))) / max(1.0, np.max(np.abs(Zf))))


def _multiplier_difference(disc, Z, refine):
    full, Zf = disc.full_solution(Z)
    a = np.sort_complex(np.linalg.eigvals(disc.monodromy(Z)))
    b = np.sort_complex(np.linalg.eigvals(full.monodromy(Zf, refine * full.n_t)))
    return float(np.abs(a - b).max())


def main() -> dict:
    sys.path.insert(0, str(ROOT))
    from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
    from tests.structures._models import fold_string, fold_string_hopf, string
    from tests.structures.test_condensed import _ptp, _shoot
    out = {}
    # 8 modes
    model = load_model(string(8), continuation="Vb")
    cond, full = (_hopf_branch(model, m, 20) for m in ("aft", "aft-full"))
    disc = cond.discretization
    a, b = cond.special_points("hopf")[0], full.special_points("hopf")[0]
    out["modes_8"] = {
        "residual_in_uncondensed": max(_relative_residual(disc, Z) for Z in cond.solutions[::3]),
        "branch_end_param_rel_diff": abs(a.param - b.param) / abs(b.param),
        "branch_end_omega_rel_diff": abs(a.omega - b.omega) / b.omega,
        "multipliers_abs_diff": _multiplier_difference(disc, cond.solutions[len(cond) // 2], 8)}
    # the fold of cycles
    fm = load_model(fold_string(4), continuation="Vb")
    feq = equilibrium_branch(fm, 0.05, 1.0)
    folds = {}
    for method in ("aft", "aft-full"):
        d2, Z2, t2 = periodic_start_from_hopf(fm, fold_string_hopf(feq), harmonics=20, discretization=method)
        folds[method] = periodic_branch(d2, Z2, 0.05, 1.0, t2,
                                        options=dict(stability=(method == "aft"))).special_points("fold")[0]
    fa, fb = folds["aft"], folds["aft-full"]
    out["fold"] = {"param_rel_diff": abs(fa.param - fb.param) / fb.param,
                   "omega_rel_diff": abs(fa.omega - fb.omega) / fb.omega,
                   "multiplier_crossing_rel_diff": abs(fa.data["crossing_param"] - fa.param) / fa.param}
    # 32 modes
    br = _hopf_branch(load_model(string(32), continuation="Vb"), "aft", 20, max_steps=12)
    disc = br.discretization
    out["modes_32"] = {"residual_in_uncondensed": max(_relative_residual(disc, Z) for Z in br.solutions[2::4]),
                       "multipliers_abs_diff": _multiplier_difference(disc, br.solutions[-1], 4)}
    # time integration, 4 modes, H = 40
    br = _hopf_branch(load_model(string(4), continuation="Vb"), "aft", 40)
    disc = br.discretization
    points = []
    for i in (2, len(br) // 2, len(br) - 3):
        Z = br.solutions[i]
        omega = disc.unpack(Z)["omega"]
        C = disc.full_coefficients(Z)
        x, T, sol, phi, _ = _shoot(4, br.param[i], C[:, 0] + C[:, 1::2].sum(axis=1), 2 * np.pi / omega, fix=4)
        ptp = _ptp(sol, phi, 4, T)
        points.append({"Vb": float(br.param[i]), "period_rel_diff": abs(T - 2 * np.pi / omega) / T,
                       "v_bow_ptp_rel_diff": abs(ptp - br.ptp["v_bow"][i]) / ptp})
    out["time_integration_4_modes"] = points
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
