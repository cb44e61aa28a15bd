"""Codegen figures for issue 2: model sizes, codegen time, Cython build time, and the
evaluation time of the quadratic residual (N, M) and of the nonzero entries of its
Jacobian (nnz, M) on M = 1,000 time samples for the NumPy and Cython backends versus
sympy.lambdify of the same recast rows (same outputs for all three).

Times are reported with ratios measured in the same run (shared, noisy machine).
"""
import tempfile
import time
import os

import numpy as np
import sympy as sp

from frictionkit.codegen import compile_module, generate_module, generate_sources, recast
from frictionkit.modelspec import ZOO, zoo_model

M = 1000


def best(f, repeat=7, number=20):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        out.append((time.perf_counter() - t0) / number)
    return min(out)


def lambdified(system, keep):
    """sympy.lambdify of the same recast rows (``keep``: the non-derivative rows): residual
    and Jacobian of the quadratic system (the forcing, a known function of time, left out)."""
    u = sp.Matrix(system.variables)
    rows = sp.Matrix([system.rows[i] for i in keep])
    entries = [e for e in rows.jacobian(u) if e != 0]          # nonzero entries, as a list
    res = sp.lambdify([u] + list(system.parameters), list(rows), "numpy")
    jac = sp.lambdify([u] + list(system.parameters), entries, "numpy")
    return res, jac


def main():
    out = {"samples": M, "models": {}}
    for name, (_, params) in sorted(ZOO.items()):
        for cont in params:
            if zoo_model(name).sampled:
                continue
            t0 = time.perf_counter()
            system = recast(zoo_model(name), cont)
            t_recast = time.perf_counter() - t0
            t0 = time.perf_counter()
            _, src = generate_sources(name, cont)
            t_codegen = time.perf_counter() - t0
            with tempfile.TemporaryDirectory() as tmp:
                old = os.environ.get("FRICTIONKIT_CACHE")
                os.environ["FRICTIONKIT_CACHE"] = tmp
                try:
                    t0 = time.perf_counter()
                    compile_module(src["cython"], f"bench_{name}_{cont}")
                    t_cold = time.perf_counter() - t0
                finally:
                    if old is None:
                        del os.environ["FRICTIONKIT_CACHE"]
                    else:
                        os.environ["FRICTIONKIT_CACHE"] = old
            t0 = time.perf_counter()
            cym = generate_module(name, cont, backend="cython")   # warm: user cache, or built once
            cym = generate_module(name, cont, backend="cython")
            t_warm = time.perf_counter() - t0
            npm = generate_module(name, cont, backend="numpy")
            p = np.array(npm.DEFAULTS)
            rng = np.random.default_rng(0)
            x = rng.normal(size=(len(npm.STATES), M)) * 0.1
            u = np.ascontiguousarray(npm.aux(x, 0.0, p))
            ops = npm.operators(p)
            qc = ops["qc"]
            keep = [i for i, k in enumerate(system.kinds) if k != "derivative_bilinear"]
            res_l, jac_l = lambdified(system, keep)
            lam = p[npm.PARAMETERS.index(npm.CONTINUATION)]
            c = (ops["c0"] + lam * ops["c1"])[:, None]
            L = ops["L0"] + lam * ops["L1"]

            def residual(mod):      # full quadratic residual c0 + lam c1 + (L0 + lam L1) u + Q(u, u)
                return c + L @ u + mod.quad(qc, u, u)

            Lnz = L[np.nonzero(L)]

            def jacobian(mod):      # nonzero Jacobian entries on every sample, (nnz, M)
                return np.concatenate([np.broadcast_to(Lnz[:, None], (len(Lnz), M)),
                                       mod.quad_jac_sparse(qc, u)])

            def lambdify_residual():
                return np.array([np.broadcast_to(r, (M,)) for r in res_l(u, *p)])

            def lambdify_jacobian():
                return np.array([np.broadcast_to(e, (M,)) for e in jac_l(u, *p)])

            lam_rows = np.asarray([np.broadcast_to(np.asarray(r, dtype=float).ravel(), (M,))
                                   for r in res_l(u, *p)])
            assert np.allclose(residual(npm), residual(cym))
            assert np.allclose(lam_rows, residual(npm)[keep], rtol=1e-10, atol=1e-10)
            t_np_q = best(lambda: residual(npm))
            t_cy_q = best(lambda: residual(cym))
            t_np_j = best(lambda: jacobian(npm))
            t_cy_j = best(lambda: jacobian(cym))
            t_l_r = best(lambdify_residual, number=5)
            t_l_j = best(lambdify_jacobian, number=5)
            t_np_f = best(lambda: npm.rhs(0.0, x, p))
            t_cy_f = best(lambda: cym.rhs(0.0, x, p))
            out["models"][f"{name}/{cont}"] = {
                "variables": system.n_vars, "states": system.n_states, "quadratic_terms": len(system.Q),
                "recast_s": round(t_recast, 4), "codegen_s": round(t_codegen, 4),
                "cython_build_cold_s": round(t_cold, 2), "cython_load_warm_s": round(t_warm, 4),
                "residual_us": {"numpy": t_np_q * 1e6, "cython": t_cy_q * 1e6, "lambdify": t_l_r * 1e6},
                "jacobian_us": {"numpy": t_np_j * 1e6, "cython": t_cy_j * 1e6, "lambdify": t_l_j * 1e6},
                "rhs_us": {"numpy": t_np_f * 1e6, "cython": t_cy_f * 1e6},
                "ratio_lambdify_over_cython_residual": t_l_r / t_cy_q,
                "ratio_lambdify_over_cython_jacobian": t_l_j / t_cy_j,
                "ratio_numpy_over_cython_residual": t_np_q / t_cy_q,
                "ratio_numpy_over_cython_jacobian": t_np_j / t_cy_j,
            }
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
