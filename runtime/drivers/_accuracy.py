"""Accuracy of a periodic branch: the error estimates on its points and the adaptive harmonic
count (issue 26 items 1-2, DESIGN §5.8).

:func:`attach_accuracy` fills ``Branch.accuracy`` with the estimates of
``discretizations/_error.py`` (``err_trunc``, ``err_alias``, ``err_decay``, ``decay_rate``;
``err_mesh`` for the collocation of the states) and the harmonic count ``harmonics`` of each
point.  The estimates cost one LU of the ``2H`` balance each, so they are formed at the ends
of the engine's steps (every point for the pseudo-arclength engine; the ANM's extra points
inside a step lie on the same series); a point inside a step takes the larger estimate of its
step's two ends.  :func:`error_of` is the orbit error the tolerance is compared with:
``err_trunc + err_alias`` (harmonic balance) or ``err_mesh`` (collocation).

:func:`adaptive_branch` chooses the harmonic count of an AFT branch for a tolerance (default
1e-6 relative on the orbit, option ``error_tolerance``) and changes it along the branch.  The
branch is continued in segments, each one engine run (``drivers.continuation`` with its
analysis passes) at one count, started at :data:`HARMONICS_FIRST`.  After every step the
estimates of the step's end are formed (the cost :func:`attach_accuracy` has anyway) and
compared with the tolerance (:class:`_Segment`, the engine's ``progress`` callback):

* above it, the step is removed and the run stops at the last good point; the count grows to
  what the estimates say (the truncation error decays like ``rho^H``, ``rho`` the point's
  measured ``decay_rate``: ``H' = H + log(tol / (2 err)) / log(rho)`` plus a margin, at least
  ``1.15 H``, :func:`needed_harmonics`; twice the samples, for the rest of the branch, where
  the aliasing is above its share), the point is padded with zero harmonics (the same
  orbit), corrected by Newton on the hyperplane orthogonal to its padded tangent and
  continued: a new ANM series at the new size;
* far below it (under ``tol / 50`` at 3 step ends in a row), the run stops there and the count
  shrinks to the one whose extrapolated error is ``tol / 10`` (:func:`shrunk_harmonics`: at
  least 4 fewer and at most 0.8 H, never below 8); the point is truncated, corrected and
  continued.

The count stops at :data:`HARMONICS_MAX` (a stick-slip as sharp as the LuGre belt's asks for
several hundred harmonics, where the collocation is the better method; the message says the
count the estimates ask for).  The segments are stitched into one Branch
(:func:`stitch_segments`): the solutions zero-padded to the largest count (a padded harmonic
vector is the same orbit, so saved files, restarts, plots, exports and the curves of two
parameters read it as a branch of that count), ``accuracy["harmonics"]`` the count each point
was computed with; the special points (folds, Hopf, branch points, period doublings, ...) and
the stability columns are those of their segment, located at its count.
"""
from __future__ import annotations

import math

import numpy as np

from ..discretizations._aft import default_n_t
from ..discretizations._error import ERROR_COLUMNS, _AFTErrors, _MeshErrors, orbit_errors
from ..engine._newton import correct
from ..errors import ConvergenceError
from ..discretizations._hbm import fast_length
from ..results._branch import Branch

__all__ = ["attach_accuracy", "error_of", "adaptive_branch", "adaptive_mesh_branch", "stitch_segments",
           "fourier_tangents_on_mesh", "fold_errors", "crossing_errors",
           "HARMONICS_FIRST", "HARMONICS_MAX", "FOLD_CHECK_FACTOR"]

#: first harmonic count of the adaptive search, and its ceiling
HARMONICS_FIRST, HARMONICS_MAX = 30, 100
#: the least growth of the count when the tolerance is not met, and the margin of the
#: extrapolated count (harmonics added to what the decay rate predicts)
GROWTH, MARGIN = 1.15, 4
#: the growth aims at this share of the tolerance
GROW_TO = 2.0
#: the growth of the AFT samples where the aliasing estimate is above its share (rounded up to a
#: fast FFT length)
OVERSAMPLING = 2
#: the share of the tolerance left to the truncation (the rest to the aliasing)
TRUNCATION_SHARE = 0.5
#: a decay per harmonic above this is taken as none measured (the count then grows by half)
RHO_MAX = 0.97


def _ends(br):
    ends = sorted({int(i) for i in getattr(br, "step_ends", []) or [] if 0 <= int(i) < len(br)}
                  | {0, len(br) - 1})
    return np.array(ends, dtype=int)


def attach_accuracy(br):
    """Fill ``br.accuracy`` (module docstring) for a periodic branch computed in this session
    whose discretization has estimates; nothing otherwise.  Returns ``br.accuracy``."""
    disc = getattr(br, "discretization", None)
    if disc is None or br.kind != "periodic" or not len(br):
        return br.accuracy
    ends = _ends(br)
    cols = orbit_errors(disc, br.solutions, br.tangents, points=ends)
    if not cols:
        return br.accuracy
    _fill_inside(cols, ends)
    if disc.H is not None:
        cols["harmonics"] = np.full(len(br), float(disc.H))
    br.accuracy = cols
    return cols


def _fill_inside(cols, ends):
    """Give the points inside each step (between consecutive ``ends``) the estimates of the
    step's end with the larger orbit error (:func:`error_of`), every column from that one end:
    taking the larger of each column separately would add a truncation of one end to an
    aliasing of the other, more than either end's error."""
    total = error_of(cols)
    for a, b in zip(ends[:-1], ends[1:]):
        if b > a + 1:
            ea, eb = (total[a], total[b]) if total is not None else (np.nan, np.nan)
            w = b if (np.isnan(ea) or (not np.isnan(eb) and eb > ea)) else a
            for v in cols.values():
                v[a + 1:b] = v[w]


def error_of(accuracy):
    """The estimated relative error of each orbit (module docstring), or None; on a branch
    whose method changed along it (:func:`adaptive_branch`'s ``beyond``), each point's own
    method's."""
    hb = np.asarray(accuracy["err_trunc"]) + np.asarray(accuracy["err_alias"]) if "err_trunc" in accuracy else None
    if "err_mesh" in accuracy:
        mesh = np.asarray(accuracy["err_mesh"])
        return mesh if hb is None else np.where(np.isnan(hb), mesh, hb)
    return hb


