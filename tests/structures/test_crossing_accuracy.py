"""Bifurcations of cycles located from the multipliers of a structure (issue 24): the search
ends where the test function is within its estimated error of 0 (``FloquetResult.error_of``:
its change between the refined monodromy's two grids), and, wherever the grids are in the
sixth-order rule's asymptotic range (Richardson's estimate is only an estimate there), the
located point is a root of the same test to twice that error by monodromies on grids four
and eight times finer."""
import numpy as np
import pytest

from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.analysis._stability import _ns_test, _pd_test, _result, refined_monodromy_stability

from ._models import string


@pytest.fixture(scope="module")
def string8_branch():
    """The 8-mode string with the sharp law of examples/bowed_string.py (delta = 2e-3), from its
    highest Hopf point down in bow speed, H = 48: its branch has period doublings and
    Neimark-Sacker points."""
    m = load_model(string(8, delta=2e-3), continuation="Vb", FN=0.02)
    eq = equilibrium_branch(m, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(m, hopf, harmonics=48)
    return disc, periodic_branch(disc, Z, 0.05, 0.6, d)


def _raw_tests(disc, Z, test, grids):
    """The test function of the plain monodromy (no extrapolation) on each of ``grids``."""
    return np.array([test(_result(np.linalg.eigvals(disc.monodromy(Z, intervals=N)), True, "raw", 1e-6))
                     for N in grids])


def test_located_crossings_are_roots_within_the_multipliers_error(string8_branch):
    disc, br = string8_branch
    located = [sp for sp in br.special if sp.kind in ("pd", "ns") and sp.data.get("located")]
    assert {sp.kind for sp in located} == {"pd", "ns"}
    n_t = int(disc.unpack(br.solutions[0])["n_t"])
    asymptotic = 0
    for sp in located:
        test = _pd_test if sp.kind == "pd" else _ns_test
        here = refined_monodromy_stability(disc, sp.solution, n_t, rtol=1e-3)
        error = here.error_of(test)
        assert 0 <= error <= here.multiplier_error < 1e-6
        assert abs(test(here)) <= error                 # where the search stopped
        # the grids n_t, 2 n_t are in the asymptotic range when the plain monodromies' test
        # changes by 2^6 within a factor 4 from (n_t, 2 n_t) to (2 n_t, 4 n_t); this branch's
        # NS point near +-i at Vb = 0.2355 is not (ratio -13: the values on 200, 400, 800 and
        # 1600 steps are 1 + 3.6e-9, 5.7e-11, 3.33e-10, 3.364e-10, and the estimate, 5.7e-11,
        # is 6 times below the extrapolated value's error, 3.4e-10), nor are points where
        # the changes are rounding (ratio 0.2)
        d = np.diff(_raw_tests(disc, sp.solution, test, (n_t, 2 * n_t, 4 * n_t)))
        if not 16 <= d[0] / d[1] <= 256:
            continue
        asymptotic += 1
        finer = refined_monodromy_stability(disc, sp.solution, 4 * n_t, rtol=1e-3)
        assert abs(test(finer)) <= 2 * error
    assert asymptotic >= 4          # (6 of the 9 located points)


def test_branch_results_keep_only_small_monodromies(string8_branch, monkeypatch):
    """The pass keeps a point's monodromy (16 states here) up to KEEP_MONODROMY_STATES; above
    it, only the multipliers, which are the same (the 256-mode string's 110 step ends held
    2 MB each at once before: 367 MB peak, 205 MB without)."""
    from frictionkit.runtime.analysis import _stability
    disc, br = string8_branch
    kept = _stability.branch_stability(br, disc, locate=False, motion=False)
    assert all(r.monodromy is not None and r.monodromy.shape == (16, 16) for r in kept if r is not None)
    monkeypatch.setattr(_stability, "KEEP_MONODROMY_STATES", 8)
    dropped = _stability.branch_stability(br, disc, locate=False, motion=False)
    pairs = [(a, b) for a, b in zip(kept, dropped) if a is not None]
    assert len(pairs) == sum(r is not None for r in dropped) > 10
    for a, b in pairs:
        assert b.monodromy is None and np.array_equal(a.multipliers, b.multipliers)
