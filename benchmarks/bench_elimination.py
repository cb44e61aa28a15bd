"""The bordered LU on the dynamic equations only (issue 12): the AFT's kinematic rows
``x_i' = x_j`` eliminated before the LU (``runtime/engine/_bordered._Reduction``) against the
full LU, on the two models of ``bench_auto.py`` (the belt, seed 000 n = 10, H = 48; the
tanh x exp belt, H = 40), at the start of their periodic branch from the Hopf point.

1. ``factor``: one bordered factorization, median of ``timeit`` repeats, the full LU of
   ``[J; t^T]`` (``scipy.linalg.lu_factor`` of a copy) against the reduction's blocks plus the
   LU of the Schur complement (the same calls ``factor_jacobian`` makes; the Jacobian's
   assembly, common to both, is left out).
2. ``solve``: one bordered solve (LAPACK getrs on the full LU; the reduce-solve-expand of
   ``_Reduction.solve`` in Python).
3. ``series``: the 20 orders of one ANM step (``series_terms`` with the step's LU: the
   compiled loop, which does the reduce/expand around its dgetrs).
4. ``branch``: the whole ``periodic_branch`` CPU time without stability, with and without
   the elimination (``AFTDiscretization._kinematic_elimination`` patched to return None),
   alternated over ``ROUNDS`` rounds (medians); folds, special points and LU per step.

Run: ``python benchmarks/bench_elimination.py`` (writes ``benchmarks/results/elimination.json``)
or ``python benchmarks/run.py elimination``.
"""
import json
import os
import sys
import time
import timeit
from pathlib import Path

import numpy as np
import scipy.linalg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ROUNDS = 5


def _median_us(stmt, number):
    return float(np.median(timeit.repeat(stmt, number=number, repeat=7)) / number * 1e6)


def _no_elimination(enabled):
    """Patch the AFT's elimination off (``enabled=False``) or back on."""
    from frictionkit.runtime.discretizations._aft import AFTDiscretization
    if not hasattr(AFTDiscretization, "_original_elimination"):
        AFTDiscretization._original_elimination = AFTDiscretization._kinematic_elimination
    AFTDiscretization._kinematic_elimination = (AFTDiscretization._original_elimination if enabled
                                                else (lambda self: None))


def _micro(disc, Z):
    """Factorization, solve and ANM-series timings at ``Z`` with and without the elimination."""
    from frictionkit.runtime.engine._bordered import _Reduction, _Workspace, _lapack, factor_jacobian
    rng = np.random.default_rng(0)
    t = rng.standard_normal(disc.size)
    t /= np.linalg.norm(t)
    K = np.asfortranarray(np.vstack([disc.jacobian(Z), t]))
    ws = _Workspace(disc.size)
    red = _Reduction.of(ws, disc.elimination)
    getrs = _lapack("getrs", K)
    full = scipy.linalg.lu_factor(K.copy(order="F"), check_finite=False)
    S = red.blocks(K)
    lu_s = scipy.linalg.lu_factor(S[0].copy(order="F"), check_finite=False)
    b = rng.standard_normal(disc.size)
    out = dict(size=disc.size, reduced_size=int(S[0].shape[0]),
               factor_full_us=_median_us(lambda: scipy.linalg.lu_factor(K.copy(order="F"), check_finite=False), 200),
               factor_reduced_us=_median_us(lambda: scipy.linalg.lu_factor(red.blocks(K)[0], overwrite_a=True,
                                                                           check_finite=False), 200),
               blocks_us=_median_us(lambda: red.blocks(K), 500),
               solve_full_us=_median_us(lambda: getrs(full[0], full[1], b), 2000),
               solve_reduced_us=_median_us(lambda: red.solve(getrs, lu_s[0], lu_s[1], *S[1:], b), 2000))
    # one ANM step's series (order 20) with the step's own LU, compiled loop, both ways
    for label, elim in (("full", None), ("reduced", disc.elimination)):
        saved, disc.elimination = disc.elimination, elim
        try:
            lu, _ = factor_jacobian(disc, Z, t)
            v = lu.solve(np.append(np.zeros(disc.m), 1.0))
            Z1 = v / np.linalg.norm(v)
            solve = lambda r: lu.solve(r, checked=False)  # noqa: E731
            out[f"series_{label}_us"] = _median_us(lambda: disc.series_terms(Z, Z1, 20, solve, lu.dense_lu), 20)
        finally:
            disc.elimination = saved
    return out


def _branch(model, hopf, case):
    import warnings
    from frictionkit.runtime import periodic_branch, periodic_start_from_hopf
    disc, Z, d = periodic_start_from_hopf(model, hopf, case["harmonics"])
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        br = periodic_branch(disc, Z, *case["po_range"], d, options=dict(stability=False))
    cpu = time.process_time() - c0
    return dict(cpu_s=cpu, folds=[float(s.param) for s in br.special_points("fold")],
                special=[[s.kind, float(s.param)] for s in br.special_points()], points=len(br),
                steps=br.counters["steps"], factorizations=br.counters["factorizations"],
                lu_per_step=br.counters["factorizations"] / max(br.counters["steps"], 1),
                eliminated=disc.elimination is not None)


def main():
    import bench_auto
    from frictionkit.runtime import equilibrium_branch, load_model, periodic_start_from_hopf
    out = dict(threads=os.environ.get("OPENBLAS_NUM_THREADS"), rounds=ROUNDS, cases={})
    for case in bench_auto.CASES:
        model = load_model(case["spec"](), continuation=case["continuation"], **case["params"])
        eq = equilibrium_branch(model, *case["eq_range"])
        hopf = min(eq.special_points("hopf"), key=lambda h: abs(h.param - case["hopf_near"]))
        _no_elimination(True)
        disc, Z, _ = periodic_start_from_hopf(model, hopf, case["harmonics"])
        res = dict(harmonics=case["harmonics"], micro=_micro(disc, Z), with_elimination=[], without=[])
        for _ in range(ROUNDS):              # alternated: the machine is shared
            for enabled, key in ((False, "without"), (True, "with_elimination")):
                _no_elimination(enabled)
                res[key].append(_branch(model, hopf, case))
        _no_elimination(True)
        med = {k: float(np.median([r["cpu_s"] for r in res[k]])) for k in ("without", "with_elimination")}
        res["summary"] = dict(cpu_median_without_s=med["without"], cpu_median_with_s=med["with_elimination"],
                              cpu_ratio_with_over_without=med["with_elimination"] / med["without"],
                              fold_difference=(abs(res["with_elimination"][0]["folds"][0] - res["without"][0]["folds"][0])
                                               if res["without"][0]["folds"] else None))
        out["cases"][case["name"]] = res
    return out


if __name__ == "__main__":
    result = main()
    from frictionkit.runtime.results._atomic import atomic_path
    path = HERE / "results" / "elimination.json"
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(result, indent=2))
    print(json.dumps({k: dict(v["micro"], **v["summary"]) for k, v in result["cases"].items()}, indent=2))
