"""Simple branch points: detection by the sign of the bordered determinant, location, and the tangents of the crossing branches (DESIGN §5.5)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy

from .._roots import bracketed_root
from ..engine._bordered import Counters, bordered_factor
from ..engine._locate import hermite_chord
from ..engine._newton import correct
from ..errors import ConvergenceError, InputError


def _slogdet_bordered(J, border, counters: Counters | None = None):
    """``(sign, log|det|)`` of ``[J; border^T]`` from its LU factorization; ``(0, -inf)``
    when it is exactly singular."""
    try:
        return bordered_factor(J, border, counters).slogdet()
    except ConvergenceError:          # a zero (or NaN) pivot: det 0
        if counters is not None:
            counters.factorizations += 1
        return 0, -np.inf


def bordered_det_sign(disc, Z, tangent, counters: Counters | None = None) -> int:
    """Sign of ``det [J(Z); tangent^T]`` (0 if exactly singular): the branch-point test."""
    return _slogdet_bordered(disc.jacobian(Z), tangent, counters)[0]


def locate_branch_point(disc, Za, Zb, counters: Counters | None = None, *, xtol: float = 1e-12,
                        tangents=None):
    """Branch point between two branch points whose bordered determinants differ in sign.

    Parameters
    ----------
    tangents : (ta, tb), optional
        Unit tangents at ``Za`` and ``Zb``: the Newton guesses are then taken on the cubic
        Hermite interpolant (close to the branch, so Newton does not jump to the second
        branch, which the hyperplanes also meet near the branch point).

    Returns
    -------
    Z : ndarray
        The located point (``R(Z) ~ 0``).

    Raises
    ------
    ConvergenceError
        If the scaled test ``det [J; b^T]`` (``b`` the unit chord) does not change sign.
    """
    Za = np.asarray(Za, dtype=float)
    chord = np.asarray(Zb, dtype=float) - Za
    b = chord / np.linalg.norm(chord)
    ref = _slogdet_bordered(disc.jacobian(Za), b, counters)[1]
    cache = {}
    ta, tb = tangents if tangents is not None else (b, b)
    guess = hermite_chord(Za, ta, Za + chord, tb)

    def point(s):
        if s not in cache:
            Zg = guess(s)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                    # next to the branch point Newton converges only linearly: allow more steps
                    cache[s], _ = correct(disc, Zg, b, float(b @ Zg), counters=counters, xtol=xtol,
                                          max_iter=60)
            except ConvergenceError:
                # [J; b^T] is exactly singular at the branch point itself: accept the guess
                # if it already solves R = 0 (e.g. a linear branch, hit by the secant step)
                if np.linalg.norm(disc.residual(Zg)) > 1e-12 * max(1.0, np.linalg.norm(Zg)):
                    raise
                cache[s] = Zg
        return cache[s]

    def test(s):
        sign, logdet = _slogdet_bordered(disc.jacobian(point(s)), b, counters)
        return sign * np.exp(min(logdet - ref, 700.0)) if sign else 0.0

    fa, fb = test(0.0), test(1.0)
    if fa * fb > 0:
        raise ConvergenceError("locate_branch_point: det [J; b^T] does not change sign")
    # Brent's method on the chord coordinate.  Right at the branch point every bordered
    # system is singular and Newton may stall on trial points very close to it: then the
    # last bracket (kept by ``bracketed``) is handed to the interpolation.
    bracket = [0.0, fa, 1.0, fb]

    def bracketed(x):
        fx = test(x)
        if fx * bracket[1] > 0:
            bracket[0:2] = x, fx
        else:
            bracket[2:4] = x, fx
        return fx
    try:
        return point(bracketed_root(bracketed, 0.0, 1.0, xtol=1e-13))
    except ConvergenceError:
        x0, _, x1, _ = bracket
    if abs(x1 - x0) <= 1e-10:
        return point(x1)
    return _interpolated_root(cache, test, x0, x1)


def _interpolated_root(cache, test, x0, x1):
    """Branch point from the converged points around a bracket that Newton cannot shrink.

    Within about ``sqrt(distance)`` of a branch point the hyperplane meets the second
    branch too, and Newton may hop between the two; the test function and the points are
    smooth along the branch, so a cubic through the four converged points nearest the
    bracket gives the root and the point (interpolated, residual of the interpolation
    error's size).  The nodes are placed at 1-3 % of the chord on either side.
    """
    mid = 0.5 * (x0 + x1)
    nodes = []
    for d in (-0.03, -0.02, -0.01, 0.01, 0.02, 0.03):    # fresh nodes a little away from it
        x = min(max(mid + d, 0.0), 1.0)
        try:
            test(x)
            nodes.append(x)
        except ConvergenceError:
            continue
    if len(nodes) < 4:
        s_all = np.array(sorted(cache))
        nodes = list(s_all[np.argsort(np.abs(s_all - mid))[:4]])
    nodes = np.array(sorted(set(nodes)))
    f = np.array([test(x) for x in nodes])
    deg = min(len(nodes) - 1, 3)
    roots = np.roots(np.polyfit(nodes - mid, f, deg)) + mid
    roots = roots[np.isreal(roots)].real
    lo, hi = sorted((x0, x1))
    inside = roots[(roots >= lo) & (roots <= hi)]
    sr = float(inside[0]) if inside.size else mid
    Z = np.array([np.polyval(np.polyfit(nodes - mid, [cache[x][k] for x in nodes], deg), sr - mid)
                  for k in range(len(cache[nodes[0]]))])
    return Z


def detect_branch_points(disc, solutions, tangents, *, amp_index=None, counters: Counters | None = None,
                         locate: bool = True, signs=None, amp_weights=None):
    """Simple branch points along a branch: sign changes of ``det [J; t^T]``, located.

    Parameters
    ----------
    disc : Discretization
    solutions, tangents : ndarray (n_points, size)
        Branch points and unit tangents oriented along the branch (as stored in a Branch).
    amp_index : int, optional
        Index of the first-harmonic amplitude of a periodic branch: sign changes next to a
        zero of it (the branch passing through a Hopf point) are skipped.
    amp_weights : ndarray, optional
        The same for a signed amplitude ``amp_weights . Z``
        (``_continuation.amplitude_weights``; collocation has no amplitude unknown).
    locate : bool
        Refine each one by :func:`locate_branch_point` (else the nearer branch point).
    signs : sequence of int or None, optional
        Known signs of ``det [J; t^T]`` at the points (the continuation engines record them
        from their own factorizations of exactly these matrices); ``None`` entries are computed.

    Returns
    -------
    list of SpecialPoint
        Kind ``"bp"``, ``index`` the branch point before it; ``data["tangent"]`` the known
        branch's unit tangent there, ``data["located"]``.
    """
    from ..results._branch import SpecialPoint

    P = np.asarray(solutions, dtype=float)
    T = np.asarray(tangents, dtype=float)
    if signs is None:
        signs = [None] * len(P)
    signs = np.array([bordered_det_sign(disc, Z, t, counters) if s is None else int(s)
                      for Z, t, s in zip(P, T, signs)])
    out = []
    if amp_weights is None and amp_index is not None:
        amp_weights = np.eye(P.shape[1])[amp_index]
    A = P @ amp_weights if amp_weights is not None else None
    amp_scale = np.max(np.abs(A)) if A is not None else 0.0
    for i in np.flatnonzero(signs[1:] * signs[:-1] < 0):
        if A is not None and (A[i] * A[i + 1] <= 0 or min(abs(A[i]), abs(A[i + 1])) <= 1e-6 * amp_scale):
            # a periodic branch through or ending at a Hopf point (zero amplitude), where it
            # meets the equilibria: J is singular there, but that is not a branch point of orbits
            continue
        Zb, ok = P[i], False
        if locate:
            try:
                Zb, ok = locate_branch_point(disc, P[i], P[i + 1], counters, tangents=(T[i], T[i + 1])), True
            except (ConvergenceError, ValueError):
                Zb = P[i]
        om = float(disc.unpack(Zb)["omega"])
        t = T[i] + T[i + 1]
        out.append(SpecialPoint("bp", float(Zb[-1]), om, int(i), np.array(Zb),
                                data=dict(tangent=t / np.linalg.norm(t), located=ok,
                                          detected_by="bordered determinant")))
    return out


def _dense(J):
    return J.toarray() if scipy.sparse.issparse(J) else np.asarray(J, dtype=float)


def branch_point_tangents(disc, Z, known_tangent, *, fd_step: float | None = None) -> dict:
    """Tangents of the two branches through a simple branch point (module docstring).

    Parameters
    ----------
    disc : Discretization
    Z : ndarray
        The branch point.
    known_tangent : ndarray
        Tangent of the branch it was found on (projected on the null space of ``J``).
    fd_step : float, optional
        Step of the central differences of ``J`` for discretizations without ``quadratic``.

    Returns
    -------
    dict
        ``t_known``, ``t_new`` (unit vectors), ``phi``, ``psi``, the coefficients ``a, b, c``
        of the algebraic bifurcation equation and ``singular_values`` (of ``J``: largest,
        second smallest and smallest; at a simple branch point the smallest is ~0 relative
        to the largest and the second smallest is not).
    """
    Z = np.asarray(Z, dtype=float)
    J = _dense(disc.jacobian(Z))
    if J.shape[0] + 1 != J.shape[1]:
        raise InputError(f"the Jacobian must be m x (m+1); got {J.shape}")
    U, s, Vt = scipy.linalg.svd(J, full_matrices=True)
    null = Vt[-2:]                                   # right null space (2-D at a branch point)
    psi = U[:, -1]                                   # left null vector
    t1 = null.T @ (null @ np.asarray(known_tangent, dtype=float))
    if np.linalg.norm(t1) < 1e-6:
        raise InputError("the known tangent is not in the null space of J: not a branch point of this branch")
    t1 /= np.linalg.norm(t1)
    phi = null[0] - (null[0] @ t1) * t1
    if np.linalg.norm(phi) < 0.5:
        phi = null[1] - (null[1] @ t1) * t1
    phi /= np.linalg.norm(phi)

    if disc.has_quadratic:
        def second(u, v):
            return psi @ (disc.quadratic(u, v) + disc.quadratic(v, u))
    else:
        h = fd_step or np.finfo(float).eps ** (1 / 3) * max(1.0, np.linalg.norm(Z))

        def second(u, v):
            Jp = _dense(disc.jacobian(Z + h * u))
            Jm = _dense(disc.jacobian(Z - h * u))
            return psi @ ((Jp - Jm) @ v) / (2 * h)

    a, b, c = second(t1, t1), second(t1, phi), second(phi, phi)
    # a cos^2 + 2 b sin cos + c sin^2 = 0  <=>  (a - c) cos 2th + 2 b sin 2th = -(a + c)
    R = np.hypot(a - c, 2 * b)
    if R == 0:
        raise ConvergenceError("degenerate algebraic bifurcation equation (all second derivatives vanish)")
    phase = np.arctan2(2 * b, a - c)
    delta = np.arccos(np.clip(-(a + c) / R, -1.0, 1.0))
    roots = [(phase + delta) / 2, (phase - delta) / 2]
    th = max(roots, key=lambda x: abs(np.sin(x)))     # the root away from the known branch (th = 0)
    t_new = np.cos(th) * t1 + np.sin(th) * phi
    t_new = t_new * (1.0 if t_new[np.argmax(np.abs(t_new))] > 0 else -1.0)   # a fixed orientation
    return dict(t_known=t1, t_new=t_new / np.linalg.norm(t_new), phi=phi, psi=psi, a=float(a), b=float(b),
                c=float(c), singular_values=s[[0, -2, -1]].copy())

