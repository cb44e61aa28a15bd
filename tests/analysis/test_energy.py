"""Seed 002 bistability bounds: quadrature versus the Bessel closed form; v_lw formula."""
import numpy as np
import pytest
import scipy.special

from frictionkit.runtime import load_model
from frictionkit.runtime.analysis._energy import (energy_ratio, energy_ratio_exponential, v_lw,
                                         v_lw_exponential, v_up)

XI, MUD, MUS, V0 = 0.05, 0.5, 1.0, 0.5          # seed 002 eq. (16)


def exp_law(mud, mus, muv, v0):
    """Signed force of seed 002 eqs. (2)-(3) for v_rel < 0 (exact |v| = -v)."""
    def F(v):
        a = np.abs(v)
        return -(mud + (mus - mud) * np.exp(-a / v0) + muv * a / v0) * np.sign(v)
    return F


@pytest.mark.parametrize("muv", [-0.03, 0.0, 0.02, 0.05])
def test_quadrature_matches_the_bessel_closed_form(muv):
    F = exp_law(MUD, MUS, muv, V0)
    for A, vd in [(0.3, 1.0), (1.2, 1.5), (0.05, 0.4)]:
        q = energy_ratio(A, vd, XI, law=F)
        c = energy_ratio_exponential(A, vd, XI, MUD, MUS, muv, V0)
        assert abs(q - c) <= 1e-12 * max(1.0, abs(c))


@pytest.mark.parametrize("muv", [-0.03, 0.0, 0.02, 0.05])
def test_v_lw_root_find_matches_the_formula(muv):
    F = exp_law(MUD, MUS, muv, V0)
    ref = v_lw_exponential(XI, MUD, MUS, muv, V0)
    assert ref > 0
    assert v_lw(F, XI, (1e-3, 5.0)) == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("muv", [-0.03, 0.0, 0.02, 0.05])
def test_v_up_solves_the_criterion_and_lies_above_v_lw(muv):
    F = exp_law(MUD, MUS, muv, V0)
    vup = v_up(XI, (0.05, 10.0), law=F)
    omega = np.sqrt(1 - XI**2)
    # independent check on the closed form: W_f/E_v = 1 at A omega = v_up (seed 002 eq. 15)
    assert energy_ratio_exponential(vup / omega, vup, XI, MUD, MUS, muv, V0) == pytest.approx(1.0, abs=1e-9)
    assert vup > v_lw_exponential(XI, MUD, MUS, muv, V0)


def test_generated_zoo_law_gives_the_same_bounds():
    """The seed-002 zoo model's generated contact law (|v| smoothed) agrees with the exact law."""
    model = load_model("weakstrong", continuation="vd", backend="numpy", delta=1e-7, muv=0.02)
    F = exp_law(MUD, MUS, 0.02, V0)
    assert energy_ratio(0.7, 1.2, XI, model=model) == pytest.approx(energy_ratio(0.7, 1.2, XI, law=F), rel=1e-9)
    # at v_up the orbit touches v_rel = 0, where the |v| smoothing of the zoo law acts:
    # the gap to the exact law must vanish with delta
    ref = v_up(XI, (0.05, 10.0), law=F)
    gaps = [abs(v_up(XI, (0.05, 10.0), model=model.with_params(delta=d)) - ref) / ref for d in (1e-5, 1e-7, 1e-9)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-7
