"""``continuation(problem, method, options)``: the entry point of branch following.

Problem, method and options are separate (STYLE §9): a :class:`ContinuationProblem` holds a
discretization (``_discretization.py``), a starting solution and a direction; the method is
chosen by name (``"anm"``: asymptotic numerical method, ``_anm.py``; ``"newton"``:
pseudo-arclength predictor-corrector, ``_newton.py``); options are frozen dataclasses
(:class:`ANMOptions`, :class:`NewtonOptions`) that check themselves.

The run stops when the parameter leaves ``[lam_min, lam_max]`` (the last point is placed
exactly on the bound), after ``max_steps`` steps, when the branch returns to its start, or
when a periodic branch shrinks to an equilibrium (its first-harmonic amplitude crosses zero:
a Hopf point).  A failure or Ctrl-C keeps every point computed so far: the returned
:class:`~frictionkit.runtime._branch.Branch` has ``success = False`` and a ``status`` and
``message`` naming the cause.  Folds are located afterwards by the sign change of the
tangent's ``lam`` component and refined by a root-find along the branch (DESIGN §6).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy
import scipy.optimize

from ._newton import Counters, _Workspace, correct, tangent_at, pseudo_arclength
from ._anm import anm
from .errors import ConvergenceError, InputError

__all__ = ["ContinuationOptions", "ANMOptions", "NewtonOptions", "ContinuationProblem",
           "continuation", "METHODS", "locate_on_branch", "locate_fold_near", "ScaledDiscretization"]


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
    residual_tolerance : float
        Relative residual ``max_i |R_i| / (|J| |Z|)_i`` (each equation against the size of
        its terms) below which a point needs no Newton correction.
    newton_xtol : float
        Newton stops when the update is below ``newton_xtol * |Z|``.
    max_newton_iterations : int
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
    residual_tolerance: float = 1e-10
    newton_xtol: float = 1e-11
    max_newton_iterations: int = 12

    def __post_init__(self):
        if not self.lam_min < self.lam_max:
            raise InputError(f"lam_min = {self.lam_min} must be below lam_max = {self.lam_max}")
        if self.max_steps < 1:
            raise InputError(f"max_steps = {self.max_steps} must be >= 1")
        if not (self.max_step > 0 and self.max_lam_step > 0):
            raise InputError(f"max_step = {self.max_step} and max_lam_step = {self.max_lam_step} must be > 0")
        if not self.residual_tolerance > 0 or not self.newton_xtol > 0:
            raise InputError("residual_tolerance and newton_xtol must be > 0")

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
        Newton-correct each step's end point when its residual exceeds
        ``residual_tolerance``.
    points_per_step : int
        Branch points stored per step: the end point plus ``points_per_step - 1`` equally
        spaced evaluations of the same series (smooth plots at no extra factorization).
    """

    order: int = 20
    validity: float = 1e-8
    pade: bool = False
    pade_extension: float = 2.0
    correct: bool = True
    points_per_step: int = 1

    def __post_init__(self):
        super().__post_init__()
        if not 2 <= self.order <= 60:
            raise InputError(f"order = {self.order}: the ANM series order must be in [2, 60]")
        if not 0 < self.validity < 1:
            raise InputError(f"validity = {self.validity} must be in (0, 1) (typical 1e-6 .. 1e-10)")
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


METHODS = {"anm": (anm, ANMOptions), "newton": (pseudo_arclength, NewtonOptions)}


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


def amplitude_weights(disc):
    """Weights ``w`` of a signed amplitude ``w . Z`` of a periodic orbit, or None.

    Its sign flips where a periodic branch passes through a Hopf point into the
    half-period-shifted copy of itself (the recorder stops there, or records the Hopf
    point).  A discretization may define ``amplitude_weights`` (collocation: the phase
    state at ``tau = 0`` minus its mean); harmonic balances use the cos(theta) coefficient
    of the phase variable, whose sin(theta) coefficient is fixed to zero.
    """
    w = getattr(disc, "amplitude_weights", None)
    if w is not None:
        return np.asarray(w, dtype=float)
    k = getattr(disc, "phase_index", None)
    if k is None:
        return None
    w = np.zeros(disc.size)
    w[k - 1] = 1.0
    return w


