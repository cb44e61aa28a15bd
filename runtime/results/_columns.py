"""The columns of a branch computed from its solutions, for all points at once: extrema of
Fourier series (:func:`trig_extrema`), states sampled over each period (:func:`orbit_samples`),
the validity of the recast and the energy each contact dissipates per cycle
(:func:`contact_dissipation`) (:class:`~frictionkit.runtime.results.Branch` uses them)."""
from __future__ import annotations

import numpy as np

from ..discretizations._hbm import coefficients_to_samples

__all__ = ["VALIDITY_SAMPLES", "aux_samples", "contact_dissipation", "orbit_samples", "trig_extrema",
           "validity_columns", "validity_measures", "variable_samples"]

#: time samples per period of the validity check (at least ``8 H + 8`` for a harmonic balance)
VALIDITY_SAMPLES = 256


def trig_extrema(coef: np.ndarray, n_grid: int | None = None):
    """Minimum and maximum over one period of real Fourier series, accurately.

    A grid search followed by Newton on ``u'(theta) = 0`` from the best grid points
    (relative accuracy near machine precision, unlike a plain grid maximum).  Every row is
    an independent series, so the rows of many orbits are done in one batch (one inverse FFT
    for the grid, one Newton iteration for all rows not yet converged).

    Parameters
    ----------
    coef : ndarray (..., 2H+1)
        Coefficients ``[u0, c1, s1, ..., cH, sH]`` along the last axis.

    Returns
    -------
    umin, umax : ndarray (...,)  (at least 1-D)
    """
    coef = np.asarray(coef, dtype=float)
    shape = coef.shape[:-1] if coef.ndim > 1 else (1,)
    coef = coef.reshape(-1, coef.shape[-1])
    H = (coef.shape[1] - 1) // 2
    if H == 0:
        return coef[:, 0].reshape(shape).copy(), coef[:, 0].reshape(shape).copy()
    n_grid = n_grid or max(16 * H, 256)
    s = coefficients_to_samples(coef, n_grid)
    theta_grid = 2 * np.pi * np.arange(n_grid) / n_grid
    m = len(coef)
    # the maxima and the minima refined together: rows [0, m) from the grid maximum, [m, 2m)
    # from the grid minimum
    both = np.concatenate([coef, coef])
    theta = theta_grid[np.concatenate([np.argmax(s, axis=1), np.argmin(s, axis=1)])]
    v = _refine_extrema(both, theta, 2 * np.pi / n_grid)
    # Newton may only improve on the grid value
    return np.minimum(v[m:], s.min(axis=1)).reshape(shape), np.maximum(v[:m], s.max(axis=1)).reshape(shape)


def _refine_extrema(coef, theta, cell):
    """Newton on ``u'(theta) = 0`` for each row of ``coef`` from ``theta``, steps clipped to
    ``cell`` (stay within one grid cell of the grid extremum); returns ``u(theta)``.  A row
    stops once its step is below 1e-13 (30 iterations at most): the value at an extremum is
    insensitive to ``theta`` to first order, so that leaves it exact to rounding.

    The iterations read ``e^{i k theta}``, k = 1..H, as powers of ``e^{i theta}`` (one complex
    product per harmonic, where cos and sin cost ten times as much; the powers' rounding,
    about k ulp, moves the root by about 1e-15); the final values use cos and sin.  With
    ``w_k = s_k + i c_k``: ``u' = sum_k k Re(w_k e^{i k theta})`` and
    ``u'' = -sum_k k^2 Im(w_k e^{i k theta})``.
    """
    H = (coef.shape[1] - 1) // 2
    k = np.arange(1, H + 1)
    c, sn = coef[:, 1::2], coef[:, 2::2]
    w = (sn + 1j * c) * k
    theta = np.array(theta, dtype=float)
    active = np.arange(len(theta))
    for _ in range(30):
        powers = np.cumprod(np.repeat(np.exp(1j * theta[active])[:, None], H, axis=1), axis=1)
        terms = w[active] * powers
        d1 = terms.real.sum(axis=1)                             # u'(theta)
        d2 = -(terms.imag * k).sum(axis=1)                      # u''(theta)
        step = np.where(d2 != 0, d1 / np.where(d2 != 0, d2, 1.0), 0.0)
        step = np.clip(step, -cell, cell)
        theta[active] -= step
        active = active[np.abs(step) >= 1e-13]
        if not active.size:
            break
    kt = np.outer(theta, k)
    return coef[:, 0] + np.sum(c * np.cos(kt) + sn * np.sin(kt), axis=1)


def orbit_samples(disc, solutions, n_t: int) -> np.ndarray:
    """The original states of each solution on a uniform grid of its period, as the
    ``samples(n_t)`` of ``disc.unpack`` gives them, shape (n_points, n, n_t').

    Harmonic balances: from the Fourier coefficients of all points in one inverse FFT
    (``n_t' = max(n_t, 2H + 1)``); other discretizations: point by point (``n_t' = n_t``).
    """
    n = len(disc.state_names)
    infos = [disc.unpack(Z) for Z in np.asarray(solutions, dtype=float).reshape(-1, disc.size)]
    if not infos:
        return np.zeros((0, n, int(n_t)))
    if disc.H is None:
        return np.array([np.asarray(info["samples"](int(n_t))) for info in infos])
    U = np.array([np.asarray(info["coefficients"])[:n] for info in infos])
    if disc.H == 0:
        return np.repeat(U[:, :, :1], int(n_t), axis=2)
    return coefficients_to_samples(U, max(int(n_t), 2 * disc.H + 1))


def validity_measures(validity, variables, u) -> dict:
    """Each validity condition's measure at every point, from samples ``u`` (P, N, M) of all N
    variables over one period: ``{variable: (relative, worst)}``, arrays of shape (P,).

    ``worst = min_t(s u(t))`` with ``s = +1`` for ``positive`` and ``s`` the sign of the largest
    sample for ``nonzero`` (a sign change between two samples is a crossing of zero),
    ``relative = worst / max_t |u(t)|``; both ``-inf`` where a sample is not finite (a negative
    root argument).  The condition holds iff ``relative > 0`` (DESIGN §6; the engine's
    ``check_points`` and the branch columns use this one measure).
    """
    u = np.asarray(u, dtype=float)
    out = {}
    for var, cond, _ in validity:
        row = u[:, list(variables).index(var), :]
        finite = np.isfinite(row).all(axis=1)
        row = np.where(finite[:, None], row, 0.0)
        size = np.abs(row)
        scale = size.max(axis=1)
        if cond == "positive":
            s = np.ones((len(row), 1))
        else:
            s = np.sign(row[np.arange(len(row)), size.argmax(axis=1)])[:, None]
            s[s == 0] = 1.0
        worst = np.min(s * row, axis=1)
        relative = worst / np.where(scale > 0, scale, 1.0)
        worst[~finite] = relative[~finite] = -np.inf
        out[var] = (relative, worst)
    return out


def aux_samples(model, x, param, omega) -> np.ndarray:
    """All N variables (P, N, n_t) from samples ``x`` (P, n, n_t) of the states of each point
    over one period, by ``model.aux`` (principal roots; NaN for a negative root argument) at
    the sample times as ``Discretization.samples`` gives them.  One call per point: ``aux``
    takes one parameter vector, and ``lam`` differs from point to point."""
    x = np.asarray(x, dtype=float)
    n_t = x.shape[2]
    out = np.empty((len(x), model.N, n_t))
    grid = np.arange(n_t) / n_t
    with np.errstate(invalid="ignore", divide="ignore"):
        for i, (xi, lam, om) in enumerate(zip(x, param, omega)):
            t = (2 * np.pi / om) * grid if np.isfinite(om) else np.linspace(0.0, 1.0, n_t)
            out[i] = model.aux(xi, t, lam)
    return out


def variable_samples(disc, solutions):
    """Samples (P, N, M) of all N variables of the solutions (P, size) over one period, and
    whether they are a truncated Fourier series (then small dips of a validity measure are
    tolerated, ``engine/_validity.py``).  Harmonic balances: all points in one inverse FFT on
    ``max(8H + 8, VALIDITY_SAMPLES)`` samples (the states alone of an AFT: on
    ``VALIDITY_SAMPLES``, the auxiliaries by :func:`aux_samples`); collocation: the nodal
    values; shooting: ``Discretization.samples``."""
    model = disc.model
    infos = [disc.unpack(Z) for Z in solutions]
    U = infos[0].get("variables")
    if U is not None and np.shape(U)[0] == model.N:            # collocation: nodal values
        return np.array([info["variables"] for info in infos], dtype=float), False
    C = infos[0].get("coefficients")
    H = disc.H or 0
    if C is not None and np.shape(C)[0] == model.N:            # harmonic balance of all N
        C = np.array([info["coefficients"] for info in infos], dtype=float)
        return (coefficients_to_samples(C, max(8 * H + 8, VALIDITY_SAMPLES)) if H else C[:, :, :1]), H > 0
    # states only (AFT, shooting): the auxiliaries from the states, principal roots; a
    # negative sqrt argument gives NaN, a violation
    param, omega = [info["lam"] for info in infos], [info["omega"] for info in infos]
    if C is not None and 0 < 2 * H < VALIDITY_SAMPLES and np.shape(C)[0] == model.n:   # AFT: one FFT
        C = np.array([info["coefficients"] for info in infos], dtype=float)
        x = coefficients_to_samples(C, VALIDITY_SAMPLES)
        return aux_samples(model, x, param, omega), False
    n_t = VALIDITY_SAMPLES if H or np.isfinite(omega[0]) else 1      # (more where 2H + 1 exceeds it)
    u = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for Z, lam in zip(solutions, param):
            t, x = disc.samples(Z, n_t)
            u.append(model.aux(x, t, lam))
    return np.array(u), False


def validity_columns(disc, solutions) -> dict:
    """The ``validity/<variable>`` columns of the solutions (P, size): each condition's
    ``relative`` measure (:func:`validity_measures`) on the samples of
    :func:`variable_samples`, the grid of the engine's own check."""
    model = disc.model
    if not model.validity or not len(solutions):
        return {}
    u, _ = variable_samples(disc, np.asarray(solutions, dtype=float).reshape(-1, disc.size))
    return {var: rel for var, (rel, _) in validity_measures(model.validity, model.variables, u).items()}


def contact_dissipation(disc, solutions) -> dict:
    """Energy dissipated per period by each friction contact, ``{contact: (P,)}``.

    ``E_c = -int_0^T sum_j F_c,j v_j dt``: minus the work of the contact's forces ``F_c,j`` on
    the degrees of freedom over one period (positive for a dissipating contact, negative where
    the contact feeds the orbit, as a moving belt does; for a contact against the ground or
    between two points of the structure, ``-int F_c v_rel dt``).  The forces are the generated
    ``contact_force`` (``Model.contact_force``, contract item 16: the contact's part of each
    equation, whatever its law: recast, sampled, or inlined by the recast as a law linear in
    the relative velocity), paired with the velocities they act on:

    * a model of the states: the velocity ``v_j`` of each kinematic pair ``x_i' = v_j`` and the
      force in its equation ``mass v_j' = rhs`` (a model written as accelerations, without
      masses, gives the energy per unit mass);
    * a structure (``Model.structure``, DESIGN §6): the force on each loaded point (the port
      model's force slots) and the point's velocity ``B^T x`` (the reduced system's states,
      kinematic rows: ``phi_P . q'`` of mass-normalized modes, the physical velocity), from
      the whole reduced orbit (``full_coefficients`` of the condensed harmonic balance, or the
      states of the uncondensed one).

    The integral is the trapezoidal rule on ``max(8 H + 8, 256)`` samples of the periodic
    orbit: the velocities hold harmonics up to ``H`` only, so it is exact up to the aliasing of
    the forces' harmonics above ``n - H >= 7 H + 8``, far below the truncation of the orbit
    itself for analytic laws (the error of the orbit's own harmonics at ``H``).

    Returns ``{}`` where this is not defined: no periodic harmonic balance, no contact, no
    kinematic pair, a module without ``contact_force``; a contact whose equations are not
    linear in its coefficient is left out.
    """
    model = disc.model
    H = disc.H or 0
    if not H or model is None or not model.contacts:
        return {}
    sol = np.asarray(solutions, dtype=float).reshape(-1, disc.size)
    if not len(sol):
        return {}
    st = model.structure
    if st is None:
        pairs = model.kinematic
        if not pairs or tuple(disc.state_names) != tuple(model.states):
            return {}
        vel = np.array([j for _, j in pairs])
        recover = None
    else:
        vel = np.array([j for _, j in st.kinematic()], dtype=int)
        if not vel.size:
            return {}
        B = np.zeros_like(np.asarray(st.B, dtype=float))
        B[vel] = np.asarray(st.B, dtype=float)[vel]                  # forces on the velocity rows
        recover = None if tuple(disc.state_names) == tuple(model.states) else disc.full_coefficients
    n_s = max(8 * H + 8, VALIDITY_SAMPLES)
    infos = [disc.unpack(Z) for Z in sol]
    if st is None:
        C = [info["coefficients"] if recover is None else recover(Z) for info, Z in zip(infos, sol)]
    else:
        # a structure: only the port's states and the loaded points' velocities, all linear in
        # the states, so only those rows (the 256-mode string: 2 rows of 512 states).  Its
        # branch without stability: 1.36 -> 0.44 s of CPU and max RSS 535 -> 377 MB when the
        # samples of 3 rows replaced those of all the states; 0.55-0.59 -> 0.37-0.38 s and
        # 207 -> 168 MB once the states' coefficients were not formed at all either
        # (full_coefficients(Z, rows))
        n_lin, n_z = st.n_lin, st.n_z
        rows = np.zeros((st.n_in + n_z + B.shape[1], n_lin + n_z))
        rows[:st.n_in, :n_lin] = np.asarray(st.C, dtype=float)
        rows[st.n_in:st.n_in + n_z, n_lin:] = np.eye(n_z)
        rows[st.n_in + n_z:, :n_lin] = B.T
        C = [rows @ info["coefficients"] if recover is None else recover(Z, rows=rows)
             for info, Z in zip(infos, sol)]
    if any(c is None for c in C):                       # no way to the model's states (contract item 23)
        return {}
    C = np.moveaxis(np.array(C, dtype=float), 0, 1)                                     # (n, P, 2H+1)
    omega = np.array([info["omega"] for info in infos], dtype=float)
    params = np.array([model.param_vector(info.get("model_lam", info["lam"])) for info in infos])
    t = (2 * np.pi / omega)[:, None] * (np.arange(n_s) / n_s)                           # (P, n_s)
    # every point at once: the samples of all orbits in one inverse FFT, the forces in one call
    if st is None:
        x = coefficients_to_samples(C, n_s)                                            # (n, P, n_s)
        F = _at_every_point(model.contact_force, x, t, params)                       # (n_c, n, P, n_s)
        if F is None:
            return {}
        power = np.sum(F[:, vel] * x[vel][None], axis=1)                              # (n_c, P, n_s)
    else:
        if not hasattr(st.port, "contact_force"):
            return {}
        # the port model's states [w, z, 0] and the loaded points' velocities (rows above)
        n_wz = st.n_in + st.n_z
        port = np.concatenate([C[:n_wz], np.zeros((st.n_F,) + C.shape[1:])])   # (n_port, P, 2H+1)
        vc = C[n_wz:]                                                           # (n_F, P, 2H+1)
        xs = coefficients_to_samples(np.concatenate([port, vc]), n_s)
        F = _at_every_point(st.port.contact_force, xs[:len(port)], t, params)
        if F is None:
            return {}
        power = np.sum(F[:, st.rows_F] * xs[len(port):][None], axis=1)   # the loaded points' velocities
    energy = -(2 * np.pi / omega) * power.mean(axis=-1)                                # (n_c, P)
    out = dict(zip(model.contacts, energy))
    return {c: e for c, e in out.items() if np.all(np.isfinite(e))}


def _at_every_point(force, x, t, params):
    """``force(x, t, p)`` (contract item 16) of P points at once, shape (n_c, n, P, M), from
    their samples ``x`` (n, P, M), times ``t`` (P, M) and parameter vectors ``params`` (P, n_p);
    None where ``force`` gives None (a module without it).

    The contract gives ``p`` as one vector; generated modules compute the forces elementwise,
    so each parameter with a trailing axis of the points (``p`` of shape (n_p, P, 1)) gives
    every point in one call.  Whether the module does is checked at the first and the last
    point against its own call with that point's vector (two points whose continuation
    parameters differ); a module that does not (an error, another shape, other values) is
    called point by point, as the contract says."""
    P = x.shape[1]
    one = [force(x[:, i], t[i], params[i]) for i in sorted({0, P - 1})]
    if one[0] is None:
        return None
    one = [np.asarray(f, dtype=float) for f in one]
    if P > 1:
        try:
            every = np.asarray(force(x, t, params.T[:, :, None]), dtype=float)
        except (TypeError, ValueError, IndexError):
            every = None
        if (every is not None and every.shape == one[0].shape[:-1] + (P,) + one[0].shape[-1:]
                and all(np.allclose(every[..., i, :], f, rtol=1e-13, atol=0.0, equal_nan=True)
                        for i, f in zip(sorted({0, P - 1}), one))):
            return every
    return np.stack([one[0]] + [np.asarray(force(x[:, i], t[i], params[i]), dtype=float)
                                for i in range(1, P - 1)] + one[1:], axis=-2)
