"""Equilibria, their eigenvalues and Hopf points; starting periodic branches (DESIGN §5.5).

* :func:`find_equilibrium` solves ``f(x, lam) = 0`` of the original ODE (scipy root-finder
  with the model's exact Jacobian), fills the auxiliaries with ``model.aux`` and polishes
  the result on the quadratic system (the ``H = 0`` harmonic balance).
* :func:`equilibrium_branch` continues it, computes the eigenvalues of ``df/dx`` of the
  *original* ODE at every point (no auxiliaries, so no spurious eigenvalues), fills the
  ``stable`` column and records Hopf points, located to near machine precision by a
  Brent root-find of the real part of the crossing pair along the branch.
* :func:`periodic_start_from_hopf` builds the first periodic solution next to a Hopf point
  from the critical eigenvector (``x = x_eq + eps Re(v e^{i theta})``, omega = the imaginary
  part), with no user guess; :func:`periodic_start_from_simulation` integrates the original
  ODE to the attractor; :func:`periodic_start_from_orbit` takes samples of one period.
  All three go through the same route: states on a uniform grid of one period ->
  ``model.aux`` -> FFT -> coefficients, then a Newton correction.
* :func:`periodic_branch` continues a periodic branch from any of these starts.
"""
from __future__ import annotations

import math

import numpy as np

from .._roots import bracketed_root
from ..analysis._equilibria import (_hopf_brackets, _hopf_test, _locate_hopf, _use_aft, eigenvalues, hopf_eigenpair,
                                    find_equilibrium)
from ..discretizations._aft import AFTDiscretization
from ..discretizations._hbm import HBMDiscretization
from ._forced_start import _integrate, forced_period_samples
from ._orbits import find_periodic_orbit
from ..engine._bordered import Counters
from ..engine._newton import correct
from ..engine._options import ContinuationProblem, default_options
from ..errors import ConvergenceError, InputError
from ..model._load import load_model
from ..results._branch import SpecialPoint, register_restart
from ..results._labels import check_restart_point
from ._continue import continuation
from ._methods import COLLOCATION_KINDS, SAVED_KINDS, build_collocation, periodic_kind

__all__ = ["restart_branch", "equilibrium_branch", "periodic_start_from_hopf",
           "periodic_start_from_simulation", "periodic_start_from_orbit", "periodic_branch"]


def _check_lam_range(model, lam, lam_min, lam_max):
    if not lam_min < lam_max:
        raise InputError(f"--start/--stop: the range [{lam_min:g}, {lam_max:g}] of "
                         f"{model.continuation} is empty")


def _resolve_method(model, method, use_aft, disc=None):
    """Default engine: the ANM wherever its series exist (the quadratic recast, or the
    pointwise Taylor kernels on the AFT of the states, DESIGN §5.0), else pseudo-arclength
    Newton (non-analytic laws; a kernel that holds the time fixed under a continued forcing
    frequency).  With ``disc``,
    the discretization says (its ``supports_anm``: the condensed AFT of a structure keeps
    the ANM for a continued forcing frequency, which acts through the compliance alone)."""
    if disc is not None and disc.kind == "aft-condensed":
        why = None if disc.supports_anm else (_why_no_pointwise_anm(model) or
                                              "the time enters the contact laws, whose samples move when "
                                              "the forcing frequency is continued")
    else:
        why = None if not use_aft else _why_no_pointwise_anm(model)
    if method is None:
        return "newton" if why else "anm"
    if method == "anm" and why:
        raise InputError(f"method='anm' is impossible here: {why}; the asymptotic numerical method "
                         "needs power series of the right-hand side. Use method='newton' (pseudo-arclength)")
    return method


def _why_no_pointwise_anm(model):
    """Why the ANM cannot continue the AFT of ``model`` (None when it can)."""
    if model.sampled:
        return f"model {model.name!r} has a non-analytic friction law"
    if not model.has_taylor:
        return f"model {model.name!r} has no Taylor kernel (regenerate it with `frictionkit codegen`)"
    if model.forced and model.forcing_frequency == model.continuation and not model.taylor_in_phase:
        return (f"the Taylor kernel of model {model.name!r} holds the sample times fixed, which the "
                "continued forcing frequency moves (regenerate it with `frictionkit codegen`)")
    return None


