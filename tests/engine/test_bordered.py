"""The bordered linear algebra the engines share (``runtime/engine/_bordered.py``).

* the sign of ``det [J; b^T]`` read off a factorization (dense and sparse) against
  ``numpy.linalg.det``;
* the identity ``det [J; b^T] = (b . t) det [J; t^T]`` behind the branch-point test function
  that :func:`tangent_at` returns;
* the reusable buffer: a Jacobian assembled into it equals a fresh one, row scales read in
  column blocks equal ``|J| |Z|``, and a factorization whose buffer was reused refuses to solve;
* the engines' recorded determinant signs equal the ones recomputed on the finished branch.
"""
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings, strategies as st

import frictionkit.runtime.analysis._pass as analysis_pass   # where the analysis pass calls it
from frictionkit.runtime.discretizations._aft import AFTDiscretization
from frictionkit.runtime.discretizations._base import Discretization
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.discretizations._hbm import HBMDiscretization
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.engine._bordered import _perm_parity, bordered_factor, factor_jacobian, row_scales
from frictionkit.runtime.engine._newton import correct, tangent_at
from frictionkit.runtime.analysis._branch_points import bordered_det_sign
from tests.models import belt_handwritten, pitchfork_handwritten


class _Fixed(Discretization):
    """A linear discretization ``R(Z) = J Z`` with a fixed Jacobian (contract items 1-4 only)."""

    kind = "fixed"

    def __init__(self, J):
        self.m, self.J = J.shape[0], J

    def residual(self, Z):
        return self.J @ Z

    def jacobian(self, Z):
        return self.J


def _stub(J):
    return _Fixed(J)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), sparse=st.booleans())
def test_det_sign_of_the_factorization_matches_numpy(m, seed, sparse):
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(m, m + 1))
    b = rng.normal(size=m + 1)
    K = np.vstack([J, b])
    expected = int(np.sign(np.linalg.det(K)))
    assert expected != 0
    lu = bordered_factor(scipy.sparse.csr_matrix(J) if sparse else J, b)
    assert lu.det_sign() == expected


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_tangent_and_its_determinant_sign(m, seed):
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(m, m + 1))
    prev = rng.normal(size=m + 1)
    t, sign = tangent_at(_stub(J), np.zeros(m + 1), prev, with_det_sign=True)
    np.testing.assert_allclose(J @ t, 0.0, atol=1e-10 * np.abs(J).sum())
    assert t @ prev > 0 and np.linalg.norm(t) == pytest.approx(1.0)
    assert sign == int(np.sign(np.linalg.det(np.vstack([J, t]))))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_permutation_parity_is_the_determinant_of_its_matrix(n, seed):
    perm = np.random.default_rng(seed).permutation(n)
    assert _perm_parity(perm) == int(round(np.linalg.det(np.eye(n)[perm])))


def test_reused_buffer_refuses_a_stale_factorization():
    rng = np.random.default_rng(3)
    J1, J2 = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    disc = _Fixed(J1)
    b = rng.normal(size=6)
    rhs = rng.normal(size=6)
    lu1, _ = factor_jacobian(disc, np.zeros(6), b)
    np.testing.assert_allclose(lu1.solve(rhs), np.linalg.solve(np.vstack([J1, b]), rhs), rtol=1e-10)
    disc.J = J2
    lu2, scale = factor_jacobian(disc, np.ones(6), b, scales=True)
    np.testing.assert_allclose(scale, np.abs(J2) @ np.ones(6), rtol=1e-14)
    np.testing.assert_allclose(lu2.solve(rhs), np.linalg.solve(np.vstack([J2, b]), rhs), rtol=1e-10)
    with pytest.raises(RuntimeError, match="stale factorization"):
        lu1.solve(rhs)
    # a Newton correction outside any run frees the buffer it made
    disc.J = np.hstack([np.eye(5), np.zeros((5, 1))])
    disc.residual = lambda Z: Z[:5] - 1.0
    del disc._bordered_workspace
    Zc, its = correct(disc, np.zeros(6), np.eye(6)[-1], 0.0)
    np.testing.assert_allclose(Zc, [1, 1, 1, 1, 1, 0])
    assert its == 2                      # a linear system: one update, one confirming it
    assert not hasattr(disc, "_bordered_workspace")


def test_row_scales_in_column_blocks():
    rng = np.random.default_rng(5)
    J = np.asfortranarray(rng.normal(size=(300, 301)))
    Z = rng.normal(size=301)
    ref = np.abs(J) @ np.abs(Z)
    for block in (1, 7, 256, 1000):
        np.testing.assert_allclose(row_scales(J, Z, block=block), ref, rtol=1e-13)
    np.testing.assert_allclose(row_scales(scipy.sparse.csr_matrix(J), Z), ref, rtol=1e-13)


@pytest.mark.parametrize("kind", ["hbm", "aft"])
def test_jacobian_assembled_into_a_buffer_equals_a_fresh_one(kind):
    m = Model(belt_handwritten, {"n": 10, "FN": 5})
    d = HBMDiscretization(m, 7) if kind == "hbm" else AFTDiscretization(m, 7)
    Z = np.random.default_rng(1).normal(size=d.size) * 0.1
    fresh = d.jacobian(Z)
    buf = np.full((d.size, d.size), np.nan, order="F")
    buf[:-1] = 0.0
    d.jacobian(Z, out=buf[:-1])
    np.testing.assert_array_equal(buf[:-1], fresh)
    assert np.all(np.isnan(buf[-1]))                      # the border row is left alone


