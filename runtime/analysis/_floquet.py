"""Floquet multipliers of periodic orbits: variational equation and collocation monodromy (DESIGN §5.5)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, InputError
from ..model._interface import Model
from ..results._result import Result


@dataclass
class FloquetResult(Result):
    """Floquet multipliers of one periodic orbit.

    Attributes
    ----------
    multipliers : ndarray, shape (n,)
        Floquet multipliers, sorted by decreasing modulus.
    exponents : ndarray or None
        Floquet exponents ``s`` (Hill's method only; ``multipliers = exp(T s)``).
    trivial_multiplier_error : float
        ``min |multiplier - 1|`` for autonomous orbits, NaN for forced ones.
    stable : bool
        All non-trivial multipliers strictly inside the unit circle (within ``tol``).
    method : str
        "variational", "collocation" or "hill".
    success, status, message :
        The result convention (``status = "computed"``).
    """

    multipliers: np.ndarray
    trivial_multiplier_error: float
    stable: bool
    method: str
    exponents: np.ndarray | None = None
    monodromy: np.ndarray | None = None

    @property
    def floquet_multipliers(self) -> np.ndarray:
        return self.multipliers

    def nontrivial(self) -> np.ndarray:
        """Multipliers without the trivial one (the one closest to 1), autonomous orbits."""
        if not np.isfinite(self.trivial_multiplier_error):
            return self.multipliers.copy()
        k = int(np.argmin(np.abs(self.multipliers - 1)))
        return np.delete(self.multipliers, k)


def _result(mult, autonomous, method, tol, exponents=None, monodromy=None):
    order = np.argsort(-np.abs(mult), kind="stable")
    mult = np.asarray(mult)[order]
    if exponents is not None:
        exponents = np.asarray(exponents)[order]
    if autonomous:
        k = int(np.argmin(np.abs(mult - 1)))
        trivial = float(abs(mult[k] - 1))
        others = np.delete(mult, k)
    else:
        trivial = float("nan")
        others = mult
    stable = bool(np.all(np.abs(others) < 1 - tol)) if others.size else True
    return FloquetResult(multipliers=mult, trivial_multiplier_error=trivial, stable=stable, method=method,
                         exponents=exponents, monodromy=monodromy)


# ---------------------------------------------------------------------------------------
# 1. variational equation
# ---------------------------------------------------------------------------------------
def floquet_variational(model: Model, lam: float, x0, T: float, *, rtol: float = 1e-12, atol: float = 1e-14,
                        method: str = "LSODA", tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers by integrating the variational equation along a known orbit.

    Parameters
    ----------
    model : Model
    lam : float
    x0 : array_like, shape (n,)
        A point of the periodic orbit at ``t = 0``.
    T : float
        Period.
    rtol, atol, method :
        ``solve_ivp`` settings (see :func:`~frictionkit.runtime.drivers.find_periodic_orbit`).
    tol : float
        Margin for the ``stable`` flag: non-trivial multipliers must satisfy ``|mu| < 1 - tol``.

    Returns
    -------
    FloquetResult
    """
    from ..discretizations._shooting import _check_options, _Flow, _integrate

    _check_options(method, rtol, atol, 1, 1.0)
    x0 = np.asarray(x0, dtype=float).ravel()
    if x0.shape != (model.n,):
        raise InputError(f"x0 must have the {model.n} states {model.states}, got shape {x0.shape}")
    if not T > 0:
        raise InputError(f"T={T} must be positive")
    flow = _Flow(model, lam, variational=True, sensitivity=False)
    sol = _integrate(flow, x0, float(T), method=method, rtol=rtol, atol=atol)
    _, M, _ = flow.split(sol.y[:, -1])
    return _result(np.linalg.eigvals(M), not model.forced, "variational", tol, monodromy=M)


def floquet_from_orbit(orbit, *, tol: float = 1e-6) -> FloquetResult:
    """:class:`FloquetResult` of a shooting :class:`PeriodicOrbit` (its monodromy is already known)."""
    return _result(np.linalg.eigvals(orbit.monodromy), not orbit.model.forced, "variational", tol,
                   monodromy=orbit.monodromy)


# ---------------------------------------------------------------------------------------
# 2. collocation Jacobian, condensed
# ---------------------------------------------------------------------------------------
def floquet_collocation(disc, Z, *, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers from the collocation Jacobian by condensation.

    For sub-interval ``i`` the rows of the Jacobian at its ``p`` Gauss points (all N
    variables) involve the differential variables at the interval's ``p + 1`` nodes and the
    algebraic ones at its Gauss points.  Solving them for everything but the start node gives
    the end node as ``Phi_i`` times the start node; the product of the ``Phi_i`` is the
    monodromy of the discretised variational equation (period and ``lam`` fixed).  Its
    eigenvalues converge to the Floquet multipliers at the collocation order.

    Parameters
    ----------
    disc : CollocationDiscretization
    Z : ndarray
        Converged collocation unknowns.
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``multipliers`` of the differential variables (the n states for generated models).
        Models with point conditions: the discretization's own ``monodromy`` (their point
        rows make the interval-wise condensation singular).
    """
    if disc.has_point:
        M = disc.monodromy(Z)
        return _result(np.linalg.eigvals(M), disc.autonomous, "collocation", tol, monodromy=M)
    J = disc.jacobian(Z).tocoo()
    N, G, p, n_int = disc.N, disc.G, disc.degree, disc.n_intervals
    dif = np.flatnonzero(disc.differential)
    alg = np.flatnonzero(~disc.differential)
    nd, na = dif.size, alg.size
    dpos = np.full(N, -1)
    dpos[dif] = np.arange(nd)
    apos = np.full(N, -1)
    apos[alg] = np.arange(na)
    # local column layout of interval i: [inner nodes (nd*(p-1)), algebraic (na*p), end node (nd)]
    n_elim = nd * (p - 1) + na * p + nd
    keep = (J.row < N * G) & (J.col < N * G)                 # drop the phase row, omega, lam
    r, c, v = J.row[keep], J.col[keep], J.data[keep]
    interval = (r % G) // p
    local_row = (r // G) * p + (r % G) % p
    s_var, q = c // G, c % G
    is_dif = disc.differential[s_var]
    j = (q - interval * p) % G                               # local node of a differential column
    l = q - interval * p                                     # local Gauss point of an algebraic column
    A = np.zeros((n_int, N * p, n_elim))
    S = np.zeros((n_int, N * p, nd))
    start = is_dif & (j == 0)
    np.add.at(S, (interval[start], local_row[start], dpos[s_var[start]]), v[start])
    inner = is_dif & (j > 0) & (j < p)
    np.add.at(A, (interval[inner], local_row[inner], dpos[s_var[inner]] * (p - 1) + j[inner] - 1), v[inner])
    end = is_dif & (j == p)
    np.add.at(A, (interval[end], local_row[end], nd * (p - 1) + na * p + dpos[s_var[end]]), v[end])
    al = ~is_dif
    np.add.at(A, (interval[al], local_row[al], nd * (p - 1) + apos[s_var[al]] * p + l[al]), v[al])
    try:
        X = np.linalg.solve(A, -S)                          # (n_int, N*p, nd), batched
    except np.linalg.LinAlgError as exc:
        raise ConvergenceError("collocation condensation: a singular interval block") from exc
    M = np.eye(nd)
    for Phi in X[:, -nd:, :]:
        M = Phi @ M
    return _result(np.linalg.eigvals(M), disc.autonomous, "collocation", tol, monodromy=M)
