"""``run(problem, method, options)``: one engine run along a branch, no analysis.

The run stops when the parameter leaves ``[lam_min, lam_max]`` (the last point is placed
exactly on the bound), after ``max_steps`` steps, when the branch returns to its start, or
when a periodic branch shrinks to an equilibrium (its first-harmonic amplitude crosses zero:
a Hopf point).  A failure or Ctrl-C keeps every point computed so far: the returned
:class:`~frictionkit.runtime.results.Branch` has ``success = False`` and a ``status`` and
``message`` naming the cause.  Folds are located afterwards (:mod:`._locate`).

The analysis passes (stability, branch points) are not run here: the drivers
(:func:`frictionkit.runtime.continuation`, ``periodic_branch``, ...) compose an engine run
with them, so that this layer never imports the analysis.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import scipy

from .._version import __version__
from ..errors import ConvergenceError, NonFiniteError, InputError
from ..results._branch import Branch
from ._anm import anm
from ._bordered import Counters, _Workspace
from ._locate import locate_folds
from ._newton import correct, tangent_at
from ._options import ContinuationProblem, default_options
from ._predictor_corrector import pseudo_arclength
from ._recorder import Recorder
from ._validity import HBM_DIP, check_points

__all__ = ["run", "ENGINES"]

ENGINES = {"anm": anm, "newton": pseudo_arclength}


def run(problem: ContinuationProblem, method: str = "anm", options=None, progress=None,
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
    opts = default_options(method, options, -math.inf, math.inf)
    Z0, guess, border = _start(disc, problem, opts)
    counters = Counters()
    r0, j0 = disc.n_residuals, disc.n_jacobians
    # one reusable bordered buffer for the run, its engines and its analysis (freed at the end)
    with _Workspace.scope(disc):
        rec, status, message, success = _follow(disc, ENGINES[method], Z0, guess, border, problem.direction,
                                                opts, counters, progress)
        counters.residual_evaluations = disc.n_residuals - r0 or counters.residual_evaluations
        counters.jacobian_evaluations = disc.n_jacobians - j0 or counters.jacobian_evaluations
        return _branch(disc, method, opts, rec, counters, status, message, success, provenance)


def _start(disc, problem, opts):
    """Check the start vector; return it, the first tangent's guess and the start's border.

    A scalar direction corrects the start at fixed ``lam``; a vector direction on the
    hyperplane orthogonal to it (well posed at folds and next to Hopf points, where fixed
    ``lam`` is not).
    """
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
        return Z0, guess, e
    guess = np.asarray(d, dtype=float)
    return Z0, guess, guess / np.linalg.norm(guess)


#: the statuses of a branch that ended where it should (``success = True``)
_ENDS = ("range", "equilibrium", "closed")


def _follow(disc, engine, Z0, guess, border, d, opts, counters, progress):
    """Correct the start, then run the engine; return ``(recorder, status, message, success)``.

    A failure or Ctrl-C after the start keeps the recorder's points (``success`` False).
    """
    lam0 = Z0[-1]
    rec = None
    status, message, success = "failed", "", False
    try:
        Z0, _, lu = correct(disc, Z0, border, float(border @ Z0), counters=counters, xtol=opts.newton_xtol,
                            max_iter=opts.max_newton_iterations, keep_factorization=True)
        # the tangent from Newton's last factorization (its border is the guess's direction
        # for a vector direction, lam's for a scalar one: oriented below)
        t0, det_sign = tangent_at(disc, Z0, border, counters, with_det_sign=True, lu=lu)
        del lu
        if np.ndim(d) == 0 and t0[-1] * (1.0 if float(d) >= 0 else -1.0) < 0:
            t0, det_sign = -t0, -det_sign
        rec = Recorder(disc, opts, Z0, t0, counters)
        rec.note_det_sign(Z0, t0, det_sign)
        engine(disc, Z0, t0, opts, rec, progress)
        status, message = rec.status, rec.message
        # a branch succeeds when it ends where it should: its range, an equilibrium (a Hopf
        # point), or back at its start; out of steps, or an engine that gave up, is a failure
        success = status in _ENDS
        if status == "running":
            status = "failed"
            message = (f"the engine stopped at lam = {rec.points[-1][-1]:.10g} without reaching the range, "
                       "an equilibrium or the start (a step of zero length)")
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted by the user (Ctrl-C); the partial branch is kept"
    except ConvergenceError as err:
        lam = rec.points[-1][-1] if rec is not None else lam0
        status, message = "failed", f"continuation failed after lam = {lam:.10g}: {err}"
        if rec is not None:
            rec.left_domain = isinstance(err, NonFiniteError)
    if rec is None:
        if status == "interrupted":
            raise KeyboardInterrupt("interrupted before the first point of the branch")
        raise ConvergenceError(f"could not start the continuation at lam = {lam0:g}: {message}")
    return rec, status, message, success


def _branch(disc, method, opts, rec, counters, status, message, success, provenance):
    """The :class:`Branch` of a run: the recorder's points checked for validity, folds
    located, provenance."""
    checks = check_points(disc, rec.points) if disc.model.validity else []
    k = next((i for i, c in enumerate(checks) if c.fatal), None)
    if k is not None and opts.on_invalid == "stop":
        text = _invalid_text(disc, rec, checks, k)
        if k == 0:
            raise ConvergenceError(f"the start of the branch is not a solution of the model: {text}")
        _truncate(rec, k)
        checks = checks[:k]
        status, success = "invalid", False
        message = (f"{text}; the {k} valid points before it are kept (options on_invalid='warn' or "
                   "--validity warn continue past it)")
    elif k is None and checks and rec.left_domain and len(checks) > 1 and _heads_for_the_edge(checks):
        # NaN/inf past the last point, every kept point valid and a condition about to fail:
        # the branch met the edge of the model's domain (pointwise path: a sqrt's branch cut)
        status, success = "invalid", False
        message = f"{_edge_text(disc, rec, checks)}; the {len(checks)} valid points before it are kept"
    special = list(rec.special)
    if opts.locate_folds and (success or status == "max_steps"):
        try:
            special.extend(locate_folds(disc, rec, counters, opts))
        except KeyboardInterrupt:       # the branch is kept; the folds found by the recorder too
            status, success = "interrupted", False
            message = "interrupted during the fold location (Ctrl-C or SIGTERM); the branch is kept"
    special.sort(key=lambda s: s.index)
    prov = _provenance(disc, method, opts)
    prov.update(provenance or {})
    validity = {var: np.array([c.relative[var] for c in checks]) for var in checks[0].relative} if checks else None
    br = Branch.from_solutions(disc, rec.points, rec.tangents, validity=validity, special=special,
                               counters=counters.as_dict(), status=status, message=message,
                               success=success, provenance=prov)
    br.discretization = disc
    # what the analysis passes need from the run (``analysis.analyse_branch``)
    br.step_ends = [i for i in rec.step_ends if i < len(br)]
    br.det_signs = dict(rec.det_signs)
    br.amplitude_weights = rec.amp_w
    br.options = opts
    if checks:
        _warn_validity(br, checks, k if opts.on_invalid == "warn" else None)
    return br


def _truncate(rec, k):
    """Keep the recorder's points before index ``k`` (and what refers to them)."""
    del rec.points[k:], rec.tangents[k:]
    rec.step_ends = [i for i in rec.step_ends if i < k]
    rec.det_signs = {i: s for i, s in rec.det_signs.items() if i < k}
    rec.special = [s for s in rec.special if s.index < k]


