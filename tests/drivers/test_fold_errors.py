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
