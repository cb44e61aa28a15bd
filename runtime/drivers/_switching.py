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
import scipy

from ..analysis._branch_points import _dense, branch_point_tangents
from ..discretizations._collocation import CollocationDiscretization
from ..discretizations._hbm import to_subharmonic
from ..engine._newton import correct
from ..errors import ConvergenceError, InputError

__all__ = ["switch_branch", "switch_period_doubling_hbm", "switch_period_doubling_collocation"]


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
    from ..engine._options import ContinuationProblem, default_options
    from ._continue import continuation

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
        opts = default_options(method, opts, lo, hi)
    new = continuation(ContinuationProblem(disc, Z1, v), method, opts, progress,
                       provenance=dict(switched_from=float(Zs[-1])))
    new.branch_point = info
    if new.kind == "equilibrium" and len(new):
        from ..analysis._equilibria import eigenvalues
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

    if special_point.kind != "pd":
        raise InputError(f"switch_period_doubling_hbm needs a 'pd' special point, not {special_point.kind!r}")
    if disc.kind != "hbm" or not disc.forced:
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
    import scipy.sparse.linalg   # here: a model of a few states never imports scipy.sparse
    if special_point.kind != "pd":
        raise InputError(f"switch_period_doubling_collocation needs a 'pd' special point, not {special_point.kind!r}")
    if disc.kind != "collocation-recast" or not disc.forced:
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
    from ._branches import periodic_branch
    lo = special_point.param - 1.0 if lam_min is None else lam_min
    hi = special_point.param + 1.0 if lam_max is None else lam_max
    return periodic_branch(disc, Z1, lo, hi, direction, method=method, options=options, progress=progress,
                           provenance=dict(switched_from=float(special_point.param)))
