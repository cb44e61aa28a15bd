"""Cost of a period-doubling curve (``pd_curve``) on the LuGre belt of issue 26, against
AUTO-07p's PD continuation (ISW = 2) on the same model.

The LuGre belt (``tests/models/state_law_specs.py``), its doubling near vb = 1.2247 continued in
s1 from 2.83 to 3.2 on the minimally augmented system (``analysis/_pd_ns_curves.py``).

frictionkit side, at AFT H = 30 (128 samples) and H = 90 (375 samples), with the default
options: the branch's multipliers error-controlled (``multiplier_rtol``), the curve's monodromy
on the steps that error control chooses at the start, frozen along the curve.  On this stiff
stick-slip orbit (delta = 1e-3) the orbit's truncation, not the monodromy, limits the doubling's
position (compare ``error_at_3_0`` with AUTO's).  Reported per run: points, Newton iterations (one Jacobian of the
augmented system and one dense bordered LU each), residuals, monodromy matrices, CPU
(``time.process_time``) and wall time.  The gradient of the test function in the orbit's
Fourier coefficients comes from one reverse pass through the Magnus product
(``AFTDiscretization.monodromy_gradient``); ``differences_cpu_s`` is one run of the same curve
at H = 30 with that pass disabled (one monodromy per unknown, as before it existed).  For
scale: the CPU of the one-parameter branch in vb (1.35 -> 1.15, multipliers at every point)
that locates the same doubling at one s1.

AUTO-07p side (through bifpy, ``make bench-peers``): the model printed from the same ModelSpec
by ``bench_auto.auto_model_source`` with s1 as PAR(2) and exact Jacobians; equilibria (IPS = 1)
and periodic orbits from the first Hopf point (IPS = 2, NTST = 100, NCOL = 4, ISP = 2) locate
the doubling once (not timed); then the timed part, AUTO's usual two restarts from the PD
label with ICP = [vb, s1, period] (ISW = 2: the generating run, then the locus from its
label), stopped at s1 = 3.2 (UZSTOP) with a labelled point at s1 = 3.0 (UZR).  CPU counts the
finished children (gfortran and the AUTO executable: transpiling and compilation included).

Reference: the doubling at s1 = 3.0 and 3.2 by shooting (``locate_period_doubling``:
solve_ivp on the variational equation, rtol 1e-12, Brent), against which both tools' vb are
compared.  The tools alternate (frictionkit, AUTO, ...) over ``RUNS`` rounds; medians.

Run: ``python benchmarks/run.py pd_curve`` (writes ``benchmarks/results/pd_curve.json``).
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:          # run from benchmarks/ without the repository root on sys.path
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_auto import _clock, _since, auto_peer, start_equilibrium, write_auto_model  # noqa: E402
from frictionkit.runtime import (equilibrium_branch, load_model, locate_period_doubling, pd_curve,  # noqa: E402
                                 periodic_branch, periodic_start_from_hopf)
from frictionkit.runtime.discretizations._aft import AFTDiscretization  # noqa: E402
from tests.models.state_law_specs import lugre  # noqa: E402

RUNS = 3
HARMONICS = (30, 90)
S1_START, S1_STOP, S1_CHECK = 2.83, 3.2, 3.0
NTST, NCOL = 100, 4


def _cpu(f, *a, **k):
    c0, t0 = time.process_time(), time.perf_counter()
    out = f(*a, **k)
    return out, time.process_time() - c0, time.perf_counter() - t0


def _at(curve, s1):
    return float(curve.lam[np.flatnonzero(np.isclose(curve.mu, s1, rtol=1e-13, atol=0))[0]])


def _frictionkit_case(model, eq, H):
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], H)
    br = periodic_branch(disc, Z, 0.0, 1.3, d, options=dict(points_per_step=4, multiplier_stride=1))
    pd = [s for s in br.special_points("pd") if 1.1 < s.param < 1.3][0]
    return disc, br, pd


def _curve_run(br, pd):
    curve, cpu, wall = _cpu(pd_curve, br, pd, "s1", S1_START, S1_STOP, mu_values=(S1_CHECK,))
    return curve, dict(cpu_s=cpu, wall_s=wall, status=curve.status, vb_at_3_0=_at(curve, S1_CHECK),
                       vb_at_3_2=_at(curve, S1_STOP), **curve.counters)


def _auto_setup(auto, directory, spec, model):
    from bifpy.results import PointType
    values = {name: float(p.default) for name, p in spec.parameters.items()}
    x0 = start_equilibrium(model, 0.01)
    mod = write_auto_model(directory, "lugre", spec, "vb", values, x0, 0.01, free=("s1",))
    eq = dict(jac=1, nmx=300, npr=0, dsmin=1e-5, dsmax=0.05, ilp=1, isp=1, epsl=1e-8, epsu=1e-8, epss=1e-7,
              ips=auto.IPS_EQUILIBRIUM, ndim=3, ds=0.005, rl0=0.005, rl1=2.0)
    res = auto.run(mod.func, mod.stpnt, eq, icu=[1], jac=mod.jac_equilibrium, transpile=True)
    hopf = [p for b in res.branches for p in b.points if p.point_type == PointType.HOPF_BIFURCATION]
    po = dict(jac=1, nmx=2000, npr=0, ncol=NCOL, ntst=NTST, ds=0.005, dsmin=1e-6, dsmax=0.05, ilp=1, isp=2,
              epsl=1e-8, epsu=1e-8, epss=1e-6, ips=auto.IPS_PERIODIC_ORBIT, ndim=3, rl0=0.005, rl1=1.35)
    res = auto.restart(mod.func, po, restart_point=hopf[0], icu=[1, auto.PERIOD_INDEX],
                       isw=auto.ISW_HOPF_TO_PERIODIC_ORBIT, source_ips=auto.IPS_EQUILIBRIUM, jac=mod.jac_periodic,
                       transpile=True)
    pds = [p for b in res.branches for p in b.points
           if p.point_type == PointType.PERIOD_DOUBLING and p.parameters[0] > 1.0]
    return mod, dict(po, rl0=0.5, rl1=2.0, nmx=200, ds=0.01), pds[0]


def _auto_locus(auto, mod, settings, pd):
    from bifpy.results import PointType
    kw = dict(icu=[1, 2, auto.PERIOD_INDEX], jac=mod.jac_locus, transpile=True,
              uzstop={2: [2.0, S1_STOP]}, uzr={2: [S1_CHECK]})
    t0 = _clock()
    gen = auto.restart(mod.func, settings, restart_point=pd, **kw)
    start = [p for b in gen.branches for p in b.points if p.is_labeled][-1]
    locus = auto.restart(mod.func, settings, restart_point=start, **kw)
    times = _since(t0)
    pts = [p for b in locus.branches for p in b.points]
    uz = {round(float(p.parameters[1]), 6): float(p.parameters[0]) for p in pts
          if p.point_type == PointType.USER_SPECIFIED_VALUE}
    return dict(**times, points=len(pts), generating_points=sum(len(b.points) for b in gen.branches),
                vb_at_3_0=uz.get(S1_CHECK), vb_at_3_2=uz.get(S1_STOP),
                vb_at_start=float(pd.parameters[0]))


def _reference(model, br, pd, curve):
    """vb of the doubling at s1 = 3.0 and 3.2 by shooting, bracketed around the curve's value."""
    out = {}
    disc = br.discretization
    for s1 in (S1_CHECK, S1_STOP):
        vb = _at(curve, s1)
        i = np.flatnonzero(np.isclose(curve.mu, s1, rtol=1e-13, atol=0))[0]
        _, omega, _ = disc.split(curve.solutions[i])
        x0 = disc.unpack(curve.solutions[i])["samples"](64)[:, 0]
        ref = locate_period_doubling(model.with_params(s1=s1), vb - 0.005, vb + 0.005, x0, 2 * np.pi / omega,
                                     xtol=1e-10)
        out[s1] = float(ref.lam)
    return out


