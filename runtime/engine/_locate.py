"""Locating points on a branch: a root of a test function between two points, and folds.

Folds (turning points in ``lam``) are bracketed by a sign change of the tangent's ``lam``
component and refined by a root-find along the branch (DESIGN §6).
"""
from __future__ import annotations

import numpy as np

from .._roots import CubicHermite, bracketed_root
from ..errors import ConvergenceError
from ..results._branch import SpecialPoint
from ._newton import correct, tangent_at

__all__ = ["locate_on_branch", "locate_on_interpolant", "locate_folds", "hermite_chord"]


def hermite_chord(Za, ta, Zb, tb):
    """Cubic Hermite interpolant of a branch between two points, in the chord coordinate.

    ``s`` runs from 0 (``Za``) to 1 (``Zb``); the end slopes are the unit tangents
    ``ta``, ``tb`` times the chord length (arclength ~ chord length between close points).

    Returns
    -------
    CubicHermite
        ``Z(s)``, vector valued.
    """
    Za, Zb = np.asarray(Za, dtype=float), np.asarray(Zb, dtype=float)
    hc = np.linalg.norm(Zb - Za)
    return CubicHermite(Za, hc * np.asarray(ta, dtype=float), Zb, hc * np.asarray(tb, dtype=float))


def locate_on_branch(disc, Za, Zb, test, counters=None, xtol=1e-11, stol=1e-15, ends=None, settled=None):
    """Root of a scalar ``test(Z)`` between two branch points, by Brent's method.

    Points in between are Newton-corrected on the hyperplane through ``Za + s (Zb - Za)``
    orthogonal to the chord, so the search follows the branch even around turning points.

    ``stol`` is the tolerance on the chord coordinate ``s`` in [0, 1].  ``ends``: the test's
    values at ``Za`` and ``Zb`` when the caller has them for these very points (then the two
    ends are taken as they are, not corrected again: a Jacobian, a factorization and a test
    evaluation each).  ``settled(Z, g)``: True where the test value ``g`` at the corrected
    point ``Z`` cannot be told from 0 (within its own estimated error); the search ends at the
    first such point (an end of the bracket included), since points closer to the root would
    only follow the test's noise.

    Returns
    -------
    Z : ndarray
        The corrected point where ``test`` changes sign.
    """
    Za, Zb = np.asarray(Za, dtype=float), np.asarray(Zb, dtype=float)
    chord = Zb - Za

    def end(s, Z):
        Zc, _ = correct(disc, Z, chord, float(chord @ Z), counters=counters, xtol=xtol)
        return s, Zc, test(Zc)

    if ends is not None:
        lo, hi = (0.0, Za, float(ends[0])), (1.0, Zb, float(ends[1]))
    else:
        lo, hi = end(0.0, Za), end(1.0, Zb)
    return _brent_on_chord(disc, Za, chord, test, lo, hi, counters, xtol, stol, "locate_on_branch", settled)


class _Settled(Exception):
    """Raised inside a root search at a point whose test value is settled (``Z``: the point,
    or the interpolant's parameter)."""

    def __init__(self, Z):
        super().__init__()
        self.Z = Z


def _brent_on_chord(disc, Za, chord, test, lo, hi, counters, xtol, stol, who, settled=None):
    """Brent's method on the chord coordinate ``c`` between two corrected points.

    The point at ``c`` is Newton-corrected on the hyperplane ``chord . Z = chord . (Za + c
    chord)`` from the straight line between the bracket's two points.  ``lo``, ``hi``:
    ``(c, Z, test(Z))`` of corrected points whose test values differ in sign; those values
    are used as measured, never evaluated again.  Next to a fold the corrected points scatter
    by the Newton's rounding floor (some 1e-13 of ``|Z|`` on the belt at H = 20), and a test
    function sensitive to that scatter (the product of the multipliers nearest 1: 1e-10)
    would not keep its sign at a bracket end corrected a second time from another guess.

    ``settled(Z, g)``: see :func:`locate_on_branch`.

    Returns
    -------
    Z : ndarray
        The corrected point where the measured test values change sign, within ``stol``, or
        the first point found whose test value is ``settled``.
    """
    (ca, Zl, gl), (cb, Zh, gh) = sorted((lo, hi), key=lambda e: e[0])
    if not (np.isfinite(gl) and np.isfinite(gh)) or gl * gh > 0:
        raise ConvergenceError(f"{who}: the test function does not change sign")
    if settled is not None:
        for Z, g in sorted(((Zl, gl), (Zh, gh)), key=lambda e: abs(e[1])):
            if settled(Z, g):
                return Z
    cache = {ca: (Zl, gl), cb: (Zh, gh)}

    def point(c):
        if c not in cache:
            w = (c - ca) / (cb - ca)
            Z, _ = correct(disc, (1.0 - w) * Zl + w * Zh, chord, float(chord @ (Za + c * chord)),
                           counters=counters, xtol=xtol)
            g = test(Z)
            cache[c] = (Z, g)
            if settled is not None and settled(Z, g):
                raise _Settled(Z)
        return cache[c]

    try:
        c = bracketed_root(lambda c: point(c)[1], ca, cb, xtol=stol, rtol=1e-15, maxiter=200)
    except _Settled as done:
        return done.Z
    return point(c)[0]