def equilibrium_branch(model, lam_start, lam_stop, method=None, options=None, x_guess=None,
                       progress=None, locate_hopf=True, discretization=None):
    """Continue the equilibrium from ``lam_start`` towards ``lam_stop``; eigenvalues; Hopf points.

    Parameters
    ----------
    model : Model
    lam_start, lam_stop : float
        Start and end of the continuation parameter's range (either order).
    method : {"anm", "newton"}, optional
        Default ``"anm"``, or ``"newton"`` on the sampled path (non-analytic laws, where the
        ANM is impossible and asking for it raises :class:`InputError`).
    options : ANMOptions, NewtonOptions or dict, optional
        ``lam_min``/``lam_max`` default to the range.
    x_guess : array_like, optional
        Guess of the states of the first equilibrium.
    discretization : {None, "hbm", "aft"}
        See :func:`find_equilibrium`; sampled models always take ``"aft"``.

    Returns
    -------
    Branch
        ``kind == "equilibrium"``, with ``eigenvalues`` (n_points, n), ``stable`` (1 when
        every eigenvalue has a negative real part) and ``hopf`` special points (``omega`` =
        the imaginary part of the crossing pair; ``data["eigenvector"]`` its eigenvector).

    Notes
    -----
    The steps are the engine's own (the ANM's series range); the Hopf points do not depend on
    them: the number of unstable eigenvalues is also sampled on the branch's interpolant
    inside the steps, at least ``HOPF_SAMPLES`` times over the range (``_add_hopf_points``).
    ``options=dict(max_lam_step=...)`` bounds the steps in ``lam`` (denser points).
    """
    lo, hi = sorted((float(lam_start), float(lam_stop)))
    _check_lam_range(model, lam_start, lo, hi)
    use_aft = _use_aft(model, discretization)
    method = _resolve_method(model, method, use_aft)
    disc, Z0 = find_equilibrium(model, lam_start, x_guess, discretization)
    if isinstance(options, dict) or options is None:
        opts = dict(options or {})
        opts.setdefault("lam_min", lo)
        opts.setdefault("lam_max", hi)
        options = default_options(method, opts, lo, hi)
    br = continuation(ContinuationProblem(disc, Z0, 1.0 if lam_stop >= lam_start else -1.0),
                      method, options, progress, dict(discretization="aft") if use_aft else None)
    n = model.n
    try:
        ev = np.array([eigenvalues(model, Z[:n], Z[-1]) for Z in br.solutions])
    except KeyboardInterrupt:           # Ctrl-C or SIGTERM: keep the branch, stability unknown (NaN)
        br.status, br.success = "interrupted", False
        br.message = "interrupted during the eigenvalues of the equilibria; the branch is kept, stable is NaN"
        return br
    br.eigenvalues = ev
    br.stable = np.where(np.all(ev.real < 0, axis=1), 1.0, 0.0)
    if locate_hopf:
        _add_hopf_points(br, model, disc, ev, (hi - lo) / HOPF_SAMPLES)
    return br


#: the number of unstable eigenvalues is sampled at least this many times over an
#: equilibrium branch's range (at the points, and on the interpolants of longer steps)
HOPF_SAMPLES = 40


def _add_hopf_points(br, model, disc, ev, spacing):
    """Locate the Hopf points of an equilibrium branch (eigenvalues ``ev`` at its points) and
    add them to ``br.special``.

    The number of unstable eigenvalues is compared between consecutive points and, on steps
    longer than ``spacing`` in ``lam``, at samples of the branch's interpolant in between
    (``_hopf_brackets``): the ANM's steps follow the series' range, not the eigenvalues.
    Each change is located by ``_locate_hopf``.  The location's factorizations are analysis
    work (``br.counters["analysis_factorizations"]``, as for the periodic branches'
    bifurcations); its Jacobian and residual evaluations are added to the branch's counts.
    """
    n = model.n
    test = _hopf_test(model, n)
    counters = Counters()
    for i in range(len(br.solutions) - 1):
        Za, Zb = br.solutions[i], br.solutions[i + 1]
        ta, tb = br.tangents[i], br.tangents[i + 1]
        for bracket in _hopf_brackets(model, Za, ta, Zb, tb, ev[i], ev[i + 1], spacing):
            try:
                Zh = _locate_hopf(disc, model, Za, Zb, test, counters, tangents=(ta, tb), bracket=bracket)
            except (ConvergenceError, ValueError):
                continue
            mu, v = hopf_eigenpair(model, Zh[:n], Zh[-1])
            br.special.append(SpecialPoint("hopf", float(Zh[-1]), float(mu.imag), int(i), Zh,
                                           data=dict(eigenvalue=mu, eigenvector=v)))
    br.special.sort(key=lambda s: s.index)     # stable: two Hopf points of one step stay in branch order
    br.counters["analysis_factorizations"] = br.counters.get("analysis_factorizations", 0) + counters.factorizations
    for key in ("jacobian_evaluations", "residual_evaluations"):
        br.counters[key] = br.counters.get(key, 0) + getattr(counters, key)


