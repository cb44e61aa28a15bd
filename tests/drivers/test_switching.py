"""Branch points (bordered-determinant test), their location and branch switching.

Independent references are analytic:

* equilibria of ``x' = lam x - a x^2 - x^3, y' = x^2 - y`` (tests/models/pitchfork_handwritten.py):
  branch point at ``lam = 0``; second branch ``lam = a x + x^2, y = x^2`` (a pitchfork for
  ``a = 0``, transcritical with tangent ``dx/dlam = 1/a`` and a fold at ``lam = -a^2/4``
  otherwise); eigenvalues ``lam - 2 a x - 3 x^2`` and ``-1``;
* periodic orbits of tests/models/cycle_bp_handwritten.py: the unit circle with ``z = 0``
  (multipliers ``1, exp(-4 pi), exp(2 pi lam)``) meets the family ``z = const,
  r^2 = 1 + z, lam = z + z^2`` (angular frequency 1) at ``lam = 0``; on that family the
  non-trivial multipliers are ``exp(2 pi eig A)`` with ``A`` the Jacobian of
  ``rho' = 2 rho (1 + z - rho), z' = (lam + 1 - rho) z - z^3`` (``rho = r^2``).
"""
import numpy as np
import pytest

from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_orbit
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.analysis._branch_points import branch_point_tangents
from frictionkit.runtime.drivers._switching import switch_branch
from frictionkit.runtime.errors import InputError
from tests.models import cycle_bp_handwritten, pitchfork_handwritten


def _equilibria(a):
    model = Model(pitchfork_handwritten, {"a": a})
    return equilibrium_branch(model, -0.5, 0.5, x_guess=[0.0, 0.0])


def test_pitchfork_of_equilibria_located_and_both_halves_switched():
    eq = _equilibria(0.0)
    bps = eq.special_points("bp")
    assert len(bps) == 1 and bps[0].data["located"]
    assert abs(bps[0].param) < 1e-12 and np.max(np.abs(bps[0].solution[:3])) < 1e-12
    np.testing.assert_array_equal(eq.stable, [1.0, 0.0])       # eigenvalue lam crosses 0
    for sign in (1.0, -1.0):
        new = switch_branch(eq.discretization, eq, bps[0], direction=sign,
                            options=dict(lam_min=-0.5, lam_max=0.5, max_steps=300))
        assert new.success and new.status == "range" and new.param[-1] == pytest.approx(0.5, abs=1e-12)
        x, y, lam = new.solutions[:, 0], new.solutions[:, 1], new.param
        assert np.all(np.sign(x) == sign)
        assert np.max(np.abs(lam - x ** 2)) < 1e-12 and np.max(np.abs(y - x ** 2)) < 1e-12
        # supercritical pitchfork: eigenvalues -2 lam and -1, the new branch is stable
        assert np.all(new.stable == 1.0)
        np.testing.assert_allclose(np.sort(new.eigenvalues.real, axis=1),
                                   np.sort(np.stack([-2 * lam, -np.ones_like(lam)], axis=1), axis=1),
                                   atol=1e-10)
        info = new.branch_point
        assert abs(info["t_new"][-1]) < 1e-12                     # vertical: lam'' only
        big, second, smallest = info["singular_values"]              # rank m - 1: a simple branch point
        assert smallest < 1e-12 * big and second > 0.1 * big


def test_transcritical_branch_point_tangent_and_fold_of_the_new_branch():
    a = 0.7
    eq = _equilibria(a)
    bp = eq.special_points("bp")[0]
    assert abs(bp.param) < 1e-12
    info = branch_point_tangents(eq.discretization, bp.solution, bp.data["tangent"])
    t = info["t_new"]
    assert t[0] / t[-1] == pytest.approx(1 / a, rel=1e-10)    # dx/dlam = 1/a at x = 0
    assert abs(info["c"]) > 0.1                                 # generic (non-symmetric) case
    halves = [switch_branch(eq.discretization, eq, bp, direction=s,
                            options=dict(lam_min=-0.5, lam_max=0.5, max_steps=300)) for s in (1.0, -1.0)]
    for new in halves:
        x, lam = new.solutions[:, 0], new.param
        assert np.max(np.abs(lam - a * x - x ** 2)) < 1e-12
        ev = lam - 2 * a * x - 3 * x ** 2                       # the eigenvalue that is not -1
        np.testing.assert_array_equal(new.stable, np.where(ev < 0, 1.0, 0.0))
    folds = [f for new in halves for f in new.special_points("fold")]
    assert len(folds) == 1 and folds[0].param == pytest.approx(-a * a / 4, abs=1e-10)
    assert folds[0].solution[0] == pytest.approx(-a / 2, abs=1e-6)


