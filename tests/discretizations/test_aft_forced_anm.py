"""The ANM of the AFT with the forcing frequency continued (issue 25 item 2).

The Taylor kernel of a model continued in its forcing frequency ``w = lam`` is generated in
the forcing phase ``theta = w t`` (codegen/taylor.py), so the series of the harmonic balance
hold what its samples hold fixed.  Independent check: the residual ``R`` (the FFT of the
generated ``rhs`` at the times ``theta / lam``, no kernel involved) along the truncated series
``Z(a) = Z_0 + sum_{p<=P} a^p Z_p`` must vanish like ``a^(P+1)``: a kernel that held ``t``
fixed instead leaves an ``a^2`` error (the forcing's phase drifts with ``lam``).
"""
from pathlib import Path

import numpy as np
import pytest

from frictionkit.runtime import AFTDiscretization, load_model
from frictionkit.runtime.drivers._forced_start import linear_response
from frictionkit.runtime.engine._bordered import bordered_factor
from frictionkit.runtime.engine._newton import correct

DAMPER = str(Path(__file__).resolve().parents[2] / "examples" / "friction_damper.py")


@pytest.fixture(scope="module")
def point():
    model = load_model(DAMPER, continuation="W", muN=0.05)
    disc = AFTDiscretization(model, 12)
    x, w = linear_response(model, 0.58, 128, 12)
    Z, _ = correct(disc, disc.from_samples(x, w, 0.58), np.eye(disc.size)[-1], 0.58, max_iter=30)
    assert disc.kind == "aft" and disc.omega_is_lam and disc.supports_anm
    lu = bordered_factor(disc.jacobian(Z), np.eye(disc.size)[-1])
    rhs = np.zeros(disc.size)
    rhs[-1] = 1.0
    v = lu.solve(rhs)
    return disc, Z, v / np.linalg.norm(v), lu


def _residual_along(disc, Z0, terms, a):
    Za = Z0 + sum(a ** p * Zp for p, Zp in enumerate(terms, 1))
    return np.linalg.norm(disc.residual(Za))


@pytest.mark.parametrize("order", [3, 6])
def test_series_residual_vanishes_at_the_series_order(point, order):
    disc, Z, Z1, lu = point
    terms = disc.series_terms(Z, Z1, order, lambda r: lu.solve(r))
    a = 0.02 * np.array([1.0, 0.5, 0.25])
    res = np.array([_residual_along(disc, Z, terms, x) for x in a])
    slopes = np.diff(np.log(res)) / np.diff(np.log(a))
    assert np.all(np.abs(slopes - (order + 1)) < 0.3), (res, slopes)
    assert len(terms) == order


def test_compiled_loop_matches_the_python_recurrence(point):
    disc, Z, Z1, lu = point
    py = disc.series_terms(Z, Z1, 10, lambda r: lu.solve(r))                 # contract default loop
    compiled = disc.series_terms(Z, Z1, 10, lambda r: lu.solve(r), lu.dense_lu)
    if disc.model.taylor_kernel() is None:
        pytest.skip("the NumPy backend has no compiled kernel")
    scale = np.abs(np.array(py)).max(axis=1)
    np.testing.assert_allclose(np.array(compiled), np.array(py), rtol=0, atol=1e-11 * scale.max())


def test_lam_column_is_the_derivative_at_fixed_phase(point):
    """The Jacobian's lam column (kernel at order 1) against a central difference of R in lam."""
    disc, Z, _, _ = point
    J = disc.jacobian(Z)
    h = 1e-6
    e = np.eye(disc.size)[-1]
    fd = (disc.residual(Z + h * e) - disc.residual(Z - h * e)) / (2 * h)
    np.testing.assert_allclose(J[:, -1], fd, atol=1e-8 * np.abs(fd).max())