class _Recorder:
    """Collects the points of a run and decides when to stop (shared by all engines)."""

    def __init__(self, disc, options, Z0, t0, counters):
        self.disc, self.options, self.counters = disc, options, counters
        self.points, self.tangents = [np.array(Z0)], [np.array(t0)]
        self.step_ends = [0]          # indices of the start and of the (corrected) step ends
        self.det_signs = {}           # step end index -> sign of det [J; t^T], from the engines' LUs
        self.done = False
        self.status, self.message = "running", ""
        self.special = []
        self._stop_reason = None
        # a signed amplitude of the orbit, linear in Z, that changes sign where a periodic
        # branch passes through a Hopf point into its half-period-shifted copy
        self.amp_w = amplitude_weights(disc)
        self._start = np.array(Z0)
        self._travel = 0.0

    # -- stop criteria applied to the ANM series before the step's end is chosen --------
    def _crossings(self, values, a_grid):
        s = np.sign(values)
        idx = np.flatnonzero(s[1:] * s[:-1] < 0)
        return idx

    def clip(self, series, a_max):
        """End of the ANM step: ``a_max`` or the first bound / amplitude-zero crossing."""
        o = self.options
        a_grid = np.linspace(0.0, a_max, 65)
        idx = [len(series.Z0) - 1]
        lam = series.components(a_grid, idx)[:, 0]
        if np.isfinite(o.max_lam_step) and np.max(np.abs(lam - lam[0])) > o.max_lam_step:
            # shorten the step so that lam moves by at most max_lam_step
            i = int(np.argmax(np.abs(lam - lam[0]) > o.max_lam_step))
            a_max = a_grid[max(i - 1, 1)]
            a_grid = np.linspace(0.0, a_max, 65)
            lam = series.components(a_grid, idx)[:, 0]
        events = []
        for bound, name in ((o.lam_min, "range"), (o.lam_max, "range")):
            if np.isfinite(bound):
                idx = self._crossings(lam - bound, a_grid)
                if len(idx):
                    events.append((idx[0], lambda a, b=bound: series(a)[-1] - b, name, bound))
        self._hopf_on_series = None
        if self.amp_w is not None and len(self.points) > 1:
            amp = series.linear(a_grid, self.amp_w)
            idx = self._crossings(amp, a_grid)
            if len(idx):
                fun = lambda a: float(series(a) @ self.amp_w)   # noqa: E731
                if o.stop_on_equilibrium:
                    events.append((idx[0], fun, "equilibrium", None))
                else:
                    a_h = scipy.optimize.brentq(fun, a_grid[idx[0]], a_grid[idx[0] + 1], xtol=1e-15 * a_max)
                    self._hopf_on_series = (a_h, series(a_h))
        if not events:
            return a_max
        i, fun, name, bound = min(events, key=lambda e: e[0])
        a_star = scipy.optimize.brentq(fun, a_grid[i], a_grid[i + 1], xtol=1e-15 * a_max, rtol=1e-15)
        self._stop_reason = (name, bound)
        return a_star

    @property
    def stop_reason(self):
        return None if self._stop_reason is None else self._stop_reason[0]

    def unclip(self):
        """Forget a stop event found by :meth:`clip` (the engine shortened its step)."""
        self._stop_reason = None

    def refine_tangent(self, Z, t_exact):
        """The ANM's next step found the exact unit tangent at ``Z`` (its ``Z1``, the null vector
        of ``J(Z)``): replace the series' end tangent recorded there (which, after a Newton
        correction of the end point, is slightly off; at a fold its ``lam`` component can then
        have the wrong sign)."""
        i = len(self.points) - 1
        if np.array_equal(self.points[i], Z) and float(t_exact @ self.tangents[i]) > 0:
            self.tangents[i] = np.array(t_exact)

    def note_det_sign(self, Z, t, sign):
        """The engine factorized ``[J(Z); t^T]``: keep the sign of its determinant when ``(Z, t)``
        is the last recorded step end (the branch-point test then needs no LU of its own)."""
        i = len(self.points) - 1
        if (self.step_ends and self.step_ends[-1] == i and np.array_equal(self.points[i], Z)
                and np.array_equal(self.tangents[i], t)):
            self.det_signs[i] = int(sign)

    def _add_hopf(self, sp):
        """Record a passage through a Hopf point, once: next to it the amplitude is at the
        rounding level of the solution (1e-10 of it) and may change sign a few times within
        a few points at the same ``lam``; those are the same Hopf point."""
        for old in self.special[::-1]:
            if old.kind == "hopf":
                if (sp.index - old.index <= 10
                        and abs(sp.param - old.param) <= 1e-8 * max(abs(old.param), 1e-300)):
                    return
                break
        self.special.append(sp)

    def add_intermediate(self, Z, t):
        """A point inside a step (ANM ``points_per_step``): stored, no stop criterion checked."""
        Zprev = self.points[-1]
        if self.amp_w is not None and not self.options.stop_on_equilibrium and self.amp(Zprev) * self.amp(Z) < 0:
            hs = getattr(self, "_hopf_on_series", None)
            if hs is not None:
                from ._branch import SpecialPoint
                om = hs[1][self.disc.omega_index]
                self._add_hopf(SpecialPoint("hopf", float(hs[1][-1]), float(om), len(self.points) - 1, hs[1]))
                self._hopf_on_series = None
        self.points.append(np.array(Z))
        self.tangents.append(np.array(t))

    # -- every engine calls add() for every accepted point -------------------------------
    def add(self, Z, t, step_length=None, series=None):
        o = self.options
        Zprev = self.points[-1]
        # engines without a series (Newton): place the last point on a crossed event
        if series is None:
            Z, t = self._newton_events(Zprev, Z, t)
        name_bound = self._stop_reason
        if name_bound is not None and name_bound[0] == "range" and series is not None:
            # ANM end point exactly on the bound: correct with lam fixed
            Z = self._on_bound(Z, name_bound[1])
        if (self.amp_w is not None and not o.stop_on_equilibrium and name_bound is None and len(self.points) > 1
                and self.amp(Zprev) * self.amp(Z) < 0):
            # passing through a Hopf point (zero amplitude) into the half-period-shifted copy
            hs = getattr(self, "_hopf_on_series", None)
            Zh = hs[1] if hs is not None else self._hermite_zero(Zprev, self.tangents[-1], Z, t, self.amp_w)
            self._hopf_on_series = None
            om = Zh[self.disc.omega_index] if getattr(self.disc, "omega_index", None) is not None else np.nan
            from ._branch import SpecialPoint
            self._add_hopf(SpecialPoint("hopf", float(Zh[-1]), float(om), len(self.points) - 1, Zh))
        self.points.append(np.array(Z))
        self.tangents.append(np.array(t))
        self.step_ends.append(len(self.points) - 1)
        d = np.linalg.norm(Z - Zprev)
        self._travel += d
        if name_bound is not None:
            name, bound = name_bound
            self.done = True
            if name == "range":
                self.status, self.message = "range", f"reached the end of the parameter range at lam = {bound:g}"
            else:
                self.status = "equilibrium"
                self.message = (f"the periodic branch reached an equilibrium (zero amplitude, a Hopf "
                                f"point) at lam = {Z[-1]:.10g}")
                om = Z[self.disc.omega_index] if getattr(self.disc, "omega_index", None) is not None else np.nan
                from ._branch import SpecialPoint
                self.special.append(SpecialPoint("hopf", float(Z[-1]), float(om), len(self.points) - 1,
                                                 np.array(Z)))
            return
        if o.stop_on_return and len(self.points) > 3 and d > 0:
            # does the segment Zprev -> Z pass next to the start point?
            s = (self._start - Zprev) @ (Z - Zprev) / d**2
            gap = np.linalg.norm(Zprev + np.clip(s, 0, 1) * (Z - Zprev) - self._start)
            if (0 <= s <= 1 and gap < 0.5 * d and self._travel > 10 * d
                    and t @ self.tangents[0] > 0.9):
                self.done = True
                self.status = "closed"
                self.message = "the branch returned to its starting point (closed branch)"
                return
        if self.counters.steps >= o.max_steps:
            self.done = True
            self.status = "max_steps"
            self.message = f"step budget exhausted (max_steps = {o.max_steps})"

    def _on_bound(self, Z, bound):
        e = np.zeros(len(Z))
        e[-1] = 1.0
        Z, _ = correct(self.disc, Z, e, bound, counters=self.counters, xtol=self.options.newton_xtol,
                       max_iter=self.options.max_newton_iterations)
        return Z

    def amp(self, Z) -> float:
        """The signed amplitude of a point (``amplitude_weights``)."""
        return float(np.asarray(Z) @ self.amp_w)

    @staticmethod
    def _hermite_zero(Zprev, tprev, Z, t, w):
        """Zero of the functional ``w . Z`` on the cubic Hermite interpolant between two points."""
        hc = np.linalg.norm(Z - Zprev)

        def herm(s):
            h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
            h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
            return h00 * Zprev + h10 * hc * tprev + h01 * Z + h11 * hc * t
        s = scipy.optimize.brentq(lambda s: float(herm(s) @ w), 0.0, 1.0, xtol=1e-14)
        return herm(s)

    def _newton_events(self, Zprev, Z, t):
        o = self.options
        for bound in (o.lam_min, o.lam_max):
            if np.isfinite(bound) and (Zprev[-1] - bound) * (Z[-1] - bound) < 0:
                s = (bound - Zprev[-1]) / (Z[-1] - Zprev[-1])
                Zg = Zprev + s * (Z - Zprev)
                Zb = self._on_bound(Zg, bound)
                self._stop_reason = ("range", bound)
                return Zb, tangent_at(self.disc, Zb, t, self.counters)
        if (o.stop_on_equilibrium and self.amp_w is not None and len(self.points) > 1
                and self.amp(Zprev) * self.amp(Z) < 0):
            # cubic Hermite interpolation with the end tangents (the point itself is nearly
            # singular: the periodic branch meets the family of equilibria there)
            self._stop_reason = ("equilibrium", None)
            return self._hermite_zero(Zprev, self.tangents[-1], Z, t, self.amp_w), t
        return Z, t


