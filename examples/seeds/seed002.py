"""Helpers for the seed 002 (Fig. 3) and seed 004 (Table 1) reproductions.

Seed 002 (``002_*.txt``): the belt oscillator ``x'' + 2 xi x' + x = F(x' - v_d)`` (eq. 5)
with the weakening-strengthening law (eq. 3).  Its cycles are born at a subcritical Hopf
point ``v_lw`` (eq. 9); the unstable sliding cycles grow until they touch ``v_rel = 0``
(``max x' = v_d``), where, in the non-smooth model, they meet the stable stick-slip cycles
in a (discontinuous) fold of cycles.  While ``x' < v_d`` the law is the analytic branch
``F = mu_d + (mu_st - mu_d) exp(-(v_d - x')/v0) + mu_v (v_d - x')/v0``, so that fold is
computed exactly (no regularization) by shooting on this *slip model* with the grazing
condition ``max x' = v_d`` (:func:`grazing_fold`).  The energy criterion ``v_up`` (eq. 15)
is its one-harmonic estimate.  The zoo model ``weakstrong`` regularizes ``|v|`` by
``sqrt(v**2 + delta**2)``; its smooth fold of cycles tends to the grazing fold as
``delta -> 0``.

"""
from __future__ import annotations

from frictionkit.runtime import Model, ShootingDiscretization
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import ConvergenceError, InputError
import numpy as np

__all__ = ["seed002_slip_spec", "grazing_fold", "shooting_start", "shooting_fold"]


def seed002_slip_spec():
    """The seed-002 model on its backward-slip branch (:func:`frictionkit.modelspec.zoo.weakstrong_slip`)."""
    from frictionkit.modelspec.zoo import weakstrong_slip
    return weakstrong_slip()


def shooting_start(model: Model, disc, Z, *, phase_state: int = 0, fix: str = "lam", rtol: float = 1e-11,
                   atol: float = 1e-13, method: str = "LSODA", n_t: int = 2048):
    """A harmonic-balance orbit ``Z`` of ``disc`` as a corrected shooting unknown.

    The start is the state at the grid maximum of ``x_{phase_state}``; Newton on
    :class:`ShootingDiscretization` (periodicity and ``f_k(x0) = 0``) puts it on the exact
    extremum.  Works for unstable orbits too.

    Parameters
    ----------
    fix : {"lam", "extremum"}
        Keep ``lam`` fixed, or the extremum value ``x0[phase_state]`` (well posed at a fold
        of cycles, where fixed ``lam`` is singular).

    Returns
    -------
    sd : ShootingDiscretization
    Zs : ndarray
        ``[x0, T, lam]``.
    """
    if fix not in ("lam", "extremum"):
        raise InputError(f"fix={fix!r}: use 'lam' or 'extremum'")
    res = disc.unpack(Z)
    xs = np.asarray(res["samples"](n_t))[:model.n]
    j = int(np.argmax(xs[phase_state]))
    sd = ShootingDiscretization(model, phase_state=phase_state, rtol=rtol, atol=atol, method=method)
    lam = float(res["lam"])
    Zs = np.concatenate([xs[:, j], [2 * np.pi / res["omega"], lam]])
    e = np.zeros(sd.size)
    e[-1 if fix == "lam" else phase_state] = 1.0
    Zs, _ = correct(sd, Zs, e, float(e @ Zs), max_iter=30, xtol=100 * rtol)
    return sd, Zs


