"""The LuGre belt of issue 26 with the default command, against an independent shooting reference.

The model is ``tests/models/state_law_specs.py`` (a friction law with an internal bristle
state; ``frictionkit continue tests/models/state_law_specs.py --param vb --start 0.01 --stop 2
--from-hopf 1``), run here in-process through the same composition as that command
(``drivers._compose.run_continuation``, no harmonic count, no method: the adaptive harmonic
count, which hands over to the collocation of the states on an adaptive mesh where the
harmonic balance would need more than 100 harmonics).  Reported:

* the CPU of the equilibria and the periodic branch (``time.process_time``, one run) and the
  process's maximum RSS; where the method changed and the harmonic counts and meshes used;
* every period doubling and fold of cycles the branch reports; the doublings against shooting
  (``tests/analysis/_lugre_shooting.py``: solve_ivp DOP853, rtol 1e-12, the multipliers from the
  variational equation): the sign of shooting's test function ``min Re(mu) + 1`` on both sides
  of each doubling at +-1e-6, and for the first three the root of that test function (Brent,
  xtol 1e-11); the fourth lies on the unstable cycles beyond the fold, where the shooting
  continuation in vb of ``period_doubling`` does not reach;
* at the step ends nearest vb = 0.1, 0.3, 0.5 and 1.0 (each crossing of the branch): the
  period, the peak-to-peak of x and the non-trivial multipliers the branch stores, against the
  shooting orbit at the same vb (the peak-to-peak from the dense output, extremes refined by
  bisection on the velocity), with the point's own error estimate.

Run: ``python benchmarks/run.py lugre`` (writes ``benchmarks/results/lugre.json``; about 2
minutes of CPU).
"""
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT), str(ROOT.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

from frictionkit.runtime.drivers._accuracy import error_of  # noqa: E402
from frictionkit.runtime.drivers._compose import run_continuation  # noqa: E402
from frictionkit.runtime.model._load import load_model  # noqa: E402
from tests.analysis import _lugre_shooting as shooting  # noqa: E402
from tests.models.state_law_specs import lugre  # noqa: E402

CHECK_AT = (0.1, 0.3, 0.5, 1.0)
SIDE = 1e-6


def _guess(disc, Z):
    """Shooting's start from a stored orbit: its state where the velocity passes 0 downwards."""
    x = disc.states_at(Z, np.arange(8192) / 8192)
    k = np.flatnonzero((x[1] > 0) & (np.roll(x[1], -1) <= 0))
    return x[:, int(k[0]) if len(k) else int(np.argmin(np.abs(x[1])))]


def _pd_test(vb, y, T):
    _, _, M = shooting.periodic_orbit(vb, y, T)
    return float(np.min(shooting.nontrivial(M).real) + 1)


def main():
    model = load_model(lugre(), "vb")
    t0 = time.process_time()
    _, per = run_continuation(model, 0.01, 2.0, start="hopf", hopf_index=1, progress=False, echo=lambda *a: None)
    cpu = time.process_time() - t0
    disc = per.discretization
    err = error_of(per.accuracy)
    out = dict(cpu_s=cpu, max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               points=len(per), steps=int(per.counters.get("steps", 0)), status=per.status,
               discretization=disc.kind, method_switch=per.provenance.get("method_switch"),
               harmonics=[float(np.nanmin(per.accuracy["harmonics"])), float(np.nanmax(per.accuracy["harmonics"]))]
               if "harmonics" in per.accuracy else None,
               intervals=[float(np.nanmin(per.accuracy["intervals"])), float(np.nanmax(per.accuracy["intervals"]))]
               if "intervals" in per.accuracy else None,
               worst_estimate=float(np.nanmax(err)),
               folds=[s.param for s in per.special if s.kind == "fold"])
    pds = []
    for k, s in enumerate(sp for sp in per.special if sp.kind == "pd"):
        y, T, _ = shooting.periodic_orbit(s.param, _guess(disc, s.solution), 2 * np.pi / s.omega)
        lo, hi = _pd_test(s.param - SIDE, y, T), _pd_test(s.param + SIDE, y, T)
        rec = dict(param=s.param, test_below=lo, test_above=hi, sign_change_within_1e_6=bool(lo * hi < 0))
        if k < 3:
            a, b = s.param - 1e-4, s.param + 1e-4
            y_a, T_a, _ = shooting.periodic_orbit(a, y, T)
            ref = shooting.period_doubling(a, b, y_a, T_a, xtol=1e-11)
            rec.update(shooting=ref, relative_error=abs(s.param / ref - 1))
        pds.append(rec)
    out["period_doublings"] = pds
    ends = np.array(sorted(set(int(i) for i in per.step_ends)))
    have = np.array([per.multipliers is not None and np.isfinite(np.asarray(per.multipliers[i])).any() for i in ends])
    ends = ends[have] if have.any() else ends
    points = []
    for vb in CHECK_AT:
        side = np.sign(per.param - vb)
        for c in np.flatnonzero(side[:-1] * side[1:] <= 0):
            j = int(ends[np.argmin(np.abs(ends - c))])
            lam = float(per.param[j])
            y, T, M = shooting.periodic_orbit(lam, _guess(disc, per.solutions[j]), 2 * np.pi / per.omega[j])
            ptp_ref = shooting.peak_to_peak(lam, y, T)
            ref = shooting.nontrivial(M)
            mu = np.asarray(per.multipliers[j]) if per.multipliers is not None else np.array([])
            mu = mu[np.isfinite(mu)]
            mu = mu[np.argsort(np.abs(mu - 1))][1:]            # without the trivial one
            dmu = max(float(np.min(np.abs(mu - r))) for r in ref) if len(mu) else float("nan")
            points.append(dict(near=vb, vb=lam, period=float(2 * np.pi / per.omega[j]), period_shooting=float(T),
                               period_error=abs(2 * np.pi / per.omega[j] / T - 1), ptp_x=float(per.ptp["x"][j]),
                               ptp_x_shooting=ptp_ref, ptp_error=abs(per.ptp["x"][j] / ptp_ref - 1),
                               multipliers=[str(complex(m)) for m in mu],
                               multipliers_shooting=[str(complex(r)) for r in ref], multiplier_error=dmu,
                               estimate=float(err[j]),
                               method="harmonic balance" if np.isfinite(per.accuracy.get("harmonics", [np.nan] * len(per))[j])
                               else "collocation"))
    out["points"] = points
    out["worst"] = dict(period=max(p["period_error"] for p in points), ptp=max(p["ptp_error"] for p in points),
                        multiplier=max(p["multiplier_error"] for p in points),
                        pd=max(p.get("relative_error", 0.0) for p in pds),
                        pd_sign_changes=all(p["sign_change_within_1e_6"] for p in pds))
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=1, default=str))
