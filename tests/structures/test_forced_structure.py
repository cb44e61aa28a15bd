"""A forced structure with a friction damper (DESIGN §6): the finite-element beam of
examples/fe_beam_damper.py, reduced at load time, its frequency response by the condensed
harmonic balance (ANM with the forcing frequency continued) against time integration of the
reduced modal ODE written out in NumPy, and against the Newton engine."""
import numpy as np
import pytest
import scipy.integrate

from examples.fe_beam_damper import model as beam_model
from frictionkit.runtime import load_model, periodic_branch
from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization
from frictionkit.runtime.engine._newton import correct

EPS, FN, F0 = 0.1, 0.5, 1.0


@pytest.fixture(scope="module")
def beam(tmp_path_factory):
    model = load_model(beam_model(20, folder=tmp_path_factory.mktemp("beam")), continuation="W", eps=EPS)
    return model


def _solve_at(model, W, H=20):
    disc = CondensedAFTDiscretization(model, H)
    Z = disc.pack(np.zeros((disc.nv, disc.nh)), np.nan, W)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, W, max_iter=60)
    return disc, Z


def _steady_state(model, W, x0, point=None):
    """The forced steady state of the reduced modal ODE (NumPy, solve_ivp DOP853, rtol 1e-11), by
    Newton on the initial state over one forcing period from ``x0`` (the flow's sensitivity from
    the variational equation); the first harmonic (c1, s1) of the mid-span velocity by the
    trapezoidal rule on 4096 samples (spectrally accurate for a periodic analytic signal); of
    the displacement of ``point`` if given."""
    b = model.structure.basis
    w, z = b.frequencies, b.damping
    pts = list(b.points)
    phi_mid, phi_tip = b.shapes[pts.index("mid")], b.shapes[pts.index("tip")]
    m = w.size
    n = 2 * m

    def f(t, x):
        q, qd = x[:m], x[m:]
        F = -FN * np.tanh(phi_mid @ qd / EPS)
        return np.concatenate([qd, -w * w * q - 2 * z * w * qd + phi_mid * F + phi_tip * F0 * np.cos(W * t)])

    def g(t, y):
        x, Y = y[:n], y[n:].reshape(n, n)
        J = np.zeros((n, n))
        J[:m, m:] = np.eye(m)
        J[m:, :m] = -np.diag(w * w)
        dF = -FN / EPS / np.cosh(phi_mid @ x[m:] / EPS) ** 2
        J[m:, m:] = -np.diag(2 * z * w) + dF * np.outer(phi_mid, phi_mid)
        return np.concatenate([f(t, x), (J @ Y).ravel()])

    T = 2 * np.pi / W
    x = np.array(x0, dtype=float)
    for _ in range(4):
        y = scipy.integrate.solve_ivp(g, (0, T), np.concatenate([x, np.eye(n).ravel()]), method="DOP853",
                                      rtol=1e-11, atol=1e-14).y[:, -1]
        dx = np.linalg.solve(y[n:].reshape(n, n) - np.eye(n), -(y[:n] - x))
        x += dx
        if np.max(np.abs(dx)) < 1e-12 * np.max(np.abs(x)):
            break
    sol = scipy.integrate.solve_ivp(f, (0, T), x, method="DOP853", rtol=1e-11, atol=1e-14, dense_output=True)
    t = T * np.arange(4096) / 4096
    v = phi_mid @ sol.sol(t)[m:]
    th = W * t
    if point is not None:                       # that point's displacement instead
        v = b.shapes[pts.index(point)] @ sol.sol(t)[:m]
    return 2 * np.mean(v * np.cos(th)), 2 * np.mean(v * np.sin(th))


def test_reduced_beam_keeps_its_modes_and_the_static_correction(beam):
    info = beam.structure.basis.info
    assert info["n_dof"] == 40 and info["static"] == 2 and info["retained"] >= 3
    assert beam.structure.port.MODEL_NAME == "beam_damper_20"


@pytest.mark.parametrize("W", [45.0, 52.0, 60.0])
def test_first_harmonic_matches_the_steady_state_of_the_modal_ode(beam, W):
    disc, Z = _solve_at(beam, W)
    U = disc.split(Z)[0]
    C = disc.full_coefficients(Z)
    c1, s1 = _steady_state(beam, W, C[:, 0] + C[:, 1::2].sum(axis=1))      # the states at t = 0
    amp, ref = np.hypot(U[0, 1], U[0, 2]), np.hypot(c1, s1)
    assert abs(amp - ref) < 1e-7 * ref
    assert abs(np.arctan2(U[0, 2], U[0, 1]) - np.arctan2(s1, c1)) < 1e-7


