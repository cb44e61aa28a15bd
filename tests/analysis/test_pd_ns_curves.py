"""Two-parameter curves of period doublings and Neimark-Sacker points (``analysis/_pd_ns_curves.py``).

* The LuGre belt of issue 26 (``tests/models/state_law_specs.py``), AFT H = 30: the doubling
  near vb = 1.245 (1.2247 converged: H = 30 places it 2 % high, the AFT's truncation of this
  stick-slip orbit, not the curve's) continued in (vb, s1).  Reference: five one-parameter
  branches in vb at fixed s1, each started from an orbit of the first branch far from the
  doubling (vb = 1.3) and corrected on the model with that s1, whose doubling
  ``branch_stability`` locates by Brent's method on the multipliers: a different algorithm
  on the same discretization (as ``test_fold_curve.py`` does for folds).
* The forced twin-well Duffing oscillator of ``test_period_doubling.py``, AFT H = 15 with
  256 samples: the curve in (w, c) against ``locate_period_doubling`` (shooting: solve_ivp on
  the variational equation, rtol 1e-12) at five values of c: an independent method.
* Neimark-Sacker of a friction oscillator: :func:`forced_weakstrong`, the belt oscillator of
  seed 002 (weakening law, xi = 0.05, vd = 1.25 just above the Hopf point v_lw = 1.1513 of
  steady sliding, so sliding is stable) forced by ``A cos(w t)`` away from resonance (w = 2.5).
  The forced orbit slides throughout (``x' - vd < 0``); as ``A`` grows, the velocity swings
  over the convex weakening curve and the averaged friction slope, ``exp(-vd/v0) I0(a/v0)``
  times ``(mus - mud)/v0`` for a velocity amplitude ``a`` (Jensen), outgrows the damping
  ``2 xi``: the free mode's pair of multipliers ``exp(T(sigma +- i omega0))`` leaves the unit
  circle, a supercritical-or-not NS point at A = 0.956 (w = 2.5, theta = 2.515).  The NS curve
  in (A, w) is checked against one-parameter AFT branches in A at five w and against shooting
  (Brent on the largest modulus of a complex pair of shooting's multipliers).
* Neimark-Sacker: ``tests/models/cycle_ns_handwritten.py``, whose unit-circle orbit has the
  multipliers ``exp(2 pi (lam +- i nu))`` (analytic): the NS curve in (lam, nu) is ``lam = 0``
  with ``theta = 2 pi nu``, and it ends at the 1:2 resonance at ``nu = 1/2``; on the AFT and
  on the collocation of the states.
"""
import re

import numpy as np
import pytest
from scipy.optimize import brentq
import sympy as sp

from frictionkit.modelspec import ModelSpec, laws
from frictionkit.runtime import (equilibrium_branch, find_periodic_orbit, load_model, locate_period_doubling,
                                 ns_curve, pd_curve,
                                 periodic_branch, periodic_orbit_from_simulation, periodic_start_from_hopf,
                                 periodic_start_from_orbit)
from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.discretizations._aft import AFTDiscretization
from frictionkit.runtime.discretizations._state_collocation import StateCollocationDiscretization
from frictionkit.runtime.drivers._orbits import solve_collocation
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.results._branch import SpecialPoint
from tests.models import cycle_ns_handwritten, duffing_handwritten
from tests.models.state_law_specs import lugre

S1 = (2.9, 2.95, 3.0, 3.1, 3.2)


@pytest.fixture(scope="module")
def lugre_h30():
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 2.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    # multiplier_rtol=0: the branches' multipliers on the discretization's own monodromy, the
    # one the PD and NS curves continue (their agreement is tested here)
    br = periodic_branch(disc, Z, 0.0, 2.0, d, options=dict(points_per_step=4, multiplier_stride=1, multiplier_rtol=0))
    pd = [s for s in br.special_points("pd") if 1.2 < s.param < 1.3]
    assert len(pd) == 1
    return br, pd[0]