@pytest.fixture(scope="module")
def circle_branch():
    model = Model(cycle_bp_handwritten, {"lam": -0.3})
    theta = 2 * np.pi * np.arange(64) / 64
    disc, Z = periodic_start_from_orbit(model, -0.3, np.vstack([np.cos(theta), np.sin(theta), 0 * theta]),
                                        2 * np.pi, 4)
    return disc, periodic_branch(disc, Z, -0.3, 0.3, 1.0, options=dict(max_lam_step=0.05))


def test_branch_point_of_cycles_located_where_a_multiplier_passes_one(circle_branch):
    disc, br = circle_branch
    bps = br.special_points("bp")
    assert len(bps) == 1 and bps[0].data["located"] and abs(bps[0].param) < 1e-10
    assert not br.special_points("fold")                      # lam' keeps its sign: not a fold
    assert bps[0].omega == pytest.approx(1.0, abs=1e-12)
    # two multipliers at +1 there (trivial and crossing), the third exp(-4 pi)
    mu = np.sort(np.abs(bps[0].data["multipliers"]))
    np.testing.assert_allclose(mu, [np.exp(-4 * np.pi), 1.0, 1.0], rtol=1e-9, atol=1e-9)
    # analytic multipliers along the z = 0 branch, stable for lam < 0
    for lam, mult, stable in zip(br.param, br.multipliers, br.stable):
        expect = np.sort([np.exp(-4 * np.pi), 1.0, np.exp(2 * np.pi * lam)])
        np.testing.assert_allclose(np.sort(mult.real), expect, rtol=1e-9, atol=1e-12)
        assert stable == (1.0 if lam < -1e-6 else 0.0) or abs(lam) < 1e-6


def test_switch_to_the_second_family_of_cycles(circle_branch):
    disc, br = circle_branch
    bp = br.special_points("bp")[0]
    signs = []
    for sign in (1.0, -1.0):
        new = switch_branch(disc, br, bp, direction=sign,
                            options=dict(lam_min=-0.3, lam_max=0.3, max_steps=60, max_lam_step=0.05))
        # the step budget ends it (not a success, issue 12): its points are analysed all the same
        assert new.status in ("range", "max_steps") and len(new) > 5
        z = np.array([disc.split(Z)[0][2, 0] for Z in new.solutions])
        r2 = np.array([disc.split(Z)[0][3, 0] for Z in new.solutions])
        assert np.all(np.sign(z) == np.sign(z[0])) and np.max(np.abs(z)) > 0.1
        signs.append(np.sign(z[0]))
        assert np.max(np.abs(new.param - z - z ** 2)) < 1e-12
        assert np.max(np.abs(r2 - 1 - z)) < 1e-12 and np.max(np.abs(new.omega - 1)) < 1e-12
        done = np.isfinite(new.multipliers[:, 0])  # where computed; the others inherit `stable`
        assert done.sum() >= 2
        for zz, mult in zip(z[done], new.multipliers[done]):
            A = np.array([[-2 * (1 + zz), 2 * (1 + zz)], [-zz, -2 * zz * zz]])
            expect = np.concatenate([[1.0], np.exp(2 * np.pi * np.linalg.eigvals(A))])
            np.testing.assert_allclose(np.sort_complex(mult), np.sort_complex(expect), rtol=1e-8, atol=1e-10)
        # det A = 2 (1 + z) z (2 z + 1): stable for z > 0 and z < -1/2, with a fold at z = -1/2
        np.testing.assert_array_equal(new.stable, np.where((z > 0) | (z < -0.5), 1.0, 0.0))
        folds = new.special_points("fold")
        if z[0] < 0:
            assert len(folds) == 1 and folds[0].param == pytest.approx(-0.25, abs=1e-10)
            assert folds[0].data["crossing_param"] == pytest.approx(-0.25, abs=1e-9)
        else:
            assert not folds
    assert sorted(signs) == [-1.0, 1.0]                          # the two halves


