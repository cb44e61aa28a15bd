"""Harmonic balance discretization: exactness of the discrete system, analytic references.

References are independent of the code under test: oversampled quadrature for the
truncated products, central finite differences for the Jacobian, the textbook steady
state of a forced linear oscillator, and a long time integration (scipy DOP853) for the
forced Duffing oscillator.
"""
import types

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime.discretizations._base import Discretization
from frictionkit.runtime.discretizations._hbm import (HBMDiscretization, _product_matrix, coefficients_to_samples,
                                      samples_to_coefficients, shift_phase)
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.results._branch import trig_extrema
from frictionkit.runtime.errors import InputError, ModelInterfaceError
from tests.models import belt_handwritten, belt_fn_handwritten, duffing_forced_handwritten


@pytest.fixture(scope="module")
def belt():
    return Model(belt_handwritten, {"n": 10, "FN": 5})


@pytest.mark.parametrize("H", [1, 4, 11])
def test_products_are_exact_truncations(belt, H):
    """Q(U, U) on 3H+1 samples equals the truncation of the product computed on 1000 samples."""
    rng = np.random.default_rng(H)
    d = HBMDiscretization(belt, H)
    U = rng.normal(size=(belt.N, 2 * H + 1))
    fine = 1000
    ref = samples_to_coefficients(belt.quad(d.qc, coefficients_to_samples(U, fine),
                                            coefficients_to_samples(U, fine)), H)
    np.testing.assert_allclose(d._quad_coef(U, U), ref, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("H, Ha", [(0, 0), (1, 2), (3, 1), (7, 14), (48, 96)])
def test_product_matrix_is_the_truncated_product(H, Ha):
    """``_product_matrix(a) @ b`` equals the harmonics 0..H of ``a(theta) b(theta)`` multiplied
    sample by sample on a fine grid (no aliasing: 4H + 1 < 1000)."""
    rng = np.random.default_rng(10 * H + Ha)
    a = rng.normal(size=2 * Ha + 1)
    B = rng.normal(size=(2 * H + 1, 3))
    fine = 1000
    ref = samples_to_coefficients(coefficients_to_samples(a, fine)[None, :] * coefficients_to_samples(B.T, fine), H)
    got = (_product_matrix(a, H) @ B).T
    np.testing.assert_allclose(got, ref, atol=1e-13 * np.abs(ref).max())


@pytest.mark.parametrize("H", [0, 1, 6])
@pytest.mark.parametrize("module", [belt_handwritten, belt_fn_handwritten])
def test_jacobian_matches_finite_differences(module, H):
    m = Model(module, {"n": 10})
    d = HBMDiscretization(m, H)
    rng = np.random.default_rng(7)
    Z = rng.normal(size=d.size)
    J = d.jacobian(Z)
    h = 1e-6
    fd = np.array([(d.residual(Z + h * e) - d.residual(Z - h * e)) / (2 * h) for e in np.eye(d.size)]).T
    # central differences of a quadratic map are exact up to rounding
    np.testing.assert_allclose(J, fd, atol=1e-7 * np.abs(J).max())


@pytest.mark.parametrize("module", [belt_handwritten, belt_fn_handwritten, duffing_forced_handwritten])
def test_residual_is_exactly_quadratic(module):
    """R(Z) = C + L Z + Q(Z, Z) with C = R(0), L = J(0) (contract of _discretization.py)."""
    m = Model(module, {})
    d = HBMDiscretization(m, 5)
    rng = np.random.default_rng(3)
    Z = rng.normal(size=d.size)
    C, L = d.linear_part()
    R = d.residual(Z)
    np.testing.assert_allclose(R, C + L @ Z + d.quadratic(Z, Z), atol=1e-12 * np.abs(R).max())
    # the fast ANM right-hand side equals the contract's default sum of Q(Z_r, Z_{p-r})
    terms = [rng.normal(size=d.size) for _ in range(5)]
    np.testing.assert_allclose(d.series_rhs(terms), Discretization.series_rhs(d, terms), atol=1e-11)


def test_fourier_round_trip_and_phase_shift():
    rng = np.random.default_rng(0)
    U = rng.normal(size=(3, 21))
    np.testing.assert_allclose(samples_to_coefficients(coefficients_to_samples(U, 64), 10), U, atol=1e-13)
    V = shift_phase(U, 1)
    assert abs(V[1, 2]) < 1e-14 and V[1, 1] > 0
    # a time shift keeps the extrema of every variable
    lo, hi = trig_extrema(U)
    lo2, hi2 = trig_extrema(V)
    np.testing.assert_allclose(hi2 - lo2, hi - lo, rtol=1e-12)


def test_trig_extrema_accurate():
    """Extrema of a trigonometric polynomial against a dense root-find of its derivative."""
    U = np.array([[0.3, 1.0, 0.2, 0.0, -0.3, 0.05, 0.01]])
    lo, hi = trig_extrema(U)
    th = np.linspace(0, 2 * np.pi, 2_000_001)
    u = 0.3 + np.cos(th) + 0.2 * np.sin(th) - 0.3 * np.sin(2 * th) + 0.05 * np.cos(3 * th) + 0.01 * np.sin(3 * th)
    assert hi[0] >= u.max() - 1e-15 and hi[0] - u.max() < 1e-11
    assert lo[0] <= u.min() + 1e-15 and u.min() - lo[0] < 1e-11


def test_forced_linear_oscillator_textbook_amplitude():
    m = Model(duffing_forced_handwritten, dict(beta=0.0, zeta=0.05, F=0.1))
    d = HBMDiscretization(m, 3)
    for Omega in (0.5, 0.97, 1.6):
        Z, _ = correct(d, d.pack(np.zeros((3, 7)), np.nan, Omega), np.eye(d.size)[-1], Omega)
        U, om, lam = d.split(Z)
        X = np.hypot(U[0, 1], U[0, 2])
        assert X == pytest.approx(0.1 / np.hypot(1 - Omega**2, 2 * 0.05 * Omega), rel=1e-13)
        # x = X cos(Omega t - phi), tan phi = 2 zeta Omega / (1 - Omega^2): the cos and sin
        # coefficients are X cos phi and X sin phi
        phi = np.arctan2(2 * 0.05 * Omega, 1 - Omega**2)
        np.testing.assert_allclose(U[0, 1:3], [X * np.cos(phi), X * np.sin(phi)], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(U[0, 3:], 0, atol=1e-15)     # no higher harmonics


def test_forced_duffing_against_time_integration():
    """HBM steady state vs DOP853 integrated over 60 damping times (transient ~ e^-60)."""
    m = Model(duffing_forced_handwritten, dict(beta=0.5, zeta=0.1, F=0.2))
    Omega = 0.9
    d = HBMDiscretization(m, 20)
    Z, _ = correct(d, d.pack(np.zeros((3, 41)), np.nan, Omega), np.eye(d.size)[-1], Omega, max_iter=30)
    U, _, _ = d.split(Z)
    T = 2 * np.pi / Omega
    n_per = int(np.ceil(600 / T))
    sol = solve_ivp(lambda t, x: m.rhs(t, x, Omega), (0, n_per * T), [0.0, 0.0], method="DOP853",
                    rtol=1e-12, atol=1e-14, dense_output=True)
    t = n_per * T - T + T * np.arange(64) / 64
    x_sim = sol.sol(t)
    x_hbm = coefficients_to_samples(U[:2], 64)
    np.testing.assert_allclose(x_hbm, x_sim, atol=1e-9 * np.abs(x_sim).max())


def test_bad_input():
    m = Model(belt_handwritten, {})
    with pytest.raises(InputError, match="harmonics"):
        HBMDiscretization(m, -1)
    with pytest.raises(InputError, match="phase_variable 'nope'"):
        HBMDiscretization(m, 3, phase_variable="nope")
    with pytest.raises(InputError, match="3H\\+1"):
        HBMDiscretization(m, 10, n_t=20)
    with pytest.raises(InputError, match="forced"):
        HBMDiscretization(Model(duffing_forced_handwritten, {}), 0)


def test_derivative_bilinear_row_without_point_condition_is_refused_with_the_model_name():
    fake = types.ModuleType("fake_exp_model")
    for k in dir(belt_handwritten):
        if not k.startswith("__"):
            setattr(fake, k, getattr(belt_handwritten, k))
    fake.MODEL_NAME = "exp_friction"
    fake.KINDS = belt_handwritten.KINDS[:-1] + ("derivative_bilinear",)
    with pytest.raises(ModelInterfaceError, match="exp_friction.*point condition"):
        HBMDiscretization(Model(fake, {}), 5)


@pytest.mark.parametrize("n_t", [64, 65, 300])
def test_the_transforms_are_numpy_ffts_to_the_last_bit(n_t):
    """``samples_to_coefficients``/``coefficients_to_samples`` call numpy's pocketfft gufuncs
    directly: the same numbers as numpy.fft.rfft/irfft with norm="forward" (even and odd n_t)."""
    rng = np.random.default_rng(n_t)
    H = (n_t - 1) // 2
    x = rng.standard_normal((3, n_t))
    Y = np.fft.rfft(x, axis=-1, norm="forward")
    ref = np.empty((3, 2 * H + 1))
    ref[:, 0], ref[:, 1::2], ref[:, 2::2] = Y[:, 0].real, 2 * Y[:, 1:H + 1].real, -2 * Y[:, 1:H + 1].imag
    np.testing.assert_array_equal(samples_to_coefficients(x, H), ref)
    c = rng.standard_normal((3, 2 * H + 1))
    spec = np.zeros((3, n_t // 2 + 1), dtype=complex)
    spec[:, 0] = c[:, 0]
    spec[:, 1:H + 1] = 0.5 * c[:, 1::2] - 0.5j * c[:, 2::2]
    np.testing.assert_array_equal(coefficients_to_samples(c, n_t), np.fft.irfft(spec, n=n_t, norm="forward"))
