"""The bordered LU with the AFT's kinematic rows eliminated (``engine/_bordered._Reduction``,
contract item 18 of ``discretizations/_base.py``).

References, all independent of the reduction: ``numpy.linalg.solve`` / ``det`` / ``slogdet`` of
the full bordered matrix ``[J; b^T]`` (the discretization's own full Jacobian), the
Jacobian's entries themselves (the identity block and the entries the elimination declares),
and the same branch continued with the elimination switched off (the full LU, as before):
the belt's fold of cycles (seed 000 §4.2, n = 10, F_N = 5 N; converged value 10.2874838639).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.discretizations._aft import AFTDiscretization
from frictionkit.runtime.discretizations._base import Elimination
from frictionkit.runtime.discretizations._hbm import HBMDiscretization
from frictionkit.runtime.engine._bordered import _Bordered, _Workspace, factor_jacobian
from frictionkit.runtime.model._interface import Model
from tests.models import belt_handwritten

FOLD_CONVERGED = 10.2874838639


def _belt_start(H):
    m = load_model("belt", continuation="Vb", n=10)
    eq = equilibrium_branch(m, 0.05, 12)
    return periodic_start_from_hopf(m, eq.special_points("hopf")[0], H)


@pytest.fixture(scope="module")
def belt_branch_points():
    """The belt at H = 12, three points along its branch from the Hopf point to past the fold."""
    disc, Z, d = _belt_start(12)
    br = periodic_branch(disc, Z, 0.0, 30.0, d, options=dict(stability=False, branch_points=False))
    idx = np.linspace(1, len(br) - 2, 3).astype(int)
    return disc, [br.solutions[i] for i in idx], [br.tangents[i] for i in idx]


def _declared_mask(disc, e):
    """The entries of J's rows ``e.rows`` the elimination allows to be nonzero."""
    allowed = np.zeros((e.rows.size, disc.size), dtype=bool)
    allowed[np.arange(e.rows.size), e.cols] = True
    allowed[e.pair_rows, e.pair_cols] = True
    allowed[:, e.dense_cols] = True
    return allowed


@pytest.mark.parametrize("name, continuation, params, H, pairs", [
    ("belt", "Vb", dict(n=10), 6, ((0, 1),)),          # autonomous: dense omega column
    ("vrande2", "Vdr", {}, 4, ((0, 1), (2, 3))),       # two oscillators, two identity blocks
    ("shaw", "w", {}, 5, ((0, 1),)),                   # forced, continued frequency: dense lam column
    ("drill", "eta", dict(kappa=1.0), 5, ((0, 1),)),   # non-analytic law: central-difference lam column
])
def test_the_elimination_describes_the_jacobian(name, continuation, params, H, pairs):
    """J[rows, cols] = I exactly, and every other nonzero of those rows is a declared one, at
    random Z (the kinematic rows are structurally exact, whatever Z is)."""
    m = load_model(name, continuation=continuation, **params)
    assert m.kinematic == pairs
    disc = AFTDiscretization(m, H)
    e = disc.elimination
    assert e.rows.size == len(pairs) * disc.nh
    rng = np.random.default_rng(3)
    for _ in range(3):
        Z = 0.1 * rng.standard_normal(disc.size)
        Z[-1] = m.value(continuation)
        if disc.omega_index is not None:
            Z[disc.omega_index] = 1.0 + rng.random()
        J = disc.jacobian(Z)
        np.testing.assert_array_equal(J[np.ix_(e.rows, e.cols)], np.eye(e.rows.size))
        Jr = J[e.rows]
        assert np.all(Jr[~_declared_mask(disc, e)] == 0.0)


def test_models_without_kinematic_rows_are_unchanged():
    """A hand-written module without KINEMATIC, HBM and equilibria: no elimination, full LU."""
    hand = Model(belt_handwritten)
    assert hand.kinematic == ()
    belt = load_model("belt", continuation="Vb", n=10)
    for disc in (AFTDiscretization(hand, 5), HBMDiscretization(belt, 5), AFTDiscretization(belt, 0)):
        assert disc.elimination is None
        Z = np.full(disc.size, 0.3)
        lu, _ = factor_jacobian(disc, Z, np.ones(disc.size))
        assert lu._reduced is None and lu.dense_lu[0].shape == (disc.size, disc.size)


