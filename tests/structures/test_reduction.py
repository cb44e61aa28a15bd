"""Reduction of structures given as matrices (DESIGN §6) against dense linear algebra on the
unreduced finite-element model: modes (eigsh shift-invert against scipy.linalg.eigh), the static
correction (the static flexibility at the loaded points against K^-1), the dynamic compliance
(against a solve of the unreduced dynamic stiffness), damping options, MatrixMarket files."""
import numpy as np
import pytest
import scipy.io
import scipy.linalg
import scipy.sparse

from examples.fe_beam_damper import beam_matrices
from frictionkit.modelspec import Structure
from frictionkit.runtime.model._structure import reduce_structure


def _beam(n_el):
    M, K = beam_matrices(n_el)
    n = M.shape[0]
    return M, K, {"tip": n - 2, "mid": 2 * (n_el // 2 - 1)}


#: beta_n L of a clamped-free Euler-Bernoulli beam (roots of cos x cosh x = -1)
CANTILEVER = np.array([1.8751040687119611, 4.6940911329741745, 7.854757438237613, 10.995540734875467,
                       14.137168391046471, 17.278759532088237])


@pytest.mark.parametrize("n_el", [60, 400])        # dense path (120 DOF) and eigsh path (800 DOF)
def test_retained_modes_are_the_cantilevers_natural_frequencies(n_el):
    from examples.fe_beam_damper import DENSITY, LENGTH, THICKNESS, WIDTH, YOUNG
    M, K, pts = _beam(n_el)
    EI, rhoA = YOUNG * WIDTH * THICKNESS ** 3 / 12, DENSITY * WIDTH * THICKNESS
    exact = CANTILEVER ** 2 * np.sqrt(EI / (rhoA * LENGTH ** 4))
    mats = (M, K) if n_el > 100 else (M.toarray(), K.toarray())
    b = reduce_structure(Structure.from_matrices(*mats, points=pts, modes=6, static_correction=False), ["tip"])
    # the finite elements' error (h^4) and rounding (cond(K) = 6e11 at 800 DOF): 5e-6 for the
    # 6th mode of 60 elements, 5e-9 for the first of 400
    np.testing.assert_allclose(b.frequencies, exact, rtol=1e-5)
    np.testing.assert_allclose(b.frequencies[:3], exact[:3], rtol=(3e-7 if n_el < 100 else 1e-8))
    # mass-normalised at every degree of freedom
    np.testing.assert_allclose(b.full_shapes.T @ (M @ b.full_shapes), np.eye(6), atol=1e-9)
    assert b.info == dict(n_dof=2 * n_el, retained=6, static=0, seconds=b.info["seconds"])


def test_static_correction_makes_the_static_flexibility_at_the_loaded_points_exact():
    from examples.fe_beam_damper import LENGTH, THICKNESS, WIDTH, YOUNG
    M, K, pts = _beam(200)
    # the cantilever's static flexibility (Hermite elements are exact at the nodes): tip load
    # -> tip L^3/(3 EI), mid and tip 5 L^3/(48 EI), mid load -> mid L^3/(24 EI)
    L3EI = LENGTH ** 3 / (YOUNG * WIDTH * THICKNESS ** 3 / 12)
    exact = L3EI * np.array([[1 / 24, 5 / 48], [5 / 48, 1 / 3]])
    for corrected in (False, True):
        b = reduce_structure(Structure.from_matrices(M, K, points=pts, modes=3, static_correction=corrected),
                             ["mid", "tip"])
        phi = b.shapes[[list(b.points).index("mid"), list(b.points).index("tip")]]
        flex = phi @ np.diag(1 / b.frequencies ** 2) @ phi.T
        err = np.max(np.abs(flex - exact)) / np.max(np.abs(exact))
        if not corrected:
            plain = b.frequencies.copy()
        if corrected:
            # rounding: a sparse LU solve of K alone is 1e-8 from these values (cond(K) = 1e11)
            assert err < 5e-8 and b.info["static"] == 2
            # the retained modes are still the lowest ones (against the uncorrected basis)
            np.testing.assert_allclose(b.frequencies[:3], plain, rtol=1e-10)
        else:
            assert err > 1e-4            # three modes alone miss the truncated modes' flexibility


def test_dynamic_compliance_between_modes_against_the_unreduced_model():
    M, K, pts = _beam(100)
    a, bb = 1.0, 1e-5
    Md, Kd = M.toarray(), K.toarray()
    C = a * Md + bb * Kd
    w = 0.5 * (52.5 + 329.0) * 1.7        # between the 2nd and 3rd modes
    D = Kd - w * w * Md + 1j * w * C
    tip = pts["tip"]
    exact = np.linalg.solve(D, np.eye(len(D))[:, tip])[tip]
    errs = []
    for corrected in (False, True):
        b = reduce_structure(Structure.from_matrices(M, K, points=pts, rayleigh=(a, bb), cutoff=4000.0,
                                                     static_correction=corrected), ["tip"])
        phi = b.shapes[list(b.points).index("tip")]
        wj, zj = b.frequencies, b.damping
        np.testing.assert_allclose(zj, 0.5 * (a / wj + bb * wj), rtol=1e-13)
        G = np.sum(phi * phi / (wj * wj - w * w + 2j * zj * wj * w))
        errs.append(abs(G - exact) / abs(exact))
    assert errs[1] < 1e-3 and errs[1] < errs[0] / 10


def test_cutoff_keeps_the_modes_below_it_and_mtx_files_give_the_same_basis(tmp_path):
    M, K, pts = _beam(400)                    # 800 DOF: the eigsh path
    # LAPACK on the inverse problem (the lowest modes to full relative accuracy)
    mu = scipy.linalg.eigh(M.toarray(), K.toarray(), eigvals_only=True, subset_by_index=[800 - 40, 799])[::-1]
    w_all = 1 / np.sqrt(mu)
    cut = 0.5 * (w_all[17] + w_all[18])
    b = reduce_structure(Structure.from_matrices(M, K, points=pts, cutoff=cut, static_correction=False), [])
    # ARPACK (shift-invert, sparse LU) against LAPACK (dense Cholesky): both carry cond(K) eps
    np.testing.assert_allclose(b.frequencies, w_all[:18], rtol=1e-7)
    scipy.io.mmwrite(str(tmp_path / "m.mtx"), M, precision=17)
    scipy.io.mmwrite(str(tmp_path / "k.mtx"), K, precision=17)
    b2 = reduce_structure(Structure.from_mtx(tmp_path / "m.mtx", tmp_path / "k.mtx", points=pts, cutoff=cut,
                                             static_correction=False), [])
    np.testing.assert_allclose(b2.frequencies, b.frequencies, rtol=1e-12)
    np.testing.assert_allclose(np.abs(b2.shapes), np.abs(b.shapes), rtol=1e-8, atol=1e-12)


def test_proportional_damping_matrix_is_diagonalised_and_dense_matrices_work():
    M, K, pts = _beam(30)
    Md, Kd = M.toarray(), K.toarray()
    b = reduce_structure(Structure.from_matrices(Md, Kd, points=pts, damping=2.0 * Md + 1e-5 * Kd, modes=4,
                                                 static_correction=False), [])
    np.testing.assert_allclose(b.damping, 0.5 * (2.0 / b.frequencies + 1e-5 * b.frequencies), rtol=1e-9)
