"""The stability subset with two BLAS threads (issue 26 item 5).

``make test`` runs the suite with ``OPENBLAS_NUM_THREADS=1`` (the Makefile's default); the
fold crossings of the seed-000 belt once came out NaN with one thread and right with several,
a rounding difference.  This test runs the belt's stability and fold-crossing tests again in a
fresh interpreter with two OpenBLAS threads, so that every run of the suite covers both.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fold_crossings_and_stability_with_two_blas_threads():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "analysis" / "test_branch_stability.py"), "-k", "fold or upper_branch"],
        cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)
    tail = (proc.stdout + proc.stderr)[-3000:]
    assert proc.returncode == 0, tail
    assert re.search(r"(^|\s)4 passed", proc.stdout), tail
