"""Codegen figures (issue 13): cold build and warm load per zoo model, and the evaluation
time of the original ODE's residual f(x, t; p) and Jacobian df/dx for 1 and 1,000 samples,
NumPy versus compiled (Cython) versus sympy.lambdify of the declared equations; and the
quadratic operator kernels Q(u, u) and its sparse Jacobian at 1,000 samples.

* cold build: empty cache folder, codegen (recast + render) + C compile + import, one model
  at a time; the compiler-flag table builds the largest models with the scalar -O1 flags of
  before, the vectorised portable flags, and the machine's flags at -O0/-O1/-O2, and times
  their kernels, which is how ``build.COMPILE_ARGS`` and ``build.platform_args`` were chosen.
* warm load: a fresh Python process with frictionkit imported, ``generate_module`` from a
  filled cache.
* Taylor kernels of the pointwise recast (DESIGN §5.0): one call of order TAYLOR_ORDER, and
  the whole series 0..TAYLOR_ORDER (one call per order), for 1 and 1,000 samples, NumPy versus
  compiled.  lambdify has no Taylor kernel (a sympy series would be orders of magnitude
  slower and is not what anyone would run); as a yardstick the entry gives the time of one
  lambdified evaluation of f alone at the same samples (``lambdify_f``).

* recast scaling: ``recast`` of one equation whose right-hand side has 2,000 and 10,000 terms
  (products of two parameters and a monomial of degree <= 4 in x, v) and one with 100
  distinct parameter denominators, each in a fresh process (so sympy's cache starts empty);
  the recast must stay polynomial and fast in the expression size.

Every figure is the median of several repeats (shared, noisy machine); ratios are taken
within one run.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import sympy as sp

from frictionkit.codegen import build, compile_module, generate_module, generate_sources
from frictionkit.codegen.api import _join
from frictionkit.modelspec import ZOO, zoo_model

M = 1000
REPEAT = 5
COLD_REPEAT = 3
FLAG_MODELS = (("belt", "Vb"), ("vrande2", "Vdr"))
#: compiler flag sets: -O1 scalar (the flags before issue 13 item 2), vectorised portable
#: (x86-64 baseline + libmvec), and the machine's defaults (build.COMPILE_ARGS + platform_args)
#: at -O0/-O1/-O2
_MACHINE = build.COMPILE_ARGS[1:] + build.platform_args()[0]
FLAGS = (("-O1",), ("-O1",) + tuple(f for f in _MACHINE if not f.startswith(("-m", "-ffp-contract"))),
         ("-O0",) + _MACHINE, ("-O1",) + _MACHINE, ("-O2",) + _MACHINE)
TAYLOR_ORDER = 12


def median_time(f, repeat=REPEAT, budget=0.05):
    """Median over ``repeat`` runs of the mean time of one call (calls per run: ~budget s)."""
    t0 = time.perf_counter()
    f()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, min(20000, int(budget / one)))
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


class _Cache:
    """An empty cache folder for the duration of a block."""

    def __enter__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.old = os.environ.get("FRICTIONKIT_CACHE")
        os.environ["FRICTIONKIT_CACHE"] = self.tmp.name
        return self.tmp.name

    def __exit__(self, *exc):
        if self.old is None:
            del os.environ["FRICTIONKIT_CACHE"]
        else:
            os.environ["FRICTIONKIT_CACHE"] = self.old
        self.tmp.cleanup()


def cold_build(name, cont, tag, compile_args=None):
    """Seconds for codegen + compile + import into an empty cache, and the joined module."""
    with _Cache():
        t0 = time.perf_counter()
        _, src = generate_sources(name, cont)
        npm = generate_module(name, cont, backend="numpy")
        kernels, _ = compile_module(src["cython"], f"bench_{tag}", compile_args)
        mod = _join(npm, kernels)
        return time.perf_counter() - t0, mod


def warm_load(name, cont):
    code = ("import time, frictionkit.codegen as c\n"
            f"c.generate_module({name!r}, {cont!r}, backend='cython')\n")   # fills the cache if needed
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    code = ("import time, frictionkit.codegen as c\nt0 = time.perf_counter()\n"
            f"m = c.generate_module({name!r}, {cont!r}, backend='cython')\n"
            "assert m.BACKEND == 'cython'\nprint(time.perf_counter() - t0)\n")
    runs = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                 text=True).stdout) for _ in range(COLD_REPEAT)]
    return statistics.median(runs)


def lambdified(name):
    """sympy.lambdify of the declared model's f and df/dx (independent of the generator)."""
    spec = zoo_model(name)
    f = [spec.expand_definitions(spec.odes[s]) / spec.masses.get(s, 1) for s in spec.states]
    args = [spec.t] + list(spec.states) + spec.parameter_symbols
    F = sp.lambdify(args, f, "numpy")
    J = sp.lambdify(args, sp.Matrix(f).jacobian(spec.states).tolist(), "numpy")

    def rhs(t, x, p):
        return np.array([np.broadcast_to(r, np.shape(x)[1:]) for r in F(t, *x, *p)], dtype=float)

    def jac(t, x, p):
        return np.array([[np.broadcast_to(e, np.shape(x)[1:]) for e in row] for row in J(t, *x, *p)],
                        dtype=float)
    return rhs, jac