def locate_on_interpolant(disc, Za, ta, Zb, tb, test, counters=None, xtol=1e-11, stol=1e-15,
                          bracket=(0.0, 1.0), max_corrections=8, settled=None):
    """Root of a scalar ``test(Z)`` between two branch points, with few corrected points.

    The root is first found by Brent's method on the cubic Hermite interpolant of the branch
    (:func:`hermite_chord`, tangents ``ta``, ``tb``): its points are not corrected, so this
    costs no factorization, only evaluations of ``test``.  The interpolant's error (fourth
    order in the step) leaves that root some 1e-6 of the chord off; it is then refined on
    Newton-corrected points (each on the hyperplane orthogonal to the chord, as in
    :func:`locate_on_branch`): one Newton step with the interpolant's slope of ``test``, then
    secant steps, kept inside the bracket, until the step in the chord coordinate, or the
    bracket itself, is below ``stol``.  The equilibria's two Hopf points take 3 corrections in
    all on the belt and 6 on the tanh x exp belt (the Brent search on corrected points took 33
    and 43 factorizations).  When the secant does not settle within ``max_corrections``
    corrections (a test function whose noise on corrected points exceeds ``stol`` times its
    slope: the multipliers at a fold), Brent's method finishes on the bracket reached so far,
    with the test values measured at its two corrected ends, so a root is always returned.

    Parameters
    ----------
    Za, Zb : ndarray
        Corrected branch points; ``ta``, ``tb`` their unit tangents, oriented from ``Za``
        to ``Zb``.
    bracket : (float, float)
        Interval of the interpolant's parameter ``s`` (0 at ``Za``, 1 at ``Zb``) at whose
        ends ``test`` on the interpolant is finite and changes sign.
    stol : float
        Tolerance on the chord coordinate (0 at ``Za``, 1 at ``Zb``).
    settled : callable, optional
        ``settled(Z, g)``, as in :func:`locate_on_branch`: Brent's method on the interpolant
        stops at the first interpolant point where it is True (that point's parameter is the
        guess corrected next), and the search returns the first corrected point where it is.

    Returns
    -------
    Z : ndarray
        The corrected point where ``test`` changes sign.
    """
    Za, Zb = np.asarray(Za, dtype=float), np.asarray(Zb, dtype=float)
    herm = hermite_chord(Za, ta, Zb, tb)
    chord = Zb - Za
    cc = float(chord @ chord)

    def coord(Z):
        return float(chord @ (Z - Za)) / cc

    def on_interpolant(s):
        return test(herm(s))

    sa, sb = bracket
    # the ends of the bracket: (chord coordinate, point, test value, corrected?); the
    # interpolant's ends are the corrected branch points themselves
    ends = []
    for s in (sa, sb):
        Z = Za if s == 0.0 else Zb if s == 1.0 else herm(s)
        ends.append((coord(Z), Z, test(Z), s in (0.0, 1.0)))
    fa, fb = ends[0][2], ends[1][2]
    if not (np.isfinite(fa) and np.isfinite(fb)) or fa * fb > 0:
        raise ConvergenceError("locate_on_interpolant: the test function does not change sign")
    if settled is None:
        s0 = bracketed_root(on_interpolant, sa, sb, xtol=1e-14, rtol=1e-15)
    else:
        # on the interpolant too, a value within the test's error of 0 is as close as it gets

        def on_interpolant_settled(s):
            g = on_interpolant(s)
            if settled(herm(s), g):
                raise _Settled(s)
            return g

        try:
            s0 = bracketed_root(on_interpolant_settled, sa, sb, xtol=1e-14, rtol=1e-15)
        except _Settled as done:
            s0 = done.Z
    lo, hi = ends

    def tightened(lo, hi, c, Z, g):
        """The bracket with the corrected point (c, Z, test g) replacing the end of g's sign."""
        return (lo, (c, Z, g, True)) if g * lo[2] < 0 else ((c, Z, g, True), hi)

    def corrected(c, guess):
        Z, _ = correct(disc, guess, chord, float(chord @ (Za + c * chord)), counters=counters, xtol=xtol)
        return Z, test(Z)

    c0 = coord(herm(s0))
    Z0, g0 = corrected(c0, herm(s0))
    if settled is not None and settled(Z0, g0):
        return Z0
    # the interpolant's derivatives give the slope of test and of Z in the chord coordinate
    h = 1e-4 * max(sb - sa, 1e-12)
    s_lo, s_hi = max(s0 - h, 0.0), min(s0 + h, 1.0)
    dZ = (herm(s_hi) - herm(s_lo)) / (coord(herm(s_hi)) - coord(herm(s_lo)))
    slope = (on_interpolant(s_hi) - on_interpolant(s_lo)) / (coord(herm(s_hi)) - coord(herm(s_lo)))
    previous_step = np.inf
    for _ in range(max_corrections - 1):
        if g0 == 0:
            return Z0
        lo, hi = tightened(lo, hi, c0, Z0, g0)
        if abs(hi[0] - lo[0]) <= stol and lo[3] and hi[3]:
            return min(lo, hi, key=lambda e: abs(e[2]))[1]
        c1 = c0 - g0 / slope if np.isfinite(slope) and slope != 0 else np.nan
        # converged (a secant step below stol, even one that rounds to nothing at the
        # bracket's end: bisecting then would only move away from the root)
        if abs(c1 - c0) <= stol:
            return Z0
        if not min(lo[0], hi[0]) < c1 < max(lo[0], hi[0]):
            c1 = 0.5 * (lo[0] + hi[0])        # outside the bracket: bisect
        step = abs(c1 - c0)
        # below 1e-10 of the chord, a step that no longer halves: the secant then only
        # follows the rounding noise of test (1e-15 of its scale, some 1e-14 of the chord at
        # a Hopf point of the belt)
        if step <= stol or previous_step < 1e-10 and step > 0.5 * previous_step:
            return Z0
        Z1, g1 = corrected(c1, Z0 + (c1 - c0) * dZ)
        if settled is not None and settled(Z1, g1):
            return Z1
        if g1 != g0:
            slope = (g1 - g0) / (c1 - c0)
        dZ = (Z1 - Z0) / (c1 - c0)
        c0, Z0, g0, previous_step = c1, Z1, g1, step
    lo, hi = tightened(lo, hi, c0, Z0, g0)
    # no convergence: Brent on corrected points within the bracket reached, whose ends keep
    # the values measured there (an end still on the interpolant is corrected first)
    lo, hi = ((e[0], e[1], e[2]) if e[3] else (e[0], *corrected(e[0], e[1])) for e in (lo, hi))
    return _brent_on_chord(disc, Za, chord, test, lo, hi, counters, xtol, stol, "locate_on_interpolant", settled)