def _default_options(method, options, lam_min, lam_max):
    if method not in METHODS:
        raise InputError(f"unknown continuation method {method!r}; choose one of {', '.join(METHODS)}")
    cls = METHODS[method][1]
    if options is None:
        return cls(lam_min=lam_min, lam_max=lam_max)
    if isinstance(options, dict):
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(options) - fields
        if unknown:
            other = [k for k in unknown if any(k in {f.name for f in dataclasses.fields(c)}
                                               for _, c in METHODS.values())]
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


def continuation(problem: ContinuationProblem, method: str = "anm", options=None, progress=None,
                 provenance: dict | None = None):
    """Follow a branch of solutions of a discrete system.

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
        ``status``/``message`` say why).  Folds are recorded as special points.
    """
    disc = problem.discretization
    opts = _default_options(method, options, -math.inf, math.inf)
    engine = METHODS[method][0]
    counters = Counters()
    r0, j0 = getattr(disc, "n_residuals", 0), getattr(disc, "n_jacobians", 0)
    Z0 = np.asarray(problem.start, dtype=float)
    if Z0.shape != (disc.size,):
        raise InputError(f"start vector has shape {Z0.shape}, the discretization needs ({disc.size},)")
    lam0 = Z0[-1]
    if not opts.lam_min <= lam0 <= opts.lam_max:
        raise InputError(f"the start value lam = {lam0:g} is outside the range "
                         f"[{opts.lam_min:g}, {opts.lam_max:g}]")
    e = np.zeros(disc.size)
    e[-1] = 1.0
    d = problem.direction
    if np.ndim(d) == 0:
        guess = e * (1.0 if float(d) >= 0 else -1.0)
    else:
        guess = np.asarray(d, dtype=float)
    # one reusable bordered buffer for the run, its engines and its analysis (freed at the end)
    with _Workspace.scope(disc):
        rec = None
        status, message, success = "failed", "", False
        try:
            # a scalar direction: correct at fixed lam; a vector: on the hyperplane orthogonal
            # to it (well posed at folds and next to Hopf points, where fixed lam is not)
            border = e if np.ndim(d) == 0 else guess / np.linalg.norm(guess)
            Z0, _ = correct(disc, Z0, border, float(border @ Z0), counters=counters, xtol=opts.newton_xtol,
                            max_iter=opts.max_newton_iterations)
            t0, det_sign = tangent_at(disc, Z0, guess, counters, with_det_sign=True)
            if np.ndim(d) == 0 and t0[-1] * (1.0 if float(d) >= 0 else -1.0) < 0:
                t0, det_sign = -t0, -det_sign
            rec = _Recorder(disc, opts, Z0, t0, counters)
            rec.note_det_sign(Z0, t0, det_sign)
            engine(disc, Z0, t0, opts, rec, progress)
            status, message, success = rec.status, rec.message, True
        except KeyboardInterrupt:
            status, message = "interrupted", "interrupted by the user (Ctrl-C); the partial branch is kept"
        except ConvergenceError as err:
            lam = rec.points[-1][-1] if rec is not None else lam0
            status, message = "failed", f"continuation failed after lam = {lam:.10g}: {err}"
        if rec is None:
            raise ConvergenceError(f"could not start the continuation at lam = {lam0:g}: {message}")
        counters.residual_evaluations = getattr(disc, "n_residuals", 0) - r0 or counters.residual_evaluations
        counters.jacobian_evaluations = getattr(disc, "n_jacobians", 0) - j0 or counters.jacobian_evaluations
        from ._branch import Branch
        special = list(rec.special)
        if opts.locate_folds and success:
            special.extend(_locate_folds(disc, rec, counters, opts))
        special.sort(key=lambda s: s.index)
        prov = _provenance(disc, method, opts)
        prov.update(provenance or {})
        br = Branch.from_solutions(disc, rec.points, rec.tangents, special=special,
                                   counters=counters.as_dict(), status=status, message=message,
                                   success=success, provenance=prov)
        br.discretization = disc
        _warn_validity(br)
        if success:
            _analyse(br, disc, rec, opts)
        return br


