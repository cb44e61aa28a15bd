"""Energy dissipated per cycle by each contact (issue 25): ``dissipation/<contact>`` columns.

References: the tanh damper of
``examples/friction_damper.py`` against the work ``-int F v dt`` integrated along the periodic
orbit of solve_ivp (DOP853, rtol 1e-11, shooting; ``tests/drivers/_damper_reference.py``), and
against Coulomb's ``4 muN A`` in nearly pure sliding (the regularization's share is of order
``(eps / V)^2``).
"""
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.integrate

from frictionkit.runtime import frequency_response, load_branch, load_model
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.results._branch import Branch

from ..drivers._damper_reference import ATOL, PARAMS, RTOL, _f, periodic_orbit

DAMPER = str(Path(__file__).resolve().parents[2] / "examples" / "friction_damper.py")


def _at(br, W):
    i = int(np.argmin(np.abs(br.param - W)))
    d = br.discretization
    return d, correct(d, br.solutions[i], np.eye(d.size)[-1], W, max_iter=30)[0]


def _work_along_reference(W, muN):
    """``int_0^T muN tanh(v1/eps) v1 dt`` on the solve_ivp periodic orbit (the energy the damper
    takes out of the structure per forcing period), and x1's first-harmonic amplitude."""
    p = dict(PARAMS, muN=muN)
    y0 = periodic_orbit(W, muN)

    def rhs(tau, z):
        y = z[:4]
        return np.append(_f(y, tau, p) / W, muN * np.tanh(y[1] / p["eps"]) * y[1] / W)
    sol = scipy.integrate.solve_ivp(rhs, (0, 2 * np.pi), np.append(y0, 0.0), method="DOP853", rtol=RTOL,
                                    atol=ATOL, dense_output=True)
    tau = 2 * np.pi * np.arange(512) / 512
    X = 2 * np.fft.rfft(sol.sol(tau)[0])[1] / 512
    return sol.y[4, -1], abs(X), p


@pytest.mark.parametrize("W", [0.62, 1.0])
def test_tanh_damper_against_time_integration(W):
    model = load_model(DAMPER, continuation="W", muN=0.05)
    br = frequency_response(model, 0.55, 1.1, harmonics=60, options=dict(stability=False))
    d, Z = _at(br, W)
    E = Branch.from_solutions(d, Z[None], Z[None]).dissipation["damper"][0]
    E_ref, A1, p = _work_along_reference(W, 0.05)
    assert E == pytest.approx(E_ref, rel=1e-8)
    if W == 0.62:            # at resonance the damper slides nearly all the time: Coulomb's 4 muN A
        V = W * A1
        assert abs(E / (4 * 0.05 * A1) - 1) <= 3 * (p["eps"] / V) ** 2        # measured 0.9 (eps/V)^2


def test_saved_and_exported(tmp_path):
    model = load_model(DAMPER, continuation="W", muN=0.2)
    br = frequency_response(model, 0.9, 1.1, harmonics=10, options=dict(stability=False))
    path = tmp_path / "b.h5"
    br.save(path)
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["dissipation/damper"][()], br.dissipation["damper"])
    again = load_branch(path)
    assert np.array_equal(again.dissipation["damper"], br.dissipation["damper"])
    df = again.to_dataframe()
    assert np.array_equal(df["diss_damper"].to_numpy(), br.dissipation["damper"])
    assert np.all(br.dissipation["damper"] > 0)
