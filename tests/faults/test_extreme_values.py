"""Issue 28: extreme parameter values end quickly with a sentence naming the parameter, never a
hang or a traceback.

``frf shaw --set beta=1e300`` ran for more than 300 s: its first point comes from a time
simulation (LSODA) whose first derivative is 1e300, and LSODA's error test refused every step at
t = 0 for ever.  The simulated starts now stop a response that runs away (a state or a
derivative beyond 1e150) and name the parameter.  Each command runs in its own process with a
timeout (a hang fails the test instead of blocking the suite); the timeout is generous because
the first run of a model compiles it and the machine may be shared.
"""
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from frictionkit.runtime.drivers._forced_start import forced_period_samples
from frictionkit.runtime.errors import ConvergenceError
from frictionkit.runtime.model._load import load_model

#: seconds before a command counts as hung (a compile of the model on first use included)
TIMEOUT = 240
SCRIPT = str(Path(sys.executable).with_name("frictionkit"))


def run(*argv):
    r = subprocess.run([SCRIPT, *map(str, argv), "-q"], capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    return r


@pytest.mark.parametrize("value", ["1e300", "-1e300"])
def test_a_huge_forcing_ends_with_the_parameter_named(value):
    r = run("frf", "shaw", "--start", "0.5", "--stop", "2", "--set", f"beta={value}")
    assert r.returncode == 1, r.stderr
    assert f"beta = {float(value):g} (default 6)" in r.stderr and "runs away" in r.stderr, r.stderr
    assert "frictionkit models shaw" in r.stderr, r.stderr


def test_a_vanishing_forcing_ends_without_a_traceback():
    # beta = 1e-300: a response of size 1e-300, whose chord updates are exactly 0 (a
    # ZeroDivisionError in the engine before); it either computes or refuses, in words
    r = run("frf", "shaw", "--start", "0.5", "--stop", "2", "--set", "beta=1e-300")
    assert r.returncode in (0, 1), r.stderr
    assert r.returncode == 0 or "Error:" in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_non_finite_values_are_refused_naming_the_parameter(value):
    r = run("frf", "shaw", "--start", "0.5", "--stop", "2", "--set", f"beta={value}")
    assert r.returncode == 1 and "parameter 'beta'" in r.stderr and "finite" in r.stderr, r.stderr


def test_a_huge_normal_load_is_named_by_continue():
    r = run("continue", "belt", "-p", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=1e300")
    assert r.returncode == 1 and "--set FN=1e+300:" in r.stderr, r.stderr


def test_the_simulated_start_stops_a_runaway_response():
    """In Python: the simulation raises at once, naming the parameter, and does not blame the
    ones at their defaults."""
    m = load_model("shaw", continuation="w", params={"beta": 1e300})
    with pytest.raises(ConvergenceError, match=r"runs away beyond 1e\+150.*beta = 1e\+300 \(default 6\)") as info:
        forced_period_samples(m, 0.5, 64)
    assert "fs =" not in str(info.value) and "eps =" not in str(info.value)


def test_an_ordinary_simulated_start_is_unchanged():
    """The guard does not touch an ordinary run: the sampled period of the linear, frictionless
    forced oscillator (shaw_free, m x'' + 2 alpha x' + x = beta cos(w t)) is its analytic
    steady state X cos(w t - phi), X = beta / sqrt((1 - m w^2)^2 + (2 alpha w)^2)."""
    m = load_model("shaw_free", continuation="beta", params={"alpha": 0.2, "w": 0.7})
    x, w = forced_period_samples(m, 2.0, 64)
    t = 2 * np.pi / w * np.arange(64) / 64
    X = 2.0 / np.hypot(1 - w**2, 2 * 0.2 * w)
    phi = np.arctan2(2 * 0.2 * w, 1 - w**2)
    np.testing.assert_allclose(x[0], X * np.cos(w * t - phi), atol=1e-6 * X)


def test_a_sweep_task_names_the_extreme_value_before_the_solvers_words():
    """A grid point at FN = 1e300 fails in words naming FN first (the solver's after), and its
    neighbour at an ordinary value is unaffected; run in this process (no cluster)."""
    from frictionkit.runtime.sweeps import SweepSpec, run_task
    model = load_model("belt", continuation="Vb", n=10, FN=5.0)
    spec = SweepSpec.build(model="belt", model_hash=model.model_hash, param="Vb", start=0.05, stop=12.0,
                           over={"FN": [1e300]}, fixed={"n": 10}, harmonics=5).to_json()
    row = run_task(spec, 0)["row"]
    assert row["status"] == "failed", row
    assert row["message"].startswith("FN = 1e+300 (default 5): outside 1e-100..1e100"), row["message"]
    assert "ConvergenceError: no equilibrium" in row["message"].split("(", 2)[2], row["message"]