def _supports_stability(disc):
    from ._collocation import CollocationDiscretization
    from ._shooting import ShootingDiscretization
    return (isinstance(disc, (CollocationDiscretization, ShootingDiscretization))
            or (hasattr(disc, "split") and getattr(disc, "H", 0) >= 1))


def _analyse(br, disc, rec, opts):
    """Branch points (bordered determinant) and, for periodic branches, stability columns."""
    from ._switching import detect_branch_points
    from ._stability import branch_stability
    extra = Counters()
    # the step ends (Newton-corrected for the ANM); the extra series points in between add
    # cost, not information, to the determinant test and are skipped
    ends = np.array([i for i in rec.step_ends if i < len(br)], dtype=int)
    if opts.branch_points and len(ends) > 1:
        try:
            found = detect_branch_points(disc, br.solutions[ends], br.tangents[ends], amp_weights=rec.amp_w,
                                         counters=extra, signs=[rec.det_signs.get(int(i)) for i in ends])
            for sp in found:
                sp.index = int(ends[sp.index])
            br.special.extend(found)
            br.special.sort(key=lambda s: s.index)
        except ConvergenceError as exc:
            warnings.warn(f"branch-point detection skipped: {exc}", RuntimeWarning, stacklevel=3)
    if opts.stability and br.kind == "periodic" and _supports_stability(disc):
        try:
            # multipliers at the step ends; the ANM's extra series points in between only
            # where the stability changes (branch_stability's ``points``)
            branch_stability(br, disc, counters=extra,
                             points=ends.tolist() if len(ends) < len(br) else None)
        except (ConvergenceError, InputError) as exc:
            warnings.warn(f"stability of the periodic branch not computed: {exc}", RuntimeWarning, stacklevel=3)
    br.counters["analysis_factorizations"] = extra.factorizations


