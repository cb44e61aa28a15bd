"""Quasi-static model of seed 001 §2.7 and its calibration (Table 1 procedure)."""
import numpy as np
import pytest

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.nonsmooth import (quasi_static_response, two_phase_event_driven, thermal_forcing,
                                          calibrate_quasi_static, calibration_table, synthetic_record,
                                          CALIBRATION_PARAMETERS)
from frictionkit.runtime.nonsmooth._calibration import SYNTHETIC_TRUTH, SYNTHETIC_BOUNDS, SYNTHETIC_K_BP


def _levels_vs_full_model(m):
    # the full two-phase model m x'' = K (beta T - x) - F with a slow temperature; its static
    # states x_j against eqs. (17)-(18) (jumps of 2 (f_s - f_d) / K)
    K, beta, fd, fs = 1.0, 1.0, 1.0, 1.2
    temp = lambda t: 5 * np.sin(t)  # noqa: E731
    ref = two_phase_event_driven(thermal_forcing(K, beta, temp), m, fd, fs, 0.0, 7.0,
                                 max_step=0.05 * np.sqrt(m), scan_step=1e-3)
    x_full = np.array([np.interp(t, ref.t, ref.x) for t in ref.tau_static[1:]])
    ts = np.linspace(0.0, 7.0, 70001)
    q = quasi_static_response(temp(ts), K=K, beta=beta, f_d=fd, f_s=fs)
    x_qs = np.cumsum(q.directions) * 2 * (fs - fd) / K
    assert x_full.size == x_qs.size
    return np.max(np.abs(x_full - x_qs))


def test_quasi_static_is_the_slow_forcing_limit_of_the_two_phase_model():
    e1, e2 = _levels_vs_full_model(1e-8), _levels_vs_full_model(1e-10)
    assert e2 < 0.01 * 0.4          # 1 % of a jump
    # the neglected temperature change during a dynamic phase is O(1/omega) = O(sqrt(m))
    assert 5 < e1 / e2 < 20


def test_quasi_static_hand_checked_cycle():
    # beta T: 0 -> 3 -> -3 with K = 1, f_s = 1.2, f_d = 1: threshold 1.2, jumps of 0.4
    T = np.concatenate((np.linspace(0, 3, 301), np.linspace(3, -3, 601)[1:]))
    q = quasi_static_response(T, K=1.0, beta=1.0, f_d=1.0, f_s=1.2)
    # upwards: x jumps when T - x > 1.2: x = 0.4 k after T passes 1.2 + 0.4 (k - 1)
    assert q.x[300] == pytest.approx(0.4 * 5)        # T = 3: jumps at 1.2, 1.6, 2.0, 2.4, 2.8
    assert np.all(np.abs(q.force) <= 1.2 + 1e-12)
    assert q.x[-1] == pytest.approx(2.0 - 0.4 * 10)  # T = -3: down to x - T <= 1.2
    with pytest.raises(InputError, match="f_d"):
        quasi_static_response(T, K=1.0, beta=1.0, f_d=2.0, f_s=1.2)


def test_calibration_recovers_known_parameters():
    # noise-free: the record fixes the parameters up to the sampling resolution
    _, T, z, _ = synthetic_record(days=10, noise=0.0, seed=1)
    fit = calibrate_quasi_static(T, z, SYNTHETIC_BOUNDS, K_BP=SYNTHETIC_K_BP, seed=1, popsize=10, maxiter=250)
    for k in CALIBRATION_PARAMETERS:
        assert fit.params[k] == pytest.approx(SYNTHETIC_TRUTH[k], rel=1e-2), k
    assert fit.rms < 1e-3
    clean = fit
    # with noise sigma = 0.05 mm (1 % of the signal range): the fit is as good as the truth and
    # its residual is the noise
    sigma = 0.05
    _, T, z, z_true = synthetic_record(days=10, noise=sigma, seed=2)
    fit = calibrate_quasi_static(T, z, SYNTHETIC_BOUNDS, K_BP=SYNTHETIC_K_BP, seed=3, popsize=10, maxiter=250)
    rms_truth = np.sqrt(np.mean((z - z_true) ** 2))
    assert fit.rms <= rms_truth * (1 + 1e-9)
    assert 0.8 * sigma < fit.rms < 1.2 * sigma
    for k in CALIBRATION_PARAMETERS:
        assert fit.params[k] == pytest.approx(SYNTHETIC_TRUTH[k], rel=0.05), k
    # two runs a, b: mean (a + b) / 2 and sample standard deviation |a - b| / sqrt(2) by hand
    table = calibration_table([clean, fit])
    a, b = (np.array([r.params[k] for k in CALIBRATION_PARAMETERS]) for r in (clean, fit))
    assert table["parameters"] == list(CALIBRATION_PARAMETERS)
    np.testing.assert_allclose(table["mean"], (a + b) / 2, rtol=1e-15)
    np.testing.assert_allclose(table["std"], np.abs(a - b) / np.sqrt(2), rtol=1e-14)
    np.testing.assert_allclose(table["cv"], np.abs(a - b) / np.sqrt(2) / np.abs((a + b) / 2), rtol=1e-14)


def test_calibration_bad_bounds():
    _, T, z, _ = synthetic_record(days=2, seed=0)
    with pytest.raises(InputError, match="beta"):
        calibrate_quasi_static(T, z, {k: v for k, v in SYNTHETIC_BOUNDS.items() if k != "beta"})
    with pytest.raises(InputError, match="K"):
        calibrate_quasi_static(T, z, dict(SYNTHETIC_BOUNDS, K=(0.0, 1.0)))
