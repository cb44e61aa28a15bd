"""Stability cost per orbit and collocation (versus HBM) accuracy per unknown, seed 003 cases.

1. ``stability_cost``: for W1 (n = 10, Vb = 0.5) and W2 (Vb = 2.0), the time of each
   stability computation divided by the time of the solve of the orbit it belongs to:
   Floquet by the variational equation / the shooting solve; Floquet by condensing the
   collocation Jacobian / the collocation Newton solve; Hill / the HBM Newton solve (same H).
   Each solve starts from the same shooting-orbit guess.
2. ``accuracy``: on W1, the smallest N_int (p = 3 and p = 5) and H reaching a relative error
   of 1e-6 and 1e-10, with the unknowns per variable N_dis (p N_int + 1 and 2H + 1, seed 003
   §2.2), the total unknowns and the Newton wall time.  Error = max of the relative errors of
   omega and of the peak-to-peak of both states against shooting (rtol 1e-12).

Ratios are measured in one run (shared machine); absolute times are indicative.
"""
import time

import numpy as np

from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
from frictionkit.runtime.drivers._orbits import solve_collocation
from frictionkit.runtime.discretizations._hbm import HBMDiscretization
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.drivers._orbits import find_periodic_orbit, periodic_orbit_from_simulation
from frictionkit.runtime.analysis._floquet import floquet_collocation, floquet_variational
from frictionkit.runtime.analysis._hill import hbm_coefficients_from_samples, hill_multipliers
from scipy.sparse.linalg import splu

try:
    from tests.models import belt_handwritten
except ImportError:  # run from benchmarks/ without the repository root on sys.path
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.models import belt_handwritten


def _timed(f, *a, **k):
    t0 = time.perf_counter()
    out = f(*a, **k)
    return out, time.perf_counter() - t0


def _newton_fixed_lam(disc, Z, tol=1e-12, max_iter=30):
    """Plain Newton on Y at fixed lam with a sparse LU (same for HBM and collocation)."""
    Z = np.array(Z, dtype=float)
    for it in range(max_iter):
        R = disc.residual(Z)
        J = disc.jacobian(Z)
        J = J[:, :-1]
        J = J.tocsc() if hasattr(J, "tocsc") else J
        dY = splu(J).solve(-R) if hasattr(J, "tocsc") else np.linalg.solve(J, -R)
        Z[:-1] += dY
        if np.linalg.norm(dY) <= tol * np.linalg.norm(Z[:-1]):
            return Z, it + 1
    raise RuntimeError("Newton did not converge")


def _hbm_orbit(model, orbit, H):
    disc = HBMDiscretization(model, H)
    n_t = max(4 * H, 64)
    x = orbit.at(orbit.times(n_t), accurate=False)
    u = np.asarray(model.aux(x, orbit.times(n_t), orbit.lam))
    Z0 = disc.from_samples(u, orbit.omega, orbit.lam)
    (Z, _), t = _timed(_newton_fixed_lam, disc, Z0)
    return disc, Z, t


def _stability_cost(model, Vb, H, n_int):
    ref = periodic_orbit_from_simulation(model, Vb, [0.0, 0.0], 1.0)
    guess_x0 = ref.x0 * (1 + 1e-3)
    shoot, t_shoot = _timed(find_periodic_orbit, model, Vb, guess_x0, ref.T * (1 + 1e-4))
    var, t_var = _timed(floquet_variational, model, Vb, shoot.x0, shoot.T)
    disc = CollocationDiscretization(model, n_int, 3)
    Z0 = disc.from_orbit(ref)
    (Zc, info), t_col = _timed(solve_collocation, disc, Z0)
    col, t_colstab = _timed(floquet_collocation, disc, Zc)
    hdisc, Zh, t_hbm = _hbm_orbit(model, ref, H)
    coeffs = hdisc.unpack(Zh)["coefficients"][: model.n].ravel()
    omega_h = hdisc.unpack(Zh)["omega"]
    hill, t_hill = _timed(hill_multipliers, model, Vb, coeffs, omega_h, H)
    nontriv = var.nontrivial()[0].real
    return dict(
        Vb=Vb, harmonics=H, n_intervals=n_int,
        shooting_solve_s=t_shoot, floquet_variational_s=t_var, floquet_variational_fraction=t_var / t_shoot,
        collocation_solve_s=t_col, floquet_collocation_s=t_colstab,
        floquet_collocation_fraction=t_colstab / t_col,
        hbm_solve_s=t_hbm, hill_s=t_hill, hill_fraction=t_hill / t_hbm,
        nontrivial_multiplier_variational=nontriv,
        nontrivial_multiplier_collocation_diff=float(abs(col.nontrivial()[0] - nontriv)),
        nontrivial_multiplier_hill_diff=float(abs(hill.nontrivial()[0] - nontriv)),
        trivial_error=dict(variational=var.trivial_multiplier_error, collocation=col.trivial_multiplier_error,
                           hill=hill.trivial_multiplier_error),
    )