@pytest.fixture(scope="module")
def lugre_curve(lugre_h30):
    br, pd = lugre_h30
    return pd_curve(br, pd, "s1", 2.83, 3.2, mu_values=S1, intervals="grid")   # the branches' monodromy


def test_orbit_error_of_the_curve_points_against_more_harmonics(lugre_h30, lugre_curve):
    """``columns["orbit_error"]``: each point's estimated orbit error, against the true one (the
    same orbit at the same vb and s1 corrected with H = 90 and twice the samples per harmonic:
    an independent, much finer discretization).  Within a factor of 10, as on branches."""
    from frictionkit.runtime.discretizations._aft import default_n_t
    from frictionkit.runtime.discretizations._error import relative_change
    from frictionkit.runtime.engine._newton import correct
    br, _ = lugre_h30
    curve = lugre_curve
    err = curve.columns["orbit_error"]
    assert err.shape == curve.lam.shape and np.all(np.isfinite(err))
    base = br.discretization
    for i in (0, len(curve) // 2, len(curve) - 1):
        disc = base.on_model(base.model.with_params(s1=float(curve.mu[i])))
        Z = curve.solutions[i]
        big, Zb = disc.resize(Z, 90, n_t=2 * default_n_t(90, True))
        e = np.zeros(big.size)
        e[-1] = 1.0                                    # vb held
        Zr, _ = correct(big, Zb, e, Zb[-1], max_iter=30)
        U = big.split(Zr)[0]
        true = relative_change(U - big.split(Zb)[0], U)
        assert true / 10 <= err[i] <= 10 * true, (i, curve.mu[i], err[i], true)


def test_lugre_pd_curve_agrees_with_one_parameter_branches(lugre_h30, lugre_curve):
    br, pd = lugre_h30
    curve = lugre_curve
    assert curve.kind == "pd" and curve.status == "range" and curve.mu[-1] == pytest.approx(3.2, abs=1e-14)
    assert curve.lam[0] == pytest.approx(pd.param, abs=1e-9)
    disc = br.discretization
    after = np.arange(pd.index + 1, len(br))
    start = br.solutions[after[np.argmax(br.param[after] >= 1.3)]]   # an orbit of the first branch at vb = 1.3
    for s1 in S1:
        k = np.flatnonzero(np.isclose(curve.mu, s1, rtol=1e-13, atol=0))
        assert k.size == 1
        one = periodic_branch(disc.on_model(disc.model.with_params(s1=s1)), start, 1.15, 1.35, direction=-1.0,
                              options=dict(points_per_step=4, multiplier_stride=1, multiplier_rtol=0))
        ref = [s.param for s in one.special_points("pd")]
        assert len(ref) == 1
        # measured: 9e-16 .. 1.4e-14
        assert abs(curve.lam[k[0]] - ref[0]) < 1e-7
    # a stiffer bristle damping s1 moves the doubling to higher belt speeds
    assert np.all(np.diff(curve.lam) > 0)


def test_pd_curve_against_shooting_on_the_forced_duffing_oscillator():
    c0 = 0.3
    model = Model(duffing_handwritten, dict(k=-1.0, b=1.0, c=c0, F=0.25))
    orbit = periodic_orbit_from_simulation(model, 1.2, [1.0, 0.0], 300.0)
    disc, Z = periodic_start_from_orbit(model, 1.2, orbit.at(orbit.times(256)), orbit.T, 15,
                                        discretization="aft", n_t=256)
    br = periodic_branch(disc, Z, 1.1, 1.2, -1.0,
                         options=dict(max_lam_step=0.01, multiplier_stride=1, multiplier_rtol=0))
    assert [s.kind for s in br.special] == ["pd"]
    cs = (0.26, 0.28, 0.32, 0.34, 0.36)
    down = pd_curve(br, br.special[0], "c", 0.26, c0, direction=-1, mu_values=cs)
    up = pd_curve(br, br.special[0], "c", c0, 0.36, direction=1, mu_values=cs)
    assert down.status == up.status == "range"
    for c in cs:
        curve = down if c < c0 else up
        w = curve.lam[np.flatnonzero(np.isclose(curve.mu, c, rtol=1e-13, atol=0))[0]]
        m = model.with_params(c=c)
        # shooting's own orbit (from the curve's state at t = 0 as a guess), bracket, Brent
        x0 = curve_state(disc, curve, c)
        ref = locate_period_doubling(m, w + 0.005, w - 0.005, x0, xtol=1e-10)
        # the Magnus monodromy on 256 steps against the variational equation at rtol 1e-12
        # (measured 3.4e-9 .. 2.6e-8)
        assert abs(w - ref.lam) < 1e-7, (c, w - ref.lam)


def curve_state(disc, curve, mu):
    """The state at t = 0 of the curve's orbit at ``mu`` (a guess for shooting)."""
    i = np.flatnonzero(np.isclose(curve.mu, mu, rtol=1e-13, atol=0))[0]
    return disc.unpack(curve.solutions[i])["samples"](64)[:, 0]


def _cycle_branch(kind):
    model = Model(cycle_ns_handwritten, {"lam": -0.2, "nu": 0.3})
    if kind == "aft":
        th = 2 * np.pi * np.arange(32) / 32
        x = np.vstack([np.cos(th), np.sin(th), 0 * th, 0 * th])
        disc, Z = periodic_start_from_orbit(model, -0.2, x, 2 * np.pi, 3, discretization="aft")
    else:
        disc = StateCollocationDiscretization(model, 6, 4)
        Z, _ = solve_collocation(disc, disc.from_states(lambda t: np.vstack([np.cos(t), np.sin(t), 0 * t, 0 * t]),
                                                        -0.2, 1.0))
    # the Newton engine does not stop this branch at lam = 0.2 (it runs on to the step budget):
    # a small budget instead; the NS point is at lam = 0, the fifth point
    br = periodic_branch(disc, Z, -0.2, 0.2, 1.0, method="newton", options=dict(max_lam_step=0.05, max_steps=12))
    assert [s.kind for s in br.special] == ["ns"]
    return br


@pytest.mark.parametrize("kind", ["aft", "collocation"])
def test_ns_curve_is_the_analytic_one_and_ends_at_the_1_2_resonance(kind):
    br = _cycle_branch(kind)
    # collocation: 2 (4 N_int p + 3) monodromies per Jacobian; a short stretch
    nus = (0.31, 0.32, 0.33, 0.34, 0.35) if kind == "aft" else (0.31, 0.32)
    top = 0.6 if kind == "aft" else 0.32
    curve = ns_curve(br, br.special[0], "nu", 0.1, top, mu_values=nus)
    assert curve.kind == "ns" and len(curve) > 2
    # analytic: lam = 0 and theta = 2 pi nu on the whole curve (measured 1e-15, 1e-11)
    np.testing.assert_allclose(curve.lam, 0.0, atol=1e-10)
    np.testing.assert_allclose(curve.columns["theta"], 2 * np.pi * curve.mu, atol=1e-9)
    for nu in nus:
        assert np.count_nonzero(np.isclose(curve.mu, nu, rtol=1e-13, atol=0)) == 1
    if kind == "aft":
        assert curve.status == "resonance-1:2"
        assert curve.mu[-1] == pytest.approx(0.5, abs=1e-9) and curve.columns["theta"][-1] == pytest.approx(np.pi)
    else:
        assert curve.status == "range"


def test_bad_starts_are_named(lugre_h30, tmp_path):
    br, pd = lugre_h30
    fold = br.special_points("fold")[0]
    with pytest.raises(InputError, match=r"pd_curve needs a period doubling \('pd'\) special point of a periodic "
                                         r"branch, not a 'fold' special point at vb = 1\.40.*fold_curve"):
        pd_curve(br, fold, "s1", 2.8, 3.0)
    with pytest.raises(InputError, match=r"ns_curve needs a Neimark-Sacker point \('ns'\).* not a 'pd' special "
                                         r"point at vb = 1\.24.*pd_curve"):
        ns_curve(br, pd, "s1", 2.8, 3.0)
    # a point labelled 'pd' whose orbit has no multiplier at -1
    fake = SpecialPoint("pd", float(br.param[5]), float(br.omega[5]), 5, br.solutions[5])
    with pytest.raises(InputError, match=r"the orbit at vb = .* has no multiplier at -1 .*not a period doubling"):
        pd_curve(br, fake, "s1", 2.8, 3.0)
    with pytest.raises(InputError, match="unknown parameter 's3'"):
        pd_curve(br, pd, "s3", 2.8, 3.0)
    with pytest.raises(InputError, match=r"\('pd'\) special point of a periodic branch, not an object of type 'str'"):
        pd_curve(br, "pd", "s1", 2.8, 3.0)


def test_saved_curve_reads_back(lugre_curve, tmp_path):
    lugre_curve.save(tmp_path / "pd.h5")
    back = BifurcationCurve.load(tmp_path / "pd.h5")
    assert back.kind == "pd" and back.mu_name == "s1" and back.counters == lugre_curve.counters
    np.testing.assert_array_equal(back.lam, lugre_curve.lam)
    br = _cycle_branch("aft")
    ns = ns_curve(br, br.special[0], "nu", 0.1, 0.32)
    ns.save(tmp_path / "ns.h5")
    back = BifurcationCurve.load(tmp_path / "ns.h5")
    assert back.kind == "ns"
    np.testing.assert_array_equal(back.columns["theta"], ns.columns["theta"])
    back.plot(tmp_path / "ns.png")
    assert (tmp_path / "ns.png").stat().st_size > 0


def test_cli(lugre_h30, tmp_path):
    """``frictionkit pd-curve`` on the LuGre model file: the same point at s1 = 2.9 as the API
    with the default options (error-controlled multipliers on the branch, the curve's
    monodromy refined until its critical multiplier converges); a branch located on the
    sample grid (``multiplier_rtol = 0``) is refused by the default curve with the way."""
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    import tests.models.state_law_specs as specs
    args = ["pd-curve", specs.__file__, "--param", "vb", "--start", "0.01", "--stop", "1.3", "--pd", "3",
            "--second", "s1", "--min", "2.83", "--max", "2.9", "--at", "2.9", "-q", "--out", str(tmp_path / "pd.h5")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    model = load_model(lugre(), "vb", backend="numpy")
    eq = equilibrium_branch(model, 0.01, 1.3)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    br = periodic_branch(disc, Z, 0.0, 1.3, d, options=dict(multiplier_stride=1))
    api = pd_curve(br, br.special_points("pd")[2], "s1", 2.83, 2.9, mu_values=[2.9])
    at = re.search(r"at s1 = 2.9: vb = (\S+) \(estimated orbit error ([0-9.e+-]+)\)\n", r.output)
    assert at and float(at.group(1)) == pytest.approx(api.lam[np.flatnonzero(api.mu == 2.9)[0]], abs=1e-9)
    grid_br, grid_pd = lugre_h30
    with pytest.raises(InputError, match="intervals='grid'"):
        pd_curve(grid_br, grid_pd, "s1", 2.83, 2.9)
    assert BifurcationCurve.load(tmp_path / "pd.h5").kind == "pd"
    # the refusal needs a branch with its doublings, not the whole one: up to vb = 0.1 it has two
    r = CliRunner().invoke(main, args[:6] + ["--stop", "0.1", "--pd", "9"] + args[10:])
    assert r.exit_code != 0 and "--pd 9" in r.output and "has 2 period doubling(s)" in r.output


def forced_weakstrong() -> ModelSpec:
    """Seed 002's belt oscillator (weakening law) forced by ``A cos(w t)`` (module docstring)."""
    m = ModelSpec("forced_weakstrong", "forced belt oscillator with the weakening law of seed 002")
    xi, vd, mud = m.parameter("xi", 0.05), m.parameter("vd", 1.25), m.parameter("mud", 0.5)
    mus, muv, v0 = m.parameter("mus", 1.0), m.parameter("muv", 0.0), m.parameter("v0", 0.5)
    delta = m.parameter("delta", 1e-3, positive=True)
    A, w = m.parameter("A", 0.5, doc="forcing amplitude"), m.parameter("w", 2.5, doc="forcing frequency")
    m.forcing(w)
    x, v = m.second_order("x", velocity="v")
    vrel = m.define("vrel", v - vd)
    F = m.friction("belt", laws.weakening_strengthening, vrel, mus=mus, mud=mud, muv=muv, v0=v0, delta=delta)
    m.ode(v, -2 * xi * v - x + F + A * sp.cos(w * m.t))
    return m


def _forced_branch(model, w, H=10):
    """The AFT branch in A from 0.5 to 2 at forcing frequency w, from the linear response about
    the equilibrium ``x = F(-vd)`` (no guess from any curve)."""
    m = model.with_params(w=w)
    disc = AFTDiscretization(m, H)
    t = np.arange(64) * 2 * np.pi / w / 64
    amp = 0.5 / (1 - w * w)
    x_eq = 0.5 + 0.5 * np.exp(-1.25 / 0.5)
    Z0 = disc.from_samples(np.vstack([x_eq + amp * np.cos(w * t), -amp * w * np.sin(w * t)]), w, 0.5)
    return periodic_branch(disc, Z0, 0.0, 2.0, 1.0, options=dict(multiplier_stride=1, multiplier_rtol=0))


def test_ns_curve_of_a_forced_friction_oscillator_against_branches_and_shooting():
    model = load_model(forced_weakstrong(), "A", backend="numpy")
    br = _forced_branch(model, 2.5)
    assert [s.kind for s in br.special] == ["ns"]
    ws = (2.55, 2.6, 2.7, 2.8, 2.9)
    curve = ns_curve(br, br.special[0], "w", 2.5, 2.9, mu_values=ws, intervals="grid")
    assert curve.status == "range"
    disc = br.discretization
    for w in ws:
        k = np.flatnonzero(np.isclose(curve.mu, w, rtol=1e-13, atol=0))[0]
        A = curve.lam[k]
        # one-parameter branch in A at this w (measured 5e-15 .. 4e-14)
        ref = [s.param for s in _forced_branch(model, w).special_points("ns")]
        assert len(ref) == 1 and abs(A - ref[0]) < 1e-7
        # shooting: the modulus of the complex pair through 1 (measured 1.5e-12 .. 1.6e-11)
        m = model.with_params(w=w)
        x0 = curve_state(disc, curve, w)

        def modulus(a):
            mu = find_periodic_orbit(m, a, x0).multipliers
            return float(np.max(np.abs(mu[np.abs(mu.imag) > 1e-9])) - 1)
        assert abs(A - brentq(modulus, A - 0.02, A + 0.02, xtol=1e-13)) < 1e-7
        # theta is the argument of shooting's pair there (measured 4e-11 .. 7e-11)
        mu = find_periodic_orbit(m, A, x0).multipliers
        assert curve.columns["theta"][k] == pytest.approx(np.max(np.angle(mu)), abs=1e-7)


def test_a_branch_without_monodromy_is_refused():
    """The frequency-domain HBM of the recast takes its multipliers from Hill's method: no
    monodromy matrix to border, a clear error naming the methods that have one."""
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization
    model = Model(duffing_handwritten, dict(k=-1.0, b=1.0, c=0.3, F=0.25))
    orbit = periodic_orbit_from_simulation(model, 1.2, [1.0, 0.0], 300.0)
    disc = HBMDiscretization(model, 15)
    t = orbit.times(128)
    Z = disc.from_samples(model.aux(orbit.at(t, accurate=False), t, 1.2), orbit.omega, 1.2)
    br = periodic_branch(disc, Z, 1.1, 1.2, -1.0,
                         options=dict(max_lam_step=0.01, multiplier_stride=1, multiplier_rtol=0))
    with pytest.raises(InputError, match=r"a hbm branch has no monodromy matrix .*the AFT .*collocation of the "
                                         r"states"):
        pd_curve(br, br.special_points("pd")[0], "c", 0.3, 0.35)