def test_the_named_points_columns_match_the_steady_state_of_the_modal_ode(beam):
    """Issue 25 item 3: a structure's named points get amplitude/phase/rms columns (``y_tip``,
    the forced tip that no law reads), checked against the modal ODE's steady state."""
    from frictionkit.runtime.results._branch import Branch
    W = 52.0
    disc, Z = _solve_at(beam, W)
    br = Branch.from_solutions(disc, Z[None], np.zeros((1, disc.size)))
    assert "y_tip" in br.amplitude and "y_mid" in br.amplitude and "v_mid" in br.amplitude
    C = disc.full_coefficients(Z)
    c1, s1 = _steady_state(beam, W, C[:, 0] + C[:, 1::2].sum(axis=1), point="tip")
    ref = np.hypot(c1, s1)
    assert abs(br.amplitude["y_tip"][0, 0] - ref) < 1e-7 * ref
    assert abs(br.phase["y_tip"][0, 0] - np.arctan2(-s1, c1)) < 1e-7


def test_frequency_response_by_the_anm_one_factorization_per_step(beam):
    disc, Z = _solve_at(beam, 30.0)
    assert disc.supports_anm and disc.omega_is_lam
    anm = periodic_branch(disc, Z, 30.0, 80.0, 1.0, options=dict(stability=False))
    nwt = periodic_branch(disc, Z, 30.0, 80.0, 1.0, method="newton", options=dict(stability=False))
    assert anm.success and nwt.success and anm.param[-1] == pytest.approx(80.0)
    assert anm.counters["factorizations"] <= 1.5 * anm.counters["steps"]
    assert anm.counters["factorizations"] < nwt.counters["factorizations"] / 3
    # the resonance peak of both, refined at fixed W by Newton from the largest point: same curve
    for br in (anm, nwt):
        i = int(np.argmax(br.ptp["v_mid"]))
        assert 50.0 < br.param[i] < 55.0
    # points of the ANM curve solve the system at their W (checked by Newton on the other engine's
    # discretization at fixed W: nothing moves)
    for Zp in anm.solutions[::40]:
        e = np.zeros(disc.size)
        e[-1] = 1.0
        Zn, _ = correct(disc, Zp, e, Zp[-1])
        assert np.max(np.abs(Zn - Zp)) < 1e-9 * np.max(np.abs(Zp[:-1]))


def test_any_point_and_degree_of_freedom_on_demand(beam):
    """Reading a degree of freedom or a vector over them gives the named point there; the
    mid-span velocity recovered through the modes is the condensed unknown (the compliance's
    route)."""
    disc, Z = _solve_at(beam, 52.0)
    tip_dof = 2 * 20 - 2
    by_name = disc.point_response(Z, "tip", n_t=0)
    by_dof = disc.point_response(Z, tip_dof, n_t=0)
    vec = np.zeros(40)
    vec[tip_dof] = 1.0
    np.testing.assert_allclose(by_dof, by_name, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(disc.point_response(Z, vec, n_t=0), by_name, rtol=1e-12, atol=1e-15)
    # the mid-span velocity read back through the same route is the condensed unknown itself
    U = disc.split(Z)[0]
    np.testing.assert_allclose(disc.point_response(Z, "mid", "velocity", n_t=0), U[0], rtol=1e-9,
                               atol=1e-12 * np.abs(U[0]).max())
    t, x = disc.point_response(Z, "tip")
    assert t.shape == x.shape and abs(t[1] - t[0] - 2 * np.pi / 52.0 / t.size) < 1e-15
    with pytest.raises(Exception, match="point 'nose' does not exist"):
        disc.point_response(Z, "nose")


def test_frequency_response_of_the_structure_and_its_resonance_peak(beam):
    """``frequency_response`` on a structure: condensed, one resonance peak near the first mode,
    whose amplitude is the steady state's of the modal ODE there, and a maximum of it."""
    from frictionkit.runtime import frequency_response
    br = frequency_response(beam, 30.0, 80.0, harmonics=20)
    assert br.discretization.kind == "aft-condensed" and br.states == ("v_mid",)
    peaks = br.special_points("peak")
    assert len(peaks) == 1 and 50.0 < peaks[0].param < 55.0
    W = peaks[0].param
    disc, Z = _solve_at(beam, W)
    C = disc.full_coefficients(Z)
    amps = []
    for w in (W - 1e-3, W, W + 1e-3):
        d, Zw = _solve_at(beam, w)
        Cw = d.full_coefficients(Zw)
        amps.append(np.hypot(*_steady_state(beam, w, Cw[:, 0] + Cw[:, 1::2].sum(axis=1))))
    assert abs(peaks[0].data["amplitude"] - amps[1]) < 1e-7 * amps[1]
    assert amps[0] < amps[1] and amps[2] < amps[1]