def summary(br, tolerance=None):
    """One line on the branch's estimated accuracy for the command-line summary ("" if none)."""
    err = error_of(getattr(br, "accuracy", {}) or {})
    if err is None or not np.any(np.isfinite(err)):
        return ""
    worst = float(np.nanmax(err))
    parts = [f"estimated orbit error <= {worst:.1e} (median {float(np.nanmedian(err)):.1e})"]
    acc = br.accuracy
    if "err_trunc" in acc:
        parts.append(f"truncation {np.nanmax(acc['err_trunc']):.1e}, aliasing {np.nanmax(acc['err_alias']):.1e}")
    if "harmonics" in acc:
        lo, hi = int(np.nanmin(acc["harmonics"])), int(np.nanmax(acc["harmonics"]))
        parts.append(f"H = {lo}" if lo == hi else f"H = {lo}..{hi} along the branch")
    if "intervals" in acc:
        lo, hi = int(np.nanmin(acc["intervals"])), int(np.nanmax(acc["intervals"]))
        parts.append(f"{lo} intervals (adaptive mesh)" if lo == hi else f"{lo}..{hi} intervals (adaptive mesh)")
    line = "  accuracy: " + "; ".join(parts)
    if tolerance is not None and worst > tolerance:
        line += f"  (above the tolerance {tolerance:g}"
        line += (": give more --harmonics)" if "err_trunc" in acc else ": give more --intervals)")
    return line


#: :func:`fold_errors` locates each fold again with this many times its harmonic count
FOLD_CHECK_FACTOR = 2


def fold_errors(branch, factor: int = FOLD_CHECK_FACTOR) -> None:
    """The estimated error of the parameter of every fold of a harmonic-balance branch, in
    the fold's ``data["param_error"]``.

    The orbit's estimates (:func:`attach_accuracy`) do not carry over to a fold's parameter: a
    fold is where the parameter is extremal along the branch, and the truncation moves it by
    its own amount.  So the fold is located again with ``factor`` times the harmonic count it
    was located with (its segment's count on an adaptive branch), from its orbit padded with
    zero harmonics (``engine/_fold_near.locate_fold_near``: a short continuation on either side),
    and the estimate is the difference of the two parameters: the error of the first one to
    the accuracy of the second.  On the seed-000 belt (n = 10, FN = 5, tests/cli/test_errors.py)
    the estimate at H = 10, 20 and 40 and at the adaptive default is within a factor 1.5 of the
    true error (against the converged fold, the balance at H >= 100: ratios 0.74 to 1.00), for
    0.01 to 0.05 s of CPU per fold.  Nothing is written where the fold cannot be located
    again (a ``ConvergenceError``: the estimate is then missing, never made up), nor for other
    discretizations (a collocation has no harmonic count).
    """
    from ..engine._fold_near import locate_fold_near
    for f, disc, H in _points_to_check(branch, ("fold",)):
        try:
            d2, Z2 = disc.resize(np.asarray(f.solution, dtype=float), int(factor) * H)
            again = locate_fold_near(d2, Z2)
        except (ConvergenceError, NotImplementedError, ValueError):
            continue
        f.data["param_error"] = abs(float(again.param) - float(f.param))
        f.data["param_error_harmonics"] = int(factor) * H


#: :func:`crossing_errors`: the secant steps of the test function at twice the harmonics
CROSSING_CHECK_STEPS = 4


def _points_to_check(branch, kinds):
    """``(point, discretization, H)`` for the special points of ``kinds`` of a harmonic-balance
    branch, ``H`` the harmonic count each was located with (its segment's on an adaptive
    branch); nothing for other discretizations, or a point whose solution is not the
    branch's discretization's."""
    disc = branch.discretization
    if disc is None or disc.H is None:
        return
    counts = (branch.accuracy or {}).get("harmonics")
    for sp in branch.special:
        if sp.kind not in kinds or np.size(sp.solution) != disc.size:
            continue
        H = disc.H
        if counts is not None and len(counts) > sp.index:
            near = np.asarray(counts, dtype=float)[sp.index:sp.index + 2]
            if np.any(np.isfinite(near)):
                H = int(np.nanmax(near))
        if H >= 1:
            yield sp, disc, H


def crossing_errors(branch, factor: int = FOLD_CHECK_FACTOR, tol: float = 1e-6) -> None:
    """The estimated error of the parameter of every period doubling and Neimark-Sacker point
    of a harmonic-balance branch, in its ``data["param_error"]`` (as :func:`fold_errors` for
    folds).

    The point's orbit is padded to ``factor`` times its harmonic count and corrected there on
    the hyperplane orthogonal to the branch's tangent; the crossing's test function (the one
    the branch located it with, ``analysis/_stability``'s ``_pd_test``, ``_ns_test``) is
    evaluated there and at a point a short arclength step along that branch, and secant steps
    along it (at most ``CROSSING_CHECK_STEPS``, each a stability evaluation at ``factor H``)
    give the test's root: the estimate is the difference of its parameter from the point's.
    Nothing is written where a correction fails or the secant does not settle within a step
    of its own length.  On the 8-mode bowed string (``examples/bowed_string.py``, H = 24 and
    48, tests/drivers/test_fold_errors.py), against the points located on the branch with
    twice the harmonics: 0.98 to 1.02 times their difference at 6 of 8 points, 5 to 14 times
    it at the period doubling and Neimark-Sacker point next to the fold of cycles; 0.07 to
    0.17 s of CPU for the branch's 9 points."""
    from ..analysis._stability import _ns_test, _pd_test, point_stability
    from ..engine._fold_near import probe_dir
    from ..engine._newton import tangent_at
    for sp, disc, H in _points_to_check(branch, ("pd", "ns")):
        fun = _pd_test if sp.kind == "pd" else _ns_test
        try:
            d2, Z = disc.resize(np.asarray(sp.solution, dtype=float), int(factor) * H)
            t = tangent_at(d2, Z, probe_dir(Z))
            Z, _ = correct(d2, Z, t, float(t @ Z), max_iter=30)

            def test(W):
                return fun(point_stability(d2, W, tol=tol, which="primary")[0])
            lam_scale = 1e-4 * max(abs(float(Z[-1])), 1e-12)
            h = lam_scale / max(abs(float(t[-1])), 1e-3 * lam_scale / max(float(np.linalg.norm(Z)), 1e-300))
            g0 = test(Z)
            found = None
            for _ in range(CROSSING_CHECK_STEPS):
                W = Z + h * t
                W, _ = correct(d2, W, t, float(t @ W), max_iter=30)
                g1 = test(W)
                if not (np.isfinite(g0) and np.isfinite(g1)) or g1 == g0:
                    break
                step = -g0 * h / (g1 - g0)                       # the root from Z, along t
                if abs(step) <= abs(h):
                    found = float(Z[-1] + (W[-1] - Z[-1]) * step / h)
                    break
                Z = Z + step * t                                  # closer, and try again from there
                Z, _ = correct(d2, Z, t, float(t @ Z), max_iter=30)
                g0 = test(Z)
        except (ConvergenceError, NotImplementedError, ValueError):
            continue
        if found is not None:
            sp.data["param_error"] = abs(found - float(sp.param))
            sp.data["param_error_harmonics"] = int(factor) * H


