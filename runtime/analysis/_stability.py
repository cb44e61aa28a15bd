"""Stability of periodic orbits and criticality of Hopf points (DESIGN §5.5).

Three routes to the Floquet multipliers of a periodic orbit of the original ODE
``x' = f(x, t; p)``, all on the *original* states (no auxiliary variables, so no spurious
multipliers):

1. :func:`floquet_variational` — integrate the variational equation ``Phi' = J(x(t)) Phi``
   over one period (``_shooting``); the monodromy's eigenvalues are the multipliers.
2. :func:`floquet_collocation` — the monodromy of the collocation-discretised variational
   equation, obtained by condensing the collocation Jacobian interval by interval
   (the linearised collocation equations of interval ``i`` give the state at its end as
   ``Phi_i`` times the state at its start; ``M = Phi_{N-1} ... Phi_0``).
3. :func:`hill_multipliers` — Hill's method from HBM coefficients of the states: with
   ``y = exp(s t) sum_k c_k exp(i k omega t)``, ``|k| <= H``, the variational equation becomes
   the eigenproblem ``s c_k = sum_m Jhat_(k-m) c_m - i k omega c_k`` where ``Jhat_l`` are the
   complex Fourier coefficients of ``J(x(t))`` (a block-Toeplitz "Hill matrix").  Of its
   ``n (2H+1)`` eigenvalues the ``n`` with the smallest ``|Im s|`` are kept (Lazarus & Thomas,
   C. R. Mécanique 338, 2010), and the multipliers are ``exp(T s)``.

Every result reports ``trivial_multiplier_error``, the distance of the multiplier closest to
1 from 1 (autonomous orbits): the reliability measure of issue 4.

Criticality of a Hopf point of an equilibrium: :func:`first_lyapunov` (Kuznetsov,
"Elements of applied bifurcation theory", 3rd ed., eq. (3.20) and §8.7.2: multilinear-form
formula) with the forms ``B``, ``C`` from central finite differences of ``model.jac``.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import dataclasses
from dataclasses import dataclass
import os
from collections import OrderedDict
import warnings

import numpy as np

from ..discretizations._shooting import PeriodicOrbit
from ..engine._locate import locate_on_branch, locate_on_interpolant
from ..engine._options import ContinuationOptions
from ..errors import ConvergenceError, InputError
from ..results._branch import SpecialPoint
from ..results._columns import orbit_samples
from ..results._result import Result
from ._floquet import FloquetResult, _result, adaptive_magnus_monodromy, floquet_collocation, liouville_multipliers
from ._hill import hill_multipliers, hill_multipliers_hbm
from ._motion import UNKNOWN_MOTION, classify_motions, limit_velocities, warn_unknown_limits


# ---------------------------------------------------------------------------------------
# any discretization
# ---------------------------------------------------------------------------------------
def orbit_stability(disc, Z, *, tol: float = 1e-6, rtol: float | None = None) -> FloquetResult:
    """Floquet multipliers of a converged orbit of any periodic discretization.

    Dispatch by the discretization's ``floquet_route`` (contract item 14):
    ``"collocation"`` -> :func:`floquet_collocation`; ``"monodromy"`` (shooting) -> the
    eigenvalues of ``disc.monodromy(Z)``; ``"hill"`` (harmonic balances, whose ``unpack``
    gives ``coefficients`` and ``harmonics``) -> :func:`hill_multipliers`.

    Parameters
    ----------
    disc : Discretization
    Z : ndarray
        A solution (``disc.residual(Z) ~ 0``).
    tol : float
        Margin of the ``stable`` flag.
    rtol : float, optional
        Monodromies integrated on a time grid (harmonic balances of the states): the balanced
        orbit of the model's states by :func:`adaptive_magnus_monodromy` (steps chosen by the
        local error, ``rtol`` per step; a planar autonomous system's by Liouville's formula,
        :func:`liouville_multipliers`, exact and not integrated), other grids doubled until the multipliers agree to
        ``rtol`` (:func:`refined_monodromy_stability`); None takes the discretization's own grid.

    Returns
    -------
    FloquetResult
    """
    route = disc.floquet_route
    if route == "collocation":
        return floquet_collocation(disc, Z, tol=tol)
    if route == "monodromy":
        info = disc.unpack(Z) if rtol is not None else {}
        if info.get("path") == "aft" and disc.model.n == 2 and not disc.forced:   # planar: exact, no integration
            return liouville_multipliers(disc.model, info["lam"], info["coefficients"], info["omega"],
                                         int(info["n_t"]), tol=tol)
        if info.get("path") == "aft":           # a balanced orbit of the model's own states
            M, how = adaptive_magnus_monodromy(disc.model, info["lam"], info["coefficients"], info["omega"],
                                               int(info["harmonics"]), rtol=rtol, n_start=int(info["n_t"]))
            return _result(np.linalg.eigvals(M), not disc.forced, "variational" if how["converged"]
                           else "variational (not converged)", tol, monodromy=M)
        if info.get("path") == "aft-condensed":  # its monodromy takes a number of equal steps
            return refined_monodromy_stability(disc, Z, int(info["n_t"]), rtol=rtol, tol=tol)
        M = disc.monodromy(Z)
        return _result(_eigenvalues(disc, M), not disc.forced, "variational", tol, monodromy=M)
    if route == "hill":
        info = disc.unpack(Z)
        coeffs = np.asarray(info["coefficients"])[: disc.model.n].ravel()
        return hill_multipliers(disc.model, info["lam"], coeffs, info["omega"], int(info["harmonics"]), tol=tol)
    if disc.kind == "equilibria":
        raise InputError("orbit_stability: an equilibrium (H = 0) has eigenvalues, not Floquet multipliers")
    raise InputError(f"orbit_stability: a {disc.kind} system has no Floquet multipliers "
                     "(collocation, shooting or HBM)")


#: the finest monodromy grid :func:`refined_monodromy_stability` tries, in multiples of the
#: discretization's own (the LuGre belt of issue 26 at vb = 1 needs 8 for an estimate of 1e-6)
MAX_REFINEMENT = 16


def _spectral_change(a, b, n: int | None = None) -> float:
    """Largest distance from a multiplier of one set to the nearest of the other (both ways).

    ``n``: the monodromy's size; sets of its leading multipliers only (:func:`_eigenvalues`)
    are compared above the higher of their smallest moduli plus 1e-3 (below it a multiplier's
    partner may be missing from the other set)."""
    a, b = np.asarray(a), np.asarray(b)
    if n is not None and min(a.size, b.size) < n:
        floor = max(np.abs(a).min(), np.abs(b).min()) + 1e-3
        a_top, b_top = a[np.abs(a) > floor], b[np.abs(b) > floor]
        return float(max(np.abs(a_top[:, None] - b[None, :]).min(axis=1).max(initial=0.0),
                         np.abs(b_top[:, None] - a[None, :]).min(axis=1).max(initial=0.0)))
    d = np.abs(a[:, None] - b[None, :])
    return float(max(d.min(axis=1).max(), d.min(axis=0).max()))


def _eigenvalues(disc, M, start=None, with_start=False):
    """The monodromy's eigenvalues: all, or only the leading ones where the discretization
    says which matter (contract item 24, ``multipliers_of``: a large structure's, issue 24);
    ``start``, ``with_start`` as there."""
    return disc.multipliers_of(M, start=start, with_start=with_start)


def _monodromy(disc, Z, intervals):
    """``disc.monodromy(Z, intervals)``, or its linear operator where the discretization has
    one (contract item 26: a very large structure's leading multipliers by ARPACK)."""
    op = disc.monodromy_operator(Z, intervals)
    return op if op is not None else disc.monodromy(Z, intervals=intervals)


def refined_monodromy_stability(disc, Z, n_t: int, *, rtol: float = 1e-6, tol: float = 1e-6,
                                max_refinement: int = MAX_REFINEMENT) -> FloquetResult:
    """Floquet multipliers from a monodromy whose time grid is refined until their estimated
    error is below ``rtol``.

    The monodromy of a balanced orbit is a quadrature of the variational equation on equal
    steps, by a rule of order ``p = disc.monodromy_order`` (contract item 28: the AFT's
    fourth-order Magnus rule, the condensed structure's sixth-order Gauss collocation); its
    error is set by the stiffest part of the orbit (the bristle state of a LuGre law in slip:
    ``|dz'/dz| = s0 |vr| / g`` of several hundred), not by the harmonics of the orbit.  With
    the monodromies ``M_N`` and ``M_2N`` on ``N`` and ``2N`` steps, the error of ``M_2N`` is
    ``(M_N - M_2N) / (2^p - 1)``, and Richardson's extrapolation
    ``M_x = (2^p M_2N - M_N) / (2^p - 1)`` removes it (Hairer, Nørsett and Wanner, Solving
    ODEs I, 2nd ed., §II.9; both rules are symmetric, so the next term is of order ``p + 2``).
    The grid is doubled from the discretization's ``n_t`` until the estimated error of the
    finer grid's multipliers is below ``rtol max(1, |mu|_max)``, up to ``max_refinement n_t``
    steps; the multipliers are those of the extrapolated matrix.  The estimate is read as
    ``|mu(M_x) - mu(M_2N)|`` (``M_x - M_2N = (M_2N - M_N) / (2^p - 1)`` exactly, so the two
    agree to first order in the multipliers' change): the eigenvalues of the extrapolated
    matrix, which are returned, and of ``M_2N`` only, two eigenvalue problems per doubling
    instead of three (the multipliers returned are the same; at 512 states each costs about
    as much as a monodromy).  On the LuGre belt of issue 26 at
    vb = 1 (orbit exact to 1e-11) the multipliers on ``n_t`` = 128 steps are 3.7e-3 off
    (tests/analysis/test_stability_default.py: against shooting with solve_ivp).  The
    estimate is asymptotic, not a bound: on a grid not yet in the rule's asymptotic range it
    can fall short (the 8-mode bowed string at a Neimark-Sacker point, H = 48: the pair's
    modulus on 200, 400, 800 and 1600 steps is 1 + 3.6e-9, 5.7e-11, 3.33e-10, 3.364e-10, and
    the estimate from 200 and 400 steps, 5.7e-11, is 6 times below the error of the
    extrapolated value, 3.4e-10).  The result keeps ``M_2N``'s multipliers
    (``multipliers_compared``) so that a function of them has its own estimate
    (``FloquetResult.error_of``).

    Parameters
    ----------
    disc : Discretization
        Whose ``monodromy(Z, intervals)`` integrates on ``intervals`` equal steps by a rule of
        order ``monodromy_order``.
    Z : ndarray
    n_t : int
        The grid to start from (the discretization's own, ``unpack(Z)["n_t"]``).

    Returns
    -------
    FloquetResult
        ``monodromy`` the extrapolated one; ``method`` is ``"variational"`` when the estimate
        met ``rtol``, ``"variational (not converged)"`` otherwise.
    """
    order = disc.monodromy_order
    if order is None:
        raise InputError(f"refined_monodromy_stability: the monodromy of a {disc.kind} system is not a "
                         "fixed-step rule (contract item 28, monodromy_order); use orbit_stability")
    gain = 2.0 ** int(order)
    N = int(n_t)
    M = _monodromy(disc, Z, N)
    converged = False
    while True:
        N *= 2
        M2 = _monodromy(disc, Z, N)
        Mx = (gain * M2 - M) / (gain - 1)
        mux, start = _eigenvalues(disc, Mx, with_start=True)
        mu2 = _eigenvalues(disc, M2, start=start)       # close to Mx: ARPACK starts from its eigenvectors
        estimate = _spectral_change(mux, mu2, M.shape[0])     # = |mu(M2) - mu(M)| / (2^p - 1) to 1st order
        M = M2
        if estimate <= rtol * max(1.0, float(np.max(np.abs(mu2)))):
            converged = True
            break
        if N >= max_refinement * int(n_t):
            break
    return _result(mux, not disc.forced, "variational" if converged
                   else "variational (not converged)", tol, monodromy=Mx, error=estimate, compared=mu2)


def multiplier_crossings(results, *, tol: float = 1e-9) -> list[tuple[int, str]]:
    """Bifurcations of cycles between consecutive orbits of a branch, from their multipliers.

    A non-trivial multiplier leaving or entering the unit circle between orbits ``i`` and
    ``i + 1`` is classified by where it crosses (DESIGN §5.5): through +1 -> ``"fold"``
    (a fold of cycles or a branch point: tell them apart by the tangent's ``lam``
    component), through -1 -> ``"pd"`` (period doubling), as a complex pair -> ``"ns"``
    (Neimark-Sacker).  The multipliers outside the circle are counted in three classes at
    either end: real negative, real positive, complex.  Two real multipliers that meet and
    leave the axis as a pair (or the converse) change the real counts by two and the complex
    one by two, a real multiplier crossing changes its class's count by one: so an odd
    change of the real negative count is a period doubling, of the real positive count a
    fold, and a change of the total beyond those real crossings (by two or more) a
    Neimark-Sacker point.  Several can fall between two orbits (the 16-mode bowed string
    across its fold of cycles at Vb = 0.457: multipliers -1.019, +-1.019i and 1.018 all
    enter the circle within one step), each is listed.  (The multiplier nearest the circle,
    which this read before, may be another one: on the 8-mode string at Vb = 0.236 a pair
    near +-i crosses while a real multiplier stays at -0.99988.)  An even change of a real
    count alone (two multipliers through -1 or +1 within one step) is classified by that
    class.

    Parameters
    ----------
    results : sequence of FloquetResult
        Multipliers of consecutive orbits.
    tol : float
        Moduli within ``tol`` of 1 count as on the circle (no crossing).

    Returns
    -------
    list of (int, str)
        ``(i, kind)``: a crossing between orbits ``i`` and ``i + 1``; ``i`` repeats where
        several kinds fall between the same two orbits (in the order fold, pd, ns).
    """
    def counts(res):
        nt = res.nontrivial()
        out = np.abs(nt) > 1 + tol
        real = np.abs(nt.imag) <= 1e-6 * np.maximum(1.0, np.abs(nt))
        return (int(np.sum(out & ~real)), int(np.sum(out & real & (nt.real < 0))),
                int(np.sum(out & real & (nt.real > 0))))

    out = []
    for i in range(len(results) - 1):
        (ca, na, pa), (cb, nb, pb) = counts(results[i]), counts(results[i + 1])
        total = (cb + nb + pb) - (ca + na + pa)
        if total == 0:
            continue
        kinds = [kind for kind, d in (("fold", pb - pa), ("pd", nb - na)) if d % 2]
        if abs(total) - len(kinds) >= 2:
            kinds.append("ns")
        if not kinds:                      # even changes only: the class that changed with the total
            sign = 1 if total > 0 else -1
            kinds = [next((kind for kind, d in (("ns", cb - ca), ("pd", nb - na), ("fold", pb - pa))
                           if d * sign > 0), "ns")]
        out.extend((i, kind) for kind in kinds)
    return out


# ---------------------------------------------------------------------------------------
# period doubling by shooting (located and switched by drivers/_orbits.py)
# ---------------------------------------------------------------------------------------
@dataclass
class PeriodDoublingPoint(Result):
    """A located period doubling (:func:`~frictionkit.runtime.drivers.locate_period_doubling`).

    Attributes
    ----------
    lam : float
        Parameter value where a multiplier is -1.
    orbit : PeriodicOrbit
        The period-1 orbit there.
    multiplier : complex
        The multiplier closest to -1.
    eigenvector : ndarray (n,)
        Its real unit eigenvector of the monodromy.
    success, status, message :
        The result convention (``status = "located"``); ``pd["lam"]`` reads like the
        former dict result.
    """

    lam: float
    orbit: PeriodicOrbit
    multiplier: complex
    eigenvector: np.ndarray


# ---------------------------------------------------------------------------------------
# stability along a continued branch
# ---------------------------------------------------------------------------------------
def point_stability(disc, Z, *, tol: float = 1e-6, which: str = "both", rtol: float | None = None):
    """Multipliers of one branch point: ``(primary, reference)`` FloquetResults.

    HBM: primary = :func:`hill_multipliers_hbm` (consistent with the branch's folds),
    reference = :func:`hill_multipliers` on the original ODE (the reliability measure);
    models with derivative-bilinear rows use the original-ODE Hill as primary and have no
    reference.  Collocation and shooting: :func:`orbit_stability`, no reference.
    ``which`` = ``"primary"`` or ``"reference"`` computes only that one (the other is None).
    ``rtol``: the convergence tolerance of a refined monodromy (:func:`orbit_stability`).
    """
    if disc.kind == "hbm":
        if "derivative_bilinear" in tuple(disc.model.kinds):
            return orbit_stability(disc, Z, tol=tol, rtol=rtol), None
        prim = hill_multipliers_hbm(disc, Z, tol=tol) if which != "reference" else None
        ref = orbit_stability(disc, Z, tol=tol, rtol=rtol) if which != "primary" else None
        return prim, ref
    return orbit_stability(disc, Z, tol=tol, rtol=rtol), None


def _largest_nontrivial(res: FloquetResult) -> float:
    nt = res.nontrivial()
    return float(np.max(np.abs(nt))) if nt.size else np.nan


def _near_one_product(res: FloquetResult) -> float:
    """``Re(mu_a mu_b) - 1`` of the two multipliers closest to 1 (autonomous), or
    ``Re(mu) - 1`` of the closest (forced): changes sign where a real multiplier passes +1,
    also at a fold where it meets the trivial one (their product stays real and smooth)."""
    mu = res.multipliers
    order = np.argsort(np.abs(mu - 1))
    if np.isfinite(res.trivial_multiplier_error) and mu.size >= 2:
        return float((mu[order[0]] * mu[order[1]]).real - 1)
    return float(mu[order[0]].real - 1)


def _pd_test(res: FloquetResult) -> float:
    """The distance of the real non-trivial multiplier nearest -1 from -1, with the sign of
    ``det(M + I)``: ``prod (mu + 1)`` over the real multipliers times ``prod |mu + 1|^2``
    over the complex pairs.  It is continuous and changes sign exactly where a real
    multiplier passes -1, also while another one is already beyond it (the minimum of
    ``Re(mu) + 1`` misses that second period doubling: the bowed string of 64 modes at Vb =
    0.11, multipliers -1.0023 and -0.9997 before, -1.0015 and -1.0001 after); where two real
    multipliers meet and leave the real axis as a pair it jumps without changing sign, and
    the multipliers a leading set leaves out (inside the unit circle: real ones above -1) do
    not change its sign."""
    nt = res.nontrivial()
    real = np.abs(nt.imag) <= 1e-6 * np.maximum(1.0, np.abs(nt))      # as multiplier_crossings reads them
    sign = np.prod(np.sign(nt[real].real + 1))
    return float(sign * np.min(np.abs(nt[real].real + 1), initial=1.0))


def _ns_test(res: FloquetResult) -> float:
    nt = res.nontrivial()
    cplx = nt[np.abs(nt.imag) > 1e-9 * np.maximum(1.0, np.abs(nt))]
    return float(np.max(np.abs(cplx)) - 1) if cplx.size else np.nan


def branch_stability(branch, disc=None, *, tol: float = 1e-6, motion: bool = True, locate: bool = True,
                     counters=None, points=None, stride: int = 1, workers: int | None = None,
                     rtol: float | None = ContinuationOptions.multiplier_rtol):
    """Fill the stability columns of a periodic branch and record its bifurcations of cycles.

    For every branch point the Floquet multipliers are computed (:func:`point_stability`:
    Hill's method on the HBM Jacobian for HBM branches, the condensed collocation
    monodromy for collocation, the variational monodromy for shooting).  Filled in place:

    * ``branch.stable`` (1 stable / 0 unstable), ``branch.multipliers`` (n_points, n)
      complex, ``branch.max_multiplier`` (largest non-trivial ``|mu|``),
    * ``branch.trivial_multiplier_error``: distance of the trivial multiplier from 1 by the
      original-ODE Hill method for HBM branches (the reliability measure of the truncation;
      the primary multipliers have it at rounding level), by the primary method otherwise,
    * ``branch.multiplier_agreement``: HBM only, ``|max_multiplier(HBM Hill) -
      max_multiplier(original-ODE Hill)|``,
    * ``branch.motion``: the motion label of :func:`~frictionkit.runtime.analysis._motion.classify_motion`
      (all points at once, :func:`~frictionkit.runtime.analysis._motion.classify_motions`)
      for models with contacts (seed 000 eq. (26), seed 003 eqs. (7)-(8)); ``"unknown"``
      where the contact law cannot be evaluated (an error in the model's contact code is a
      warning, never the loss of the branch).

    With ``locate``, multiplier crossings (:func:`multiplier_crossings`) are located along
    the branch by Brent's method on a test function, re-solving the discretization on
    hyperplanes between the two branch points (``_continuation.locate_on_branch``):

    * through +1 at an engine fold (next to it, or the nearest such crossing with no other
      special point in between: the multipliers' error can displace it by a few points,
      :func:`_plus_crossing_owners`): the fold's ``data`` gets ``crossing_param`` (the
      root of ``Re(mu_a mu_b) - 1`` of the two multipliers nearest 1), the multipliers at
      the fold and, for HBM, ``crossing_param_reference`` (the same root with the
      original-ODE Hill multipliers, searched on the nearest bracketing interval);
    * through +1 without a fold (the tangent's ``lam`` component keeps its sign): a branch
      point ``"bp"`` (unless the bordered-determinant test already recorded it there, by
      the same rule);
    * through -1: ``"pd"`` (root of ``min Re(mu) + 1``); a complex pair: ``"ns"`` (root
      of ``max |mu_complex| - 1``).

    Parameters
    ----------
    branch : Branch
        A periodic branch (``branch.discretization`` is used when ``disc`` is omitted).
    disc : Discretization, optional
    tol : float
        Margin of the stable flag (``|mu| < 1 - tol``).
    motion : bool
        Classify the motion (models declaring contacts only).
    locate : bool
        Locate bifurcations from the multiplier crossings.
    points : sequence of int, optional
        Branch indices where the multipliers may be computed first (increasing, first and
        last included; default all): the continuation passes the ANM's step ends.
    stride : int
        Multipliers only where needed (bracket and bisect): every ``stride``-th of ``points``
        is computed, with the points next to every special point already on the branch;
        between two computed points whose stable flags differ, or between which a multiplier
        crosses the unit circle, the points in between are bisected down to adjacent
        ``points``, and then every branch point between those two is computed.  Any other
        point inherits the stable flag of its two computed neighbours, which agree (its
        multiplier columns are NaN).  Two crossings that cancel between two computed
        points (a multiplier leaving and re-entering the unit circle within ``stride``
        points, away from any special point) are not seen; ``stride = 1`` (the default)
        computes every one of ``points``.
    rtol : float, optional
        Monodromies on a time grid (harmonic balances of the states): integrated with steps
        chosen by the error (:func:`orbit_stability`'s ``rtol``; default the continuation's,
        ``multiplier_rtol``).  None: the discretization's own grid.  A point whose trivial multiplier stays farther from 1 than a non-trivial
        one from the unit circle (the orbit, not the quadrature, limits the multipliers then)
        gets ``stable`` NaN (uncertain), said in ``branch.message``.
    workers : int, optional
        Threads computing the multipliers of different points at once (the condensation
        solves run in LAPACK, outside Python's lock); default ``min(4, os.cpu_count())`` for
        harmonic balance branches, 1 otherwise.  The results do not depend on it.

    Returns
    -------
    list of FloquetResult
        The primary result of every branch point (None where not computed, see ``points``);
        a monodromy of more than ``KEEP_MONODROMY_STATES`` states is not kept on them
        (``monodromy`` None: memory linear in the size of a structure).
    """
    disc = disc if disc is not None else branch.discretization
    if disc is None:
        raise InputError("branch_stability needs the branch's discretization (disc=...)")
    if branch.kind != "periodic":
        raise InputError("branch_stability: equilibrium branches carry eigenvalues, not multipliers")
    prim, refs, stable = _multipliers_along(branch, disc, tol, points, workers, stride, rtol)
    done = [i for i in range(len(prim)) if prim[i] is not None]
    _store_columns(branch, prim, refs, stable, done)
    model = disc.model
    if motion and len(model.contacts):
        branch.motion = _motion_labels(branch, disc)
    if locate:
        _locate_crossings(branch, disc, prim, refs, done, tol, counters, rtol)
    return prim


#: samples per period of the motion labels, and the size of the samples of a part of a branch
MOTION_SAMPLES, MOTION_PART_BYTES = 2048, 2 ** 20


def _motion_labels(branch, disc):
    """The motion label of every point of ``branch`` (:func:`branch_stability`, ``motion``).

    ``V_n`` searched once if the law does not involve ``lam`` (``limit_velocities``), the
    points classified in parts of :data:`MOTION_PART_BYTES` of samples (one inverse FFT
    each): the whole branch's samples at once (the belt's 717 points: 23 MB, with as much
    again inside the FFT) cost a fresh process 0.06 s of CPU in first-touched memory, the
    parts 0.008 s.  The labels come last, from the model module's own contact code: an error
    raised there (a hand-written ``contact_law`` that fails, a module generated before
    internal states of friction laws were supported) gives the label ``"unknown"`` and a
    warning, never the loss of the computed branch.
    """
    model = disc.model
    params = np.asarray(branch.param, dtype=float)
    omegas = np.asarray(branch.omega, dtype=float) if model.forced else None
    labels = []
    try:
        v_n = limit_velocities(model, params)
        warn_unknown_limits(model, v_n, stacklevel=2)
        part = max(1, MOTION_PART_BYTES // (8 * MOTION_SAMPLES * max(1, len(disc.state_names))))
        for i in range(0, len(params), part):
            samples = orbit_samples(disc, branch.solutions[i:i + part], MOTION_SAMPLES)
            labels += [r.label for r in classify_motions(
                model, params[i:i + part], samples, omegas=None if omegas is None else omegas[i:i + part],
                velocity=disc.contact_velocity, v_n=v_n[i:i + part])]
        return labels
    except Exception as exc:     # the model module's code, after the branch is computed
        warnings.warn(f"motion labels of model {model.name!r} unknown: its contact_velocity/contact_law raised "
                      f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=3)
        return [UNKNOWN_MOTION] * len(branch.solutions)


#: the results of a branch's points keep their monodromy up to this many states (128: 128 kB
#: each); above, only the multipliers: the 256-mode bowed string's 110 step ends held 2 MB
#: each, 220 MB at once
KEEP_MONODROMY_STATES = 128


def _without_large_monodromy(res):
    """``res`` without its monodromy matrix if that has more than ``KEEP_MONODROMY_STATES``
    states (None stays None)."""
    if res is None or res.monodromy is None or np.shape(res.monodromy)[0] <= KEEP_MONODROMY_STATES:
        return res
    return dataclasses.replace(res, monodromy=None)


def _multipliers_along(branch, disc, tol, points, workers, stride=1, rtol=None):
    """Primary and reference multipliers where :func:`branch_stability`'s rule needs them, and
    the inherited stable flags.

    The rule (``points`` = the candidate points, default all; ``stride`` = k):

    1. computed first: every k-th candidate, the first and the last, and the two candidates
       bracketing every special point already on the branch (engine folds, branch points,
       Hopf points);
    2. bisection: between two computed candidates whose stable flags differ or between which
       a multiplier crosses the unit circle (:func:`multiplier_crossings`), the middle
       candidate is computed, round after round, until such pairs are adjacent candidates;
    3. between adjacent candidates that still disagree, every branch point in between (the
       ANM's series points inside one step) is computed;
    4. every other point inherits the stable flag of its two computed neighbours, which
       agree (its multiplier columns stay NaN).
    """
    n_pts = len(branch.solutions)
    prim, refs = [None] * n_pts, [None] * n_pts
    # threads for the harmonic balances (pure functions of Z, LAPACK-bound condensation);
    # shooting and collocation compute their multipliers one point at a time
    workers = (min(4, os.cpu_count() or 1) if disc.kind == "hbm" else 1) if workers is None else max(1, int(workers))

    def one(i):
        return tuple(_without_large_monodromy(r) for r in point_stability(disc, branch.solutions[i], tol=tol, rtol=rtol))

    def compute(indices):
        todo = sorted({int(i) for i in indices if prim[i] is None})
        if workers > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(one, todo))
        else:
            results = [one(i) for i in todo]
        for i, res in zip(todo, results):
            prim[i], refs[i] = res

    def differ(a, b):
        return prim[a].stable != prim[b].stable or bool(multiplier_crossings([prim[a], prim[b]]))

    cand = sorted(set(range(n_pts)) if points is None else {int(i) for i in points} | {0, n_pts - 1})
    k = max(1, int(stride))
    first = set(range(0, len(cand), k)) | {len(cand) - 1}
    for sp in branch.special:          # the candidates on either side of each special point
        j = int(np.searchsorted(cand, sp.index, side="right"))
        first |= {max(j - 1, 0), min(j, len(cand) - 1)}
    pos = sorted(first)                # positions in cand, computed
    compute(cand[j] for j in pos)
    while True:
        mids = [(a + b) // 2 for a, b in zip(pos[:-1], pos[1:]) if b > a + 1 and differ(cand[a], cand[b])]
        if not mids:
            break
        compute(cand[j] for j in mids)
        pos = sorted(set(pos) | set(mids))
    stable = np.full(n_pts, np.nan)
    inside = []
    for a, b in zip(pos[:-1], pos[1:]):
        i, j = cand[a], cand[b]
        if j == i + 1:
            continue
        if differ(i, j):
            inside.extend(range(i + 1, j))     # adjacent candidates (rule 3)
        else:
            stable[i + 1:j] = 1.0 if prim[i].stable else 0.0
    compute(inside)
    return prim, refs, stable


def _store_columns(branch, prim, refs, stable, done):
    """The stability columns of ``branch`` from the multipliers of the points ``done``."""
    n_pts = len(prim)
    n_mult = max(len(prim[i].multipliers) for i in done)
    mult = np.full((n_pts, n_mult), np.nan, dtype=complex)
    branch.max_multiplier = np.full(n_pts, np.nan)
    branch.trivial_multiplier_error = np.full(n_pts, np.nan)
    branch.multiplier_agreement = np.full(n_pts, np.nan)
    amp = _relative_amplitude(branch)
    for i in done:
        p, r = prim[i], refs[i]
        mult[i, :len(p.multipliers)] = p.multipliers
        stable[i] = 1.0 if p.stable else 0.0
        branch.max_multiplier[i] = _largest_nontrivial(p)
        branch.trivial_multiplier_error[i] = (r if r is not None else p).trivial_multiplier_error
        if r is not None:
            branch.multiplier_agreement[i] = abs(_largest_nontrivial(p) - _largest_nontrivial(r))
        if amp[i] > 1e-6 and _uncertain(p, branch.trivial_multiplier_error[i]):
            stable[i] = np.nan      # (at a Hopf point, amplitude 0, a multiplier is 1 anyway)
    branch.multipliers = mult
    branch.stable = stable
    branch.stability_method = prim[done[0]].method if done else ""
    _note_uncertain(branch, done)


def _relative_amplitude(branch):
    """Largest peak-to-peak of the states, each relative to its largest on the branch (0 at a
    Hopf point, where a non-trivial multiplier is 1 with the trivial one)."""
    return np.max([np.asarray(branch.ptp[st], dtype=float) / (np.max(branch.ptp[st]) or 1.0)
                   for st in branch.states], axis=0)


def _uncertain(res: FloquetResult, error: float) -> bool:
    """The stable flag of ``res`` cannot be trusted: the trivial multiplier's distance from 1
    (``error``, the accuracy of the multipliers: it is 0 for exact ones) exceeds the distance
    of a non-trivial multiplier from the unit circle, or the refined monodromy did not
    converge and a non-trivial multiplier lies within that last change of the circle."""
    nt = res.nontrivial()
    if not nt.size or not np.isfinite(error):
        return False
    return bool(np.min(np.abs(np.abs(nt) - 1)) < error)


def _note_uncertain(branch, done):
    """Say where the stability is uncertain (``stable`` NaN at a computed point): in the
    branch's message, which every summary shows, and as a warning."""
    bad = [i for i in done if np.isnan(branch.stable[i])]
    if not bad:
        return
    lam = branch.param[bad]
    note = (f"stability uncertain at {len(bad)} of {len(done)} points with multipliers "
            f"(parameter {lam.min():.7g} .. {lam.max():.7g}; stable = NaN there): a non-trivial multiplier "
            f"lies closer to the unit circle than the trivial one to 1 (up to "
            f"{np.nanmax(branch.trivial_multiplier_error[bad]):.1e}, the multipliers' error); "
            "more harmonics resolve it")
    branch.message = f"{branch.message}; {note}" if branch.message else note
    warnings.warn(note, RuntimeWarning, stacklevel=4)


#: the evaluated points whose multipliers crossing location keeps (besides the branch's own)
RECENT_POINTS = 4


def _locate_crossings(branch, disc, prim, refs, done, tol, counters, rtol=None):
    """Special points from the multiplier crossings between the points ``done``
    (:func:`branch_stability`, ``locate``)."""
    P = branch.solutions
    nxt = {i: j for i, j in zip(done[:-1], done[1:])}     # the next computed point
    # the multipliers of the points met here, by their bytes: the branch points already
    # computed (the ends of an interpolant's bracket: held by the caller anyway), and the last
    # few points the tests evaluated (the located point's multipliers are read again below);
    # only those few are kept, each holds its monodromy (2 MB at 512 states, and a branch
    # locates about 70 points); the results are functions of Z alone
    memo, recent = {}, OrderedDict()
    for i in done:
        for which in ("both", "primary"):
            memo[(np.asarray(P[i], dtype=float).tobytes(), which)] = (prim[i], refs[i])

    def stability_at(disc, Z, *, tol, which="both", rtol=None):
        key = (np.asarray(Z, dtype=float).tobytes(), which)
        if key in memo:
            return memo[key]
        if key not in recent:
            recent[key] = point_stability(disc, Z, tol=tol, which=which, rtol=rtol)
            while len(recent) > RECENT_POINTS:
                recent.popitem(last=False)
        return recent[key]

    def located(i, fun, results, stol=1e-13, interpolant=False):
        """Root of fun(FloquetResult) between point i and the next computed one (None if no
        sign change).  ``interpolant``: search the branch's Hermite interpolant first and
        correct only next to its root (``locate_on_interpolant``), for a bracket of adjacent
        points, whose interpolant is accurate.  The search ends where the test's value is
        within its own estimated error of 0 (``FloquetResult.error_of``: the quadrature's, a
        refined monodromy's), below which its sign is noise (the 256-mode bowed string:
        Brent's method took 3 to 4 points to reach that, then 7 to 11 more at the same
        parameter to 1e-10)."""
        def test(Z):
            return fun(stability_at(disc, Z, tol=tol, which="primary", rtol=rtol)[results])

        def settled(Z, g):
            return abs(g) <= stability_at(disc, Z, tol=tol, which="primary", rtol=rtol)[results].error_of(fun)
        j = nxt.get(i, i + 1)
        try:
            if interpolant and j == i + 1:
                ta, tb = branch.tangents[i], branch.tangents[j]
                chord = P[j] - P[i]
                return locate_on_interpolant(disc, P[i], ta * np.sign(ta @ chord), P[j], tb * np.sign(tb @ chord),
                                             test, counters, stol=stol, settled=settled)
            # the multipliers of the two ends were computed on these points: not again
            ends = (fun(prim[i]), fun(prim[j])) if results == 0 and prim[i] is not None and prim[j] is not None else None
            return locate_on_branch(disc, P[i], P[j], test, counters, stol=stol, ends=ends, settled=settled)
        except (ConvergenceError, ValueError):
            return None

    # a second call replaces the points found from multipliers by the first one
    ours = ("multiplier -1", "complex pair", "multiplier +1 without a fold")
    branch.special = [sp for sp in branch.special if sp.data.get("detected_by") not in ours]
    folds = branch.special_points("fold")
    bps = branch.special_points("bp")
    new = []
    amp = _relative_amplitude(branch)
    crossings = [(done[k], done[k + 1], kind) for k, kind in multiplier_crossings([prim[i] for i in done])
                 if min(amp[done[k]], amp[done[k + 1]]) > 1e-6]    # not at a Hopf point (multiplier 1 there)
    owners = _plus_crossing_owners(crossings, folds + bps, branch.special)
    for (i, j, kind), owner in zip(crossings, owners):
        if owner is not None and owner.kind == "fold":
            f = owner
            # lam is quadratic in the chord coordinate at a fold: 1e-8 of the chord gives
            # lam to about 1e-16 of it; finer only chases the multipliers' noise
            Zc = located(i, _near_one_product, 0, stol=1e-8, interpolant=True)
            if Zc is None and f.index != i:
                Zc = located(f.index, _near_one_product, 0, stol=1e-8, interpolant=True)
            at = stability_at(disc, f.solution, tol=tol, rtol=rtol)
            f.data.update(multipliers=at[0].multipliers,
                          crossing_param=float(Zc[-1]) if Zc is not None else np.nan)
            if at[1] is not None:
                f.data.update(multipliers_reference=at[1].multipliers,
                              crossing_param_reference=_reference_crossing(branch, disc, refs, i, tol,
                                                                           counters))
            continue
        if owner is not None:
            at = stability_at(disc, owner.solution, tol=tol, which="primary", rtol=rtol)[0]
            owner.data.update(multipliers=at.multipliers)
            continue
        if kind == "fold":
            Zc = located(i, _near_one_product, 0)
            kind_sp, detected = "bp", "multiplier +1 without a fold"
        elif kind == "pd":
            Zc = located(i, _pd_test, 0)
            kind_sp, detected = "pd", "multiplier -1"
        else:
            Zc = located(i, _ns_test, 0)
            kind_sp, detected = "ns", "complex pair"
        ok = Zc is not None
        if not ok:       # keep the better of the two bracketing points
            Zc = P[i] if abs(branch.max_multiplier[i] - 1) <= abs(branch.max_multiplier[j] - 1) else P[j]
        om = disc.unpack(Zc)["omega"]
        at = stability_at(disc, Zc, tol=tol, which="primary", rtol=rtol)[0]
        new.append(SpecialPoint(kind_sp, float(Zc[-1]), float(om), int(i), np.array(Zc),
                                data=dict(detected_by=detected, located=ok, multipliers=at.multipliers)))
    branch.special.extend(new)
    branch.special.sort(key=lambda s: s.index)


def _plus_crossing_owners(crossings, owners, special):
    """The engine fold or recorded branch point each multiplier crossing of +1 belongs to.

    Parameters
    ----------
    crossings : list of (int, int, str)
        ``(i, j, kind)``: a crossing between the computed points ``i`` and ``j``
        (:func:`multiplier_crossings`; ``kind == "fold"`` for +1).
    owners : list of SpecialPoint
        Folds located from the tangent and branch points from the bordered determinant, each
        between its ``index`` and ``index + 1``.
    special : list of SpecialPoint
        Every special point of the branch.

    Returns
    -------
    list
        Per crossing, its owner, or None (a +1 crossing of its own, or not a +1 crossing).

    Notes
    -----
    A crossing belongs to an owner at ``index`` ``i - 1 .. j``.  An owner without one takes
    the nearest +1 crossing nobody has, if no special point and no other crossing lies between
    them: exactly one multiplier passes +1 at a fold (or at a simple branch point), and the
    multipliers' own error can place that passage a few branch points away from the fold the
    tangent locates to the orbit's accuracy (LuGre belt of issue 26 at H = 30, four points per
    step: the non-trivial Hill multiplier is 0.9895 at the fold, and the root of
    ``Re(mu_a mu_b) - 1`` lies two points past it).
    """
    out = [None] * len(crossings)
    plus = [c for c, (_, _, kind) in enumerate(crossings) if kind == "fold"]
    for c in plus:
        i, j, _ = crossings[c]
        out[c] = next((o for o in owners if i - 1 <= o.index <= j), None)
    for o in owners:
        if any(x is o for x in out):
            continue

        def span(c):
            """``(lo, hi)``: a special point at index k (between points k and k + 1) lies between
            the owner and crossing c when lo < k < hi."""
            i, j, _ = crossings[c]
            return (o.index, j) if i > o.index else (i - 1, o.index)

        def clear(c):
            lo, hi = span(c)
            return (not any(lo < s.index < hi for s in special if s is not o)
                    and not any(lo <= a and b <= hi for d, (a, b, _) in enumerate(crossings) if d != c))

        free = [c for c in plus if out[c] is None and clear(c)]
        if free:
            out[min(free, key=lambda c: span(c)[1] - span(c)[0])] = o
    return out


def _reference_crossing(branch, disc, refs, i, tol, counters):
    """Parameter where the original-ODE Hill multiplier passes +1, nearest to point i."""

    have = [k for k, r in enumerate(refs) if r is not None]
    g = np.array([_near_one_product(refs[k]) for k in have])
    cand = np.flatnonzero(g[1:] * g[:-1] < 0)
    if not cand.size:
        return np.nan
    c = int(cand[np.argmin(np.abs(np.asarray(have)[cand] - i))])
    j, j2 = have[c], have[c + 1]
    try:
        # the values at the two points are those that bracket the root: not recomputed (a
        # value within the multipliers' noise of 0 could change sign on a second correction)
        Z = locate_on_branch(disc, branch.solutions[j], branch.solutions[j2],
                             lambda Z: _near_one_product(point_stability(disc, Z, tol=tol,
                                                                         which="reference")[1]), counters,
                             stol=1e-8, ends=(g[c], g[c + 1]))       # at a fold (see branch_stability)
    except (ConvergenceError, ValueError):
        return np.nan
    return float(Z[-1])
