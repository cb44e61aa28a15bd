"""Asymptotic numerical method (ANM) on an exactly quadratic discrete system (DESIGN §5.3).

For ``R(Z) = C + L Z + Q(Z, Z)`` the branch through a solution ``Z0`` is expanded as a
power series in the pseudo-arclength ``a = (Z - Z0) . Z1`` (Cochelin & Vergez 2009,
ref. [6] of seed 000; seed 000 §4.1)::

    Z(a) = Z0 + sum_{p=1}^{P} a^p Z_p

Order 1: ``J Z1 = 0, |Z1| = 1``; order p >= 2:
``J Z_p = -sum_{r=1}^{p-1} Q(Z_r, Z_{p-r})``, ``Z_p . Z1 = 0``, with ``J = dR/dZ(Z0)``.
Every order reuses the LU of the *same* bordered matrix ``[J; t_prev^T]`` (t_prev: the
previous step's end tangent): one factorization per step.  Because ``J Z1 = 0``, the
particular solution ``w`` of the bordered system is made orthogonal to ``Z1`` by removing
its ``Z1`` component, which keeps ``J Z_p`` unchanged.

Validity range: ``a_max = (delta |Z1| / |Z_P|)^(1/(P-1))``.  Optionally the series is
replaced by Padé approximants with a common denominator (Cochelin, Damil & Potier-Ferry,
the classic ANM references), which extends the range, and the end point is corrected by
Newton to a residual tolerance.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, NonFiniteError
from ._bordered import factor_jacobian
from ._newton import correct

__all__ = ["anm_series", "anm", "Series"]


def anm_series(disc, Z0, t_prev, order, counters=None):
    """Taylor coefficients ``[Z1, ..., Z_P]`` of the branch at ``Z0`` (one LU).

    Returns
    -------
    terms : list of ndarray
        ``terms[p-1] = Z_p``; ``Z1`` is a unit vector with ``Z1 . t_prev > 0``.
    scale : ndarray
        Row sizes ``|J| |Z0|`` at ``Z0`` (``_newton.row_scales``, for relative residuals).
    det_sign : int
        Sign of ``det [J(Z0); t_prev^T]``, the branch-point test function at ``Z0``
        (free: the matrix is the one factorized).
    lu :
        That factorization (``lu.solve``), valid until the discretization's next one: the
        step's chord correction reuses it.
    """
    lu, scale = factor_jacobian(disc, Z0, t_prev, counters, scales=True)
    det_sign = lu.det_sign()
    rhs = np.zeros(disc.m + 1)
    rhs[-1] = 1.0
    v = lu.solve(rhs)
    Z1 = v / np.linalg.norm(v)
    # orders 2..P: J Z_p = -rhs_p, Z_p . Z1 = 0 (contract item 6; compiled for the AFT)
    terms = disc.series_terms(Z0, Z1, order, lambda r: lu.solve(r, checked=False), lu.dense_lu)
    # tested once for the whole series rather than order by order (two calls per order)
    if not np.isfinite(terms).all():
        bad = next(p for p, Zp in enumerate(terms, 1) if not np.isfinite(Zp).all())
        raise NonFiniteError(f"NaN/inf in the ANM series from order {bad} on (its right-hand side, "
                             "or a singular tangent matrix)")
    return terms, scale, det_sign, lu


class Series:
    """One ANM step: evaluate the branch (power series or Padé) on ``[0, a_max]``."""

    def __init__(self, Z0, terms, a_max, pade=False):
        self.Z0, self.terms, self.a_max = Z0, terms, a_max
        self._T = np.array(terms)         # (P, size): every evaluation is one product with it
        self._p = np.arange(1, len(terms) + 1)
        self.pade = pade
        if pade:
            self._setup_pade()

    def _setup_pade(self):
        # Common-denominator Padé approximants of order P-1 built from the
        # Gram-Schmidt orthonormalization of Z_1..Z_P (classic ANM construction).
        terms = self.terms
        P = len(terms)
        V = np.array(terms).T
        Qm, Rm = np.linalg.qr(V)
        # Denominator D(a) = sum_i d_i a^i (d_0 = 1, degree n = P-1) such that D(a) Z(a) has
        # no a^P term outside the last orthonormal direction: with Z_k = sum_j R[j, k-1] q_j,
        # sum_{i=0}^{t} d_i R[n-t, n-i] = 0 for t = 1..n (triangular recursion).
        n = P - 1
        d = np.zeros(n + 1)
        d[0] = 1.0
        # R[:, k] = components of Z_{k+1} on the orthonormal basis
        for i in range(1, n + 1):
            s = Rm[n - i, n]
            for j in range(1, i):
                s += d[j] * Rm[n - i, n - j]
            d[i] = -s / Rm[n - i, n - i] if Rm[n - i, n - i] != 0 else 0.0
        self._d = d
        self._n = n
        # the approximant is meaningless from its first real positive pole on (next to a
        # branch point, e.g. a Hopf point of a periodic branch, poles enter the step)
        roots = np.roots(d[::-1]) if np.any(d[1:]) else np.array([])
        real = roots[(np.abs(roots.imag) <= 1e-12 * np.abs(roots)) & (roots.real > 0)].real
        self.first_pole = float(real.min()) if len(real) else np.inf

    def _fractions(self, a):
        """Padé: ``f_k(a) = a^k N_k(a) / D(a)``, k = 1..n, at the points ``a`` (shape
        ``a.shape + (n,)``), where ``N_k = sum_{i=0}^{n-k} d_i a^i`` is the denominator
        truncated at degree ``n - k``; ``Z(a) = Z0 + sum_k f_k(a) Z_k``."""
        d, n = self._d, self._n
        a = np.asarray(a, dtype=float)[..., None]
        powers = a ** np.arange(n + 1)                          # a^0 .. a^n
        partial = np.cumsum(d * powers, axis=-1)                # N_k(a) = partial[..., n - k]
        num = partial[..., n - 1::-1]                           # k = 1..n
        return powers[..., 1:] * num / partial[..., n:]

    def _fractions_derivative(self, a):
        """``d f_k / da`` at the scalar ``a`` (shape (n,)), for the exact Padé tangent."""
        d, n = self._d, self._n
        i = np.arange(n + 1)
        powers = a ** i
        dpowers = np.where(i > 0, i * a ** np.maximum(i - 1, 0), 0.0)
        N = np.cumsum(d * powers)
        dN = np.cumsum(d * dpowers)
        k = np.arange(1, n + 1)
        Nk, dNk, D, dD = N[n - k], dN[n - k], N[n], dN[n]
        ak = powers[1:]
        dak = k * a ** (k - 1)
        return ((dak * Nk + ak * dNk) * D - ak * Nk * dD) / D ** 2

    def weights(self, a):
        """``(W, T)`` with ``Z(a) = Z0 + W @ T`` at the points ``a`` (``W``: shape
        ``a.shape + (k,)``): the powers ``a^p`` and all terms, or Padé's fractions and the
        first ``n`` terms.  (Several evaluations at the same points can share them: the
        ``weights`` argument of :meth:`components` and :meth:`linear`.)"""
        if self.pade:
            return self._fractions(a), self._T[:self._n]
        return np.asarray(a, dtype=float)[..., None] ** self._p, self._T

    def __call__(self, a):
        W, T = self.weights(a)
        return self.Z0 + W @ T

    def components(self, a, idx, weights=None):
        """Components ``idx`` of the branch at the points ``a`` (array): shape (len(a), len(idx));
        ``weights``: ``self.weights(a)`` when the caller has it."""
        W, T = weights or self.weights(a)
        return self.Z0[idx][None, :] + W @ T[:, idx]

    def linear(self, a, w, weights=None):
        """Values of the linear functional ``w . Z`` along the branch at the points ``a``;
        ``weights``: ``self.weights(a)`` when the caller has it."""
        W, T = weights or self.weights(a)
        return float(self.Z0 @ w) + W @ (T @ w)

    def lam_polynomial(self):
        """Coefficients (highest first) of lam(a) - lam0 for numpy.roots (series only)."""
        return np.append(self._T[::-1, -1], 0.0)

    def tangent(self, a):
        if not self.pade:
            t = (self._p * a ** (self._p - 1)) @ self._T
        else:
            t = self._fractions_derivative(float(a)) @ self._T[:self._n]
        return t / np.linalg.norm(t)


def _relative_residual(disc, Z, R, scale, noise=None):
    """``max_i (|R_i| - noise_i)^+ / (|J| |Z|)_i``: the residual above its rounding level
    (``disc.residual_noise``, contract item 12; or ``noise`` when the caller has it for a
    point this close) relative to the size of its terms."""
    excess = np.maximum(np.abs(R) - (disc.residual_noise(Z) if noise is None else noise), 0.0)
    return float(np.max(excess / scale))


#: end-point residual (relative) above which a step is shortened before its correction
REACH = 1e-6


def _within_reach(disc, series, a, a_floor, Z, R, scale, noise, counters):
    """Shorten a step whose end residual is far above the series' validity ``delta``.

    The validity range assumes the terms decay geometrically; across a steep stick-slip
    transition they may not, and the end residual is then 1e-4 .. 1 (relative; tanh x exp
    belt, examples/tanh_exp_belt.py), out of the chord correction's reach.  The series'
    error grows like ``a^(P+1)``: ``a`` is scaled by ``(REACH / residual)^(1/(P+1))`` (between
    0.3 and 0.9), at most four times, one residual each, never below ``a_floor`` (the previous
    step's length: next to a branch point the series' radius shrinks with the distance to it,
    and shortened steps would pile up there instead of crossing).  Steps that end on an event of the
    recorder (a parameter bound, the equilibria) are not shortened: they go to the correction
    as they are."""
    P = len(series.terms)
    for _ in range(4):
        res = _relative_residual(disc, Z, R, scale, noise)
        if res <= REACH or a <= a_floor:
            break
        a = max(a * min(0.9, max(0.3, (REACH / res) ** (1.0 / (P + 1)))), a_floor)
        Z = series(a)
        R = disc.residual(Z)
        counters.residual_evaluations += 1
        if not np.all(np.isfinite(R)):
            raise NonFiniteError(f"NaN/inf in the residual inside ANM step {counters.steps + 1} "
                                 f"(lam = {Z[-1]:.10g})")
    return a, Z, R


def _chord(disc, Z, R, te, Z1, lu, scale, noise, options, counters):
    """Chord (simplified Newton) correction of a step's end point with the step's own LU
    (``Z1`` its null vector), or with a factorization of ``[J; te^T]`` itself (``Z1 = None``).

    Solves ``[J(Z0); te^T] dZ = [-R(Z); 0]`` by the factorization of ``[J(Z0); t_prev^T]``
    that gave the series (``Z0`` its origin): with ``w`` the solution for the factorized
    matrix and ``J(Z0) Z1 = 0``, the border row is swapped by ``dZ = w - Z1 (te . w) /
    (te . Z1)`` (Sherman-Morrison with the null vector ``Z1``), so the end point moves in the
    hyperplane through it orthogonal to its own tangent ``te``, as the Newton correction does
    (a hyperplane orthogonal to ``t_prev`` would let the point slide along the branch past a
    fold).  The series' end-point residual is small (``a_max`` bounds the last term by
    ``validity``), so a few iterations bring it below ``residual_tolerance`` at the cost of
    one residual and one triangular solve each, where a Newton iteration assembles and
    factorizes the end point's Jacobian.  A point is accepted when its residual meets the
    tolerance and the last update is below a tenth of the Newton correction's ``newton_xtol``
    (relative) at a rate below 1/2.  Returns the corrected point, or None when
    ``options.chord_iterations`` iterations do not get there, the residual stops decreasing
    or the branch turned by nearly a right angle within the step (the Newton correction then
    takes over).
    """
    tz = float(te @ Z1) if Z1 is not None else 1.0
    if abs(tz) < 0.1:
        return None
    rhs = np.zeros(disc.m + 1)
    size = _relative_residual(disc, Z, R, scale, noise)
    step = np.inf
    for _ in range(options.chord_iterations):
        rhs[:-1] = -R
        w = lu.solve(rhs)
        dZ = w - ((te @ w) / tz) * Z1 if Z1 is not None else w
        Z = Z + dZ
        R = disc.residual(Z)
        counters.residual_evaluations += 1
        if not np.all(np.isfinite(R)):
            return None
        new = _relative_residual(disc, Z, R, scale, noise)
        # an ill-conditioned system (next to a Hopf point, a recast on its wrong root) has small
        # residuals far from its solution: the update must be small too.  Newton stops at an
        # update of xtol and leaves ~xtol^2 (quadratic rate); the chord, converging linearly at
        # rate rho, leaves about rho / (1 - rho) times its last update: ask rho < 1/2 and an
        # update ten times below xtol
        last, step = step, float(np.linalg.norm(dZ))
        # (an update of exactly 0 after one of 0: converged, e.g. a response of size 1e-300)
        rho = step / last if last > 0 else (0.0 if step == 0 else np.inf)
        if (new <= options.residual_tolerance and rho < 0.5
                and step <= 0.1 * options.newton_xtol * np.linalg.norm(Z)):
            return Z
        if new >= size and step >= last:
            return None
        size = new
    return None


def _chord_at_end(disc, Z, te, scale, noise, options, counters):
    """The chord correction again, with one factorization at the end point itself, where
    the step's own failed (it diverges when ``J`` changes across the step by more than its
    smallest singular value: the first steps next to a Hopf point, an ill-conditioned
    system).  The series' end is within its validity of the branch, so ``J(Z)`` contracts at
    once: one factorization and two or three residuals, where Newton's correction takes a
    factorization per iteration (two or three).  Returns None when it does not converge
    either (Newton then takes over) or when ``options.chord_iterations`` is 0."""
    if not options.chord_iterations:
        return None
    try:
        lu, _ = factor_jacobian(disc, Z, te, counters)
    except ConvergenceError:
        return None
    R = disc.residual(Z)
    counters.residual_evaluations += 1
    if not np.all(np.isfinite(R)):
        return None
    return _chord(disc, Z, R, te, None, lu, scale, noise, options, counters)


def _chord_on_bound(disc, Z, bound, Z1, lu, scale, noise, options, counters):
    """The end of a step clipped to the parameter bound ``bound``, corrected on ``lam = bound``
    by the chord with the step's own LU (:func:`_chord` with the border ``e_lam``: its
    updates keep ``lam``), where a Newton correction at fixed ``lam`` takes one factorization
    per iteration.  Returns the point with ``lam`` exactly ``bound``, or None (Newton then
    corrects it, as without this)."""
    Zb = np.array(Z, dtype=float)
    Zb[-1] = bound                      # the series' crossing, to Brent's 1e-15
    R = disc.residual(Zb)
    counters.residual_evaluations += 1
    if not np.all(np.isfinite(R)):
        return None
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Zb = _chord(disc, Zb, R, e, Z1, lu, scale, noise, options, counters)
    if Zb is not None:
        Zb[-1] = bound                  # (the updates move lam by rounding only)
    return Zb


def anm(disc, Z0, t0, options, recorder, progress=None):
    """ANM continuation loop; points go to ``recorder.add``; stops when ``recorder.done``.

    Each step: one Jacobian, one LU of the bordered tangent matrix, ``order`` solves;
    the step ends at ``a_max`` (or where ``recorder`` clips it), and the end point is
    Newton-corrected when ``options.correct`` and its *relative* residual
    ``max_i (|R_i| - noise_i)^+ / (|J| |Z|)_i`` exceeds ``options.residual_tolerance``
    (``noise_i``: the residual's rounding level, ``disc.residual_noise``).
    """
    c = recorder.counters
    Z, t = np.array(Z0, float), np.array(t0, float)
    P = options.order
    delta = options.validity
    a_prev = 0.0
    while not recorder.done:
        terms, scale, det_sign, lu = anm_series(disc, Z, t, P, c)
        recorder.refine_tangent(Z, terms[0])
        # det [J; t] and det [J; Z1] have the same sign (t . Z1 > 0, tangent_at's identity)
        recorder.note_det_sign(Z, recorder.tangents[-1], det_sign)
        nP = np.linalg.norm(terms[-1])
        a_max = (delta / nP) ** (1.0 / (P - 1)) if nP > 0 else np.inf
        # a (locally) linear branch has Z_P = 0: cap the step at a large finite length
        a_max = min(a_max, options.max_step, 1e3 * (1.0 + np.linalg.norm(Z)))
        if options.pade:
            a_max *= options.pade_extension
        series = Series(Z, terms, a_max, pade=options.pade)
        if options.pade:
            # Padé extends the series' range: start further out and shrink until the
            # residual of the rational approximant meets the tolerance (never below the
            # series' own validity range).
            a_series = a_max / options.pade_extension
            if series.first_pole <= a_series:
                series, a_max = Series(Z, terms, a_series), a_series   # this step: the series
            a_max = min(a_max, 0.9 * series.first_pole) if series.pade else a_max
            while series.pade and a_max > a_series:
                Ze = series(a_max)
                if np.all(np.isfinite(Ze)):
                    R = disc.residual(Ze)
                    c.residual_evaluations += 1
                    if _relative_residual(disc, Ze, R, scale) <= options.residual_tolerance:
                        break
                a_max *= 0.8
            a_max = max(a_max, a_series)
            series.a_max = a_max
        a_end = recorder.clip(series, a_max)
        Ze = series(a_end)
        te = series.tangent(a_end)
        R = disc.residual(Ze)
        c.residual_evaluations += 1
        if not np.all(np.isfinite(R)):
            raise NonFiniteError(
                f"NaN/inf in the residual at the end of ANM step {c.steps + 1} (lam = {Ze[-1]:.10g}): "
                "a validity condition of the recast is probably violated")
        singular_end = recorder.stop_reason == "equilibrium"   # the branch meets the equilibria
        # the residual's rounding level (contract item 12) at the step's end, for the end
        # point and the nearby points the shortening and the chord iterations try
        noise = disc.residual_noise(Ze) if options.correct and not singular_end else None
        if options.correct and recorder.stop_reason is None:      # (a step ending on an event keeps it)
            a_end, Ze, R = _within_reach(disc, series, a_end, a_prev, Ze, R, scale, noise, c)
            te = series.tangent(a_end)
        on_bound = False
        if options.correct and recorder.stop_bound is not None:
            Zb = _chord_on_bound(disc, Ze, recorder.stop_bound, terms[0], lu, scale, noise, options, c)
            if Zb is not None:
                Ze, on_bound = Zb, True
        if (options.correct and not singular_end and not on_bound
                and _relative_residual(disc, Ze, R, scale, noise) > options.residual_tolerance):
            Ze = _chord(disc, Ze, R, te, terms[0], lu, scale, noise, options, c)
        if Ze is None:
            Ze, te = series(a_end), series.tangent(a_end)
            Ze = _chord_at_end(disc, Ze, te, scale, noise, options, c)
        if Ze is None:
            Ze, te = series(a_end), series.tangent(a_end)
            for attempt in range(4):
                try:
                    Ze, _ = correct(disc, Ze, te, float(te @ Ze), counters=c, xtol=options.newton_xtol,
                                    max_iter=options.max_newton_iterations)
                    break
                except ConvergenceError:
                    if attempt == 3:
                        raise
                    # shorter step: the series is more accurate closer to its origin
                    recorder.unclip()
                    a_end *= 0.5
                    Ze, te = series(a_end), series.tangent(a_end)
        c.steps += 1
        for j in range(1, options.points_per_step):
            # extra points of the same series (for plots); not Newton-corrected
            a_j = a_end * j / options.points_per_step
            recorder.add_intermediate(series(a_j), series.tangent(a_j))
        recorder.add(Ze, te, step_length=a_end, series=series, on_bound=on_bound)
        if progress is not None:
            progress(recorder)
        if a_end <= 0:
            break
        Ze, te = recorder.hopf_jump() or (Ze, te)
        Z, t, a_prev = Ze, te, a_end
