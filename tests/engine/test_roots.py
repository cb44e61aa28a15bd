"""The runtime's own root finder and interpolants (runtime/_roots.py) against analytic
roots and polynomials, and against SciPy's (a second implementation)."""
import numpy as np
import pytest
import scipy.interpolate
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

from frictionkit.runtime._roots import CubicHermite, bracketed_root, lagrange_value
from frictionkit.runtime.errors import ConvergenceError

#: the Dottie number, the root of cos(x) = x (OEIS A003957)
DOTTIE = 0.7390851332151606416553120876738734040134


def test_analytic_roots():
    assert bracketed_root(lambda x: np.cos(x) - x, 0.0, 1.0, xtol=1e-15, rtol=1e-15) == pytest.approx(DOTTIE, abs=2e-15)
    assert bracketed_root(lambda x: x * x - 2.0, 0.0, 2.0, xtol=1e-15, rtol=1e-15) == pytest.approx(np.sqrt(2), abs=3e-15)
    # a simple root at an end, and a root far from 1 (the relative tolerance alone)
    assert bracketed_root(lambda x: x - 3.0, 3.0, 5.0) == 3.0
    r = bracketed_root(lambda x: np.log(x / 7.5e8), 1e8, 1e9, xtol=0.0, rtol=1e-14)
    assert abs(r - 7.5e8) <= 1e-14 * 7.5e8


@settings(max_examples=60, deadline=None)
@given(r=st.floats(-5, 5), c=st.floats(0, 3), k=st.integers(1, 3),
       lo=st.floats(0.01, 4), hi=st.floats(0.01, 4), xtol=st.sampled_from([1e-6, 1e-10, 1e-14]))
def test_bracketed_root_meets_its_tolerance_like_brentq(r, c, k, lo, hi, xtol):
    """An odd-multiplicity root ``r`` of ``(x - r)^(2k-1) (1 + c x^2)`` inside ``[r - lo, r +
    hi]``: found within ``xtol + rtol |r|`` (Brent's guarantee, and SciPy's meaning of the
    arguments), as ``scipy.optimize.brentq`` finds it."""
    def f(x):
        return (x - r) ** (2 * k - 1) * (1 + c * x * x)
    a, b = r - lo, r + hi
    tol = xtol + 1e-14 * abs(r)
    mine = bracketed_root(f, a, b, xtol=xtol, rtol=1e-14, maxiter=400)
    theirs = scipy.optimize.brentq(f, a, b, xtol=xtol, rtol=1e-14, maxiter=400)
    assert abs(mine - r) <= tol * (1 + 1e-9)
    assert abs(theirs - r) <= tol * (1 + 1e-9)


def test_a_jump_is_bracketed_by_bisection():
    """A sign change without a root (a step at 1/3): the bracket still closes on it."""
    x = bracketed_root(lambda x: -1.0 if x < 1 / 3 else 1.0, 0.0, 1.0, xtol=1e-12, rtol=0.0)
    assert abs(x - 1 / 3) <= 1e-12


def test_bad_brackets_are_refused():
    with pytest.raises(ValueError, match="opposite signs"):
        bracketed_root(lambda x: x * x + 1, -1.0, 1.0)
    with pytest.raises(ValueError, match="opposite signs"):
        bracketed_root(lambda x: np.nan, -1.0, 1.0)
    with pytest.raises(ConvergenceError, match="inside the bracket"):
        bracketed_root(lambda x: np.nan if abs(x) < 0.5 else x, -1.0, 2.0)


def test_cubic_hermite_against_scipy_and_exact_cubics():
    rng = np.random.default_rng(1)
    Ya, Yb, Da, Db = rng.normal(size=(4, 5))
    s = np.linspace(0, 1, 11)
    ref = scipy.interpolate.CubicHermiteSpline([0.0, 1.0], np.vstack([Ya, Yb]), np.vstack([Da, Db]))
    H = CubicHermite(Ya, Da, Yb, Db)
    np.testing.assert_allclose(H(s), ref(s), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(H(0.37), ref(0.37), rtol=1e-13, atol=1e-13)
    # a cubic is reproduced exactly from its values and slopes at 0 and 1
    p = np.polynomial.Polynomial([0.3, -1.2, 2.5, 0.7])
    dp = p.deriv()
    C = CubicHermite([p(0.0)], [dp(0.0)], [p(1.0)], [dp(1.0)])
    np.testing.assert_allclose(C(s)[:, 0], p(s), rtol=0, atol=1e-14)


def test_lagrange_value_reproduces_a_quadratic():
    x = np.array([0.3, -0.7, 1.9])
    q = [np.polynomial.Polynomial([1.0, -2.0, 0.5]), np.polynomial.Polynomial([0.0, 3.0, -1.0])]
    Y = np.array([[qi(xi) for qi in q] for xi in x])
    for x0 in (0.0, 2.5, -0.7):
        np.testing.assert_allclose(lagrange_value(x, Y, x0), [qi(x0) for qi in q], rtol=1e-13, atol=1e-13)