def main() -> dict:
    spec = lugre()
    model = load_model(spec, "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 2.0)
    cases = {H: _frictionkit_case(model, eq, H) for H in HARMONICS}
    auto, info = auto_peer()
    auto_ready = None
    tmp = tempfile.TemporaryDirectory()
    if auto is not None:
        try:
            auto_ready = _auto_setup(auto, tmp.name, spec, model)
        except Exception as exc:      # AutoError, TranspileError, OSError...
            info = dict(available=False, reason=f"AUTO-07p setup failed: {type(exc).__name__}: {exc}")
    runs = {f"H{H}": [] for H in HARMONICS}
    runs["auto"] = []
    curves = {}
    for _ in range(RUNS):
        for H in HARMONICS:
            curves[H], row = _curve_run(*cases[H][1:])
            runs[f"H{H}"].append(row)
        if auto_ready is not None:
            runs["auto"].append(_auto_locus(auto, *auto_ready))
    # the same curve with the gradient by differences of the monodromy (once)
    grad = AFTDiscretization.monodromy_gradient
    del AFTDiscretization.monodromy_gradient
    try:
        _, differences = _curve_run(*cases[30][1:])
    finally:
        AFTDiscretization.monodromy_gradient = grad
    disc30, br30, pd30 = cases[30]
    start = br30.solutions[np.flatnonzero(br30.param >= 1.25)[0]]
    one = [_cpu(periodic_branch, disc30.on_model(model.with_params(s1=S1_STOP)), start, 1.15, 1.35,
                direction=-1.0, options=dict(points_per_step=4, multiplier_stride=1))[1] for _ in range(RUNS)]
    disc90, br90, pd90 = cases[90]
    ref = _reference(model, br90, pd90, curves[90])
    med = lambda rows, k: statistics.median(r[k] for r in rows) if rows else None   # noqa: E731
    summary = {}
    for key, rows in runs.items():
        if not rows:
            continue
        r0 = rows[0]
        summary[key] = dict(cpu_s_median=med(rows, "cpu_s"), wall_s_median=med(rows, "wall_s"),
                            points=r0["points"], vb_at_3_0=r0["vb_at_3_0"], vb_at_3_2=r0["vb_at_3_2"],
                            error_at_3_0=(r0["vb_at_3_0"] - ref[S1_CHECK]) if r0["vb_at_3_0"] else None,
                            error_at_3_2=(r0["vb_at_3_2"] - ref[S1_STOP]) if r0["vb_at_3_2"] else None)
        if key != "auto":
            summary[key].update(unknowns=r0["unknowns"], newton_iterations_with_lu=r0["jacobians"],
                                monodromies=r0["monodromies"], residuals=r0["residuals"])
    if runs["auto"]:
        for H in HARMONICS:
            summary[f"H{H}"]["cpu_ratio_to_auto"] = summary[f"H{H}"]["cpu_s_median"] / summary["auto"]["cpu_s_median"]
    tmp.cleanup()
    return dict(
        model="LuGre belt (issue 26)", curve=f"PD near vb = 1.2247, s1 from {S1_START} to {S1_STOP}",
        reference_shooting=dict(vb_at_3_0=ref[S1_CHECK], vb_at_3_2=ref[S1_STOP]),
        summary=summary, auto07p=dict(info, ntst=NTST, ncol=NCOL),
        differences_cpu_s=differences["cpu_s"], differences_monodromies=differences["monodromies"],
        adjoint_speedup_h30=differences["cpu_s"] / summary["H30"]["cpu_s_median"],
        one_parameter_branch_cpu_s_median=statistics.median(one),
        runs=runs,
    )


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2, default=str))
