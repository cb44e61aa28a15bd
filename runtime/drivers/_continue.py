"""``continuation(problem, method, options)``: an engine run followed by the analysis passes.

Problem, method and options are separate (STYLE §9): a
:class:`~frictionkit.runtime.engine.ContinuationProblem` holds a discretization, a starting
solution and a direction; the method is chosen by name (``"anm"``: asymptotic numerical
method; ``"newton"``: pseudo-arclength predictor-corrector); options are frozen dataclasses
(:class:`~frictionkit.runtime.engine.ANMOptions`,
:class:`~frictionkit.runtime.engine.NewtonOptions`) that check themselves.

The engine (:func:`frictionkit.runtime.engine.run`) follows the branch and locates its folds;
this driver then runs the analysis passes the options ask for
(:func:`frictionkit.runtime.analysis.analyse_branch`: branch points, and for periodic
branches the stability columns).
"""
from __future__ import annotations

from ..analysis import analyse_branch
from ..engine import ContinuationProblem, run

__all__ = ["continuation"]


def continuation(problem: ContinuationProblem, method: str = "anm", options=None, progress=None,
                 provenance: dict | None = None):
    """Follow a branch of solutions of a discrete system, then analyse it.

    Parameters
    ----------
    problem : ContinuationProblem
    method : {"anm", "newton"}
        Asymptotic numerical method (needs ``quadratic``) or pseudo-arclength Newton.
    options : ANMOptions, NewtonOptions or dict, optional
    progress : callable, optional
        Called as ``progress(recorder)`` after every step (``recorder.points[-1][-1]`` is
        the current ``lam``, ``recorder.counters.steps`` the step count).
    provenance : dict, optional
        Extra provenance merged into the branch's.

    Returns
    -------
    Branch
        Always returned, also on failure or Ctrl-C (then ``success`` is False and
        ``status``/``message`` say why).  Folds, branch points and (periodic branches)
        stability columns as the options ask.
    """
    br = run(problem, method, options, progress=progress, provenance=provenance)
    if br.success:
        analyse_branch(br)
    return br
