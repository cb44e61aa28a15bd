"""Codegen against the model size (issue 28): a chain of masses with a cubic spring on every
link and a friction contact on the first mass (``tests/models/chain_spec.py``; 2, 20 and 200
states), through the general symbolic recast (the cubic links keep it from being recognised as
linear but for its contact, ``codegen/structure.py``; the benchmark checks that).

* ``recast_sources_s``: ``generate_sources`` (recast, pointwise recast, NumPy and Cython
  sources), each run in a fresh Python process so that sympy's cache starts empty, as for a
  user's first load;
* ``build_s``: the Cython build of those sources into an empty cache folder
  (``compile_module``: cythonize, C compile, link, import), also in a fresh process;
* ``*_cpu_s``: the same as CPU time (the process's, and for the build its child processes':
  Cython and the C compiler), which a machine shared by other jobs disturbs far less than the
  wall-clock time.

Medians over REPEAT runs where they are cheap (2 and 20 states), one run at 200 states (a
shared two-core machine: runs of both sizes alternate).  Targets of issue 28 at 200 states:
recast and sources under 30 s, build under 60 s.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = (2, 20, 200)              # states (2 per mass)
REPEAT = {2: 3, 20: 3, 200: 1}

_SCRIPT = r'''
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from tests.models.chain_spec import chain
from frictionkit.codegen import compile_module, generate_sources, split_linear
n_states, tag = int(sys.argv[2]), sys.argv[3]
spec = chain(n_states // 2, name=f"chain{n_states}_{tag}")
def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), time.process_time()
system, src = generate_sources(spec, "Vb", progress=False)
t1, c1, k1 = time.perf_counter(), time.process_time(), children_cpu()
_, info = compile_module(src["cython"], f"chain{n_states}_{tag}")
t2, c2, k2 = time.perf_counter(), time.process_time(), children_cpu()
print(json.dumps({"recast_sources_s": t1 - t0, "build_s": t2 - t1, "cached": info["cached"],
                  "recast_sources_cpu_s": c1 - c0, "build_cpu_s": (c2 - c1) + (k2 - k1),
                  "variables": system.n_vars, "quadratic_terms": len(system.Q),
                  "pyx_chars": len(src["cython"]), "general_path": split_linear(spec, "Vb") is None}))
'''


def one_run(n_states: int, tag: str) -> dict:
    """One fresh process: generate the chain's sources, then build them in an empty cache."""
    with tempfile.TemporaryDirectory(prefix="fk-bench-scale-") as cache:
        env = {**os.environ, "FRICTIONKIT_CACHE": cache}
        out = subprocess.run([sys.executable, "-c", _SCRIPT, str(ROOT), str(n_states), tag], env=env,
                             check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    runs = {n: [] for n in SIZES}
    for r in range(max(REPEAT.values())):
        for n in SIZES:
            if r < REPEAT[n]:
                res = one_run(n, f"r{r}")
                assert not res["cached"] and res["general_path"], res
                runs[n].append(res)
                print(f"{n} states, run {r}: {res}", flush=True)
    out = {"model": "chain of masses, cubic links, hyperbolic friction on the first mass (tests/models/chain_spec.py)",
           "path": "general symbolic recast (not recognised as linear but for its contact)",
           "targets_200_states": {"recast_sources_s": 30.0, "build_s": 60.0}, "sizes": {}}
    for n in SIZES:
        first = runs[n][0]
        out["sizes"][str(n)] = {
            "states": n, "variables": first["variables"], "quadratic_terms": first["quadratic_terms"],
            "pyx_chars": first["pyx_chars"], "runs": len(runs[n]),
            **{key: round(statistics.median(r[key] for r in runs[n]), 2)
               for key in ("recast_sources_s", "build_s", "recast_sources_cpu_s", "build_cpu_s")}}
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