def _orbit_to_start(model, x_samples, omega, lam, harmonics, phase_variable=None, discretization=None,
                    n_t_aft=None):
    """States on a uniform grid of one period -> aux -> FFT -> unknown vector.

    Sampled models (or ``discretization="aft"``) go to the AFT harmonic balance of the
    original states (no auxiliaries), with ``n_t_aft`` time samples.
    """
    harmonics = int(harmonics)
    if harmonics < 1:
        raise InputError(f"harmonics = {harmonics}: a periodic orbit needs at least 1 harmonic")
    x_samples = np.asarray(x_samples, dtype=float)
    kind = periodic_kind(model, discretization)
    if kind in COLLOCATION_KINDS:
        raise InputError(f"discretization={discretization!r}: the periodic starts are harmonic balances "
                         "('aft', 'hbm'); a collocation branch starts from one: run_continuation(..., "
                         f"discretization={discretization!r}), Branch.restart(i, discretization="
                         f"{discretization!r}) or StateCollocationDiscretization.from_states")
    if kind == "aft":
        disc = AFTDiscretization(model, harmonics, phase_variable=phase_variable, n_t=n_t_aft)
        return disc, disc.from_samples(x_samples, omega, lam)
    if kind == "aft-condensed":
        from ..discretizations._condensed import CondensedAFTDiscretization   # structures only (scipy.sparse)
        disc = CondensedAFTDiscretization(model, harmonics, phase_variable=phase_variable, n_t=n_t_aft)
        return disc, disc.from_samples(x_samples, omega, lam)
    disc = HBMDiscretization(model, harmonics, phase_variable=phase_variable)
    n_t = x_samples.shape[1]
    t = 2 * np.pi * np.arange(n_t) / n_t / omega
    u = np.asarray(model.aux(x_samples, t, lam), dtype=float)
    if n_t <= 2 * harmonics:
        raise InputError(f"{n_t} samples of the orbit cannot give {harmonics} harmonics (need > 2H)")
    Z = disc.from_samples(u, omega, lam)
    return disc, Z


def periodic_start_from_hopf(model, hopf: SpecialPoint, harmonics, amplitude=None, phase_variable=None,
                             discretization=None, n_t=None):
    """First periodic solution next to a Hopf point (no user guess).

    The orbit guess is ``x(theta) = x_eq + eps Re(v e^{i theta})`` with ``v`` the critical
    eigenvector and ``omega`` the imaginary part of its eigenvalue; it is corrected by
    Newton at fixed first-harmonic amplitude (``lam`` and ``omega`` free).

    Parameters
    ----------
    model : Model
    hopf : SpecialPoint
        A ``hopf`` special point of an equilibrium branch.
    harmonics : int
    amplitude : float, optional
        Largest first-harmonic amplitude of a state in the guess (default
        ``1e-3 * max(1, |x_eq|, |lam|)``).
    discretization : {None, "hbm", "aft"}
        ``None``: the recast HBM, or the AFT harmonic balance for sampled models
        (non-analytic laws, DESIGN §5.4).
    n_t : int, optional
        AFT only: time samples per period (default ``max(8H + 8, 64)``).

    Returns
    -------
    disc : HBMDiscretization or AFTDiscretization
    Z : ndarray
        A corrected periodic solution.
    direction : ndarray
        Unit vector of growing amplitude, for :class:`ContinuationProblem`.
    """
    if hopf.kind != "hopf" or "eigenvector" not in hopf.data:
        raise InputError("periodic_start_from_hopf needs a 'hopf' special point of an equilibrium branch")
    n = model.n
    x_eq = hopf.solution[:n]
    lam = hopf.param
    omega = hopf.omega
    v = np.asarray(hopf.data["eigenvector"], dtype=complex)
    if amplitude is None:
        amplitude = 1e-3 * max(1.0, float(np.max(np.abs(x_eq))), abs(lam))
    v = v / np.max(np.abs(v)) * amplitude
    n_grid = max(4 * int(harmonics) + 4, 64)
    theta = 2 * np.pi * np.arange(n_grid) / n_grid
    x = x_eq[:, None] + (v[:, None] * np.exp(1j * theta)[None, :]).real
    disc, Z = _orbit_to_start(model, x, omega, lam, harmonics, phase_variable, discretization, n_t)
    k = disc.phase_index - 1       # cos(theta) coefficient of the phase variable
    e = np.zeros(disc.size)
    e[k] = 1.0
    Z, _ = correct(disc, Z, e, Z[k], max_iter=30)
    direction = np.zeros(disc.size)
    direction[k] = 1.0
    return disc, Z, direction


