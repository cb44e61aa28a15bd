"""The validity measure of the recast (DESIGN §6), for many points at once.

References: hand-made samples with the measure worked out by hand, and the discretization's
own per-point sampling (``Discretization.samples``) through the NumPy module's ``aux``, an
independent route from the batched one (one inverse FFT of all points, compiled ``aux``).
"""
import warnings

import numpy as np
import pytest

from frictionkit.codegen import generate_module
from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.engine._validity import N_SAMPLES, check_points
from frictionkit.runtime.results._columns import validity_columns, validity_measures

CONDITIONS = (("R", "positive", "R > 0"), ("a", "nonzero", "a != 0"))


def test_measure_by_hand():
    u = np.array([
        [[1.0, 0.5, -0.2], [-3.0, -1.0, -2.0]],       # R dips to -0.2 of its scale; a < 0 throughout
        [[2.0, 4.0, 1.0], [2.0, 0.5, -1.0]],          # R > 0; a changes sign between samples
        [[1.0, np.nan, 1.0], [0.0, 0.0, 0.0]],        # a NaN (negative root argument); a == 0
    ])
    m = validity_measures(CONDITIONS, ("R", "a"), u)
    np.testing.assert_array_equal(m["R"][1], [-0.2, 1.0, -np.inf])
    np.testing.assert_allclose(m["R"][0], [-0.2, 0.25, -np.inf])
    # a < 0 throughout: s = -1, worst = min(-a) = 1, relative 1/3; the sign change: s = +1
    # (largest sample 2), worst = -1, relative -1/2; all zero: worst 0, relative 0 (violated)
    np.testing.assert_allclose(m["a"][1], [1.0, -1.0, 0.0])
    np.testing.assert_allclose(m["a"][0], [1 / 3, -0.5, 0.0])


@pytest.fixture(scope="module")
def belt_aft():
    model = load_model("belt", continuation="Vb", FN=5.0)
    eq = equilibrium_branch(model, 0.05, 1.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        br = periodic_branch(disc, Z, 0.05, 2.0, d, options=dict(stability=False))
    return model, disc, br


def test_check_points_agree_with_per_point_samples(belt_aft):
    model, disc, br = belt_aft
    assert model.backend == "cython" and len(br) > 10
    npm = generate_module("belt", "Vb", backend="numpy")
    checks = check_points(disc, br.solutions)
    for Z, c in zip(br.solutions, checks):
        t, x = disc.samples(Z, N_SAMPLES)
        u = npm.aux(x, t, model.param_vector(Z[-1]))
        R = u[model.variables.index("R1")]
        assert c.worst["R1"] == pytest.approx(R.min(), rel=1e-12, abs=1e-15)
        assert c.relative["R1"] == pytest.approx(R.min() / np.abs(R).max(), rel=1e-12, abs=1e-15)
        a = u[model.variables.index("a1")]
        s = np.sign(a[np.argmax(np.abs(a))])
        assert c.relative["a1"] == pytest.approx((s * a).min() / np.abs(a).max(), rel=1e-12)
    # the engine's measures are the branch's columns
    np.testing.assert_array_equal(br.validity["R1"], [c.relative["R1"] for c in checks])


def test_columns_of_an_aft_branch_on_the_finer_grid(belt_aft):
    """The columns (the check's grid: max(8H + 8, 256) samples at this H) against the per-point
    route on that grid."""
    model, disc, br = belt_aft
    cols = validity_columns(disc, br.solutions)
    n_t = max(8 * disc.H + 8, 256)
    for i, Z in enumerate(br.solutions[::7]):
        t, x = disc.samples(Z, n_t)
        R = model.aux(x, t, Z[-1])[model.variables.index("R1")]
        assert cols["R1"][7 * i] == pytest.approx(R.min() / np.abs(R).max(), rel=1e-12, abs=1e-15)