def _fold_from_series(disc, rec, i, counters, opts):
    """The fold between points ``i`` and ``i + 1`` from the turning point of ``lam`` on the ANM
    step's series (``rec.fold_guesses``), or None (the chord search below then runs as for
    the other engines).

    The series' point is Newton-corrected orthogonally to the series' tangent; the exact
    tangent there has a small ``lam`` component ``t_lam`` (the series' error), and the fold
    lies at the arclength ``-t_lam / k`` from it (``k = dt_lam/ds``, from the series), where
    the next guess goes.  ``lam`` is quadratic in the arclength at a fold, so the point is
    accepted when ``t_lam^2 / (2 |k|)``, the distance in ``lam`` to the fold, is below
    1e-14 of ``max(|lam|, 1)``; each round costs one correction and one tangent.
    """
    for first, last, Zg, tg, k in rec.fold_guesses:
        if first <= i < last:
            break
    else:
        return None
    if not np.isfinite(k) or k == 0:
        return None
    for _ in range(4):
        try:
            Zf, _ = correct(disc, Zg, tg, float(tg @ Zg), counters=counters, xtol=opts.newton_xtol)
            t = tangent_at(disc, Zf, tg, counters)
        except ConvergenceError:
            return None
        if t[-1] ** 2 / (2 * abs(k)) <= 1e-14 * max(abs(Zf[-1]), 1.0):
            return Zf
        Zg, tg = Zf - (t[-1] / k) * t, t
    return None


def locate_folds(disc, rec, counters, opts):
    """Folds: sign changes of the tangent's lam component, refined by a root-find (DESIGN §6)."""
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
        Zf = _fold_from_series(disc, rec, i, counters, opts)
        # The tangents are oriented along the chord: across a sharp fold the branch may turn by
        # more than a right angle within one step, and orienting by the first tangent would
        # then flip the sign of the second one's lam component.
        for a, b in ((i, i + 1), (max(i - 1, 0), i + 1), (i, min(i + 2, last)), (max(i - 1, 0), min(i + 2, last))):
            if Zf is not None:
                break
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
        om = Zf[disc.omega_index] if disc.omega_index is not None else np.nan
        kind = "fold"
        if A is not None and abs(Zf @ rec.amp_w) < 1e-4 * np.max(np.abs(A)):
            # lam' also vanishes where a periodic branch passes through a Hopf point (zero
            # amplitude) into its half-period-shifted copy: that is not a fold
            kind = "hopf"
            if any(h.kind == "hopf" and abs(h.param - Zf[-1]) <= 1e-8 * abs(Zf[-1]) for h in rec.special + out):
                continue    # already recorded (the tangent jitters at zero amplitude)
        out.append(SpecialPoint(kind, float(Zf[-1]), float(om), int(i), Zf))
    return out
