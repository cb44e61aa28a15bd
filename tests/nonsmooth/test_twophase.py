"""Seed 001 two-phase model: explicit scheme (§3.1) against the event-driven reference."""
import numpy as np
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.nonsmooth import (two_phase_explicit, two_phase_event_driven, shaw_forcing,
                                          SHAW_P, OrnsteinUhlenbeck, thermal_forcing)

X0 = 5.0  # |b(x0, 0, 0)| = 1 <= f_s: the motion starts static, as in seed 001 Fig. 1


def _phase_errors(b, f_d, f_s, t_end, hs):
    ref = two_phase_event_driven(b, SHAW_P["m"], f_d, f_s, X0, t_end)
    tref = ref.phase_times()
    errs = []
    for h in hs:
        r = two_phase_explicit(b, SHAW_P["m"], f_d, f_s, X0, t_end, h)
        t = r.phase_times()
        assert t.size == tref.size, (h, t, tref)
        sub = np.array(r.tau_sub)
        assert sub.size == len(ref.tau_sub)
        errs.append(max(np.max(np.abs(t - tref)), np.max(np.abs(sub - ref.tau_sub), initial=0.0)))
    return ref, np.array(errs)


def test_explicit_scheme_first_order_fs_above_fd():
    # §3.1.2 with parameter set (P) of §3.1.3: phase times at h = 1e-3, 1e-4, 1e-5
    b = shaw_forcing(SHAW_P["beta"], SHAW_P["omega"], SHAW_P["alpha"])
    hs = np.array([1e-3, 1e-4, 1e-5])
    ref, errs = _phase_errors(b, SHAW_P["f_d"], SHAW_P["f_s"], 14.0, hs)
    # the reference has the structure of seed 001 Fig. 1: static, dynamic with one reversal,
    # static, dynamic
    assert ref.tau_static[0] == 0.0 and len(ref.tau_dynamic) == 2 and len(ref.tau_sub) == 1
    order = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert 0.85 < order < 1.15, (order, errs)
    assert errs[-1] < 1e-3


def test_explicit_scheme_first_order_fs_equal_fd():
    # §3.1.1: f = f_s = f_d, the discrete variational inequality
    b = shaw_forcing(SHAW_P["beta"], SHAW_P["omega"], SHAW_P["alpha"])
    hs = np.array([1e-3, 1e-4])
    _, errs = _phase_errors(b, 1.0, 1.0, 14.0, hs)
    order = np.log(errs[0] / errs[1]) / np.log(10.0)
    assert 0.8 < order < 1.2, errs


def test_reference_satisfies_phase_conditions():
    # at every entrance into a static phase x' = 0 and |b| <= f_s; at every exit |b| = f_s
    b = shaw_forcing()
    ref = two_phase_event_driven(b, 1.0, 1.0, 1.2, X0, 30.0)
    for t in ref.tau_dynamic:
        x = np.interp(t, ref.t, ref.x)
        assert abs(abs(b(x, 0.0, t)) - 1.2) < 1e-10
    for t in ref.tau_static[1:]:
        k = np.searchsorted(ref.t, t)
        assert abs(ref.v[k]) == 0.0 and abs(b(ref.x[k], 0.0, t)) <= 1.2


def test_ornstein_uhlenbeck_statistics_and_reproducibility():
    ou = OrnsteinUhlenbeck(t_end=4000.0, dt=0.01, seed=7)
    # stationary variance sigma^2 / (2 theta) = 0.5 and lag correlation exp(-theta tau) (exact)
    v = ou.v[5000:]
    assert v.var() == pytest.approx(0.5, rel=0.1)
    lag = 100  # tau = 1
    c = np.corrcoef(v[:-lag], v[lag:])[0, 1]
    assert c == pytest.approx(np.exp(-1.0), abs=0.05)
    # the perturbed forcing of §3.1.4 is reproducible from the seed
    runs = []
    for seed in (3, 3, 4):
        noise = OrnsteinUhlenbeck(t_end=30.0, dt=1e-3, seed=seed)
        temp = lambda t, noise=noise: np.cos(0.5 * t) + 0.25 * noise(t)  # noqa: E731
        b = thermal_forcing(K=1.0, beta=6.0, temperature=temp)
        runs.append(two_phase_explicit(b, 1.0, 1.0, 1.2, X0, 30.0, 1e-3))
    np.testing.assert_array_equal(runs[0].x, runs[1].x)
    assert not np.array_equal(runs[0].x, runs[2].x)


def test_bad_input():
    b = shaw_forcing()
    with pytest.raises(InputError, match="f_d"):
        two_phase_explicit(b, 1.0, 1.5, 1.2, X0, 1.0, 1e-3)
    with pytest.raises(InputError, match="time step"):
        two_phase_explicit(b, 1.0, 1.0, 1.2, X0, 1.0, 0.0)
    with pytest.raises(InputError, match="mass"):
        two_phase_event_driven(b, -1.0, 1.0, 1.2, X0, 1.0)
