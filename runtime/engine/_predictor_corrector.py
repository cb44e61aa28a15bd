"""Pseudo-arclength predictor-corrector continuation (Keller; DESIGN §5.3).

The baseline engine and the only one for discretizations without a quadratic form
(shooting, AFT): it uses only ``residual`` and ``jacobian`` of the contract.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError
from ._newton import correct, tangent_at

__all__ = ["pseudo_arclength"]


def pseudo_arclength(disc, Z0, t0, options, recorder, progress=None, rescale=None):
    """Pseudo-arclength predictor-corrector continuation (Keller).

    Predictor ``Z0 + h t0``; corrector Newton on ``R(Z) = 0, t0 . (Z - Zp) = 0``; step
    length adapted to the number of Newton iterations (target ``options.target_iterations``).
    Points are passed to ``recorder.add(Z, tangent, step_length=h)``; the recorder decides
    when to stop (``recorder.done``: parameter bounds, step budget, returns, stop predicates
    of its own).  The one loop of the runtime: branches (``engine.run``), two-parameter
    curves (``analysis._curves``) and shooting orbits use it.

    Parameters
    ----------
    disc : Discretization
    Z0, t0 : ndarray
        Start point and unit tangent.
    options : NewtonOptions
        Step-length control (``step``, ``min_step``, ``max_step``, ``max_lam_step``,
        ``target_iterations``, ``max_correction``, ``max_angle``) and the Newton tolerance.
    recorder
        ``counters``, ``done``, ``add(Z, t, step_length=h)``, ``note_det_sign(Z, t, sign)``.
    progress : callable, optional
        ``progress(recorder)`` after every accepted point.
    rescale : callable, optional
        ``rescale(Z, t) -> (Z, t)`` after every accepted point: the next step starts from
        the returned point and tangent (e.g. unknowns rescaled to their current sizes, so that
        a step stays a relative change when a parameter falls by decades).
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
            # (plus the corrector's own tolerance: on tiny steps its noise is not a jump)
            if (np.linalg.norm(Zn - Zp) > options.max_correction * abs(h)
                    + 100 * options.newton_xtol * np.linalg.norm(Zn)):
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
        Z, t = (Zn, tn) if rescale is None else rescale(Zn, tn)
        h = float(np.clip(h * (options.target_iterations / max(its, 1)) ** 0.5,
                          options.min_step, options.max_step))