def needed_harmonics(H, info, tolerance):
    """The harmonic count the estimates ``info`` of a failing point ask for (module docstring).

    Its truncation error ``err_trunc``, where above :data:`TRUNCATION_SHARE` of the tolerance
    (the rest is left to the aliasing), is extrapolated with the geometric decay ``rho``
    (``decay_rate``) of its retained spectrum to that share over :data:`GROW_TO` (a margin
    for the orbit that keeps sharpening past the point): ``H + log(share / (GROW_TO err)) /
    log(rho) + MARGIN``, ``1.5 H`` where ``rho`` is above :data:`RHO_MAX` (no measurable
    decay), at least ``GROWTH H``; ``H`` where the truncation meets its share (the aliasing
    failed: the samples grow, :func:`adaptive_branch`).
    """
    err, share = float(info["err_trunc"]), TRUNCATION_SHARE * tolerance
    if not err > share:
        return H
    rho = float(info["decay_rate"])
    if not 0 < rho <= RHO_MAX:
        return math.ceil(1.5 * H)
    extra = math.ceil(math.log(share / (GROW_TO * err)) / math.log(rho)) + MARGIN
    return max(math.ceil(GROWTH * H), H + extra)


#: a segment's estimates far below the tolerance: below ``tolerance / SHRINK_BELOW`` at
#: :data:`SHRINK_STEPS` step ends in a row the count may shrink, to the count whose
#: extrapolated error is ``tolerance / SHRINK_TO`` (at least :data:`SHRINK_LEAST` fewer
#: harmonics, never below :data:`HARMONICS_LEAST`)
SHRINK_BELOW, SHRINK_STEPS, SHRINK_TO, SHRINK_LEAST = 50.0, 3, 10.0, 4
#: ... and to at most this share of the count (a smaller saving is not worth a new segment)
SHRINK_FACTOR = 0.8
HARMONICS_LEAST = 8


def shrunk_harmonics(H, accuracy, tolerance):
    """The smaller count the estimates allow, or ``H`` (module docstring).

    Each point's truncation error is extrapolated down with its decay rate ``rho``:
    ``H - log(tol / (SHRINK_TO err)) / log(1 / rho)`` (the error grows by ``1 / rho`` per
    harmonic removed); the largest over the points, plus :data:`MARGIN`; ``H`` where a rate is
    not measured or the saving is under :data:`SHRINK_LEAST` harmonics.
    """
    # an estimate at the rounding level (0) says nothing: the tail's share of the norm then
    err = np.fmax(np.asarray(accuracy["err_trunc"], dtype=float), np.asarray(accuracy["err_decay"], dtype=float))
    rho = np.asarray(accuracy["decay_rate"], dtype=float)
    if not len(err) or not np.all(np.isfinite(err) & np.isfinite(rho) & (rho > 0) & (rho <= RHO_MAX)):
        return H
    target = tolerance / SHRINK_TO * TRUNCATION_SHARE
    drop = np.floor(np.log(target / np.maximum(err, 1e-300)) / np.log(1.0 / rho))
    H2 = max(HARMONICS_LEAST, int(H - np.min(drop)) + MARGIN)
    return H2 if H2 <= min(H - SHRINK_LEAST, SHRINK_FACTOR * H) else H


def _ends_at_hopf(rec, one) -> bool:
    """Whether the step end just recorded is where the branch reached an equilibrium (the
    recorder stopped on a zero amplitude: a Hopf point).  Its orbit has no amplitude, so an
    error relative to the orbit's size means nothing there: its orbit errors (``one``'s
    ``err_*``) become NaN and no change of the discretization is asked for (that point ends
    the branch anyway; its ``lam`` is located by the recorder).  Without this the estimate
    there, 1.0 (all of a vanishing orbit), grew the belt's 100-interval collocation to 400
    intervals at its last step under one BLAS kernel's rounding and not under another's."""
    if rec.status != "equilibrium":
        return False
    for k in one:
        if k.startswith("err"):
            one[k] = math.nan
    return True


