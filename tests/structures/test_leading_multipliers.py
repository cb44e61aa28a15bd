"""The leading Floquet multipliers of a large structure (ARPACK, issue 24) against the dense
eigenvalues of the same monodromy (``numpy.linalg.eigvals``)."""
import numpy as np
import pytest

from frictionkit.runtime import load_model
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization
from frictionkit.runtime.discretizations import _structured_monodromy as _sm
from frictionkit.runtime.discretizations._structured_monodromy import MIN_STATES_LEADING, MonodromyOperator, leading_multipliers

from ._models import string


@pytest.fixture(scope="module")
def string64():
    """64 modes (128 states; the leading route forced with ``min_states=0``) on an orbit of the
    bow point's velocity near the fourth mode: with zeta = 0.003 every multiplier lies above
    0.5 and about 40 above 0.9 (a lightly damped structure's spectrum hugs the circle)."""
    model = load_model(string(64), continuation="Vb", Vb=0.2)
    disc = CondensedAFTDiscretization(model, 8)
    U = np.zeros((disc.nv, disc.nh))
    U[0, 1], U[0, 3] = 0.3, 0.04
    return disc, disc.pack(U, 2 * np.pi * 196.0 * 4, 0.2)


def _matched(lead, dense, floor):
    """Every dense eigenvalue of modulus > floor has an equal leading one (and conversely)."""
    top = dense[np.abs(dense) > floor]
    assert top.size >= 4
    d1 = np.abs(top[:, None] - lead[None, :]).min(axis=1)
    lead_top = lead[np.abs(lead) > floor]
    d2 = np.abs(lead_top[:, None] - dense[None, :]).min(axis=1)
    return max(d1.max(), d2.max()), top.size, lead_top.size


def test_leading_multipliers_equal_the_dense_ones(string64):
    disc, Z = string64
    M = disc.monodromy(Z)
    dense = np.linalg.eigvals(M)
    assert leading_multipliers(M).size == M.shape[0] < MIN_STATES_LEADING      # small: dense
    for floor in (0.99, 0.97):
        lead = leading_multipliers(M, floor=floor, min_states=0)
        assert lead.size < M.shape[0] // 2            # the leading ones only, not the dense fallback
        assert np.abs(lead).min() < floor             # complete above the floor
        err, n_dense, n_lead = _matched(lead, dense, floor)
        assert n_lead == n_dense
        assert err <= 1e-10


def test_leading_multipliers_from_a_nearby_matrix_start_equal_the_dense_ones(string64):
    """ARPACK started from the leading eigenvectors of a nearby matrix (the coarser grid's
    monodromy, as ``refined_monodromy_stability`` does for its two grids) finds the same
    leading eigenvalues as numpy's eigvals of the finer grid's monodromy."""
    disc, Z = string64
    n_t = disc.n_t
    coarse, fine = disc.monodromy(Z, intervals=n_t), disc.monodromy(Z, intervals=2 * n_t)
    mu, start = leading_multipliers(coarse, floor=0.97, min_states=0, with_start=True)
    assert start.shape == (coarse.shape[0],) and abs(np.linalg.norm(start) - 1) < 1e-12
    lead = leading_multipliers(fine, floor=0.97, min_states=0, start=start)
    assert np.abs(lead).min() < 0.97
    # ARPACK's accuracy (ARPACK_TOL's note: the multipliers above 0.99 to rounding, the
    # others of the set within 5e-9; measured 2.7e-11 and 4.2e-9 at 0.977 here)
    dense = np.linalg.eigvals(fine)
    err, n_dense, n_lead = _matched(lead, dense, 0.97)
    assert n_lead == n_dense and err <= 5e-9
    err, n_dense, n_lead = _matched(lead, dense, 0.99)
    assert n_lead == n_dense and err <= 1e-10
    # the dense route has no start to give
    assert leading_multipliers(coarse, with_start=True)[1] is None


def test_refined_stability_with_leading_multipliers_equals_dense(string64, monkeypatch):
    """The refined monodromy's multipliers (``orbit_stability``) with the leading route equal
    those with every eigenvalue (the same route with ``numpy.linalg.eigvals``)."""
    disc, Z = string64
    dense = [orbit_stability(disc, Z, rtol=rtol) for rtol in (1e-6, None)]
    monkeypatch.setattr(disc, "multipliers_of", lambda M, **kw: leading_multipliers(M, floor=0.97, min_states=0, **kw))
    lead = [orbit_stability(disc, Z, rtol=rtol) for rtol in (1e-6, None)]
    for a, b in zip(lead, dense):
        assert b.multipliers.size == disc.st.n_lin + disc.st.n_z
        assert a.multipliers.size < b.multipliers.size
        assert a.method == b.method and a.stable == b.stable
        err, _, _ = _matched(a.multipliers, b.multipliers, 0.97)
        assert err <= 1e-10


