"""Runtime core benchmarks (issue 3): ANM step vs LU, ANM vs pseudo-arclength Newton, HBM vs
time integration.  All numbers come from one run on one machine; compare ratios, not times.

1. ``anm_step_over_lu``: time of one ANM step (Jacobian assembly, one LU of the bordered
   tangent matrix, order-20 series, end-point evaluation) divided by the time of one LU
   factorization of the same bordered matrix, at H = 50, 100, 200 (belt n = 10, W1 orbit).
2. ``demo_branch``: the demo branch (belt n = 10, FN = 5, H = 40, Hopf -> fold -> Hopf) with
   ANM and with pseudo-arclength Newton: wall time, steps, LU factorizations, fold.
3. ``s1_orbit``: one converged n = 100 orbit at Vb = 0.05 (seed 003 case S1) by HBM
   (coarse simulation + Newton with H harmonics) versus integrating the original ODE to the
   attractor with ``solve_ivp`` (LSODA) at several tolerances; errors of omega and of the
   peak-to-peak amplitude against HBM with H = 300.
4. ``hbm_convergence``: W1, W2, S2 errors against shooting versus H.
5. ``fold``: the n = 10 fold versus H (seed 003 §3.3 table) and by collocation.

BLAS is limited to one thread (shared machines make multi-threaded OpenBLAS much slower for
these matrix sizes).
"""
import ctypes
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.integrate import solve_ivp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _one_blas_thread():
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "openblas" in line and ".so" in line}
    except OSError:
        return
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn(1)
                break


def _median_time(fn, repeat=3):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _belt(n):
    from frictionkit.runtime.model._interface import Model
    from tests.models import belt_handwritten
    return Model(belt_handwritten, {"n": n, "FN": 5})


def bench_anm_step_over_lu():
    from frictionkit.runtime.engine._anm import anm_series, Series
    from frictionkit.runtime.drivers._branches import periodic_start_from_simulation
    from frictionkit.runtime.engine._newton import correct, tangent_at
    m = _belt(10)
    d, Z = periodic_start_from_simulation(m, 0.5, 50)
    out = {}
    for H in (50, 100, 200):
        dH, ZH = d.resize(Z, H)
        ZH, _ = correct(dH, ZH, np.eye(dH.size)[-1], 0.5)
        t = tangent_at(dH, ZH, np.eye(dH.size)[-1])
        J = dH.jacobian(ZH)
        # the LU alone: LAPACK getrf of the bordered matrix in place in a preallocated
        # Fortran-order buffer (refilled untimed), the physical limit
        K = np.asfortranarray(np.vstack([J, t]))
        buf = np.empty_like(K, order="F")

        def lu_once():
            buf[...] = K
            t0 = time.perf_counter()
            scipy.linalg.lu_factor(buf, overwrite_a=True, check_finite=False)
            return time.perf_counter() - t0

        def step():
            # everything of one ANM step: Jacobian assembly, row scales, LU, 20 orders,
            # end point, end tangent and its residual
            t0 = time.perf_counter()
            terms, scale, _, _ = anm_series(dH, ZH, t, 20)
            a = (1e-8 / np.linalg.norm(terms[-1])) ** (1 / 19)
            s = Series(ZH, terms, a)
            Ze = s(a)
            s.tangent(a), np.max(np.abs(dH.residual(Ze)) / scale)
            return time.perf_counter() - t0
        step()                       # first call allocates the reusable bordered buffer
        # shared machine: alternate the two timings and take the median of the ratios
        pairs = [(lu_once(), step()) for _ in range(9)]
        t_lu = float(np.median([p[0] for p in pairs]))
        t_step = float(np.median([p[1] for p in pairs]))
        # what bounds the ratio: the step's 20 sequential triangular solves (memory-bound)
        # against one solve with 20 right-hand sides (what they would cost if not sequential)
        lu = scipy.linalg.lu_factor(K, check_finite=False)
        rhs = np.random.default_rng(0).standard_normal((K.shape[0], 20))
        t20 = _median_time(lambda: [scipy.linalg.lu_solve(lu, rhs[:, j], check_finite=False) for j in range(20)], 5)
        tblk = _median_time(lambda: scipy.linalg.lu_solve(lu, rhs, check_finite=False), 5)
        out[f"H{H}"] = dict(unknowns=dH.size, lu_s=t_lu, anm_step_s=t_step,
                            ratio=float(np.median([p[1] / p[0] for p in pairs])),
                            twenty_solves_over_lu=t20 / t_lu, one_20_column_solve_over_lu=tblk / t_lu)
    return out


