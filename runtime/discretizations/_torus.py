"""Quasi-periodic solutions: the pointwise AFT harmonic balance on a 2-torus (DESIGN §5.9).

A quasi-periodic solution ``x(t) = X(w1 t, w2 t)`` of ``x' = f(x, t; p)`` with two
incommensurate frequencies is a function ``X(theta1, theta2)`` on the 2-torus that solves the
invariance equation (Schilder, Osinga & Vahl, "Continuation of quasi-periodic invariant tori",
SIAM J. Appl. Dyn. Syst. 4, 2005, 459-488, eq. 2.2; the two-frequency harmonic balance of
Kim & Noah, "Quasi-periodic response and stability analysis for a non-linear Jeffcott
rotor", J. Sound Vib. 190, 1996, 239-253, and of Guillot, Vergez & Cochelin, "Continuation of
quasi-periodic solutions with two-frequency harmonic balance method", J. Sound Vib. 394,
2017, 434-450)::

    (w1 d/dtheta1 + w2 d/dtheta2) X = f(X, theta1 / w1; p)

with ``t = theta1 / w1`` for a forced model whose forcing has the frequency ``w1``.  ``X`` is
truncated to the harmonics ``k = (k1, k2)`` of a set ``K`` (box ``|k1| <= H1, |k2| <= H2`` or
diamond ``|k1|/H1 + |k2|/H2 <= 1``), in the real layout of the periodic AFT per state: the
mean, then ``(c_k, s_k)`` of ``cos(k . theta)``, ``sin(k . theta)`` for the half of ``K``
with ``k1 > 0`` or ``k1 = 0 < k2``.  The right-hand side is evaluated pointwise on an
``N1 x N2`` grid of the two angles and ``numpy.fft.fft2`` gives its harmonics back (AFT;
DESIGN §5.0: only the n states are unknowns, no auxiliary is truncated).  The Jacobian is the
exact derivative of this discrete map: for states i, j its block is the 2-D
Toeplitz-plus-Hankel matrix of the discrete Fourier coefficients ``a_{k-l}``, ``a_{k+l}`` of
``df_i/dx_j`` on the grid (exact when ``N_i > 4 H_i``: the coefficients up to ``2 H_i``
unaliased).

Unknowns ``Z = [U, w2, lam]`` for a forced torus (``w1`` is the forcing frequency, from the
parameter or from ``lam`` when that is continued) with one phase condition, or
``Z = [U, w1, w2, lam]`` for a self-excited (autonomous) torus with two: both are linear,
the sine coefficient of one chosen harmonic of the phase state is zero (one harmonic with
``k2 != 0`` fixes the phase of ``theta2``, one with ``k2 = 0, k1 > 0`` that of ``theta1``; a
shift ``theta -> theta + phi`` turns the pair ``(c_k, s_k)`` by ``k . phi``).

The ANM (DESIGN §5.0) continues tori as it does periodic orbits of the AFT: along the path
``Z(a) = sum_q a^q Z_q`` the generated Taylor kernels of the recast (``Model.taylor``) give the
coefficients of ``f`` at the grid points (``_pointwise.PointwiseSeries``, the grid's times held
fixed), ``fft2`` their harmonics, and the frequencies add ``sum_r (w1_r D1 + w2_r D2) U_{p-r}``
(:meth:`TorusAFT.series_rhs`); the phase conditions are linear.

Error estimates (:class:`TorusErrors`) follow ``_error.py``'s for periodic orbits (the
deferred-correction estimate of Ascher, Mattheij & Russell, *Numerical Solution of Boundary
Value Problems for ODEs*, SIAM 1995, §5.6, with the finer discretization in the frequency
domain): the torus padded into a larger box ``(H1 + ceil(H1/2), H2 + ceil(H2/2))`` on that
box's default grid, and one Newton step of the larger balance at fixed parameter from the
residual there: its harmonics outside the box (truncation) and the change of the retained
ones between the two grids (aliasing).  The step's change of the states (relative, as
``_error.relative_change``) and of ``w2 / w1`` are the estimates.  The Lyapunov exponents of a
torus are in ``drivers/_torus.py``.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..model._interface import Model
from ._base import Discretization
from ._error import relative_change
from ._pointwise import PointwiseSeries, check_anm

__all__ = ["TorusAFT", "TorusErrors", "harmonic_set"]

_FD_STEP5 = np.finfo(float).eps ** (1 / 5)


def harmonic_set(H1: int, H2: int, truncation: str = "box"):
    """The half set ``K+`` of harmonics ``(k1, k2)``: ``(0, 0)`` first, then every ``k`` of the
    truncation set with ``k1 > 0`` or ``k1 = 0 < k2`` (the other half are their negatives),
    ordered by ``|k1| + |k2|``, then ``k2``, then ``k1``.  Returns an (nk, 2) int array."""
    H1, H2 = int(H1), int(H2)
    if truncation not in ("box", "diamond"):
        raise InputError(f"truncation = {truncation!r}: choose 'box' (|k1| <= H1, |k2| <= H2) or 'diamond' "
                         "(|k1|/H1 + |k2|/H2 <= 1)")
    if H1 < 1 or H2 < 1:
        raise InputError(f"harmonics = ({H1}, {H2}): a torus needs at least one harmonic of each angle (H1, H2 >= 1)")
    out = [(0, 0)]
    for k1 in range(0, H1 + 1):
        for k2 in range(-H2, H2 + 1):
            if k1 == 0 and k2 <= 0:
                continue
            if truncation == "diamond" and abs(k1) / H1 + abs(k2) / H2 > 1 + 1e-12:
                continue
            out.append((k1, k2))
    head, rest = out[:1], sorted(out[1:], key=lambda k: (abs(k[0]) + abs(k[1]), k[1], k[0]))
    return np.array(head + rest, dtype=int)


def _fast(n):
    """The smallest 2^a 3^b 5^c >= n (fast FFT lengths)."""
    n = int(n)
    best = 1 << max(n - 1, 1).bit_length()
    p5 = 1
    while p5 < 2 * n:
        p3 = p5
        while p3 < 2 * n:
            p2 = p3
            while p2 < n:
                p2 *= 2
            best = min(best, p2)
            p3 *= 3
        p5 *= 5
    return best


def default_grid(H: int) -> int:
    """Grid points of one angle for ``H`` harmonics of it: ``4H + 8`` (at least 16) rounded up to
    a fast FFT length: the Jacobian needs the harmonics up to ``2H`` unaliased (``N > 4H``),
    the margin keeps the aliasing of ``f``'s harmonics (above ``N - H``) below the truncation
    for analytic right-hand sides (exponential decay)."""
    return _fast(max(4 * int(H) + 8, 16))


class TorusAFT(Discretization):
    """AFT harmonic balance of a quasi-periodic solution on a 2-torus (module docstring).

    Parameters
    ----------
    model : Model
        Any model (only ``rhs`` and ``jac`` of the original ODE are used).  Forced: the torus
        has ``w1`` = the forcing frequency and one unknown frequency ``w2``; autonomous: two
        unknown frequencies.
    harmonics : (int, int)
        ``(H1, H2)``: the largest ``|k1|`` and ``|k2|`` of the truncation set.
    truncation : {"box", "diamond"}
    grid : (int, int), optional
        Grid points ``(N1, N2)`` of the two angles, each ``> 4 H_i``; default
        :func:`default_grid`.
    phase_variable : str or int, optional
        The state whose harmonics the phase conditions fix (default the first).
    phase_harmonics : sequence of (k1, k2), optional
        The harmonics whose sine coefficient the phase conditions set to zero: one with
        ``k2 != 0`` (the ``theta2`` phase), and for an autonomous torus first one with
        ``k2 = 0`` (the ``theta1`` phase); default ``(0, 1)`` and ``(1, 0)`` of the phase
        variable.  Choose harmonics (and their states, :meth:`set_phase_harmonics`) that are not
        small on the torus (:func:`choose_phase_harmonics` does).

    Notes
    -----
    Implements the contract of ``_base.py`` (kind ``"torus-aft"``); no quadratic part, the
    ANM's right-hand side from the pointwise Taylor kernels where the model has them
    (:attr:`supports_anm`, :meth:`series_rhs`), no Floquet route (``floquet_route`` None: the
    stability of tori is their Lyapunov exponents, ``drivers/_torus.torus_lyapunov``).
    """

    method = "torus-aft"
    kind = "torus-aft"

    def __init__(self, model: Model, harmonics, truncation: str = "box", grid=None, phase_variable=None,
                 phase_harmonics=None):
        if not isinstance(model, Model):
            raise InputError("TorusAFT needs a frictionkit Model (Model(module, params))")
        try:
            H1, H2 = (int(h) for h in harmonics)
        except (TypeError, ValueError):
            raise InputError(f"harmonics = {harmonics!r}: give two integers (H1, H2), the harmonics of the two "
                             "angles") from None
        self.model = model
        self.n = model.n
        self.forced = model.forced
        self.H1, self.H2, self.truncation = H1, H2, truncation
        self.K = harmonic_set(H1, H2, truncation)
        self.nk = len(self.K)
        self.nb = 2 * self.nk - 1                  # real coefficients per state
        if grid is None:
            grid = (default_grid(H1), default_grid(H2))
        try:
            self.N1, self.N2 = (int(g) for g in grid)
        except (TypeError, ValueError):
            raise InputError(f"grid = {grid!r}: give two integers (N1, N2), the grid points of the two angles") from None
        if self.N1 <= 4 * H1 or self.N2 <= 4 * H2:
            raise InputError(f"grid = ({self.N1}, {self.N2}) must exceed 4 H = ({4 * H1}, {4 * H2}): the AFT "
                             "Jacobian needs the harmonics up to 2H of df/dx unaliased; raise the grid (default "
                             f"({default_grid(H1)}, {default_grid(H2)}))")
        self.M = self.N1 * self.N2
        states = list(model.states)
        if phase_variable is None:
            self.phase_state = 0
        elif isinstance(phase_variable, str):
            if phase_variable not in states:
                raise InputError(f"phase variable {phase_variable!r} is not a state of model {model.name!r}; its "
                                 f"states are {', '.join(states)}")
            self.phase_state = states.index(phase_variable)
        else:
            self.phase_state = int(phase_variable)
        self.omega_is_lam = bool(self.forced and model.continuation == model.forcing_frequency)
        self.autonomous = not self.forced
        self.n_coef = self.n * self.nb
        self.n_phase = 2 if self.autonomous else 1
        self.m = self.n_coef + self.n_phase
        # unknown positions
        self.w1_index = self.n_coef if self.autonomous else None
        self.w2_index = self.n_coef + (1 if self.autonomous else 0)
        self.omega_index = self.w1_index
        self.lam_index = self.size - 1
        self.set_phase_harmonics(phase_harmonics)
        # index tables of the Toeplitz (k - l) and Hankel (k + l) coefficients on the grid
        k1, k2 = self.K[:, 0], self.K[:, 1]
        self._dm = ((k1[:, None] - k1[None, :]) % self.N1, (k2[:, None] - k2[None, :]) % self.N2)
        self._dp = ((k1[:, None] + k1[None, :]) % self.N1, (k2[:, None] + k2[None, :]) % self.N2)
        self._kidx = (k1 % self.N1, k2 % self.N2)
        self._th1 = 2 * np.pi * np.arange(self.N1) / self.N1
        self._th2 = 2 * np.pi * np.arange(self.N2) / self.N2
        self.n_residuals = self.n_jacobians = 0
        self._cache = None
        self._series = PointwiseSeries(model, self._series_split, self._grid_states, self._kernel_times)

    # -- layout --------------------------------------------------------------------------
    def set_phase_harmonics(self, phase_harmonics=None, states=None):
        """Choose the harmonics of the phase conditions (class docstring) and the state of each
        (default the phase variable's for both)."""
        if phase_harmonics is None:
            phase_harmonics = [(1, 0), (0, 1)] if self.autonomous else [(0, 1)]
        phase_harmonics = [tuple(int(v) for v in k) for k in phase_harmonics]
        if len(phase_harmonics) != self.n_phase:
            raise InputError(f"a {'self-excited' if self.autonomous else 'forced'} torus takes {self.n_phase} "
                             f"phase harmonic(s), got {len(phase_harmonics)}")
        states = [self.phase_state] * self.n_phase if states is None else [int(i) for i in states]
        if len(states) != self.n_phase or not all(0 <= i < self.n for i in states):
            raise InputError(f"phase states {states}: give {self.n_phase} state indices in 0..{self.n - 1}")
        rows = []
        for k, i in zip(phase_harmonics, states):
            j = self.harmonic_index(k)
            if j is None or j == 0:
                raise InputError(f"phase harmonic {k} is not a nonzero harmonic (k1 > 0, or k1 = 0 < k2) of the "
                                 f"truncation set ({self.truncation}, H = ({self.H1}, {self.H2}))")
            rows.append(i * self.nb + 2 * j)        # its sine coefficient
        if self.autonomous and (phase_harmonics[0][1] != 0 or phase_harmonics[1][1] == 0):
            raise InputError("a self-excited torus needs a first phase harmonic with k2 = 0 (theta1) and a second "
                             "with k2 != 0 (theta2)")
        if self.forced and phase_harmonics[0][1] == 0:
            raise InputError("the phase harmonic of a forced torus needs k2 != 0 (it fixes the phase of theta2)")
        self.phase_harmonics = phase_harmonics
        self.phase_states = states
        self.phase_rows = np.array(rows, dtype=int)

    def harmonic_index(self, k):
        """Position of ``k = (k1, k2)`` in ``K+`` (None if absent)."""
        hit = np.flatnonzero((self.K[:, 0] == k[0]) & (self.K[:, 1] == k[1]))
        return int(hit[0]) if hit.size else None

    @property
    def sizes(self) -> dict:
        return dict(H1=self.H1, H2=self.H2, N1=self.N1, N2=self.N2, truncation=self.truncation)

    def split(self, Z):
        """``(U (n, nb), w1, w2, lam)``."""
        Z = np.asarray(Z, dtype=float)
        U = Z[:self.n_coef].reshape(self.n, self.nb)
        lam = float(Z[-1])
        w2 = float(Z[self.w2_index])
        if self.autonomous:
            w1 = float(Z[self.w1_index])
        elif self.omega_is_lam:
            w1 = lam
        else:
            w1 = float(self.model.value(self.model.forcing_frequency))
        return U, w1, w2, lam

    def pack(self, U, w1, w2, lam):
        parts = [np.asarray(U, dtype=float).reshape(-1)]
        parts.append([w1, w2] if self.autonomous else [w2])
        parts.append([lam])
        return np.concatenate(parts)

    # -- transforms ----------------------------------------------------------------------
    def to_complex(self, U):
        """Complex coefficients ``x_k`` (n, nk) of ``X = sum_k x_k e^{i k.theta}`` over ``K+ u -K+``
        (``x_{-k}`` their conjugates): ``x_0 = c_0``, ``x_k = (c_k - i s_k) / 2``."""
        U = np.asarray(U, dtype=float)
        xc = np.empty(U.shape[:-1] + (self.nk,), dtype=complex)
        xc[..., 0] = U[..., 0]
        xc[..., 1:] = 0.5 * (U[..., 1::2] - 1j * U[..., 2::2])
        return xc

    def from_complex(self, xc):
        U = np.empty(xc.shape[:-1] + (self.nb,))
        U[..., 0] = xc[..., 0].real
        U[..., 1::2] = 2 * xc[..., 1:].real
        U[..., 2::2] = -2 * xc[..., 1:].imag
        return U

    def to_grid(self, U):
        """The states on the grid, (n, N1, N2)."""
        xc = self.to_complex(U)
        G = np.zeros((self.n, self.N1, self.N2), dtype=complex)
        i1, i2 = self._kidx
        G[:, i1, i2] = xc
        G[:, (-self.K[1:, 0]) % self.N1, (-self.K[1:, 1]) % self.N2] = xc[:, 1:].conj()
        return np.fft.ifft2(G, axes=(-2, -1)).real * self.M

    def from_grid(self, g):
        """Coefficients (..., nb) of values ``g`` (..., N1, N2) on the grid (their harmonics in
        ``K+``; the others are dropped)."""
        F = np.fft.fft2(g, axes=(-2, -1)) / self.M
        return self.from_complex(F[..., self._kidx[0], self._kidx[1]])

    def evaluate(self, Z, theta1, theta2):
        """The states at angles ``theta1, theta2`` (broadcast arrays): (n, ...) ."""
        U = self.split(Z)[0]
        th1, th2 = np.broadcast_arrays(np.asarray(theta1, dtype=float), np.asarray(theta2, dtype=float))
        ph = self.K[1:, 0].reshape((-1,) + (1,) * th1.ndim) * th1 + self.K[1:, 1].reshape((-1,) + (1,) * th1.ndim) * th2
        c, s = np.cos(ph), np.sin(ph)
        return (U[:, 0].reshape((-1,) + (1,) * th1.ndim)
                + np.tensordot(U[:, 1::2], c, axes=(1, 0)) + np.tensordot(U[:, 2::2], s, axes=(1, 0)))

    def _rates(self, w1, w2):
        """``k . w`` for the harmonics of ``K+`` (nk,)."""
        return self.K[:, 0] * w1 + self.K[:, 1] * w2

    def _deriv(self, U, w1, w2):
        """``(w1 D1 + w2 D2) U``: ``c_k' = (k.w) s_k``, ``s_k' = -(k.w) c_k``."""
        r = self._rates(w1, w2)[1:]
        out = np.zeros_like(U)
        out[..., 1::2] = r * U[..., 2::2]
        out[..., 2::2] = -r * U[..., 1::2]
        return out

    def _times(self, w1):
        """Times of the grid points (forced: ``t = theta1 / w1``; autonomous: 0), (N1, N2) flattened."""
        if not self.forced:
            return np.zeros(self.M)
        return np.repeat(self._th1 / w1, self.N2)

    def _kernel_times(self, w1):
        """What the Taylor kernel takes as its ``t`` on the grid (as the periodic AFT's): the times
        ``theta1 / w1`` (held fixed along an ANM step), or, for a kernel in the forcing phase
        (``Model.taylor_in_phase``), the phases ``theta1``."""
        if self.forced and self.model.taylor_in_phase:
            return np.repeat(self._th1, self.N2)
        return self._times(w1)

    def _grid_states(self, U):
        return self.to_grid(U).reshape(self.n, self.M)

    def _series_split(self, Z):
        """``(U, w1, lam)`` of a point or of a series term (``PointwiseSeries``'s ``split``)."""
        U, w1, _, lam = self.split(Z)
        return U, w1, lam

    def _f(self, x, w1, lam):
        """``f`` on the grid (n, M) for states ``x`` (n, M)."""
        return np.asarray(self.model.rhs(self._times(w1), x, lam), dtype=float)

    # -- contract ------------------------------------------------------------------------
    def residual(self, Z):
        """``R = FFT(f(X)) - (w1 D1 + w2 D2) U`` and the phase conditions (contract item 3)."""
        self.n_residuals += 1
        U, w1, w2, lam = self.split(Z)
        x = self.to_grid(U).reshape(self.n, self.M)
        f = self._f(x, w1, lam).reshape(self.n, self.N1, self.N2)
        R = self.from_grid(f) - self._deriv(U, w1, w2)
        return np.concatenate([R.reshape(-1), np.asarray(Z)[self.phase_rows]])

    def residual_noise(self, Z):
        U, w1, w2, lam = self.split(Z)
        x = self.to_grid(U).reshape(self.n, self.M)
        f = self._f(x, w1, lam)
        out = np.repeat(8 * np.finfo(float).eps * np.abs(f).max(axis=1), self.nb)
        return np.concatenate([out, np.zeros(self.n_phase)])

    def jacobian(self, Z):
        """``dR/dZ`` (m, m+1), exact but for the ``lam`` column (a five-point difference of the
        grid's ``f``, as the periodic AFT's fallback) (contract item 4)."""
        self.n_jacobians += 1
        U, w1, w2, lam = self.split(Z)
        n, nb = self.n, self.nb
        x = self.to_grid(U).reshape(n, self.M)
        t = self._times(w1)
        Js = np.asarray(self.model.jac(t, x, lam), dtype=float).reshape(n, n, self.N1, self.N2)
        A = np.fft.fft2(Js, axes=(-2, -1)) / self.M
        Am = A[:, :, self._dm[0], self._dm[1]]            # a_{k-l} (n, n, nk, nk)
        Ap = A[:, :, self._dp[0], self._dp[1]]            # a_{k+l}
        S, D = Am + Ap, Am - Ap
        blk = np.empty((n, n, nb, nb))
        # rows c_k (and c_0), columns c_l (and c_0): Re(a_{k-l} + a_{k+l}); columns s_l: Im(a_{k-l} - a_{k+l})
        rc = np.r_[0, np.arange(1, nb, 2)]                # rows/cols of c_0, c_k
        rs = np.arange(2, nb, 2)                          # of s_k
        blk[:, :, rc[:, None], rc[None, :]] = S.real
        blk[:, :, rc[:, None], rs[None, :]] = D.imag[:, :, :, 1:]
        blk[:, :, rs[:, None], rc[None, :]] = -S.imag[:, :, 1:, :]
        blk[:, :, rs[:, None], rs[None, :]] = D.real[:, :, 1:, 1:]
        # row k = 0 is the mean, Re y_0, not 2 Re y_k: halve it
        blk[:, :, 0, :] *= 0.5
        J = np.zeros((self.m, self.size))
        J[:self.n_coef, :self.n_coef] = blk.transpose(0, 2, 1, 3).reshape(self.n_coef, self.n_coef)
        # -(w1 D1 + w2 D2)
        r = self._rates(w1, w2)[1:]
        for i in range(n):
            cr = i * nb + np.arange(1, nb, 2)
            J[cr, cr + 1] -= r
            J[cr + 1, cr] += r
        k1, k2 = self.K[1:, 0].astype(float), self.K[1:, 1].astype(float)
        if self.autonomous:
            J[:self.n_coef, self.w1_index] = -self._deriv_k(U, k1).reshape(-1)
        J[:self.n_coef, self.w2_index] = -self._deriv_k(U, k2).reshape(-1)
        J[:self.n_coef, self.lam_index] = self._dfdlam(x, lam).reshape(-1)
        if self.omega_is_lam:
            J[:self.n_coef, self.lam_index] -= self._deriv_k(U, k1).reshape(-1)
        J[self.n_coef + np.arange(self.n_phase), self.phase_rows] = 1.0
        return J

    @property
    def supports_anm(self) -> bool:
        """Whether the ANM can continue these tori (contract item 6): as for the periodic AFT,
        the pointwise Taylor kernels of the recast exist (analytic laws) and hold what the grid
        holds fixed: the times, or the forcing phases when the forcing frequency itself is
        continued (``Model.taylor_in_phase``)."""
        return (not self.model.sampled) and bool(self.model.has_taylor) and (
            not self.omega_is_lam or bool(self.model.taylor_in_phase))

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side of the ANM from the pointwise recast (DESIGN §5.0), as
        ``AFTDiscretization.series_rhs`` on the grid of the two angles.

        The order-p coefficient of ``R`` along ``Z(a) = sum_q a^q Z_q`` is
        ``FFT2(f_p) - sum_{r=0..p} (w1_r D1 + w2_r D2) U_{p-r}``; its part linear in ``Z_p``
        is ``J Z_p``, so the right-hand side is that coefficient with ``x_p = lam_p = 0``:
        ``FFT2(f_p|_{x_p=0}) - sum_{r=1..p-1} (w1_r D1 + w2_r D2) U_{p-r}`` (``w1_r = 0`` for a
        fixed forcing frequency, ``lam_r`` for a continued one); the phase rows are linear: 0.
        """
        check_anm(self, "tori", "the grid's times", origin)
        F, om, U = self._series.f_order(terms, origin)
        p = len(terms) + 1
        out = np.zeros(self.m)
        R = self.from_grid(F.reshape(self.n, self.N1, self.N2))
        if p > 1:
            # sum_{r=1..p-1} w_r D U_{p-r} = D W, W = sum_r w_r U_{p-r} (D1, D2 linear)
            Up = U[p - 1:0:-1].reshape(p - 1, -1)                  # U_{p-1} .. U_1
            w2 = np.array([t[self.w2_index] for t in terms])      # w2_1 .. w2_{p-1}
            R -= self._deriv_k((w2 @ Up).reshape(self.n, self.nb), self.K[1:, 1].astype(float))
            if self.autonomous or self.omega_is_lam:
                W1 = (om[1:p] @ Up).reshape(self.n, self.nb)
                R -= self._deriv_k(W1, self.K[1:, 0].astype(float))
        out[:self.n_coef] = R.reshape(-1)
        return out

    def _deriv_k(self, U, k):
        out = np.zeros_like(U)
        out[..., 1::2] = k * U[..., 2::2]
        out[..., 2::2] = -k * U[..., 1::2]
        return out

    def _dfdlam(self, x, lam):
        """Harmonics of ``df/dlam`` at the grid (a continued forcing frequency also moves the grid's
        times ``theta1 / lam``): five-point central difference, step ``eps^(1/5) max(|lam|, 1e-6)``."""
        h = _FD_STEP5 * max(abs(lam), 1e-6)
        out = 0.0
        for c, s in ((8.0, 1.0), (-8.0, -1.0), (-1.0, 2.0), (1.0, -2.0)):
            ls = lam + s * h
            w = ls if self.omega_is_lam else float(self.model.value(self.model.forcing_frequency)) if self.forced else 1.0
            f = self._f(x, w, ls).reshape(self.n, self.N1, self.N2)
            out = out + c * self.from_grid(f)
        return out / (12 * h)

    # -- results -------------------------------------------------------------------------
    def unpack(self, Z) -> dict:
        U, w1, w2, lam = self.split(Z)
        return dict(lam=lam, omega=w1, omega2=w2, rotation_number=w2 / w1, coefficients=U.copy(),
                    harmonics=self.K.copy(), path="torus-aft")

    def torus_size(self, Z):
        """Largest distance on the grid of the torus from its ``theta2``-average (the periodic
        part ``k2 = 0``): 0 on a periodic orbit."""
        U = self.split(Z)[0].copy()
        keep = np.r_[0, np.repeat(np.arange(1, self.nk), 2)]
        V = np.where((self.K[keep, 1] != 0)[None, :], U, 0.0)
        d = self.to_grid(V)
        return float(np.sqrt((d ** 2).sum(axis=0)).max())

    def amplitudes(self, Z):
        """Peak-to-peak of every state on the grid (n,)."""
        g = self.to_grid(self.split(Z)[0]).reshape(self.n, -1)
        return g.max(axis=1) - g.min(axis=1)

    def invariant_curve(self, Z, theta1=0.0, n_points=256):
        """The section ``theta1 = const`` of the torus: ``(theta2 (n_points,), x (n, n_points))``;
        for a forced torus at ``theta1 = 0`` it is the invariant curve of the stroboscopic map at
        the forcing period (the times ``2 pi j / w1``)."""
        th2 = 2 * np.pi * np.arange(int(n_points)) / int(n_points)
        return th2, self.evaluate(Z, np.full_like(th2, theta1), th2)

    def resize(self, Z, harmonics, grid=None):
        """The discretization with the box ``harmonics = (H1', H2')`` (same truncation kind,
        phase harmonics and states) and ``Z`` in it: coefficients matched by harmonic
        ``(k1, k2)``, those not in the new set dropped, the new ones zero."""
        new = TorusAFT(self.model, harmonics, self.truncation, grid, self.phase_state)
        new.set_phase_harmonics(self.phase_harmonics, self.phase_states)
        U, w1, w2, lam = self.split(Z)
        U2 = np.zeros((self.n, new.nb))
        U2[:, 0] = U[:, 0]
        for j, k in enumerate(self.K[1:], start=1):
            i = new.harmonic_index(k)
            if i is not None:
                U2[:, 2 * i - 1:2 * i + 1] = U[:, 2 * j - 1:2 * j + 1]
        return new, new.pack(U2, w1, w2, lam)

    def edge_share(self, Z):
        """Share of the harmonics at the edge of the box (``|k1| > 3 H1 / 4`` or ``|k2| > 3 H2 / 4``,
        the 2-D analogue of ``_error``'s ``err_decay``) in each state's norm, the largest: a
        cheap indicator of the retained spectrum's decay, no estimate where it does not decay."""
        U = self.split(Z)[0]
        edge = (np.abs(self.K[:, 0]) > 0.75 * self.H1) | (np.abs(self.K[:, 1]) > 0.75 * self.H2)
        cols = np.r_[False, np.repeat(edge[1:], 2)]
        norms = np.linalg.norm(U, axis=1)
        top = np.linalg.norm(U[:, cols], axis=1)
        return float(np.max(top / np.maximum(norms, 1e-9 * max(float(norms.max()), 1e-300))))

    def on_model(self, model):
        new = TorusAFT(model, (self.H1, self.H2), self.truncation, (self.N1, self.N2), self.phase_state)
        new.set_phase_harmonics(self.phase_harmonics, self.phase_states)
        return new

    def shift_phase(self, U, phi1, phi2):
        """Coefficients of ``X(theta + phi)``: ``x_k -> x_k e^{i k.phi}``."""
        xc = self.to_complex(U) * np.exp(1j * (self.K[:, 0] * phi1 + self.K[:, 1] * phi2))
        return self.from_complex(xc)

    def phase_fixed(self, U):
        """``U`` shifted in the angles so that the phase conditions hold (the chosen harmonics'
        sine coefficients zero, their cosines positive)."""
        def arg(c):
            return np.angle(self.to_complex(U[self.phase_states[c]])[self.harmonic_index(self.phase_harmonics[c])])
        if self.autonomous:
            (a1, _), (b1, b2) = self.phase_harmonics
            phi1 = -arg(0) / a1
            phi2 = (-arg(1) - b1 * phi1) / b2
        else:
            (b1, b2), = self.phase_harmonics
            phi1 = 0.0
            phi2 = -arg(0) / b2
        return self.shift_phase(U, phi1, phi2)


def choose_phase_harmonics(disc: TorusAFT, U):
    """``(harmonics, states)`` for the phase conditions: the largest harmonic of any state with
    ``k2 = 1`` (and for an autonomous torus first the largest with ``k2 = 0, k1 >= 1``) on ``U``."""
    mag = np.abs(disc.to_complex(U))                  # (n, nk)
    K = disc.K
    pick, states = [], []
    sels = ([np.flatnonzero((K[:, 1] == 0) & (K[:, 0] > 0))] if disc.autonomous else []) + [np.flatnonzero(K[:, 1] == 1)]
    for sel in sels:
        i, j = np.unravel_index(np.argmax(mag[:, sel]), (disc.n, sel.size))
        pick.append(tuple(int(v) for v in K[sel[j]]))
        states.append(int(i))
    return pick, states


class TorusErrors:
    """Truncation and aliasing estimates of tori of ``disc`` (module docstring), the larger
    discretization built once for a branch.

    Calling it on a torus ``Z`` returns a dict: ``err_trunc``, ``err_alias`` (the relative
    change of the states by the Newton step from the harmonics outside the box and from the
    finer grid), ``orbit_error`` (their sum), ``rotation_error``, ``omega1_error`` (0 for a
    forced torus), ``omega2_error``, ``size_error`` (the absolute change of ``w2/w1``, ``w1``,
    ``w2`` and :meth:`TorusAFT.torus_size` by the two steps, summed), ``err_decay``
    (:meth:`TorusAFT.edge_share`) and ``corrected`` (the torus after the full step, in
    :attr:`big`'s unknowns: a better torus to first order, used to propagate the error to
    quantities computed from the torus).

    The step is bordered by ``lam`` held (the error at this parameter value); at a fold of the
    tori in ``lam`` that system is singular and the estimate fails (NaN in the branch's
    columns).  Cost: one dense LU of the larger balance (about 2.2 times the unknowns of the
    box (8, 8): some 10 times the cost of one LU of the continuation).
    """

    def __init__(self, disc: TorusAFT, harmonics=None):
        self.disc = disc
        if harmonics is None:
            harmonics = (disc.H1 + -(-disc.H1 // 2), disc.H2 + -(-disc.H2 // 2))
        self.big, _ = disc.resize(np.zeros(disc.size), harmonics)
        big = self.big
        # rows of the coarse residual in the big one (state i, harmonic K[j] -> its place) + phase rows
        rows = []
        for i in range(disc.n):
            rows.append(i * big.nb)
            for k in disc.K[1:]:
                j = big.harmonic_index(k)
                rows.extend([i * big.nb + 2 * j - 1, i * big.nb + 2 * j])
        self.rows = np.array(rows + list(big.n_coef + np.arange(big.n_phase)), dtype=int)
        self.high = np.ones(big.m, dtype=bool)
        self.high[self.rows] = False

    def __call__(self, Z):
        disc, big = self.disc, self.big
        _, Zb = disc.resize(Z, (big.H1, big.H2), (big.N1, big.N2))
        R = big.residual(Zb)
        R[self.rows] -= disc.residual(Z)
        noise = big.residual_noise(Zb)
        noise[self.rows] += disc.residual_noise(Z)
        R[np.abs(R) <= noise] = 0.0
        rhs = np.zeros((big.size, 2))
        rhs[:big.m][self.high, 0] = -R[self.high]
        rhs[:big.m][~self.high, 1] = -R[~self.high]
        A = np.zeros((big.size, big.size))
        A[:big.m] = big.jacobian(Zb)
        A[big.m, -1] = 1.0                                  # lam held: the error at this parameter
        dZ = np.linalg.solve(A, rhs)
        U = big.split(Zb)[0]
        _, w1, w2, _ = big.split(Zb)
        errs, rots, d1, d2, sizes = [], [], [], [], []
        size = big.torus_size(Zb)            # on the big grid as the corrected ones (the max is sampled)
        for j in range(2):
            dU, dw1, dw2, _ = big.split(dZ[:, j])
            errs.append(relative_change(dU, U))
            dw1 = dw1 if big.autonomous else 0.0
            rots.append(abs(dw2 / w1 - w2 * dw1 / w1 ** 2))
            d1.append(abs(dw1))
            d2.append(abs(dw2))
            sizes.append(abs(big.torus_size(Zb + dZ[:, j]) - size))
        return dict(err_trunc=errs[0], err_alias=errs[1], orbit_error=errs[0] + errs[1],
                    rotation_error=rots[0] + rots[1], omega1_error=d1[0] + d1[1], omega2_error=d2[0] + d2[1],
                    size_error=sizes[0] + sizes[1], err_decay=disc.edge_share(Z), corrected=Zb + dZ.sum(axis=1))
