"""Calibration of the quasi-static dry-friction model on (temperature, displacement) data.

Seed 001 §4.2: find (z0, K, f_d, f_s, beta) minimising eq. (24)::

    err = integral (z0 + z^{K, beta, f_d, f_s}(T_xp(s)) - z_xp(s))^2 ds

(a sum over the samples here, uniform sampling assumed).  The model output jumps when a
parameter change adds or removes a dynamic phase, so the objective is piecewise smooth with
discontinuities: like the genetic algorithm of seed 001 Table 1, a global population method
is used (``scipy.optimize.differential_evolution``), polished by ``least_squares`` from the
best member.  Each run draws a different initial population (``seed``); the spread of the
recovered parameters over runs is Table 1's statistic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import differential_evolution, least_squares

from ..errors import InputError
from ._quasistatic import quasi_static_response, quasi_static_batch

__all__ = ["CALIBRATION_PARAMETERS", "CalibrationResult", "calibrate_quasi_static", "calibration_table",
           "synthetic_record", "SYNTHETIC_TRUTH", "SYNTHETIC_BOUNDS"]

#: Known parameters of the synthetic bearing record (mm, kN, K): a hysteresis wide enough
#: to see (2 f_s / K = 5 mm), jumps of 2 (f_s - f_d) / K = 1 mm, shear term K / K_BP = 0.1.
SYNTHETIC_TRUTH = dict(z0=9.7, K=2.0, f_d=4.0, f_s=5.0, beta=0.3)
SYNTHETIC_K_BP = 20.0
#: Search box of the calibration on the synthetic record.
SYNTHETIC_BOUNDS = dict(z0=(0.0, 20.0), K=(0.2, 20.0), f_d=(0.0, 20.0), f_s=(0.1, 20.0), beta=(0.01, 1.0))


def synthetic_record(days: float = 20.0, per_day: int = 24, noise: float = 0.05, seed: int = 0,
                     truth: dict | None = None, K_BP: float = SYNTHETIC_K_BP):
    """A synthetic (temperature, displacement) record of known parameters plus noise.

    Temperature: 15 + 8 sin(2 pi t) + 5 sin(2 pi t / 15) (daily and two-week cycles, t in days)
    plus a Gaussian random walk; displacement: the quasi-static model with ``truth``
    (:data:`SYNTHETIC_TRUTH` by default) plus white Gaussian noise of standard deviation
    ``noise``.  The bridge record of seed 001 §4 is not public; this stands in for it.

    Returns
    -------
    t, T, z_obs, z_true : ndarray
    """
    truth = dict(SYNTHETIC_TRUTH if truth is None else truth)
    rng = np.random.default_rng(seed)
    t = np.arange(int(round(days * per_day))) / per_day
    T = 15 + 8 * np.sin(2 * np.pi * t) + 5 * np.sin(2 * np.pi * t / 15) + np.cumsum(rng.normal(0, 0.2, t.size))
    z_true = quasi_static_response(T, K_BP=K_BP, **truth).z
    return t, T, z_true + rng.normal(0.0, noise, t.size), z_true

#: Parameter order of seed 001 Table 1.
CALIBRATION_PARAMETERS = ("z0", "K", "f_d", "f_s", "beta")


@dataclass
class CalibrationResult:
    """Outcome of one calibration run.

    Attributes
    ----------
    params : dict
        Recovered values, keys :data:`CALIBRATION_PARAMETERS`.
    rms : float
        Root-mean-square residual of the fit (same units as z).
    nfev : int
        Model evaluations.
    success : bool
    message : str
    """

    params: dict
    rms: float
    nfev: int
    success: bool
    message: str
    seed: int | None = None
    history: list = field(default_factory=list, repr=False)


def _to_physical(u):
    """Search variables (z0, K, f_d, f_s, beta), columns of u of shape (5, P), to model inputs.

    f_s < f_d is outside the model (seed 001 eq. 7): such members are evaluated on the
    boundary f_s = f_d.  (A search over the ratio f_d / f_s in [0, 1] was tried and converged
    to a spurious minimum more often.)
    """
    z0, K, f_d, f_s, beta = u
    return z0, K, f_d, np.maximum(f_s, f_d), beta


def calibrate_quasi_static(temperature, displacement, bounds: dict, *, x0: float = 0.0,
                           K_BP: float = math.inf, seed: int | None = None, popsize: int = 20,
                           maxiter: int = 300, tol: float = 1e-10, polish: bool = True) -> CalibrationResult:
    """Fit (z0, K, f_d, f_s, beta) of the quasi-static model to a displacement record.

    Parameters
    ----------
    temperature, displacement : array_like (N,)
        The record T_xp(s_k), z_xp(s_k) (uniform sampling).
    bounds : dict
        ``{name: (low, high)}`` for every name of :data:`CALIBRATION_PARAMETERS` (K and f_s
        with low > 0).
    x0 : float
        Initial static displacement of the model.
    K_BP : float
        Known bearing stiffness of the observed z (seed 001 §4.1); ``inf`` to ignore.
    seed : int, optional
        Seed of the differential-evolution population (one seed = one Table-1 run).
    popsize, maxiter, tol : int, int, float
        ``differential_evolution`` settings (population evaluated as one vectorised batch).
    polish : bool
        Refine the best member with ``least_squares`` (trust-region reflective, within bounds).

    Returns
    -------
    CalibrationResult
    """
    T = np.asarray(temperature, dtype=float).reshape(-1)
    z = np.asarray(displacement, dtype=float).reshape(-1)
    if T.shape != z.shape or T.size < 10:
        raise InputError(f"temperature and displacement must be 1-D of equal length >= 10 "
                         f"(got {T.size} and {z.size})")
    if not (np.all(np.isfinite(T)) and np.all(np.isfinite(z))):
        raise InputError("temperature or displacement contains NaN or inf; remove those samples first")
    missing = [k for k in CALIBRATION_PARAMETERS if k not in bounds]
    if missing:
        raise InputError(f"calibration bounds missing for {', '.join(missing)}; give (low, high) for each of "
                         f"{', '.join(CALIBRATION_PARAMETERS)}")
    box = [tuple(map(float, bounds[k])) for k in CALIBRATION_PARAMETERS]
    for k, (lo, hi) in zip(CALIBRATION_PARAMETERS, box):
        if not lo < hi:
            raise InputError(f"calibration bound for {k}: low={lo} must be < high={hi}")
    if box[1][0] <= 0:
        raise InputError("calibration bound for K: the stiffness must stay > 0 (low > 0)")
    if box[3][0] <= 0:
        raise InputError("calibration bound for f_s: the static threshold must stay > 0 (low > 0)")
    if box[2][0] < 0 or box[2][0] > box[3][1]:
        raise InputError("calibration bound for f_d: need 0 <= low <= the upper bound of f_s")
    sbox = box

    def sse_batch(u):
        u = np.asarray(u, dtype=float).reshape(5, -1)
        z0, K, f_d, f_s, beta = _to_physical(u)
        r = quasi_static_batch(T, K=K, beta=beta, f_d=f_d, f_s=f_s, z0=z0, x0=x0, K_BP=K_BP) - z[None, :]
        out = np.einsum("pk,pk->p", r, r)
        return out if u.shape[1] > 1 else out  # (P,)

    def residual(u):
        return quasi_static_batch(T, **dict(zip(("z0", "K", "f_d", "f_s", "beta"),
                                                (np.atleast_1d(a) for a in _to_physical(u)))),
                                  x0=x0, K_BP=K_BP)[0] - z

    de = differential_evolution(sse_batch, sbox, seed=seed, popsize=popsize, maxiter=maxiter, tol=tol,
                                polish=False, vectorized=True, updating="deferred")
    u, nfev, message = de.x, de.nfev, de.message
    if polish:
        lo = np.array([b[0] for b in sbox])
        hi = np.array([b[1] for b in sbox])
        ls = least_squares(residual, np.clip(u, lo, hi), bounds=(lo, hi),
                           x_scale=np.maximum(np.abs(u), 1e-3), diff_step=1e-7)
        nfev += ls.nfev
        r_de = residual(u)
        if 2 * ls.cost <= float(r_de @ r_de):
            u = ls.x
    z0, K, f_d, f_s, beta = (float(a) for a in _to_physical(np.asarray(u)))
    r = residual(u)
    p = dict(z0=z0, K=K, f_d=f_d, f_s=f_s, beta=beta)
    return CalibrationResult(params=p, rms=float(np.sqrt(np.mean(r**2))), nfev=int(nfev),
                             success=bool(de.success), message=str(message), seed=seed)


def calibration_table(results) -> dict:
    """Mean, standard deviation and coefficient of variation over runs (seed 001 Table 1 rows).

    Parameters
    ----------
    results : sequence of CalibrationResult

    Returns
    -------
    dict
        ``{"runs": [[...], ...], "mean": [...], "std": [...], "cv": [...],
        "parameters": CALIBRATION_PARAMETERS}`` (lists, JSON-serialisable).
    """
    runs = np.array([[r.params[k] for k in CALIBRATION_PARAMETERS] for r in results])
    mean = runs.mean(axis=0)
    std = runs.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros(runs.shape[1])
    return {"parameters": list(CALIBRATION_PARAMETERS), "runs": runs.tolist(), "mean": mean.tolist(),
            "std": std.tolist(), "cv": (std / np.abs(mean)).tolist()}