def bench_series_order(H=48, order=20):
    """One order of the pointwise ANM series (AFT of the seed-000 belt's states, n = 10, the
    AUTO benchmark's H = 48): the compiled per-order loop (``_pointwise_loop.pyx``) against
    the contract's Python loop (``Discretization.series_terms``), alternated, medians; the
    two give the same terms (tests/discretizations/test_pointwise_loop.py)."""
    from frictionkit.modelspec import zoo
    from frictionkit.runtime import equilibrium_branch, load_model, periodic_start_from_hopf
    from frictionkit.runtime.discretizations import Discretization
    from frictionkit.runtime.engine._bordered import bordered_factor
    m = load_model(zoo.belt(), continuation="Vb", n=10.0, FN=5.0)
    hopf = equilibrium_branch(m, 0.05, 12.0).special_points("hopf")[0]
    disc, Z, d = periodic_start_from_hopf(m, hopf, H)
    lu = bordered_factor(disc.jacobian(Z), d)
    rhs = np.zeros(disc.size)
    rhs[-1] = 1.0
    v = lu.solve(rhs)
    Z1 = v / np.linalg.norm(v)

    def solve(r):
        return lu.solve(r, checked=False)

    def compiled():
        t0 = time.perf_counter()
        for _ in range(20):
            disc.series_terms(Z, Z1, order, solve, lu.dense_lu)
        return (time.perf_counter() - t0) / (20 * (order - 1))

    def python():
        t0 = time.perf_counter()
        for _ in range(20):
            Discretization.series_terms(disc, Z, Z1, order, solve)
        return (time.perf_counter() - t0) / (20 * (order - 1))
    compiled(), python()            # first calls build and allocate
    pairs = [(compiled(), python()) for _ in range(7)]
    return dict(H=H, unknowns=disc.size, order=order,
                compiled_us=1e6 * float(np.median([p[0] for p in pairs])),
                python_us=1e6 * float(np.median([p[1] for p in pairs])))


def bench_demo_branch(H=40):
    from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_start_from_hopf, periodic_branch
    m = _belt(10)
    eq = equilibrium_branch(m, 0.05, 12)
    hopf = eq.special_points("hopf")[0]
    out = {"harmonics": H}
    for method in ("anm", "newton"):
        t0 = time.perf_counter()
        disc, Z, d = periodic_start_from_hopf(m, hopf, H)
        br = periodic_branch(disc, Z, 0.0, 30.0, d, method=method)
        wall = time.perf_counter() - t0
        folds = [s.param for s in br.special_points("fold")]
        out[method] = dict(wall_s=wall, status=br.status, points=len(br), folds=folds, **br.counters)
    out["factorization_ratio_newton_over_anm"] = (out["newton"]["factorizations"]
                                                   / out["anm"]["factorizations"])
    out["wall_ratio_newton_over_anm"] = out["newton"]["wall_s"] / out["anm"]["wall_s"]
    return out


def _simulate_orbit(m, lam, rtol, atol):
    """solve_ivp to the attractor, then omega and ptp(y) from one accurate period."""
    from frictionkit.runtime.analysis._equilibria import find_equilibrium, eigenvalues
    _, Ze = find_equilibrium(m, lam)
    x = Ze[:2] + np.array([0.0, 1e-3])
    om0 = float(np.max(np.abs(eigenvalues(m, Ze[:2], lam).imag)))
    T0 = 2 * np.pi / om0
    t, last = 0.0, None
    f = lambda t, x: m.rhs(t, x, lam)      # noqa: E731
    J = lambda t, x: m.jac(t, x, lam)      # noqa: E731
    for _ in range(500):
        sol = solve_ivp(f, (t, t + 20 * T0), x, method="LSODA", jac=J, rtol=rtol, atol=atol, dense_output=True)
        peak = float(np.max(sol.sol(np.linspace(t + 15 * T0, t + 20 * T0, 20000))[0]))
        x, t = sol.y[:, -1], sol.t[-1]
        if last is not None and abs(peak - last) <= 1e-9 * abs(peak):
            break
        last = peak
    sol = solve_ivp(f, (t, t + 6 * T0), x, method="LSODA", jac=J, rtol=rtol, atol=atol, dense_output=True)
    tt = np.linspace(t, t + 6 * T0, 240001)
    y = sol.sol(tt)[0]
    ym = 0.5 * (y.max() + y.min())
    up = np.flatnonzero((y[:-1] < ym) & (y[1:] >= ym))
    cr = [scipy.optimize.brentq(lambda s: sol.sol(s)[0] - ym, tt[i], tt[i + 1], xtol=1e-16) for i in up]
    T = float(np.mean(np.diff(cr)))
    seg = (tt >= cr[0]) & (tt <= cr[0] + T)
    return 2 * np.pi / T, float(np.ptp(y[seg]))


