"""The collocation and shooting discretizations under the runtime's continuation engines, and
orbit_stability on each discretization (collocation, shooting, HBM) at the same orbit."""
import numpy as np
import pytest

from frictionkit.runtime.discretizations._collocation import CollocationDiscretization
from frictionkit.runtime.engine._options import ContinuationProblem
from frictionkit.runtime.drivers._continue import continuation
from frictionkit.runtime.discretizations._scaled import ScaledDiscretization
from frictionkit.runtime.discretizations._shooting import ShootingDiscretization
from frictionkit.runtime.analysis._floquet import floquet_from_orbit
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.errors import InputError
from tests.models._orbits import belt_orbit, vdp_orbit
from frictionkit.runtime.drivers._orbits import solve_collocation


def test_anm_continues_the_collocation_of_vdp_to_the_auto_period():
    # from mu = 1 to mu = 2 with the ANM engine on the (quadratic) collocation system;
    # issue 4: T(2) = 7.629874 (AUTO-07p)
    orbit = vdp_orbit(1.0)
    disc = CollocationDiscretization(orbit.model, 60, 4)
    Z0, _ = solve_collocation(disc, disc.from_orbit(orbit))
    br = continuation(ContinuationProblem(disc, Z0, 1.0), "anm", dict(lam_min=0.5, lam_max=2.0, max_step=5.0))
    assert br.success and br.param[-1] == pytest.approx(2.0, abs=1e-12)
    assert 2 * np.pi / br.omega[-1] == pytest.approx(7.629874, abs=1e-6)


def test_orbit_stability_same_multipliers_from_three_discretizations():
    from frictionkit.runtime.discretizations._hbm import HBMDiscretization
    from scipy.sparse.linalg import spsolve
    import scipy.sparse as sp

    orbit = belt_orbit(0.5)
    model = orbit.model
    reference = floquet_from_orbit(orbit).nontrivial()[0]
    col = CollocationDiscretization(model, 160, 3)
    Zc, _ = solve_collocation(col, col.from_orbit(orbit))
    sh = ShootingDiscretization(model, rtol=1e-12, atol=1e-14)
    Zs = sh.from_orbit(orbit)
    hbm = HBMDiscretization(model, 60)
    t = orbit.times(256)
    Zh = hbm.from_samples(model.aux(orbit.at(t, accurate=False), t, 0.5), orbit.omega, 0.5)
    for _ in range(20):
        dY = spsolve(sp.csc_matrix(hbm.jacobian(Zh))[:, :-1], -hbm.residual(Zh))
        Zh[:-1] += dY
        if np.linalg.norm(dY) < 1e-12 * np.linalg.norm(Zh[:-1]):
            break
    for disc, Z, method in [(col, Zc, "collocation"), (sh, Zs, "variational"), (hbm, Zh, "hill")]:
        res = orbit_stability(disc, Z)
        assert res.method == method
        assert abs(res.nontrivial()[0] - reference) < 1e-6, method
        assert res.trivial_multiplier_error < 1e-6 and res.stable
    with pytest.raises(InputError, match="eigenvalues, not Floquet"):
        orbit_stability(HBMDiscretization(model, 0), Zh[:model.N + 1])
    with pytest.raises(InputError, match="no Floquet multipliers"):
        orbit_stability(ScaledDiscretization(sh, np.ones(sh.size)), Zs)


def test_fold_of_the_n10_branch_is_where_the_multiplier_crosses_one():
    # seed 000 Fig. 4 / issue 4: upper branch stable up to the fold, lower branch unstable, the
    # fold is where the non-trivial multiplier crosses 1.  The fold is located by the engine
    # from the tangent (independent of any multiplier); the seeds quote 10.25-10.26 m/s, the
    # converged fold by shooting on the original ODE is 10.2874834491 (README, benchmarks);
    # collocation N = 100, p = 3 lies 3.4e-7 above it.
    from frictionkit.runtime.drivers._orbits import periodic_orbit_from_simulation, find_periodic_orbit
    from frictionkit.runtime.analysis._stability import multiplier_crossings
    from tests.models._orbits import belt

    orbit = periodic_orbit_from_simulation(belt(10, 5.0), 9.8, [-0.008, 9.8], 0.3)
    disc = CollocationDiscretization(orbit.model, 100, 3)
    Z0, _ = solve_collocation(disc, disc.from_orbit(orbit))
    br = continuation(ContinuationProblem(disc, Z0, 1.0), "anm", dict(lam_min=9.5, lam_max=11.0, max_steps=60))
    folds = br.special_points("fold")
    assert len(folds) == 1 and abs(folds[0].param - 10.2874834491) < 1e-6
    at_fold = orbit_stability(disc, folds[0].solution)
    assert np.max(np.abs(at_fold.multipliers - 1)) < 1e-4          # trivial + crossing multiplier
    # the stability columns filled by the continuation (branch_stability, collocation monodromy)
    fold_index = folds[0].index
    assert br.stability_method == "collocation"
    assert np.all(br.stable[:fold_index + 1] == 1) and np.all(br.stable[fold_index + 1:] == 0)
    # the columns against a second method: shooting on the ODE from the branch's state at t = 0,
    # multipliers from the variational equations (collocation error measured 5e-7 on the upper
    # branch, 1e-9 on the lower one)
    for i in (0, len(br) - 1):
        point = disc.unpack(br.solutions[i])
        ref = find_periodic_orbit(disc.model, point["lam"], disc.states_at(br.solutions[i], [0.0])[:, 0], point["T"])
        np.testing.assert_allclose(np.sort_complex(br.multipliers[i]), np.sort_complex(ref.multipliers), atol=1e-6)
    # the +1 crossing of the multiplier, located along the branch by Brent's method on the
    # product of the two multipliers nearest 1, is the fold of the engine (tangent only)
    assert abs(folds[0].data["crossing_param"] - folds[0].param) < 1e-9 * folds[0].param
    assert br.special_points("bp") == [] and br.special_points("pd") == []
    crossings = multiplier_crossings([orbit_stability(disc, Z) for Z in br.solutions[fold_index - 1:fold_index + 3]])
    assert [k for _, k in crossings] == ["fold"] and crossings[0][0] == 1
