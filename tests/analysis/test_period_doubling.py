"""Period doubling of the forced twin-well Duffing oscillator, located two ways, and branch switching."""
import numpy as np
import pytest
from scipy.optimize import brentq

from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.analysis._floquet import floquet_collocation
from frictionkit.runtime.drivers._orbits import (locate_period_doubling, periodic_orbit_from_simulation,
                                                 switch_period_doubling)
from frictionkit.runtime.errors import ConvergenceError, InputError
from tests.models import duffing_handwritten
from frictionkit.runtime.drivers._orbits import solve_collocation

C = 0.3


@pytest.fixture(scope="module")
def duffing_pd():
    # x'' + 0.3 x' - x + x^3 = 0.25 cos(w t): a multiplier of the period-1 orbit passes -1
    # between w = 1.2 and 1.15 (checked by a scan of shooting orbits)
    model = Model(duffing_handwritten, dict(k=-1.0, b=1.0, c=C, F=0.25))
    orbit = periodic_orbit_from_simulation(model, 1.2, [1.0, 0.0], 300.0)
    return model, locate_period_doubling(model, 1.2, 1.15, orbit.x0)


def test_period_doubling_located_by_shooting_and_by_collocation(duffing_pd):
    # issue 4: the PD point located to 1e-5; the reference is an independent locator: the
    # collocation monodromy (condensation, N_int = 200, p = 4) zeroed by brentq
    model, pd = duffing_pd
    assert pd["multiplier"].real == pytest.approx(-1.0, abs=1e-9)
    disc = CollocationDiscretization(model, 200, 4)
    guess = pd["orbit"]

    def test(w):
        Z0 = disc.from_states(lambda t: guess.at(t, accurate=False), w, w)
        Z, _ = solve_collocation(disc, Z0)
        return float(np.min(floquet_collocation(disc, Z).multipliers.real) + 1)

    w_col = brentq(test, pd["lam"] - 2e-3, pd["lam"] + 2e-3, xtol=1e-12)
    assert abs(w_col - pd["lam"]) < 1e-9     # measured 1.5e-13; the issue asks for 1e-5


def test_switched_branch_has_half_the_frequency_and_the_flip_normal_form(duffing_pd):
    model, pd = duffing_pd
    w = pd["lam"]
    with pytest.raises(ConvergenceError, match="period-1"):
        switch_period_doubling(model, pd, +1e-3, 0.05)         # no doubled orbit on this side
    near = switch_period_doubling(model, pd, -1e-3, 0.05)
    far = switch_period_doubling(model, pd, -4e-3, 0.05)
    for orbit, delta in ((near, -1e-3), (far, -4e-3)):
        assert orbit.omega == pytest.approx((w + delta) / 2, rel=1e-14)     # half the base frequency
        # Liouville: tr J = -c over two forcing periods
        assert np.prod(orbit.multipliers).real == pytest.approx(np.exp(-C * orbit.T), rel=1e-8)
        assert np.all(np.abs(orbit.multipliers) < 1)        # supercritical flip: stable doubled orbit
    # flip normal form: the splitting |x(T/2) - x(0)| grows like sqrt(|delta|): ratio 2 for 4x delta
    split = [np.linalg.norm(o.at([o.T / 2])[:, 0] - o.x0) for o in (near, far)]
    assert split[1] / split[0] == pytest.approx(2.0, rel=0.05)


def test_no_period_doubling_in_bracket_is_named(duffing_pd):
    model, pd = duffing_pd
    with pytest.raises(InputError, match="no period doubling"):
        locate_period_doubling(model, 1.3, 1.25, pd["orbit"].x0)