class _Segment:
    """The per-step check of one segment (the engine's ``progress`` callback).

    At every step end the estimates of the new point are formed (one LU of the balance, the
    cost :func:`attach_accuracy` has) and kept; a step end above the tolerance removes its
    step from the recorder (the last good point stays the segment's end) and stops the run
    (``recorder.done``: the engine polls it before every step, ``engine/_recorder.py``);
    :data:`SHRINK_STEPS` step ends far below it stop the run at the last one.  The stop is
    recorded as ``status = "max_steps"`` so that the folds and the analysis of the segment
    are done as for a run out of steps; the caller stitches the segments."""

    def __init__(self, disc, tolerance, may_grow, may_shrink):
        self.disc, self.tol = disc, tolerance
        self.may_grow, self.may_shrink = may_grow, may_shrink
        self.cols = {}                # recorder index of a step end -> its estimates
        self._one = None              # the estimator of ``disc`` (its 2H balance), built once
        self.decision = None          # ("grow" | "shrink", estimates of the deciding point)

    def _step_end_estimate(self, rec):
        """``(i, estimates)`` of the recorder's newest point ``i`` when it is a step end not
        estimated yet, else None (the estimator of ``disc`` built on first use)."""
        i = len(rec.points) - 1
        if not rec.step_ends or rec.step_ends[-1] != i or i in self.cols:
            return None
        if self._one is None:
            self._one = point_errors(self.disc)
        return i, self._one(rec.points[i], rec.tangents[i])

    def __call__(self, rec):
        got = self._step_end_estimate(rec)
        if got is None or not got[1]:
            return
        i, one = got
        self.cols[i] = one
        if _ends_at_hopf(rec, one):
            return
        err = self.cols[i]["err_trunc"] + self.cols[i]["err_alias"]
        if self.may_grow and err > self.tol and len(rec.step_ends) > 1:
            self.decision = ("grow", self.cols.pop(i))
            _drop_last_step(rec)
            self._stop(rec, f"estimated error {err:.1e} above the tolerance")
            return
        ends = rec.step_ends[-SHRINK_STEPS:]
        if (self.may_shrink and not rec.done and len(rec.step_ends) > SHRINK_STEPS
                and all(j in self.cols for j in ends)):
            last = {k: np.array([self.cols[j][k] for j in ends]) for k in self.cols[i]}
            if np.all(last["err_trunc"] + last["err_alias"] < self.tol / SHRINK_BELOW):
                H2 = shrunk_harmonics(self.disc.H, last, self.tol)
                if H2 < self.disc.H:
                    worst = {k: float(np.max(v)) for k, v in last.items()}
                    self.decision = ("shrink", (H2, worst))
                    self._stop(rec, f"estimated error below {self.tol / SHRINK_BELOW:.1e}")

    @staticmethod
    def _stop(rec, why):
        rec.done = True
        rec.status, rec.message = "max_steps", f"segment end: {why}"


def point_errors(disc):
    """``errors(Z, t) -> dict`` of one point, as :func:`orbit_errors` forms them (NaN where it
    cannot); for the AFT (the adaptive count's discretization) with its estimator built once
    (``orbit_errors`` builds it, a balance of ``2H`` harmonics, per call)."""
    if disc.kind == "collocation-states":
        one = _MeshErrors(disc)
        names = ERROR_COLUMNS["collocation-states"]
    elif disc.kind != "aft" or disc.H == 0 or disc.nu != 1:
        return lambda Z, t: {k: float(v[0]) for k, v in orbit_errors(disc, Z[None, :], t[None, :]).items()}
    else:
        one = _AFTErrors(disc)
        names = ERROR_COLUMNS["aft"]

    def errors(Z, t):
        out = dict.fromkeys(names, math.nan)
        try:
            values = one(Z, t)
        except (ConvergenceError, ValueError, np.linalg.LinAlgError, FloatingPointError):
            return out           # as orbit_errors: no estimate (a singular bordered Jacobian)
        out.update({k: float(v) if np.isfinite(v) else math.nan for k, v in values.items()})
        return out
    return errors


def _drop_last_step(rec):
    """Remove the recorder's last step (its end and the series points inside it)."""
    k = rec.step_ends[-2]
    del rec.points[k + 1:], rec.tangents[k + 1:]
    del rec.step_ends[-1]
    rec.det_signs = {i: s for i, s in rec.det_signs.items() if i <= k}
    rec.special = [s for s in rec.special if s.index <= k]
    rec.fold_guesses = [g for g in rec.fold_guesses if g[1] <= k]


def _segment_accuracy(seg, cols):
    """The estimate columns of a segment from the step ends' estimates ``cols`` (a point inside
    a step: the larger of its step's two ends, as :func:`attach_accuracy`)."""
    disc, n = seg.discretization, len(seg)
    ends = [i for i in _ends(seg) if i < n]
    missing = [i for i in ends if i not in cols]
    if missing:
        extra = orbit_errors(disc, seg.solutions, seg.tangents, points=missing)
        for i in missing:
            cols[i] = {k: float(v[i]) for k, v in extra.items()}
    names = next(iter(cols.values())).keys() if cols else ()
    out = {}
    for name in names:
        v = np.full(n, np.nan)
        for i in ends:
            v[i] = cols[i][name]
        out[name] = v
    _fill_inside(out, ends)
    if disc.H is not None:
        out["harmonics"] = np.full(n, float(disc.H))
    else:
        out["intervals"] = np.full(n, float(disc.n_intervals))
    return out


def _run_segment(run_segment, disc, Z, direction, budget, check, segments, size):
    """One segment of an adaptive branch (``run_segment``'s engine run), or None when it could
    not start (its start did not converge, or Ctrl-C before its first point) after earlier
    segments: those are then the branch, the last one marked failed or interrupted."""
    try:
        return run_segment(disc, Z, direction, budget, check)
    except (ConvergenceError, KeyboardInterrupt) as exc:
        if not segments:
            raise
        last = segments[-1]
        last.success = False
        last.status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        last.message = (f"interrupted at {last.param[-1]:.10g}; the branch so far is kept"
                        if isinstance(exc, KeyboardInterrupt) else
                        f"the continuation {size} could not start from {last.param[-1]:.10g}: {exc}")
        return None


def _add_segment(seg, check, start, segments) -> int:
    """Attach the segment's estimates (its start's from the previous end when given) and keep
    it; its step count."""
    if start is not None:
        check.cols.setdefault(0, start)
    seg.accuracy = _segment_accuracy(seg, check.cols)
    segments.append(seg)
    return int(seg.counters.get("steps", 0))


def _segment_record(seg) -> dict:
    """The provenance entry of a segment: points, worst estimate, parameter range."""
    err = error_of(seg.accuracy)
    worst = float(np.nanmax(err)) if err is not None and np.any(np.isfinite(err)) else math.nan
    return dict(points=len(seg), worst_error=worst, start=float(seg.param[0]), end=float(seg.param[-1]))