def test_reduced_solve_and_determinant_match_the_full_matrix(belt_branch_points):
    """Along the belt branch (H = 12), borders near the tangent, random right-hand sides (one
    and several): the reduced solve's backward error ``|K x - r| / (|K| |x| + |r|)`` (measured
    1e-21 .. 4e-20, as the full LU's) and its difference to numpy.linalg.solve of the full
    ``K = [J; b^T]`` (measured 4e-15 .. 6e-12 at condition numbers 2e9 .. 8e10; the full LU
    is numpy's to the bit), and det_sign / slogdet against numpy.linalg.det / slogdet."""
    disc, points, tangents = belt_branch_points
    rng = np.random.default_rng(7)
    for Z, t in zip(points, tangents):
        for _ in range(2):
            b = t + 0.1 * rng.standard_normal(disc.size) / np.sqrt(disc.size)     # the ANM's border, moved
            K = np.vstack([disc.jacobian(Z), b])
            lu, _ = factor_jacobian(disc, Z, b)
            assert lu._reduced is not None and lu.dense_lu[0].shape[0] == disc.size - disc.nh
            rhs = rng.standard_normal((disc.size, 3))
            ref = np.linalg.solve(K, rhs)
            for x, r in ((lu.solve(rhs), rhs), (lu.solve(rhs[:, 0]), rhs[:, 0])):
                # backward error (scale-free) and the difference to numpy's solution
                backward = np.linalg.norm(K @ x - r) / (np.linalg.norm(K) * np.linalg.norm(x) + np.linalg.norm(r))
                forward = np.linalg.norm(x - np.linalg.solve(K, r)) / np.linalg.norm(x)
                assert backward <= 1e-18 and forward <= 1e-10
            assert lu.det_sign() == int(np.sign(np.linalg.det(K)))
            sign, logdet = np.linalg.slogdet(K)
            assert lu.slogdet()[0] == int(sign)
            assert lu.slogdet()[1] == pytest.approx(logdet, rel=1e-12, abs=1e-9)


def test_det_sign_follows_a_border_through_a_sign_change(belt_branch_points):
    """det [J; b^T] is linear in b: along b(s) = b0 + s b1 it changes sign once, at s*.  The
    reduced factorization's sign equals numpy's on both sides, and the full LU's (the
    elimination off), as the branch-point test compares signs of both kinds."""
    disc, points, tangents = belt_branch_points
    Z = points[1]
    rng = np.random.default_rng(11)
    b0, b1 = rng.standard_normal(disc.size), rng.standard_normal(disc.size)
    J = disc.jacobian(Z)
    d0 = np.linalg.det(np.vstack([J, b0]))
    d1 = np.linalg.det(np.vstack([J, b1]))
    s_star = -d0 / d1
    signs = []
    for s in (s_star - 0.5 * abs(s_star) - 1e-3, s_star + 0.5 * abs(s_star) + 1e-3):
        b = b0 + s * b1
        expected = int(np.sign(np.linalg.det(np.vstack([J, b]))))
        reduced, _ = factor_jacobian(disc, Z, b)
        assert reduced._reduced is not None
        got = reduced.det_sign()
        saved, disc.elimination = disc.elimination, None
        try:
            full, _ = factor_jacobian(disc, Z, b)
        finally:
            disc.elimination = saved
        assert full._reduced is None
        assert got == expected == full.det_sign()
        signs.append(got)
    assert signs[0] == -signs[1]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 6), extra=st.integers(1, 6), n_dense=st.integers(0, 2), seed=st.integers(0, 2**32 - 1))