def periodic_start_from_simulation(model, lam, harmonics, x0=None, omega_guess=None, max_periods=5000,
                                   rtol=1e-9, atol=1e-12, phase_variable=None, discretization=None,
                                   n_t=None):
    """Periodic solution from a time simulation of the original ODE to its attractor.

    Integrates ``x' = f(x)`` (scipy LSODA with the model's exact Jacobian) by chunks of
    periods until successive maxima of the first state agree to ``1e-6`` relative, measures
    the period from upward crossings of its mean, samples one period, computes the
    auxiliaries with ``model.aux``, takes the FFT and corrects by Newton at fixed ``lam``.

    Parameters
    ----------
    x0 : array_like, optional
        Initial state (default: the equilibrium, slightly perturbed).
    omega_guess : float, optional
        Angular frequency guess (default: the largest imaginary part of the eigenvalues
        at the initial state).
    discretization, n_t
        As in :func:`periodic_start_from_hopf`.

    A forced model needs no equilibrium: it is simulated by whole forcing periods from
    ``x0`` (default 0) and sampled from a forcing phase 0 (``_forced_start.py``).
    """
    n = model.n
    if model.forced:
        x, omega = forced_period_samples(model, lam, max(8 * int(harmonics) + 8, 256), x0, max_periods, rtol, atol)
        disc, Z = _orbit_to_start(model, x, omega, lam, harmonics, phase_variable, discretization, n_t)
        return disc, correct(disc, Z, np.eye(disc.size)[-1], lam, max_iter=30)[0]
    if x0 is None:
        _, Ze = find_equilibrium(model, lam, discretization=discretization)
        x0 = Ze[:n] + 1e-3 * max(1.0, abs(lam)) * np.eye(n)[min(1, n - 1)]
    x0 = np.asarray(x0, dtype=float)
    if omega_guess is None:
        ev = eigenvalues(model, x0, lam)
        omega_guess = float(np.max(np.abs(ev.imag))) or 1.0
    T0 = 2 * np.pi / omega_guess
    t = 0.0
    last = None
    chunk = 20
    for _ in range(max(1, max_periods // chunk)):
        sol = _integrate(model, lam, x0, (t, t + chunk * T0), rtol, atol, dense=True)
        tt = np.linspace(t + (chunk - 5) * T0, t + chunk * T0, 4000)
        peak = float(np.max(sol.sol(tt)[0]))
        x0, t = sol.y[:, -1], sol.t[-1]
        if last is not None and abs(peak - last) <= 1e-6 * max(abs(peak), 1e-300):
            break
        last = peak
    else:
        raise ConvergenceError(f"the simulation did not settle on a periodic attractor within "
                               f"{max_periods} periods at {model.continuation} = {lam:g}")
    # period from upward crossings of the first state's mean over the last periods
    sol = _integrate(model, lam, x0, (t, t + 12 * T0), rtol, atol, dense=True)
    tt = np.linspace(t, t + 12 * T0, 48000)
    y = sol.sol(tt)[0]
    ym = 0.5 * (y.max() + y.min())
    f = lambda s: sol.sol(s)[0] - ym  # noqa: E731
    up = np.flatnonzero((y[:-1] < ym) & (y[1:] >= ym))
    if len(up) < 3:
        raise ConvergenceError(f"no oscillation found in the simulation at {model.continuation} = {lam:g}")
    crossings = [bracketed_root(f, tt[i], tt[i + 1], xtol=1e-15) for i in up]
    T = float(np.median(np.diff(crossings)))
    n_grid = max(8 * int(harmonics) + 8, 256)
    ts = crossings[0] + T * np.arange(n_grid) / n_grid
    x = sol.sol(ts)
    disc, Z = _orbit_to_start(model, x, 2 * np.pi / T, lam, harmonics, phase_variable, discretization, n_t)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, lam, max_iter=30)
    return disc, Z


def periodic_start_from_orbit(model, lam, x_samples, period, harmonics, phase_variable=None,
                              discretization=None, n_t=None):
    """Periodic solution from samples of one period of the states (uniform in time).

    Parameters
    ----------
    x_samples : array_like (n, n_t)
        States at ``t_j = j T / n_t``, j = 0..n_t-1 (the end point excluded).
    period : float
    discretization, n_t
        As in :func:`periodic_start_from_hopf`.
    """
    x = np.asarray(x_samples, dtype=float)
    if x.ndim != 2 or x.shape[0] != model.n:
        raise InputError(f"x_samples must have shape (n={model.n}, n_t)")
    disc, Z = _orbit_to_start(model, x, 2 * np.pi / float(period), lam, harmonics, phase_variable,
                              discretization, n_t)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, lam, max_iter=30)
    return disc, Z