def grazing_fold(xi=0.05, mud=0.5, mus=1.0, muv=0.0, v0=0.5, *, method: str = "auto", harmonics: int = 20,
                 vd_max: float = 20.0, backend: str = "numpy", rtol: float = 1e-12, atol: float = 1e-14):
    """Fold of cycles of the non-smooth seed-002 model: the sliding cycle that grazes ``v_rel = 0``.

    The unstable sliding cycles of the slip model (:func:`seed002_slip_spec`) are continued
    from the Hopf point until ``max x' - v_d`` changes sign, by the ANM (HBM, ``harmonics``;
    ``method="hbm"``) or by pseudo-arclength shooting (``method="shooting"``: needed for the
    steep laws of the seed 002 eq. (19) sets, whose near-grazing cycles the HBM at moderate
    H gets wrong; ``"auto"`` tries the HBM, then shooting).  The grazing cycle is then solved
    by shooting with the extra condition ``x'(0) = v_d`` at the maximum of ``x'`` (phase
    condition ``f_1(x0) = 0``): unknowns ``x0, T, v_d``, exact up to the integration tolerance.

    Returns
    -------
    dict
        ``vd`` (the fold), ``T``, ``x0``, ``hopf`` (the slip model's Hopf point, = v_lw),
        ``amplitude`` (half peak-to-peak of x on the grazing cycle), ``method``, ``model``.
    """
    from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
    if method not in ("auto", "hbm", "shooting"):
        raise InputError(f"method={method!r}: use 'auto', 'hbm' or 'shooting'")
    model = load_model(seed002_slip_spec(), continuation="vd", backend=backend, xi=xi, mud=mud, mus=mus,
                       muv=muv, v0=v0)
    eq = equilibrium_branch(model, vd_max, 1e-3)
    hopf = eq.special_points("hopf")
    if len(hopf) != 1:
        raise ConvergenceError(f"slip model: expected one Hopf point in (0, {vd_max}], found {len(hopf)}")
    disc, Z, d = periodic_start_from_hopf(model, hopf[0], harmonics=harmonics)
    border = np.zeros(model.n + 2)
    border[1], border[-1] = 1.0, -1.0          # grazing: x'(0) = vd, a linear border row

    def graze(sd, Zs):
        Zs, _ = correct(sd, Zs, border, 0.0, max_iter=30, xtol=100 * rtol)
        res = float(np.max(np.abs(sd.residual(Zs))))
        if not res < 1e-8:
            raise ConvergenceError(f"grazing cycle not converged (residual {res:.2e})")
        return sd, Zs

    found, errors = None, []
    if method in ("auto", "hbm"):
        try:
            br = periodic_branch(disc, Z, 1e-3, vd_max, d, method="anm",
                                 options=dict(max_steps=200, stability=False))
            g = br.max["v"] - br.param
            k = np.flatnonzero((g[:-1] < 0) & (g[1:] >= 0))
            if k.size == 0:
                raise ConvergenceError(f"the HBM sliding cycles do not reach v_rel = 0 for vd <= {vd_max}")
            sd, Zs = shooting_start(model, disc, br.solutions[int(k[0]) + 1], phase_state=1, rtol=rtol, atol=atol)
            found = graze(sd, Zs) + ("hbm",)
        except ConvergenceError as exc:
            errors.append(f"hbm: {exc}")
            if method == "hbm":
                raise
    if found is None:
        from frictionkit.runtime.drivers._continue import continuation
        from frictionkit.runtime.engine._options import ContinuationProblem, NewtonOptions

        # a small cycle near the Hopf point (where H = harmonics is accurate), then shooting
        br = periodic_branch(disc, Z, 1e-3, vd_max, d, method="anm", options=dict(max_steps=4, stability=False))
        sd, Zs = shooting_start(model, disc, br.solutions[-1], phase_state=1, rtol=1e-10, atol=1e-12)
        opts = NewtonOptions(lam_min=1e-3, lam_max=vd_max, step=0.05, max_step=0.1, max_steps=400,
                             stop_on_return=False, branch_points=False, stability=False, locate_folds=False,
                             newton_xtol=1e-8, residual_tolerance=1e-8)
        path = np.array(continuation(ContinuationProblem(sd, Zs, 1.0), "newton", opts).solutions)
        g = path[:, 1] - path[:, -1]
        k = np.flatnonzero((g[:-1] < 0) & (g[1:] >= 0))
        if k.size == 0:
            raise ConvergenceError(f"the sliding cycles do not reach v_rel = 0 for vd <= {vd_max} "
                                   f"({'; '.join(errors)})")
        sd = ShootingDiscretization(model, phase_state=1, rtol=rtol, atol=atol)
        found = graze(sd, path[int(k[0]) + 1]) + ("shooting",)
    sd, Zs, how = found
    x0, T, vd = Zs[:2], Zs[2], Zs[3]
    orbit = sd.unpack(Zs)["samples"](1024)
    return dict(vd=float(vd), T=float(T), x0=np.array(x0), hopf=float(hopf[0].param),
                amplitude=float(np.ptp(orbit[0]) / 2), method=how, model=model)


