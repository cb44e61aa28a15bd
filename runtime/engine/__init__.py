"""Continuation engines: problem and options, the ANM and the pseudo-arclength predictor-corrector,
one Newton corrector, the bordered linear algebra, the recorder, and locating points on a branch.

This layer knows discretizations only through their contract
(:class:`~frictionkit.runtime.discretizations.Discretization`) and never imports the
analysis: the drivers compose an engine run with the analysis passes.
"""
from ._anm import anm
from ._bordered import Counters, bordered_factor, factor_jacobian, row_scales
from ._fold_near import locate_fold_near
from ._locate import locate_folds, locate_on_branch
from ._newton import correct, tangent_at
from ._options import (
    OPTIONS,
    ANMOptions,
    ContinuationOptions,
    ContinuationProblem,
    NewtonOptions,
    default_options,
)
from ._predictor_corrector import pseudo_arclength
from ._recorder import Recorder, amplitude_weights
from ._run import ENGINES, run

__all__ = ["anm", "Counters", "bordered_factor", "factor_jacobian", "row_scales", "locate_fold_near",
           "locate_folds", "locate_on_branch", "correct", "tangent_at", "OPTIONS", "ANMOptions",
           "ContinuationOptions", "ContinuationProblem", "NewtonOptions", "default_options",
           "pseudo_arclength", "Recorder", "amplitude_weights", "ENGINES", "run"]
