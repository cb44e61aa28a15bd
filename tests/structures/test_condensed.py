"""The harmonic balance condensed onto the contacts (DESIGN §6) against independent references:
the uncondensed AFT of the whole reduced system (same H), time integration of the modal ODE
written out again in NumPy (solve_ivp, rtol 1e-11), the variational equation integrated by
solve_ivp, the Newton engine against the ANM, and the dynamic compliance's closed form."""
import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

from frictionkit.runtime import (equilibrium_branch, hill_multipliers, load_model, periodic_branch,
                                 periodic_start_from_hopf)
from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization
from frictionkit.runtime.engine._newton import correct

from ._models import fold_string, fold_string_hopf, string, string_law, string_rhs, string_shapes


@pytest.fixture(scope="module")
def string4():
    """4 modes, H = 40: the branch of the highest Hopf point, down in the bow speed."""
    model = load_model(string(4), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=40)
    br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False))
    return model, hopf, disc, br


def test_the_default_periodic_start_is_condensed_onto_the_bow_point(string4):
    model, hopf, disc, br = string4
    assert disc.kind == "aft-condensed" and disc.state_names == ("v_bow",)
    # the unknowns do not depend on the number of modes: n_in (2H + 1) + omega + lam
    assert disc.size == 1 * 81 + 2
    many = load_model(string(64), continuation="Vb")
    assert CondensedAFTDiscretization(many, 40).size == disc.size
    assert br.provenance["discretization"] == "aft-condensed" and br.states == ("v_bow",)
    assert br.success and br.status == "equilibrium"


def _shoot(n_modes, Vb, x0, T, fix, **law):
    """Periodic orbit of the NumPy modal ODE by Newton on (x0, T) with x0[fix] held (phase),
    the flow and its sensitivity from solve_ivp (rtol 1e-11) of the variational equation;
    ``law``: :func:`string_law`'s keywords (``delta``)."""
    f, w, phi = string_rhs(n_modes, Vb, **law)
    n = 2 * n_modes

    def dF(v):                      # the law's derivative by complex step (exact to rounding)
        return (string_law(v + 1e-30j, Vb, **law)).imag / 1e-30

    def jac(x):
        J = np.zeros((n, n))
        J[:n_modes, n_modes:] = np.eye(n_modes)
        J[n_modes:, :n_modes] = -np.diag(w * w)
        J[n_modes:, n_modes:] = -np.diag(2 * 0.003 * w) + np.outer(phi, phi) * dF(phi @ x[n_modes:])
        return J

    def flow(x, T):
        def g(t, y):
            X, Y = y[:n], y[n:].reshape(n, n)
            return np.concatenate([f(t, X), (jac(X) @ Y).ravel()])
        sol = scipy.integrate.solve_ivp(g, (0, T), np.concatenate([x, np.eye(n).ravel()]), method="DOP853",
                                        rtol=1e-11, atol=1e-13)
        return sol.y[:n, -1], sol.y[n:, -1].reshape(n, n)

    x = np.array(x0, dtype=float)
    for _ in range(12):
        xT, Mo = flow(x, T)
        r = np.append(xT - x, 0.0)
        A = np.zeros((n + 1, n + 1))
        A[:n, :n] = Mo - np.eye(n)
        A[:n, n] = f(0.0, xT)
        A[n, fix] = 1.0
        dx = np.linalg.solve(A, -r)
        x[:] += dx[:n]
        T += dx[n]
        if np.max(np.abs(dx[:n])) < 1e-12 * np.max(np.abs(x)) and abs(dx[n]) < 1e-13 * T:
            break
    sol = scipy.integrate.solve_ivp(lambda t, y: f(t, y), (0, T), x, method="DOP853", rtol=1e-11, atol=1e-13,
                                    dense_output=True)
    return x, T, sol, phi, Mo


