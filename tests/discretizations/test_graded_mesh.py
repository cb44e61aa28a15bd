"""A non-uniform (graded, adapted) mesh for the collocation of the states (issue 26).

Every number is compared with an independent reference: the shooting orbit and the variational
equation of the seed-000 belt (``floquet_from_orbit``), and for the stiff LuGre belt the
solve_ivp shooting of ``tests/analysis/_lugre_shooting.py`` (DOP853, rtol 1e-12).
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime import StateCollocationDiscretization
from frictionkit.runtime.analysis._floquet import floquet_from_orbit
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.discretizations._error import orbit_errors
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from tests.analysis import _lugre_shooting as shooting
from tests.models._orbits import belt_orbit
from tests.models.state_law_specs import DEFAULTS, lugre, rhs


def _at_lam(d, Z, lam):
    e = np.zeros(d.size)
    e[-1] = 1.0
    return correct(d, Z, e, lam, max_iter=40)[0]


def _graded(n, seed=0):
    """A mesh of ``n`` intervals whose lengths vary by a factor of about 8 at random."""
    h = np.exp(np.random.default_rng(seed).uniform(0, np.log(8.0), n))
    mesh = np.concatenate([[0.0], np.cumsum(h) / h.sum()])
    mesh[-1] = 1.0
    return mesh


def test_graded_mesh_on_the_belt_matches_shooting_and_the_variational_equation():
    """Seed-000 W1 orbit (Vb = 0.5), 40 x 4, against shooting and the variational equation.
    Measured (omega, trivial multiplier, non-trivial multiplier errors): uniform 2.9e-10,
    3.4e-8, 3.6e-9; the same uniform boundaries through the non-uniform code the same to
    rounding; a random mesh with lengths varying by 8 (coarse where the orbit is sharp)
    7.2e-8, 1.1e-5, 1.6e-6; the equidistributed mesh 5.9e-13, 4.3e-11, 3.0e-12."""
    orbit = belt_orbit(0.5)
    var = floquet_from_orbit(orbit)

    def errors(d):
        Z = _at_lam(d, d.from_orbit(orbit), 0.5)
        res = orbit_stability(d, Z)
        return Z, np.array([abs(d.unpack(Z)["omega"] / orbit.omega - 1), res.trivial_multiplier_error,
                            abs(res.nontrivial()[0] - var.nontrivial()[0])])

    uni = StateCollocationDiscretization(orbit.model, 40, 4)
    Zu, e_uni = errors(uni)
    assert np.all(e_uni < 1e-6)
    as_array = StateCollocationDiscretization(orbit.model, 40, 4, mesh=np.arange(41) / 40)
    assert not as_array.uniform
    Za, e_arr = errors(as_array)
    np.testing.assert_allclose(Za, Zu, rtol=0, atol=1e-9 * np.abs(Zu).max())
    graded = StateCollocationDiscretization(orbit.model, 40, 4, mesh=_graded(40))
    assert np.isclose(graded.hs.sum(), 1.0) and graded.hs.max() / graded.hs.min() > 4
    Zg, e_gr = errors(graded)
    assert np.all(e_gr < [1e-6, 1e-4, 1e-5]), e_gr
    # the signed amplitude reads the mesh: the phase state's value at 0 minus its mean (the
    # time average of the shooting orbit)
    mean = np.mean(orbit.at(np.arange(4096) * orbit.T / 4096, accurate=True)[0])
    amp = graded.amplitude_weights @ Zg
    assert abs(amp - (graded.states_at(Zg, [0.0])[0, 0] - mean)) < 1e-6 * abs(amp)
    # equidistribution (de Boor) from the uniform orbit: every error ten times smaller at least
    eq = uni.with_mesh(uni.equidistributed_mesh(Zu))
    _, e_eq = errors(eq)
    assert np.all(e_eq < e_uni / 10), (e_eq, e_uni)


def test_bad_mesh_is_refused():
    orbit = belt_orbit(0.5)
    for mesh, what in [([0.0, 0.5, 1.0], "boundaries"), ([0.0, 0.6, 0.4, 1.0], "increase"),
                       ([0.1, 0.5, 0.7, 1.0], "increase"), ("abc", "numbers")]:
        with pytest.raises(InputError, match=what):
            StateCollocationDiscretization(orbit.model, 3, 4, mesh=mesh)


@pytest.fixture(scope="module")
def lugre_orbit():
    """The LuGre belt's stick-slip cycle at vb = 0.3: a transient integrated by solve_ivp onto
    it, then the shooting reference (period, multipliers) and 4096 samples of one period."""
    vb = 0.3
    P = {k: v for k, v in DEFAULTS.items() if k != "vb"}
    sim = solve_ivp(lambda t, y: rhs(t, y, vb, **P), (0, 150), [0.0, 0.0, 0.0], method="LSODA",
                    rtol=1e-9, atol=1e-11, dense_output=True)
    t = np.linspace(100, 150, 200001)
    v = sim.sol(t)[1]
    down = t[np.flatnonzero((v[:-1] > 0) & (v[1:] <= 0))]
    y, T, M = shooting.periodic_orbit(vb, sim.sol(down[-1]), np.median(np.diff(down[-4:])))
    one = solve_ivp(lambda t, y: rhs(t, y, vb, **P), (0, T), y, method="DOP853", rtol=1e-12, atol=1e-13,
                    t_eval=np.arange(4096) * T / 4096)
    model = load_model(lugre(), "vb", backend="numpy")
    return model, vb, T, shooting.nontrivial(M), one.y


def test_equidistributed_mesh_resolves_the_lugre_stick_slip(lugre_orbit):
    """Two passes of de Boor's equidistribution on 60 x 4 intervals: the period from 3e-5
    (uniform) to about 1e-8 of the shooting reference (measured 1.3e-8), the non-trivial
    multiplier (0.0674482) to 1e-4 (uniform: 7e-4 off)."""
    model, vb, T, mu, x = lugre_orbit
    d = StateCollocationDiscretization(model, 60, 4)
    Z = _at_lam(d, d.from_states(x, vb, 2 * np.pi / T), vb)
    err_uniform = abs(d.unpack(Z)["T"] / T - 1)
    for _ in range(2):
        d2 = d.with_mesh(d.equidistributed_mesh(Z))
        Z = _at_lam(d2, d.to_mesh(Z, d2), vb)
        d = d2
    assert d.n_intervals == 60 and d.hs.max() / d.hs.min() > 10       # graded where the slip sticks
    err = abs(d.unpack(Z)["T"] / T - 1)
    assert err < 1e-7 and err < err_uniform / 100, (err, err_uniform)
    got = np.sort(np.abs(orbit_stability(d, Z).nontrivial()))
    assert abs(got[-1] - np.max(np.abs(mu))) < 1e-4
    # the mesh defect of the graded mesh (its intervals halved) is an upper bound of the
    # period's error and far below the uniform mesh's
    tan = np.zeros(d.size)
    tan[-1] = 1.0
    est = orbit_errors(d, Z[None], tan[None])["err_mesh"][0]
    assert err < est < 1e-2


def test_to_mesh_is_exact_on_a_refinement(lugre_orbit):
    """Halving every interval keeps each piecewise polynomial: the values anywhere agree to
    rounding; on another mesh the interpolation error is that of degree p."""
    model, vb, T, mu, x = lugre_orbit
    d = StateCollocationDiscretization(model, 20, 3, mesh=_graded(20, 1))
    Z = d.from_states(x, vb, 2 * np.pi / T)
    mid = 0.5 * (d.mesh[:-1] + d.mesh[1:])
    fine = d.with_mesh(np.sort(np.concatenate([d.mesh, mid])))
    Zf = d.to_mesh(Z, fine)
    tau = np.random.default_rng(2).uniform(0, 1, 200)
    np.testing.assert_allclose(fine.states_at(Zf, tau), d.states_at(Z, tau), rtol=0, atol=1e-12)
    assert Zf[-1] == Z[-1] and Zf[fine.omega_index] == Z[d.omega_index]