def evaluation(npm, cym, name):
    rhs_l, jac_l = lambdified(name)
    p = np.array(npm.DEFAULTS)
    rng = np.random.default_rng(0)
    n = len(npm.STATES)
    out = {}
    for samples in (1, M):
        x = rng.normal(size=(n,) if samples == 1 else (n, samples)) * 0.1
        t = 0.3 if samples == 1 else rng.uniform(0, 1, samples)
        for what, fn in (("rhs", "rhs"), ("jac", "jac")):
            ref = (rhs_l if what == "rhs" else jac_l)(t, x, p)
            for mod in (npm, cym):      # same numbers as lambdify before timing
                got = getattr(mod, fn)(t, x, p)
                assert np.allclose(got, ref, rtol=1e-11, atol=1e-11 * np.abs(ref).max()), (name, what, mod.BACKEND)
            times = {"numpy": median_time(lambda: getattr(npm, fn)(t, x, p)),
                     "compiled": median_time(lambda: getattr(cym, fn)(t, x, p)),
                     "lambdify": median_time(lambda: (rhs_l if what == "rhs" else jac_l)(t, x, p))}
            out[f"{what}_{samples}_us"] = {k: round(v * 1e6, 2) for k, v in times.items()}
            out[f"{what}_{samples}_numpy_over_compiled"] = round(times["numpy"] / times["compiled"], 2)
            out[f"{what}_{samples}_lambdify_over_compiled"] = round(times["lambdify"] / times["compiled"], 2)
    x = rng.normal(size=(n, M)) * 0.1
    u = np.ascontiguousarray(npm.aux(x, 0.0, p))
    qc = npm.operators(p)["qc"]
    for fn in ("quad", "quad_jac_sparse"):
        args = (qc, u, u) if fn == "quad" else (qc, u)
        assert np.allclose(getattr(npm, fn)(*args), getattr(cym, fn)(*args))
        tn = median_time(lambda: getattr(npm, fn)(*args))
        tc = median_time(lambda: getattr(cym, fn)(*args))
        out[f"{fn}_{M}_us"] = {"numpy": round(tn * 1e6, 2), "compiled": round(tc * 1e6, 2)}
    return out


def taylor_timing(npm, cym, name):
    """Time of the Taylor kernel (order TAYLOR_ORDER, and orders 0..TAYLOR_ORDER) per backend."""
    rhs_l, _ = lambdified(name)
    p = np.array(npm.DEFAULTS)
    rng = np.random.default_rng(2)
    n, K = len(npm.STATES), TAYLOR_ORDER + 1
    lam0 = p[list(npm.PARAMETERS).index(npm.CONTINUATION)]
    out = {"taylor_order": TAYLOR_ORDER}
    for samples in (1, M):
        X = rng.normal(size=(K, n, samples)) * 0.1 * 0.5 ** np.arange(K)[:, None, None]
        LAM = lam0 + np.concatenate([[0.0], rng.normal(size=K - 1) * 0.01])
        t = rng.uniform(0, 1, samples)
        A = np.zeros((K, npm.NAUX, samples))
        for k in range(K):                      # coefficients of the lower orders, both backends agree
            A[k], F = npm.taylor(t, X[:k + 1], LAM[:k + 1], A[:k], k, p)
            Ac, Fc = cym.taylor(t, X[:k + 1], LAM[:k + 1], A[:k], k, p)
            for a, b in ((Ac, A[k]), (Fc, F)):
                if b.size:                      # a model without auxiliaries has NAUX = 0
                    assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max(), (name, k)

        def series(mod):
            S = np.zeros((K, npm.NAUX, samples))
            for k in range(K):
                S[k] = mod.taylor(t, X[:k + 1], LAM[:k + 1], S[:k], k, p)[0]
        times = {f"{b}_order{TAYLOR_ORDER}": median_time(lambda m=m: m.taylor(t, X, LAM, A[:-1], TAYLOR_ORDER, p))
                 for b, m in (("numpy", npm), ("compiled", cym))}
        times.update({f"{b}_series": median_time(lambda m=m: series(m)) for b, m in (("numpy", npm), ("compiled", cym))})
        times["lambdify_f"] = median_time(lambda: rhs_l(t, X[0], p))
        out[f"taylor_{samples}_us"] = {k: round(v * 1e6, 2) for k, v in times.items()}
        out[f"taylor_{samples}_numpy_over_compiled"] = round(times[f"numpy_order{TAYLOR_ORDER}"]
                                                             / times[f"compiled_order{TAYLOR_ORDER}"], 2)
        out[f"taylor_{samples}_order{TAYLOR_ORDER}_compiled_over_lambdify_f"] = round(
            times[f"compiled_order{TAYLOR_ORDER}"] / times["lambdify_f"], 2)
    return out


