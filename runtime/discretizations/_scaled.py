"""A discrete system in scaled unknowns (for pseudo-arclength steps of unknowns of mixed sizes)."""
from __future__ import annotations

import numpy as np

from ._base import Discretization

__all__ = ["ScaledDiscretization"]


class ScaledDiscretization(Discretization):
    """``Z = scale * W``: the same discrete system in scaled unknowns ``W``.

    Pseudo-arclength steps, chords and tangents use the Euclidean norm of the unknowns;
    when their sizes differ by orders of magnitude (shooting: a state of 1e-3 m, a
    period of 5e-3 s and a belt speed of 10 m/s) scaling them to O(1) keeps the
    hyperplanes of the corrector transverse to the branch.  ``lam`` stays last.
    """

    kind = "scaled"

    def __init__(self, disc, scale):
        self.disc = disc
        self.scale = np.asarray(scale, dtype=float)
        self.m = disc.m
        self.model = disc.model
        self.noise_floor = disc.noise_floor       # relative updates: unchanged by the scaling

    def residual(self, W):
        return self.disc.residual(self.scale * np.asarray(W))

    def jacobian(self, W):
        return np.asarray(self.disc.jacobian(self.scale * np.asarray(W))) * self.scale[None, :]

    def to_scaled(self, Z):
        return np.asarray(Z, dtype=float) / self.scale

    def from_scaled(self, W):
        return np.asarray(W, dtype=float) * self.scale
