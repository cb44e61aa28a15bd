"""Forced responses (issue 25): frequency responses, amplitude–force curves, resonance peaks.

:func:`frequency_response` continues the periodic response of a forced model (the forcing
``cos(w t)``/``sin(w t)`` of ``m.forcing(w)``) in its continuation parameter: the forcing
frequency ``w`` itself (a frequency response curve) or any other parameter at fixed ``w``
(an amplitude–force curve, ...).  It needs no equilibrium: the first point is the linear
response at the start value, Newton-corrected, or, should that fail, a time simulation
sampled from a forcing phase (``_forced_start.py``).  The branch is the AFT harmonic balance of
the states with the recast applied pointwise (DESIGN §5.0), continued by the ANM: a continued
forcing frequency enters the Taylor kernels exactly in the forcing phase (codegen/taylor.py,
``discretizations/_aft.py``), so the steps are the series' own, one LU each.  Folds are
followed (arclength), stability is the Floquet analysis of every periodic branch.

**Harmonics.**  Unless given, the number of harmonics is chosen for an accuracy: the branch is
continued with :data:`HARMONICS_FIRST` harmonics; at its step ends whose spectra decay slowest
(the share of the last quarter of the harmonics in each state's norm, within a factor 100 of
the branch's worst, at most :data:`CHECK_POINTS` of them) the orbit is corrected at the same
parameter with ``H``, ``ceil(1.5 H)``, ``ceil(1.5^2 H)``, ... harmonics until the largest change
of a state's coefficients relative to their norm between two counts is below ``tolerance``;
the branch is continued again with the count so found, and checked the same way, until the
check passes at the branch's own count or :data:`HARMONICS_MAX` is reached (then the branch's
message says the accuracy reached).  With an exponentially decaying spectrum the change is the
error of the coarser orbit to within a few percent.  The checks' factorizations and the earlier
branches' are counted in ``counters["harmonics_search_factorizations"]``, the counts and
changes in ``provenance["forced_response"]["search"]``.

**Resonance peaks.**  :func:`resonance_peaks` brackets each maximum of the amplitude
``A = hypot(c_k, s_k)`` of a state's harmonic ``k`` along the branch by a sign change of
``dA/ds = grad A . t`` (``t`` the unit tangent) from ``+`` to ``-``, and locates the root of
``grad A(Z) . t(Z)`` on the branch (``engine/_locate.locate_on_branch``: Brent's method on
Newton-corrected points, each with its tangent): an exact extremum of the discrete branch,
past folds too (the derivative is taken along the arclength, not in ``w``).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..analysis import analyse_branch
from ._accuracy import attach_accuracy
from ..discretizations._condensed import CondensedAFTDiscretization
from ..engine._bordered import Counters
from ..engine._locate import locate_on_branch
from ..engine._newton import correct, tangent_at
from ..errors import ConvergenceError, InputError
from ._choices import TOLERANCE
from ..results._branch import SpecialPoint
from ._branches import _orbit_to_start, _resolve_method, periodic_branch
from ._forced_start import check_forced, forced_period_samples, forcing_frequency, linear_response
from ._methods import periodic_kind

__all__ = ["frequency_response", "resonance_peaks", "forced_start"]

#: first harmonic count of the search, its growth factor and its ceiling
HARMONICS_FIRST, HARMONICS_GROWTH, HARMONICS_MAX = 20, 1.5, 160
#: step ends at which a harmonic count is checked (those whose spectra decay slowest)
CHECK_POINTS = 6


def forced_start(model, lam, harmonics, initial="linear", x0=None, discretization=None, n_t=None):
    """First point of a forced response at ``lam``, Newton-corrected at fixed ``lam``.

    Parameters
    ----------
    model : Model
        A forced model.
    lam : float
        The continuation parameter's value.
    harmonics : int
    initial : {"linear", "simulation"}
        ``"linear"``: the response of the linearization at ``x0`` (default 0); if Newton does
        not converge from it, a simulation from ``x0``.  ``"simulation"``: a simulation only.
    discretization : {None, "aft", "hbm"}
        The harmonic balance (default the AFT of the states, DESIGN §5.0).
    n_t : int, optional
        AFT time samples (default :func:`~frictionkit.runtime.discretizations._aft.default_n_t`).

    Returns
    -------
    disc, Z, how
        The discretization, the corrected unknowns and ``"linear"`` or ``"simulation"``.
    """
    check_forced(model, "forced response")
    if initial not in ("linear", "simulation"):
        raise InputError(f"initial = {initial!r}: the first point is the 'linear' response or a 'simulation'")
    n_grid = max(8 * int(harmonics) + 8, 256)
    border = None
    if initial == "linear" and x0 is None and periodic_kind(model, discretization) == "aft-condensed":
        # a structure: Newton from rest on the condensed unknowns (its first iterate is the linear
        # response of the structure with the contacts linearized at rest, a few small solves,
        # instead of the linearization of every mode); then the general routes below
        disc = CondensedAFTDiscretization(model, harmonics, n_t=n_t)
        Z = disc.pack(np.zeros((disc.nv, disc.nh)), np.nan, lam)
        try:
            return disc, correct(disc, Z, np.eye(disc.size)[-1], lam, max_iter=30)[0], "linear"
        except ConvergenceError:
            pass
    if initial == "linear":
        x, w = linear_response(model, lam, n_grid, harmonics, x0)
        disc, Z = _orbit_to_start(model, x, w, lam, harmonics, discretization=discretization, n_t_aft=n_t)
        border = np.eye(disc.size)[-1]
        try:
            return disc, correct(disc, Z, border, lam, max_iter=30)[0], "linear"
        except ConvergenceError:
            pass                   # near a resonance, or a strongly nonlinear response: simulate
    x, w = forced_period_samples(model, lam, n_grid, x0)
    disc, Z = _orbit_to_start(model, x, w, lam, harmonics, discretization=discretization, n_t_aft=n_t)
    border = np.eye(disc.size)[-1]
    return disc, correct(disc, Z, border, lam, max_iter=30)[0], "simulation"


def _check_range(model, start, stop):
    for name, v in (("--start", start), ("--stop", stop)):
        if not math.isfinite(v):
            raise InputError(f"{name} {v}: must be finite")
    if start == stop:
        raise InputError(f"--start and --stop are both {start:g}: give a range of {model.continuation}")
    if model.forcing_frequency == model.continuation:
        for name, v in (("--start", start), ("--stop", stop)):
            if v <= 0:
                raise InputError(f"{name} {v:g}: the forcing frequency {model.continuation} must stay > 0 over "
                                 f"the range (a period of 2 pi / {model.continuation}); choose a range above 0")
    else:
        forcing_frequency(model, start)


def frequency_response(model, start, stop, *, harmonics=None, tolerance=TOLERANCE, method=None, options=None,
                       initial="linear", x0=None, peaks="auto", harmonic=1, discretization=None, n_t=None,
                       progress=None):
    """The forced periodic response of ``model`` from ``start`` to ``stop`` of its parameter.

    Parameters
    ----------
    model : Model
        A forced model (``m.forcing(w)``).  Its continuation parameter is the forcing frequency
        (a frequency response curve) or any other parameter (then the forcing frequency is the
        model's value of it: an amplitude–force curve, ...).
    start, stop : float
        The range, continued from ``start`` (either order); a forcing frequency must stay > 0.
    harmonics : int, optional
        Number of harmonics; default: chosen for ``tolerance`` (module docstring).
    tolerance : float
        Relative accuracy of the states' coefficients the default harmonic count is chosen for.
    method : {None, "anm", "newton"}
        Continuation engine (default the ANM wherever the model's Taylor kernels allow it).
    options : dict or ANMOptions or NewtonOptions, optional
        Engine options, as for :func:`periodic_branch` (``max_steps``, ``stability``, ...).
    initial : {"linear", "simulation"}
        The first point (:func:`forced_start`); ``x0`` its linearization point / initial state.
    peaks : "auto", str, int or None
        The state whose first-harmonic (``harmonic``) amplitude maxima are located as ``"peak"``
        special points (:func:`resonance_peaks`): a name or an index; ``"auto"`` the first state;
        None: none.
    discretization : {None, "aft", "hbm"}
        The harmonic balance; the default AFT of the states is the only one whose harmonic
        count can be chosen for ``tolerance`` (``"hbm"`` needs ``harmonics``).
    n_t : int, optional
        AFT time samples per period.
    progress : callable, optional
        As for :func:`periodic_branch`.

    Returns
    -------
    Branch
        A periodic branch with the columns of every harmonic balance (``amplitude``, ``phase``,
        ``rms`` per state, ...), stability, folds and the ``peak`` special points;
        ``provenance["forced_response"]`` records the first point's origin and the harmonic
        search, ``branch.discretization`` the discretization.

    Raises
    ------
    InputError
        An autonomous model, a forcing frequency <= 0, an empty range, bad options.
    """
    check_forced(model, "frequency response")
    start, stop = float(start), float(stop)
    _check_range(model, start, stop)
    kind = periodic_kind(model, discretization)
    if kind not in ("aft", "hbm", "aft-condensed"):
        raise InputError(f"discretization={discretization!r}: a frequency response is a harmonic balance "
                         "('aft', the default, or 'hbm')")
    if harmonics is not None and (int(harmonics) != harmonics or harmonics < 1):
        raise InputError(f"harmonics = {harmonics}: the number of harmonics must be an integer >= 1")
    if harmonics is None and kind not in ("aft", "aft-condensed"):
        raise InputError("discretization='hbm': give harmonics (only the AFT's count is chosen for a tolerance)")
    if not (0 < float(tolerance) < 1):
        raise InputError(f"tolerance = {tolerance}: a relative accuracy between 0 and 1, e.g. 1e-8")
    lo, hi = sorted((start, stop))
    direction = 1.0 if stop > start else -1.0
    opts = dict(options or {}) if (options is None or isinstance(options, dict)) else options
    if isinstance(opts, dict):
        opts.setdefault("max_steps", 5000)
        if _resolve_method(model, method, kind in ("aft", "aft-condensed")) == "anm":
            opts.setdefault("points_per_step", 4)          # smooth curves, no extra LU (as `continue`)
    started = {}

    def branch_at(H):
        disc, Z, started["how"] = forced_start(model, start, H, initial, x0, discretization, n_t)
        return periodic_branch(disc, Z, lo, hi, direction, method=method, options=_probe(opts), progress=progress)

    br, search = search_harmonics(branch_at, harmonics, tolerance, "--harmonics", "--tolerance")
    _analyse(br, opts)
    br.provenance["forced_response"] = dict(start=started["how"], tolerance=float(tolerance), search=search)
    if peaks is not None and len(br) > 1:
        state = 0 if peaks == "auto" else peaks
        found = resonance_peaks(br, state, harmonic)
        br.special.extend(found)
        br.special.sort(key=lambda s: s.index)
    return br


def search_harmonics(branch_at, harmonics, tolerance, harmonics_option="harmonics", tolerance_option="tolerance"):
    """The branch at the harmonic count the tolerance asks for: ``branch_at(H)`` (a whole
    branch at ``H`` harmonics) from ``HARMONICS_FIRST`` on, grown to what
    :func:`_harmonics_needed` estimates until it is enough (at most ``HARMONICS_MAX``); the
    given ``harmonics`` alone if not None.

    Returns
    -------
    branch : Branch
        The last branch, its counter ``harmonics_search_factorizations`` set (the LU of the
        discarded branches and of the estimates) and, if the tolerance is not met at
        ``HARMONICS_MAX``, its message saying so (naming the options as the caller spells them).
    search : list of dict
        ``harmonics``, ``change``, ``needed``, ``factorizations`` of every estimate.
    """
    search, probe_lu = [], 0
    H = int(harmonics) if harmonics is not None else HARMONICS_FIRST
    while True:
        br = branch_at(H)
        if harmonics is not None or br.status not in ("range", "max_steps"):
            break
        counters = Counters()
        needed, change = _harmonics_needed(br, tolerance, counters)
        search.append(dict(harmonics=H, change=change, needed=needed, factorizations=int(counters.factorizations)))
        probe_lu += counters.factorizations
        if needed <= H:
            break
        probe_lu += br.counters.get("factorizations", 0)
        H = needed
    br.counters["harmonics_search_factorizations"] = int(probe_lu)
    if search and search[-1]["change"] > tolerance:
        br.message += (f"; the orbit's coefficients change by {search[-1]['change']:.1e} from {H} harmonics to "
                       f"{math.ceil(HARMONICS_GROWTH * H)} (above the tolerance {tolerance:g}: the harmonic "
                       f"count stops at {HARMONICS_MAX}; give {harmonics_option} or a larger {tolerance_option})")
    return br, search


def _probe(opts, estimates=False):
    """The engine options of a continuation run: the analysis passes (and, unless
    ``estimates``, the error estimates) wait for :func:`_analyse`."""
    if isinstance(opts, dict):
        return dict(opts, stability=False, branch_points=False, error_estimates=estimates)
    return dataclasses.replace(opts, stability=False, branch_points=False, error_estimates=estimates)


def _analyse(br, opts, estimates=True):
    """The analysis passes the caller's options ask for (stability and branch points by default),
    on the branch that is kept, and (``estimates``) its error estimates."""
    wanted = {k: (opts.get(k, True) if isinstance(opts, dict) else getattr(opts, k))
              for k in ("stability", "branch_points", "error_estimates")}
    br.options = dataclasses.replace(br.options, **wanted)
    br.provenance.setdefault("options", {}).update(wanted)
    if br.success or br.status == "max_steps":
        analyse_branch(br)
    if estimates and wanted["error_estimates"] is not False and br.status != "interrupted":
        attach_accuracy(br)


def _tails(U):
    """Share of the last quarter of the harmonics in each state's coefficient norm (P, n)."""
    H = (U.shape[-1] - 1) // 2
    q = max(1, H // 4)
    top = np.linalg.norm(U[..., 2 * (H - q) + 1:], axis=-1)
    return top / np.maximum(np.linalg.norm(U, axis=-1), 1e-300)


def _change(small, Zs, big, Zb):
    """Largest change of a state's coefficients from ``Zs`` (``small``) to ``Zb`` (``big``),
    relative to the state's norm (floored at 1e-9 of the largest state's)."""
    Ub = big.split(Zb)[0]
    Us = np.zeros_like(Ub)
    Us[:, :small.nh] = small.split(Zs)[0]
    norms = np.linalg.norm(Ub, axis=1)
    scale = np.maximum(norms, 1e-9 * norms.max())
    return float(np.max(np.linalg.norm(Ub - Us, axis=1) / scale))


def _harmonics_needed(br, tolerance, counters):
    """The harmonic count the branch's slowest-decaying step ends need for ``tolerance``
    (module docstring), at most :data:`HARMONICS_MAX`, and the change measured at that count
    (at the branch's own count when it suffices)."""
    disc = br.discretization
    ends = np.unique(np.asarray(br.step_ends, dtype=int))
    U = np.array([disc.split(br.solutions[i])[0] for i in ends])
    tail = _tails(U).max(axis=1)
    order = np.argsort(tail)[::-1]
    picked = [ends[j] for j in order[:CHECK_POINTS] if tail[j] >= 1e-2 * tail[order[0]]]
    needed, worst = disc.H, 0.0
    for i in picked:
        lam = float(br.solutions[i][-1])
        d, Z = disc, correct(disc, br.solutions[i], np.eye(disc.size)[-1], lam, counters=counters, max_iter=30)[0]
        while True:
            big, Zb = d.resize(Z, int(math.ceil(HARMONICS_GROWTH * d.H)))
            try:
                Zb, _ = correct(big, Zb, np.eye(big.size)[-1], lam, counters=counters, max_iter=30)
            except ConvergenceError:       # not measurable here: the count stays, the change is unknown
                change = math.inf
                break
            change = _change(d, Z, big, Zb)
            if change <= tolerance or big.H > HARMONICS_MAX:
                break
            d, Z = big, Zb
        if d.H > needed or (d.H == needed and change > worst):
            needed, worst = d.H, change
    return needed, worst


def _state_index(disc, state):
    """Position of ``state`` among the variables of ``disc``'s coefficients (contract item 19:
    a structure's condensed harmonic balance has its contacts' inputs there)."""
    names = tuple(disc.state_names)
    if isinstance(state, str):
        if state not in names:
            raise InputError(f"peaks: {state!r} is not a state of model {disc.model.name!r}; its states are "
                             f"{', '.join(names)}")
        return names.index(state)
    if not 0 <= int(state) < len(names):
        raise InputError(f"peaks: state index {state} must lie in 0..{len(names) - 1}")
    return int(state)


def resonance_peaks(branch, state=0, harmonic=1, counters=None):
    """The maxima of the amplitude of ``state``'s harmonic ``harmonic`` along a harmonic-balance
    branch, located exactly (module docstring).

    Parameters
    ----------
    branch : Branch
        Computed in this session (``branch.discretization`` set), periodic, harmonic balance.
    state : str or int
        A state's name or index.
    harmonic : int
        1 for the first harmonic.
    counters : Counters, optional
        Work counters to add to (else the branch's ``analysis_factorizations``).

    Returns
    -------
    list of SpecialPoint
        ``kind == "peak"``; ``data``: ``state``, ``harmonic``, ``amplitude`` and ``phase``.
    """
    disc = branch.discretization
    if disc is None or disc.H is None or disc.H < 1:
        raise InputError("resonance_peaks needs a periodic harmonic-balance branch computed in this session "
                         "(frequency_response, periodic_branch)")
    i = _state_index(disc, state)
    k = int(harmonic)
    if not 1 <= k <= disc.H:
        raise InputError(f"harmonic {harmonic}: the branch has harmonics 1..{disc.H}")
    ic, js = i * disc.nh + 2 * k - 1, i * disc.nh + 2 * k
    own = counters is None
    counters = Counters() if own else counters

    def grad(Z):
        g = np.zeros(disc.size)
        a = math.hypot(Z[ic], Z[js])
        if a > 0:
            g[ic], g[js] = Z[ic] / a, Z[js] / a
        return g

    slope = np.array([grad(Z) @ t for Z, t in zip(branch.solutions, branch.tangents)])
    found = []
    for j in np.flatnonzero((slope[:-1] > 0) & (slope[1:] <= 0)):
        Za, Zb = branch.solutions[j], branch.solutions[j + 1]
        chord = Zb - Za

        def test(Z, chord=chord):
            return float(grad(Z) @ tangent_at(disc, Z, chord, counters))
        try:
            Zp = locate_on_branch(disc, Za, Zb, test, counters, xtol=1e-12)
        except (ConvergenceError, ValueError):
            continue
        info = disc.unpack(Zp)
        amp = math.hypot(Zp[ic], Zp[js])
        found.append(SpecialPoint("peak", float(info["lam"]), float(info["omega"]), int(j), Zp,
                                  data=dict(state=disc.state_names[i], harmonic=k, amplitude=amp,
                                            phase=math.atan2(-Zp[js], Zp[ic]), located=True)))
    if own:
        branch.counters["analysis_factorizations"] = (branch.counters.get("analysis_factorizations", 0)
                                                      + counters.factorizations)
    return found