def periodic_branch(disc, Z, lam_min, lam_max, direction=1.0, method=None, options=None,
                    progress=None, provenance=None):
    """Continue a periodic branch of an HBM (or AFT) discretization from the solution ``Z``.

    ``direction`` is ``+1``/``-1`` (increasing/decreasing ``lam``) or a vector (e.g. the
    one returned by :func:`periodic_start_from_hopf`).  Stops at the range bounds, on the
    step budget, on return to the start or when the amplitude vanishes (a Hopf point).
    ``method`` defaults to ``"anm"`` wherever its series exist (the recast HBM,
    collocation, and the AFT of an analytic model through its pointwise Taylor kernels),
    else ``"newton"`` (non-analytic laws); AFT branches are labelled
    ``discretization = "aft"`` in their provenance.
    """
    use_aft = disc.kind in ("aft", "aft-condensed")
    # the pointwise discretizations of the states take their ANM series from the Taylor kernels
    method = _resolve_method(disc.model, method, disc.kind in ("aft", "aft-condensed", "collocation-states"), disc)
    if use_aft:
        provenance = dict(provenance or {})
        provenance.setdefault("discretization", disc.kind)
    opts = dict(options or {}) if (options is None or isinstance(options, dict)) else options
    if isinstance(opts, dict):
        opts.setdefault("lam_min", lam_min)
        opts.setdefault("lam_max", lam_max)
        opts = default_options(method, opts, lam_min, lam_max)
    return continuation(ContinuationProblem(disc, Z, direction), method, opts, progress, provenance)


def _resize_harmonics(Z, disc_old_H, disc_new):
    """A harmonic-balance unknown vector (HBM: all N variables, AFT: the n states) with
    ``disc_old_H`` harmonics padded or truncated to ``disc_new.H``."""
    H0, H1 = disc_old_H, disc_new.H
    n_var = disc_new.n_coef // disc_new.nh
    U = Z[: n_var * (2 * H0 + 1)].reshape(n_var, 2 * H0 + 1)
    V = np.zeros((n_var, 2 * H1 + 1))
    k = min(2 * H0 + 1, 2 * H1 + 1)
    V[:, :k] = U[:, :k]
    return np.concatenate([V.ravel(), Z[n_var * (2 * H0 + 1):]])