def _ptp(sol, phi, n_modes, T):
    """Peak-to-peak of the bow-point velocity along a dense solution: grid extrema refined by
    a bounded scalar search."""
    v = lambda t: phi @ sol.sol(t)[n_modes:]     # noqa: E731
    t = np.linspace(0, T, 20001)
    vs = phi @ sol.sol(t)[n_modes:]
    out = []
    for sign, i in ((1, np.argmax(vs)), (-1, np.argmin(vs))):
        lo, hi = t[max(i - 1, 0)], t[min(i + 1, len(t) - 1)]
        res = scipy.optimize.minimize_scalar(lambda s: -sign * v(s), bounds=(lo, hi), method="bounded",
                                             options=dict(xatol=1e-14 * T))
        out.append(-sign * res.fun * sign * sign)
    return out[0] - out[1]


def test_orbits_match_time_integration_of_the_modal_ode(string4):
    model, _, disc, br = string4
    n_modes = 4
    checked = 0
    for i in (2, len(br) // 2, len(br) - 3):
        Z = br.solutions[i]
        omega = disc.unpack(Z)["omega"]
        C = disc.full_coefficients(Z)
        x0 = C[:, 0] + C[:, 1::2].sum(axis=1)              # the states at theta = 0
        x, T, sol, phi, _ = _shoot(n_modes, br.param[i], x0, 2 * np.pi / omega, fix=n_modes)
        assert abs(T - 2 * np.pi / omega) < 1e-7 * T
        ptp = _ptp(sol, phi, n_modes, T)
        assert abs(ptp - br.ptp["v_bow"][i]) < 1e-7 * ptp
        checked += 1
    assert checked == 3


@pytest.mark.parametrize("method", ["steps", "closed", "chunks"])
def test_structured_monodromy_matches_the_variational_equation(string4, method):
    _, _, disc, br = string4
    i = len(br) // 2
    Z = br.solutions[i]
    C = disc.full_coefficients(Z)
    x0 = C[:, 0] + C[:, 1::2].sum(axis=1)
    omega = disc.unpack(Z)["omega"]
    *_, Mo = _shoot(4, br.param[i], x0, 2 * np.pi / omega, fix=4)
    a = np.sort_complex(np.linalg.eigvals(disc.monodromy(Z, method=method)))
    b = np.sort_complex(np.linalg.eigvals(Mo))
    np.testing.assert_allclose(a, b, atol=1e-8)


@pytest.fixture(scope="module")
def string8():
    """8 modes, H = 20: condensed and uncondensed branches from the same Hopf point."""
    model = load_model(string(8), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    out = {}
    for method in ("aft", "aft-full"):
        disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=20, discretization=method)
        out[method] = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False))
    return model, out["aft"], out["aft-full"]


def test_condensed_and_uncondensed_are_one_discrete_system(string8):
    model, cond, full = string8
    disc, fd = cond.discretization, full.discretization
    assert disc.kind == "aft-condensed" and fd.kind == "aft"
    assert fd.size == 16 * 41 + 2 and disc.size == 41 + 2
    # every condensed point, mapped to the modal coefficients, solves the uncondensed system
    for Z in cond.solutions[::3]:
        _, Zf = disc.full_solution(Z)
        R = fd.residual(Zf)
        assert np.max(np.abs(R)) < 1e-10 * max(1.0, np.max(np.abs(Zf)))
        # and Newton on the uncondensed system at fixed lam stays there
        e = np.zeros(fd.size)
        e[-1] = 1.0
        Zn, _ = correct(fd, Zf, e, Zf[-1])
        assert abs(Zn[fd.omega_index] - Zf[fd.omega_index]) < 1e-10 * Zf[fd.omega_index]
    # the Hopf point where both branches end, located by each
    a, b = cond.special_points("hopf"), full.special_points("hopf")
    assert len(a) == len(b) == 1
    assert abs(a[0].param - b[0].param) < 1e-10 * abs(b[0].param)
    assert abs(a[0].omega - b[0].omega) < 1e-8 * b[0].omega


