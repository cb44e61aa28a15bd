"""``frictionkit frf`` and forced models on the command line (issue 25).

The zoo's ``shaw`` (seed 001 eq. 23, set (P), regularized law) with its defaults: the frequency
response above the stick-slip resonances, its end point against a time integration (a NumPy
copy of the ODE, solve_ivp DOP853 rtol 1e-11, then shooting on one forcing period); ``continue
--from-simulation`` on a forced model; bad input answered with what to do.
"""
import math

import numpy as np
import pytest
import scipy.integrate
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.results._branch import load_branch

SHAW = dict(m=1.0, alpha=0.0, beta=6.0, fs=1.2, fd=1.0, eps=1e-4, n=10.0)


def _shaw_rhs(t, y, w, p=SHAW):
    """Seed 001 eq. (23) with the regularized law of seed 000 eq. (2) (modelspec/laws.py)."""
    x, v = y
    a = math.sqrt(p["fs"] * (p["fs"] - p["fd"]))
    mu = (-p["fd"] * v * np.sqrt(v ** 2 + p["eps"] / p["n"] ** 2) - 2 * a / p["n"] * v) / (v ** 2 + 1 / p["n"] ** 2)
    return np.array([v, (p["beta"] * np.cos(w * t) - 2 * p["alpha"] * v - x + mu) / p["m"]])


def _shaw_first_harmonic(w, periods=30):
    """``A`` of ``x ~ A cos(w t + phi)`` on the attracting periodic response at ``w``: ``periods``
    forcing periods from rest bring the state near it, then shooting converges on it to 1e-13
    (at w = 0.9, 30 and 300 periods give the same A to 1e-13 relative: 2.5 s against 15.7 s)."""
    T = 2 * np.pi / w
    kw = dict(method="DOP853", rtol=1e-11, atol=1e-13, args=(w,))
    y = scipy.integrate.solve_ivp(_shaw_rhs, (0, periods * T), [0.0, 0.0], **kw).y[:, -1]
    for _ in range(20):                          # shooting, monodromy by central differences
        end = scipy.integrate.solve_ivp(_shaw_rhs, (0, T), y, **kw).y[:, -1]
        M = np.empty((2, 2))
        for j in range(2):
            h = 1e-6 * max(1.0, abs(y[j]))
            e = np.eye(2)[j] * h
            M[:, j] = (scipy.integrate.solve_ivp(_shaw_rhs, (0, T), y + e, **kw).y[:, -1]
                       - scipy.integrate.solve_ivp(_shaw_rhs, (0, T), y - e, **kw).y[:, -1]) / (2 * h)
        dy = np.linalg.solve(M - np.eye(2), y - end)
        y = y + dy
        if np.linalg.norm(dy) < 1e-13 * np.linalg.norm(y):
            break
    t = T * np.arange(512) / 512
    x = scipy.integrate.solve_ivp(_shaw_rhs, (0, T), y, t_eval=t, **kw).y[0]
    return abs(2 * np.fft.rfft(x)[1] / 512)


def test_shaw_with_defaults(tmp_path):
    out = tmp_path / "shaw.h5"
    r = CliRunner().invoke(main, ["frf", "shaw", "--start", "0.6", "--stop", "0.9", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    br = load_branch(out)
    assert br.provenance["continuation_parameter"] == "w" and br.provenance["method"] == "anm"
    assert br.param[0] == 0.6 and abs(br.param[-1] - 0.9) < 1e-12
    assert br.counters["factorizations"] <= 1.5 * br.counters["steps"]
    # the accuracy the run states: the change of the coefficients beyond its harmonic count
    change = float(r.output.split("change by ")[1].split()[0]) if "change by" in r.output else 1e-8
    A_ref = _shaw_first_harmonic(0.9)
    assert abs(br.amplitude["x"][-1, 0] - A_ref) <= change * A_ref


def test_continue_from_simulation_on_a_forced_model(tmp_path):
    out = tmp_path / "sim.h5"
    r = CliRunner().invoke(main, ["continue", "shaw", "--param", "w", "--start", "0.9", "--stop", "0.8",
                                  "--from-simulation", "-H", "20", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    br = load_branch(out, "periodic")
    assert br.provenance["method"] == "anm" and br.param[0] == 0.9


@pytest.mark.parametrize("args,text", [
    (["frf", "belt", "--start", "0.1", "--stop", "1"], "'belt' is autonomous"),
    (["frf", "shaw", "--start", "0", "--stop", "1"], "--start 0: the forcing frequency w must stay > 0"),
    (["frf", "shaw", "--start", "0.5", "--stop", "-1"], "--stop -1"),
    (["frf", "shaw", "--param", "beta", "--start", "1", "--stop", "2", "--set", "w=-1"], "forcing frequency w = -1"),
    (["frf", "shaw", "--start", "0.5", "--stop", "0.6", "--peaks", "nope"], "'nope' is not a state"),
    (["continue", "shaw", "--param", "w", "--start", "0.5", "--stop", "0.6"], "frictionkit frf shaw"),
])
def test_bad_input_says_what_to_do(args, text):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert text in r.output and "Traceback" not in r.output