def restart_branch(branch, index=-1, stop=None, direction=None, method=None, harmonics=None,
                   options=None, progress=None, discretization=None, intervals=None, degree=None, model=None):
    """Continue a (saved) branch from its point ``index`` (AUTO's ``IRS``); :meth:`Branch.restart`.

    Parameters
    ----------
    branch : Branch
        E.g. ``load_branch("run.h5")``: its provenance names the model (zoo name or file,
        ``model_source``) and its hash, the continuation parameter, the parameter values,
        the discretization and its sizes and the engine options.
    index : int
        The point to restart from (default: the last; negative counts from the end).
    stop : float, optional
        The other end of the range (default: the branch's ``lam_max`` or ``lam_min``,
        whichever lies in ``direction``).
    direction : {+1, -1, None}
        Increasing or decreasing parameter; None follows the branch's tangent at ``index``.
    method : {"anm", "newton"}, optional
        The engine (default: the branch's).
    harmonics : int, optional
        Another number of harmonics (HBM/AFT periodic branches; the coefficients are padded
        with zeros or truncated, then corrected).
    options : dict, optional
        Engine options overriding the branch's.
    discretization : {None, "aft", "hbm", "collocation", "collocation-recast"}, optional
        Another periodic-orbit method (``frictionkit continue --method``, names as in
        ``drivers/_methods.py``; default: the branch's).  The saved orbit is sampled over
        one period (:meth:`Discretization.samples`), rebuilt in the new discretization
        (states -> ``model.aux`` -> FFT for HBM/AFT, ``from_states`` at the nodes of the
        collocation of the states, shooting then ``from_orbit`` for the recast collocation),
        Newton-corrected at fixed parameter and continued.  ``harmonics`` (HBM/AFT) and
        ``intervals``/``degree`` (collocations, default 40 and 3) give its size; a new
        mesh of a collocation branch is the same conversion.
    intervals, degree : int, optional
        Collocation sub-intervals and polynomial degree.
    model : str, path, ModelSpec or module, optional
        The model the branch was computed with, given by the caller (``frictionkit continue
        --restart FILE --model MODEL_FILE``).  Needed for a model that is not in the zoo: a
        branch file is data, so the model file it names is never run (it may have come with
        the file from anywhere).  Default: the zoo model the branch names.

    Raises
    ------
    InputError
        Unknown or out-of-range ``index``, a branch of a model file and no ``model``, a model
        whose hash is not the file's, a discretization that cannot be rebuilt.
    """
    prov = branch.provenance
    n_pts = len(branch)
    if not -n_pts <= int(index) < n_pts:
        raise InputError(f"restart index {index}: the branch has {n_pts} points (0..{n_pts - 1}, or negative "
                         "from the end)")
    index = check_restart_point(branch, int(index) % n_pts)
    model = _restart_model(prov, model)
    saved = dict(prov.get("options", {}))
    saved_kind = SAVED_KINDS.get(prov.get("discretization", "hbm"), prov.get("discretization", "hbm"))
    keep = discretization is None or (branch.kind != "equilibrium"
                                      and periodic_kind(model, discretization) == saved_kind)
    disc, Z = _restart_discretization(branch, model, index, harmonics if keep else None)
    changed = _changed_kind(branch, disc, discretization, intervals, degree)
    if changed is not None:
        disc, Z = _convert_point(disc, Z, changed, harmonics, intervals, degree)
    t = np.asarray(branch.tangents[index], dtype=float)
    if direction is None:
        direction = 1.0 if t[-1] >= 0 else -1.0
    lo = float(saved.get("lam_min", -np.inf)) if not isinstance(saved.get("lam_min"), str) else -np.inf
    hi = float(saved.get("lam_max", np.inf)) if not isinstance(saved.get("lam_max"), str) else np.inf
    lam = float(Z[-1])
    if stop is not None:
        lo, hi = min(lam, float(stop)), max(lam, float(stop))
    if changed is None:               # the saved engine; another discretization takes its default
        method = method or prov.get("method") or None
    opts = {k: v for k, v in saved.items() if k in _OPTION_KEYS}
    opts.update(options or {})
    opts.update(lam_min=lo, lam_max=hi)
    if branch.kind == "equilibrium":
        br = equilibrium_branch(model, lam, hi if direction > 0 else lo, method=method,
                                options=opts, x_guess=Z[:model.n], progress=progress,
                                # AFT equilibria say "aft", the recast HBM's "equilibria"
                                discretization="aft" if prov.get("discretization") == "aft" else "hbm")
    else:
        br = periodic_branch(disc, Z, lo, hi, float(np.sign(direction) or 1.0), method=method, options=opts,
                             progress=progress)
    br.provenance["restarted_from"] = f"{prov.get('group', '/')}@{index}"
    return br