def bench_s1_orbit():
    from frictionkit.runtime.results._branch import trig_extrema
    from frictionkit.runtime.drivers._branches import periodic_start_from_simulation
    from frictionkit.runtime.engine._newton import correct
    m = _belt(100)
    lam = 0.05
    e = None
    # reference: HBM with H = 300
    d, Z = periodic_start_from_simulation(m, lam, 100)
    d3, Z3 = d.resize(Z, 300)
    Z3, _ = correct(d3, Z3, np.eye(d3.size)[-1], lam, max_iter=30)
    U, om_ref, _ = d3.split(Z3)
    lo, hi = trig_extrema(U[:2])
    ptp_ref = float(hi[0] - lo[0])
    out = {"reference": dict(harmonics=300, omega=float(om_ref), ptp_y=ptp_ref)}
    for H in (100, 200):
        t0 = time.perf_counter()
        d, Z = periodic_start_from_simulation(m, lam, min(H, 50), rtol=1e-6, atol=1e-9)
        dH, ZH = d.resize(Z, H)
        e = np.eye(dH.size)[-1]
        ZH, its = correct(dH, ZH, e, lam, max_iter=30)
        wall = time.perf_counter() - t0
        U, om, _ = dH.split(ZH)
        lo, hi = trig_extrema(U[:2])
        out[f"hbm_H{H}"] = dict(wall_s=wall, omega_rel_err=abs(om / om_ref - 1),
                                ptp_rel_err=abs((hi[0] - lo[0]) / ptp_ref - 1), newton_iterations=its)
    for rtol in (1e-6, 1e-8, 1e-10, 1e-12):
        t0 = time.perf_counter()
        om, ptp = _simulate_orbit(m, lam, rtol, rtol * 1e-3)
        out[f"solve_ivp_rtol{rtol:g}"] = dict(wall_s=time.perf_counter() - t0,
                                              omega_rel_err=abs(om / om_ref - 1),
                                              ptp_rel_err=abs(ptp / ptp_ref - 1))
    return out


def bench_hbm_convergence():
    """W1, W2 (n = 10) and S2 (n = 100): relative errors of omega and ptp(y) against
    shooting (runtime._shooting, LSODA rtol 1e-12) versus the number of harmonics."""
    from frictionkit.runtime.results._branch import trig_extrema
    from frictionkit.runtime.drivers._branches import periodic_start_from_simulation
    from frictionkit.runtime.discretizations._hbm import coefficients_to_samples
    from frictionkit.runtime.engine._newton import correct
    from frictionkit.runtime.drivers._orbits import find_periodic_orbit
    out = {}
    for name, n, lam, Hs in (("W1", 10, 0.5, (10, 20, 30, 40, 60)), ("W2", 10, 2.0, (20, 40, 80, 120, 150)),
                             ("S2", 100, 0.4, (200, 300, 400))):
        m = _belt(n)
        d, Z = periodic_start_from_simulation(m, lam, Hs[-1], rtol=1e-6, atol=1e-9)
        U, om, _ = d.split(Z)
        ys = coefficients_to_samples(U[:2], 20000)
        orb = find_periodic_orbit(m, lam, ys[:, np.argmax(ys[0])], 2 * np.pi / om)
        res = {"shooting_omega": orb.omega, "shooting_ptp_y": float(orb.ptp[0])}
        for H in Hs:
            dH, ZH = d.resize(Z, H)
            ZH, _ = correct(dH, ZH, np.eye(dH.size)[-1], lam, max_iter=30)
            U, om, _ = dH.split(ZH)
            lo, hi = trig_extrema(U[:2])
            res[f"H{H}"] = dict(omega_rel_err=abs(om / orb.omega - 1),
                                ptp_rel_err=abs((hi[0] - lo[0]) / orb.ptp[0] - 1))
        out[name] = res
    return out


