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
from ._accuracy import attach_accuracy

__all__ = ["continuation"]


def continuation(problem: ContinuationProblem, method: str = "anm", options=None, progress=None,
                 provenance: dict | None = None):
    """Follow a branch of solutions of a discrete system, then analyse it.

    Parameters and return value are those of :func:`frictionkit.runtime.engine.run`
    (``problem``, ``method`` "anm" or "newton", ``options``, ``progress``, ``provenance``);
    the returned :class:`~frictionkit.runtime.results.Branch` also carries the analysis the
    options ask for: branch points, and for periodic branches the stability columns.  The
    analysis runs on a branch that ended where it should and on one that ran out of steps
    (its points are solutions; ``success`` is False); a failed or interrupted branch is
    returned as the engine left it.  Periodic branches of the AFT harmonic balance and of the
    collocation of the states also carry the error estimate of every orbit
    (``Branch.accuracy``, ``drivers/_accuracy.py``) as the option ``error_estimates`` says
    (by default the harmonic balances only).
    """
    br = run(problem, method, options, progress=progress, provenance=provenance)
    if br.success or br.status == "max_steps":
        analyse_branch(br)
    wanted = getattr(br.options, "error_estimates", False)
    if wanted is None:               # the default: where they are cheap (harmonic balances)
        wanted = br.discretization is not None and br.discretization.H is not None
    if br.status != "interrupted" and wanted:
        try:
            attach_accuracy(br)
        except KeyboardInterrupt:        # Ctrl-C during the estimates: the branch is kept without them
            br.status, br.success = "interrupted", False
            br.message = "interrupted during the error estimates; the branch is kept without them"
    return br