def test_monodromy_operator_gives_the_dense_multipliers(string64, monkeypatch):
    """The monodromy applied to vectors (``MonodromyOperator``, chunks of the integrator's
    steps, never the matrix) equals the stepped matrix, and its leading multipliers by ARPACK
    equal the dense eigenvalues of that matrix to 1e-8; the refined stability through the
    operator route (contract item 26) gives the same multipliers as through the matrices."""
    disc, Z = string64
    M = disc.monodromy(Z, method="steps")
    dense = np.linalg.eigvals(M)
    X = np.random.default_rng(1).standard_normal((M.shape[0], 3))
    for chunk in (1, 7, disc.n_t):
        op = MonodromyOperator(disc, Z, chunk=chunk)
        assert np.abs(op @ X - M @ X).max() <= 1e-12 * np.abs(M @ X).max()
    lead = leading_multipliers(MonodromyOperator(disc, Z), floor=0.97)
    assert lead.size < M.shape[0] // 2
    err, n_dense, n_lead = _matched(lead, dense, 0.97)
    assert n_lead == n_dense and err <= 1e-8
    monkeypatch.setattr(_sm, "MIN_STATES_OPERATOR", 0)
    monkeypatch.setattr(disc, "multipliers_of", lambda M, **kw: leading_multipliers(M, floor=0.97, min_states=0, **kw))
    assert disc.monodromy_operator(Z) is not None
    a = orbit_stability(disc, Z, rtol=1e-6)
    monkeypatch.setattr(_sm, "MIN_STATES_OPERATOR", 10 ** 9)
    assert disc.monodromy_operator(Z) is None
    b = orbit_stability(disc, Z, rtol=1e-6)
    assert a.method == b.method and a.stable == b.stable
    err, n_b, n_a = _matched(a.multipliers, b.multipliers, 0.97)
    assert n_a == n_b and err <= 1e-8


def test_monodromy_operator_in_real_arithmetic_on_conjugate_pairs(string64, monkeypatch):
    """The operator's real form (one mode of every conjugate pair, real and imaginary parts
    apart) equals the stepped monodromy (the complex recursion on every mode) and the operator's
    own complex products; without conjugate partners (a pole moved) it is not used."""
    disc, Z = string64
    M = disc.monodromy(Z, method="steps")
    X = np.random.default_rng(2).standard_normal((M.shape[0], 4))
    for chunk in (1, 7, disc.n_t):
        op = MonodromyOperator(disc, Z, chunk=chunk)
        assert op._real is not None and op._real["keep"].size == disc.st.n_lin // 2
        real, cplx = op @ X, op.matmat(X.astype(complex))          # complex input: every mode
        scale = np.abs(M @ X).max()
        assert np.abs(real - M @ X).max() <= 1e-12 * scale
        assert np.abs(cplx - M @ X).max() <= 1e-12 * scale
    poles = np.array(disc.st.poles)
    poles[0] += 1e-6 * abs(poles[0])
    monkeypatch.setattr(disc.st, "poles", poles)
    assert disc.st.conjugate_partner() is None
    assert MonodromyOperator(disc, Z)._real is None


def test_monodromy_matrix_from_the_pairs_equals_the_stepped_one(string64):
    """The matrix by chunks from the identity's modal coordinates on one pole of every pair
    (``identity_pairs``, ``states_from_pairs``: the operator's ``matrix()``) equals the stepped
    monodromy (every mode, complex) and the operator's products with the identity."""
    disc, Z = string64
    M = disc.monodromy(Z, method="steps")
    op = MonodromyOperator(disc, Z)
    direct = op.matrix()
    assert np.abs(direct - M).max() <= 1e-12 * np.abs(M).max()
    assert np.array_equal(disc.monodromy(Z), direct)
    assert np.abs(direct - op.matmat(np.eye(M.shape[0]))).max() <= 1e-13 * np.abs(M).max()


@pytest.mark.parametrize("N", [7, 40, 200])
def test_orbit_at_the_stages_equals_the_series_summed_there(N):
    """The port states at the Gauss points of every step (rotated coefficients and an inverse
    FFT per stage, ``_samples_at_stages``) equal the series summed at those phases
    (``_hbm.coefficients_at``); N = 7 is below 2H + 1 (summed directly)."""
    from frictionkit.runtime.discretizations._condensed import _GAUSS3, _samples_at_stages
    from frictionkit.runtime.discretizations._hbm import coefficients_at
    H = 12
    U = np.random.default_rng(3).standard_normal((3, 2 * H + 1)) / np.r_[1, np.repeat(np.arange(1, H + 1), 2)]
    nodes = _GAUSS3[0]
    theta = 2 * np.pi * (np.arange(N)[:, None] + nodes[None, :]).ravel() / N
    ref = coefficients_at(U, theta)
    assert np.abs(_samples_at_stages(U, nodes, N) - ref).max() <= 1e-14 * np.abs(ref).max()