def _warn_validity(br):
    """One warning per violated validity condition (reported, not fatal: DESIGN §6)."""
    texts = {var: text for var, _, text in br.discretization.model.module.VALIDITY}
    for var, rel in br.validity.items():
        bad = np.flatnonzero(~(rel > 0))
        if len(bad):
            j = bad[np.argmin(rel[bad])]
            warnings.warn(f"validity condition of the recast violated at {len(bad)} of {len(rel)} points "
                          f"({texts.get(var, var)}): worst {var}/max|{var}| = {rel[j]:.3g} at "
                          f"{br.provenance.get('continuation_parameter', 'lam')} = {br.param[j]:.6g} "
                          "(with few harmonics a truncated sqrt auxiliary dips below zero: add harmonics)",
                          RuntimeWarning, stacklevel=3)


def _provenance(disc, method, opts):
    from importlib.metadata import version, PackageNotFoundError
    model = disc.model
    try:
        fk = version("frictionkit")
    except PackageNotFoundError:  # pragma: no cover
        fk = "unknown"
    mod = model.module
    return dict(model=model.name, model_hash=str(mod.MODEL_HASH), continuation_parameter=model.continuation,
                method=method, frictionkit_version=fk, numpy_version=np.__version__,
                scipy_version=scipy.__version__, generator_version=str(mod.GENERATOR_VERSION),
                backend=str(mod.BACKEND), discretization=_disc_name(disc),
                parameters={k: float(v) for k, v in zip(mod.PARAMETERS, model.param_vector())},
                options=dict(opts.as_dict(), harmonics=getattr(disc, "H", None), n_t=getattr(disc, "n_t", None)))