# engine options a restart takes over from the saved branch (not the range: that is the restart's)
_OPTION_KEYS = ("stability", "branch_points", "locate_folds")


register_restart(restart_branch)


def _restart_model(prov, model=None):
    """The model to restart a saved branch with, refused unless its hash is the file's.

    A branch file is data, never code: what it names is only ever used as a zoo name (the
    package's own models).  A model file, even one the branch names and that sits beside it,
    runs only when the caller gives it (``model``), and its hash must then be the file's
    before anything of the branch is used.
    """
    named = str(prov.get("model_source") or prov.get("model") or "")
    lam_name = prov.get("continuation_parameter")
    if not lam_name or not isinstance(lam_name, str):
        raise InputError("the branch does not name its continuation parameter (saved before restart "
                         "metadata, or damaged); cannot restart")
    saved = prov.get("parameters") or {}
    if not isinstance(saved, dict):
        raise InputError(f"the branch's parameter values are {type(saved).__name__}, not a table of names and "
                         "numbers: the file is damaged or was edited; cannot restart")
    params = {}
    for name, value in saved.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"the branch's parameter {name!r} is {value!r}, not a finite number: the file is "
                             "damaged or was edited; cannot restart")
        if name != lam_name:
            params[name] = float(value)
    if model is None:
        # the zoo's definitions import sympy: only a restart without --model needs their names
        from frictionkit.modelspec.zoo import ZOO
        if named not in ZOO:
            what = f"the model file {named!r}" if named else "a model it does not name"
            raise InputError(f"the branch was computed with {what}, not a zoo model; a restart never runs a "
                             "file that a branch file names (the file may come from anywhere): give the model "
                             "file yourself, `frictionkit continue --restart FILE --model MODEL_FILE` (Python: "
                             "restart(..., model=MODEL_FILE))")
        model = named
    loaded = load_model(model, continuation=lam_name, params=params)
    if prov.get("model_hash") and loaded.model_hash != prov["model_hash"]:
        if model == named:
            raise InputError(f"model {named!r} has changed since the branch was computed (hash "
                             f"{loaded.model_hash} now, {prov['model_hash']} in the file): restarting would "
                             "mix two models; recompute the branch")
        raise InputError(f"--model {model}: its hash {loaded.model_hash} is not the branch's "
                         f"{prov['model_hash']} (model {prov.get('model', '?')!r}): it is not the model the "
                         "branch was computed with, or it has changed since; give that model's file or "
                         "recompute the branch")
    return loaded


def _changed_kind(branch, disc, discretization, intervals, degree):
    """The discretization kind a restart converts to (None: it keeps the saved one)."""
    if discretization is not None and branch.kind == "equilibrium":
        raise InputError(f"--method {discretization}: an equilibrium branch has no periodic-orbit method; "
                         "restart it without --method")
    kind = disc.kind if discretization is None else periodic_kind(disc.model, discretization)
    if kind in COLLOCATION_KINDS:
        same_mesh = kind == disc.kind and \
            (intervals is None or intervals == disc.sizes.get("n_intervals")) and \
            (degree is None or degree == disc.sizes.get("degree"))
        return None if same_mesh else kind
    if intervals is not None or degree is not None:
        raise InputError("--intervals/--degree: the branch is not a collocation branch; add --method collocation")
    return None if kind == disc.kind else kind