def test_switch_branch_refuses_other_special_points(circle_branch):
    disc, br = circle_branch
    hopf_like = br.special_points("bp")[0]
    hopf_like = type(hopf_like)("fold", hopf_like.param, hopf_like.omega, hopf_like.index, hopf_like.solution)
    with pytest.raises(InputError, match="'bp' special point"):
        switch_branch(disc, br, hopf_like)


def test_symmetry_breaking_of_the_forced_twin_well_duffing_against_shooting():
    # x'' + 0.3 x' - x + x^3 = 0.45 cos(w t): the large cross-well orbit is symmetric
    # (x(t + T/2) = -x(t), odd harmonics only) and loses its symmetry where a real multiplier
    # passes +1 while w keeps decreasing (a pitchfork of cycles).  Reference: shooting
    # (DOP853, rtol 1e-13), the multiplier nearest 1 at four w around the branch point and the
    # root of their cubic; measured HBM (H = 20) - shooting = -7e-9 (the bordered determinant
    # is flat to rounding within ~1e-8 of the root)
    from frictionkit.runtime.engine._options import ContinuationProblem
    from frictionkit.runtime.drivers._continue import continuation
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization, coefficients_to_samples
    from frictionkit.runtime.drivers._orbits import find_periodic_orbit, periodic_orbit_from_simulation
    from tests.models import duffing_handwritten

    model = Model(duffing_handwritten, dict(c=0.3, F=0.45, k=-1.0, b=1.0))
    orbit = periodic_orbit_from_simulation(model, 0.7, [2.0, 0.0], 100.0)
    disc = HBMDiscretization(model, 20)
    t = orbit.times(128)
    Z0 = disc.from_samples(model.aux(orbit.at(t, accurate=False), t, 0.7), orbit.omega, 0.7)
    br = continuation(ContinuationProblem(disc, Z0, -1.0), "anm", dict(lam_min=0.5, lam_max=0.7, max_lam_step=0.02))
    bps = br.special_points("bp")
    assert [s.kind for s in br.special] == ["bp"] and bps[0].data["located"]
    bp = bps[0]
    means = np.array([disc.split(Z)[0][0, 0] for Z in br.solutions])
    assert np.max(np.abs(means)) < 1e-10                         # symmetric orbits

    def x0_of(Z):
        U = disc.split(Z)[0][:2]
        return U[:, 0] + U[:, 1::2].sum(axis=1)            # x(0): the cosine coefficients add up

    shooting = dict(method="DOP853", rtol=1e-13, atol=1e-15, tol=1e-12)
    ws = bp.param + np.array([-2e-3, -1e-3, 1e-3, 2e-3])
    mus = []
    for w in ws:
        o = find_periodic_orbit(model, w, x0_of(bp.solution), **shooting)
        mus.append(o.multipliers[np.argmin(np.abs(o.multipliers - 1))].real)
    mus = np.array(mus)
    assert np.all(mus[:2] > 1) and np.all(mus[2:] < 1)           # unstable below, stable above
    roots = np.roots(np.polyfit(ws - bp.param, mus - 1, 3)).real
    w_ref = bp.param + roots[np.argmin(np.abs(roots))]
    assert abs(bp.param - w_ref) < 1e-7
    np.testing.assert_array_equal(br.stable, np.where(br.param > bp.param, 1.0, 0.0))
    # the two asymmetric halves, each checked by shooting from its last HBM orbit
    last_means = []
    for sign in (1.0, -1.0):
        new = switch_branch(disc, br, bp, direction=sign, options=dict(lam_min=0.5, lam_max=0.7, max_steps=8,
                                                                       max_lam_step=0.01))
        U, _, w = disc.split(new.solutions[-1])
        last_means.append(U[0, 0])
        o = find_periodic_orbit(model, w, x0_of(new.solutions[-1]), **shooting)
        # H = 20 truncation on the asymmetric orbits (even harmonics too): measured 9.7e-7
        # in x(0) and 1.9e-9 in the multipliers
        assert np.max(np.abs(o.x0 - x0_of(new.solutions[-1]))) < 1e-5
        np.testing.assert_allclose(np.sort_complex(o.multipliers), np.sort_complex(new.multipliers[-1]),
                                   atol=1e-8)
        assert np.all(new.stable == 1.0) and np.all(np.abs(o.multipliers) < 1)   # supercritical
    assert last_means[0] * last_means[1] < 0 and abs(last_means[0] + last_means[1]) < 1e-9
    assert min(abs(m) for m in last_means) > 1e-3
