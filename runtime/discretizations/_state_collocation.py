"""Orthogonal collocation of periodic orbits of the original ODE on its n states alone
(DESIGN §5.0 "the recast applied pointwise", §5.2).

The mesh is that of :class:`~._collocation.CollocationDiscretization` (seed 003 §2.2): time
``tau = t / T`` in ``[0, 1)``, ``N_int`` equal sub-intervals of length ``h = 1 / N_int``, on each
one every state is the Lagrange polynomial of degree ``p`` through its values at ``p + 1``
equidistant nodes, nodes shared at interval ends and periodicity built in (``p N_int`` unknowns
per state).  The original first-order ODE ``x' = f(x, t; lam)`` is collocated at the ``p``
Gauss-Legendre points ``tau_g`` of every sub-interval::

    R_g = (omega / 2 pi) dx/dtau(tau_g) - f(x(tau_g), tau_g T; lam) = 0

with ``f``, ``df/dx`` and ``df/dlam`` of the generated module at the Gauss points: no
auxiliary variable is an unknown (the quadratic collocation carries the recast's auxiliaries,
six variables for the two-state belt; here two).  This is Gauss collocation of the ODE, i.e.
the Gauss Runge-Kutta method: ``omega`` and the states at the mesh points converge at order
``2p``, the states between them at order ``p + 1`` (de Boor & Swartz 1973; measured in
``tests/discretizations/test_state_collocation.py``).

Unknowns (state-major, the layout of the quadratic collocation)::

    Z[r*G + i*p + j]  state r at node j = 0..p-1 of interval i       (G = p N_int)
    Z[n*G]            omega (autonomous models only)
    Z[-1]             lam

Autonomous models close the system with the phase condition ``dx_k/dtau(0) = 0`` (state
``k = phase_state`` has an extremum at ``tau = 0``, the quadratic collocation's default and the
shooting module's condition); it is linear, so the ANM needs nothing more for it.  Forced
models take ``omega`` from the forcing-frequency parameter (fixed: a continued forcing
frequency moves the collocation times ``t_g = 2 pi tau_g / omega`` along the path, which
the pointwise Taylor kernels hold fixed; use the AFT harmonic balance for it).

ANM (DESIGN §5.0): along ``Z(a) = sum_q a^q Z_q`` the states at the Gauss points have the
coefficients ``E U_q`` (``E`` the interpolation to the Gauss points), and the generated Taylor
kernel (``Model.taylor``) gives the order-q coefficients of the auxiliaries and of ``f`` there.
The order-p coefficient of ``R`` is ``sum_{r=0..p} (omega_r / 2 pi) D U_{p-r} - F_p``; its part
linear in ``Z_p`` is ``J Z_p``, so :meth:`series_rhs` returns it with ``x_p = lam_p = 0``:
``sum_{r=1..p-1} (omega_r / 2 pi) D U_{p-r} - F_p|_{x_p = lam_p = 0}``, the AFT's recurrence
with the Gauss points in place of the FFT samples.  Exact (no aliasing): the collocation
residual is pointwise, and for the same reason its rounding level is that of ``f`` at each
point (no FFT spreads ``eps max |f|`` over small entries), so ``residual_noise`` keeps the
default zero (belt W1 after Newton: residual norms 1e-12 to 8e-11 with ``omega ~ 1.2e3``).

Building and reading solutions (``from_orbit``, ``states_at``, ``ptp``, ``unpack``) are those
of the quadratic collocation (``_collocation_solutions.py``, every unknown a state here);
:meth:`from_states` also takes samples of a harmonic-balance orbit.  Branches of this
discretization save and load (``discretization = "collocation-states"``, sizes
``n_intervals``, ``degree``, ``phase_state``) and restart (``Branch.restart``, ``frictionkit
continue --restart``), in this discretization or converted to another; it is what the method
name ``"collocation"`` means for models with Taylor kernels (``drivers/_methods.py``).

Stability (``floquet_route = "monodromy"``): :meth:`monodromy` is the Gauss collocation of the
variational equation ``(omega / 2 pi) dy/dtau = df/dx(x(tau)) y`` on the same mesh, i.e. the
product of the ``N_int`` step propagators of the Gauss Runge-Kutta method of order ``2p``
(each one the condensation of the linearised collocation equations of one sub-interval).
"""
from __future__ import annotations

