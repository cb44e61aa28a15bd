"""Error estimates of periodic orbits (discretizations/_error.py, issue 26 item 1) against the
true error: the same point of the branch (same arclength position: bordered by the branch's
tangent) corrected with three times the harmonics and twice the samples per harmonic.

Over whole branches from their first Hopf point, at today's fixed H = 30: the seed-000 belt
(n = 10, FN = 5), the tanh x exp belt of examples/tanh_exp_belt.py and the LuGre belt of issue
26 (tests/models/lugre_acc.py).  Where the true error is above 1e-9 (the engine's own Newton
tolerance sits below) the estimate must be within a factor of 10 of it; below, the estimate
must not claim more than 1e-8.
"""
import numpy as np
import pytest

from frictionkit.runtime import load_model
from frictionkit.runtime.discretizations._aft import default_n_t
from frictionkit.runtime.discretizations._error import orbit_errors, relative_change
from frictionkit.runtime.drivers._accuracy import error_of
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.engine._bordered import factor_jacobian
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import ConvergenceError

CASES = {
    "belt": (lambda: load_model("belt", continuation="Vb", n=10, FN=5), 0.05, 12.0),
    "tanh_exp": (lambda: load_model("examples/tanh_exp_belt.py", continuation="vb"), 0.1, 1.5),
    "lugre": (lambda: load_model("tests/models/lugre_acc.py", continuation="vb"), 0.01, 2.0),
}


def _branch(name, H=30, points_per_step=1):
    build, lo, hi = CASES[name]
    model = build()
    eq = equilibrium_branch(model, lo, hi)
    disc, Z, direction = periodic_start_from_hopf(model, eq.special_points("hopf")[0], H)
    br = periodic_branch(disc, Z, lo, hi, direction,
                         options=dict(max_steps=5000, points_per_step=points_per_step, stability=False,
                                      branch_points=False))
    return model, br


def _true_error(disc, Z, t, H_ref):
    big, Zb = disc.resize(Z, H_ref, n_t=2 * default_n_t(H_ref, True))
    _, tb = disc.resize(t, H_ref)
    tb /= np.linalg.norm(tb)
    Zr, _ = correct(big, Zb, tb, tb @ Zb, max_iter=30)
    U = big.split(Zr)[0]
    return relative_change(U - big.split(Zb)[0], U)


@pytest.mark.parametrize("name", sorted(CASES))
def test_estimate_within_factor_10_of_true_error(name):
    model, br = _branch(name)
    disc = br.discretization
    est = error_of(br.accuracy)
    assert est is not None and br.accuracy["harmonics"][0] == 30
    ends = np.unique(br.step_ends)
    picked = ends[np.linspace(0, len(ends) - 2, 14).astype(int)]   # the end point sits on the equilibrium
    checked = 0
    for i in picked:
        try:
            true = _true_error(disc, br.solutions[i], br.tangents[i], 90)
        except ConvergenceError:
            continue
        if true > 1e-9:
            assert true / 10 <= est[i] <= 10 * true, (name, i, br.param[i], est[i], true)
            checked += 1
        else:
            assert not est[i] > 1e-8, (name, i, br.param[i], est[i], true)
    assert checked >= 5, f"{name}: only {checked} points with a measurable error"


def test_points_inside_a_step_take_a_bound_of_their_error():
    """The estimates are formed at step ends only; a point the ANM's series gives inside a step
    (``points_per_step``, 4 by default in ``continue``) takes the larger of its step's two ends.
    Checked where that shortcut could go wrong, at the interior points themselves: the value
    given must not fall below a tenth of the true error there (the same check as at step ends)."""
    _, br = _branch("tanh_exp", H=20, points_per_step=4)      # H = 20: errors above the Newton tolerance
    disc = br.discretization
    est = error_of(br.accuracy)
    inside = np.setdiff1d(np.arange(1, len(br) - 1), np.unique(br.step_ends))
    picked = inside[np.linspace(0, len(inside) - 1, 10).astype(int)]
    checked = 0
    for i in picked:
        try:
            true = _true_error(disc, br.solutions[i], br.tangents[i], 60)
        except ConvergenceError:
            continue
        if true > 1e-9:
            assert est[i] >= true / 10, (i, br.param[i], est[i], true)
            checked += 1
    assert checked >= 5, f"only {checked} interior points with a measurable error"


