"""Problem and options of a continuation run (STYLE §9: problem / method / options / result).

A :class:`ContinuationProblem` holds a discretization, a starting solution and a direction;
the method is chosen by name (``"anm"`` or ``"newton"``); options are frozen dataclasses
(:class:`ANMOptions`, :class:`NewtonOptions`) that check their own consistency.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import math
import warnings

import numpy as np

from ..errors import InputError

__all__ = ["ContinuationOptions", "ANMOptions", "NewtonOptions", "ContinuationProblem", "OPTIONS",
           "default_options"]


@dataclass(frozen=True)
class ContinuationOptions:
    """Options shared by every continuation method.

    Parameters
    ----------
    lam_min, lam_max : float
        Parameter range; the run stops on its bounds.
    max_steps : int
        Step budget.
    max_step : float
        Largest step (in the Euclidean norm of Z).
    max_lam_step : float
        Largest change of ``lam`` in one step (e.g. to sample eigenvalues densely enough).
    stop_on_return : bool
        Stop when the branch comes back to its starting point (closed branch).
    stop_on_equilibrium : bool
        Stop a periodic branch where its amplitude vanishes (reaching a Hopf point).
    locate_folds : bool
        Locate folds (turning points in ``lam``) and record them as special points.
    branch_points : bool
        Detect simple branch points by the sign of ``det [J; t^T]`` along the branch, locate
        them and record them as ``"bp"`` special points (``_switching.py``; one extra LU
        factorization per branch point, counted in ``analysis_factorizations``).
    stability : bool
        Periodic branches: Floquet multipliers of every orbit, the ``stable``, multiplier
        and motion columns, and period doubling / Neimark-Sacker / branch points from the
        multiplier crossings (``_stability.branch_stability``).  Ignored for equilibria.
    multiplier_stride : int
        Periodic branches with ``stability``: the multipliers are computed first at every
        ``multiplier_stride``-th step end and next to every special point, then bisected down
        to the step wherever the stability changes or a multiplier crosses the unit circle
        (``_stability.branch_stability``'s ``stride``); the other points inherit the
        ``stable`` flag of their neighbours and have NaN multiplier columns.  1 (the default)
        computes the multipliers at every step end (as AUTO's ISP = 2 does at every point):
        a larger stride misses two crossings that cancel within it (issue 26: the pair of
        period doublings at vb = 0.040259, 0.043782 of the LuGre belt at stride 8).
    multiplier_rtol : float
        Periodic branches whose monodromy is a quadrature on a time grid (harmonic balances of
        the states): the Magnus steps are chosen so that each one's estimated error, relative
        to its propagator, is below ``multiplier_rtol`` (``_floquet.adaptive_magnus_monodromy``;
        the default 1e-3 gives the multipliers of the LuGre belt of issue 26 at vb = 1 to
        6e-6 against shooting, the discretization's own 128 steps 3.7e-3); 0 keeps the
        discretization's own grid.
    residual_tolerance : float
        Relative residual ``max_i |R_i| / (|J| |Z|)_i`` (each equation against the size of
        its terms) below which a point needs no Newton correction.
    newton_xtol : float
        Newton stops when the update is below ``newton_xtol * |Z|``.
    max_newton_iterations : int
    on_invalid : {"stop", "warn"}
        What a point violating a validity condition of the recast does (a sqrt auxiliary on
        the wrong root, a denominator through zero: :mod:`._validity`): ``"stop"`` (default)
        ends the branch before it with ``success = False``, ``status = "invalid"``; ``"warn"``
        keeps it and warns.  Gibbs dips of a harmonic balance's truncated auxiliaries down to
        ``HBM_DIP`` of their scale are always warnings only.
    error_estimates : bool or None
        Periodic branches of the AFT harmonic balance or the collocation of the states: the
        error estimate of every orbit (``err_trunc``, ``err_alias``, ``err_decay``,
        ``decay_rate``; ``err_mesh``), ``discretizations/_error.py``, in ``Branch.accuracy``.
        None (default): on for the harmonic balance (one LU at 2H per step end), off for
        collocation, whose ``err_mesh`` is a Newton step on the twice-finer mesh at every step
        end (5.3x the CPU of the seed-000 belt's 100 x 4 branch: 26.9 s against 5.1 s); True
        asks for it there too.
    error_tolerance : float
        Relative error of the orbit that the adaptive harmonic count meets when no harmonic
        count is given (``drivers/_adaptive.py``); also what the summary compares with.
    """

    lam_min: float = -math.inf
    lam_max: float = math.inf
    max_steps: int = 1000
    max_step: float = math.inf
    max_lam_step: float = math.inf
    stop_on_return: bool = True
    stop_on_equilibrium: bool = True
    locate_folds: bool = True
    branch_points: bool = True
    stability: bool = True
    multiplier_stride: int = 1
    multiplier_rtol: float = 1e-3
    residual_tolerance: float = 1e-10
    newton_xtol: float = 1e-11
    max_newton_iterations: int = 12
    on_invalid: str = "stop"
    # accuracy (issue 26 items 1-2)
    error_estimates: bool | None = None
    error_tolerance: float = 1e-6

    def __post_init__(self):
        if not self.lam_min < self.lam_max:
            raise InputError(f"lam_min = {self.lam_min} must be below lam_max = {self.lam_max}")
        if self.max_steps < 1:
            raise InputError(f"max_steps = {self.max_steps} must be >= 1")
        if not (self.max_step > 0 and self.max_lam_step > 0):
            raise InputError(f"max_step = {self.max_step} and max_lam_step = {self.max_lam_step} must be > 0")
        if int(self.multiplier_stride) != self.multiplier_stride or self.multiplier_stride < 1:
            raise InputError(f"multiplier_stride = {self.multiplier_stride} must be an integer >= 1 "
                             "(1: the multipliers at every step end)")
        if not (self.multiplier_rtol >= 0 and math.isfinite(self.multiplier_rtol)):
            raise InputError(f"multiplier_rtol = {self.multiplier_rtol} must be a finite number >= 0 "
                             "(0: the monodromy on the discretization's own time grid)")
        if not self.residual_tolerance > 0 or not self.newton_xtol > 0:
            raise InputError("residual_tolerance and newton_xtol must be > 0")
        if self.on_invalid not in ("stop", "warn"):
            raise InputError(f"on_invalid = {self.on_invalid!r}: choose 'stop' or 'warn'")
        if not 0 < self.error_tolerance < 1:
            raise InputError(f"error_tolerance = {self.error_tolerance}: a relative error between 0 and 1, "
                             "e.g. 1e-6")

    def as_dict(self):
        return {k: (v if not (isinstance(v, float) and math.isinf(v)) else str(v))
                for k, v in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class ANMOptions(ContinuationOptions):
    """Options of the asymptotic numerical method.

    Parameters
    ----------
    order : int
        Truncation order P of the power series (default 20; typical 15-30).
    validity : float
        ``delta`` of the validity range ``a_max = (delta |Z1|/|Z_P|)^(1/(P-1))``.
    pade : bool
        Use Padé approximants to extend the range of each step.
    pade_extension : float
        Initial factor on ``a_max`` tried with Padé (shrunk until the residual holds).
    correct : bool
        Correct each step's end point when its residual exceeds ``residual_tolerance``:
        first by chord iterations with the step's own factorization (no new LU), then, if
        they do not converge, by chord iterations on one factorization at the end point, then
        by Newton.
    chord_iterations : int
        At most this many chord iterations, with each of the two factorizations, before the
        Newton correction takes over (0: Newton only).  Each costs one residual and one
        triangular solve; they stop as soon as the residual meets the tolerance, or when it
        fails to decrease.
    points_per_step : int
        Branch points stored per step: the end point plus ``points_per_step - 1`` equally
        spaced evaluations of the same series (smooth plots at no extra factorization).
    """

    order: int = 20
    validity: float = 1e-8
    pade: bool = False
    pade_extension: float = 2.0
    correct: bool = True
    chord_iterations: int = 6
    points_per_step: int = 1

    def __post_init__(self):
        super().__post_init__()
        if not 2 <= self.order <= 60:
            raise InputError(f"order = {self.order}: the ANM series order must be in [2, 60]")
        if not 0 < self.validity < 1:
            raise InputError(f"validity = {self.validity} must be in (0, 1) (typical 1e-6 .. 1e-10)")
        if self.chord_iterations < 0:
            raise InputError(f"chord_iterations = {self.chord_iterations} must be >= 0")
        if self.points_per_step < 1:
            raise InputError(f"points_per_step = {self.points_per_step} must be >= 1")
        if self.pade and not self.pade_extension >= 1:
            raise InputError("pade_extension must be >= 1")


@dataclass(frozen=True)
class NewtonOptions(ContinuationOptions):
    """Options of pseudo-arclength predictor-corrector continuation.

    Parameters
    ----------
    step : float
        Initial step length (Euclidean norm of Z).
    min_step : float
        Give up below this step length.
    target_iterations : int
        Newton iterations per step the step-length control aims at.
    max_correction : float
        Reject a step whose corrector moves farther than this fraction of the step
        from the predictor (a jump to another branch); the step is halved.
    max_angle : float
        Reject a step whose tangent turns by more than this many degrees.
    """

    step: float = 0.05
    min_step: float = 1e-9
    target_iterations: int = 3
    max_correction: float = 0.3
    max_angle: float = 15.0

    def __post_init__(self):
        super().__post_init__()
        if not 0 < self.min_step <= self.step:
            raise InputError(f"need 0 < min_step <= step (got min_step={self.min_step}, step={self.step})")
        if self.step > self.max_step:
            raise InputError(f"step = {self.step} exceeds max_step = {self.max_step}")


@dataclass
class ContinuationProblem:
    """A discretization, a starting solution ``Z0`` and a direction.

    Parameters
    ----------
    discretization : Discretization
    start : ndarray (size,)
        A solution (``R(start) ~ 0``); corrected before the run, at fixed ``lam`` when
        ``direction`` is a number, on the hyperplane orthogonal to ``direction`` otherwise.
    direction : float or ndarray
        ``+1``/``-1``: increase/decrease ``lam``; or a vector the first tangent points along.
    """

    discretization: object
    start: np.ndarray
    direction: object = 1.0


OPTIONS = {"anm": ANMOptions, "newton": NewtonOptions}


def default_options(method, options, lam_min, lam_max):
    if method not in OPTIONS:
        raise InputError(f"unknown continuation method {method!r}; choose one of {', '.join(OPTIONS)}")
    cls = OPTIONS[method]
    if options is None:
        return cls(lam_min=lam_min, lam_max=lam_max)
    if isinstance(options, dict):
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(options) - fields
        if unknown:
            other = [k for k in unknown if any(k in {f.name for f in dataclasses.fields(c)}
                                               for c in OPTIONS.values())]
            really = unknown - set(other)
            if really:
                raise InputError(f"unknown continuation option(s) {sorted(really)} for method {method!r}")
            warnings.warn(f"option(s) {sorted(other)} are ignored by method {method!r}", stacklevel=3)
        kw = {k: v for k, v in options.items() if k in fields}
        kw.setdefault("lam_min", lam_min)
        kw.setdefault("lam_max", lam_max)
        return cls(**kw)
    if not isinstance(options, cls):
        raise InputError(f"method {method!r} takes {cls.__name__}, not {type(options).__name__}")
    return options