def test_reduction_of_random_matrices_with_identity_rows(k, extra, n_dense, seed):
    """Random bordered matrices with k identity rows in shuffled positions (rows, columns, the
    pair and dense entries anywhere else): solve, det_sign and slogdet against numpy."""
    rng = np.random.default_rng(seed)
    size = 2 * k + extra + n_dense
    m = size - 1
    rows = rng.choice(m, size=k, replace=False)                  # never the border row
    perm = rng.permutation(size)
    cols, rest = perm[:k], perm[k:]
    pair_rows = np.sort(rng.choice(k, size=rng.integers(0, k + 1), replace=False))
    pair_cols, dense = rest[:pair_rows.size], rest[pair_rows.size:pair_rows.size + n_dense]
    e = Elimination(rows, cols, pair_rows, pair_cols, dense)
    K = rng.standard_normal((size, size))
    K[rows] = 0.0
    K[rows, cols] = 1.0
    K[rows[pair_rows], pair_cols] = rng.standard_normal(pair_rows.size)
    K[np.ix_(rows, dense)] = rng.standard_normal((k, n_dense))
    lu = _Bordered(K[:-1], K[-1], None, workspace=_Workspace(size), elimination=e)
    assert lu._reduced is not None
    rhs = rng.standard_normal(size)
    ref = np.linalg.solve(K, rhs)
    tol = 1e-13 * np.linalg.cond(K)
    assert np.linalg.norm(lu.solve(rhs) - ref) <= tol * np.linalg.norm(ref)
    assert lu.det_sign() == int(np.sign(np.linalg.det(K)))
    sign, logdet = np.linalg.slogdet(K)
    assert lu.slogdet()[0] == int(sign) and lu.slogdet()[1] == pytest.approx(logdet, rel=1e-10, abs=1e-10)


def test_a_matrix_without_the_identity_falls_back_to_the_full_lu():
    """An elimination the matrix does not honour (its identity entry is not 1) is not used."""
    rng = np.random.default_rng(5)
    K = rng.standard_normal((6, 6))
    e = Elimination([1], [3], [], [], [])
    lu = _Bordered(K[:-1], K[-1], None, workspace=_Workspace(6), elimination=e)
    assert lu._reduced is None
    rhs = rng.standard_normal(6)
    np.testing.assert_allclose(lu.solve(rhs), np.linalg.solve(K, rhs), rtol=1e-10)


def test_the_compiled_series_loop_reduces_like_the_full_lu():
    """The terms of one ANM step by the compiled loop on the reduced LU equal those on the
    full LU (the elimination off), for the belt at H = 12."""
    disc, Z, _ = _belt_start(12)
    rng = np.random.default_rng(2)
    t = rng.standard_normal(disc.size)
    terms = {}
    for label in ("reduced", "full"):
        saved = disc.elimination
        if label == "full":
            disc.elimination = None
        try:
            lu, _ = factor_jacobian(disc, Z, t)
            assert (len(lu.dense_lu) == 3) == (label == "reduced")
            v = lu.solve(np.append(np.zeros(disc.m), 1.0))
            Z1 = v / np.linalg.norm(v)
            terms[label] = np.array(disc.series_terms(Z, Z1, 12, lambda r: lu.solve(r, checked=False),
                                                      lu.dense_lu))
        finally:
            disc.elimination = saved
    scale = np.abs(terms["full"]).max(axis=1, keepdims=True)
    assert np.all(np.abs(terms["reduced"] - terms["full"]) <= 1e-9 * scale)


def test_belt_branch_with_and_without_the_elimination():
    """The belt at H = 40 from the Hopf point through the fold: the same fold (to 1e-12; and
    within 1e-6 of the converged 10.2874838639), the same special points, at most 1.5 LU per
    step, with the elimination and with the full LU."""
    disc, Z, d = _belt_start(40)
    opts = dict(stability=False, branch_points=False)
    with_e = periodic_branch(disc, Z, 0.0, 30.0, d, options=opts)
    disc2, Z2, d2 = _belt_start(40)
    disc2.elimination = None
    without = periodic_branch(disc2, Z2, 0.0, 30.0, d2, options=opts)
    f1, f2 = with_e.special_points("fold"), without.special_points("fold")
    assert len(f1) == len(f2) == 1
    assert abs(f1[0].param - f2[0].param) <= 1e-12 * abs(f2[0].param)
    assert abs(f1[0].param - FOLD_CONVERGED) <= 1e-6 * FOLD_CONVERGED
    assert [s.kind for s in with_e.special_points()] == [s.kind for s in without.special_points()]
    np.testing.assert_allclose([s.param for s in with_e.special_points()],
                               [s.param for s in without.special_points()], rtol=1e-9)
    assert with_e.counters["factorizations"] / with_e.counters["steps"] <= 1.5
