"""Building and reading collocated orbits: from states or a shooting orbit, states at any
``tau``, exact extrema, the readable form (contract item 7).

Part of :class:`~._collocation.CollocationDiscretization`; a mixin reading its layout
(``N``, ``G``, ``degree``, ``n_intervals``, ``h``, ``_parts``; a non-uniform mesh: ``uniform``
False, boundaries ``mesh`` and lengths ``hs``).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ._hbm import coefficients_at, samples_to_coefficients

__all__ = ["CollocationSolutions"]


def _monomial_to_bernstein(p):
    """Matrix ``B`` (p+1, p+1): the Bernstein coefficients of degree ``p`` on [0, 1] of the
    polynomial with monomial coefficients ``a`` are ``B @ a``
    (``b_k = sum_{j <= k} C(k, j) / C(p, j) a_j``, Farouki & Rajan, CAGD 5, 1988)."""
    from math import comb
    B = np.zeros((p + 1, p + 1))
    for k in range(p + 1):
        for j in range(k + 1):
            B[k, j] = comb(k, j) / comb(p, j)
    return B


class CollocationSolutions:
    """Building and reading solutions of the collocation discretization (module docstring)."""

    # -- building and reading solutions --------------------------------------------------
    def from_states(self, states, lam: float, omega: float) -> np.ndarray:
        """Unknown vector ``Z`` from a callable giving the states at times ``t`` (s), or from
        the states at equispaced times of one period.

        Parameters
        ----------
        states : callable or array (n, M)
            ``states(t) -> (n, M)`` for an array of physical times ``t`` in one period
            (e.g. :meth:`frictionkit.runtime._shooting.PeriodicOrbit.at`), or the states at
            ``M >= 3`` equispaced times from ``t = 0`` (e.g. ``unpack(Z)["samples"](2H + 1)``
            of a harmonic balance orbit), interpolated by their trigonometric polynomial
            (exact for such an orbit).  The time origin stays (Newton then meets the phase
            condition).
        lam, omega : float
            Parameter value and angular frequency of the orbit (``omega`` ignored for
            forced models, whose frequency is the forcing one).
        """
        U, omega_used, _ = self._parts(np.zeros(self.size))
        if self.autonomous:
            omega_used = float(omega)
        elif self.omega_is_lam:
            omega_used = float(lam) / self.nu
        if not callable(states):
            x = np.asarray(states, dtype=float)
            if x.ndim != 2 or x.shape[0] != self.model.n or x.shape[1] < 3:
                raise InputError(f"states must be (n={self.model.n}, M >= 3) samples of one period; "
                                 f"got shape {x.shape}")
            C = samples_to_coefficients(x, (x.shape[1] - 1) // 2)

            def states(t, C=C, w=omega_used):
                return coefficients_at(C, w * np.asarray(t, dtype=float))
        T = 2 * np.pi / omega_used
        d = self.nodal
        t_nodes, t_gauss = self.tau_nodes * T, self.tau_gauss * T
        u_nodes = np.asarray(self.model.aux(states(t_nodes), t_nodes, lam))
        u_gauss = np.asarray(self.model.aux(states(t_gauss), t_gauss, lam))
        U = np.where(d[:, None], u_nodes, u_gauss)
        Z = U.ravel()
        if self.autonomous:
            Z = np.append(Z, omega_used)
        return np.append(Z, lam)

    def from_orbit(self, orbit, *, accurate: bool = False) -> np.ndarray:
        """Unknown vector ``Z`` from a shooting :class:`PeriodicOrbit` (auxiliaries by ``model.aux``)."""
        return self.from_states(lambda t: orbit.at(t, accurate=accurate), orbit.lam, orbit.omega)

    def states_at(self, Z, tau) -> np.ndarray:
        """States (the n first variables, nodal) at normalised times ``tau``, shape (n, M)."""
        U, _, _ = self._parts(Z)
        tau = np.mod(np.asarray(tau, dtype=float).ravel(), 1.0)
        if getattr(self, "uniform", True):
            i = np.minimum((tau / self.h).astype(int), self.n_intervals - 1)
            s = tau / self.h - i
        else:                      # a non-uniform mesh (boundaries ``mesh``, lengths ``hs``)
            i = np.clip(np.searchsorted(self.mesh, tau, side="right") - 1, 0, self.n_intervals - 1)
            s = (tau - self.mesh[i]) / self.hs[i]
        L = np.vander(s, self.degree + 1, increasing=True) @ self._Vinv      # (M, p+1)
        idx = (i[:, None] * self.degree + np.arange(self.degree + 1)[None, :]) % self.G
        n = self.model.n
        return np.einsum("mj,rmj->rm", L, U[:n][:, idx])

    def ptp(self, Z) -> np.ndarray:
        """Peak-to-peak of each state (:meth:`extrema`)."""
        lo, hi = self.extrema(Z)
        return hi - lo

    def extrema(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """``(minimum, maximum)`` of each state over the period: extrema of the piecewise
        polynomials located exactly (real roots in (0, 1) of each interval's derivative, from
        the eigenvalues of the stacked companion matrices; intervals whose derivative loses its
        degree, ``np.roots``), not the largest of samples (contract item 27)."""
        U, _, _ = self._parts(Z)
        n, p = self.model.n, self.degree
        idx = (np.arange(self.n_intervals)[:, None] * p + np.arange(p + 1)[None, :]) % self.G
        to_bernstein = _monomial_to_bernstein(p)
        mins, maxs = np.empty(n), np.empty(n)
        for r in range(n):
            vals = U[r][idx]                                   # (N_int, p+1) nodal values
            coef = vals @ self._Vinv.T                          # monomial coefficients in s
            lo, hi = vals.min(), vals.max()
            # only an interval whose polynomial may pass the nodal extremes can move them: its
            # Bernstein coefficients bound it on [0, 1] (convex hull property), so the others
            # are skipped (the same result; the roots of the many small companion matrices
            # cost most of the continuation of a fine mesh otherwise)
            bern = coef @ to_bernstein.T
            cand = np.flatnonzero((bern.max(axis=1) > hi) | (bern.min(axis=1) < lo))
            if cand.size:
                coef = coef[cand]
                for i, s_ in self._derivative_roots(coef[:, 1:] * np.arange(1, p + 1)):
                    v = np.polynomial.polynomial.polyval(s_, coef[i].T, tensor=False)
                    if v.size:
                        lo, hi = min(lo, v.min()), max(hi, v.max())
            mins[r], maxs[r] = lo, hi
        return mins, maxs

    @staticmethod
    def _derivative_roots(d):
        """Real roots in (0, 1) of the polynomials ``sum_j d[k, j] s^j``: pairs (interval
        indices, roots) of equal length."""
        K, m = d.shape
        deg = m - 1
        if deg < 1:
            return []
        lead = d[:, -1]
        ok = np.abs(lead) > 1e-12 * np.maximum(np.abs(d).max(axis=1), 1e-300)
        out = []
        if np.any(ok):
            C = np.zeros((int(ok.sum()), deg, deg))
            C[:, np.arange(1, deg), np.arange(deg - 1)] = 1.0
            C[:, :, -1] = -d[ok, :-1] / lead[ok, None]
            w = np.linalg.eigvals(C)                                  # (K_ok, deg)
            real = np.abs(w.imag) <= 1e-9 * (1.0 + np.abs(w.real))
            inside = real & (w.real > 0) & (w.real < 1)
            rows = np.flatnonzero(ok)[:, None].repeat(deg, axis=1)
            out.append((rows[inside], w.real[inside]))
        for k in np.flatnonzero(~ok):                                  # lower degree: np.roots
            roots = np.roots(np.trim_zeros(d[k][::-1], "f")) if np.any(d[k]) else np.zeros(0)
            roots = roots[np.isreal(roots)].real
            roots = roots[(roots > 0) & (roots < 1)]
            out.append((np.full(roots.size, k), roots))
        return out

    def unpack(self, Z) -> dict:
        """``lam``, ``omega``, ``T``, ``ptp`` of the states and ``samples(n_t)`` (n, n_t)."""
        U, omega, lam = self._parts(Z)
        Zc = np.array(Z, dtype=float)
        return dict(lam=float(lam), omega=float(omega), T=2 * np.pi / omega, ptp=self.ptp(Zc),
                    samples=lambda n_t: self.states_at(Zc, np.arange(int(n_t)) / int(n_t)),
                    variables=U.copy())
