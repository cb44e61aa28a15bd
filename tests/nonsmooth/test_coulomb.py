"""Exact damped Coulomb stick-slip (seed 000 §3) against independent references."""
import math

import numpy as np
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.nonsmooth import (BeltParameters, coulomb_cycle, stick_slip_exists,
                                          max_belt_speed, min_normal_force, belt_oscillator,
                                          stick_slip_period, integrate_stick_slip, coulomb_branch,
                                          load_coulomb_branch)


@pytest.mark.parametrize("vb", [0.01, 0.1, 0.3, 0.6, 0.95])
def test_period_matches_event_driven_integration(vb):
    # issue 6: semi-analytic period == event-driven period of the same Coulomb system, 1e-10
    cyc = coulomb_cycle(Vb=vb)
    assert cyc.exists
    period, res = stick_slip_period(belt_oscillator(Vb=vb))
    assert period == pytest.approx(cyc.period, rel=1e-10)
    # the slip ends where the closed form says: y(t1) at the stick onset
    stick = [e for e in res.events if e["kind"] == "stick"][-1]
    _, y1 = cyc.y0, cyc._slip(cyc.t1)[0]
    assert stick["x"][0] == pytest.approx(y1, rel=1e-9)


@pytest.mark.parametrize("slope", [2e-3, -1e-3])
def test_affine_kinetic_law_matches_event_driven(slope):
    # velocity-dependent kinetic friction mu = mud + a V_r (V_r < 0): exact construction vs
    # event-driven integration with the law given as a callable
    p = BeltParameters(Vb=0.3, kinetic_slope=slope)
    cyc = coulomb_cycle(p)
    mud = p.mud
    chain = belt_oscillator(p, mu_k=lambda s: mud - slope * s)
    period, _ = stick_slip_period(chain)
    assert period == pytest.approx(cyc.period, rel=1e-10)
    # the law really matters at this slope: the period moves away from Coulomb's
    assert abs(cyc.period / coulomb_cycle(Vb=0.3).period - 1) > 1e-5


def test_undamped_closed_form():
    # zeta = 0: t1 = (pi - 2 phi)/omega1 and a stick of 2 F1 (mus-mud) / (omega1^2 Vb) (seed 000 §3.3)
    p = BeltParameters(zeta=0.0, Vb=0.4)
    cyc = coulomb_cycle(p)
    w, F1, dmu = p.omega1, p.F1, p.mus - p.mud
    T = (math.pi + 2 * math.atan(p.Vb * w / (F1 * dmu))) / w + 2 * F1 * dmu / (w**2 * p.Vb)
    assert cyc.period == pytest.approx(T, rel=1e-12)
    assert cyc.t1 == pytest.approx(cyc.t1_undamped, rel=1e-12)
    # without damping stick-slip exists at every belt speed
    assert stick_slip_exists(p.with_(Vb=100.0))


def test_vmax_bracket_and_both_sides():
    v_in, v_out = max_belt_speed(rtol=1e-9)
    assert v_in < v_out and (v_out - v_in) / v_in < 1e-8
    # exists just inside, not just outside: the construction and an independent integration agree
    assert coulomb_cycle(Vb=v_in).exists and not coulomb_cycle(Vb=v_out).exists
    for factor, sticks in ((1 - 1e-4, True), (1 + 1e-4, False)):
        vb = v_in * factor
        chain = belt_oscillator(Vb=vb)
        p = BeltParameters(Vb=vb)
        y0 = (p.F1 * p.mus - 2 * p.eta1 * vb) / p.omega1**2
        res = integrate_stick_slip(chain, [y0], [vb - 1e-14], 0.02, max_events=3)
        assert any(e["kind"] == "stick" for e in res.events) == sticks


