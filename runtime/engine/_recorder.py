"""The recorder: collects the points of a run and decides when to stop (shared by all engines).

Engine-recorder protocol (every engine honours it):

1. ``recorder.done`` is polled before every step; the engine stops when it is True.
2. ``recorder.clip(series, a_max) -> a`` (series engines only): the end of a step, shortened to
   the first parameter bound or amplitude-zero crossing on the series; ``recorder.unclip()``
   forgets that event when the engine shortens the step further.
3. ``recorder.add(Z, t, step_length=None, series=None, on_bound=False)`` for every accepted
   step end (``on_bound``: a step clipped to a parameter bound whose end the engine already
   corrected on ``lam = recorder.stop_bound``; else the recorder corrects it there by Newton);
   ``recorder.add_intermediate(Z, t)`` for extra points inside a step (no stop test).
4. ``recorder.note_det_sign(Z, t, sign)``: the sign of ``det [J(Z); t^T]`` from the engine's
   own LU at a step end (the branch-point test then needs no factorization of its own);
   ``recorder.refine_tangent(Z, t)``: the exact tangent at the last step end.
5. ``recorder.counters`` (:class:`~._bordered.Counters`) is the run's work account.
6. ``recorder.stop_reason`` (``"range"``, ``"equilibrium"`` or None): the event the last
   ``clip`` shortened the step to, ``recorder.stop_bound`` the bound of a ``"range"`` event
   (else None); ``recorder.points[-1]``, ``recorder.tangents[-1]``: the
   last recorded point and its tangent (read, never modified, by the engines).
7. ``recorder.hopf_jump() -> (Z, t) or None`` (ANM) after every step: with
   ``stop_on_equilibrium=False``, the point past a Hopf point the steps accumulate on,
   already recorded; the engine continues from it.

After the run, ``points``, ``tangents``, ``step_ends``, ``det_signs``, ``special``, ``status``,
``message`` and ``amp_w`` (the signed-amplitude weights, :func:`amplitude_weights`) describe
the branch.
"""
from __future__ import annotations

import numpy as np

from .._roots import bracketed_root, lagrange_value
from ..errors import ConvergenceError
from ..results._branch import SpecialPoint
from ._locate import hermite_chord
from ._newton import correct, tangent_at

__all__ = ["Recorder", "amplitude_weights"]


def amplitude_weights(disc):
    """Weights ``w`` of a signed amplitude ``w . Z`` of a periodic orbit, or None.

    Its sign flips where a periodic branch passes through a Hopf point into the
    half-period-shifted copy of itself (the recorder stops there, or records the Hopf
    point).  A discretization may define ``amplitude_weights`` (collocation: the phase
    state at ``tau = 0`` minus its mean); harmonic balances use the cos(theta) coefficient
    of the phase variable, whose sin(theta) coefficient is fixed to zero.
    """
    w = disc.amplitude_weights
    if w is not None:
        return np.asarray(w, dtype=float)
    k = disc.phase_index
    if k is None:
        return None
    w = np.zeros(disc.size)
    w[k - 1] = 1.0
    return w


#: the grid ``clip`` looks for events on, as a fraction of the step: ``a_max * _UNIT_GRID`` is
#: ``numpy.linspace(0, a_max, 65)`` bit for bit (``i / 64`` is exact) without its overhead
_UNIT_GRID = np.linspace(0.0, 1.0, 65)


def _series_turning_point(series, a_end):
    """``(Z, t, k)`` where ``lam`` turns on an ANM step's series (the root of ``dlam/da`` in
    ``[0, a_end]``, by Brent's method on the tangent's ``lam`` component; ``k`` the derivative
    of that component there, ``a`` being close to the arclength), or None when that component
    has the same sign at both ends."""
    def slope(a):
        return series.tangent(a)[-1]
    if slope(0.0) * slope(a_end) >= 0:
        return None
    a = bracketed_root(slope, 0.0, a_end, xtol=1e-14 * a_end, rtol=1e-14)
    h = 1e-3 * a_end
    return series(a), series.tangent(a), (slope(a + h) - slope(a - h)) / (2 * h)


