"""``sweep()`` from Python on its own local cluster: results equal the serial runs bit for
bit, the table has one row per task, a rerun skips every stored task, and the ``orbit`` task
agrees with shooting on the original ODE."""
from __future__ import annotations

import warnings

import numpy as np

from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.sweeps import SweepSpec, run_task, sweep

from ._serial import assert_same_branch, serial_continuation


def test_local_cluster_sweep_equals_serial_and_resumes(tmp_path):
    out = tmp_path / "s.h5"
    grid = {"FN": [2.0, 6.0], "mud": [0.3, 0.35]}
    res = sweep("belt", "Vb", 0.05, 12.0, grid, fixed={"n": 10}, out=out, workers=2, progress=False,
                echo=lambda s: None, harmonics=5, at=(3.0,))
    assert res.success and res.status == "complete" and res.ran == 4 and res.skipped == 0
    t = res.table
    assert list(t.index) == [0, 1, 2, 3]
    assert t[["FN", "mud"]].values.tolist() == [[2, .3], [2, .35], [6, .3], [6, .35]]
    assert {"status", "hopf_1", "hopf_1_criticality", "n_fold", "eq_stable", "orbit_stable", "motion",
            "period@3", "amplitude@3"} <= set(t.columns)
    for i, (fn, mud) in enumerate(t[["FN", "mud"]].values):
        eq, per = serial_continuation("Vb", 0.05, 12.0, {"n": 10}, {"FN": fn, "mud": mud}, 5)
        assert_same_branch(res.branch(i, "equilibria"), eq)
        assert_same_branch(res.branch(i, "periodic"), per)
    again = sweep("belt", "Vb", 0.05, 12.0, grid, fixed={"n": 10}, out=out, workers=2, progress=False,
                  echo=lambda s: None, harmonics=5, at=(3.0,))
    assert again.ran == 0 and again.skipped == 4 and again.table.equals(t)


def test_orbit_task_agrees_with_shooting(tmp_path):
    res = sweep("belt", "Vb", 1.0, 1.0, {"FN": [5.0]}, fixed={"n": 10}, task="orbit", out=tmp_path / "o.h5",
                workers=1, progress=False, echo=lambda s: None, harmonics=40)
    row = res.table.loc[0]
    assert row["status"] == "periodic" and row["motion"] == "stick-slip"
    model = load_model("belt", continuation="Vb", n=10, FN=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x0 = res.branch(0, "orbit").time_series(0, n_t=64)[1][:, 0]
        orbit = find_periodic_orbit(model, 1.0, x0, row["period"])
    assert abs(orbit.T - row["period"]) < 1e-3 * orbit.T


def test_simulate_task_finds_the_stick_slip_cycle():
    """A simulation from a random state (Vb = 1 m/s, FN = 5 N: steady sliding unstable) ends on
    the stick-slip cycle whose period shooting gives from the HBM orbit of the same point."""
    model = load_model("belt", continuation="Vb", n=10, FN=5.0)
    common = dict(model="belt", model_hash=model.model_hash, param="Vb", start=1.0, stop=1.0,
                  over={"FN": [5.0]}, fixed={"n": 10})
    sim = run_task(SweepSpec.build(**common, task="simulate", t_end=2.0).to_json(), 0)["row"]
    orb = run_task(SweepSpec.build(**common, task="orbit", harmonics=40).to_json(), 0)["row"]
    assert sim["status"] == "stick-slip" and sim["motion"] == "stick-slip", sim
    assert abs(sim["period"] - orb["period"]) < 1e-3 * orb["period"]