def shooting_fold(model: Model, disc, Z_fold, *, coordinate: str = "auto", width: float = 2e-4,
                  rtol: float = 1e-11, atol: float = 1e-13, method: str = "LSODA", xatol: float = 1e-9):
    """A fold of cycles recomputed by shooting on the original ODE (an independent method).

    Near the fold, ``lam`` is a smooth function of a coordinate ``c`` that is monotone
    along the branch there (the fold is a turning point in ``lam`` only): the period ``T``
    or the maximum ``a`` of ``x``.  Each ``lam(c)`` is a shooting solve at fixed ``c``
    (phase condition: ``x'(0) = 0`` at the maximum of ``x``).  The fold is ``max_c lam(c)``
    (or the min), found by Brent's method on ``[c_f (1 - width), c_f (1 + width)]`` around
    the harmonic-balance guess ``Z_fold`` (a solution vector of ``disc``).

    Parameters
    ----------
    coordinate : {"auto", "period", "extremum"}
        ``"auto"`` tries the period, then the extremum, then both with ``width / 4`` (for
        the seed-002 cycles the period is monotone through the fold at delta = 1e-2, where
        the amplitude turns too; at delta = 0.1 and 1e-3 it is the other way round).

    Returns
    -------
    dict
        ``lam`` (the fold), ``T``, ``x0``, ``evaluations`` (shooting solves),
        ``curvature_sign`` (-1: a maximum of ``lam``, +1: a minimum).
    """
    if coordinate not in ("auto", "period", "extremum"):
        raise InputError(f"coordinate={coordinate!r}: use 'auto', 'period' or 'extremum'")
    if coordinate == "auto":
        # a coordinate that turns near the fold too (no solution at fixed c on one side) makes
        # Newton fail: try the other one, then narrower brackets
        errors = []
        for w in (width, width / 4):
            for c in ("period", "extremum"):
                try:
                    return shooting_fold(model, disc, Z_fold, coordinate=c, width=w, rtol=rtol, atol=atol,
                                         method=method, xatol=xatol)
                except ConvergenceError as exc:
                    errors.append(f"{c}, width {w:g}: {exc}")
        raise ConvergenceError("shooting fold failed: " + "; ".join(errors))
    import scipy.optimize
    sd, Zs = _start_fixed(model, disc, Z_fold, coordinate, rtol, atol, method)
    k_c = model.n if coordinate == "period" else 0
    c_f = float(Zs[k_c])
    e = np.zeros(sd.size)
    e[k_c] = 1.0
    known = {c_f: Zs.copy()}
    count = [0]

    def lam_of(c):
        # start from the nearest solved point: small moves keep Newton in its basin
        c0 = min(known, key=lambda b: abs(b - c))
        Z, _ = correct(sd, known[c0], e, float(c), max_iter=30, xtol=100 * rtol)
        known[float(c)] = Z
        count[0] += 1
        return float(Z[-1])

    lo, hi = c_f * (1 - width), c_f * (1 + width)
    l_f, l_lo, l_hi = float(Zs[-1]), lam_of(lo), lam_of(hi)
    if l_f >= max(l_lo, l_hi):
        sign = -1.0
    elif l_f <= min(l_lo, l_hi):
        sign = 1.0
    else:
        raise ConvergenceError(f"lam({coordinate}) is monotone on [{lo:.8g}, {hi:.8g}]: no fold there (widen `width`)")
    res = scipy.optimize.minimize_scalar(lambda c: sign * lam_of(c), bounds=(lo, hi), method="bounded",
                                         options=dict(xatol=xatol * c_f))
    lam_of(res.x)
    Z = known[float(res.x)]
    return dict(lam=float(Z[-1]), T=float(Z[model.n]), x0=Z[:model.n].copy(), evaluations=count[0],
                curvature_sign=sign, coordinate=coordinate)


def _start_fixed(model, disc, Z, coordinate, rtol, atol, method, n_t=2048):
    """Shooting unknown from an HBM orbit, corrected at its period or at its maximum of x."""
    res = disc.unpack(Z)
    xs = np.asarray(res["samples"](n_t))[:model.n]
    j = int(np.argmax(xs[0]))
    sd = ShootingDiscretization(model, phase_state=0, rtol=rtol, atol=atol, method=method)
    Zs = np.concatenate([xs[:, j], [2 * np.pi / res["omega"], float(res["lam"])]])
    e = np.zeros(sd.size)
    e[model.n if coordinate == "period" else 0] = 1.0
    Zs, _ = correct(sd, Zs, e, float(e @ Zs), max_iter=30, xtol=100 * rtol)
    return sd, Zs


# ---------------------------------------------------------------------------------------
# seed 004
# ---------------------------------------------------------------------------------------