class Recorder:
    """Collects the points of a run and decides when to stop (shared by all engines)."""

    def __init__(self, disc, options, Z0, t0, counters):
        self.left_domain = False     # the run stopped on NaN/inf (engine/_run.py)
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
        # turning points of lam on the ANM series, (first index, last index, Z, t, k) of the step
        # holding one: the fold locator's start (engine/_locate.py)
        self.fold_guesses = []
        self._amp_max = 0.0           # the largest |amplitude| seen (_vanishing)

    # -- stop criteria applied to the ANM series before the step's end is chosen --------
    @staticmethod
    def _crossings(values):
        """Indices ``i`` where ``values[i]`` and ``values[i + 1]`` have opposite signs (zeros
        and NaN cross nothing)."""
        # most steps cross nothing: two reductions tell (a NaN fails both tests)
        if values.min() >= 0 or values.max() <= 0:
            return ()
        s = np.sign(values)
        return np.flatnonzero(s[1:] * s[:-1] < 0)

    def _amplitude_watched(self, a0, values) -> bool:
        """Whether a sign change of the amplitude on the step from the last point is a passage
        through a Hopf point.  After the first step, always.  On the first step, unless the
        start is at the Hopf point itself (its amplitude, ``a0``, at the rounding level of
        the step's amplitudes ``values``), where the sign is noise: a run that starts on a
        branch (a segment of an adaptive branch, a restart) and reaches a Hopf point within
        its first step stops there like any other (without this, the belt's collocation
        branch on Zen's rounding went through the second Hopf point inside the first step of
        a new mesh and retraced itself back to the first)."""
        if len(self.points) > 1:
            return True
        return abs(a0) > 1e-6 * float(np.max(np.abs(values)))

    def clip(self, series, a_max):
        """End of the ANM step: ``a_max`` or the first bound / amplitude-zero crossing."""
        o = self.options
        a_grid = a_max * _UNIT_GRID
        W = series.weights(a_grid)          # shared by lam and the amplitude
        idx = [len(series.Z0) - 1]
        lam = series.components(a_grid, idx, weights=W)[:, 0]
        if np.isfinite(o.max_lam_step) and np.max(np.abs(lam - lam[0])) > o.max_lam_step:
            # shorten the step so that lam moves by at most max_lam_step
            i = int(np.argmax(np.abs(lam - lam[0]) > o.max_lam_step))
            a_max = a_grid[max(i - 1, 1)]
            a_grid = a_max * _UNIT_GRID
            W = series.weights(a_grid)
            lam = series.components(a_grid, idx, weights=W)[:, 0]
        events = []
        for bound, name in ((o.lam_min, "range"), (o.lam_max, "range")):
            if np.isfinite(bound):
                idx = self._crossings(lam - bound)
                if len(idx):
                    events.append((idx[0], lambda a, b=bound: series(a)[-1] - b, name, bound))
        self._hopf_on_series = None
        if self.amp_w is not None:
            amp = series.linear(a_grid, self.amp_w, weights=W)
            idx = self._crossings(amp) if self._amplitude_watched(amp[0], amp) else ()
            if len(idx):
                fun = lambda a: float(series(a) @ self.amp_w)   # noqa: E731
                if o.stop_on_equilibrium:
                    events.append((idx[0], fun, "equilibrium", None))
                else:
                    a_h = bracketed_root(fun, a_grid[idx[0]], a_grid[idx[0] + 1], xtol=1e-15 * a_max)
                    self._hopf_on_series = (a_h, series(a_h))
        if not events:
            return a_max
        i, fun, name, bound = min(events, key=lambda e: e[0])
        a_star = bracketed_root(fun, a_grid[i], a_grid[i + 1], xtol=1e-15 * a_max, rtol=1e-15)
        self._stop_reason = (name, bound)
        return a_star

    @property
    def stop_reason(self):
        return None if self._stop_reason is None else self._stop_reason[0]

    @property
    def stop_bound(self):
        """The parameter bound the last ``clip`` shortened the step to, or None."""
        return self._stop_reason[1] if self.stop_reason == "range" else None

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
                om = hs[1][self.disc.omega_index]
                self._add_hopf(SpecialPoint("hopf", float(hs[1][-1]), float(om), len(self.points) - 1, hs[1]))
                self._hopf_on_series = None
        self.points.append(np.array(Z))
        self.tangents.append(np.array(t))

    # -- every engine calls add() for every accepted point -------------------------------
    def add(self, Z, t, step_length=None, series=None, on_bound=False):
        o = self.options
        Zprev = self.points[-1]
        # engines without a series (Newton): place the last point on a crossed event
        if series is None:
            Z, t = self._newton_events(Zprev, Z, t)
        name_bound = self._stop_reason
        if name_bound is not None and name_bound[0] == "range" and series is not None and not on_bound:
            # ANM end point exactly on the bound: correct with lam fixed
            Z = self._on_bound(Z, name_bound[1])
        if (self.amp_w is not None and not o.stop_on_equilibrium and name_bound is None
                and self.amp(Zprev) * self.amp(Z) < 0
                and self._amplitude_watched(self.amp(Zprev), [self.amp(Zprev), self.amp(Z)])):
            # passing through a Hopf point (zero amplitude) into the half-period-shifted copy
            hs = getattr(self, "_hopf_on_series", None)
            Zh = hs[1] if hs is not None else self._hermite_zero(Zprev, self.tangents[-1], Z, t, self.amp_w)
            self._hopf_on_series = None
            om = Zh[self.disc.omega_index] if self.disc.omega_index is not None else np.nan
            self._add_hopf(SpecialPoint("hopf", float(Zh[-1]), float(om), len(self.points) - 1, Zh))
        first = self.step_ends[-1]
        if series is not None and step_length and self.tangents[first][-1] * t[-1] < 0:
            guess = _series_turning_point(series, step_length)
            if guess is not None:
                self.fold_guesses.append((first, len(self.points)) + guess)
        if name_bound is None and self._vanishing(Zprev, Z):
            name_bound = ("vanishing", None)
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
                lam, Zh = Z[-1], Z
                if name == "vanishing":
                    lam, Zh = self._hopf_extrapolated(t)
                elif self.amp_w is not None:
                    lam, Zh = self._hopf_corrected(Zprev, Z)
                self.message = (f"the periodic branch reached an equilibrium (zero amplitude, a Hopf "
                                f"point) at lam = {lam:.10g}"
                                + (" (extrapolated from an amplitude of 1e-3 of its largest)"
                                   if name == "vanishing" else ""))
                om = Zh[self.disc.omega_index] if self.disc.omega_index is not None else np.nan
                self.special.append(SpecialPoint("hopf", float(lam), float(om), len(self.points) - 1,
                                                 np.array(Zh)))
            return
        if o.stop_on_return and len(self.points) > 3 and d > 0:
            # does the segment Zprev -> Z pass next to the start point?  (the distance is
            # measured only when the other, scalar, conditions hold)
            s = (self._start - Zprev) @ (Z - Zprev) / d**2
            if (0 <= s <= 1 and self._travel > 10 * d and t @ self.tangents[0] > 0.9
                    and np.linalg.norm(Zprev + s * (Z - Zprev) - self._start) < 0.5 * d):
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

    def _vanishing(self, Zprev, Z) -> bool:
        """Whether a periodic branch is closing in on a Hopf point without crossing it: the
        amplitude fell below 1e-3 of the largest recorded and to less than half of the
        previous point's.  Next to the Hopf point the branch meets the trivial family (the
        equilibrium at any ``omega``), a branch point; a step that stops just short of it
        (the series' radius ends there) is followed by ever shorter ones that can slide onto
        the trivial family (collocation of the states 100 x 4, belt B3).  The engines' own
        test, the amplitude's sign change, still stops a branch that crosses."""
        if self.amp_w is None or not self.options.stop_on_equilibrium or len(self.step_ends) < 3:
            return False
        a, b = abs(self.amp(Zprev)), abs(self.amp(Z))
        self._amp_max = max(self._amp_max, a, b, abs(self.amp(self.points[0])))
        return b < 1e-3 * self._amp_max and b < 0.5 * a

    def _hopf_extrapolated(self, t):
        """The Hopf point a vanishing-amplitude branch stops next to (``_vanishing``):
        ``(lam_H, Z_H)``.

        Next to a Hopf point the branch is a smooth function of its signed amplitude ``A``
        (``lam = lam_H + c A^2 + O(A^4)``: the orbit of amplitude ``-A`` is the half-period
        shift of ``+A``), so the last three step ends, whose amplitudes halve, are extrapolated
        to ``A = 0``: the orbit by the quadratic in ``A`` through them (error ``O(A^3)``, with
        ``A`` below 1e-3 of the largest), ``lam`` by the quadratic in ``A^2`` (error
        ``O(A^6)``).  With fewer than three such points, the end's tangent:
        ``c = lam' / (2 A A')``, ``lam_H = lam - lam' A / (2 A')``.
        """
        idx = self.step_ends[-3:]
        A = np.array([self.amp(self.points[i]) for i in idx])
        if len(idx) == 3 and np.all(A * A[0] > 0) and np.all(np.abs(np.diff(A)) > 0.1 * np.abs(A[1:])):
            Zh = lagrange_value(A, [self.points[i] for i in idx], 0.0)
            # lam is even in A: the quadratic in A^2 (error O(A^6)); the one in A (with a linear
            # term that is only the fit's) was 3.4e-7 off the equilibria's Hopf point on the
            # belt's 100 x 4 collocation when its far point sat at A = 3e-3 (one BLAS kernel's
            # rounding ended the branch that way, another's by a zero crossing)
            Zh[-1] = float(lagrange_value(A ** 2, [self.points[i][-1] for i in idx], 0.0))
            return float(Zh[-1]), Zh
        Z = self.points[-1]
        return float(Z[-1] - t[-1] * self.amp(Z) / (2 * float(t @ self.amp_w))), Z

    def _at_amplitude(self, guess, a):
        """The branch point of signed amplitude ``a`` (Newton from ``guess`` with the border
        ``amp_w``): next to a Hopf point ``A`` parametrizes the branch where ``lam`` does not."""
        Z, _ = correct(self.disc, guess, self.amp_w, float(a), counters=self.counters,
                       xtol=self.options.newton_xtol, max_iter=self.options.max_newton_iterations)
        return Z

    def _hopf_corrected(self, Zprev, Z):
        """The Hopf point where a step's series reached zero amplitude (``clip``'s
        ``"equilibrium"`` event): ``(lam_H, Z_H)``.

        The series' point at ``A = 0`` is not corrected (the system is singular there: the
        branch meets the trivial family), and the series converges slowly next to that
        branch point (1.7e-8 of ``lam`` on the belt's B3 at H = 48).  Instead three points
        at fixed small amplitudes (1e-3, 5e-4 and 2.5e-4 of the largest, or below the last
        step end's) are Newton-corrected, starting on the chord from the last step end
        ``Zprev`` to ``Z``, and extrapolated to ``A = 0`` by the quadratic through them
        (``lam = lam_H + c A^2``: error ``O(A^3)``).  If a correction fails, ``Z`` is kept.
        """
        A0 = self.amp(Zprev)
        if A0 == 0.0:
            return float(Z[-1]), Z
        largest = max(abs(self.amp(P)) for P in self.points)
        top = min(1e-3 * largest, 0.5 * abs(A0)) * np.sign(A0)
        targets = np.array([top, top / 2, top / 4])
        pts = []
        try:
            for a in targets:
                pts.append(self._at_amplitude(Z + (a / A0) * (np.asarray(Zprev) - Z), a))
        except ConvergenceError:
            return float(Z[-1]), Z
        Zh = lagrange_value(targets, pts, 0.0)
        return float(Zh[-1]), Zh

    def hopf_jump(self):
        """Step over a Hopf point that the steps accumulate on (``stop_on_equilibrium=False``).

        There the periodic branch meets the trivial family (the equilibrium at any
        ``omega``): ``[J; t^T]`` is singular, the series' radius shrinks with the distance
        to it, and the steps shrink geometrically until the amplitude reaches the rounding
        level, where its sign, and whether the run crosses or slides onto the trivial
        family, is decided by rounding noise (tests/engine/test_periodic.py::
        test_closed_branch_returns_to_start).  Near the Hopf point the amplitude ``A`` is the
        natural parameter (``lam = lam_H + c A^2``): once the last three step ends have
        amplitudes of one sign below 1e-3 of the largest, each under half the previous
        one, the branch is extrapolated (quadratic in ``A`` through them) to ``-A`` of the
        middle one and corrected there at fixed amplitude; the Hopf point (``A = 0`` on
        the quadratic through the two nearest points and that one) is recorded.

        Returns
        -------
        (Z, t) or None
            The new step end, recorded, and its tangent; None when no jump is due (or its
            correction fails: the run goes on as before).
        """
        if self.amp_w is None or self.options.stop_on_equilibrium or self.done or len(self.step_ends) < 4:
            return None
        idx = self.step_ends[-3:]
        A = np.array([self.amp(self.points[i]) for i in idx])
        self._amp_max = max(self._amp_max, float(np.max(np.abs(A))), abs(self.amp(self.points[0])))
        if not (np.all(A * A[0] > 0) and abs(A[2]) < 0.5 * abs(A[1]) < 0.25 * abs(A[0])
                and abs(A[0]) < 1e-3 * self._amp_max):
            return None
        target = -A[1]
        P = [self.points[i] for i in idx]
        Zg = lagrange_value(A, P, target)
        try:
            Z = self._at_amplitude(Zg, target)
            t = tangent_at(self.disc, Z, lagrange_value(A, P, target + 1e-3 * target) - Zg, self.counters)
        except ConvergenceError:
            return None
        Zh = lagrange_value(np.array([A[1], A[2], target]), [P[1], P[2], Z], 0.0)
        om = Zh[self.disc.omega_index] if self.disc.omega_index is not None else np.nan
        self._add_hopf(SpecialPoint("hopf", float(Zh[-1]), float(om), len(self.points) - 1, Zh))
        self._travel += np.linalg.norm(Z - self.points[-1])
        self.points.append(np.array(Z))
        self.tangents.append(np.array(t))
        self.step_ends.append(len(self.points) - 1)
        return Z, t

    @staticmethod
    def _hermite_zero(Zprev, tprev, Z, t, w):
        """Zero of the functional ``w . Z`` on the cubic Hermite interpolant between two points."""
        herm = hermite_chord(Zprev, tprev, Z, t)
        s = bracketed_root(lambda s: float(herm(s) @ w), 0.0, 1.0, xtol=1e-14)
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
        if (o.stop_on_equilibrium and self.amp_w is not None and self.amp(Zprev) * self.amp(Z) < 0
                and self._amplitude_watched(self.amp(Zprev), [self.amp(Zprev), self.amp(Z)])):
            # cubic Hermite interpolation with the end tangents (the point itself is nearly
            # singular: the periodic branch meets the family of equilibria there)
            self._stop_reason = ("equilibrium", None)
            return self._hermite_zero(Zprev, self.tangents[-1], Z, t, self.amp_w), t
        return Z, t
