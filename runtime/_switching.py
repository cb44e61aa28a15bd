"""Simple branch points: detection, location and branch switching (DESIGN §5.5).

Detection.  Along a branch of ``R(Z) = 0``, ``R: R^(m+1) -> R^m``, the bordered Jacobian
``[J(Z); t(Z)^T]`` (``t`` the unit tangent, oriented continuously along the branch) is
regular at regular points and at folds, and its determinant changes sign at a simple branch
point, where ``J`` loses rank and has a two-dimensional null space (Keller 1977; Seydel,
"Practical bifurcation and stability analysis", 3rd ed., §5.4).  Only the sign of the
determinant is needed: it is read off the LU factorization (product of the signs of the
pivots and of the permutations), so its size never over- or underflows.

Location.  Between two points with opposite signs the test ``det [J; b^T]`` with ``b`` the
unit chord (a fixed border, ``b . t > 0`` on the stretch), scaled by its value at the first
point, is zeroed by the Illinois variant of regula falsi on points re-solved on hyperplanes
orthogonal to the chord, from guesses on the cubic Hermite interpolant of the two points.
Within about ``sqrt(distance)`` of a branch point the hyperplanes meet the second branch too
and Newton may hop between them; there the root and the point come from a cubic through
converged points at 1-3 % of the chord on either side.  The determinant of a converged
point carries rounding noise of the size of ``cond(J) eps``, which limits the location to
about 1e-8 relative on HBM branches (measured on the forced Duffing, see the tests).

Switching.  At the branch point ``Z*`` the null space of ``J`` is spanned by the known
tangent ``t1`` and a unit ``phi`` orthogonal to it; ``psi`` spans the left null space.  The
tangents ``v = alpha t1 + beta phi`` of the branches through ``Z*`` solve the algebraic
bifurcation equation (Seydel §5.4; Kuznetsov, "Elements of applied bifurcation theory",
3rd ed., §10.2.2)::

    a alpha^2 + 2 b alpha beta + c beta^2 = 0,
    a = psi . R''[t1, t1],  b = psi . R''[t1, phi],  c = psi . R''[phi, phi]

whose root ``(1, 0)`` is the known branch.  For the quadratic systems of frictionkit
``R = C + L Z + Q(Z, Z)`` the second derivative is exact, ``R''[u, v] = Q(u, v) + Q(v, u)``
(``disc.quadratic``); other discretizations (shooting) use central differences of the
Jacobian.  The new branch is started at ``Z* + step v``, corrected on the hyperplane
orthogonal to ``v`` and continued (:func:`switch_branch`).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
import scipy.sparse.linalg

from ._newton import Counters, bordered_factor, correct
from .errors import ConvergenceError, InputError

__all__ = ["bordered_det_sign", "detect_branch_points", "locate_branch_point", "branch_point_tangents",
           "switch_branch", "switch_period_doubling_hbm", "switch_period_doubling_collocation"]


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
    hc = np.linalg.norm(chord)
    ta, tb = (np.asarray(t, dtype=float) for t in tangents) if tangents is not None else (chord / hc,) * 2

    def guess(s):
        h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
        h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
        return h00 * Za + h10 * hc * ta + h01 * (Za + chord) + h11 * hc * tb

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
    # Illinois (modified regula falsi) on the chord coordinate, the root kept between x0
    # and x1.  Right at the branch point every bordered system is singular and Newton may
    # stall on trial points very close to it: then the better bracket end is returned.
    x0, f0, x1, f1 = 0.0, fa, 1.0, fb
    for _ in range(100):
        if f1 == 0.0 or abs(x1 - x0) <= 1e-13:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        try:
            f2 = test(x2)
        except ConvergenceError:
            break
        if f2 * f1 < 0:
            x0, f0 = x1, f1
        else:
            f0 = f0 / 2
        x1, f1 = x2, f2
    if abs(x1 - x0) <= 1e-10 or f1 == 0.0:
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
    from ._branch import SpecialPoint

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
        om_i = getattr(disc, "omega_index", None)
        om = float(Zb[om_i]) if isinstance(om_i, (int, np.integer)) else np.nan
        if not np.isfinite(om) and hasattr(disc, "unpack"):
            om = float(disc.unpack(Zb).get("omega", np.nan))
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

    if hasattr(disc, "quadratic") and not _no_quadratic(disc):
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


def _no_quadratic(disc):
    """Shooting has a ``quadratic`` that raises: detect it without calling it on data."""
    from ._shooting import ShootingDiscretization
    return isinstance(disc, ShootingDiscretization)


def switch_branch(disc, branch, special_point, *, step: float | None = None, direction: float = 1.0,
                  method: str = "newton", options=None, lam_min: float | None = None,
                  lam_max: float | None = None, progress=None):
    """Continue the second branch through a branch point ``"bp"`` of ``branch``.

    Parameters
    ----------
    disc : Discretization
        The discretization of ``branch`` (``branch.discretization`` if None).
    branch : Branch
    special_point : SpecialPoint
        A ``"bp"`` special point of ``branch``.
    step : float, optional
        Distance of the first point from the branch point along the new tangent (default
        ``1e-2 max(1, |Z*|)``).
    direction : float
        ``+1`` or ``-1``: which half of the new branch, along ``+-t_new`` (``t_new`` is
        oriented so that its largest component is positive).
    method : {"newton", "anm"}
    options : dict or options object, optional
        Continuation options; ``lam_min``/``lam_max`` default to the branch's range widened
        by its length.
    progress : callable, optional

    Returns
    -------
    Branch
        The new branch; ``provenance["switched_from"]`` holds the branch point's ``lam``,
        and ``branch_point`` the dict of :func:`branch_point_tangents`.
    """
    from ._continuation import ContinuationProblem, _default_options, continuation

    disc = disc if disc is not None else branch.discretization
    if disc is None:
        raise InputError("switch_branch needs the branch's discretization")
    if special_point.kind != "bp":
        raise InputError(f"switch_branch needs a 'bp' special point, not {special_point.kind!r} "
                         "(period doubling: switch_period_doubling)")
    Zs = np.asarray(special_point.solution, dtype=float)
    i = min(special_point.index, len(branch) - 1)
    known = special_point.data.get("tangent", branch.tangents[i])
    info = branch_point_tangents(disc, Zs, known)
    v = float(np.sign(direction) or 1.0) * info["t_new"]
    h = float(step) if step is not None else 1e-2 * max(1.0, np.linalg.norm(Zs))
    Z1, _ = correct(disc, Zs + h * v, v, max_iter=30)
    if np.linalg.norm(Z1 - Zs) < 0.1 * h:
        raise ConvergenceError("the corrected first point fell back onto the branch point; try a larger step")
    span = float(np.ptp(branch.param)) or 1.0
    lo = float(np.min(branch.param)) - span if lam_min is None else lam_min
    hi = float(np.max(branch.param)) + span if lam_max is None else lam_max
    if not lo <= Z1[-1] <= hi:
        raise InputError(f"the first point of the new branch (lam = {Z1[-1]:g}) is outside [{lo:g}, {hi:g}]")
    opts = options
    if opts is None or isinstance(opts, dict):
        opts = dict(opts or {})
        opts.setdefault("lam_min", lo)
        opts.setdefault("lam_max", hi)
        if method == "newton":
            opts.setdefault("step", h)
        opts = _default_options(method, opts, lo, hi)
    new = continuation(ContinuationProblem(disc, Z1, v), method, opts, progress,
                       provenance=dict(switched_from=float(Zs[-1])))
    new.branch_point = info
    if new.kind == "equilibrium" and len(new):
        from ._equilibria import eigenvalues
        model = disc.model
        ev = np.array([eigenvalues(model, Z[:model.n], Z[-1]) for Z in new.solutions])
        new.eigenvalues = ev
        new.stable = np.where(np.all(ev.real < 0, axis=1), 1.0, 0.0)
    return new


def switch_period_doubling_hbm(disc, special_point, *, amplitude: float | None = None, method: str = "anm",
                               options=None, lam_min: float | None = None, lam_max: float | None = None,
                               progress=None, harmonics: int | None = None):
    """Continue the period-doubled branch from a ``"pd"`` point of a forced HBM branch.

    The period-1 orbit at the period-doubling point is written in the ``omega / 2`` basis
    (:func:`~frictionkit.runtime._hbm.to_subharmonic`: its harmonic k becomes harmonic 2k).
    There the period-1 family is the symmetric branch of a pitchfork: at the point, the
    block of the Jacobian that maps the odd harmonics (of every variable) to the odd
    harmonics is singular, because a multiplier -1 of the period-1 orbit is a multiplier +1
    of the doubled one, and products of the even-harmonic orbit with an odd perturbation
    have odd harmonics only.  Its null vector ``phi`` (smallest singular vector of that
    block) is the critical Floquet mode; the first doubled orbit is ``Z* + a phi``,
    Newton-corrected on the hyperplane ``phi . (Z - Z*) = a`` (``lam`` free), then
    continued along ``phi``.

    Parameters
    ----------
    disc : HBMDiscretization
        The (forced) period-1 discretization of the branch.
    special_point : SpecialPoint
        A ``"pd"`` point (from :func:`~frictionkit.runtime._stability.branch_stability`).
    amplitude : float, optional
        Size of the first step along ``phi`` (default ``1e-2 max(1, |U|)``).
    method, options, lam_min, lam_max, progress
        As for :func:`~frictionkit.runtime._equilibria.periodic_branch`.
    harmonics : int, optional
        Harmonics of the doubled basis (default ``2 H``).

    Returns
    -------
    Branch
        The doubled branch (``omega`` = half the forcing frequency);
        ``provenance["switched_from"]`` = the PD point's ``lam``.
    """
    from ._hbm import HBMDiscretization, to_subharmonic

    if special_point.kind != "pd":
        raise InputError(f"switch_period_doubling_hbm needs a 'pd' special point, not {special_point.kind!r}")
    if not isinstance(disc, HBMDiscretization) or not disc.forced:
        raise InputError("switch_period_doubling_hbm: a forced HBM branch is needed (shooting: "
                         "switch_period_doubling; autonomous orbits: continue with half the frequency)")
    d2, Zs = to_subharmonic(disc, special_point.solution, 2, harmonics)
    J = _dense(d2.jacobian(Zs))
    nh = d2.nh
    k = np.arange(nh)
    odd_k = ((k + 1) // 2) % 2 == 1                   # harmonic index (k+1)//2 is odd
    odd = np.flatnonzero(np.tile(odd_k, d2.N))
    _, sv, Vt = np.linalg.svd(J[np.ix_(odd, odd)])
    phi = np.zeros(d2.size)
    phi[odd] = Vt[-1]
    rel = sv[-1] / sv[0]
    if rel > 1e-6:
        warnings.warn(f"the odd-harmonic block is not singular at this point (smallest/largest singular "
                      f"value {rel:.2e}): is it a located period doubling?", RuntimeWarning, stacklevel=2)
    if amplitude is None:
        amplitude = 1e-2 * max(1.0, float(np.max(np.abs(Zs[:-1]))))
    Z1 = Zs + amplitude * phi
    Z1, _ = correct(d2, Z1, phi, float(phi @ Zs) + amplitude, max_iter=30)
    if np.linalg.norm((Z1 - Zs)[odd]) < 0.1 * abs(amplitude):
        raise ConvergenceError("the correction fell back onto the period-1 orbit: try another amplitude")
    return _continue_doubled(d2, Z1, np.sign(amplitude) * phi, special_point, method, options, lam_min,
                             lam_max, progress)


def switch_period_doubling_collocation(disc, special_point, *, amplitude: float | None = None,
                                       method: str = "anm", options=None, lam_min: float | None = None,
                                       lam_max: float | None = None, progress=None):
    """Continue the period-doubled branch from a ``"pd"`` point of a forced collocation branch.

    The period-1 orbit is written on a mesh of twice as many sub-intervals spanning two
    forcing periods (``CollocationDiscretization(..., subharmonic=2)``: the same mesh over
    each period, so the embedded orbit solves the doubled system exactly).  At the period
    doubling the doubled system's Jacobian (``lam`` fixed) is singular with an
    *antiperiodic* null vector ``phi(tau + 1/2) = -phi(tau)`` (a multiplier -1 of the
    period-1 orbit is a multiplier +1 over two periods); it is found by inverse iteration
    with the sparse LU and made exactly antiperiodic.  The first doubled orbit is
    ``Z* + a phi`` corrected on the hyperplane ``phi . (Z - Z*) = a`` (``lam`` free), then
    continued along ``phi`` — the collocation counterpart of :func:`switch_period_doubling_hbm`.

    Parameters
    ----------
    disc : CollocationDiscretization
        The forced period-1 discretization of the branch.
    special_point : SpecialPoint
        A ``"pd"`` point of the branch.
    amplitude, method, options, lam_min, lam_max, progress
        As for :func:`switch_period_doubling_hbm`.

    Returns
    -------
    Branch
    """
    from ._collocation import CollocationDiscretization

    if special_point.kind != "pd":
        raise InputError(f"switch_period_doubling_collocation needs a 'pd' special point, not {special_point.kind!r}")
    if not isinstance(disc, CollocationDiscretization) or not disc.forced:
        raise InputError("switch_period_doubling_collocation: a forced collocation branch is needed")
    Zs1 = np.asarray(special_point.solution, dtype=float)
    d2 = CollocationDiscretization(disc.model, 2 * disc.n_intervals, disc.degree, subharmonic=2 * disc.nu)
    U1, _, lam = disc._parts(Zs1)
    # every variable has G values per forcing period in the same places: repeat them
    Zs = np.append(np.tile(U1, (1, 2)).ravel(), lam)
    G2 = d2.G
    J = d2.jacobian(Zs).tocsc()[:, :d2.m]
    lu = scipy.sparse.linalg.splu(J)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(d2.m)
    for _ in range(3):
        x = lu.solve(x)
        x /= np.linalg.norm(x)
    X = x.reshape(d2.N, G2)
    X = 0.5 * (X - np.roll(X, G2 // 2, axis=1))            # antiperiodic part
    phi = np.append(X.ravel(), 0.0)
    phi /= np.linalg.norm(phi)
    res = np.linalg.norm(J @ phi[:-1]) / max(scipy.sparse.linalg.norm(J, 1), 1e-300)
    if res > 1e-6:
        warnings.warn(f"no antiperiodic null vector at this point (relative |J phi| = {res:.2e}): is it a "
                      "located period doubling?", RuntimeWarning, stacklevel=2)
    if amplitude is None:
        amplitude = 1e-2 * max(1.0, float(np.max(np.abs(Zs[:-1]))))
    Z1, _ = correct(d2, Zs + amplitude * phi, phi, float(phi @ Zs) + amplitude, max_iter=30)
    U2 = Z1[:-1].reshape(d2.N, G2)
    if np.linalg.norm(U2 - np.roll(U2, G2 // 2, axis=1)) < 0.1 * abs(amplitude):
        raise ConvergenceError("the correction fell back onto the period-1 orbit: try another amplitude")
    return _continue_doubled(d2, Z1, np.sign(amplitude) * phi, special_point, method, options, lam_min,
                             lam_max, progress)


def _continue_doubled(disc, Z1, direction, special_point, method, options, lam_min, lam_max, progress):
    """Continue a switched period-doubled branch (``periodic_branch``; range default +-1 about
    the period-doubling point), recording where it was switched from."""
    from ._equilibria import periodic_branch
    lo = special_point.param - 1.0 if lam_min is None else lam_min
    hi = special_point.param + 1.0 if lam_max is None else lam_max
    return periodic_branch(disc, Z1, lo, hi, direction, method=method, options=options, progress=progress,
                           provenance=dict(switched_from=float(special_point.param)))
