"""Locating a fold near a given point by short engine runs on both sides."""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from ._newton import correct, tangent_at
from ._options import ContinuationProblem
from ._run import run

__all__ = ["locate_fold_near"]


def locate_fold_near(disc, Z, span=1e-2, method="anm", max_steps=40, counters=None, options=None):
    """Locate a fold (turning point in ``lam``) next to an approximate fold point ``Z``.

    Typical use: a fold found with H harmonics, resized to more harmonics, or carried over
    to another discretization.  Near a fold a fixed-``lam`` Newton is singular, so ``Z`` is
    corrected on the hyperplane orthogonal to the branch's approximate tangent at ``Z``
    (pseudo-arclength style), then short continuations in both directions within
    ``lam0 +- span |lam0|`` locate the fold by the sign change of the tangent's ``lam``
    component (DESIGN §6).  Works for any discretization the method supports
    (``"newton"`` for shooting, which has no quadratic form).

    Returns
    -------
    SpecialPoint
        The fold nearest to ``Z``.
    """
    Z = np.asarray(Z, dtype=float)
    lam0 = float(Z[-1])
    width = span * max(abs(lam0), 1e-12)
    e = np.zeros(len(Z))
    e[-1] = 1.0
    msgs = []

    def starts():
        # 1) the hyperplane orthogonal to the approximate tangent (well posed at a fold)
        probe = np.random.default_rng(12345).normal(size=len(Z))     # generic, transverse border
        try:
            t = tangent_at(disc, Z, probe / np.linalg.norm(probe), counters)
            yield t, float(t @ Z)
        except ConvergenceError as err:
            msgs.append(str(err))
        # 2) fixed lam slightly inside, on either side (the fold may have moved)
        for off in (1e-4, 1e-3, 1e-2, 3e-2):
            for sgn in (-1.0, 1.0):
                yield e, lam0 + sgn * off * max(abs(lam0), 1e-12)

    for border, value in starts():
        try:
            Zc, _ = correct(disc, Z, border, value, counters=counters, max_iter=30)
            t = tangent_at(disc, Zc, border if border is not e else probe_dir(Zc), counters)
        except ConvergenceError as err:
            msgs.append(str(err))
            continue
        lo, hi = min(lam0, Zc[-1]) - width, max(lam0, Zc[-1]) + width
        folds = []
        for sgn in (1.0, -1.0):
            opts = dict(options or {})
            opts.update(lam_min=lo, lam_max=hi, max_steps=max_steps, stop_on_return=False,
                        stop_on_equilibrium=False)
            opts.setdefault("stability", False)          # only the fold is wanted here
            opts.setdefault("branch_points", False)
            if method == "newton":
                opts.setdefault("step", 0.05 * (hi - lo))
                opts.setdefault("max_step", 0.2 * (hi - lo))
            br = run(ContinuationProblem(disc, Zc, sgn * t), method, opts)
            folds.extend(br.special_points("fold"))
            msgs.append(f"{br.status}: {br.message}")
            if folds:
                return min(folds, key=lambda f: abs(f.param - lam0))
    raise ConvergenceError(f"no fold found next to lam = {lam0:g} ({'; '.join(msgs[-3:])})")


def probe_dir(Z):
    """A fixed generic unit vector (orientation of a first tangent)."""
    v = np.random.default_rng(54321).normal(size=len(Z))
    return v / np.linalg.norm(v)