def test_forced_shooting_discretization_on_the_doubled_branch(duffing_pd):
    # Z = [x0, lam] with T = 2 (2 pi / lam): the lam column carries dT/dlam f(x(T)) plus the
    # sensitivity of the flow; check the whole Jacobian against central differences
    from frictionkit.runtime.discretizations._shooting import ShootingDiscretization

    model, pd = duffing_pd
    orbit = switch_period_doubling(model, pd, -1e-3, 0.05)
    disc = ShootingDiscretization(model, rtol=1e-12, atol=1e-14, periods=2)
    Z = disc.from_orbit(orbit)
    assert disc.m == 2 and disc.size == 3
    assert np.max(np.abs(disc.residual(Z))) < 1e-9
    assert disc.unpack(Z)["omega"] == pytest.approx(orbit.omega, rel=1e-14)
    h = 1e-5
    fd = np.column_stack([(disc.residual(Z + h * e) - disc.residual(Z - h * e)) / (2 * h) for e in np.eye(3)])
    assert np.allclose(disc.jacobian(Z), fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["collocation", "hbm"])
def test_period_doubling_found_on_a_continued_branch(duffing_pd, kind):
    # issue 4: branch stability detects the multiplier through -1 and locates it along the
    # branch; the reference is the shooting locator (locate_period_doubling).  Measured:
    # collocation (N_int = 40, p = 4) 1.4e-12, HBM (H = 15, Hill's method) 2.9e-14.
    from frictionkit.runtime.engine._options import ContinuationProblem
    from frictionkit.runtime.drivers._continue import continuation
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization

    model, pd = duffing_pd
    orbit = pd["orbit"]
    w0 = 1.2
    start = periodic_orbit_from_simulation(model, w0, orbit.x0, 50.0)
    if kind == "collocation":
        disc = CollocationDiscretization(model, 40, 4)
        Z0, _ = solve_collocation(disc, disc.from_orbit(start))
    else:
        disc = HBMDiscretization(model, 15)
        t = start.times(128)
        Z0 = disc.from_samples(model.aux(start.at(t, accurate=False), t, w0), start.omega, w0)
    br = continuation(ContinuationProblem(disc, Z0, -1.0), "anm",
                      dict(lam_min=1.1, lam_max=w0, max_lam_step=0.01))
    pds = br.special_points("pd")
    assert [s.kind for s in br.special] == ["pd"] and pds[0].data["located"]
    assert abs(pds[0].param - pd["lam"]) < 1e-9
    assert np.min(pds[0].data["multipliers"].real) == pytest.approx(-1.0, abs=1e-8)
    # stable (complex pair inside the circle) before, unstable (a multiplier below -1) after
    np.testing.assert_array_equal(br.stable, np.where(br.param > pd["lam"], 1.0, 0.0))
    # Liouville: the product of the multipliers is exp(-c T)
    T = 2 * np.pi / br.param
    done = np.isfinite(br.multipliers[:, 0])        # the points where they were computed
    assert done.sum() >= 3
    np.testing.assert_allclose(np.prod(br.multipliers[done], axis=1).real, np.exp(-C * T[done]), rtol=1e-8)


@pytest.fixture(scope="module")
def pd4_shooting(duffing_pd):
    """The period-2 -> period-4 doubling by shooting on period-2 orbits (periods=2), followed
    from the shooting-switched doubled orbit at w_pd - 4e-3."""
    from frictionkit.runtime.drivers._orbits import find_periodic_orbit
    model, pd = duffing_pd
    ref = switch_period_doubling(model, pd, -4e-3, 0.05)
    x0 = ref.x0
    for w in np.arange(pd["lam"] - 4e-3, 1.1149, -0.005):
        x0 = find_periodic_orbit(model, w, x0, periods=2).x0
    return locate_period_doubling(model, w, 1.1128, x0, periods=2)["lam"]