def _ends_branch(seg, check, steps, max_steps) -> bool:
    """True when ``seg`` is the last segment: no change was asked for, or its run stopped for
    another reason than its step budget, or the branch's budget is spent (then marked so)."""
    if check.decision is None or seg.status != "max_steps" or steps >= max_steps:
        if check.decision is not None:
            seg.status, seg.success = "max_steps", False
            seg.message = f"step budget exhausted (max_steps = {max_steps})"
        return True
    return False


def adaptive_branch(start_at, run_segment, tolerance, max_steps, harmonics_first=HARMONICS_FIRST, beyond=None):
    """A periodic AFT branch whose harmonic count changes along it (module docstring).

    Parameters
    ----------
    start_at : callable
        ``start_at(H, n_t) -> (disc, Z, direction)``: the first point of the branch at ``H``
        harmonics (``n_t`` samples, None for the default).
    run_segment : callable
        ``run_segment(disc, Z, direction, max_steps, check) -> Branch``: the continuation
        (``drivers.continuation`` with its analysis passes and without the error estimates)
        from ``Z`` with ``check`` called after every step (it may stop the run).
    tolerance : float
        Relative error of the orbit to meet.
    max_steps : int
        The step budget of the whole branch.
    beyond : callable, optional
        ``beyond(disc, Z, tangent, max_steps) -> Branch``: the rest of the branch by another
        method where the count the estimates ask for passes :data:`HARMONICS_MAX` (the
        command's default: the collocation of the states on an adaptive mesh, from the last
        good point ``Z`` of ``disc`` with its tangent); its branch is stitched after the
        harmonic-balance segments (:func:`stitch_segments`).  If it raises
        :class:`ConvergenceError` (the other method could not start there), or is None, the
        count stops at :data:`HARMONICS_MAX` and the message says what the estimates ask for.

    Returns
    -------
    Branch
        The segments stitched (:func:`stitch_segments`), with ``accuracy["harmonics"]`` per
        point and ``provenance["adaptive_harmonics"]``: the tolerance and each segment's
        harmonic count, parameter range and worst estimate; after a switch to ``beyond``,
        ``provenance["method_switch"]``: where, why and to which discretization.
    """
    H, oversampling = int(harmonics_first), 1
    disc, Z, direction = start_at(H, None)
    start = None              # the estimates of a grown segment's start: its previous end's
    segments, record, steps = [], [], 0
    note, switch = "", None
    while True:
        check = _Segment(disc, tolerance, may_grow=H < HARMONICS_MAX, may_shrink=H > HARMONICS_LEAST)
        seg = _run_segment(run_segment, disc, Z, direction, max(1, max_steps - steps), check, segments,
                           f"at {H} harmonics")
        if seg is None:
            break
        steps += _add_segment(seg, check, start, segments)
        record.append(dict(harmonics=H, n_t=int(disc.n_t), **_segment_record(seg)))
        if _ends_branch(seg, check, steps, max_steps):
            break
        what, info = check.decision
        record[-1]["next"] = what
        # a padded orbit is the same orbit, whose error is at most what it was accepted with
        last = len(seg) - 1
        start = check.cols.get(last) if what == "grow" else None
        if what == "grow":
            H2 = needed_harmonics(H, info, tolerance)
            # the aliasing falls with the samples: twice the samples where it is above its share
            # (they stay doubled: the orbits only sharpen where the count grows)
            if info["err_alias"] > (1 - TRUNCATION_SHARE) * tolerance:
                oversampling *= OVERSAMPLING
            if H2 > HARMONICS_MAX and beyond is not None:
                switch = _switch(beyond, seg, info, H2, max(1, max_steps - steps))
                if switch is not None:
                    record[-1].update(at={k: float(v) for k, v in info.items()}, next="switch")
                    break
            if H2 > HARMONICS_MAX:
                note = (f"; the estimated orbit error {info['err_trunc'] + info['err_alias']:.1e} would need "
                        f"about {H2} harmonics (above {HARMONICS_MAX}) near {seg.param[-1]:.6g}: give "
                        "--harmonics, or --method collocation for a sharp stick-slip")
            H2 = min(H2, HARMONICS_MAX)
        else:
            H2, info = info
        n_t = fast_length(math.ceil(oversampling * default_n_t(H2, disc._analytic(disc.model))))
        record[-1].update(at={k: float(v) for k, v in info.items()})
        Zend, tend = seg.solutions[-1], seg.tangents[-1]
        direction = disc.resize(tend, H2, n_t=n_t)[1]
        disc, Z = disc.resize(Zend, H2, n_t=n_t)
        direction /= np.linalg.norm(direction)
        H = H2
    rest, where = switch if switch is not None else (None, None)
    if rest is not None:
        segments.append(rest)
    br = stitch_segments(segments)
    err = error_of(br.accuracy)
    worst = float(np.nanmax(err)) if err is not None and np.any(np.isfinite(err)) else math.nan
    if switch is None and not note and worst > tolerance:
        why = (f"the harmonic count stops at {HARMONICS_MAX}" if max(r["harmonics"] for r in record) >= HARMONICS_MAX
               else "on a segment's first step, which the adaptive count keeps")
        note = f"; the estimated orbit error {worst:.1e} is above the tolerance {tolerance:g} ({why}; give --harmonics)"
    br.message += note
    br.provenance["adaptive_harmonics"] = dict(tolerance=float(tolerance), segments=record)
    if rest is not None:
        br.provenance["method_switch"] = where
    return br