def test_vmax_proportional_to_fn_and_fmin_consistent():
    # V_max(F_N) / F_N is constant (the margin of ineq. 16 is homogeneous in (F_N, V_b))
    ratios = [max_belt_speed(FN=fn)[0] / fn for fn in (1.0, 5.0, 20.0)]
    assert np.ptp(ratios) / ratios[0] < 2e-9
    # F_min(V_b) located independently (brentq in F_N) is V_b / that ratio
    f_in, f_out = min_normal_force(Vb=0.2)
    assert f_out < f_in and (f_in - f_out) / f_in < 1e-8
    assert f_in == pytest.approx(0.2 / ratios[1], rel=2e-9)
    assert coulomb_cycle(Vb=0.2, FN=f_in).exists and not coulomb_cycle(Vb=0.2, FN=f_out).exists


def test_cycle_samples_are_consistent():
    cyc = coulomb_cycle(Vb=0.2)
    t, y, v = cyc.sample(20001)
    assert np.ptp(y) == pytest.approx(cyc.ptp["y"], rel=1e-6)
    assert np.ptp(v) == pytest.approx(cyc.ptp["v"], rel=1e-6)
    assert y.mean() == pytest.approx(cyc.mean["y"], rel=1e-4)
    # y' is the derivative of y (finite differences on the samples)
    dy = np.gradient(y, t)
    assert np.max(np.abs(dy[5:-5] - v[5:-5])[np.abs(t[5:-5] - cyc.t1) > 1e-6]) < 1e-3 * cyc.ptp["v"]


def test_branch_hdf5_layout(tmp_path):
    h5py = pytest.importorskip("h5py")
    from frictionkit.runtime.results._branch import load_branch
    br = coulomb_branch("Vb", np.linspace(0.05, 1.5, 30))
    assert br.exists[0] and not br.exists[-1]
    assert br.special["param"][0] == pytest.approx(max_belt_speed()[0], rel=1e-12)
    path = br.save(tmp_path / "coulomb.h5")
    with h5py.File(path) as f:
        assert f.attrs["method"] == "coulomb-exact"
        assert f.attrs["continuation_parameter"] == "Vb"
        for name in ("model", "model_hash", "frictionkit_version"):
            assert name in f.attrs
        for name in ("param", "omega", "ptp/y", "ptp/v", "stable", "special/kind", "special/param",
                     "special/omega", "min/y", "max/y", "mean/y", "limits/param", "period"):
            assert name in f
        assert f["limits/kind"][0].decode() == "V_max"
    back = load_coulomb_branch(path)
    np.testing.assert_array_equal(back["omega"], br.omega)
    k = 7
    assert back["ptp"]["y"][k] == coulomb_cycle(Vb=br.param[k]).ptp["y"]
    # the runtime core's loader reads it as a Branch
    b = load_branch(path)
    np.testing.assert_array_equal(b.ptp["y"], br.ptp["y"])
    assert b.provenance["method"] == "coulomb-exact" and np.all(b.stable[br.exists] == 1.0)


def test_bad_input_names_parameter():
    with pytest.raises(InputError, match="mus"):
        coulomb_cycle(mus=0.1)
    with pytest.raises(InputError, match="FN"):
        coulomb_branch("FN", [-1.0, 2.0])
    with pytest.raises(InputError, match="continuation parameter"):
        coulomb_branch("zeta", [0.1])


def test_small_belt_speed_limit():
    # V_b -> 0: the slip is half a damped oscillation about F1 mud / omega1^2 started from rest at
    # F1 mus / omega1^2, so ptp(y) -> F1 (mus - mud) / omega1^2 (1 + exp(-eta1 pi / omega_A)),
    # and the stick lasts ~ 1/V_b, so the pulsation -> 0 (seed 000 §4.2, Coulomb remarks)
    p = BeltParameters(Vb=1e-8)
    cyc = coulomb_cycle(p)
    wA = p.omega1 * math.sqrt(1 - p.zeta**2)
    ptp = p.F1 * (p.mus - p.mud) / p.omega1**2 * (1 + math.exp(-p.eta1 * math.pi / wA))
    assert cyc.ptp["y"] == pytest.approx(ptp, rel=1e-6)
    assert cyc.omega < 1e-3 * p.omega1
