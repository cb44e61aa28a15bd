"""The composition behind ``frictionkit continue``: equilibria, Hopf points and the periodic
branch from a chosen Hopf point (or a simulation), with stability.

It lives below the command line so that other drivers (the sweeps of ``runtime.sweeps``) run
exactly what ``frictionkit continue`` runs; ``cli/_continuation.py`` calls it.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..engine._newton import correct, tangent_at
from ..errors import ConvergenceError, InputError
from ._branches import (
    _resolve_method,
    equilibrium_branch,
    periodic_branch,
    periodic_start_from_hopf,
    periodic_start_from_orbit,
    periodic_start_from_simulation,
)
from ._methods import COLLOCATION_KINDS, build_collocation, periodic_kind
from ._accuracy import (HARMONICS_MAX, _fourier_on_mesh, adaptive_branch, adaptive_mesh_branch, crossing_errors, fold_errors,
                        fourier_tangents_on_mesh, summary as accuracy_summary)
from ..engine._options import ContinuationOptions
from ._orbits import find_periodic_orbit

__all__ = ["run_continuation"]


class _Progress:
    """tqdm counter of continuation steps: step count, current lam, elapsed time.

    Not a percentage of [start, stop]: a branch turns back at folds, so that position is no
    measure of progress.  Shown on a terminal only (``disable=None``): redirected to a file or
    a CI log, the bar's carriage-return updates would pile up; the summaries are printed anyway.
    """

    def __init__(self, lam_start, lam_stop, desc):
        del lam_start, lam_stop            # kept in the signature: the callers pass the range
        # tqdm's import (its metadata lookup: about 0.05 s of CPU) only for a run that shows a bar
        from tqdm import tqdm
        self.bar = tqdm(desc=desc, unit=" steps", leave=False, file=sys.stderr, disable=None,
                        bar_format="{desc}: {n} steps, {elapsed} elapsed{postfix}")

    def __call__(self, rec):
        if self.bar.disable:
            return
        lam = float(rec.points[-1][-1])
        self.bar.n = int(rec.counters.steps)
        self.bar.set_postfix_str(f"lam={lam:.6g}, {len(rec.points)} points", refresh=True)

    def close(self):
        self.bar.close()


def _pick(points, index, option, what, where):
    """The ``index``-th (1-based) of ``points``, or an InputError naming the option, what
    exists and where (e.g. ``--from-hopf 3: ... has 2 Hopf point(s) (at Vb = ...)``)."""
    if 1 <= index <= len(points):
        return points[index - 1]
    if not points:
        raise InputError(f"{option} {index}: no {what} on {where}; widen the range")
    at = ", ".join(f"{p.param:.6g}" for p in points)
    raise InputError(f"{option} {index}: {where} has {len(points)} {what}(s) (at {at}); choose 1..{len(points)}")



def _special(s):
    """``fold at 10.28748387 +- 2.3e-09 (omega 1231.592)``: the estimated error where the point
    has one (``data["param_error"]``, :func:`~._accuracy.fold_errors`)."""
    err = s.data.get("param_error")
    out = f"{s.kind} at {s.param:.10g}"
    if err is not None and math.isfinite(err):
        out += f" +- {err:.1e}"
    return out + (f" (omega {s.omega:.8g})" if math.isfinite(s.omega) else "")


def _summary(br):
    c = br.counters
    sp = ", ".join(_special(s) for s in br.special) or "none"
    return (f"{br.kind} branch: {len(br)} points, {c.get('steps', 0)} steps, "
            f"{c.get('factorizations', 0)} LU factorizations, {c.get('residual_evaluations', 0)} residuals; "
            f"status {br.status}: {br.message}\n  special points: {sp}")


def _to_collocation(model, disc, Z, n_intervals, degree, direction, kind="collocation-recast"):
    """A harmonic-balance periodic start (HBM or AFT) as the unknown vector of the collocation
    ``kind`` (``drivers/_methods.py``), corrected at fixed ``lam``.

    The harmonic-balance orbit is evaluated at the collocation's times (``_fourier_on_mesh``:
    its ``2H + 1`` samples given to ``from_states``); Newton then also enforces the
    collocation phase condition.  ``direction`` (the HBM start's direction) gives the sign of
    the first step in ``lam``.
    """
    coll = build_collocation(model, kind, n_intervals, degree)
    e = np.zeros(coll.size)
    e[-1] = 1.0
    try:
        Zc, _ = correct(coll, _fourier_on_mesh(Z, disc, coll)[0], e, disc.split(Z)[2], max_iter=30)
    except ConvergenceError:
        # a truncated HBM orbit can be a poor guess (e.g. a validity dip of a sqrt auxiliary
        # of the recast collocation): refine it by shooting on the original ODE first
        u = disc.unpack(Z)
        xs = u["samples"](512)
        x0 = xs[:, int(np.argmax(xs[0]))]         # shooting's phase: an extremum of the first state
        orbit = find_periodic_orbit(model, u["lam"], x0, 2 * np.pi / u["omega"] if coll.autonomous else None)
        Zc, _ = correct(coll, coll.from_orbit(orbit), e, u["lam"], max_iter=30)
    if np.ndim(direction) == 0:
        return coll, Zc, float(np.sign(direction) or 1.0)
    t = tangent_at(disc, Z, direction)
    return coll, Zc, (1.0 if t[-1] >= 0 else -1.0)


def _away_from_hopf(disc, Z, direction, lo, hi, method=None):
    """Two harmonic-balance steps from a start next to a Hopf point, before a collocation
    takes over: right at the Hopf point the orbit is tiny, and a collocation Newton there
    stalls on the trivial family (tanh x exp belt, examples/tanh_exp_belt.py).  Two ANM steps
    leave it without passing the fold (twenty went past it and down the stable cycles)."""
    pre = periodic_branch(disc, Z, lo, hi, direction, method=method,
                          options=dict(max_steps=2, stability=False, branch_points=False))
    return disc, pre.solutions[-1], pre.tangents[-1]


def run_continuation(model, lam_start, lam_stop, start="equilibria", hopf_index=1, harmonics=None,
                     method=None, options=None, progress=True, echo=print, discretization=None,
                     intervals=40, degree=3, checkpoint=None):
    """The work behind ``frictionkit continue``; returns ``(equilibrium_branch, periodic_branch)``.

    ``start`` is ``"equilibria"`` (equilibria only), ``"hopf"`` (periodic branch from Hopf
    point ``hopf_index``, 1-based in the order of the equilibrium branch) or
    ``"simulation"`` (periodic branch from a time simulation at ``lam_start``).
    ``discretization`` is the periodic-orbit method by name (``drivers/_methods.py``):
    ``"aft"`` (harmonic balance of the states, the recast applied pointwise: DESIGN §5.0),
    ``"hbm"`` (the quadratic recast in the frequency domain), ``"collocation"`` (Gauss
    collocation of the states, the recast applied pointwise at the Gauss points),
    ``"collocation-recast"`` (orthogonal collocation of the quadratic recast) or ``None``
    (``"aft"``; hand-written modules without Taylor kernels take the recast forms).  The
    collocations have ``intervals`` sub-intervals of degree ``degree`` and start from the
    default harmonic balance.  ``method`` is the continuation engine: ``None`` picks
    ``"anm"`` wherever its series exist, ``"newton"`` otherwise (non-analytic laws).
    ``checkpoint(label, progress)``, if given, wraps each phase's progress callback (e.g. a
    :class:`~frictionkit.runtime.engine._checkpoint.Checkpoint` saving the branch so far).
    An interrupted equilibrium branch ends the work (no periodic branch is started).
    ``harmonics`` None (the default) chooses the harmonic count of an AFT branch for the
    option ``error_tolerance`` (default 1e-6 relative on the orbit; ``drivers/_accuracy.py``);
    the other discretizations (and the harmonic-balance start of a collocation) take
    :data:`DEFAULT_HARMONICS`.
    """
    wrap = checkpoint or (lambda label, bar: bar)
    chosen = discretization
    kind = periodic_kind(model, discretization)
    colloc = kind in COLLOCATION_KINDS
    if colloc:
        if int(intervals) < 2 or not 1 <= int(degree) <= 12:
            raise InputError(f"--intervals {intervals} / --degree {degree}: need intervals >= 2 and "
                             "1 <= degree <= 12")
    # the harmonic balance of the equilibria and of the start (the default one for a collocation)
    discretization = periodic_kind(model, None) if colloc else kind
    method = _resolve_method(model, method, discretization in ("aft", "aft-condensed"))
    if not (math.isfinite(lam_start) and math.isfinite(lam_stop)) or lam_start == lam_stop:
        raise InputError(f"--start {lam_start:g} and --stop {lam_stop:g} must be finite and different")
    adaptive = harmonics is None and not colloc and discretization == "aft"
    harmonics = DEFAULT_HARMONICS if harmonics is None else harmonics
    if start != "equilibria" and int(harmonics) < 1:
        raise InputError(f"--harmonics {harmonics}: a periodic orbit needs at least 1 harmonic")
    lo, hi = sorted((lam_start, lam_stop))
    eq = per = None
    if start in ("equilibria", "hopf"):
        bar = _Progress(lam_start, lam_stop, "equilibria") if progress else None
        try:
            eq = equilibrium_branch(model, lam_start, lam_stop, method=method,
                                    options={k: v for k, v in (options or {}).items() if k == "on_invalid"},
                                    progress=wrap("equilibria", bar), discretization=discretization)
        finally:
            if bar:
                bar.close()
        echo(_summary(eq))
        if eq.status == "interrupted":
            return eq, None
    if start == "hopf":
        hopf = _pick(eq.special_points("hopf"), hopf_index, "--from-hopf", "Hopf point",
                     f"the equilibrium branch on [{lo:g}, {hi:g}] of {model.continuation}")

        def start_at(H, n_t=None):
            return periodic_start_from_hopf(model, hopf, H, discretization=discretization, n_t=n_t)
    elif start == "simulation":
        first = {}

        def start_at(H, n_t=None):
            # one simulation serves every harmonic count: its orbit's samples restart the others
            if "orbit" not in first:
                disc, Z = periodic_start_from_simulation(model, lam_start, H, discretization=discretization,
                                                         n_t=n_t)
                first["orbit"] = (disc.samples(Z, 8 * HARMONICS_MAX + 8)[1], 2 * np.pi / disc.unpack(Z)["omega"])
            else:
                x, period = first["orbit"]
                disc, Z = periodic_start_from_orbit(model, lam_start, x, period, H, discretization=discretization,
                                                    n_t=n_t)
            return disc, Z, 1.0 if lam_stop > lam_start else -1.0
    if start in ("hopf", "simulation") and adaptive:
        opts = _periodic_options(options, method)
        switch = opts.pop("method_switch", True) is not False and chosen is None and _collocates(model)
        opts.pop("adaptive_mesh", None)
        tol = _tolerance(opts)
        bar = _Progress(lam_start, lam_stop, "periodic (adaptive H)") if progress else None
        try:
            run_segment, finish = _segments(lo, hi, method, opts, wrap("periodic branch", bar))

            def beyond(disc, Z, tangent, steps):
                # the collocation of the states from the harmonic balance's last good point
                coll, Zc, _ = _to_collocation(model, disc, Z, SWITCH_INTERVALS, SWITCH_DEGREE,
                                              float(np.sign(tangent[-1]) or 1.0), kind="collocation-states")
                direction = fourier_tangents_on_mesh(tangent, Z, disc, coll)[0]
                return adaptive_mesh_branch(coll, Zc, direction, run_segment, tol, steps)
            per = finish(adaptive_branch(start_at, run_segment, tol, int(opts["max_steps"]),
                                         beyond=beyond if switch else None))
        finally:
            if bar:
                bar.close()
        fold_errors(per)
        crossing_errors(per)
        echo(_summary(per) + _accuracy_line(per, tol))
        return eq, per
    if start == "hopf":
        disc, Z, direction = start_at(harmonics)
    elif start == "simulation":
        disc, Z, direction = start_at(harmonics)
    if start in ("hopf", "simulation"):
        label = f"collocation {intervals}x{degree}" if colloc else f"periodic H={harmonics}"
        if colloc:
            if start == "hopf":
                disc, Z, direction = _away_from_hopf(disc, Z, direction, lo, hi, method)
            disc, Z, direction = _to_collocation(model, disc, Z, int(intervals), int(degree), direction, kind)
        opts = _periodic_options(options, method)
        adapt_mesh = colloc and kind == "collocation-states" and opts.pop("adaptive_mesh", True) is not False
        opts.pop("adaptive_mesh", None)
        if adapt_mesh:
            label = f"collocation {intervals}x{degree} (adaptive mesh)"
        bar = _Progress(lam_start, lam_stop, label) if progress else None
        try:
            if adapt_mesh:
                per = _adaptive_collocation(disc, Z, direction, lo, hi, method, opts, wrap("periodic branch", bar))
            else:
                per = periodic_branch(disc, Z, lo, hi, direction, method=method, options=opts,
                                      progress=wrap("periodic branch", bar))
        finally:
            if bar:
                bar.close()
        fold_errors(per)
        crossing_errors(per)
        echo(_summary(per) + _accuracy_line(per, _tolerance(opts)))
    return eq, per


#: the first mesh of the collocation that continues a default branch where the harmonic count
#: would pass its ceiling (``drivers/_accuracy.py``, ``adaptive_branch``'s ``beyond``): the
#: collocation's own default degree; the adaptive mesh then equidistributes and grows it
SWITCH_INTERVALS, SWITCH_DEGREE = 40, 4


def _collocates(model) -> bool:
    """Whether ``model`` has the collocation of the states (an analytic law with its Taylor
    kernels: the ANM continues it), which a default branch switches to where the harmonic
    balance would need more than ``HARMONICS_MAX`` harmonics."""
    try:
        return periodic_kind(model, "collocation") == "collocation-states"
    except InputError:
        return False


def _adaptive_collocation(disc, Z, direction, lo, hi, method, opts, shown):
    """The collocation branch of the states on an adaptive mesh (``drivers/_accuracy.py``,
    :func:`adaptive_mesh_branch`) for the option ``error_tolerance``."""
    run_segment, finish = _segments(lo, hi, method, opts, shown)
    return finish(adaptive_mesh_branch(disc, Z, direction, run_segment, _tolerance(opts), int(opts["max_steps"])))


def _segments(lo, hi, method, opts, shown):
    """``(run_segment, finish)`` of an adaptive branch (harmonic count or mesh): one engine run
    of a segment, whose steps the segment's check sees before the progress display, with the
    estimates left to the check; and the stitched branch's provenance and estimates as the
    options asked (``error_estimates=False``: none kept)."""
    wanted = {k: opts.get(k, True) for k in ("stability", "branch_points")}

    def run_segment(disc, Z, direction, steps, check):
        def each_step(rec):
            check(rec)
            if shown is not None:
                shown(rec)
        return periodic_branch(disc, Z, lo, hi, direction, method=method,
                               options=dict(opts, **wanted, max_steps=steps, error_estimates=False),
                               progress=each_step)

    def finish(per):
        estimates = opts.get("error_estimates", True) is not False
        per.provenance.setdefault("options", {}).update(wanted, error_estimates=estimates)
        if not estimates:
            per.accuracy = {}
        return per
    return run_segment, finish


#: the harmonic count of the discretizations whose count is not chosen for a tolerance (the
#: recast HBM, the harmonic-balance start of a collocation) and of ``--harmonics``-less runs
#: before issue 26
DEFAULT_HARMONICS = 30


def _periodic_options(options, method):
    opts = dict(options or {})
    opts.setdefault("max_steps", 5000)
    if method == "anm":
        opts.setdefault("points_per_step", 4)     # smooth curves, no extra LU
    return opts


def _tolerance(opts):
    return float(opts.get("error_tolerance", ContinuationOptions.error_tolerance))


def _accuracy_line(br, tolerance):
    line = accuracy_summary(br, tolerance)
    return "\n" + line if line else ""