def _disc_name(disc):
    names = {"AFTDiscretization": "aft", "CollocationDiscretization": "collocation",
             "ShootingDiscretization": "shooting"}
    kind = type(disc).__name__
    H = getattr(disc, "H", None)
    if H == 0:
        return "equilibria"
    if kind in names:
        return names[kind]
    return "hbm" if H is not None else kind


class ScaledDiscretization:
    """``Z = scale * W``: the same discrete system in scaled unknowns ``W``.

    Pseudo-arclength steps, chords and tangents use the Euclidean norm of the unknowns;
    when their sizes differ by orders of magnitude (shooting: a state of 1e-3 m, a
    period of 5e-3 s and a belt speed of 10 m/s) scaling them to O(1) keeps the
    hyperplanes of the corrector transverse to the branch.  ``lam`` stays last.
    """

    def __init__(self, disc, scale):
        self.disc = disc
        self.scale = np.asarray(scale, dtype=float)
        self.m = disc.m
        self.model = getattr(disc, "model", None)

    @property
    def size(self):
        return self.m + 1

    def residual(self, W):
        return self.disc.residual(self.scale * np.asarray(W))

    def jacobian(self, W):
        return np.asarray(self.disc.jacobian(self.scale * np.asarray(W))) * self.scale[None, :]

    def to_scaled(self, Z):
        return np.asarray(Z, dtype=float) / self.scale

    def from_scaled(self, W):
        return np.asarray(W, dtype=float) * self.scale