def _switch(beyond, seg, info, H2, steps):
    """The rest of an adaptive harmonic-balance branch by ``beyond`` from the end of ``seg``
    (:func:`adaptive_branch`; ``info`` the estimates of the failed step's end, which asked for
    ``H2`` harmonics): ``(branch, record)``; ``(None, None)`` after Ctrl-C before the other
    method's first segment (the harmonic-balance segments are kept, the last one marked
    interrupted); None when ``beyond`` could not start there (the count then stops at its
    ceiling)."""
    try:
        rest = beyond(seg.discretization, seg.solutions[-1], seg.tangents[-1], steps)
    except ConvergenceError:
        return None
    except KeyboardInterrupt:
        seg.success, seg.status = False, "interrupted"
        seg.message = f"interrupted at {seg.param[-1]:.10g}; the branch so far is kept"
        return None, None
    err = float(info["err_trunc"] + info["err_alias"])
    where = dict(at=float(seg.param[-1]), harmonics=int(seg.discretization.H), harmonics_needed=int(H2),
                 error=err, to=rest.discretization.kind)
    rest.message += (f"; from {seg.param[-1]:.6g} on by the collocation of the states (adaptive mesh): the "
                     f"harmonic balance would need about {H2} harmonics (above {HARMONICS_MAX}) for the "
                     f"estimated orbit error {err:.1e} there")
    return rest, where


