"""Motion classification of periodic orbits of friction models (seed 000 eq. (26), seed 003 eqs. (7)-(8)).

For a regularized friction law ``mu_n`` the limit velocity ``V_n`` is where the law reaches
its maximum, ``mu_n(V_n) = max_v mu_n(v) ~ mu_s`` (seed 003 eq. (7)); a contact *sticks*
while ``|V_r(t)| <= |V_n|`` and *slips* otherwise (eq. (8), seed 000 eq. (26)).  Over one
period a contact is

* ``"slipping"``: no stick interval,
* ``"stick-slip"``: exactly one stick and one slip interval (seed 000's "Helmholtz motion"),
* ``"multiple stick"``: more than one stick interval,
* ``"sticking"``: no slip interval at all.

The relative velocity comes from the model's ``contact_velocity`` and the law from
``contact_law`` (contract item 8 of ``_model.py``); ``V_n`` is located numerically (a
logarithmic grid on both signs, then ``scipy.optimize.minimize_scalar`` on the best
bracket), so any law works.  Intervals are counted cyclically on a uniform sampling of the
period: an excursion shorter than the sampling step can be missed (raise ``n_t``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from ..errors import InputError
from ..model._interface import Model
from ..results._result import Result

MOTION_LABELS = ("slipping", "stick-slip", "multiple stick", "sticking")


def limit_velocity(model: Model, lam: float | None = None, *, v_max: float = 1e3) -> np.ndarray:
    """``V_n`` of every contact: the relative velocity where the friction law is largest.

    Parameters
    ----------
    model : Model
    lam : float, optional
        Continuation-parameter value (the law may depend on it).
    v_max : float
        Search range ``|v| <= v_max``.

    Returns
    -------
    ndarray, shape (n_contacts,)
    """
    p = model.param_vector(lam)
    mags = np.logspace(-10, np.log10(v_max), 4001)
    grid = np.concatenate([-mags[::-1], [0.0], mags])
    n_c = len(model.contacts)
    # contact_law takes the relative velocities with the contact axis first, shaped like
    # contact_velocity's output (generated modules index vr[c])
    law = np.atleast_2d(np.asarray(model.contact_law(np.tile(grid, (n_c, 1)), p), dtype=float))
    out = np.empty(n_c)
    for c in range(out.size):
        k = int(np.argmax(law[c]))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        if lo == hi:
            out[c] = grid[k]
            continue

        def neg(v, c=c):
            return -float(np.ravel(model.contact_law(np.full((n_c, 1), v), p)[c])[0])

        res = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options=dict(xatol=1e-14 * max(1, abs(grid[k]))))
        out[c] = res.x if res.fun <= -law[c, k] else grid[k]
    return out


@dataclass
class MotionResult(Result):
    """Motion type of one periodic orbit.

    Attributes
    ----------
    label : str
        Overall label: the contact's label for one contact, else the "worst" over contacts
        in the order ``slipping < stick-slip < multiple stick < sticking``.
    labels : tuple of str
        One label per contact (``MOTION_LABELS``).
    stick_intervals : tuple of int
        Number of stick intervals per contact.
    stick_fraction : tuple of float
        Fraction of the period spent sticking, per contact.
    v_n : ndarray
        Limit velocities ``V_n`` per contact.
    success, status, message :
        The result convention (``status = "computed"``).
    """

    label: str
    labels: tuple
    stick_intervals: tuple
    stick_fraction: tuple
    v_n: np.ndarray


def _count_cyclic_intervals(mask: np.ndarray) -> int:
    """Number of maximal runs of True in a cyclic boolean sequence."""
    if mask.all():
        return 1
    starts = mask & ~np.roll(mask, 1)
    return int(starts.sum())


def classify_motion(model: Model, lam: float, samples, *, omega: float | None = None,
                    n_t: int = 2048) -> MotionResult:
    """Label a periodic orbit "slipping", "stick-slip", "multiple stick" or "sticking".

    Parameters
    ----------
    model : Model
        A model declaring contacts (``CONTACTS``, ``contact_velocity``, ``contact_law``).
    lam : float
        Continuation-parameter value.
    samples : ndarray (n, n_t) or callable
        The original states on a uniform grid of one period (endpoint excluded), or a callable
        ``samples(n_t)`` returning them (e.g. ``PeriodicOrbit.samples`` or the ``samples`` of
        a discretization's ``unpack``).
    omega : float, optional
        Angular frequency, for models whose contact velocity depends on time (the sample
        times are ``2 pi k / (omega n_t)``); ``t = 0`` is used when omitted.
    n_t : int
        Number of samples requested from a callable.

    Returns
    -------
    MotionResult
    """
    if not len(model.contacts):
        raise InputError(f"model {model.name!r} declares no contact (CONTACTS is empty): "
                         "motion classification needs contact_velocity and contact_law")
    x = samples(int(n_t)) if callable(samples) else np.asarray(samples, dtype=float)
    if x.ndim != 2 or x.shape[0] != model.n:
        raise InputError(f"samples must have shape (n={model.n}, n_t), got {x.shape}")
    m = x.shape[1]
    t = 2 * np.pi / omega * np.arange(m) / m if omega else np.zeros(m)
    p = model.param_vector(lam)
    vr = np.atleast_2d(np.asarray(model.contact_velocity(x, t, p), dtype=float))
    v_n = limit_velocity(model, lam)
    labels, counts, fractions = [], [], []
    for c in range(v_n.size):
        stick = np.abs(vr[c]) <= abs(v_n[c])
        k = _count_cyclic_intervals(stick) if stick.any() else 0
        if k == 0:
            lab = "slipping"
        elif stick.all():
            lab = "sticking"
        elif k == 1:
            lab = "stick-slip"
        else:
            lab = "multiple stick"
        labels.append(lab)
        counts.append(k)
        fractions.append(float(stick.mean()))
    overall = max(labels, key=MOTION_LABELS.index)
    return MotionResult(label=overall, labels=tuple(labels), stick_intervals=tuple(counts),
                        stick_fraction=tuple(fractions), v_n=v_n)