def test_accuracy_columns_saved_and_read(tmp_path):
    """The columns go through the HDF5 file (group ``accuracy``) unchanged."""
    from frictionkit.runtime.results._branch import load_branch
    _, br = _branch("tanh_exp")
    path = tmp_path / "b.h5"
    br.save(path)
    back = load_branch(path)
    assert set(back.accuracy) == {"err_trunc", "err_alias", "err_decay", "decay_rate", "harmonics"}
    for k, v in br.accuracy.items():
        np.testing.assert_array_equal(back.accuracy[k], v)


def test_no_estimate_when_switched_off():
    build, lo, hi = CASES["tanh_exp"]
    model = build()
    eq = equilibrium_branch(model, lo, hi)
    disc, Z, direction = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 10)
    br = periodic_branch(disc, Z, lo, hi, direction, options=dict(max_steps=3, error_estimates=False,
                                                                  stability=False, branch_points=False))
    assert br.accuracy == {}


def test_mesh_estimate_within_factor_10_of_true_error():
    """Collocation of the states (40 uniform intervals of degree 3, the mesh held fixed) on the
    tanh x exp belt: ``err_mesh`` against the same point (bordered by the tangent) on a mesh four
    times finer."""
    from frictionkit.runtime.discretizations._state_collocation import StateCollocationDiscretization
    from frictionkit.runtime.drivers._compose import run_continuation
    build, lo, hi = CASES["tanh_exp"]
    model = build()
    _, br = run_continuation(model, lo, hi, start="hopf", discretization="collocation", intervals=40, degree=3,
                             progress=False, echo=lambda *a: None,
                             options=dict(stability=False, branch_points=False, error_estimates=True,
                                          adaptive_mesh=False))
    disc = br.discretization
    fine = StateCollocationDiscretization(model, 160, 3)
    G = 3 * 160
    ends = np.unique(br.step_ends)
    for i in ends[np.linspace(0, len(ends) - 2, 6).astype(int)]:
        Z, t = br.solutions[i], br.tangents[i]
        omega = disc.unpack(Z)["omega"]
        T = 2 * np.pi / omega
        Zf = fine.from_states(lambda s, Z=Z: disc.states_at(Z, np.asarray(s) / T), Z[-1], omega)
        tf = fine.from_states(lambda s, t=t: disc.states_at(t, np.asarray(s) / T), t[-1], omega)
        tf[fine.omega_index], tf[-1] = t[disc.omega_index], t[-1]
        tf /= np.linalg.norm(tf)
        Zr, _ = correct(fine, Zf, tf, tf @ Zf, max_iter=30)
        X = Zr[:2 * G].reshape(2, G)
        true = relative_change(X - Zf[:2 * G].reshape(2, G), X)
        est = br.accuracy["err_mesh"][i]
        assert true > 1e-9 and true / 10 <= est <= 10 * true, (i, br.param[i], est, true)


