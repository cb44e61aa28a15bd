"""Shooting on the original ODE: periods against AUTO-07p, Floquet multipliers against Liouville."""
import numpy as np
import pytest

from frictionkit.runtime.discretizations._shooting import ShootingDiscretization
from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.errors import ConvergenceError, InputError
from tests.models._orbits import belt, belt_orbit, vdp, vdp_orbit


@pytest.mark.parametrize("mu, T_auto", [(1.0, 6.663287), (2.0, 7.629874)])
def test_vdp_period_matches_auto07p(mu, T_auto):
    # issue 4: AUTO-07p periods of x'' - (mu - x^2) x' + x = 0, quoted to 7 digits
    orbit = find_periodic_orbit(vdp(), mu, [2.0, 0.0], T_auto * 0.99)
    assert abs(orbit.T - T_auto) < 1e-6
    assert orbit.omega == pytest.approx(2 * np.pi / orbit.T, rel=1e-15)
    assert orbit.residual < 1e-10


@pytest.mark.parametrize("mu", [1.0, 2.0])
def test_vdp_multipliers_obey_liouville(mu):
    # det(M) = exp(int_0^T tr J dt) = exp(int_0^T (mu - x^2) dt); trivial multiplier is 1,
    # so the other one is that exponential (Liouville's formula, independent of the monodromy).
    orbit = vdp_orbit(mu)
    x = orbit.samples(400)
    trace_integral = orbit.T * np.mean(mu - x[0] ** 2)   # periodic trapezoid rule: spectral
    mult = orbit.multipliers
    assert orbit.trivial_multiplier_error < 1e-8
    nontrivial = mult[np.argmax(np.abs(mult - 1))]
    assert nontrivial.real == pytest.approx(np.exp(trace_integral), rel=1e-6)
    assert abs(nontrivial.imag) < 1e-12


def test_vdp_ptp_locates_extrema_between_samples():
    orbit = vdp_orbit(1.0)
    x = orbit.samples(2000)
    sampled = x.max(axis=1) - x.min(axis=1)
    assert np.all(orbit.ptp >= sampled - 1e-12)
    assert np.allclose(orbit.ptp, sampled, rtol=1e-5)
    # the mu -> 0 asymptote of the vdp cycle is amplitude 2 (ptp 4); at mu = 1 it is 2.0086
    assert orbit.ptp[0] == pytest.approx(2 * 2.00861986, rel=1e-6)


@pytest.mark.parametrize("Vb", [0.5, 2.0])
def test_belt_trivial_multiplier(Vb):
    orbit = belt_orbit(Vb)
    assert orbit.trivial_multiplier_error < 1e-6
    # the cycle is stable on the upper branch (seed 000 Fig. 4): the other multiplier inside
    assert np.abs(orbit.multipliers).min() < 1
    # a sample of the orbit satisfies the ODE's periodicity: x(T) from samples segment-wise
    x = orbit.samples(64)
    assert x.shape == (2, 64)
    assert np.allclose(x[:, 0], orbit.x0)


def test_samples_agree_with_forward_integration():
    from scipy.integrate import solve_ivp
    orbit = belt_orbit(0.5)
    m = orbit.model
    t = orbit.times(16)
    sol = solve_ivp(lambda tt, x: m.rhs(tt, x, 0.5), (0, orbit.T), orbit.x0, method="DOP853", rtol=1e-13,
                    atol=1e-15, t_eval=t)
    x = orbit.samples(16)
    assert np.allclose(x, sol.y, rtol=0, atol=1e-9 * np.abs(x).max(axis=1, keepdims=True))


def test_shooting_discretization_jacobian_matches_finite_differences():
    orbit = vdp_orbit(1.5)
    disc = ShootingDiscretization(vdp(), rtol=1e-12, atol=1e-14)
    Z = disc.from_orbit(orbit)
    assert disc.m == 3 and disc.size == 4
    assert np.max(np.abs(disc.residual(Z))) < 1e-9
    J = disc.jacobian(Z)
    h = 1e-4   # FD noise ~ rtol/h = 1e-8, truncation ~ h^2 = 1e-8
    fd = np.column_stack([(disc.residual(Z + h * e) - disc.residual(Z - h * e)) / (2 * h) for e in np.eye(4)])
    assert np.allclose(J, fd, rtol=1e-6, atol=1e-6)
    info = disc.unpack(Z)
    assert info["lam"] == 1.5 and info["omega"] == pytest.approx(orbit.omega)
    assert info["samples"](8).shape == (2, 8)
    with pytest.raises(NotImplementedError, match="pseudo-arclength"):
        disc.quadratic(Z, Z)


def test_pseudo_arclength_step_with_shooting_discretization():
    # one hand-made predictor-corrector step: the continued orbit must match direct shooting
    disc = ShootingDiscretization(vdp(), rtol=1e-12, atol=1e-14)
    Z0 = disc.from_orbit(vdp_orbit(1.0))
    J = disc.jacobian(Z0)
    tangent = np.linalg.svd(J)[2][-1]
    tangent *= np.sign(tangent[-1])
    Z = Z0 + 0.2 * tangent
    for _ in range(20):
        F = np.append(disc.residual(Z), tangent @ (Z - Z0) - 0.2)
        A = np.vstack([disc.jacobian(Z), tangent])
        dZ = np.linalg.solve(A, -F)
        Z += dZ
        if np.max(np.abs(dZ)) < 1e-11:
            break
    lam, T = Z[-1], Z[2]
    direct = find_periodic_orbit(vdp(), lam, Z[:2], T)
    assert T == pytest.approx(direct.T, rel=1e-9)


def test_bad_input_is_named():
    with pytest.raises(InputError, match="x0"):
        find_periodic_orbit(vdp(), 1.0, [1.0, 0.0, 0.0], 6.0)
    with pytest.raises(InputError, match="T="):
        find_periodic_orbit(vdp(), 1.0, [2.0, 0.0], None)
    with pytest.raises(InputError, match="method"):
        find_periodic_orbit(vdp(), 1.0, [2.0, 0.0], 6.6, method="Euler")
    with pytest.raises(InputError, match="phase_state"):
        find_periodic_orbit(vdp(), 1.0, [2.0, 0.0], 6.6, phase_state=5)


def test_no_cycle_raises_convergence_error():
    # mu < 0: the origin is a stable focus and there is no limit cycle
    with pytest.raises(ConvergenceError):
        find_periodic_orbit(vdp(), -0.5, [2.0, 0.0], 6.3, max_iter=8)