def _convert_point(old, Z, kind, harmonics, intervals, degree):
    """A periodic orbit of one discretization as the unknowns of another (``kind``), corrected.

    The orbit goes through its states on a uniform grid of one period (contract item 8,
    ``samples``): to HBM/AFT by :func:`_orbit_to_start` (states -> aux -> FFT); to a
    collocation by ``from_states`` of its trigonometric interpolant (the recast one after a
    shooting refinement, below).  Newton then corrects it at the saved parameter value
    (``lam`` fixed).
    """
    model = old.model
    info = old.unpack(Z)
    lam, omega = info["lam"], info["omega"]
    H = int(harmonics or old.H or 30)
    n_grid = max(8 * H + 8, 8 * (old.H or 0) + 8, 512)
    _, x = old.samples(Z, n_grid)
    try:
        if kind in COLLOCATION_KINDS:
            if harmonics is not None:
                raise InputError("harmonics: a collocation branch has no harmonics; give intervals/degree")
            new = build_collocation(model, kind, intervals or 40, degree or 3)
            if kind == "collocation-states":
                # the states alone: their trigonometric interpolant at the nodes
                Zn = new.from_states(x, lam, omega)
            else:
                # a truncated harmonic balance can put a sqrt auxiliary of the recast on its
                # other root at the collocation points (a Gibbs dip): shoot on the original
                # ODE first, from an extremum of the first state (shooting's phase condition)
                x0 = x[:, int(np.argmax(x[0]))]
                orbit = find_periodic_orbit(model, lam, x0, 2 * np.pi / omega if new.autonomous else None)
                Zn = new.from_orbit(orbit)
        else:
            if intervals is not None or degree is not None:
                raise InputError(f"intervals/degree: the {kind} method has harmonics, not a collocation mesh")
            new, Zn = _orbit_to_start(model, x, omega, lam, H, discretization=kind)
        e = np.zeros(new.size)
        e[-1] = 1.0
        Zn, _ = correct(new, Zn, e, lam, max_iter=30)
    except ConvergenceError as exc:
        raise ConvergenceError(f"the saved {old.kind} orbit at {model.continuation} = {lam:.10g} did not "
                               f"converge as a {kind} orbit ({exc}); restart from another point or with "
                               "a finer size") from None
    return new, Zn


def _restart_discretization(branch, model, index, harmonics):
    """The discretization of a saved branch rebuilt from its sizes (``harmonics`` may change
    them), and the unknown vector of point ``index`` in it."""
    prov = branch.provenance
    sizes = prov.get("sizes") or {}
    kind = prov.get("discretization", "hbm")
    kind = SAVED_KINDS.get(kind, kind)
    Z = np.array(branch.solutions[index], dtype=float)
    H0 = int(sizes.get("harmonics", branch.harmonics) or 0)
    if kind in COLLOCATION_KINDS:
        if harmonics is not None:
            raise InputError("harmonics: a collocation branch has no harmonics (restart keeps its intervals)")
        disc = build_collocation(model, kind, sizes["n_intervals"], sizes["degree"], sizes.get("phase_state", 0),
                                 sizes.get("mesh"))
    elif kind in ("hbm", "aft", "equilibria", "aft-condensed"):
        H = H0 if harmonics is None else int(harmonics)
        if branch.kind == "equilibrium" and H != 0:
            raise InputError("harmonics: an equilibrium branch has none; restart it without --harmonics")
        if kind == "aft-condensed":
            from ..discretizations._condensed import CondensedAFTDiscretization as cls   # structures only
        else:
            cls = AFTDiscretization if kind == "aft" else HBMDiscretization
        disc = cls(model, H, n_t=sizes.get("n_t") if H == H0 else None)
        if H != H0:
            Z = _resize_harmonics(Z, H0, disc)
    else:
        raise InputError(f"restart of a {kind!r} branch is not supported (HBM, AFT, the two collocations, "
                         "equilibria)")
    if Z.shape != (disc.size,):
        raise InputError(f"the saved solution has {Z.size} unknowns, the rebuilt {kind} discretization "
                         f"{disc.size}: the file does not match its own metadata")
    return disc, Z


def attach_discretization(branch, model=None):
    """Give a branch loaded from a file its discretization back (``branch.discretization``).

    A saved branch holds its unknowns and the discretization's kind and sizes (provenance),
    not the discretization object that the curves of two parameters (:func:`fold_curve`,
    :func:`pd_curve`, :func:`ns_curve`), ``time_series`` and the report's orbits need.  It is
    rebuilt as a restart rebuilds it: the model is the zoo model the branch names, or
    ``model`` (a model file, ModelSpec or module) whose hash must be the branch's — a model
    file a branch file names is never run.  A branch that has its discretization is returned
    as it is.

    Returns
    -------
    Branch
        ``branch`` itself, with ``discretization`` set.
    """
    if getattr(branch, "discretization", None) is not None:
        return branch
    m = _restart_model(branch.provenance, model)
    branch.discretization, _ = _restart_discretization(branch, m, 0, None)
    return branch