def _hint(disc):
    """Why a validity condition fails, by the kind of branch."""
    if disc.kind == "equilibria":
        return ("the equilibria reach the branch cut of a sqrt or a pole of the model here: past it "
                "the recast follows a root that is not a solution of the model")
    if disc.kind == "hbm":
        return ("the truncated Fourier series of the auxiliary follows the other root: add harmonics, "
                "or check the orbit by collocation or shooting")
    return (f"the {disc.kind} orbit reaches the branch cut of a sqrt or a pole of the model: past it "
            "the recast follows a root that is not a solution of the model")


def _invalid_text(disc, rec, checks, k):
    """The first fatal violation at point ``k``: condition, parameter value, crossing estimate."""
    texts = {var: text for var, _, text in disc.model.validity}
    var, rel, _ = checks[k].fatal[0]
    p = disc.model.continuation
    lam_k = rec.points[k][-1]
    where = f"{p} = {lam_k:.10g}"
    if k > 0:
        w0, w1, lam0 = checks[k - 1].worst[var], checks[k].worst[var], rec.points[k - 1][-1]
        # the worst value is continuous along the branch: linear interpolation of its zero
        est = lam0 + (lam_k - lam0) * w0 / (w0 - w1) if np.isfinite(w1) else None
        where += (f" (it fails between {p} = {lam0:.10g} and {lam_k:.10g}"
                  + (f", near {p} ~ {est:.10g})" if est is not None else ")"))
    return (f"validity condition of the recast violated ({texts.get(var, var)}: worst "
            f"{var}/max|{var}| = {rel:.3g}) at {where}: {_hint(disc)}")


