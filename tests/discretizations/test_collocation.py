"""Orthogonal collocation: agreement with shooting, convergence orders, contract structure."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
from frictionkit.runtime.drivers._orbits import collocation_orbit, solve_collocation
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.drivers._orbits import periodic_orbit_from_simulation
from frictionkit.runtime.errors import InputError
from tests.models import duffing_handwritten, vdp_handwritten
from tests.models._orbits import belt_orbit, vdp_orbit


def test_w1_collocation_agrees_with_shooting():
    # seed 003 case W1 (n = 10, Vb = 0.5): omega and peak-to-peak of both states to 1e-8
    orbit = belt_orbit(0.5)
    disc, Z, info = collocation_orbit(orbit.model, orbit, n_intervals=160, degree=3)
    out = disc.unpack(Z)
    assert info["iterations"] <= 6
    assert out["omega"] == pytest.approx(orbit.omega, rel=1e-8)
    assert np.allclose(out["ptp"], orbit.ptp, rtol=1e-8, atol=0)
    assert disc.n_dis == 3 * 160 + 1
    assert out["samples"](32).shape == (2, 32)


def _errors(orbit, degree, n_list, tau, ref):
    scale = np.abs(ref).max(axis=1, keepdims=True)
    e_omega, e_uniform = [], []
    for n_int in n_list:
        disc, Z, _ = collocation_orbit(orbit.model, orbit, n_intervals=n_int, degree=degree, phase="integral")
        e_omega.append(abs(disc.unpack(Z)["omega"] - orbit.omega) / orbit.omega)
        e_uniform.append(np.max(np.abs(disc.states_at(Z, tau) - ref) / scale))
    return np.array(e_omega), np.array(e_uniform)


@pytest.mark.parametrize("case", ["vdp", "W1"])
@pytest.mark.parametrize("degree, n_list", [(2, [40, 56, 80, 112, 160, 224]), (3, [48, 64, 80, 96, 128])])
def test_convergence_orders(case, degree, n_list):
    # Gauss collocation theory: uniform state error O(N_int^-(p+1)) (seed 003 §2.2) and
    # superconvergence O(N_int^-2p) of omega (a mesh-point quantity).  Reference: shooting
    # at rtol 1e-12 (omega accurate to ~1e-13), sampled on 300 points of one period.
    orbit = vdp_orbit(1.0) if case == "vdp" else belt_orbit(0.5)
    tau = np.arange(300) / 300
    ref = orbit.at(tau * orbit.T)
    e_omega, e_uniform = _errors(orbit, degree, n_list, tau, ref)
    logn = np.log(n_list)
    slope_uniform = np.polyfit(logn, np.log(e_uniform), 1)[0]
    # the max over a fixed grid aliases with the mesh, so fit over the whole range
    assert slope_uniform == pytest.approx(-(degree + 1), abs=0.35)
    slope_omega = np.polyfit(logn[-3:], np.log(e_omega[-3:]), 1)[0]
    assert slope_omega == pytest.approx(-2 * degree, abs=0.2)


def test_residual_is_exactly_quadratic_and_jacobian_matches():
    orbit = belt_orbit(0.5)
    disc = CollocationDiscretization(orbit.model, 10, 3)
    Z = disc.from_orbit(orbit)
    R0 = disc.residual(np.zeros(disc.size))
    QZ = disc.quadratic(Z, Z)
    LZ = disc.residual(Z) - R0 - QZ
    for a in (0.3, 1.7, -2.0):
        assert np.allclose(disc.residual(a * Z), R0 + a * LZ + a * a * QZ, rtol=1e-12, atol=1e-12 * np.abs(QZ).max())
    J = disc.jacobian(Z)
    assert J.shape == (disc.m, disc.size) and disc.m == 6 * 30 + 1
    # dR/dZ = L + Q(Z, .) + Q(., Z) for a quadratic R: check on random directions
    rng = np.random.default_rng(1)
    for _ in range(3):
        dZ = rng.standard_normal(disc.size) * np.maximum(np.abs(Z), 1e-6)
        expect = disc.residual(Z + dZ) - disc.residual(Z - dZ)
        assert np.allclose(2 * (J @ dZ), expect, rtol=1e-9, atol=1e-9 * np.abs(expect).max())


@pytest.mark.parametrize("module, n_int, degree", [("belt", 8, 3), ("duffing", 5, 4), ("vdp", 6, 2)])
def test_jacobian_from_the_cached_pattern_matches_central_differences(module, n_int, degree):
    """Every column of the sparse Jacobian (assembled from its cached COO pattern) against
    central differences of the residual, exact for a quadratic map up to rounding; a second
    call with other unknowns reuses the pattern."""
    model = {"belt": belt_orbit(0.5).model, "duffing": Model(duffing_handwritten, {}),
             "vdp": Model(vdp_handwritten, {})}[module]
    disc = CollocationDiscretization(model, n_int, degree)
    rng = np.random.default_rng(11)
    for _ in range(2):
        Z = rng.standard_normal(disc.size)
        J = disc.jacobian(Z).toarray()
        h = 1e-5
        fd = np.array([(disc.residual(Z + h * e) - disc.residual(Z - h * e)) / (2 * h) for e in np.eye(disc.size)]).T
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-9 * np.abs(fd).max())


def test_fast_series_rhs_is_the_sum_of_the_bilinear_form():
    """The vectorised ANM right-hand side equals sum_r Q(Z_r, Z_{p-r}) of :meth:`quadratic`
    (the generic definition of ``_discretization.py``), order by order, autonomous and forced."""
    from frictionkit.runtime.discretizations._base import Discretization
    rng = np.random.default_rng(4)
    orbit = belt_orbit(0.5)
    for disc in (CollocationDiscretization(orbit.model, 12, 3),
                 CollocationDiscretization(Model(duffing_handwritten, {}), 9, 4)):
        terms = [rng.standard_normal(disc.size) for _ in range(7)]
        for p in range(2, 8):
            fast = disc.series_rhs(terms[:p - 1])
            slow = Discretization.series_rhs(disc, terms[:p - 1])
            np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12 * np.abs(slow).max())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), degree=st.integers(1, 5))
def test_extrema_of_the_piecewise_polynomials(seed, degree):
    """ptp from the stacked companion matrices equals np.roots interval by interval, and
    bounds a fine sampling from above by at most its resolution."""
    rng = np.random.default_rng(seed)
    orbit = belt_orbit(0.5)
    disc = CollocationDiscretization(orbit.model, 7, degree)
    Z = rng.standard_normal(disc.size)
    U, _, _ = disc._parts(Z)
    p = degree
    idx = (np.arange(disc.n_intervals)[:, None] * p + np.arange(p + 1)[None, :]) % disc.G
    for r in range(orbit.model.n):
        coef = U[r][idx] @ disc._Vinv.T
        lo, hi = U[r].min(), U[r].max()
        for c in coef:
            roots = np.roots((c[1:] * np.arange(1, p + 1))[::-1]) if p > 1 else np.zeros(0)
            roots = roots[np.isreal(roots)].real
            roots = roots[(roots > 0) & (roots < 1)]
            if roots.size:
                v = np.polyval(c[::-1], roots)
                lo, hi = min(lo, v.min()), max(hi, v.max())
        assert disc.ptp(Z)[r] == pytest.approx(hi - lo, rel=1e-12)
    fine = disc.states_at(Z, np.linspace(0, 1, 20001))
    assert np.all(disc.ptp(Z) >= np.ptp(fine, axis=1) - 1e-12)


def test_collocation_branch_stops_at_the_second_hopf_point():
    """From B1 through the fold to B3 by collocation + ANM: the signed amplitude (phase state
    at tau = 0 minus its mean) changes sign at B3 and the run stops there, at the Hopf point
    of the equilibrium branch (eigenvalues, an independent computation)."""
    from frictionkit.runtime.cli._continuation import _to_collocation
    from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
    orbit = belt_orbit(0.5)
    eq = equilibrium_branch(orbit.model, 0.05, 12)
    hb = eq.special_points("hopf")
    disc, Z, d = periodic_start_from_hopf(orbit.model, hb[0], 10)
    coll, Zc, dc = _to_collocation(orbit.model, disc, Z, 40, 3, d)
    br = periodic_branch(coll, Zc, 0.0, 30.0, dc, options=dict(stability=False))
    assert br.status == "equilibrium" and br.param[-1] == pytest.approx(hb[1].param, rel=1e-7)
    assert [s.kind for s in br.special] == ["fold", "hopf"]
    A = br.solutions @ coll.amplitude_weights      # a maximum of y at tau = 0 all along
    assert np.all(A[:-1] > 0) and abs(A[-1]) < 1e-8 * A.max()


def test_forced_linear_oscillator_analytic_amplitude():
    # b = 0: x'' + c x' + k x = F cos(w t), amplitude F / sqrt((k - w^2)^2 + (c w)^2)
    model = Model(duffing_handwritten, {"b": 0.0, "c": 0.1, "F": 0.5})
    w = 1.2
    disc = CollocationDiscretization(model, 160, 3)
    assert disc.m == 3 * 480 and disc.size == disc.m + 1
    Z0 = disc.from_states(lambda t: np.zeros((2, np.size(t))), w, w)
    Z, info = solve_collocation(disc, Z0)
    amp = 0.5 / np.hypot(1 - w**2, 0.1 * w)
    assert disc.unpack(Z)["ptp"][0] / 2 == pytest.approx(amp, rel=1e-9)
    assert disc.unpack(Z)["omega"] == w


def test_from_states_takes_equispaced_samples_of_a_trigonometric_orbit():
    """Samples of the linear oscillator's analytic steady state (one harmonic, 7 samples) give
    the collocation vector of that state: its interpolant is exact, so the vector's states at
    the collocation's nodes equal the analytic ones; a wrong shape is named."""
    model = Model(duffing_handwritten, {"b": 0.0, "c": 0.1, "F": 0.5})
    w = 1.2
    amp, phase = 0.5 / np.hypot(1 - w**2, 0.1 * w), np.arctan2(0.1 * w, 1 - w**2)

    def exact(t):
        t = np.asarray(t, dtype=float)
        return np.array([amp * np.cos(w * t - phase), -amp * w * np.sin(w * t - phase)])

    disc = CollocationDiscretization(model, 40, 3)
    Z = disc.from_states(exact(np.arange(7) * (2 * np.pi / w) / 7), w, w)
    tau = disc.tau_nodes
    assert tau.size > 40
    np.testing.assert_allclose(disc.states_at(Z, tau), exact(tau * 2 * np.pi / w), atol=1e-13 * amp * w)
    with pytest.raises(InputError, match="states must be"):
        disc.from_states(np.zeros((3, 7)), w, w)


