"""Work and accuracy of the Hopf point location on an equilibrium branch (issue 12).

The belt of seed 000 (``zoo.belt()``, n = 10, FN = 5), equilibria for Vb 0.05 -> 12 as in
``benchmarks/bench_auto.py``.  The reference Hopf points are computed here without the
engine: the ODE of seed 000 eq. (1) with the regularized law of eq. (2) (built with sympy
from the seed's formula, not from the generated module), its equilibrium at fixed Vb by
``scipy.optimize.fsolve``, and the Vb where the largest real part of the eigenvalues of
its Jacobian crosses zero by ``scipy.optimize.brentq``.
"""
import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq, fsolve

from frictionkit.modelspec import zoo
from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._branches import equilibrium_branch
from tests.models import belt_handwritten

P = dict(zip(belt_handwritten.PARAMETERS, belt_handwritten.DEFAULTS))
N, FN = 10.0, 5.0


def _law():
    """mu_n(Vr) and mu_n'(Vr) of seed 000 eq. (2)."""
    vr = sp.symbols("Vr", real=True)
    mus, mud = sp.Rational(str(P["mus"])), sp.Rational(str(P["mud"]))
    alpha = sp.sqrt(mus * (mus - mud))
    mu = (-mud * vr * sp.sqrt(vr**2 + sp.Float(P["eps"]) / N**2) - 2 * alpha / N * vr) / (vr**2 + 1 / N**2)
    return sp.lambdify(vr, mu, "math"), sp.lambdify(vr, sp.diff(mu, vr), "math")


def _reference_hopf(brackets):
    mu, dmu = _law()
    z, w, m = P["zeta"], P["omega1"], P["M1"]

    def rhs(x, vb):          # y' = v, v' = -2 zeta omega1 v - omega1^2 y + FN/M1 mu(v - Vb)
        return [x[1], -2 * z * w * x[1] - w**2 * x[0] + FN / m * mu(x[1] - vb)]

    def jac(x, vb):
        return np.array([[0.0, 1.0], [-w**2, -2 * z * w + FN / m * dmu(x[1] - vb)]])

    def growth(vb):
        x = fsolve(rhs, [FN / m * mu(-vb) / w**2, 0.0], args=(vb,), fprime=jac, xtol=1e-14)
        return float(np.max(np.linalg.eigvals(jac(x, vb)).real))

    return [brentq(growth, a, b, xtol=1e-16, rtol=1e-15) for a, b in brackets]


def test_belt_hopf_points_with_at_most_1_5_factorizations_per_step():
    model = load_model(zoo.belt(), continuation="Vb", n=N, FN=FN)
    eq = equilibrium_branch(model, 0.05, 12.0)
    hopf = [h.param for h in eq.special_points("hopf")]
    ref = _reference_hopf([(0.1, 0.2), (3.0, 4.0)])
    assert hopf == pytest.approx(ref, rel=1e-12)
    # AUTO-07p's values (benchmarks/bench_auto.py, 11 digits)
    assert hopf == pytest.approx([0.14173100578, 3.6555597017], rel=3e-10)
    # issue 12: at most 1.5 factorizations per ANM step (start included); the Hopf location
    # is analysis work, counted apart: a few Newton-corrected points per Hopf point
    assert eq.counters["factorizations"] <= 1.5 * eq.counters["steps"]
    assert eq.counters["analysis_factorizations"] <= 5 * len(hopf)


def _two_hopf_spec():
    """x' = mu x - y - x r^2, y' = x + mu y - y r^2 with mu = -(p - 1)(p - 1.2): the
    origin is an equilibrium for every p (a straight branch, which the ANM crosses in one
    long step) with eigenvalues mu +- i, so Hopf points at exactly p = 1 and p = 1.2."""
    from frictionkit.modelspec import ModelSpec
    m = ModelSpec("two_hopf", "two Hopf points on a straight equilibrium branch")
    lam = m.parameter("p", 0.0)
    x, y = m.state("x"), m.state("y")
    mu = -(lam - 1) * (lam - sp.Rational(6, 5))
    r2 = x**2 + y**2
    m.ode(x, mu * x - y - x * r2)
    m.ode(y, x + mu * y - y * r2)
    return m


def test_two_hopf_points_inside_one_step_are_both_found():
    """The eigenvalues are sampled on the interpolant of a long step, so the pair of Hopf
    points that one ANM step jumps over (the counts at its ends are equal) is found."""
    model = load_model(_two_hopf_spec(), continuation="p")
    eq = equilibrium_branch(model, 0.0, 3.0, x_guess=[0.0, 0.0])
    assert eq.counters["steps"] <= 3            # the straight branch in (about) one step
    hopf = [h.param for h in eq.special_points("hopf")]
    assert hopf == pytest.approx([1.0, 1.2], abs=1e-12)
    assert [h.omega for h in eq.special_points("hopf")] == pytest.approx([1.0, 1.0], rel=1e-12)
    assert eq.stable[0] == 1.0 and eq.stable[-1] == 1.0
