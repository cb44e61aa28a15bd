"""Roots of a test function between two branch points (``engine/_locate.py``) when the test
is noisy on corrected points.

Next to a fold the Newton-corrected points scatter by the solve's rounding floor, and a test
function that is sensitive to that scatter (the product of the two Floquet multipliers
nearest 1 at a fold of cycles: 1e-10 on the seed-000 belt at H = 20, i.e. 1e-7 of the chord)
is known only to that noise.  The locator must still return a root inside the noise band,
whatever the rounding: on this machine a one-thread BLAS made the fold's crossing NaN
(issue 26) because a bracket end was corrected a second time, from another guess, and its
noisy test value then had the other end's sign.

The branch here is the unit circle ``x^2 + lam^2 = 1`` (a fold at ``lam = 1``) and the test
is ``x - x_root`` plus a noise of amplitude ``A`` that is a fixed pseudo-random function of
the point's bits (CRC32), so that a point corrected twice from two guesses carries two
independent noise values, as on the belt.  The reference is the analytic root ``x_root``.
"""
import zlib

import numpy as np
import pytest

from frictionkit.runtime.discretizations._base import Discretization
from frictionkit.runtime.engine._bordered import Counters
from frictionkit.runtime.engine._locate import locate_on_branch, locate_on_interpolant

A = 1e-7          # noise amplitude of the test, 1.4e-7 of the chord: far above stol
STOL = 1e-9


class _Circle(Discretization):
    """``R(x, lam) = x^2 + lam^2 - 1``: unknowns ``[x, lam]``."""

    kind = "circle"
    m = 1

    def residual(self, Z):
        return np.array([Z[0] ** 2 + Z[1] ** 2 - 1.0])

    def jacobian(self, Z):
        return np.array([[2.0 * Z[0], 2.0 * Z[1]]])


def _on_circle(x):
    return np.array([x, np.sqrt(1.0 - x * x)])


def _tangent(Z):
    t = np.array([Z[1], -Z[0]])        # oriented towards increasing x
    return t / np.linalg.norm(t)


def _noisy_test(x_root, amplitude):
    def test(Z):
        u = zlib.crc32(np.ascontiguousarray(Z, dtype=float).tobytes()) / 2.0 ** 31 - 1.0
        return Z[0] - x_root + amplitude * u
    return test


ROOTS = np.linspace(-0.02, 0.03, 16)      # around the fold at x = 0, between the two points


@pytest.mark.parametrize("max_corrections", [3, 8])
def test_noisy_test_function_root_inside_its_noise_band_whatever_the_rounding(max_corrections):
    # the secant cannot settle to STOL in the noise, so Brent's method finishes on the
    # bracket it reached: with its ends' measured values it returns a root every time
    disc = _Circle()
    Za, Zb = _on_circle(-0.3), _on_circle(0.4)
    for x_root in ROOTS:
        Z = locate_on_interpolant(disc, Za, _tangent(Za), Zb, _tangent(Zb), _noisy_test(x_root, A),
                                  stol=STOL, max_corrections=max_corrections)
        assert abs(disc.residual(Z)[0]) < 1e-14
        # the measured test changes sign within STOL of Z (slope 1 in x, chord 0.7): the
        # noise-free test there is within the noise amplitude and that distance
        assert abs(Z[0] - x_root) <= A + STOL


def test_noisy_test_function_root_from_perturbed_tangents():
    # tangents a few ulps off (the rounding of a different BLAS): still a root every time
    disc = _Circle()
    Za, Zb = _on_circle(-0.3), _on_circle(0.4)
    rng = np.random.default_rng(26)
    for x_root in ROOTS[::3]:
        for _ in range(4):
            ta, tb = (_tangent(Z) * (1 + 4e-16 * rng.standard_normal(2)) for Z in (Za, Zb))
            Z = locate_on_interpolant(disc, Za, ta, Zb, tb, _noisy_test(x_root, A), stol=STOL)
            assert abs(Z[0] - x_root) <= A + STOL


def test_smooth_test_function_root_to_stol_in_few_corrections():
    # without noise the secant converges to rounding after a handful of corrections (the
    # interpolant's root is 1e-6 of the chord off), and the Brent search agrees
    disc = _Circle()
    Za, Zb = _on_circle(-0.3), _on_circle(0.4)
    for x_root in ROOTS[::6]:
        counters = Counters()
        Z = locate_on_interpolant(disc, Za, _tangent(Za), Zb, _tangent(Zb), _noisy_test(x_root, 0.0),
                                  counters, stol=1e-14)
        assert abs(Z[0] - x_root) < 1e-14
        assert counters.factorizations <= 12
        Zb_ = locate_on_branch(disc, Za, Zb, _noisy_test(x_root, 0.0), stol=1e-14)
        assert abs(Zb_[0] - x_root) < 1e-14


def _counted(test):
    calls = []

    def counted(Z):
        calls.append(Z)
        return test(Z)
    return counted, calls


@pytest.mark.parametrize("where", ["branch", "interpolant"])
def test_a_settled_test_value_ends_the_search_inside_twice_the_noise(where):
    # settled(Z, g): |g| within the test's known error (its noise amplitude A here); the search
    # ends at the first such corrected point, where the noise-free test is within 2 A of 0
    # (|g| <= A plus the noise A), with fewer evaluations than the search to STOL
    disc = _Circle()
    Za, Zb = _on_circle(-0.3), _on_circle(0.4)

    def settled(Z, g):
        return abs(g) <= A

    for x_root in ROOTS[::3]:
        runs = {}
        for stop in (None, settled):
            test, calls = _counted(_noisy_test(x_root, A))
            if where == "branch":
                Z = locate_on_branch(disc, Za, Zb, test, stol=STOL, settled=stop)
            else:
                Z = locate_on_interpolant(disc, Za, _tangent(Za), Zb, _tangent(Zb), test, stol=STOL,
                                          settled=stop)
            runs[stop is None] = (Z, len(calls))
        Z, n_settled = runs[False]
        assert abs(disc.residual(Z)[0]) < 1e-14
        assert abs(Z[0] - x_root) <= 2 * A
        assert n_settled < runs[True][1]


def test_a_settled_bracket_end_is_the_root():
    # an end whose test value is within the error of 0: no point is corrected, that end returns
    disc = _Circle()
    Za, Zb = _on_circle(-0.3), _on_circle(0.4)
    counters = Counters()
    test, calls = _counted(_noisy_test(0.4 - 0.5 * A, 0.0))
    Z = locate_on_branch(disc, Za, Zb, test, counters, stol=STOL, settled=lambda Z, g: abs(g) <= A)
    assert np.array_equal(Z, Zb) and counters.factorizations == 2 and len(calls) == 2