def _heads_for_the_edge(checks, steps: float = 2.0):
    """Whether the worst value of some validity condition, falling linearly over the last two
    points, reaches zero within ``steps`` more steps of the same length."""
    for var in checks[-1].worst:
        w0, w1 = checks[-2].worst[var], checks[-1].worst[var]
        if np.isfinite(w0) and np.isfinite(w1) and 0 <= w1 < w0 and w1 <= steps * (w0 - w1):
            return True
    return False


def _edge_text(disc, rec, checks):
    """The validity condition closest to failing at the last kept point, and where its
    worst value extrapolates to zero (the branch stopped on NaN/inf just past it)."""
    texts = {var: text for var, _, text in disc.model.validity}
    var = min(checks[-1].relative, key=lambda v: checks[-1].relative[v])
    p = disc.model.continuation
    (lam0, lam1), (w0, w1) = (rec.points[-2][-1], rec.points[-1][-1]), (checks[-2].worst[var], checks[-1].worst[var])
    est = lam1 + (lam1 - lam0) * w1 / (w0 - w1) if w0 != w1 else lam1
    return (f"the branch reaches the edge of the model's domain ({texts.get(var, var)}: worst "
            f"{var}/max|{var}| = {checks[-1].relative[var]:.3g} at {p} = {lam1:.10g}, near {p} ~ {est:.10g}): "
            f"past it the right-hand side is not real (a sqrt of a negative number, or a pole)")


def _warn_validity(br, checks, k):
    """One warning per condition violated on the kept points (the fatal violation at ``k``
    when ``on_invalid == "warn"``, else the tolerated dips of a harmonic balance)."""
    texts = {var: text for var, _, text in br.discretization.model.validity}
    p = br.provenance.get("continuation_parameter", "lam")
    for var, rel in br.validity.items():
        bad = np.flatnonzero(~(rel > 0))
        if not len(bad):
            continue
        j = bad[np.argmin(rel[bad])]
        fatal = any(v[0] == var and v[2] for c in checks for v in c.violations)
        why = (_hint(br.discretization) if fatal else
               f"the truncated Fourier series of the auxiliary undershoots near a kink (Gibbs), "
               f"tolerated down to -{HBM_DIP:g} of its scale: more harmonics reduce the dip")
        warnings.warn(f"validity condition of the recast violated at {len(bad)} of {len(rel)} points "
                      f"({texts.get(var, var)}): worst {var}/max|{var}| = {rel[j]:.3g} at {p} = "
                      f"{br.param[j]:.6g} ({why})", RuntimeWarning, stacklevel=4)


def _provenance(disc, method, opts):
    model = disc.model
    fk = __version__
    return dict(model=model.name, model_hash=model.model_hash, continuation_parameter=model.continuation,
                method=method, frictionkit_version=fk, numpy_version=np.__version__,
                scipy_version=scipy.__version__, generator_version=model.generator_version,
                backend=model.backend, discretization=disc.kind,
                parameters={k: float(v) for k, v in zip(model.parameters, model.param_vector())},
                options=dict(opts.as_dict(), harmonics=disc.H, n_t=disc.n_t), units=model.units,
                # what rebuilds the discretization (``Branch.restart``)
                model_source=getattr(model, "source", ""),
                sizes=dict(disc.sizes, harmonics=disc.H, n_t=disc.n_t))