def bench_fold():
    """Fold of the n = 10 branch: H = 1, 5, 9, 20 from full ANM branches, H = 30..100 refined
    by locate_fold_near; orthogonal collocation (p = 3) N_int = 100, 200, 400 from the HBM fold;
    shooting on the original ODE (``seeds.seed002.shooting_fold``: the maximum of Vb over shooting
    orbits at fixed amplitude or period, LSODA rtol 1e-11) from the H = 100 fold."""
    from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
    from frictionkit.runtime.engine._fold_near import locate_fold_near
    from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_start_from_hopf, periodic_branch
    from frictionkit.runtime.discretizations._hbm import coefficients_to_samples
    m = _belt(10)
    hopf = equilibrium_branch(m, 0.05, 12).special_points("hopf")[0]
    out = {"seed_003": {"H1": 24.05, "H5": 7.51, "H9": 9.46, "converged": 10.26}, "seed_000": 10.25}
    for H in (1, 5, 9, 20):
        disc, Z, d = periodic_start_from_hopf(m, hopf, H)
        # H = 1 leaves the recast's valid root at Vb = 0.26 (a denominator changes sign): seed
        # 003's table value is that wrong-root branch's fold, so it is continued past the check
        br = periodic_branch(disc, Z, 0.0, 30.0, d, options=dict(on_invalid="warn") if H == 1 else None)
        fold = br.special_points("fold")[0]
        out[f"hbm_H{H}"] = fold.param
    for H in (30, 40, 60, 80, 100):
        disc, Z = disc.resize(fold.solution, H)
        fold = locate_fold_near(disc, Z)
        out[f"hbm_H{H}"] = fold.param
    U, om, lam = disc.split(fold.solution)
    th0 = 2 * np.pi * np.argmax(coefficients_to_samples(U[:1], 100_000)[0]) / 100_000
    k = np.arange(1, disc.H + 1)

    def states(t):
        th = th0 + om * np.asarray(t)
        return U[:2, :1] + U[:2, 1::2] @ np.cos(np.outer(k, th)) + U[:2, 2::2] @ np.sin(np.outer(k, th))
    for N in (100, 200, 400):
        cd = CollocationDiscretization(m, n_intervals=N, degree=3)
        out[f"collocation_N{N}"] = locate_fold_near(cd, cd.from_states(states, lam, om), span=1e-3).param
    # shooting integrates the generated model (the same equations; with the hand-written test
    # model's NumPy right-hand side the fixed-coordinate Newton stalls at 2e-8, above its
    # 100 rtol stop: the result records the failure instead)
    from frictionkit.runtime import load_model
    from examples.seeds.seed002 import shooting_fold
    from frictionkit.runtime.errors import ConvergenceError
    try:
        sf = shooting_fold(load_model("belt", continuation="Vb", n=10, FN=5), disc, fold.solution)
        out["shooting"] = dict(fold=sf["lam"], coordinate=sf["coordinate"], shooting_solves=sf["evaluations"],
                               rel_to_hbm_H100=abs(sf["lam"] / out["hbm_H100"] - 1))
    except ConvergenceError as exc:
        out["shooting"] = dict(failed=str(exc))
    return out


def main() -> dict:
    _one_blas_thread()
    return {"anm_step_over_lu": bench_anm_step_over_lu(),
            "series_order": bench_series_order(),
            "demo_branch": bench_demo_branch(),
            "s1_orbit": bench_s1_orbit(),
            "hbm_convergence": bench_hbm_convergence(),
            "fold": bench_fold()}


if __name__ == "__main__":
    import json
    _one_blas_thread()
    which = sys.argv[1:] or ["anm_step_over_lu", "series_order", "demo_branch", "s1_orbit", "hbm_convergence", "fold"]
    print(json.dumps({w: globals()[f"bench_{w}"]() for w in which}, indent=2, default=str))