def test_hbm_switching_at_period_doubling_in_the_half_frequency_basis(duffing_pd, pd4_shooting):
    """Issue 4: switching at a PD point of a continued HBM branch (the omega/2 basis).  The
    doubled branch has half the forcing frequency, is stable next to the (supercritical)
    flip, its orbit matches the shooting-switched one, and its own period doubling (the
    next step of the cascade) matches the shooting locator on the period-2 orbits."""
    from frictionkit.runtime.results._branch import trig_extrema
    from frictionkit.runtime.engine._options import ContinuationProblem
    from frictionkit.runtime.drivers._continue import continuation
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization
    from frictionkit.runtime.engine._newton import correct
    from frictionkit.runtime.drivers._switching import switch_period_doubling_hbm

    model, pd = duffing_pd
    w0 = 1.2
    start = periodic_orbit_from_simulation(model, w0, pd["orbit"].x0, 50.0)
    disc = HBMDiscretization(model, 15)
    t = start.times(128)
    Z0 = disc.from_samples(model.aux(start.at(t, accurate=False), t, w0), start.omega, w0)
    br = continuation(ContinuationProblem(disc, Z0, -1.0), "anm", dict(lam_min=1.1, lam_max=w0, max_lam_step=0.01))
    p = br.special_points("pd")[0]
    dbl = switch_period_doubling_hbm(disc, p, lam_min=1.1, lam_max=w0, options=dict(max_lam_step=0.01))
    assert dbl.status == "range" and dbl.param[-1] == pytest.approx(1.1, abs=1e-12)
    assert np.all(dbl.param < p.param)                     # supercritical: on the period-1 unstable side
    np.testing.assert_allclose(dbl.omega, dbl.param / 2, rtol=1e-15)
    assert np.all(dbl.stable[dbl.param > 1.12] == 1.0)
    # the orbit at w_pd - 4e-3 against the shooting switch (switch_period_doubling)
    lam = pd["lam"] - 4e-3
    ref = switch_period_doubling(model, pd, -4e-3, 0.05)
    d2 = dbl.discretization
    e = np.zeros(d2.size)
    e[-1] = 1.0
    Z, _ = correct(d2, dbl.solutions[np.argmin(np.abs(dbl.param - lam))], e, lam)
    lo, hi = trig_extrema(d2.split(Z)[0][:2])
    np.testing.assert_allclose(hi - lo, ref.ptp, rtol=1e-8)      # measured 4.7e-10
    # period 4: the doubled branch's own PD against shooting on period-2 orbits (periods=2)
    pd4 = dbl.special_points("pd")
    assert len(pd4) == 1
    assert abs(pd4[0].param - pd4_shooting) < 1e-7


def test_collocation_switching_at_period_doubling_on_the_doubled_period(duffing_pd, pd4_shooting):
    """Issue 4: switching at a PD point of a continued collocation branch (mesh over two
    forcing periods, antiperiodic null vector).  Same checks as the HBM switch: half the
    forcing frequency, stable next to the supercritical flip, the orbit of the shooting
    switch, and the next period doubling of the cascade where the HBM finds it."""
    from frictionkit.runtime.engine._options import ContinuationProblem
    from frictionkit.runtime.drivers._continue import continuation
    from frictionkit.runtime.engine._newton import correct
    from frictionkit.runtime.drivers._switching import switch_period_doubling_collocation

    model, pd = duffing_pd
    start = periodic_orbit_from_simulation(model, 1.2, pd["orbit"].x0, 50.0)
    disc = CollocationDiscretization(model, 40, 4)
    Z0, _ = solve_collocation(disc, disc.from_orbit(start))
    br = continuation(ContinuationProblem(disc, Z0, -1.0), "anm", dict(lam_min=1.1, lam_max=1.2, max_lam_step=0.01))
    p = br.special_points("pd")[0]
    dbl = switch_period_doubling_collocation(disc, p, lam_min=1.1, lam_max=1.2, options=dict(max_lam_step=0.01))
    d2 = dbl.discretization
    assert d2.n_intervals == 80 and d2.nu == 2
    assert dbl.status == "range" and np.all(dbl.param < p.param)
    np.testing.assert_allclose(dbl.omega, dbl.param / 2, rtol=1e-15)
    assert np.all(dbl.stable[dbl.param > 1.12] == 1.0)
    lam = pd["lam"] - 4e-3
    ref = switch_period_doubling(model, pd, -4e-3, 0.05)
    e = np.zeros(d2.size)
    e[-1] = 1.0
    Z, _ = correct(d2, dbl.solutions[np.argmin(np.abs(dbl.param - lam))], e, lam)
    np.testing.assert_allclose(d2.ptp(Z), ref.ptp, rtol=1e-7)           # measured 1.7e-8 (80 x 4)
    (pd4,) = dbl.special_points("pd")
    assert abs(pd4.param - pd4_shooting) < 1e-7
