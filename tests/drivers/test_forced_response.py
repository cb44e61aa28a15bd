"""Frequency responses of a forced friction damper against time integration (issue 25).

The 2-DOF structure of ``examples/friction_damper.py`` (``c = 0.02``, ``k1 = k2 = 1``, ``F0 =
0.1``, ``eps = 0.05``; ``muN`` = 0.05: the damper slips at the resonances, 0.2: it stays nearly
stuck), its forcing frequency ``W`` continued from 0.4 to 2.0 by :func:`frequency_response`
with its defaults (the ANM on the AFT of the states, the harmonic count chosen for the default
tolerance).  Reference: ``_damper_reference.py`` (solve_ivp DOP853 rtol 1e-11 to a steady
state, then shooting on one forcing period; the resonance peaks as roots of ``dA/dW`` from the
sensitivity equations).
"""
from pathlib import Path
import math

import numpy as np
import pytest

from frictionkit.runtime import frequency_response, load_model
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._branch import load_branch

from ._damper_reference import first_harmonic, resonance_peak

DAMPER = str(Path(__file__).resolve().parents[2] / "examples" / "friction_damper.py")
#: brackets of the reference's resonance peaks (the maxima of |X1| along W), from the linear
#: modes 0.618 and 1.618 (muN = 0.05) and the one peak of the nearly stuck damper (muN = 0.2)
PEAKS = {0.05: [(0.60, 0.63), (1.60, 1.64)], 0.2: [(1.2, 1.4)]}

_BRANCHES: dict = {}


def branch(muN):
    if muN not in _BRANCHES:
        model = load_model(DAMPER, continuation="W", muN=muN)
        _BRANCHES[muN] = frequency_response(model, 0.4, 2.0)
    return _BRANCHES[muN]


def _at(br, W):
    """The branch's orbit at exactly ``W`` (Newton at fixed W from the nearest point)."""
    i = int(np.argmin(np.abs(br.param - W)))
    disc = br.discretization
    Z, _ = correct(disc, br.solutions[i], np.eye(disc.size)[-1], W, max_iter=30)
    return Z


@pytest.mark.parametrize("muN", [0.05, 0.2])
def test_branch_is_complete_and_cheap(muN):
    """The whole range, stable, by the ANM: at most 1.5 LU factorizations per step."""
    br = branch(muN)
    assert br.success and br.status == "range"
    assert br.param.min() <= 0.4 + 1e-12 and br.param.max() >= 2.0 - 1e-12
    assert br.provenance["method"] == "anm"
    c = br.counters
    assert c["factorizations"] <= 1.5 * c["steps"], c
    assert np.all(br.stable == 1.0)


@pytest.mark.parametrize("muN", [0.05, 0.2])
@pytest.mark.parametrize("W", [0.6, 1.0, 1.5])
def test_first_harmonic_of_x1_against_time_integration(muN, W):
    br = branch(muN)
    Z = _at(br, W)
    n_h = br.discretization.nh
    c1, s1 = Z[1], Z[2]                      # x1 is the first state
    A_ref, phi_ref, _ = first_harmonic(W, muN)
    assert abs(math.hypot(c1, s1) - A_ref) <= 1e-7 * A_ref
    assert abs(math.atan2(-s1, c1) - phi_ref) <= 1e-7 * max(1.0, abs(phi_ref))
    assert n_h == 2 * br.harmonics + 1


@pytest.mark.parametrize("muN", [0.05, 0.2])
def test_resonance_peaks_against_time_integration(muN):
    """One peak per resonance, at the reference's W and amplitude to 1e-6."""
    peaks = branch(muN).special_points("peak")
    assert len(peaks) == len(PEAKS[muN]), [p.param for p in peaks]
    for p, (lo, hi) in zip(peaks, PEAKS[muN]):
        W_ref, A_ref = resonance_peak(lo, hi, muN)
        assert abs(p.param - W_ref) <= 1e-6 * W_ref
        assert abs(p.data["amplitude"] - A_ref) <= 1e-6 * A_ref
        assert p.data["state"] == "x1" and p.data["harmonic"] == 1


def test_saved_columns(tmp_path):
    """amplitude/phase/rms of every state in the file; the solution rows keep their layout."""
    br = branch(0.05)
    path = tmp_path / "frf.h5"
    br.save(path)
    back = load_branch(path)
    H = br.harmonics
    for s in br.states:
        assert back.amplitude[s].shape == back.phase[s].shape == (len(br), H)
        assert back.rms[s].shape == (len(br),)
    assert back.solutions.shape == (len(br), 4 * (2 * H + 1) + 1)       # states' coefficients, then W
    # the columns are those of the rows (x1 = first state: coefficients 1, 2 are c1, s1)
    np.testing.assert_array_equal(back.amplitude["x1"][:, 0], np.hypot(back.solutions[:, 1], back.solutions[:, 2]))
    assert [s.kind for s in back.special_points("peak")] == ["peak", "peak"]


def test_amplitude_force_curve_at_fixed_frequency():
    """Another parameter continued at fixed W: the first point is the reference's orbit."""
    model = load_model(DAMPER, continuation="F0", muN=0.05, W=1.5)
    br = frequency_response(model, 0.1, 0.2, options=dict(stability=False))
    assert br.success and br.param[0] == 0.1
    A_ref, phi_ref, _ = first_harmonic(1.5, 0.05)
    assert abs(br.amplitude["x1"][0, 0] - A_ref) <= 1e-7 * A_ref


def test_bad_input():
    model = load_model(DAMPER, continuation="W")
    with pytest.raises(InputError, match=r"--start 0:.*forcing frequency W must stay > 0"):
        frequency_response(model, 0.0, 1.0)
    with pytest.raises(InputError, match=r"--stop -1:.*> 0"):
        frequency_response(model, 0.5, -1.0)
    with pytest.raises(InputError, match=r"W = -2 must be positive"):         # declared positive=True
        load_model(DAMPER, continuation="F0", W=-2.0)
    fixed = load_model("shaw", continuation="beta", w=0.0)                      # declared without a sign
    with pytest.raises(InputError, match=r"forcing frequency w = 0.*--set w=VALUE"):
        frequency_response(fixed, 1.0, 2.0)
    belt = load_model("belt", continuation="Vb")
    with pytest.raises(InputError, match=r"'belt' is autonomous.*--from-hopf"):
        frequency_response(belt, 0.1, 0.2)
    from frictionkit.runtime import equilibrium_branch
    with pytest.raises(InputError, match=r"is forced.*no equilibria.*frictionkit frf"):
        equilibrium_branch(model, 0.5, 1.0)
