"""Hopf points that the count of unstable eigenvalues alone does not see (issue 24).

Three uncoupled oscillators, ``x_k'' + c_k(mu) x_k' + w_k^2 x_k = 0``, whose eigenvalues are
``-c_k/2 +- i sqrt(w_k^2 - c_k^2/4)``: the first is unstable below ``mu = a``
(``c_1 = mu - a``), the second above ``mu = b`` (``c_2 = b - mu``), the third is stable with a
damping ``d`` so light that its pair lies nearer the imaginary axis than the crossing ones over
most of the range.  The Hopf points are exactly ``a`` (frequency ``w1``) and ``b`` (``w2``).

With ``b - a`` far below the sampling of the equilibrium branch, the number of unstable
eigenvalues is 2 on both sides of the pair of Hopf points: only the matching of the
eigenvalues between samples sees the two crossings.  The test function that takes the complex
pair nearest the axis jumps to the third oscillator's pair inside a bracket; the crossing pair
is tracked instead.
"""
import numpy as np
import pytest

from frictionkit.modelspec import ModelSpec
from frictionkit.runtime import load_model
from frictionkit.runtime.analysis._equilibria import eigenvalues
from frictionkit.runtime.drivers._branches import equilibrium_branch

A, B, D = 0.5, 0.5003, 1e-4
W = (3.0, 5.0, 4.0)


def _spec():
    m = ModelSpec("three_oscillators", "two close Hopf points of opposite direction and a lightly damped mode")
    mu = m.parameter("mu", 0.3)
    a = m.parameter("a", A)
    b = m.parameter("b", B)
    d = m.parameter("d", D, positive=True)
    damping = (mu - a, b - mu, d)
    for k in range(3):
        x, v = m.second_order(f"x{k + 1}", velocity=f"v{k + 1}")
        m.ode(v, -damping[k] * v - W[k] ** 2 * x)
    return m


@pytest.fixture(scope="module")
def hopf_points():
    model = load_model(_spec(), continuation="mu")
    eq = equilibrium_branch(model, 0.2, 0.8)
    return model, eq, eq.special_points("hopf")


def test_two_hopf_points_closer_than_the_samples_are_both_found(hopf_points):
    _, eq, hopf = hopf_points
    assert (eq.solutions[-1][-1] - eq.solutions[0][-1]) / 40 > 10 * (B - A)   # closer than the sampling
    assert [h.param for h in hopf] == pytest.approx([A, B], abs=1e-12)
    assert [h.omega for h in hopf] == pytest.approx([W[0], W[1]], rel=1e-12)


def test_the_located_points_carry_an_eigenvalue_on_the_axis(hopf_points):
    model, _, hopf = hopf_points
    for h in hopf:
        ev = eigenvalues(model, h.solution[:model.n], h.param)
        k = np.argmin(np.abs(ev - 1j * h.omega))
        assert abs(ev[k].real) < 1e-12
