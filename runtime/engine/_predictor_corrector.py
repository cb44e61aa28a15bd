"""Pseudo-arclength predictor-corrector continuation (Keller; DESIGN §5.3).

The baseline engine and the only one for discretizations without a quadratic form
(shooting, AFT): it uses only ``residual`` and ``jacobian`` of the contract.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from ._newton import correct, tangent_at

__all__ = ["pseudo_arclength"]


def pseudo_arclength(disc, Z0, t0, options, recorder, progress=None):
    """Pseudo-arclength predictor-corrector continuation (Keller).

    Predictor ``Z0 + h t0``; corrector Newton on ``R(Z) = 0, t0 . (Z - Zp) = 0``; step
    length adapted to the number of Newton iterations (target ``options.target_iterations``).
    Points are passed to ``recorder.add(Z, tangent)``; the recorder decides when to stop.
    """
    c = recorder.counters
    h = options.step
    Z, t = np.array(Z0, float), np.array(t0, float)
    while not recorder.done:
        if np.isfinite(options.max_lam_step) and abs(h * t[-1]) > options.max_lam_step:
            h = options.max_lam_step / abs(t[-1])
        Zp = Z + h * t
        try:
            Zn, its = correct(disc, Zp, t, float(t @ Zp), counters=c, xtol=options.newton_xtol,
                              max_iter=options.max_newton_iterations)
            tn, det_sign = tangent_at(disc, Zn, t, c, with_det_sign=True)
            # reject steps whose corrector went far from the predictor or whose tangent
            # turned sharply: both signal a jump to another branch
            if np.linalg.norm(Zn - Zp) > options.max_correction * abs(h):
                raise ConvergenceError(f"corrector moved {np.linalg.norm(Zn - Zp):.3g} from the "
                                       f"predictor (step {abs(h):.3g})")
            if abs(tn @ t) < np.cos(np.radians(options.max_angle)):
                raise ConvergenceError("the tangent turned by more than max_angle in one step")
        except ConvergenceError as err:
            if abs(h) / 2 < options.min_step:
                raise ConvergenceError(f"step length fell below min_step = {options.min_step:g} at "
                                       f"lam = {Z[-1]:.10g}: {err}") from err
            h /= 2
            continue
        c.steps += 1
        if tn @ t < 0:      # the corrector jumped over a turning point the wrong way
            tn, det_sign = -tn, -det_sign
        recorder.add(Zn, tn, step_length=h)
        recorder.note_det_sign(Zn, tn, det_sign)
        if progress is not None:
            progress(recorder)
        Z, t = Zn, tn
        h = float(np.clip(h * (options.target_iterations / max(its, 1)) ** 0.5,
                          options.min_step, options.max_step))
