"""Event-driven stick-slip integration: seed 004 published numbers and exact reductions."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime.errors import InputError
from frictionkit.runtime.nonsmooth import (BeltChain, integrate_stick_slip, two_mass_belt,
                                          stick_slip_period, one_mass_cycle, orbit_error)

GAMMA, VDR = 3.0, 0.2


def seed004_one_dof(vdr=VDR):
    # seed 004 eqs. (2)-(3): X'' + X = F*, |F*| <= 1 in stick, F* = -sgn V /(1 + gamma |V|) in slip
    return BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [1.0], [lambda s: 1.0 / (1.0 + GAMMA * s)], vdr)


def smooth_orbit(eps, x0, v0, horizon, n=200):
    # the arctan-smoothed law of seed 004 eq. (4), integrated by a stiff solver
    def f(t, z):
        vr = z[1] - VDR
        return [z[1], -z[0] - (2 / np.pi) * np.arctan(eps * vr) / (1 + GAMMA * abs(vr))]

    def jac(t, z):
        vr = z[1] - VDR
        d = 1 + GAMMA * abs(vr)
        dF = -(2 / np.pi) * (eps / (1 + (eps * vr) ** 2) / d - np.arctan(eps * vr) * GAMMA * np.sign(vr) / d**2)
        return [[0.0, 1.0], [-1.0, dF]]

    def xmax(t, z):  # same phase origin as one_mass_cycle(start="xmax")
        return z[1]
    xmax.direction = -1
    sol = solve_ivp(f, (0, horizon), [x0, v0], method="Radau", jac=jac, rtol=1e-9, atol=1e-11,
                    events=xmax, dense_output=True)
    te = sol.t_events[0]
    P = te[-1] - te[-2]
    z = sol.sol(te[-2] + np.arange(n) * P / n)
    return P, z[0], z[1]


def test_seed004_table1_errors_of_the_smoothed_law():
    # seed 004 Table 1 (V_dr = 0.2, N = 200): e = 2.9e-1 (eps = 1e2), 8.9e-2 (eps = 1e3),
    # computed there against Hénon's 'exact' solution; ours is the event-driven one
    P, _, X, V = one_mass_cycle(seed004_one_dof(), n_samples=200, start="xmax")
    published = {1e2: 0.29, 1e3: 0.089}
    for eps, e_paper in published.items():
        Ps, Xs, Vs = smooth_orbit(eps, X[0], V[0], 3.5 * P)
        e = orbit_error(Xs, Vs, Ps, X, V, P)
        assert abs(e - e_paper) <= 0.5 * 10 ** (np.floor(np.log10(e_paper)) - 1), (eps, e)


def test_symmetric_two_mass_chain_reduces_to_one_mass():
    # beta = 1 and equal initial states: X1 = X2, the coupling spring is idle and the motion is
    # the one-mass seed-004 oscillator (an exact reduction)
    res = integrate_stick_slip(two_mass_belt(VDR, beta=1.0), [0.0, 0.0], [VDR, VDR], 50.0)
    assert np.max(np.abs(res.x[0] - res.x[1])) < 1e-12
    releases = res.event_times("slip", 0)
    period1, _ = stick_slip_period(seed004_one_dof())
    np.testing.assert_allclose(np.diff(releases)[1:], period1, rtol=1e-10)
    np.testing.assert_allclose(res.event_times("slip", 1), releases, rtol=1e-12)


def test_two_mass_period_two_near_the_right_fold():
    # seed 004 Table 3: the '+2 (right)' period-2 branch lives between the flip at 0.141 and
    # the cyclic fold at 0.165; at V_dr = 0.16 the attractor reached from rest on the belt is
    # period-2 on the Poincaré section X1' = 0 (upwards)
    res = integrate_stick_slip(two_mass_belt(0.16), [0.0, 0.0], [0.16, 0.16], 200.0, section=True, rtol=1e-9)
    pts = np.array([s[1][0] for s in res.section])[-8:]
    assert np.max(np.abs(pts[2:] - pts[:-2])) < 1e-6      # period 2 ...
    assert np.min(np.abs(pts[1:] - pts[:-1])) > 1e-2      # ... and not period 1


def test_missed_crossing_near_vmax_is_recovered():
    # a V_rel excursion above zero of ~1 microsecond inside a 150 microsecond solver step
    from frictionkit.runtime.nonsmooth import max_belt_speed, belt_oscillator, coulomb_cycle
    vb = max_belt_speed()[0] * (1 - 1e-5)
    cyc = coulomb_cycle(Vb=vb)
    period, _ = stick_slip_period(belt_oscillator(Vb=vb))
    assert period == pytest.approx(cyc.period, rel=1e-10)


def test_bad_chain_input():
    with pytest.raises(InputError, match="mu_k"):
        BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [0.5], [lambda s: 0.6], 0.1)
    with pytest.raises(InputError, match="stiffness"):
        BeltChain([1.0, 1.0], np.zeros((2, 2)), np.eye(3), [1, 1], [1, 1], [lambda s: 0.5] * 2, 0.1)
    with pytest.raises(InputError, match="belt_speed"):
        BeltChain([1.0], [[0.0]], [[1.0]], [1.0], [1.0], [lambda s: 0.5], 0.0)


def test_seed002_bistability_and_linear_rate():
    from frictionkit.runtime.nonsmooth import weakening_strengthening_belt
    xi, v0, dmu = 0.05, 0.5, 0.5
    v_lw = v0 * np.log(dmu / (2 * xi * v0))          # seed 002, from eq. (9) with mu_v = 0
    assert v_lw == pytest.approx(1.1513, abs=1e-4)
    # seed 002 Fig. 4 (v_d = 1.5 > v_lw, mu_v = 0): a stick-slip limit cycle from rest on the belt ...
    chain = weakening_strengthening_belt(1.5)
    res = integrate_stick_slip(chain, [0.0], [1.5], 80.0, rtol=1e-10)
    periods = np.diff(res.event_times("slip", 0))
    assert periods.size > 5 and np.ptp(periods[-3:]) < 1e-9 * periods[-1]
    # ... and steady sliding from a small perturbation of x_e = mu(v_d), decaying at the linear
    # rate T = xi + mu'(v_d) / 2 of eqs. (6)-(8), mu'(v) = -(dmu / v0) exp(-v / v0)
    for vd in (1.3, 1.5):
        chain = weakening_strengthening_belt(vd)
        xe = float(chain.mu_k[0](vd))
        res = integrate_stick_slip(chain, [xe + 1e-3], [0.0], 120.0)
        assert not res.events
        T = xi - 0.5 * dmu / v0 * np.exp(-vd / v0)
        a = np.hypot(*(res.evaluate([20.0, 100.0])[0][0] - xe, res.evaluate([20.0, 100.0])[1][0]))
        # |(x - x_e, x')| ~ exp(-T t) up to the focus' O(T) ellipticity
        rate = -np.log(a[1] / a[0]) / 80.0
        assert rate == pytest.approx(T, rel=0.02), (vd, rate, T)


@pytest.mark.parametrize("law", ["seed004", "seed002"])
def test_henon_rk4_converges_at_fourth_order_to_the_event_driven_period(law):
    # two independent transition finders: scipy event location on DOP853 dense output versus
    # seed 004 Appendix A (RK4 + Hénon's inverted step), here with velocity-dependent laws
    from frictionkit.runtime.nonsmooth import henon_stick_slip, weakening_strengthening_belt
    if law == "seed004":
        chain, horizon = seed004_one_dof(), 40.0
    else:
        chain, horizon = weakening_strengthening_belt(1.5), 30.0
    period, _ = stick_slip_period(chain)
    hs = np.array([0.04, 0.02, 0.01])
    errs = []
    for h in hs:
        rel = np.array(henon_stick_slip(chain, 0.0, chain.belt_speed, horizon, h).release_times)
        errs.append(abs(rel[-1] - rel[-2] - period))
    order = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert 3.6 < order < 4.4, (order, errs)
    assert errs[-1] < 1e-8 * period