def locate_on_branch(disc, Za, Zb, test, counters=None, xtol=1e-11, stol=1e-15):
    """Root of a scalar ``test(Z)`` between two branch points, by Brent's method.

    Points in between are Newton-corrected on the hyperplane through ``Za + s (Zb - Za)``
    orthogonal to the chord, so the search follows the branch even around turning points.

    ``stol`` is the tolerance on the chord coordinate ``s`` in [0, 1].

    Returns
    -------
    Z : ndarray
        The corrected point where ``test`` changes sign.
    """
    chord = Zb - Za
    cache = {}

    def point(s):
        if s not in cache:
            Zg = Za + s * chord
            cache[s], _ = correct(disc, Zg, chord, float(chord @ Zg), counters=counters, xtol=xtol)
        return cache[s]

    def f(s):
        return test(point(s))

    fa, fb = f(0.0), f(1.0)
    if fa * fb > 0:
        raise ConvergenceError("locate_on_branch: the test function does not change sign")
    s = scipy.optimize.brentq(f, 0.0, 1.0, xtol=stol, rtol=1e-15, maxiter=200)
    return point(s)


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
            br = continuation(ContinuationProblem(disc, Zc, sgn * t), method, opts)
            folds.extend(br.special_points("fold"))
            msgs.append(f"{br.status}: {br.message}")
            if folds:
                return min(folds, key=lambda f: abs(f.param - lam0))
    raise ConvergenceError(f"no fold found next to lam = {lam0:g} ({'; '.join(msgs[-3:])})")


def probe_dir(Z):
    """A fixed generic unit vector (orientation of a first tangent)."""
    v = np.random.default_rng(54321).normal(size=len(Z))
    return v / np.linalg.norm(v)


def _locate_folds(disc, rec, counters, opts):
    """Folds: sign changes of the tangent's lam component, refined by a root-find (DESIGN §6)."""
    from ._branch import SpecialPoint
    out = []
    T = np.array(rec.tangents)
    P = np.array(rec.points)
    A = P @ rec.amp_w if rec.amp_w is not None else None       # signed amplitudes
    last = len(P) - 1
    for i in np.flatnonzero(T[1:, -1] * T[:-1, -1] < 0):
        if rec.status == "equilibrium" and i + 1 == last:
            continue    # lam' vanishes at the Hopf point the branch ends on: not a fold
        if A is not None and A[i] * A[i + 1] <= 0:
            continue    # ... and where the branch passes through a Hopf point (recorded)

        # lam is quadratic in the chord coordinate s at a fold, so s to 1e-8 gives lam to about
        # 1e-16 of the chord (the point itself is a corrected branch point within 1e-8 chords
        # of the fold); a finer s only chases the test function's noise (the tangent's lam
        # component is known to about 1e-10, and Brent then bisects through some twenty more
        # corrected points: demo branch, H = 40).  The recorded tangent of the last point or of
        # an uncorrected series point may, right next to the fold, disagree in the sign of its
        # lam component with the exact tangent the test computes: neighbouring brackets are
        # tried too.
        Zf = None
        # The tangents are oriented along the chord: across a sharp fold the branch may turn by
        # more than a right angle within one step, and orienting by the first tangent would
        # then flip the sign of the second one's lam component.
        for a, b in ((i, i + 1), (max(i - 1, 0), i + 1), (i, min(i + 2, last)), (max(i - 1, 0), min(i + 2, last))):
            if A is not None and np.any(A[a:b] * A[a + 1:b + 1] <= 0):
                continue    # the wider bracket holds a Hopf crossing
            def test(Z, chord=P[b] - P[a]):
                return tangent_at(disc, Z, chord, counters)[-1]
            try:
                Zf = locate_on_branch(disc, P[a], P[b], test, counters, xtol=opts.newton_xtol, stol=1e-8)
                break
            except (ConvergenceError, ValueError):
                continue
        if Zf is None:
            continue
        om = Zf[disc.omega_index] if getattr(disc, "omega_index", None) is not None else np.nan
        kind = "fold"
        if A is not None and abs(Zf @ rec.amp_w) < 1e-4 * np.max(np.abs(A)):
            # lam' also vanishes where a periodic branch passes through a Hopf point (zero
            # amplitude) into its half-period-shifted copy: that is not a fold
            kind = "hopf"
            if any(h.kind == "hopf" and abs(h.param - Zf[-1]) <= 1e-8 * abs(Zf[-1]) for h in rec.special + out):
                continue    # already recorded (the tangent jitters at zero amplitude)
        out.append(SpecialPoint(kind, float(Zf[-1]), float(om), int(i), Zf))
    return out