def test_the_kept_lu_solves_a_nearby_matrix_or_is_replaced():
    """The estimates' solver (``_FrozenLU``) against numpy's direct solve: a matrix 1e-3 away
    from the factored one is solved by refinement sweeps on the kept LU, one 5e-2 away by GMRES
    after them, both to the stated accuracy (``RTOL``, 1e-3 relative) with no new factorization; a matrix far away (the kept LU no preconditioner for it) is factored."""
    from frictionkit.runtime.discretizations._error import _FrozenLU
    rng = np.random.default_rng(7)
    n = 120
    A0 = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
    B = rng.standard_normal((n, 2))
    frozen = _FrozenLU()
    assert np.allclose(frozen.solve(A0.copy(order="F"), B), np.linalg.solve(A0, B), rtol=1e-12, atol=1e-12)
    near = A0 + 1e-3 * rng.standard_normal((n, n))
    X = frozen.solve(near.copy(order="F"), B)
    assert frozen.factorizations == 1 and frozen.last_iterations <= _FrozenLU.SWEEPS     # the refinement sweeps
    assert np.linalg.norm(X - np.linalg.solve(near, B)) <= _FrozenLU.RTOL * np.linalg.norm(X)
    # farther: the sweeps contract too slowly, GMRES on the same LU finishes (no new factorization)
    mid = A0 + 0.05 * np.random.default_rng(11).standard_normal((n, n))
    X = frozen.solve(mid.copy(order="F"), B)
    assert frozen.factorizations == 1 and frozen.last_iterations > _FrozenLU.SWEEPS
    assert np.linalg.norm(X - np.linalg.solve(mid, B)) <= _FrozenLU.RTOL * np.linalg.norm(X)
    far = rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)
    X = frozen.solve(far.copy(order="F"), B)
    assert frozen.factorizations == 2
    assert np.allclose(X, np.linalg.solve(far, B), rtol=1e-10, atol=1e-12)


def test_estimate_with_the_engines_factorization_within_factor_10_of_true_error():
    """``orbit_errors(..., factor=)``: the bordered 2H systems solved by the engine's
    factorization (the kinematic state's identity rows eliminated, contract item 18) instead
    of a dense LU; checked against the true error as above (belt, H = 30)."""
    model, br = _branch("belt")
    disc = br.discretization
    ends = np.unique(br.step_ends)
    picked = ends[np.linspace(0, len(ends) - 2, 6).astype(int)]
    cols = orbit_errors(disc, br.solutions, br.tangents, points=picked,
                        factor=lambda d, Z, b: factor_jacobian(d, Z, b)[0])
    est = error_of(cols)
    checked = 0
    for i in picked:
        true = _true_error(disc, br.solutions[i], br.tangents[i], 90)
        if true > 1e-9:
            assert true / 10 <= est[i] <= 10 * true, (i, est[i], true)
            checked += 1
    assert checked >= 4


@pytest.mark.parametrize("H", [12, 130])
def test_the_bordered_system_reduced_by_the_kinematic_rows_is_the_full_solve(H):
    """``_BorderedSystem`` (the estimates' solver: below ``DIRECT_BELOW`` unknowns the kinematic
    identity rows eliminated and an LU at every point, above it the full matrix and the kept LU)
    against numpy's solve of the full bordered matrix ``[J; t^T]`` assembled from the
    discretization's own Jacobian: at H = 12 (27 reduced unknowns: the reduction) at points
    spread along the belt's branch, to rounding; at H = 130 (263 reduced unknowns) with
    ``DIRECT_BELOW`` lowered to 200 (the kept LU on the full matrix), at points spread along the
    branch as well, to its acceptance tolerance ``RTOL``."""
    from frictionkit.runtime.discretizations._error import _BorderedSystem, _FrozenLU
    _, br = _branch("belt", H=12)
    small = br.discretization
    disc = small.resize(br.solutions[0], H)[0]
    system = _BorderedSystem(disc)
    assert system.red is not None
    if H > 12:
        system.DIRECT_BELOW = 200
        tol = _FrozenLU.RTOL
    else:
        tol = 1e-9
    points = np.linspace(1, len(br) - 2, 4).astype(int)
    rng = np.random.default_rng(3)
    for i in points:
        Z = small.resize(br.solutions[i], H)[1]
        t = small.resize(br.tangents[i], H)[1]
        t /= np.linalg.norm(t)
        B = rng.standard_normal((disc.size, 2))
        X = system.solve(Z, t, B)
        ref = np.linalg.solve(np.vstack([disc.jacobian(Z), t]), B)
        assert np.linalg.norm(X - ref) <= tol * np.linalg.norm(ref), i
    assert (system.frozen.factorizations > 0) == (H > 12)       # the kept LU's path was the one taken
