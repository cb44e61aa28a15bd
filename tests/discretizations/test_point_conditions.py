"""Derivative-bilinear rows and point conditions in the HBM and the ANM (issue 5, item 1).

References used here are independent of the code under test:

* Taylor coefficients of ``f(w(a))`` from Cauchy's integral (FFT of ``f`` on a circle of the
  complex plane), not from the recurrences of ``_series.py``;
* Jacobians from central finite differences of the residual;
* ANM right-hand sides from a polynomial fit of the residual along a polynomial path;
* Hopf points of seed 004 Table 2 from a root-find of the equilibrium's damping condition
  written by hand from seed 004 eqs. (2) and (4);
* periodic orbits from shooting on the original ODE (scipy, tight tolerances) and from the
  AFT harmonic balance of the original ODE (no recast at all).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import sympy as sp

from frictionkit.modelspec import ModelSpec
from frictionkit.runtime import load_model, equilibrium_branch, periodic_start_from_hopf, periodic_branch
from frictionkit.runtime.discretizations._aft import AFTDiscretization
from frictionkit.runtime.results._branch import trig_extrema
from frictionkit.runtime.discretizations._hbm import HBMDiscretization
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.model._series import SERIES_FUNCTIONS, taylor_coefficients, taylor_remainder
from frictionkit.runtime.drivers._orbits import find_periodic_orbit
from frictionkit.runtime.errors import InputError

_NUMPY = {"exp": np.exp, "tanh": np.tanh, "atan": np.arctan, "sin": np.sin, "cos": np.cos, "log": np.log}


@pytest.mark.parametrize("func", SERIES_FUNCTIONS)
def test_taylor_recurrences_match_cauchy_integral(func):
    rng = np.random.default_rng(3)
    P = 14
    w = 0.3 * rng.normal(size=P + 1)
    w[0] = 0.7
    M, r = 256, 0.5
    z = r * np.exp(2j * np.pi * np.arange(M) / M)
    ref = (np.fft.fft(_NUMPY[func](np.polyval(w[::-1], z))) / M / r ** np.arange(M))[:P + 1]
    assert np.max(np.abs(ref.imag)) < 1e-12
    np.testing.assert_allclose(taylor_coefficients(func, w), ref.real, rtol=0, atol=1e-12)
    # the remainder does not depend on w_p and completes f'(w0) w_p to y_p
    rho = taylor_remainder(func, w[:P])
    d = (_NUMPY[func](w[0] + 1e-6) - _NUMPY[func](w[0] - 1e-6)) / 2e-6
    assert abs(rho + d * w[P] - ref[P].real) < 1e-8


def test_unknown_series_function_is_refused():
    with pytest.raises(InputError, match="sinh"):
        taylor_coefficients("sinh", [1.0, 2.0])


def _random_point(disc, rng, lam):
    Z = 0.1 * rng.normal(size=disc.size)
    Z[disc.lam_index] = lam
    return Z


@pytest.mark.parametrize("name, param, params, lam", [
    ("vrande1", "Vdr", dict(eps=1e2), 0.3),          # atan
    ("weakstrong", "vd", dict(delta=1e-2), 1.2),     # exp(-sqrt(v^2 + d^2)/v0)
])
def test_hbm_jacobian_and_anm_series_of_point_rows(name, param, params, lam):
    model = load_model(name, continuation=param, backend="numpy", **params)
    disc = HBMDiscretization(model, 5)
    rng = np.random.default_rng(7)
    check_jacobian_and_series(disc, _random_point(disc, rng, lam), rng, jac_rtol=1e-7)


def check_jacobian_and_series(disc, Z, rng, jac_rtol):
    """A discretization with point conditions at ``Z``: ``jacobian`` against central differences
    (relative to max |J|), and ``series_rhs`` of orders 2 and 3 against the Taylor coefficients
    of the residual along a cubic path (polynomial fit), which also needs ``origin``."""
    J = disc.jacobian(Z)
    J = J.toarray() if hasattr(J, "toarray") else np.asarray(J)
    h = 1e-6
    Jfd = np.array([(disc.residual(Z + h * e) - disc.residual(Z - h * e)) / (2 * h)
                    for e in np.eye(disc.size)]).T
    assert np.max(np.abs(J - Jfd)) <= jac_rtol * np.max(np.abs(J))
    # order-p coefficients of R(Z0 + a Z1 + a^2 Z2 + a^3 Z3) = J Z_p + series_rhs(p)
    Z1, Z2, Z3 = (0.1 * rng.normal(size=disc.size) for _ in range(3))
    a = np.linspace(-1e-2, 1e-2, 9)
    R = np.array([disc.residual(Z + s * Z1 + s * s * Z2 + s ** 3 * Z3) for s in a])
    C = np.linalg.solve(np.vander(a, 9, increasing=True), R)
    for p, Zp, terms in ((2, Z2, [Z1]), (3, Z3, [Z1, Z2])):
        err = np.max(np.abs(C[p] - (J @ Zp + disc.series_rhs(terms, origin=Z))))
        assert err <= 1e-7 * max(1.0, np.max(np.abs(C[p]))), (p, err)
    with pytest.raises(InputError, match="origin"):
        disc.series_rhs([Z1])


def _vrande_hopf(eps, gamma=3.0, delta=1e-6):
    """Seed 004 eq. (2)/(4): the sliding equilibrium X = F(-Vdr) of X'' + X = F(X' - Vdr),
    F(V) = -(2/pi) atan(eps V) / (1 + gamma |V|), has eigenvalues of l^2 - F'(-Vdr) l + 1;
    the Hopf point is F'(-Vdr) = 0, i.e. with |V| -> R = sqrt(V^2 + delta^2) as in the zoo:
    eps (1 + gamma R) / (1 + eps^2 V^2) = gamma atan(eps V) V / R at V = Vdr."""
    def g(V):
        R = np.sqrt(V * V + delta * delta)
        return eps * (1 + gamma * R) / (1 + eps ** 2 * V ** 2) - gamma * np.arctan(eps * V) * V / R
    return scipy.optimize.brentq(g, 1e-9, 1.0, xtol=1e-18, rtol=1e-15)


# seed 004 Table 2: Hopf points V_dr,H of the 1-DOF model for eps = 1e2 .. 1e6 (3 digits)
TABLE2 = [(1e2, 5.19e-2), (1e3, 1.52e-2), (1e4, 4.67e-3), (1e5, 1.46e-3), (1e6, 4.61e-4)]


@pytest.mark.parametrize("eps, paper", TABLE2)
def test_seed004_table2_hopf_points(eps, paper):
    model = load_model("vrande1", continuation="Vdr", backend="numpy", eps=eps)
    br = equilibrium_branch(model, 0.3, paper / 5)
    hopf = [s.param for s in br.special if s.kind == "hopf"]
    assert len(hopf) == 1
    assert hopf[0] == pytest.approx(_vrande_hopf(eps), rel=1e-8)
    assert float(f"{hopf[0]:.2e}") == paper


def _tanh_exp_model():
    """Belt oscillator with a nested tanh * exp Stribeck law (issue 5's example), declared
    by the user: x'' + 2 xi x' + x = -(mud + (mus - mud) exp(-(vr/vs)^2)) tanh(vr/eps)."""
    def law(vr, mus, mud, vs, eps):
        return -(mud + (mus - mud) * sp.exp(-(vr / vs) ** 2)) * sp.tanh(vr / eps)
    m = ModelSpec("tanhexp", "belt oscillator, tanh-smoothed Stribeck law")
    xi, vb = m.parameter("xi", 0.05), m.parameter("vb", 0.8)
    mus, mud = m.parameter("mus", 1.0), m.parameter("mud", 0.5)
    vs, eps = m.parameter("vs", 0.5), m.parameter("eps", 0.3)
    x, v = m.second_order("x", velocity="v")
    vr = m.define("vr", v - vb)
    F = m.friction("belt", law, vr, mus=mus, mud=mud, vs=vs, eps=eps)
    m.ode(v, -2 * xi * v - x + F)
    return m


@pytest.fixture(scope="module")
def tanh_exp():
    model = load_model(_tanh_exp_model(), continuation="vb", backend="numpy")
    kinds = model.module.KINDS
    assert kinds.count("derivative_bilinear") == 2 and set(model.module.POINT_FUNCS) == {"tanh", "exp"}
    eq = equilibrium_branch(model, 2.0, 0.01)
    return model, eq


def test_tanh_exp_orbit_recast_anm_hbm_vs_aft_vs_shooting(tanh_exp):
    model, eq = tanh_exp
    hopf = [s for s in eq.special if s.kind == "hopf"]
    assert len(hopf) == 2
    # ANM from the first Hopf point through the fold back to the second one
    disc, Z, d = periodic_start_from_hopf(model, hopf[0], harmonics=30)
    br = periodic_branch(disc, Z, 0.01, 2.0, d, method="anm", options=dict(max_steps=100))
    assert br.status == "equilibrium"
    assert br.param[-1] == pytest.approx(hopf[1].param, rel=1e-6)
    # the orbit at vb = 0.8 on the upper part of the branch, refined at H = 50
    lam = 0.8
    k = int(np.argmin(np.abs(br.param - lam) + 10.0 * (br.ptp["x"] < 1.0)))
    disc50, Z50 = disc.resize(br.solutions[k], 50)
    e = np.zeros(disc50.size)
    e[-1] = 1.0
    Z50, _ = correct(disc50, Z50, e, lam)
    res = disc50.unpack(Z50)
    x_hbm = res["samples"](2048)
    lo, hi = trig_extrema(res["coefficients"][:model.n])
    ptp_hbm = hi - lo
    omega_hbm = res["omega"]
    # shooting on the original ODE from the HBM state at the maximum of x (its phase condition)
    j = int(np.argmax(x_hbm[0]))
    orbit = find_periodic_orbit(model, lam, x_hbm[:, j], 2 * np.pi / omega_hbm, rtol=1e-12, atol=1e-14)
    assert orbit.success
    # measured at H = 50: omega 4e-14, peak-to-peak 1e-10 (H = 30: 3e-10 and 2e-8)
    assert omega_hbm == pytest.approx(orbit.omega, rel=1e-10)
    np.testing.assert_allclose(ptp_hbm, orbit.ptp, rtol=1e-9)
    # AFT harmonic balance of the original ODE (no recast)
    aft = AFTDiscretization(model, 50, n_t=512)
    U = disc50.split(Z50)[0][:model.n]
    Za = aft.pack(U, omega_hbm, lam)
    ea = np.zeros(aft.size)
    ea[-1] = 1.0
    Za, _ = correct(aft, Za, ea, lam)
    ra = aft.unpack(Za)
    assert ra["omega"] == pytest.approx(orbit.omega, rel=1e-10)
    lo, hi = trig_extrema(ra["coefficients"][:model.n])
    np.testing.assert_allclose(hi - lo, orbit.ptp, rtol=1e-9)
    # the branch: from the first Hopf point through the fold back to the second one
    assert [s.kind for s in br.special] == ["fold", "hopf"]