def _capture_signs(monkeypatch):
    seen = []
    original = analysis_pass.detect_branch_points

    def spy(disc, solutions, tangents, **kw):
        seen.append((disc, np.array(solutions), np.array(tangents), list(kw.get("signs") or [])))
        return original(disc, solutions, tangents, **kw)
    monkeypatch.setattr(analysis_pass, "detect_branch_points", spy)
    return seen


def _check_recorded_signs(seen):
    """All step ends but the last (the ANM factorizes at a step's start) carry a recorded sign,
    equal to the recomputed one; returns the full list."""
    disc, P, T, signs = seen[-1]
    assert all(s is not None for s in signs[:-1])
    full = [bordered_det_sign(disc, Z, t) for Z, t in zip(P, T)]
    for i, s in enumerate(signs):
        assert s is None or s == full[i], i
    return full


@pytest.mark.parametrize("method", ["anm", "newton"])
def test_engines_record_the_branch_point_test_function(method, monkeypatch):
    """Equilibria through a pitchfork (the sign changes once) and the belt's periodic branch:
    every sign an engine recorded from its own LU equals the recomputed one."""
    seen = _capture_signs(monkeypatch)
    eq = equilibrium_branch(Model(pitchfork_handwritten, {"a": 0.0}), -0.5, 0.5, method=method,
                            x_guess=[0.0, 0.0])
    signs = _check_recorded_signs(seen)
    assert np.count_nonzero(np.diff(signs)) == 1 and len(eq.special_points("bp")) == 1

    belt = Model(belt_handwritten, {"n": 10, "FN": 5})
    hopf = equilibrium_branch(belt, 0.05, 12).special_points("hopf")[0]
    disc, Z, d = periodic_start_from_hopf(belt, hopf, 6)
    periodic_branch(disc, Z, 0.0, 2.0, d, method=method, options=dict(max_steps=15))
    assert len(seen[-1][1]) > 5
    _check_recorded_signs(seen)
    # the run's reusable buffer is freed with it (a branch keeps its discretization)
    assert "_bordered_workspace" not in disc.__dict__


def test_standalone_tangent_frees_its_buffer():
    """Outside a continuation run a tangent leaves no buffer on the discretization."""
    rng = np.random.default_rng(8)
    disc = _stub(rng.normal(size=(4, 5)))
    tangent_at(disc, np.zeros(5), rng.normal(size=5), with_det_sign=True)
    assert not hasattr(disc, "_bordered_workspace")


class _FixedOut(_Fixed):
    """``_Fixed`` assembling its Jacobian into the engine's buffer (``jacobian_accepts_out``),
    optionally with an identity row (contract item 18)."""

    jacobian_accepts_out = True

    def __init__(self, J, elimination=None):
        super().__init__(J)
        self.elimination = elimination

    def jacobian(self, Z, out=None):
        out[...] = self.J
        return out


def _with_identity_row(rng):
    """A 6 x 7 Jacobian whose row 0 is the identity in column 3 (paired with column 5)."""
    from frictionkit.runtime.discretizations._base import Elimination
    J = rng.standard_normal((6, 7))
    J[0] = 0.0
    J[0, 3], J[0, 5] = 1.0, rng.standard_normal()
    return J, Elimination([0], [3], [0], [5], [])


@pytest.mark.parametrize("reduced", [False, True])
def test_an_exactly_singular_matrix_raises_convergence_error(reduced):
    """A zero column of ``[J; b^T]`` (column 6, outside the identity and its pair: a zero
    column of the Schur complement too) stays exactly zero through the elimination, and
    LAPACK's getrf reports its zero pivot: a ConvergenceError, not a warning or a solution
    of infinities."""
    from frictionkit.runtime.errors import ConvergenceError
    rng = np.random.default_rng(11)
    J, e = _with_identity_row(rng)
    b = rng.standard_normal(7)
    J[:, 6] = b[6] = 0.0
    disc = _FixedOut(J, e if reduced else None)
    with pytest.raises(ConvergenceError, match="singular bordered"):
        factor_jacobian(disc, np.ones(7), b)
    with pytest.raises(ConvergenceError, match="singular bordered"):
        bordered_factor(J, b)
    # the same matrix with that column filled in factorizes, reduced when asked
    J[1:, 6], b[6] = rng.standard_normal(5), 1.0
    lu, _ = factor_jacobian(disc, np.ones(7), b)
    assert (lu._reduced is not None) == reduced
    rhs = rng.standard_normal(7)
    np.testing.assert_allclose(lu.solve(rhs), np.linalg.solve(np.vstack([J, b]), rhs), rtol=1e-10)


@pytest.mark.parametrize("reduced", [False, True])
@pytest.mark.parametrize("where", ["jacobian", "border"])
def test_nan_in_the_bordered_matrix_raises_nonfinite_error(reduced, where):
    """A NaN in the Jacobian (or in the border row) is reported as NonFiniteError by the
    factorization, with and without the row scales and the elimination."""
    from frictionkit.runtime.errors import NonFiniteError
    rng = np.random.default_rng(12)
    J, e = _with_identity_row(rng)
    b = rng.standard_normal(7)
    if where == "jacobian":
        J[2, 6] = np.nan
    else:
        b[1] = np.nan
    disc = _FixedOut(J, e if reduced else None)
    for scales in (False, True):
        with pytest.raises(NonFiniteError, match="NaN/inf in the Jacobian"):
            factor_jacobian(disc, np.ones(7), b, scales=scales)
    with pytest.raises(NonFiniteError):
        bordered_factor(J, b)
