"""Quasi-static approximation of the seed-001 two-phase model, driven by a temperature series.

Seed 001 §2.7: with b(x, t) = K (beta T(t) - x) (eq. 3) and a temperature that hardly moves
during a dynamic phase, every dynamic phase is one half-oscillation (tau_{j+1} = tau_{j+1/2}
+ pi / omega) that starts on the static threshold (eq. 17)::

    |beta T_{j+1/2} - x_j| = f_s / K

and ends at (eq. 18)::

    x_{j+1} = x_j + 2 eps_j (f_s - f_d) / K,    eps_j = sign(beta T_{j+1/2} - x_j).

On sampled data the half-oscillation is shorter than the sampling step (seed 001 §4.2), so a
dynamic phase is instantaneous at the first sample where the threshold is exceeded; when
the temperature moved so far within one step that the threshold is still exceeded after a
jump, further jumps follow at the same sample (the temperature crossed it again in
between).  With f_s = f_d the jumps vanish and x stays at x_0 (seed 001 §2.8, a crude
approximation: the force K (beta T - x) is then not bounded by f_s).

The observed displacement of seed 001 §4.1 adds the elastic shear of the bearing:
``z = z0 + x + F / K_BP`` with the friction force F = K (beta T - x) of the static phase.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["QuasiStaticResponse", "quasi_static_response", "quasi_static_batch"]


@dataclass
class QuasiStaticResponse:
    """Response of the quasi-static model at the temperature samples.

    Attributes
    ----------
    x : ndarray
        Bearing displacement after each sample (static state x_j).
    force : ndarray
        Friction force K (beta T - x), |force| <= f_s.
    z : ndarray
        Observed displacement z0 + x + force / K_BP (``K_BP = inf`` drops the shear term).
    jumps : ndarray of int
        Sample indices of the dynamic phases (repeated when several happen at one sample).
    directions : ndarray of int
        eps_j of each dynamic phase.
    """

    x: np.ndarray
    force: np.ndarray
    z: np.ndarray
    jumps: np.ndarray
    directions: np.ndarray


def quasi_static_response(temperature, *, K: float, beta: float, f_d: float, f_s: float,
                          z0: float = 0.0, x0: float = 0.0, K_BP: float = math.inf) -> QuasiStaticResponse:
    """Displacement of the quasi-static dry-friction model for a temperature series.

    Parameters
    ----------
    temperature : array_like (N,)
        Temperature samples T(s_k) in time order.
    K, beta : float
        Stiffness (> 0) and dilatation coefficient of b(x, t) = K (beta T - x) (seed 001 eq. 3).
    f_d, f_s : float
        Dynamic and static friction thresholds, 0 <= f_d <= f_s.
    z0 : float
        Displacement offset (seed 001 §4.2).
    x0 : float
        Initial static displacement x_0.
    K_BP : float
        Bearing-point stiffness of the observed z (seed 001 §4.1); infinite by default.

    Returns
    -------
    QuasiStaticResponse
    """
    if not (K > 0 and math.isfinite(K)):
        raise InputError(f"stiffness K={K!r} must be finite and > 0")
    if not 0 <= f_d <= f_s:
        raise InputError(f"friction thresholds need 0 <= f_d <= f_s (got f_d={f_d!r}, f_s={f_s!r})")
    if not K_BP > 0:
        raise InputError(f"K_BP={K_BP!r} must be > 0 (use inf to drop the shear term)")
    T = np.asarray(temperature, dtype=float).reshape(-1)
    if not np.all(np.isfinite(T)):
        raise InputError("temperature series contains NaN or inf")
    thr = f_s / K                      # eq. (17), in displacement units
    jump = 2.0 * (f_s - f_d) / K       # eq. (18)
    out = np.empty(T.size)
    jumps, dirs = [], []
    x = float(x0)
    bt = (beta * T).tolist()
    for k, b in enumerate(bt):
        dev = b - x
        if dev > thr or dev < -thr:
            eps = 1 if dev > 0 else -1
            if jump > 0:
                # each jump brings beta T - x closer by `jump` and never past -thr (jump <= 2 thr)
                n = max(1, math.ceil((abs(dev) - thr) / jump - 1e-12))
                x += eps * n * jump
            else:
                n = 1
            jumps.extend([k] * n)
            dirs.extend([eps] * n)
        out[k] = x
    force = K * (beta * T - out)
    z = z0 + out + (force / K_BP if math.isfinite(K_BP) else 0.0)
    return QuasiStaticResponse(x=out, force=force, z=z, jumps=np.array(jumps, dtype=int),
                               directions=np.array(dirs, dtype=int))


def quasi_static_batch(temperature, *, K, beta, f_d, f_s, z0, x0=0.0, K_BP: float = math.inf) -> np.ndarray:
    """Observed displacement z for a batch of P parameter sets at once (no input checks).

    The same recursion as :func:`quasi_static_response`, vectorised over parameter sets
    (arrays of shape (P,)), for population-based calibration.  Returns z of shape (P, N).
    """
    T = np.asarray(temperature, dtype=float).reshape(-1)
    K, beta, f_d, f_s, z0 = (np.asarray(a, dtype=float).reshape(-1) for a in (K, beta, f_d, f_s, z0))
    thr = f_s / K
    jump = 2.0 * (f_s - f_d) / K
    safe = np.where(jump > 0, jump, 1.0)
    x = np.broadcast_to(np.asarray(x0, dtype=float), thr.shape).copy()
    bt = beta[:, None] * T[None, :]
    out = np.empty_like(bt)
    for k in range(T.size):
        dev = bt[:, k] - x
        excess = np.abs(dev) - thr
        n = np.where(excess > 0, np.maximum(1.0, np.ceil(excess / safe - 1e-12)), 0.0)
        x = x + np.sign(dev) * n * np.where(jump > 0, jump, 0.0)
        out[:, k] = x
    force = K[:, None] * (bt - out)
    shear = force / K_BP if math.isfinite(K_BP) else 0.0
    return z0[:, None] + out + shear
