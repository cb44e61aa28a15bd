"""Seed 003 accuracy study (issue 4 item 5): HBM versus orthogonal collocation on W1 and S1.

For each case a reference HBM orbit with H = 500 harmonics (seed 003 §3.1), energy-matched
test solutions (§3.3) and the mean relative error without bias (eq. 16, the belt's ``v``
scaled by ``1/omega1`` to the paper's ``z``) against ``N_dis`` (2H+1 for HBM, 3 N_int + 1 for
collocation with p = 3):

* ``hbm_fit``: semilog fit ``log10 eps = a + b N_dis`` (W1 over the paper's 61..183; paper
  b = -0.052, c = 10^(-2b) = 1.27);
* ``collocation_fit``: log-log slope (theory -(p+1) = -4; paper W1 -4.3 on 394..484);
* ``n_dis_1e-6`` / ``n_dis_1e-10``: smallest computed N_dis from which the mean error stays
  below the target, with the wall time of that one energy-matched Newton solve (started from
  the neighbouring solution); ``None`` when the computed range does not reach it.

S1 (n = 100, Vb = 0.05) converges much more slowly; its H = 500 reference is itself only
accurate to about the error of the HBM near H = 450, so 1e-10 cannot be certified there and is
reported as not reached (with the semilog fit's extrapolation, labelled as such).
Run: ``python benchmarks/bench_study.py`` or ``python benchmarks/run.py study``.
"""
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _one_blas_thread():
    from benchmarks.bench_runtime import _one_blas_thread as one
    one()


def _case(name, n, at, harmonics, intervals, hbm_range, col_range, H_ref=500):
    from frictionkit.runtime import load_model
    from frictionkit.runtime.drivers._study import convergence_study, reference_orbit
    m = load_model("belt", continuation="Vb", n=n, FN=5)
    t0 = time.perf_counter()
    disc, Z, orbit = reference_orbit(m, at, H_ref)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    st = convergence_study(m, at, harmonics=harmonics, intervals=intervals, reference_harmonics=H_ref,
                           reference=(disc, Z), variable_scales={"v": 1 / m.value("omega1")})
    t_study = time.perf_counter() - t0
    out = dict(case=name, n=n, Vb=at, reference_harmonics=H_ref, reference_seconds=t_ref,
               study_seconds=t_study, reference_omega=float(Z[-2]), shooting_omega=float(orbit.omega),
               reference_vs_shooting_omega=float(abs(Z[-2] - orbit.omega) / orbit.omega))
    fits = dict(hbm_fit=st.fit_hbm(*hbm_range), collocation_fit=st.fit_collocation(*col_range))
    out.update(fits)
    for res in (st.hbm, st.collocation):
        ok = res.converged
        block = dict(computed=int(len(ok)), converged=int(ok.sum()),
                     n_dis=res.n_dis.tolist(), mean_error=[None if not np.isfinite(e) else float(e)
                                                           for e in res.mean_error])
        for target in (1e-6, 1e-10):
            nd = st.n_dis_for(res.method, target)
            entry = dict(n_dis=nd)
            if nd is not None:
                i = int(np.flatnonzero(res.n_dis == nd)[0])
                entry.update(size=int(res.size[i]), solve_seconds=float(res.seconds[i]),
                             mean_error=float(res.mean_error[i]))
            elif res.method == "hbm":
                f = fits["hbm_fit"]
                entry["extrapolated_n_dis_from_fit"] = float((np.log10(target) - f["intercept"]) / f["slope"])
            else:
                f = fits["collocation_fit"]
                entry["extrapolated_n_dis_from_fit"] = float(10 ** ((np.log10(target) - f["intercept"])
                                                                      / f["slope"]))
            block[f"n_dis_{target:g}"] = entry
        out[res.method] = block
    stem = Path(tempfile.gettempdir()) / f"frictionkit_bench_study_{name}"
    st.save(stem.with_suffix(".h5"))
    st.plot(stem.with_suffix(".png"))
    out["files"] = [str(stem.with_suffix(".h5")), str(stem.with_suffix(".png"))]
    return out


def bench_w1():
    out = _case("W1", 10, 0.5, range(1, 101), list(range(10, 171, 4)) + list(range(180, 801, 20)),
                (61, 183), (394, 484))
    out["paper"] = dict(hbm_slope=-0.052, c=1.27, collocation_slope=-4.3, theory_collocation_slope=-4)
    return out


def bench_s1():
    out = _case("S1", 100, 0.05, range(10, 401, 10), list(range(20, 1001, 40)), (201, 601), (1501, 3001))
    out["paper"] = dict(note="seed 003 §4.3 gives no fitted slope for S1; y error < 1e-4 needs N_dis >= 97 "
                             "(HBM) and >= 148 (collocation)")
    return out


def main() -> dict:
    _one_blas_thread()
    out = {"W1": bench_w1()}
    try:
        out["S1"] = bench_s1()
    except Exception as exc:  # S1 (n = 100) fit range not yet robust: report, do not hide W1
        out["S1"] = {"failed": f"{type(exc).__name__}: {exc}"}
    return out


if __name__ == "__main__":
    import json
    _one_blas_thread()
    which = sys.argv[1:] or ["w1", "s1"]
    print(json.dumps({w: globals()[f"bench_{w}"]() for w in which}, indent=2, default=str))