import math

import numpy as np
import scipy

from ..errors import InputError
from ..model._interface import Model
from ._base import Discretization
from ._collocation import CollocationDiscretization, _lagrange_tables, _mesh_matrices
from ._collocation_solutions import CollocationSolutions
from ._hbm import coefficients_at, coefficients_to_samples, samples_to_coefficients
from ._pointwise import PointwiseSeries

__all__ = ["StateCollocationDiscretization"]


class StateCollocationDiscretization(CollocationSolutions, Discretization):
    """Gauss collocation of the original ODE on its n states, ``Z = [U, omega, lam]``
    (module docstring).

    Parameters
    ----------
    model : Model
        Any model with ``rhs``/``jac`` (sampled ones too: they are continued with the
        pseudo-arclength Newton engine; the ANM needs the Taylor kernels of an analytic law).
    n_intervals : int
        Number of sub-intervals ``N_int`` (>= 2).
    degree : int
        Polynomial degree ``p`` (1..12, default 4).
    phase_state : int
        State ``k`` whose derivative vanishes at ``tau = 0`` (autonomous models).

    Raises
    ------
    InputError
        Bad ``n_intervals``, ``degree`` or ``phase_state``; a forced model whose forcing
        frequency is the continuation parameter.
    """

    kind = "collocation-states"
    floquet_route = "monodromy"
    phase = "extremum"          # the one phase condition (read by the shared _phase_row)
    #: Newton's rounding floor (``_newton.correct``, contract item 12): next to a Hopf point,
    #: at fixed lam, the relative updates of a converged collocation orbit wander between 1e-11
    #: and 1e-10 (measured on the tanh x exp belt, 100 x 4 intervals, one BLAS thread) and
    #: never reach ``xtol = 1e-11``; a tenth of the recast collocation's floor
    noise_floor = 1e-9


    def __init__(self, model: Model, n_intervals: int = 50, degree: int = 4, *, phase_state: int = 0,
                 mesh=None):
        if not isinstance(model, Model):
            raise InputError("StateCollocationDiscretization needs a frictionkit Model (Model(module, params))")
        if int(n_intervals) != n_intervals or n_intervals < 2:
            raise InputError(f"n_intervals={n_intervals} must be an integer >= 2")
        if int(degree) != degree or not 1 <= degree <= 12:
            raise InputError(f"degree={degree} must be an integer between 1 and 12 (default 4)")
        if int(phase_state) != phase_state or not 0 <= int(phase_state) < model.n:
            raise InputError(f"phase_state={phase_state} must index a state (0..{model.n - 1})")
        self.model = model
        self.forced = model.forced
        self.autonomous = not self.forced
        if self.forced and model.forcing_frequency == model.continuation:
            raise InputError(
                f"model {model.name!r}: the continuation parameter {model.continuation!r} is the forcing "
                "frequency, which moves the collocation times; continue it with the AFT harmonic balance "
                "(AFTDiscretization) or choose another continuation parameter")
        self.omega_is_lam = False
        self.n_intervals = int(n_intervals)
        self.mesh, self.uniform = _check_mesh(mesh, self.n_intervals)
        self.degree = p = int(degree)
        self.phase_state = int(phase_state)
        self.N = self.n = model.n
        self.G = G = p * self.n_intervals
        #: the interval lengths (N_int,); ``h`` the common one of a uniform mesh (the shared
        #: readers of the recast collocation's layout), None otherwise
        self.hs = np.full(self.n_intervals, 1.0 / self.n_intervals) if self.uniform else np.diff(self.mesh)
        self.h = 1.0 / self.n_intervals if self.uniform else None
        self.nodal = self.mass_rows = np.ones(self.n, dtype=bool)     # every unknown is a state
        self.m = self.n * G + (1 if self.autonomous else 0)
        self.omega_index = self.n * G if self.autonomous else None
        self.lam_index = self.m
        (self.nodes, self.gauss, self.weights, self.Lval, self.Lder, self.Lder0,
         self._Vinv) = _lagrange_tables(p)
        if self.uniform:
            self.E, self.Dm = _mesh_matrices(self.n_intervals, p, self.Lval, self.Lder)
            self.tau_gauss = ((np.arange(self.n_intervals)[:, None] + self.gauss[None, :]) * self.h).ravel()
            self.tau_nodes = np.arange(G) / G
        else:
            self.E, self.Dm = _graded_matrices(self.hs, p, self.Lval, self.Lder)
            self.tau_gauss = (self.mesh[:-1, None] + self.gauss[None, :] * self.hs[:, None]).ravel()
            self.tau_nodes = (self.mesh[:-1, None] + self.nodes[None, :-1] * self.hs[:, None]).ravel()
        self.n_residuals = 0
        self.n_jacobians = 0
        # series_rhs's buffers for one ANM step (the states at the Gauss points)
        self._series = PointwiseSeries(model, self._parts, lambda U: self._gauss_values(U)[0], self._times)
        self._reference = None

    @property
    def sizes(self) -> dict:
        """Contract: what rebuilds this discretization for a restart (its phase condition too;
        the interval boundaries ``mesh`` of a non-uniform mesh)."""
        out = dict(n_intervals=self.n_intervals, degree=self.degree, phase_state=self.phase_state)
        if not self.uniform:
            out["mesh"] = [float(v) for v in self.mesh]
        return out

    # -- the mesh -----------------------------------------------------------------------------
    def _phase_row(self):
        """Coefficients (length n G) of the phase condition ``dx_k/dtau(0) = 0`` (the first
        interval's derivative at its left end)."""
        if self.uniform:
            return CollocationDiscretization._phase_row(self)
        row = np.zeros(self.n * self.G)
        k, p = self.phase_state, self.degree
        np.add.at(row, k * self.G + (np.arange(p + 1) % self.G), self.Lder0 / self.hs[0])
        return row

    @property
    def amplitude_weights(self):
        """Weights of the signed amplitude ``w . Z`` (as the recast collocation's): the phase
        state at ``tau = 0`` minus its mean over the period (Gauss quadrature on each interval)."""
        if self.uniform:
            return CollocationDiscretization.amplitude_weights.fget(self)
        k, G = self.phase_state, self.G
        w = np.zeros(self.size)
        wq = (self.weights[None, :] * self.hs[:, None]).ravel()
        w[k * G:(k + 1) * G] = -(self.E.T @ wq)
        w[k * G] += 1.0
        return w

    def with_mesh(self, mesh):
        """The same discretization (model, degree, phase condition) on the interval boundaries
        ``mesh`` (any number of intervals)."""
        mesh = np.asarray(mesh, dtype=float)
        return StateCollocationDiscretization(self.model, mesh.size - 1, self.degree,
                                              phase_state=self.phase_state, mesh=mesh)

    def mesh_density(self, Z) -> np.ndarray:
        """De Boor's monitor of the orbit ``Z`` on each interval (N_int,): ``|u^(p+1)|^(1/(p+1))``.

        The ``p``-th derivative of interval ``i``'s polynomial is a constant ``c_i``; the
        ``(p+1)``-th derivative between intervals ``i`` and ``i+1`` is estimated by
        ``2 |c_(i+1) - c_i| / (h_i + h_(i+1))`` (periodically), and an interval takes the mean
        of its two sides (de Boor, "Good approximation by splines with variable knots II",
        Lecture Notes in Math. 363, 1974; the mesh adaptation of AUTO-07p, Doedel et al.,
        AUTO-07p manual, §"NTST / IAD").  The states are scaled by their peak-to-peak values
        (a small bristle state weighs as much as the displacement); the states' values combine
        in the 2-norm."""
        U, _, _ = self._parts(Z)
        n, p, K = self.n, self.degree, self.n_intervals
        idx = (np.arange(K)[:, None] * p + np.arange(p + 1)[None, :]) % self.G
        # leading monomial coefficient of each interval's polynomial in s = (tau - tau_i) / h_i
        lead = U[:, idx] @ self._Vinv[p]                                       # (n, K)
        c = math.factorial(p) * lead / self.hs[None, :] ** p                   # d^p u / dtau^p
        scale = np.ptp(U, axis=1)
        scale = np.maximum(scale, 1e-9 * max(float(scale.max()), 1e-300))[:, None]
        side = 2 * np.abs(np.roll(c, -1, axis=1) - c) / (self.hs + np.roll(self.hs, -1))[None, :] / scale
        d = np.sqrt(np.sum((0.5 * (side + np.roll(side, 1, axis=1))) ** 2, axis=0))
        return d ** (1.0 / (p + 1))

    def equidistributed_mesh(self, Z, n_intervals: int | None = None, floor: float = 0.05) -> np.ndarray:
        """Interval boundaries (``n_intervals + 1``, default this mesh's count) on which every
        interval carries an equal share of the integral of :meth:`mesh_density` (de Boor's
        equidistribution; the density piecewise constant on this mesh, its integral piecewise
        linear, inverted exactly).  ``floor``: the density is raised to at least that share of
        its mean, so that the smooth parts keep some intervals."""
        K = self.n_intervals if n_intervals is None else int(n_intervals)
        if K < 2:
            raise InputError(f"n_intervals={K}: a mesh needs at least 2 intervals")
        rho = self.mesh_density(Z)
        mean = float(np.sum(rho * self.hs))
        if not np.isfinite(mean) or mean <= 0:
            return np.arange(K + 1) / K
        rho = np.maximum(rho, floor * mean)
        cum = np.concatenate([[0.0], np.cumsum(rho * self.hs)])
        out = np.interp(np.arange(K + 1) / K * cum[-1], cum, self.mesh)
        out[0], out[-1] = 0.0, 1.0
        return out

    def to_mesh(self, Z, other) -> np.ndarray:
        """The orbit (or tangent) ``Z`` as the unknowns of the collocation ``other`` (same model
        and state count, any mesh): its piecewise polynomials evaluated at ``other``'s nodes
        (exact where ``other``'s mesh refines this one at the same degree), ``omega`` and
        ``lam`` carried over.  Linear in ``Z``."""
        U = self.states_at(Z, other.tau_nodes)
        tail = Z[self.n * self.G:]
        return np.concatenate([U.ravel(), tail])

    @property
    def supports_anm(self) -> bool:
        """The ANM needs the model's pointwise Taylor kernels (an analytic law, DESIGN §5.0)."""
        return (not self.model.sampled) and self.model.has_taylor

    # -- layout -----------------------------------------------------------------------------
    def _parts(self, Z):
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z must have length {self.size} (state nodal values, omega, lam); got {Z.shape}")
        U = Z[: self.n * self.G].reshape(self.n, self.G)
        omega = Z[self.omega_index] if self.autonomous else self.model.value(self.model.forcing_frequency)
        return U, omega, Z[-1]

    def pack(self, U, omega, lam) -> np.ndarray:
        """``Z`` from nodal values ``U`` (n, G), ``omega`` (ignored for forced models) and ``lam``."""
        U = np.asarray(U, dtype=float).reshape(self.n, self.G)
        tail = [omega, lam] if self.autonomous else [lam]
        return np.concatenate([U.ravel(), np.asarray(tail, dtype=float)])

    def _gauss_values(self, U):
        """Values (E U) and tau-derivatives (Dm U) of the states at the Gauss points, (n, G) each."""
        return (self.E @ U.T).T, (self.Dm @ U.T).T

    def _times(self, omega):
        # autonomous right-hand sides do not depend on t
        return self.tau_gauss * (2 * np.pi / omega) if self.forced else np.zeros(self.G)

    # -- contract ---------------------------------------------------------------------------
    def residual(self, Z):
        """R(Z), shape (m,) (contract item 3)."""
        self.n_residuals += 1
        U, omega, lam = self._parts(Z)
        x, dx = self._gauss_values(U)
        f = np.asarray(self.model.rhs(self._times(omega), x, lam), dtype=float).reshape(self.n, self.G)
        out = ((omega / (2 * np.pi)) * dx - f).ravel()
        if self.autonomous:
            out = np.append(out, self._phase_row() @ Z[: self.n * self.G])
        return out

    def jacobian(self, Z):
        """dR/dZ as a ``scipy.sparse.csr_matrix`` (m, m + 1) (contract item 4): ``df/dx`` of the
        module at the Gauss points, the ``lam`` column from ``Model.dfdlam`` (exact where the
        module has it)."""
        self.n_jacobians += 1
        U, omega, lam = self._parts(Z)
        n, G = self.n, self.G
        x, dx = self._gauss_values(U)
        t = self._times(omega)
        Js = np.asarray(self.model.jac(t, x, lam), dtype=float).reshape(n, n, G)
        # assembled as one COO matrix (block (r, s): -diag(J_rs) E, plus omega / 2 pi Dm on
        # the diagonal; then the omega and lam columns and the phase row)
        Er, Ec, Ev, Dr, Dc, Dv = self._patterns()
        r_, s_ = np.divmod(np.arange(n * n), n)
        rows = [(r_[:, None] * G + Er[None, :]).ravel(), (np.arange(n)[:, None] * G + Dr[None, :]).ravel()]
        cols = [(s_[:, None] * G + Ec[None, :]).ravel(), (np.arange(n)[:, None] * G + Dc[None, :]).ravel()]
        vals = [(-Js.reshape(n * n, G)[:, Er] * Ev[None, :]).ravel(),
                np.tile((omega / (2 * np.pi)) * Dv, n)]
        col = n * G
        if self.autonomous:
            rows.append(np.arange(n * G))
            cols.append(np.full(n * G, col))
            vals.append(dx.ravel() / (2 * np.pi))
            col += 1
        rows.append(np.arange(n * G))
        cols.append(np.full(n * G, col))
        vals.append(-np.asarray(self.model.dfdlam(t, x, lam), dtype=float).ravel())
        if self.autonomous:
            ph = self._phase_row()
            nz = np.flatnonzero(ph)
            rows.append(np.full(nz.size, n * G))
            cols.append(nz)
            vals.append(ph[nz])
        J = scipy.sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                    shape=(self.m, self.m + 1)).tocsr()
        J.eliminate_zeros()
        return J

    def _patterns(self):
        """Rows, columns and values of ``E`` and ``Dm`` (COO, kept)."""
        if getattr(self, "_pattern_cache", None) is None:
            E, D = self.E.tocoo(), self.Dm.tocoo()
            self._pattern_cache = (E.row, E.col, E.data, D.row, D.col, D.data)
        return self._pattern_cache

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side of the ANM from the pointwise Taylor kernels (module docstring).

        The auxiliaries' coefficients at the Gauss points are kept between the calls of one
        series (same ``origin``, one more term each call), so order p costs two kernel calls.
        """
        self._check_series(origin)
        F, om, U = self._series.f_order(terms, origin)
        p = len(terms) + 1
        out = -np.asarray(F, dtype=float).reshape(self.n, self.G)
        if self.autonomous:
            # sum_{r=1..p-1} omega_r D U_{p-r} / 2 pi = D (sum_r omega_r U_{p-r}) / 2 pi
            W = np.tensordot(om[1:p], U[p - 1:0:-1], axes=1)
            out += (self.Dm @ W.T).T / (2 * np.pi)
        out = out.ravel()
        return np.append(out, 0.0) if self.autonomous else out

    def _check_series(self, origin):
        """Why :meth:`series_rhs` cannot run, as an error (no Taylor kernel, no origin)."""
        if not self.supports_anm:
            what = ("a non-analytic friction law (no recast)" if self.model.sampled else
                    "no Taylor kernel (regenerate the model with `frictionkit codegen`)")
            raise NotImplementedError(f"the ANM cannot continue the state collocation of model "
                                      f"{self.model.name!r}: {what}; use method='newton' (pseudo-arclength)")
        if origin is None:
            raise InputError("series_rhs of the state collocation needs the series origin Z0 "
                             "(series_rhs(terms, origin=Z0)): the Taylor kernels expand about it")

    # -- stability (contract items 14-15) ---------------------------------------------------
    def monodromy(self, Z):
        """Monodromy matrix (n, n) of the variational equation along the collocated orbit.

        Gauss collocation of ``(omega / 2 pi) dy/dtau = df/dx(x(tau)) y`` on the mesh of the
        orbit: on each sub-interval the linearised collocation equations give the nodes
        ``1..p`` from node 0; the propagator to the end node is the step of the Gauss
        Runge-Kutta method (order ``2p``), and the monodromy is the product of the ``N_int``
        steps.  Costs one batched ``jac`` call and ``N_int`` solves of size ``n p``.
        """
        U, omega, lam = self._parts(Z)
        n, p, K = self.n, self.degree, self.n_intervals
        x, _ = self._gauss_values(U)
        Js = np.asarray(self.model.jac(self._times(omega), x, lam), dtype=float).reshape(n, n, K, p)
        Js = np.moveaxis(Js, 2, 0)                                            # (K, s, j, l)
        # B[i, s, l, j, k] = delta_sj (omega / 2 pi) Lder[l, k] / h_i - J_sj(g_il) Lval[l, k]
        B = -np.einsum("isjl,lk->isljk", Js, self.Lval)
        B += np.einsum("i,sj,lk->isljk", (omega / (2 * np.pi)) / self.hs, np.eye(n), self.Lder)
        B = B.reshape(K, n * p, n, p + 1)
        X = np.linalg.solve(B[..., 1:].reshape(K, n * p, n * p), -B[..., 0])   # (K, (j, k=1..p), n)
        P = X[:, np.arange(n) * p + p - 1, :]                                  # end nodes: (K, n, n)
        M = np.eye(n)
        for step in P:
            M = step @ M
        return M

    # -- building solutions -------------------------------------------------------------------
    def from_states(self, states, lam: float, omega: float | None = None) -> np.ndarray:
        """Unknown vector ``Z`` from an orbit given by samples or by a callable.

        Parameters
        ----------
        states : callable or array (n, M)
            ``states(t) -> (n, len(t))`` at physical times ``t`` in one period (e.g.
            :meth:`PeriodicOrbit.at`), or the states at ``M`` equispaced times of one period
            starting anywhere (e.g. ``aft.unpack(Z)["samples"](1024)`` of an AFT or HBM orbit).
        lam, omega : float
            Parameter value and angular frequency of the orbit (``omega`` ignored for forced
            models, whose frequency is the forcing one).

        Notes
        -----
        The samples are interpolated by their trigonometric polynomial (exact for a harmonic
        balance orbit with ``M > 2H``); for autonomous models the time origin is moved to the
        maximum of state ``phase_state``, so that the phase condition holds.
        """
        _, omega_used, _ = self._parts(np.zeros(self.size))
        if self.autonomous:
            if omega is None or not np.isfinite(omega) or omega <= 0:
                raise InputError(f"omega={omega}: an autonomous orbit needs its angular frequency (> 0)")
            omega_used = float(omega)
        if callable(states):
            M = max(4 * self.G, 512)
            x = np.asarray(states(np.arange(M) * (2 * np.pi / omega_used) / M), dtype=float)
        else:
            x = np.asarray(states, dtype=float)
        if x.ndim != 2 or x.shape[0] != self.n or x.shape[1] < 3:
            raise InputError(f"states must be (n={self.n}, M >= 3) samples of one period; got shape {x.shape}")
        H = (x.shape[1] - 1) // 2
        C = samples_to_coefficients(x, H)                      # (n, 2H+1), layout of _hbm.py
        shift = self._extremum_shift(C[self.phase_state]) if self.autonomous else 0.0
        U = coefficients_at(C, 2 * np.pi * (self.tau_nodes + shift))
        return self.pack(U, omega_used, lam)

    def _extremum_shift(self, c):
        """Fraction of the period at which the trigonometric polynomial ``c`` (layout of
        ``_hbm.py``) has its maximum: grid, then Newton on the derivative."""
        H = (c.size - 1) // 2
        k = np.arange(1, H + 1)
        grid = np.arange(16 * H + 64) / (16 * H + 64)
        vals = coefficients_to_samples(c[None, :], grid.size)[0]
        th = 2 * np.pi * grid[np.argmax(vals)]
        for _ in range(30):
            d1 = np.sum(k * (-c[1::2] * np.sin(k * th) + c[2::2] * np.cos(k * th)))
            d2 = np.sum(-k ** 2 * (c[1::2] * np.cos(k * th) + c[2::2] * np.sin(k * th)))
            if d2 == 0:
                break
            step = d1 / d2
            th -= step
            if abs(step) < 1e-15:
                break
        return th / (2 * np.pi)

    def on_model(self, model):
        """The same mesh of another model (contract item 17)."""
        return StateCollocationDiscretization(model, self.n_intervals, self.degree, phase_state=self.phase_state,
                                              mesh=None if self.uniform else self.mesh)


def _check_mesh(mesh, n_intervals):
    """``(boundaries, uniform)`` of the mesh option (class docstring): None is the uniform mesh
    of ``n_intervals``; otherwise a strictly increasing array from 0 to 1 of ``n_intervals + 1``
    boundaries."""
    if mesh is None:
        return np.arange(n_intervals + 1) / n_intervals, True
    try:
        m = np.asarray(mesh, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"mesh={mesh!r}: the interval boundaries must be an array of numbers") from None
    if m.ndim != 1 or m.size != n_intervals + 1:
        raise InputError(f"mesh: {n_intervals} intervals need {n_intervals + 1} boundaries (an array from 0 to 1); "
                         f"got shape {m.shape}")
    if not np.all(np.isfinite(m)) or m[0] != 0.0 or m[-1] != 1.0 or not np.all(np.diff(m) > 0):
        raise InputError("mesh: the interval boundaries must increase strictly from 0 to 1 (the normalised period)")
    return m.copy(), False


def _graded_matrices(hs, p, Lval, Lder):
    """Interpolation ``E`` and derivative ``Dm = d/dtau`` (both (G, G) CSR) of a mesh of interval
    lengths ``hs`` (:func:`~._collocation._mesh_matrices` with ``h`` per interval)."""
    K = hs.size
    G = p * K
    i, l, j = np.meshgrid(np.arange(K), np.arange(p), np.arange(p + 1), indexing="ij")
    rows, cols = (i * p + l).ravel(), ((i * p + j) % G).ravel()
    ev = np.broadcast_to(Lval[None], (K, p, p + 1)).ravel()
    dv = (Lder[None] / hs[:, None, None]).ravel()
    return (scipy.sparse.csr_matrix((ev, (rows, cols)), shape=(G, G)),
            scipy.sparse.csr_matrix((dv, (rows, cols)), shape=(G, G)))
