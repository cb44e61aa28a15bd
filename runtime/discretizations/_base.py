"""Contract between a discretization (HBM, collocation, ...) and the continuation engines.

A discretization turns the quadratic system of a model (``_model.py``) into a discrete
algebraic system in one unknown vector ``Z = [Y, lam]`` of length ``m + 1``::

    R(Z) = C + L Z + Q(Z, Z) = 0,        R: R^(m+1) -> R^m

where ``Y`` holds the discrete unknowns (the coefficients / nodal values of every
variable, then the angular frequency ``omega`` for autonomous orbits) and ``lam`` is last.
Because ``lam`` and ``omega`` are unknowns, the products ``lam*L1 u`` and ``omega*D u`` are
quadratic and ``R`` is exactly quadratic: that is what the ANM needs (DESIGN §5.3).

Subclasses must provide (numbered, as in scipy's ``OdeSolver``):

1. ``m`` (number of equations) and ``size = m + 1`` (number of unknowns).
2. ``residual(Z) -> (m,)``.
3. ``jacobian(Z) -> (m, m+1)`` dense ndarray or scipy.sparse matrix: dR/dZ.  A dense
   discretization may set the class attribute ``jacobian_accepts_out = True`` and accept
   ``jacobian(Z, out=A)`` with ``A`` a zero-filled (m, m+1) array to assemble into; the
   engines then assemble it straight into their reusable bordered buffer
   (``_newton.factor_jacobian``).
4. ``quadratic(Z1, Z2) -> (m,)``: the bilinear part ``Q(Z1, Z2)`` (symmetrised or not:
   the ANM only uses sums symmetric in the two arguments).
5. ``series_rhs(terms, origin=None) -> (m,)`` (optional, default ``sum_r Q(Z_r, Z_{p-r})``):
   the right-hand side of order ``p`` of the ANM recurrence given the list ``[Z_1..Z_{p-1}]``
   and the series origin ``Z_0``; non-polynomial point conditions override it with their
   power-series recurrences (``_series.py``), which need ``origin``.
6. ``unpack(Z) -> dict`` with at least ``lam``, ``omega`` (NaN for equilibria) and
   ``samples(n_t)``: a callable giving the original states on ``n_t`` points of one period
   (shape (n, n_t)), used by results, plots and stability.
7. ``phase_fix`` (optional): the linear phase condition is one of the m rows.

HBM layout (DESIGN §5.1): ``Y[i*(2H+1) + k]`` is coefficient k of variable i with
k = 0 the mean, k = 2j-1 the cos(j w t) and k = 2j the sin(j w t) coefficient; for
autonomous models ``Y[-1]`` is ``omega``.
"""
from __future__ import annotations

import numpy as np


class Discretization:
    """Base class; see the module docstring for the contract."""

    m: int

    @property
    def supports_stability(self) -> bool:
        """Whether the analysis can compute Floquet multipliers of its points (periodic orbits)."""
        return False

    @property
    def size(self) -> int:
        return self.m + 1

    def residual(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    def jacobian(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    def quadratic(self, Z1, Z2):  # pragma: no cover - abstract
        raise NotImplementedError

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side ``sum_{r=1}^{p-1} Q(Z_r, Z_{p-r})`` (contract item 5)."""
        p = len(terms) + 1
        out = np.zeros(self.m)
        for r in range(1, p):
            out += self.quadratic(terms[r - 1], terms[p - r - 1])
        return out

    def unpack(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError
