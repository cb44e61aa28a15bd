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
logarithmic grid on both signs, then Brent's method on the law's slope in the best
bracket), so any law works.  Intervals are counted cyclically on a uniform sampling of the
period: an excursion shorter than the sampling step can be missed (raise ``n_t``).

A law with internal states (a LuGre bristle deflection) is generated in steady sliding
(``ModelSpec.steady_sliding_law``); where that has no closed form the module's
``contact_law`` is NaN for the contact, which then has no ``V_n`` and the label
``"unknown"`` (:data:`UNKNOWN_MOTION`).
"""
from __future__ import annotations

from dataclasses import dataclass
import warnings

import numpy as np

from .._roots import bracketed_root
from ..errors import InputError
from ..model._interface import Model
from ..results._result import Result

MOTION_LABELS = ("slipping", "stick-slip", "multiple stick", "sticking")
#: label of a contact whose law cannot be evaluated as a function of the relative velocity
#: (and of an orbit with such a contact)
UNKNOWN_MOTION = "unknown"


def limit_velocity(model: Model, lam: float | None = None, *, v_max: float = 1e3) -> np.ndarray:
    """``V_n`` of every contact: the relative velocity of the friction law's static peak.

    The peak is the law's local maximum nearest zero relative velocity: the maximum
    ``mu_n(V_n) ~ mu_s`` of seed 003 eq. (7) for laws that weaken after it (the regularized
    law, Feeny-Moon, van de Vrande's); a law with viscous strengthening (LuGre's ``sigma_2``,
    seed 002's ``mu_v``) grows again at large ``|v|``, past its peak.  A law without a local
    maximum in the range takes its largest value there.

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
        NaN for a contact whose law is NaN over the whole range (no closed-form steady
        sliding, see the module docstring).
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
        if np.all(np.isnan(law[c])):
            out[c] = np.nan
            continue
        y = np.where(np.isnan(law[c]), -np.inf, law[c])
        # the static peak: the strict local maximum nearest zero velocity, else the largest
        peaks = np.flatnonzero((y[1:-1] > y[:-2]) & (y[1:-1] > y[2:])) + 1
        k = int(peaks[np.argmin(np.abs(grid[peaks]))]) if peaks.size else int(np.argmax(y))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        if lo == hi:
            out[c] = grid[k]
            continue

        def mu(v, c=c):
            return float(np.ravel(model.contact_law(np.full((n_c, 1), v), p)[c])[0])

        def slope(v, c=c):
            # central difference, step 1e-6 of |v|; its root is the peak to the 1e-7 that
            # tests/analysis/test_motion_internal_states.py checks against the closed form
            h = 1e-6 * max(abs(v), 1e-10)
            return (mu(v + h) - mu(v - h)) / (2 * h)

        s_lo, s_hi = slope(lo), slope(hi)
        if np.isfinite(s_lo) and np.isfinite(s_hi) and s_lo > 0 > s_hi:
            v = bracketed_root(slope, lo, hi, xtol=1e-14 * max(1, abs(grid[k])), rtol=1e-13)
            out[c] = v if mu(v) >= law[c, k] else grid[k]
        else:
            out[c] = grid[k]
    return out


def limit_velocities(model: Model, lams, *, v_max: float = 1e3) -> np.ndarray:
    """``V_n`` of every contact at each of the parameter values ``lams`` (n_lam, n_contacts).

    The same numbers as :func:`limit_velocity` at each value, searched once when no contact
    law involves the continuation parameter (:attr:`Model.contact_laws_use_lam`, read from
    the laws' expressions by the code generator: the usual case), otherwise at every value.
    """
    lams = np.asarray(lams, dtype=float).ravel()
    if not lams.size:
        return np.zeros((0, len(model.contacts)))
    if model.contact_laws_use_lam:
        return np.array([limit_velocity(model, lam, v_max=v_max) for lam in lams])
    return np.tile(limit_velocity(model, lams[0], v_max=v_max), (lams.size, 1))


@dataclass
class MotionResult(Result):
    """Motion type of one periodic orbit.

    Attributes
    ----------
    label : str
        Overall label: the contact's label for one contact, else the "worst" over contacts
        in the order ``slipping < stick-slip < multiple stick < sticking``; ``"unknown"``
        if a contact's is.
    labels : tuple of str
        One label per contact (``MOTION_LABELS``, or :data:`UNKNOWN_MOTION` for a contact
        whose law has no ``V_n``).
    stick_intervals : tuple of int
        Number of stick intervals per contact (-1 where unknown).
    stick_fraction : tuple of float
        Fraction of the period spent sticking, per contact (NaN where unknown).
    v_n : ndarray
        Limit velocities ``V_n`` per contact (NaN where unknown).
    success, status, message :
        The result convention (``status = "computed"``).
    """

    label: str
    labels: tuple
    stick_intervals: tuple
    stick_fraction: tuple
    v_n: np.ndarray


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
    _check_contacts(model)
    x = np.asarray(samples(int(n_t)) if callable(samples) else samples, dtype=float)
    if x.ndim != 2 or x.shape[0] != model.n:
        raise InputError(f"samples must have shape (n={model.n}, n_t), got {x.shape}")
    return classify_motions(model, [lam], x[None],
                            omegas=None if omega is None else [omega])[0]


def classify_motions(model: Model, lams, samples, *, omegas=None, velocity=None, v_n=None) -> list[MotionResult]:
    """:func:`classify_motion` of many orbits at once (e.g. every point of a branch).

    Parameters
    ----------
    model : Model
    lams : sequence of float (n_orbits,)
    samples : ndarray (n_orbits, n, n_t)
        The original states of each orbit on a uniform grid of its period.
    omegas : sequence of float, optional
        Angular frequencies (models whose contact velocity depends on time), as ``omega``
        of :func:`classify_motion`; None (or a NaN entry): ``t = 0``.
    velocity : callable, optional
        ``velocity(x, t, params)``: the contacts' relative velocities from ``samples``
        (default ``model.contact_velocity``: samples of the model's states; a
        discretization's ``contact_velocity`` for samples of its ``state_names``).
    v_n : ndarray (n_orbits, n_contacts), optional
        :func:`limit_velocities` ``(model, lams)``, given by a caller that classifies a branch
        in parts (and has warned of a law without ``V_n`` once); by default searched here.

    Returns
    -------
    list of MotionResult
        The same results as :func:`classify_motion` orbit by orbit; ``V_n`` is searched
        once for the whole set where the law allows (:func:`limit_velocities`).
    """
    _check_contacts(model)
    x = np.asarray(samples, dtype=float)
    lams = np.asarray(lams, dtype=float).ravel()
    if velocity is None:
        velocity = model.contact_velocity
        if x.ndim != 3 or x.shape[1] != model.n or x.shape[0] != lams.size:
            raise InputError(f"samples must have shape (n_orbits={lams.size}, n={model.n}, n_t), got {x.shape}")
    elif x.ndim != 3 or x.shape[0] != lams.size:
        raise InputError(f"samples must have shape (n_orbits={lams.size}, variables, n_t), got {x.shape}")
    m = x.shape[2]
    oms = [None] * lams.size if omegas is None else list(omegas)
    vr = np.array([np.atleast_2d(np.asarray(velocity(
        xi, 2 * np.pi / om * np.arange(m) / m if om and np.isfinite(om) else np.zeros(m),
        model.param_vector(lam)), dtype=float)) for xi, lam, om in zip(x, lams, oms)])
    if v_n is None:
        v_n = limit_velocities(model, lams)
        warn_unknown_limits(model, v_n, stacklevel=2)
    v_n = np.asarray(v_n, dtype=float)
    unknown = np.isnan(v_n)                                 # (n_orbits, n_contacts)
    stick = np.abs(vr) <= np.abs(v_n)[:, :, None]          # (n_orbits, n_contacts, n_t)
    # maximal runs of True, counted cyclically (all True: one run)
    counts = np.where(stick.all(axis=2), 1, np.sum(stick & ~np.roll(stick, 1, axis=2), axis=2))
    fractions = np.where(unknown, np.nan, stick.mean(axis=2))
    labels = np.where(counts == 0, "slipping", np.where(stick.all(axis=2), "sticking",
                                                        np.where(counts == 1, "stick-slip", "multiple stick")))
    labels = np.where(unknown, UNKNOWN_MOTION, labels)
    out = []
    for i in range(lams.size):
        labs = tuple(str(lab) for lab in labels[i])
        label = UNKNOWN_MOTION if UNKNOWN_MOTION in labs else max(labs, key=MOTION_LABELS.index)
        out.append(MotionResult(label=label, labels=labs,
                                stick_intervals=tuple(-1 if u else int(k) for u, k in zip(unknown[i], counts[i])),
                                stick_fraction=tuple(float(f) for f in fractions[i]), v_n=v_n[i]))
    return out


def warn_unknown_limits(model: Model, v_n, stacklevel: int = 2):
    """The warning of :func:`classify_motions` where a contact's ``V_n`` is NaN (its label is
    :data:`UNKNOWN_MOTION`)."""
    unknown = np.isnan(np.asarray(v_n, dtype=float))
    if unknown.any():
        names = [model.contacts[c] for c in np.flatnonzero(unknown.any(axis=0))]
        warnings.warn(f"model {model.name!r}: the friction law of contact(s) {', '.join(map(repr, names))} is "
                      "NaN as a function of the relative velocity (a law with internal states whose steady "
                      f"sliding has no closed form): motion label {UNKNOWN_MOTION!r}", RuntimeWarning,
                      stacklevel=stacklevel + 1)


def _check_contacts(model):
    if not len(model.contacts):
        raise InputError(f"model {model.name!r} declares no contact (CONTACTS is empty): "
                         "motion classification needs contact_velocity and contact_law")
