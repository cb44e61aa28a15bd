"""The contact port of a structure is compiled at its second load, not its first
(``generate_module(..., defer=True)``, which ``load_model`` asks for structural and recognised
models; DESIGN §6).

Each load runs in a fresh interpreter with its own empty cache folder, as a user's first and
second ``frictionkit continue`` would: the first load returns the NumPy kernels and no build
(no extension, no compiler child), the second builds and returns the compiled ones, the third
loads them from the cache.  The two backends' right-hand sides agree with the modal ODE written
out by hand in tests/structures/_models.py (``string_rhs``), an independent reference.
``FRICTIONKIT_REQUIRE_COMPILED=1`` compiles at the first load.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.structures._models import string_rhs

ROOT = Path(__file__).resolve().parents[2]

_LOAD = """
import json, sys
import numpy as np
from frictionkit.runtime import load_model
from tests.structures._models import string
m = load_model(string(3, name="deferred3"), continuation="Vb")
x = np.array([1e-6, -2e-6, 5e-7, 0.05, -0.02, 0.01])
print(json.dumps({"backend": m.module.BACKEND, "rhs": np.asarray(m.rhs(0.0, x, 0.3), dtype=float).tolist()}))
"""


def _load(cache, **env):
    base = {k: v for k, v in os.environ.items() if k != "FRICTIONKIT_REQUIRE_COMPILED"}   # CI sets it
    run = subprocess.run([sys.executable, "-c", _LOAD], cwd=str(ROOT), capture_output=True, text=True,
                         env=dict(base, FRICTIONKIT_CACHE=str(cache), PYTHONPATH=str(ROOT), **env))
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def _extensions(cache):
    return sorted(p.name for p in Path(cache).rglob("*.so"))


def test_first_load_numpy_second_compiles_third_cached(tmp_path):
    x = np.array([1e-6, -2e-6, 5e-7, 0.05, -0.02, 0.01])
    reference = string_rhs(3, 0.3)[0](0.0, x)
    first, err1 = _load(tmp_path)
    assert first["backend"] == "numpy" and "compiling" not in err1 and _extensions(tmp_path) == []
    second, err2 = _load(tmp_path)
    assert second["backend"] == "cython" and "compiling" in err2 and len(_extensions(tmp_path)) == 1
    third, err3 = _load(tmp_path)
    assert third["backend"] == "cython" and "compiling" not in err3
    for got in (first, second, third):
        assert np.allclose(got["rhs"], reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())


def test_require_compiled_builds_at_the_first_load(tmp_path):
    first, err = _load(tmp_path, FRICTIONKIT_REQUIRE_COMPILED="1")
    assert first["backend"] == "cython" and "compiling" in err and len(_extensions(tmp_path)) == 1