@pytest.mark.parametrize("method", ["steps", "closed", "chunks"])
def test_multipliers_against_the_uncondensed_monodromy_and_hill(string8, method):
    model, cond, full = string8
    disc = cond.discretization
    Z = cond.solutions[len(cond) // 2]
    fd, Zf = disc.full_solution(Z)
    a = np.sort_complex(np.linalg.eigvals(disc.monodromy(Z, method=method)))
    b = np.sort_complex(np.linalg.eigvals(fd.monodromy(Zf, 8 * fd.n_t)))    # Magnus, fine steps
    np.testing.assert_allclose(a, b, atol=1e-8)
    # Hill's method on the uncondensed system (a third route: no time stepping at all)
    info = fd.unpack(Zf)
    hill = hill_multipliers(model, info["lam"], np.asarray(info["coefficients"]).ravel(), info["omega"], 20)
    big = lambda m: np.sort(np.abs(m))[-4:]          # noqa: E731
    np.testing.assert_allclose(big(hill.multipliers), big(a), atol=1e-6)


def test_newton_engine_and_anm_agree_on_the_condensed_system(string4):
    model, hopf, disc, br = string4
    d2, Z, d = periodic_start_from_hopf(model, hopf, harmonics=40)
    nw = periodic_branch(d2, Z, 0.05, 0.6, d, method="newton", options=dict(stability=False))
    a, b = br.special_points("hopf"), nw.special_points("hopf")
    assert len(a) == len(b) == 1 and abs(a[0].param - b[0].param) < 1e-10 * a[0].param
    assert br.counters["factorizations"] < nw.counters["factorizations"]


def test_compliance_series_is_the_taylor_series_of_the_modal_sum():
    model = load_model(string(3), continuation="Vb")
    st = model.structure
    w, z, phi = st.basis.frequencies, st.basis.damping, st.phi_in[0]
    k = np.arange(0, 5, dtype=float)
    om = 1.3e3

    def exact(o):       # velocity at the bow per unit force there: sum_j phi^2 s / (w^2 + 2 z w s + s^2)
        s = 1j * k[:, None] * o
        return np.sum(phi * phi * s / (w * w + 2 * z * w * s + s * s), axis=1)

    G = st.compliance_series(k, om, 3)[:, :, 0, 0]
    np.testing.assert_allclose(G[0], exact(om), rtol=1e-13)
    # derivatives in omega by central differences of the closed form (steps 1e-2 .. 1e-1 rad/s)
    for h in (1e-1,):
        d1 = (exact(om + h) - exact(om - h)) / (2 * h)
        d2 = (exact(om + h) - 2 * exact(om) + exact(om - h)) / h ** 2 / 2
        np.testing.assert_allclose(G[1], d1, rtol=1e-5, atol=1e-12 * np.abs(G[0]).max())
        np.testing.assert_allclose(G[2], d2, rtol=1e-3, atol=1e-10 * np.abs(G[0]).max())


def test_fold_and_its_multipliers_condensed_and_uncondensed():
    model = load_model(fold_string(4), continuation="Vb")
    eq = equilibrium_branch(model, 0.05, 1.0)
    folds = {}
    for method in ("aft", "aft-full"):
        disc, Z, d = periodic_start_from_hopf(model, fold_string_hopf(eq), harmonics=20, discretization=method)
        br = periodic_branch(disc, Z, 0.05, 1.0, d, options=dict(stability=(method == "aft")))
        folds[method] = br.special_points("fold")
        if method == "aft":
            cond = br
    assert len(folds["aft"]) == len(folds["aft-full"]) == 1
    a, b = folds["aft"][0], folds["aft-full"][0]
    assert abs(a.param - b.param) < 1e-10 * b.param and abs(a.omega - b.omega) < 1e-10 * b.omega
    # at the fold a second multiplier meets the trivial one at +1 (the crossing located on the
    # condensed branch by its multipliers matches the engine's fold)
    assert abs(a.data["crossing_param"] - a.param) < 1e-8 * a.param
    mu = np.sort(np.abs(a.data["multipliers"] - 1))[:2]
    assert np.all(mu < 1e-5)
    assert np.all(np.isin(cond.stable[np.isfinite(cond.stable)], (0.0, 1.0)))


def test_32_modes_condensed_points_solve_the_uncondensed_system():
    """32 modes (64 states): the uncondensed AFT has 64 (2H + 1) unknowns, too many for a whole
    branch in a test; every few condensed points, mapped to the modal coefficients, solve it, and
    their multipliers agree with the uncondensed system's Magnus monodromy."""
    model = load_model(string(32), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=20)
    br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False, max_steps=12))
    for Zc in br.solutions[2::4]:
        fd, Zf = disc.full_solution(Zc)
        assert fd.size == 64 * 41 + 2
        assert np.max(np.abs(fd.residual(Zf))) < 1e-10 * max(1.0, np.max(np.abs(Zf)))
    a = np.sort_complex(np.linalg.eigvals(disc.monodromy(br.solutions[-1])))
    fd, Zf = disc.full_solution(br.solutions[-1])
    b = np.sort_complex(np.linalg.eigvals(fd.monodromy(Zf, 4 * fd.n_t)))
    np.testing.assert_allclose(a, b, atol=1e-8)


