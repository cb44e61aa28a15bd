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

:func:`adaptive_periodic_branch` chooses the harmonic count of an AFT branch for a tolerance
(default 1e-6 relative on the orbit, option ``error_tolerance``): the branch is continued at
:data:`HARMONICS_FIRST` harmonics; where its worst estimated error exceeds the tolerance the
count is grown to what the estimates say (the truncation error decays like ``rho^H``, ``rho``
each point's measured ``decay_rate``: ``H' = H + log(tol / err) / log(rho)`` plus a margin,
:func:`needed_harmonics`) and the branch is continued again from its start at that count, until
the worst estimate meets the tolerance or :data:`HARMONICS_MAX` is reached; a count asked
for past :data:`HARMONICS_MAX` is not run (the branch so far is kept, and its message says the
error reached and the count it would need: a stick-slip as sharp as the LuGre belt's asks for
several hundred harmonics, where the collocation is the better method).  Where the estimate is far below the tolerance the
first count is kept (no shrinking: the count is one for the whole branch, so that every
saved file, restart, plot and export reads it as before).  What is not done: a harmonic
count that changes along one branch (restarting the ANM series at a new size mid-branch).
"""
from __future__ import annotations

import math

import numpy as np

from ..discretizations._error import orbit_errors

__all__ = ["attach_accuracy", "error_of", "adaptive_periodic_branch", "HARMONICS_FIRST", "HARMONICS_MAX"]

#: first harmonic count of the adaptive search, and its ceiling
HARMONICS_FIRST, HARMONICS_MAX = 30, 100
#: the least growth of the count when the tolerance is not met, and the margin of the
#: extrapolated count (harmonics added to what the decay rate predicts)
GROWTH, MARGIN = 1.25, 4
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
    for name, v in cols.items():
        # a point inside a step: the larger estimate of its step's two ends
        for a, b in zip(ends[:-1], ends[1:]):
            if b > a + 1:
                v[a + 1:b] = np.fmax(v[a], v[b])
    if disc.H is not None:
        cols["harmonics"] = np.full(len(br), float(disc.H))
    br.accuracy = cols
    return cols


def error_of(accuracy):
    """The estimated relative error of each orbit (module docstring), or None."""
    if "err_trunc" in accuracy:
        return np.asarray(accuracy["err_trunc"]) + np.asarray(accuracy["err_alias"])
    if "err_mesh" in accuracy:
        return np.asarray(accuracy["err_mesh"])
    return None


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
        parts.append(f"H = {int(acc['harmonics'][0])}")
    line = "  accuracy: " + "; ".join(parts)
    if tolerance is not None and worst > tolerance:
        line += f"  (above the tolerance {tolerance:g}"
        line += (": give more --harmonics)" if "err_trunc" in acc else ": give more --intervals)")
    return line


def needed_harmonics(H, accuracy, tolerance):
    """The harmonic count the estimates ask for ``tolerance`` (module docstring).

    Each point whose truncation error ``err_trunc`` is above :data:`TRUNCATION_SHARE` of the
    tolerance (the rest is left to the aliasing) is a failing point; its truncation error is extrapolated with the geometric decay ``rho``
    (``decay_rate``) of its retained spectrum: ``H + log(tol / err) / log(rho) + MARGIN``
    (``1.5 H`` where ``rho`` is above :data:`RHO_MAX`: no measurable decay); the count is the
    90th percentile of these over the failing points (one point whose spectrum is not yet
    geometric does not set it: the next branch's estimates are checked again), at least
    ``GROWTH H``.
    """
    err = np.asarray(accuracy["err_trunc"], dtype=float)
    bad = np.isfinite(err) & (err > TRUNCATION_SHARE * tolerance)
    if not np.any(bad):
        return H
    tolerance = TRUNCATION_SHARE * tolerance
    rho = np.asarray(accuracy["decay_rate"], dtype=float)[bad]
    e = err[bad]
    ok = (rho > 0) & (rho <= RHO_MAX)
    each = np.full(len(e), math.ceil(1.5 * H), dtype=float)
    each[ok] = H + np.ceil(np.log(tolerance / e[ok]) / np.log(rho[ok])) + MARGIN
    return max(math.ceil(GROWTH * H), int(np.ceil(np.percentile(each, 90))))


def adaptive_periodic_branch(branch_at, tolerance, harmonics_first=HARMONICS_FIRST):
    """The branch at the harmonic count ``tolerance`` asks for (module docstring).

    Parameters
    ----------
    branch_at : callable
        ``branch_at(H, oversampling) -> Branch``: the whole branch at ``H`` harmonics and
        ``oversampling`` times the default AFT samples of ``H``, its accuracy attached
        (:func:`attach_accuracy`, the default of ``continuation``), without the analysis passes
        (the caller runs them on the branch kept).
    tolerance : float
        Relative error of the orbit to meet.
    harmonics_first : int

    Returns
    -------
    Branch
        The last branch, with ``provenance["adaptive_harmonics"]``: the tolerance and, for each
        count tried, the worst estimated error; the LU factorizations of the discarded
        branches in ``counters["harmonics_search_factorizations"]``.
    """
    H, oversampling = int(harmonics_first), 1
    tried, spent = [], 0
    while True:
        br = branch_at(H, oversampling)
        err = error_of(br.accuracy)
        worst = float(np.nanmax(err)) if err is not None and np.any(np.isfinite(err)) else math.nan
        tried.append(dict(harmonics=H, oversampling=oversampling, worst_error=worst, points=len(br)))
        if not worst > tolerance or H >= HARMONICS_MAX or br.status not in ("range", "max_steps", "equilibrium",
                                                                             "closed"):
            break
        H2 = needed_harmonics(H, br.accuracy, tolerance)
        if H2 > HARMONICS_MAX:
            # no futile rerun: the count the estimates ask for is past the ceiling
            br.message += (f"; the estimated orbit error {worst:.1e} at H = {H} is above the tolerance "
                           f"{tolerance:g} and would need about {H2} harmonics (above {HARMONICS_MAX}): give "
                           "--harmonics, or --method collocation for a sharp stick-slip")
            tried[-1]["needed"] = H2
            break
        # the aliasing falls with the samples, not with H: twice the samples where it is above
        # its share of the tolerance
        alias = np.asarray(br.accuracy["err_alias"], dtype=float)
        if np.any(alias > (1 - TRUNCATION_SHARE) * tolerance):
            oversampling *= 2
        elif H2 <= H:
            break
        spent += int(br.counters.get("factorizations", 0)) + int(br.counters.get("analysis_factorizations", 0))
        H = min(max(H, H2), HARMONICS_MAX)
    br.counters["harmonics_search_factorizations"] = spent
    br.provenance["adaptive_harmonics"] = dict(tolerance=float(tolerance), tried=tried)
    if tried[-1]["worst_error"] > tolerance and "needed" not in tried[-1]:
        br.message += (f"; the estimated orbit error {tried[-1]['worst_error']:.1e} at H = {H} is above the "
                       f"tolerance {tolerance:g} (the harmonic count stops at {HARMONICS_MAX}; give --harmonics)")
    return br
