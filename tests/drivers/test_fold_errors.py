"""The estimated error of a fold's parameter (``drivers/_accuracy.fold_errors``): the fold
located again with twice the harmonics, against the fold's true error on the seed-000 belt
(n = 10, F_N = 5 N, seed 000 §4.2), whose converged fold is 10.2874838639 m/s (the harmonic
balance at H >= 100, tests/engine/test_elimination.py)."""
import pytest

from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._compose import run_continuation

FOLD_CONVERGED = 10.2874838639


@pytest.fixture(scope="module")
def belt():
    return load_model("belt", continuation="Vb", n=10, FN=5)


@pytest.mark.parametrize("H", [10, 20, 40])
def test_the_estimate_is_the_folds_true_error(belt, H):
    """Measured: 0.74, 0.98 and 1.00 times the true error (1.6e-4, 4.3e-5, 7.0e-7)."""
    lines = []
    _, per = run_continuation(belt, 0.05, 12.0, start="hopf", harmonics=H, progress=False, echo=lines.append)
    fold = per.special_points("fold")[0]
    true = abs(fold.param - FOLD_CONVERGED)
    assert fold.data["param_error_harmonics"] == 2 * H
    assert 0.5 * true <= fold.data["param_error"] <= 2 * true
    assert f"fold at {fold.param:.10g} +- {fold.data['param_error']:.1e}" in "\n".join(lines)


def test_no_estimate_is_made_up_for_other_points_or_methods(belt):
    """Hopf points get none (exact eigenvalue crossings); a collocation branch's fold gets none
    (no harmonic count to double)."""
    _, per = run_continuation(belt, 0.05, 12.0, start="hopf", harmonics=20, progress=False, echo=lambda *a: None)
    assert all("param_error" not in s.data for s in per.special if s.kind != "fold")
    _, col = run_continuation(belt, 0.05, 12.0, start="hopf", discretization="collocation", progress=False,
                              echo=lambda *a: None)
    assert col.special_points("fold") and all("param_error" not in s.data for s in col.special)


def test_period_doublings_and_neimark_sacker_points_against_twice_the_harmonics():
    """``drivers/_accuracy.crossing_errors`` on the 8-mode bowed string of
    ``examples/bowed_string.py`` at H = 24, against the same crossings located on the branch
    computed with H = 48 (an independent branch and location): the true error at H = 24 lies
    within the H = 48 point's own estimate of their difference, and the estimate is never
    below half that range's low end nor above 20 times its high end (measured 0.98 to 1.02
    times the difference, and 12 and 14 times at the pair next to the fold of cycles)."""
    import sys
    from pathlib import Path

    from frictionkit.runtime import equilibrium_branch, periodic_branch, periodic_start_from_hopf
    from frictionkit.runtime.drivers._accuracy import crossing_errors
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from examples.bowed_string import model

    m = load_model(model(8), continuation="Vb", FN=0.02)
    eq = equilibrium_branch(m, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    points = {}
    for H in (24, 48):
        disc, Z, d = periodic_start_from_hopf(m, hopf, harmonics=H)
        br = periodic_branch(disc, Z, 0.05, 0.6, d)
        crossing_errors(br)
        points[H] = [s for s in br.special if s.kind in ("pd", "ns")]
    compared = 0
    for s in points[24]:
        ref = min((r for r in points[48] if r.kind == s.kind), key=lambda r: abs(r.param - s.param))
        diff = abs(ref.param - s.param)
        if diff < 1e-9 or diff > 1e-3:                     # the same crossing, not exact at H = 24
            continue
        assert s.data["param_error_harmonics"] == 48
        e48 = ref.data["param_error"]
        assert e48 < diff
        assert 0.5 * (diff - e48) <= s.data["param_error"] <= 20 * (diff + e48), \
            (s.kind, s.param, diff, e48, s.data["param_error"])
        compared += 1
    assert compared >= 6
