"""Run every ``benchmarks/bench_*.py`` and write the results to ``benchmarks/results/``.

Each bench module defines ``main() -> dict`` (JSON-serialisable: numbers, strings, lists).
Speed is reported as ratios measured in one run (shared, noisy machines), never as
timed tests.  Usage: ``make bench`` or ``python benchmarks/run.py [name ...]``; with names,
``latest.json`` keeps the other benchmarks' last results.  Files are written atomically.
"""
import importlib.util
import json
import platform
import sys
import time
from pathlib import Path

from frictionkit.runtime.results._atomic import atomic_path

HERE = Path(__file__).resolve().parent


def _write_json(path, data):
    """``path`` replaced only once the new text is complete (temporary file + rename)."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(data, indent=2, default=str))


def main(argv):
    wanted = set(argv)
    results = {"machine": platform.platform(), "python": platform.python_version(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "benchmarks": {}}
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    if wanted and (out_dir / "latest.json").exists():
        try:            # a partial run updates the last full one instead of replacing it
            results["benchmarks"] = json.loads((out_dir / "latest.json").read_text()).get("benchmarks", {})
        except (OSError, ValueError):
            pass
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem[len("bench_"):]
        if wanted and name not in wanted:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        res = mod.main()
        res["_wall_s"] = time.perf_counter() - t0
        results["benchmarks"][name] = res
        print(json.dumps(res, indent=2, default=str), flush=True)
        _write_json(out_dir / f"{name}.json", res)
    _write_json(out_dir / "latest.json", results)
    print(f"written {out_dir / 'latest.json'}")


if __name__ == "__main__":
    main(sys.argv[1:])