_RECAST_SCRIPT = '''
import sys, time
import sympy as sp
from frictionkit.modelspec import ModelSpec
from frictionkit.codegen import recast
kind, n = sys.argv[1], int(sys.argv[2])
m = ModelSpec("big")
k = m.parameter("k", 1.0)
x, v = m.second_order("x", velocity="v")
if kind == "denominators":
    ps = [m.parameter(f"a{i}", 1.0 + i) for i in range(n)]
    rhs = -k * x + sum(v / (p + 1) for p in ps) + sum(x * v / (p + 2) for p in ps[: n // 2])
else:
    side = int(round(n ** 0.5))
    a = [m.parameter(f"a{i}", 1.0 + i) for i in range(side)]
    b = [m.parameter(f"b{j}", 2.0 + j) for j in range(side)]
    rhs = -k * x + sp.Add(*[a[i] * b[j] * x**(i % 3) * v**(j % 3) for i in range(side) for j in range(side)])
m.ode(v, rhs)
t0 = time.perf_counter()
recast(m, "k")
print(time.perf_counter() - t0, len(sp.Add.make_args(rhs)))
'''


def recast_scaling():
    """Seconds of ``recast`` for large right-hand sides (median over fresh processes)."""
    out = {}
    for kind, n in (("terms", 2000), ("terms", 10000), ("denominators", 100)):
        runs = [subprocess.run([sys.executable, "-c", _RECAST_SCRIPT, kind, str(n)], check=True,
                               capture_output=True, text=True).stdout.split() for _ in range(COLD_REPEAT)]
        out[f"{kind}_{n}"] = {"rhs_terms": int(runs[0][1]),
                              "recast_s": round(statistics.median(float(r[0]) for r in runs), 2)}
    return out


def flag_table():
    """Build time and kernel time per compiler flag set, for the largest zoo models."""
    table = {}
    for name, cont in FLAG_MODELS:
        npm = generate_module(name, cont, backend="numpy")
        p = np.array(npm.DEFAULTS)
        x = np.random.default_rng(1).normal(size=(len(npm.STATES), M)) * 0.1
        for flags in FLAGS:
            builds, mod = [], None
            for r in range(COLD_REPEAT):
                s, mod = cold_build(name, cont, f"{name}_{cont}_flags{r}", flags)
                builds.append(s)
            table[f"{name}/{cont} {' '.join(flags)}"] = {
                "cold_build_s": round(statistics.median(builds), 2),
                "rhs_1000_us": round(median_time(lambda: mod.rhs(0.0, x, p)) * 1e6, 2),
                "jac_1000_us": round(median_time(lambda: mod.jac(0.0, x, p)) * 1e6, 2),
                "rhs_1_us": round(median_time(lambda: mod.rhs(0.0, x[:, 0], p)) * 1e6, 2)}
    return table


def main():
    args, link = build.build_flags()
    out = {"samples": M, "compile_args": list(args), "link_args": list(link), "repeats": REPEAT,
           "cold_repeats": COLD_REPEAT, "recast_scaling": recast_scaling(), "models": {}}
    print("recast scaling", out["recast_scaling"], flush=True)
    for name, (_, params) in sorted(ZOO.items()):
        if zoo_model(name).sampled:
            continue
        for cont in params:
            builds, cym = [], None
            for r in range(COLD_REPEAT):
                s, cym = cold_build(name, cont, f"{name}_{cont}_{r}")
                builds.append(s)
            npm = generate_module(name, cont, backend="numpy")
            entry = {"cold_build_s": round(statistics.median(builds), 2),
                     "cold_build_runs_s": [round(b, 2) for b in builds],
                     "warm_load_ms": round(warm_load(name, cont) * 1e3, 1)}
            entry.update(evaluation(npm, cym, name))
            entry.update(taylor_timing(npm, cym, name))
            out["models"][f"{name}/{cont}"] = entry
            print(name, cont, entry["cold_build_s"], entry["warm_load_ms"], flush=True)
    out["compiler_flags"] = flag_table()
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(main(), indent=2))
