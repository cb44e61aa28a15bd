"""The optional backtracking line search of the one Newton (``engine.correct``,
``line_search``): it lets a guess outside Newton's basin converge, and it is off by default.

The problem is ``atan(x) = 0`` at fixed ``lam``: the root is ``x = 0``, and full Newton
steps ``x -> x - (1 + x^2) atan(x)`` overshoot and grow from any ``|x0| > 1.3917``.
"""
import numpy as np
import pytest

from frictionkit.runtime.discretizations._base import Discretization
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import ConvergenceError


class _Atan(Discretization):
    """``R(x, lam) = atan(x)``: one equation, unknowns ``[x, lam]``."""

    kind = "atan"
    m = 1

    def residual(self, Z):
        return np.array([np.arctan(Z[0])])

    def jacobian(self, Z):
        return np.array([[1.0 / (1.0 + Z[0] ** 2), 0.0]])


LAM_FIXED = np.array([0.0, 1.0])


def test_full_newton_steps_diverge_from_outside_the_basin():
    with pytest.raises(ConvergenceError, match="diverges"):
        correct(_Atan(), [2.0, 0.3], LAM_FIXED, max_iter=30)


def test_line_search_reaches_the_root_from_outside_the_basin():
    Z, its = correct(_Atan(), [2.0, 0.3], LAM_FIXED, max_iter=30, line_search=8, xtol=1e-12)
    assert abs(Z[0]) < 1e-12 and Z[1] == 0.3
    assert its < 30


def test_line_search_gives_up_with_a_clear_error_when_no_step_decreases_the_merit():
    # a merit that is least at the guess: every trial point is rejected
    with pytest.raises(ConvergenceError, match="none of 3 trial steps"):
        correct(_Atan(), [2.0, 0.3], LAM_FIXED, line_search=3, merit=lambda R, Z: float(Z[0] != 2.0))