def test_forced_duffing_collocation_agrees_with_forced_shooting():
    model = Model(duffing_handwritten)
    w = 1.2
    orbit = periodic_orbit_from_simulation(model, w, [0.0, 0.0], 200.0)
    assert orbit.T == pytest.approx(2 * np.pi / w)
    disc, Z, _ = collocation_orbit(model, orbit, n_intervals=100, degree=4)
    assert np.allclose(disc.unpack(Z)["ptp"], orbit.ptp, rtol=1e-9)
    # omega = lam for this model: the lam column carries the (omega/2pi) m du/dtau term
    J = disc.jacobian(Z).toarray()
    h = 1e-6
    e = np.zeros(disc.size)
    e[-1] = h
    fd = (disc.residual(Z + e) - disc.residual(Z - e)) / (2 * h)
    assert np.allclose(J[:, -1], fd, rtol=1e-7, atol=1e-8)


def test_bad_options_are_named():
    orbit = vdp_orbit(1.0)
    with pytest.raises(InputError, match="n_intervals"):
        CollocationDiscretization(orbit.model, 1)
    with pytest.raises(InputError, match="degree"):
        CollocationDiscretization(orbit.model, 10, 0)
    with pytest.raises(InputError, match="phase"):
        CollocationDiscretization(orbit.model, 10, phase="poincare")
    disc = CollocationDiscretization(orbit.model, 10, phase="integral")
    with pytest.raises(InputError, match="set_reference"):
        disc.residual(np.zeros(disc.size))
