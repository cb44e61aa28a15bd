"""The ``dissipation/<contact>`` column of a whole branch in one batch (issue 29): every point at
once, each with its own continuation parameter, against an independent reference per point.

References:

* the belt (seed 000 eqs. 5-6, ``v' = ... + FN / M1 mu(v - Vb)``), continued in the belt speed
  ``Vb``, which enters the friction force: the force is linear in ``FN``, so the contact's part
  of the velocity equation is ``rhs(x; FN) - rhs(x; FN = 0)`` (the generated ``rhs``, not
  ``contact_force``), and ``E = -int_0^T F v dt`` by the trapezoidal rule on the samples of
  the orbit summed from its Fourier coefficients by cosines and sines (``Branch.time_series``,
  not the FFT), the column's rule on its grid of ``max(8 H + 8, 256)`` samples, so the two agree
  to rounding (the rule's own error is tested against solve_ivp in ``test_dissipation.py``);
* a force that does not take a batch of parameter vectors (it reads its parameter as a
  Python float, or ignores all but the first point's) is evaluated point by point: the
  batch is checked against the module's own call, never trusted blindly.
"""
import numpy as np
import pytest

from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import Branch
from frictionkit.runtime.results._columns import _at_every_point, contact_dissipation


@pytest.fixture(scope="module")
def belt_branch():
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    eq = equilibrium_branch(m, 0.05, 12)
    disc, Z, d = periodic_start_from_hopf(m, eq.special_points("hopf")[0], 8)
    per = periodic_branch(disc, Z, 0.0, 12, d)
    return m, per


def _reference(m, br, i):
    """``-int_0^T F v dt`` at point ``i``, ``F`` the friction term of the velocity equation."""
    t, x = br.time_series(i, n_t=max(8 * br.harmonics + 8, 256))
    p = m.param_vector(br.param[i])
    p0 = p.copy()
    p0[list(m.module.PARAMETERS).index("FN")] = 0.0
    F = m.rhs(t, x, params=p)[1] - m.rhs(t, x, params=p0)[1]
    return -(2 * np.pi / br.omega[i]) * np.mean(F * x[1])


def test_every_point_of_a_branch_against_the_rhs_quadrature(belt_branch):
    m, per = belt_branch
    assert len(per) > 50 and np.ptp(per.param) > 1.0        # many points, Vb differing between them
    E = contact_dissipation(per.discretization, per.solutions)["belt"]
    ref = np.array([_reference(m, per, i) for i in range(len(per))])
    scale = np.abs(ref).max()
    assert np.all(np.abs(E - ref) <= 1e-13 * scale)          # measured 6e-15
    # the branch column is this one
    np.testing.assert_array_equal(per.dissipation["belt"], E)
    # and a point alone gives the same value as in the batch
    i = len(per) // 2
    alone = Branch.from_solutions(per.discretization, per.solutions[i][None], per.tangents[i][None])
    assert alone.dissipation["belt"][0] == pytest.approx(ref[i], rel=1e-10, abs=1e-10 * scale)


def _points(P=5, n=2, M=16):
    rng = np.random.default_rng(3)
    return rng.standard_normal((n, P, M)), np.tile(np.linspace(0, 1, M), (P, 1)), rng.uniform(1, 2, (P, 3))


def test_a_force_taking_one_vector_only_is_called_point_by_point():
    x, t, params = _points()

    def scalar_only(xs, ts, p):         # float(): refuses an array of points
        return (float(p[0]) * xs)[None]
    F = _at_every_point(scalar_only, x, t, params)
    np.testing.assert_array_equal(F[0], params[:, 0][None, :, None] * x)


def test_a_force_ignoring_all_but_one_point_is_caught():
    x, t, params = _points()

    def first_only(xs, ts, p):          # takes the first entry of each parameter: wrong for a batch
        p = np.asarray(p, dtype=float).reshape(len(p), -1)[:, 0]
        return (p[0] * xs)[None]
    F = _at_every_point(first_only, x, t, params)
    np.testing.assert_array_equal(F[0], params[:, 0][None, :, None] * x)


def test_a_module_without_the_force_gives_none():
    x, t, params = _points()
    assert _at_every_point(lambda xs, ts, p: None, x, t, params) is None