def _padded(rows, H, disc):
    """Harmonic-balance vectors (rows) of count ``H`` zero-padded to ``disc``'s count."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    if H == disc.H:
        return rows.copy()
    n, nh = disc.n, 2 * H + 1
    out = np.zeros((len(rows), disc.size))
    for j in range(n):
        out[:, j * disc.nh:j * disc.nh + nh] = rows[:, j * nh:(j + 1) * nh]
    out[:, n * disc.nh:] = rows[:, n * nh:]
    return out


def _on_mesh(rows, coll, disc):
    """Collocation vectors (rows) of the mesh ``coll`` as vectors of the mesh ``disc`` (their
    piecewise polynomials evaluated at ``disc``'s nodes; the same rows if the meshes agree)."""
    rows = np.asarray(rows, dtype=float).reshape(-1, coll.size)
    if coll is disc or (coll.n_intervals == disc.n_intervals and np.array_equal(coll.mesh, disc.mesh)):
        return rows.copy()
    return np.array([coll.to_mesh(r, disc) for r in rows]).reshape(-1, disc.size)


def _fourier_on_mesh(rows, aft, coll):
    """Harmonic-balance vectors (rows) of ``aft`` as vectors of the collocation ``coll``: each
    orbit's ``2H + 1`` samples, whose trigonometric polynomial it is, evaluated at ``coll``'s
    nodes (:meth:`~StateCollocationDiscretization.from_states`: the time origin moved to the
    collocation's phase condition), ``omega`` and ``lam`` carried over."""
    rows = np.asarray(rows, dtype=float).reshape(-1, aft.size)
    out = []
    for Z in rows:
        u = aft.unpack(Z)
        out.append(coll.from_states(u["samples"](2 * aft.H + 1), u["lam"], u["omega"]))
    return np.array(out).reshape(-1, coll.size)


def fourier_tangents_on_mesh(tangents, base, aft, coll, h=1e-6):
    """The tangents (rows) at the orbits ``base`` of ``aft`` as tangents of ``coll``'s vectors:
    the central difference of :func:`_fourier_on_mesh` along each (the move of the time origin
    makes the map nonlinear), normalized."""
    tangents = np.asarray(tangents, dtype=float).reshape(-1, aft.size)
    base = np.asarray(base, dtype=float).reshape(-1, aft.size)
    out = []
    for t, Z in zip(tangents, base):
        d = h * max(1.0, float(np.linalg.norm(Z))) / max(float(np.linalg.norm(t)), 1e-300)
        v = (_fourier_on_mesh(Z + d * t, aft, coll)[0] - _fourier_on_mesh(Z - d * t, aft, coll)[0]) / (2 * d)
        out.append(v / np.linalg.norm(v))
    return np.array(out).reshape(-1, coll.size)


#: the per-point arrays of the analysis passes (``analysis/_stability.py``)
_POINT_ARRAYS = ("multipliers", "max_multiplier", "trivial_multiplier_error", "multiplier_agreement")


def stitch_segments(segments):
    """One Branch of consecutive segments (each starts at the previous one's end point).

    The solutions and tangents are stored zero-padded to the largest harmonic count (the same
    orbits; the harmonic columns padded with zero amplitudes); the first point of each later segment (its
    start, the previous end) is dropped; the special points, stability columns, validity,
    estimates (``accuracy["harmonics"]``: each point's count), step ends and counters of the
    segments are carried over; status and message are the last segment's.
    """
    if len(segments) == 1:
        return segments[0]
    tangent_of = {}
    if segments[-1].discretization.H is None:
        # collocation meshes (adaptive_mesh_branch): the last one, whose intervals are the most;
        # harmonic-balance segments before a switch of method (adaptive_branch's ``beyond``)
        # are evaluated on it
        big = segments[-1]
        disc = big.discretization
        converters = {}
        for s in segments:
            if s.discretization.H is None:
                converters[id(s)] = lambda rows, s=s: _on_mesh(rows, s.discretization, disc)
            else:
                converters[id(s)] = lambda rows, s=s: _fourier_on_mesh(rows, s.discretization, disc)
                tangent_of[id(s)] = lambda rows, base, s=s: fourier_tangents_on_mesh(rows, base, s.discretization,
                                                                                      disc)
    else:
        big = max(segments, key=lambda s: s.discretization.H)
        disc = big.discretization
        converters = {id(s): (lambda rows, s=s: _padded(rows, s.discretization.H, disc)) for s in segments}
    parts = [(s, 0 if k == 0 else 1) for k, s in enumerate(segments)]
    sols = np.vstack([converters[id(s)](s.solutions[a:]) for s, a in parts])
    tans = np.vstack([tangent_of[id(s)](s.tangents[a:], s.solutions[a:]) if id(s) in tangent_of
                      else converters[id(s)](s.tangents[a:]) for s, a in parts])
    offsets = np.cumsum([0] + [len(s) - a for s, a in parts])[:-1]
    shift = [int(o) - a for o, (s, a) in zip(offsets, parts)]        # segment index -> branch index
    special = []
    for (s, a), d in zip(parts, shift):
        for sp in s.special:
            if sp.index < a:
                continue
            sp.index += d
            sp.solution = converters[id(s)](sp.solution)[0]
            if s.discretization.H is not None:
                sp.data.setdefault("harmonics", int(s.discretization.H))
            else:
                sp.data.setdefault("intervals", int(s.discretization.n_intervals))
            special.append(sp)
    def joined(get, width=None):
        """The per-point arrays ``get(segment)`` of the segments, joined (zero-padded to
        ``width`` columns: the amplitudes and phases of the harmonics a segment has not)."""
        blocks = []
        for s, a in parts:
            v = np.asarray(get(s))[a:]
            if width is not None and v.shape[1] < width:
                v = np.hstack([v, np.zeros((len(v), width - v.shape[1]))])
            blocks.append(v)
        return np.concatenate(blocks)

    states = segments[0].states
    # (the collocations have no ``rms``)
    per_state = {name: {x: joined(lambda s, x=x: getattr(s, name)[x]) for x in states}
                 if all(x in getattr(s, name) for s in segments for x in states) else {}
                 for name in ("ptp", "min", "max", "mean", "rms")}
    harmonic = {name: {x: joined(lambda s, x=x: getattr(s, name)[x], disc.H) for x in states}
                for name in ("amplitude", "phase") if all(getattr(s, name) for s in segments)}
    keys = set.intersection(*(set(s.validity) for s in segments))
    validity = {k: joined(lambda s, k=k: s.validity[k]) for k in keys}
    keys = set.intersection(*(set(s.dissipation) for s in segments))
    dissipation = {k: joined(lambda s, k=k: s.dissipation[k]) for k in keys}
    counters = {}
    for s in segments:
        for k, v in s.counters.items():
            counters[k] = counters.get(k, 0) + v
    last = segments[-1]
    prov = dict(last.provenance)
    prov["sizes"] = dict(big.provenance.get("sizes", {}))
    # the columns of the padded orbits are the segments' own (the same orbits)
    br = Branch(kind=big.kind, states=states, variables=big.variables, harmonics=big.harmonics,
                index_omega=big.index_omega, solutions=sols, tangents=tans,
                param=joined(lambda s: s.param), omega=joined(lambda s: s.omega),
                ptp=per_state["ptp"], vmin=per_state["min"], vmax=per_state["max"], mean=per_state["mean"],
                rms=per_state["rms"], amplitude=harmonic.get("amplitude"), phase=harmonic.get("phase"),
                dissipation=dissipation, validity=validity, special=special, counters=counters,
                status=last.status, message=last.message, success=last.success, provenance=prov)
    br.discretization = disc
    br.options = last.options
    br.amplitude_weights = getattr(big, "amplitude_weights", None)
    br.step_ends = sorted({int(i) + d for (s, a), d in zip(parts, shift) for i in s.step_ends if i >= a}
                          | {0, len(br) - 1})
    br.det_signs = {int(i) + d: v for (s, a), d in zip(parts, shift)
                    for i, v in getattr(s, "det_signs", {}).items() if i >= a}
    br.stable = np.concatenate([s.stable[a:] for s, a in parts])
    names = list(dict.fromkeys(k for s in segments for k in s.accuracy))     # a switch of method: both kinds
    br.accuracy = {k: np.concatenate([np.asarray(s.accuracy.get(k, np.full(len(s), np.nan)))[a:] for s, a in parts])
                   for k in names}
    if "mesh" in prov["sizes"]:
        prov["sizes"] = dict(disc.sizes)
    for name in _POINT_ARRAYS:
        have = [getattr(s, name) for s in segments if getattr(s, name) is not None]
        if not have:
            continue
        tail = np.shape(have[0])[1:]
        dtype = np.asarray(have[0]).dtype
        blocks = []
        for s, a in parts:
            v = getattr(s, name)
            v = np.full((len(s),) + tail, np.nan, dtype=dtype) if v is None else np.asarray(v)
            blocks.append(v[a:])
        setattr(br, name, np.concatenate(blocks))
    br.stability_method = " + ".join(dict.fromkeys(s.stability_method for s in segments if s.stability_method))
    if all(s.motion is not None for s in segments):
        br.motion = [m for s, a in parts for m in list(s.motion)[a:]]
    return br


# -- the adaptive mesh of the collocation of the states ------------------------------------------
#: the interval count of an adaptive collocation stops here
INTERVALS_MAX = 400
#: the least growth of the interval count when the tolerance is not met
INTERVAL_GROWTH = 1.25
#: a mesh that has served :data:`REMESH_STEPS` steps is equidistributed again where the mesh
#: defect passes this share of the tolerance (or the tolerance itself)
REMESH_AT, REMESH_STEPS = 0.5, 3
#: equidistribution passes at the start of the branch (each one a Newton correction at fixed lam)
START_PASSES = 2


def grown_intervals(disc, err, tolerance):
    """The interval count the mesh defect ``err`` of ``disc`` asks for: the error of the states
    between the mesh points falls like ``N_int^-(p+1)`` (de Boor & Swartz 1973), aimed at the
    tolerance over :data:`GROW_TO`; at least :data:`INTERVAL_GROWTH` times more intervals."""
    N, p = disc.n_intervals, disc.degree
    want = N * (GROW_TO * err / tolerance) ** (1.0 / (p + 1)) if err > 0 and np.isfinite(err) else 2 * N
    return int(max(math.ceil(INTERVAL_GROWTH * N), math.ceil(want)))


class _MeshSegment(_Segment):
    """The per-step check of one segment of an adaptive collocation (the engine's ``progress``
    callback, as :class:`_Segment` for the harmonic count).

    At every step end the mesh defect ``err_mesh`` of the new point is formed (one sparse solve
    on the mesh with every interval halved) and kept.  Above :data:`REMESH_AT` of the
    tolerance, after at least :data:`REMESH_STEPS` steps on this mesh, the run stops there
    (``"remesh"``: the same count, equidistributed for the orbit as it is now); above the
    tolerance the step is removed and the run stops at the last good point: ``"remesh"`` again
    if the mesh has served that many steps, ``"grow"`` (more intervals) if a fresh mesh
    failed."""

    def __init__(self, disc, tolerance, may_grow):
        self.disc, self.tol, self.may_grow = disc, tolerance, may_grow
        self.cols = {}
        self._one = None
        self.decision = None

    def __call__(self, rec):
        got = self._step_end_estimate(rec)
        if got is None:
            return
        i, one = got
        self.cols[i] = one
        if _ends_at_hopf(rec, one):
            return
        err = one["err_mesh"]
        served = len(rec.step_ends) - 1 > REMESH_STEPS       # steps on this mesh before this one
        if err > self.tol and len(rec.step_ends) > 1 and (served or self.may_grow):
            self.decision = ("remesh" if served else "grow", self.cols.pop(i))
            _drop_last_step(rec)
            _Segment._stop(rec, f"estimated error {err:.1e} above the tolerance")
        elif served and err > REMESH_AT * self.tol:
            self.decision = ("remesh", one)
            _Segment._stop(rec, f"estimated error {err:.1e} near the tolerance: a new mesh")


def equidistributed_start(disc, Z, passes=START_PASSES, n_intervals=None):
    """``(disc, Z)`` after ``passes`` equidistributions of the mesh (the first to ``n_intervals``
    if given), each orbit corrected at its fixed ``lam`` by the engine's Newton."""
    for k in range(passes):
        new = disc.with_mesh(disc.equidistributed_mesh(Z, n_intervals if k == 0 else None))
        e = np.zeros(new.size)
        e[-1] = 1.0
        Zn, _ = correct(new, disc.to_mesh(Z, new), e, float(Z[-1]), max_iter=30)
        disc, Z = new, Zn
    return disc, Z


#: the most interval-count growths of the start (:func:`_start_within`)
START_GROWTHS = 4


def _start_within(disc, Z, tolerance):
    """``(disc, Z)`` of a start whose mesh defect meets ``tolerance``: while it does not, the
    count grows as in a segment (:func:`grown_intervals`, at most :data:`START_GROWTHS` times
    and up to :data:`INTERVALS_MAX`), the mesh equidistributed and the orbit corrected at its
    ``lam`` (the engine checks only the ends of its steps, never the start it is given)."""
    fixed_lam = np.zeros(disc.size)
    fixed_lam[-1] = 1.0
    for _ in range(START_GROWTHS):
        err = point_errors(disc)(Z, fixed_lam)["err_mesh"]
        if not err > tolerance or disc.n_intervals >= INTERVALS_MAX:
            break
        N2 = min(grown_intervals(disc, err, tolerance), INTERVALS_MAX)
        disc, Z = equidistributed_start(disc, Z, passes=1, n_intervals=N2)
    return disc, Z


def adaptive_mesh_branch(disc, Z, direction, run_segment, tolerance, max_steps):
    """A periodic branch of the collocation of the states whose mesh follows the orbit
    (de Boor's equidistribution, AUTO-07p's adaptation) and whose interval count grows until
    the mesh defect meets ``tolerance`` (:class:`_MeshSegment`).

    The start is equidistributed (:func:`equidistributed_start`); the branch is continued in
    segments, each one engine run on one mesh (``run_segment(disc, Z, direction, max_steps,
    check)`` as for :func:`adaptive_branch`).  At a segment's end the last point is
    interpolated onto the new mesh (:meth:`~StateCollocationDiscretization.to_mesh`, exact
    polynomial evaluation), with its tangent, and the next run corrects it on the hyperplane
    orthogonal to that tangent and starts a new ANM series there.  The segments are stitched
    (:func:`stitch_segments`): solutions stored on the last mesh, ``accuracy["intervals"]`` the
    count each point was computed with, special points and stability columns those of their
    segment; ``provenance["adaptive_mesh"]`` records each segment's mesh size, range and
    worst estimate.
    """
    first = disc
    disc, Z = equidistributed_start(disc, Z)
    disc, Z = _start_within(disc, Z, tolerance)
    if np.ndim(direction) != 0:
        direction = first.to_mesh(np.asarray(direction, dtype=float), disc)
        direction /= np.linalg.norm(direction)
    segments, record, steps, note = [], [], 0, ""
    start = None
    while True:
        check = _MeshSegment(disc, tolerance, may_grow=disc.n_intervals < INTERVALS_MAX)
        seg = _run_segment(run_segment, disc, Z, direction, max(1, max_steps - steps), check, segments,
                           f"on {disc.n_intervals} intervals")
        if seg is None:
            break
        steps += _add_segment(seg, check, start, segments)
        record.append(dict(intervals=disc.n_intervals, **_segment_record(seg)))
        if _ends_branch(seg, check, steps, max_steps):
            break
        what, info = check.decision
        record[-1]["next"] = what
        N2 = disc.n_intervals
        if what == "grow":
            N2 = grown_intervals(disc, info["err_mesh"], tolerance)
            if N2 > INTERVALS_MAX:
                note = (f"; the estimated orbit error {info['err_mesh']:.1e} would need about {N2} intervals "
                        f"(above {INTERVALS_MAX}) near {seg.param[-1]:.6g}: give a larger --degree")
                N2 = INTERVALS_MAX
        start = None
        Zend, tend = seg.solutions[-1], seg.tangents[-1]
        new = disc.with_mesh(disc.equidistributed_mesh(Zend, N2))
        Z, direction = disc.to_mesh(Zend, new), disc.to_mesh(tend, new)
        direction /= np.linalg.norm(direction)
        disc = new
    # a segment of its start alone (a fresh mesh whose first step failed) repeats the previous
    # segment's end, or the branch's start, which the next segment starts from again on its
    # finer mesh (the first one's kept, the belt's 40 x 3 branch began with its start on the
    # coarser mesh, 1.4e-6 above the tolerance, next to the same point within it)
    last = len(segments) - 1
    kept = [s for k, s in enumerate(segments) if len(s) > 1 or k == last]
    br = stitch_segments(kept)
    err = error_of(br.accuracy)
    worst = float(np.nanmax(err)) if err is not None and np.any(np.isfinite(err)) else math.nan
    if not note and worst > tolerance:
        note = f"; the estimated orbit error {worst:.1e} is above the tolerance {tolerance:g}"
    br.message += note
    br.provenance["adaptive_mesh"] = dict(tolerance=float(tolerance), segments=record)
    return br