def _variational_along(disc, Z, Vb, n_modes, **law):
    """Monodromy of the NumPy modal ODE's variational equation along the orbit ``Z`` itself
    (its Fourier series evaluated exactly at every time solve_ivp asks), DOP853, rtol 1e-12:
    the same orbit as frictionkit's monodromy, integrated by another method."""
    w, phi = string_shapes(n_modes)
    C = disc.full_coefficients(Z)
    omega = disc.unpack(Z)["omega"]
    k = np.arange(1, (C.shape[1] - 1) // 2 + 1)
    n = 2 * n_modes

    def g(t, y):
        x = C[:, 0] + C[:, 1::2] @ np.cos(k * omega * t) + C[:, 2::2] @ np.sin(k * omega * t)
        dF = string_law(phi @ x[n_modes:] + 1e-30j, Vb, **law).imag / 1e-30
        J = np.zeros((n, n))
        J[:n_modes, n_modes:] = np.eye(n_modes)
        J[n_modes:, :n_modes] = -np.diag(w * w)
        J[n_modes:, n_modes:] = -np.diag(2 * 0.003 * w) + np.outer(phi, phi) * dF
        return (J @ y.reshape(n, n)).ravel()

    sol = scipy.integrate.solve_ivp(g, (0, 2 * np.pi / omega), np.eye(n).ravel(), method="DOP853",
                                    rtol=1e-12, atol=1e-14)
    return sol.y[:, -1].reshape(n, n)


def test_refined_monodromy_extrapolates_at_the_integrators_sixth_order():
    """A sharp law (delta = 3e-3): the condensed monodromy's error falls like the sixth power of
    the step (contract item 28, ``monodromy_order``), against the variational equation along the
    same orbit by solve_ivp; the refined multipliers, extrapolated at that order, are within
    1e-10 of it where the finer grid alone is 4e-10 off (extrapolated at the fourth order, as
    before, they were 1.3e-9 off: worse than the finer grid)."""
    from frictionkit.runtime.analysis._stability import refined_monodromy_stability

    delta = 3e-3
    model = load_model(string(4, delta=delta), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=40)
    br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False))
    assert disc.monodromy_order == 6
    i = len(br) // 2
    Z = br.solutions[i]
    ref = np.linalg.eigvals(_variational_along(disc, Z, br.param[i], 4, delta=delta))

    def error(mu):
        return max(np.abs(ref[:, None] - mu[None, :]).min(axis=1).max(),
                   np.abs(mu[:, None] - ref[None, :]).min(axis=1).max())

    n_t = disc.unpack(Z)["n_t"]
    errors = [error(np.linalg.eigvals(disc.monodromy(Z, n_t * f // 4))) for f in (1, 2, 4)]
    assert errors[0] / errors[1] > 32 and errors[1] / errors[2] > 32        # 2^6 = 64; 2^4 = 16
    res = refined_monodromy_stability(disc, Z, n_t, rtol=1e-6)
    assert res.method == "variational"
    finer = error(np.linalg.eigvals(disc.monodromy(Z, 2 * n_t)))
    assert error(res.multipliers) < 1e-10 < finer
