"""The cost of verifying the build cache on a warm load (issue 28, item 5).

A warm ``load_model`` of the belt checks every cached artefact it uses before trusting it: the
compiled kernels (size and SHA-256 against their manifest), and for a model given as a
ModelSpec also the source entry (its key, name, model hash and SHA-256) and the NumPy module's
copy and bytecode.  Measured in fresh interpreters (the way a command line loads a model), each
run timing ``load_model`` alone (its imports done before) in wall and CPU time; the two ways of naming the model
alternate, and the medians are reported.  The cache is filled first (one Cython build of the
belt if the cache is cold).  The checks alone are timed in one process too (median of 200).

Usage: ``python benchmarks/run.py cache_verify`` (cache: ``$FRICTIONKIT_CACHE``).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

ROUNDS = 15

_LOAD = """
import json, time, warnings
import frictionkit.codegen, frictionkit.codegen.api, frictionkit.runtime     # imports are not timed
from frictionkit.modelspec import zoo
from frictionkit.runtime import load_model
model = zoo.belt() if {spec!r} == "spec" else "belt"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t0, c0 = time.perf_counter(), time.process_time()
    loaded = load_model(model, continuation="Vb")
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"s": dt, "cpu": dc, "backend": loaded.module.BACKEND,
                  "warnings": [str(w.message) for w in caught]}}))
"""

# the verification alone, in this process, on the entries the loads above used (median of 200)
_VERIFY = """
import hashlib, json, statistics, sys, time
from pathlib import Path
import frictionkit.codegen.api as api
import frictionkit.codegen.build as build
from frictionkit.modelspec import zoo
spec = zoo.belt()
text = "\\0".join([spec.canonical(), "Vb", api._generator_digest(), "numpy", "cython"])
key = hashlib.sha256(text.encode()).hexdigest()
entry = build.cache_dir() / "sources" / f"belt__Vb_{key[:20]}.json"
(meta, src), problem = api._read_entry(entry, ("numpy", "cython"), key, "belt")
assert problem is None
copy = build.cache_dir() / "modules" / f"belt__Vb_{hashlib.sha256(src['numpy'].encode()).hexdigest()[:20]}.py"
import importlib.util
pyc = Path(importlib.util.cache_from_source(str(copy)))
pyx = src["cython"]
bkey = build.build_key(pyx)
name = f"_fk_belt__Vb_{bkey}"
import sysconfig
so = build.cache_dir() / bkey / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
def med(f, n=200):
    out = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); out.append(time.perf_counter() - t0)
    return statistics.median(out)
res = {"read_entry_ms": med(lambda: api._read_entry(entry, ("numpy", "cython"), key, "belt")),
       "numpy_copy_and_bytecode_ms": med(lambda: api._cached_code(copy, pyc, src["numpy"])),
       "compiled_module_check_ms": med(lambda: build._check(so, bkey, pyx)),
       "so_bytes": so.stat().st_size, "pyc_bytes": pyc.stat().st_size, "entry_bytes": entry.stat().st_size}
assert build._check(so, bkey, pyx) is None and api._cached_code(copy, pyc, src["numpy"])[1] is None
print(json.dumps({k: round(1e3 * v, 4) if k.endswith("_ms") else v for k, v in res.items()}))
"""


def _run(kind: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _LOAD.format(spec=kind)], capture_output=True, text=True,
                         check=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> dict:
    for kind in ("zoo", "spec"):          # fill the cache (a build at most once)
        _run(kind)
    times, cpu = {"zoo": [], "spec": []}, {"zoo": [], "spec": []}
    warned = []
    for _ in range(ROUNDS):
        for kind in ("zoo", "spec"):
            res = _run(kind)
            assert res["backend"] == "cython", res
            times[kind].append(res["s"])
            cpu[kind].append(res["cpu"])
            warned += res["warnings"]
    out = {"rounds": ROUNDS, "warnings_on_warm_loads": len(warned)}
    for kind in ("zoo", "spec"):
        out[f"warm_load_model_belt_{kind}_median_ms"] = round(1e3 * statistics.median(times[kind]), 2)
        out[f"warm_load_model_belt_{kind}_median_cpu_ms"] = round(1e3 * statistics.median(cpu[kind]), 2)
    try:
        out["verification_alone"] = json.loads(subprocess.run(
            [sys.executable, "-c", _VERIFY], capture_output=True, text=True, check=True).stdout)
    except subprocess.CalledProcessError as exc:      # a version without these checks
        out["verification_alone"] = exc.stderr.strip().splitlines()[-1]
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