def _error(omega, ptp, ref):
    return float(max(abs(omega - ref.omega) / ref.omega, np.max(np.abs(ptp - ref.ptp) / ref.ptp)))


def _accuracy(model, Vb):
    ref = periodic_orbit_from_simulation(model, Vb, [0.0, 0.0], 1.0)
    out = {}
    for degree in (3, 5):
        rows = []
        for n_int in (10, 14, 20, 28, 40, 56, 80, 113, 160, 226, 320, 452, 640, 905, 1280):
            disc = CollocationDiscretization(model, n_int, degree)
            Z0 = disc.from_orbit(ref)
            (Z, info), t = _timed(solve_collocation, disc, Z0)
            u = disc.unpack(Z)
            err = _error(u["omega"], u["ptp"], ref)
            rows.append(dict(n_intervals=n_int, n_dis=disc.n_dis, unknowns=disc.size, error=err, solve_s=t))
            if err < 1e-10:
                break
        out[f"collocation_p{degree}"] = dict(rows=rows, **_thresholds(rows))
    rows = []
    for H in (5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 120):
        disc, Z, t = _hbm_orbit(model, ref, H)
        u = disc.unpack(Z)
        ptp = _trig_ptp(u["coefficients"][: model.n], H)
        err = _error(u["omega"], ptp, ref)
        rows.append(dict(harmonics=H, n_dis=2 * H + 1, unknowns=disc.size, error=err, solve_s=t))
        if err < 1e-10:
            break
    out["hbm"] = dict(rows=rows, **_thresholds(rows))
    return out


def _trig_ptp(coefficients, H):
    """Peak-to-peak of truncated Fourier series, extrema refined by a bounded scalar search."""
    from scipy.optimize import minimize_scalar
    k = np.arange(1, H + 1)
    out = []
    for c in coefficients:
        def x(theta, c=c):
            return c[0] + c[1::2] @ np.cos(k * theta) + c[2::2] @ np.sin(k * theta)
        grid = 2 * np.pi * np.arange(16 * H) / (16 * H)
        vals = np.array([x(t) for t in grid])
        d = grid[1]
        hi = -minimize_scalar(lambda t: -x(t), bounds=(grid[vals.argmax()] - d, grid[vals.argmax()] + d),
                              method="bounded", options=dict(xatol=1e-13)).fun
        lo = minimize_scalar(x, bounds=(grid[vals.argmin()] - d, grid[vals.argmin()] + d), method="bounded",
                             options=dict(xatol=1e-13)).fun
        out.append(max(hi, vals.max()) - min(lo, vals.min()))
    return np.array(out)


def _thresholds(rows):
    res = {}
    for tol in (1e-6, 1e-10):
        hit = next((r for r in rows if r["error"] < tol), None)
        res[f"for_{tol:g}"] = None if hit is None else dict(n_dis=hit["n_dis"], unknowns=hit["unknowns"],
                                                            solve_s=hit["solve_s"])
    return res


def main() -> dict:
    model = Model(belt_handwritten, {"n": 10, "FN": 5.0})
    return dict(
        stability_cost=dict(W1=_stability_cost(model, 0.5, 60, 160), W2=_stability_cost(model, 2.0, 160, 800)),
        accuracy_W1=_accuracy(model, 0.5),
    )


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2, default=str))
