"""The step end where a periodic branch reaches an equilibrium asks for no new discretization.

There the orbit has vanished and its relative error estimate is about 1.0 (all of it): the
adaptive mesh once grew the belt's 100 x 4 collocation to 400 intervals at that last step, under
one BLAS kernel's rounding (``tests/faults/test_blas_kernels.py`` reruns that case under every
kernel the CPU has).  Here, whatever the CPU: the same estimate at an ordinary step end asks for
a change, at the equilibrium it does not and is kept as NaN."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from frictionkit.runtime.drivers._accuracy import _MeshSegment, _Segment


def _recorder(status):
    n = 6
    return SimpleNamespace(points=[np.zeros(3) for _ in range(n)], tangents=[np.zeros(3) for _ in range(n)],
                           step_ends=list(range(n)), det_signs={}, special=[], fold_guesses=[],
                           status=status, done=status == "equilibrium", message="")


@pytest.mark.parametrize("check, estimate", [
    (_MeshSegment(None, 1e-6, may_grow=True), {"err_mesh": 1.0}),
    (_Segment(None, 1e-6, may_grow=True, may_shrink=False), {"err_trunc": 0.6, "err_alias": 0.4}),
])
def test_an_estimate_above_the_tolerance_changes_the_discretization_except_at_the_equilibrium(check, estimate):
    check._one = lambda Z, t: dict(estimate)
    check.decision, check.cols = None, {}
    running = _recorder("running")
    check(running)
    assert check.decision is not None and running.status == "max_steps"     # the step is refused
    check.decision, check.cols = None, {}
    at_hopf = _recorder("equilibrium")
    check(at_hopf)
    assert check.decision is None and at_hopf.status == "equilibrium" and len(at_hopf.points) == 6
    assert all(math.isnan(v) for k, v in check.cols[5].items() if k.startswith("err"))
