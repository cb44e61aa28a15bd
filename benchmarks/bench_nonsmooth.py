"""Non-smooth references: cost ratios and the reproduced tables (issue 6).

* cost of one exact Coulomb cycle (seed 000 §3) versus one event-driven cycle of the same
  system (ratio measured in one run);
* seed 004 Table 1: error e (eq. 5) of the arctan-smoothed law versus the event-driven
  'exact' cycle, V_dr = 0.2, with the published values;
* seed 001 §3.1: phase-time errors of the explicit scheme at h = 1e-3, 1e-4, 1e-5 and the
  fitted order;
* seed 001 Table 1 procedure: 10 calibration runs on a synthetic record with known
  parameters plus noise (mean, std, coefficient of variation), and the same over 10 noise
  realisations.
"""
import time

import numpy as np
from scipy.integrate import solve_ivp

from frictionkit.runtime.nonsmooth import (coulomb_cycle, belt_oscillator, integrate_stick_slip, BeltChain,
                                          one_mass_cycle, orbit_error, two_phase_explicit, two_phase_event_driven,
                                          shaw_forcing, SHAW_P, calibrate_quasi_static, calibration_table,
                                          synthetic_record, CALIBRATION_PARAMETERS)
from frictionkit.runtime.nonsmooth._calibration import SYNTHETIC_TRUTH, SYNTHETIC_BOUNDS, SYNTHETIC_K_BP


def _best_time(fun, repeat=5, number=1):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fun()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def coulomb_cost():
    vb = 0.5
    cyc = coulomb_cycle(Vb=vb)
    chain = belt_oscillator(Vb=vb)

    def event_cycle():
        # one period from the stick-release state (eq. 9), same tolerance as the tests
        return integrate_stick_slip(chain, [cyc.y0], [vb], cyc.period, rtol=1e-12)
    t_exact = _best_time(lambda: coulomb_cycle(Vb=vb), repeat=7, number=50)
    t_event = _best_time(event_cycle, repeat=5, number=3)
    return {"Vb": vb, "exact_cycle_s": t_exact, "event_driven_cycle_s": t_event,
            "ratio_event_over_exact": t_event / t_exact}


def seed004_table1():
    V, g = 0.2, 3.0
    chain = BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [1.0], [lambda s: 1.0 / (1.0 + g * s)], V)
    P, _, X, Xd = one_mass_cycle(chain, n_samples=200, start="xmax")
    paper = {100.0: 2.9e-1, 1e3: 8.9e-2, 1e4: 2.4e-2}
    rows = []
    for eps, e_paper in paper.items():
        def f(t, z, eps=eps):
            vr = z[1] - V
            return [z[1], -z[0] - (2 / np.pi) * np.arctan(eps * vr) / (1 + g * abs(vr))]

        def jac(t, z, eps=eps):
            vr = z[1] - V
            d = 1 + g * abs(vr)
            dF = -(2 / np.pi) * (eps / (1 + (eps * vr) ** 2) / d - np.arctan(eps * vr) * g * np.sign(vr) / d**2)
            return [[0.0, 1.0], [-1.0, dF]]

        def xmax(t, z):
            return z[1]
        xmax.direction = -1
        sol = solve_ivp(f, (0, 4 * P), [X[0], Xd[0]], method="Radau", jac=jac, rtol=1e-10, atol=1e-12,
                        events=xmax, dense_output=True)
        te = sol.t_events[0]
        Ps = te[-1] - te[-2]
        z = sol.sol(te[-2] + np.arange(200) * Ps / 200)
        rows.append({"eps": eps, "e": orbit_error(z[0], z[1], Ps, X, Xd, P), "e_paper": e_paper, "period": Ps})
    return {"exact_period": P, "rows": rows}


def seed001_convergence():
    b = shaw_forcing(SHAW_P["beta"], SHAW_P["omega"], SHAW_P["alpha"])
    ref = two_phase_event_driven(b, 1.0, 1.0, 1.2, 5.0, 28.0)
    hs = [1e-3, 1e-4, 1e-5]
    errs = []
    for h in hs:
        r = two_phase_explicit(b, 1.0, 1.0, 1.2, 5.0, 28.0, h)
        t, tr = r.phase_times(), ref.phase_times()
        n = min(t.size, tr.size)
        errs.append(float(np.max(np.abs(t[:n] - tr[:n]))) if t.size == tr.size else float("nan"))
    order = float(np.polyfit(np.log(hs), np.log(errs), 1)[0])
    return {"reference_phase_times": ref.phase_times().tolist(), "reference_sub_phases": ref.tau_sub,
            "h": hs, "max_phase_time_error": errs, "fitted_order": order}


def calibration_spread(runs=10):
    _, T, z, z_true = synthetic_record(days=20, noise=0.05, seed=0)
    fits = [calibrate_quasi_static(T, z, SYNTHETIC_BOUNDS, K_BP=SYNTHETIC_K_BP, seed=1000 + r, popsize=15,
                                   maxiter=300) for r in range(runs)]
    table = calibration_table(fits)
    table["truth"] = [SYNTHETIC_TRUTH[k] for k in CALIBRATION_PARAMETERS]
    table["relative_error_of_mean"] = [abs(m / t - 1) for m, t in zip(table["mean"], table["truth"])]
    table["rms"] = [f.rms for f in fits]
    table["rms_of_truth"] = float(np.sqrt(np.mean((z - z_true) ** 2)))
    table["noise_std"] = 0.05
    return table


def calibration_noise_spread(runs=10):
    """Same procedure over 10 noise realisations (one optimisation each): the parameter
    uncertainty caused by the noise, to compare with the optimiser spread above."""
    fits, rms_truth = [], []
    for r in range(runs):
        _, T, z, z_true = synthetic_record(days=20, noise=0.05, seed=100 + r)
        fits.append(calibrate_quasi_static(T, z, SYNTHETIC_BOUNDS, K_BP=SYNTHETIC_K_BP, seed=2000 + r,
                                           popsize=15, maxiter=300))
        rms_truth.append(float(np.sqrt(np.mean((z - z_true) ** 2))))
    table = calibration_table(fits)
    table["truth"] = [SYNTHETIC_TRUTH[k] for k in CALIBRATION_PARAMETERS]
    table["bias_over_std"] = [(m - t) / s if s > 0 else float("nan")
                              for m, t, s in zip(table["mean"], table["truth"], table["std"])]
    table["rms"] = [f.rms for f in fits]
    table["rms_of_truth"] = rms_truth
    return table


def main() -> dict:
    return {"coulomb_cost": coulomb_cost(), "seed004_table1": seed004_table1(),
            "seed001_convergence": seed001_convergence(), "seed001_table1_synthetic": calibration_spread(),
            "seed001_noise_spread": calibration_noise_spread()}


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2, default=str))
