"""Validity of the recast along a branch (DESIGN §6): which points are on the wrong root.

The recast replaces ``sqrt(g(x))`` by an auxiliary ``R`` with ``R^2 = g(x)`` and a denominator
``1/d(x)`` by ``a`` with ``a d = 1``; both relations also hold on the *other* root (``R < 0``)
or across a pole, where the solution is not one of the original ODE.  Every point is checked
on a fine time grid of all N variables:

* ``positive`` (a sqrt auxiliary): violated where a sample is <= 0 (or not finite);
* ``nonzero`` (a denominator): violated where a sample is zero or the samples change sign
  within the period (a sign change between two samples counts: it crossed zero between them).

The measure of a condition at a point is ``relative = min_t(s u(t)) / max_t |u(t)|`` with
``s = +1`` for ``positive`` and ``s`` the sign of the largest sample for ``nonzero``: the
condition holds iff ``relative > 0``.

Where the auxiliaries are exact functions of the states — equilibria, AFT and shooting (the
auxiliaries rebuilt from the states by ``model.aux``, principal roots), collocation (exact at
its nodes) — any violation is a wrong-root solution: *fatal*.  A harmonic balance (H >= 1)
carries each auxiliary as a truncated Fourier series, whose Gibbs undershoot near a kink of
``sqrt(v^2 + eps)`` dips slightly below zero although the solution is the right one (seed 000,
DESIGN §6: "warn — not fail").  There the rule is: a dip down to ``-HBM_DIP`` (10 %) of the
auxiliary's scale (``relative >= -HBM_DIP``) is a warning; deeper is fatal.  Measured on the
belt (seed 000, n = 10, FN = 5, the branch from the Hopf point to Vb = 30), the deepest dip
of ``R = sqrt(V_r^2 + eps/n^2)`` is -0.17 with H = 1 (``R ~ -|V_r|`` over a part of the
period: the other root), -0.017 with H = 5, -0.0065 with H = 9 and -0.00026 with H = 40
(a Gibbs undershoot shrinking like 1/H).
"""
from __future__ import annotations

import numpy as np

from ..results._columns import VALIDITY_SAMPLES as N_SAMPLES, validity_measures, variable_samples

__all__ = ["HBM_DIP", "N_SAMPLES", "PointValidity", "check_point", "check_points"]

#: deepest dip (relative to max |u|) of a truncated-Fourier auxiliary that is only a warning
HBM_DIP = 0.1


class PointValidity:
    """Validity of one point: ``relative[var]``, ``worst[var]`` (``min_t(s u(t))``, unscaled:
    continuous along the branch) and the violated ``(var, relative, fatal)``."""

    def __init__(self, relative, worst, violations):
        self.relative, self.worst, self.violations = relative, worst, violations

    @property
    def fatal(self):
        return [v for v in self.violations if v[2]]


def check_points(disc, solutions) -> list:
    """Check the validity conditions of the recast at the solutions (P, size) (see the module
    doc): one :class:`PointValidity` per point, the measures of all points at once
    (:func:`~frictionkit.runtime.results._columns.validity_measures`)."""
    model = disc.model
    sols = np.asarray(solutions, dtype=float).reshape(-1, disc.size)
    if not len(sols):
        return []
    u, truncated = variable_samples(disc, sols)
    measures = validity_measures(model.validity, model.variables, u)
    out = []
    for i in range(len(sols)):
        relative = {var: float(rel[i]) for var, (rel, _) in measures.items()}
        worst = {var: float(w[i]) for var, (_, w) in measures.items()}
        violations = [(var, rel, not (truncated and rel >= -HBM_DIP)) for var, rel in relative.items()
                      if not rel > 0]
        out.append(PointValidity(relative, worst, violations))
    return out


def check_point(disc, Z) -> PointValidity:
    """Check the validity conditions of the recast at solution ``Z`` (:func:`check_points`)."""
    return check_points(disc, [Z])[0]
