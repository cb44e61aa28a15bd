"""Nonlinear modes of damped structures: the extended periodic motion concept (issue 25).

Krack, "Nonlinear modal analysis of nonconservative systems: extension of the periodic motion
concept", Computers & Structures 154 (2015) 59-71 (EPMC).  The free, damped structure
``M x'' + C x' + K x + f_nl(x, x') = 0`` has no periodic motions; the EPMC adds the negative
mass-proportional damping term ``-xi M x'`` whose coefficient ``xi`` is an extra unknown that
makes the motion periodic:

    M x'' + (C - xi M) x' + K x + f_nl(x, x') = 0                                  (EPMC)

In the first-order form ``y' = f(y)`` of a model (positions ``x_i`` and their velocities
``v_j``, the kinematic pairs ``x_i' = v_j`` of ``Model.kinematic``) the term is ``+xi v_j`` in
the equation of every velocity, whatever ``M``: ``v' = M^-1 (...) + xi v``.  The periodic
motion is balanced harmonically by the AFT of the states (``discretizations/_aft.py``, the
residual ``FFT(f(y)) - omega D Y``) with two more unknowns, ``omega`` and ``xi``, and two more
equations (Krack 2015, section 3):

* normalization: the first harmonic of the positions has the mass-weighted size of the modal
  amplitude ``a``, ``c_1^T M c_1 + s_1^T M s_1 = a^2`` (``x ~ Re(a psi_1 e^{i omega t})``,
  ``psi_1^H M psi_1 = 1``: ``a`` is the amplitude of a mass-normalized mode);
* phase: the sin(omega t) coefficient of one position (the largest component of the linear
  mode the branch starts from) is zero.

``a`` is the continuation parameter (``lam``, last in ``Z = [Y, omega, xi, a]``).  Output per
point: ``a``, ``omega`` and the equivalent modal damping ratio

    D = xi / (2 omega)

(Krack 2015: a linear structure with modal damping ``C phi = 2 D omega M phi`` is periodic
exactly at ``xi = 2 D omega``, which ``tests/drivers/test_nonlinear_modes.py`` checks on a
linear structure against its eigenvalues).  The system is continued by the ANM wherever the
AFT of the states has it (the model's Taylor kernels, DESIGN §5.0): the EPMC adds to the AFT's
residual only terms polynomial in the unknowns (``xi v``, the quadratic normalization), so
its order-p right-hand side is the AFT's plus their Cauchy products
(:meth:`EPMCSystem.series_rhs`), and one LU serves a whole step; elsewhere (non-analytic laws)
by pseudo-arclength Newton.  Starting point:
the linear mode ``mode`` of the linearization at rest (``K phi = omega^2 M phi``, ``M`` given,
identity by default), at amplitude ``a0``, Newton-corrected.

Structures (``ModelSpec.structure``, ``model/_structure.py``): the generated module of the
reduced structure has the modal coordinates and their velocities as kinematic pairs, with unit
modal masses, so the default identity ``M`` makes ``a`` the modal amplitude of mass-normalized
modes; by default the system is the uncondensed AFT of that module (the ANM).  With
``discretization="aft-condensed"`` a structure given as modal data or matrices is condensed
onto its contacts (:class:`CondensedEPMCSystem`, DESIGN §6): in modal coordinates the ``xi``
term only changes each mode's damping, so the condensed harmonic balance at ``xi`` is that of
the same structure with the damping ratios ``zeta_j - xi / (2 w_j)``, and the unknowns are the
contacts' harmonics whatever the number of modes (pseudo-arclength Newton: no series of the
compliance in ``xi``).  It starts from the uncondensed first point.  On the damper written as
a structure (2 modes) it is the uncondensed mode to 1e-15 at the same samples.  On the
10-element beam of ``examples/fe_beam_damper.py`` (a tanh law with ``eps = 1e-3`` against
velocities near 1) the two differ by 3.8e-6, 8.0e-7 and 6.6e-8 in frequency at 128, 512 and
2048 samples (H = 10, a = 0.05): the AFT's aliasing of the nearly discontinuous law is not
invariant under time shifts, and the two fix the phase on different unknowns.  Not the
default: for small structures the uncondensed ANM is cheaper (the beam from a = 1e-3 to 0.1,
H = 10: 15 steps, 19 LU, 0.69 s against the condensed Newton's 134 steps, 519 LU, 1.44 s).

Physics: the EPMC is exact for a linear structure with mass-proportional modal damping and for
conservative structures; otherwise it is an approximation of both the free decay (whose
amplitude changes within a period) and the forced resonance (whose damping is not
mass-proportional and whose forcing is at one point).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.linalg

from ..discretizations._aft import AFTDiscretization
from ..discretizations._base import Discretization
from ..discretizations._condensed import CondensedAFTDiscretization
from ..model._structure import ModalSystem
from ..discretizations._hbm import coefficients_to_samples
from ..engine._newton import correct
from ..engine._options import ContinuationProblem
from ..engine._run import run
from ..errors import ConvergenceError, InputError
from ._forced import TOLERANCE, search_harmonics

__all__ = ["nonlinear_mode", "EPMCSystem", "linear_modes"]


def _pairs(model):
    """Positions and velocities ``(P, V)`` of the model's kinematic pairs, checked."""
    pairs = model.kinematic
    if not pairs:
        raise InputError(f"model {model.name!r} has no second-order states (x' = v declared with "
                         "m.second_order): a nonlinear mode needs positions and velocities of a structure")
    return np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])


def _mass(model, mass, n_pos):
    if mass is None:
        return np.eye(n_pos)
    M = np.atleast_2d(np.asarray(mass, dtype=float))
    if M.shape == (1, n_pos) and n_pos > 1:
        M = np.diag(M[0])
    if M.shape != (n_pos, n_pos) or not np.all(np.isfinite(M)):
        raise InputError(f"mass: a ({n_pos}, {n_pos}) matrix (or {n_pos} diagonal entries) for the positions "
                         f"{', '.join(model.states[i] for i, _ in model.kinematic)} of model {model.name!r}")
    if not np.allclose(M, M.T) or np.linalg.eigvalsh(0.5 * (M + M.T)).min() <= 0:
        raise InputError("mass: the mass matrix must be symmetric positive definite")
    return 0.5 * (M + M.T)


def linear_modes(model, mass=None, lam=None):
    """Undamped linear modes of the linearization at rest ``y = 0``.

    With ``A = df/dy(0)``, positions ``P`` and velocities ``V``: ``M^-1 K = -A[V, P]``,
    ``M^-1 C = -A[V, V]``; ``K phi = omega^2 M phi`` with ``phi^T M phi = 1``.

    Returns
    -------
    omega : ndarray (n_pos,)
        Angular frequencies, increasing.
    phi : ndarray (n_pos, n_pos)
        Mass-normalized mode shapes (columns) of the positions.
    modal_c : ndarray (n_pos,)
        ``phi^T C phi``: ``2 D omega`` of each mode (the viscous part, friction linearized at rest).
    """
    P, V = _pairs(model)
    M = _mass(model, mass, len(P))
    n = model.n
    A = np.asarray(model.jac(0.0, np.zeros(n), model.value(model.continuation) if lam is None else lam),
                   dtype=float)
    K = M @ -A[np.ix_(V, P)]
    C = M @ -A[np.ix_(V, V)]
    w2, phi = scipy.linalg.eigh(0.5 * (K + K.T), M)
    if w2.min() <= 0:
        raise InputError(f"model {model.name!r}: the linearization at rest has a non-positive stiffness "
                         f"eigenvalue ({w2.min():.3g}): no oscillating linear mode to start from")
    return np.sqrt(w2), phi, np.einsum("ij,ik,kj->j", phi, C, phi)


class EPMCSystem(Discretization):
    """The EPMC harmonic balance (module docstring) as a discretization, ``Z = [Y, omega, xi, a]``.

    Parameters
    ----------
    model : Model
        Autonomous, or forced with its forcing switched off and the forcing frequency as its
        continuation parameter (then the forcing's AFT is the autonomous one without phase
        condition).
    harmonics : int
    phase_position : int
        Index among the positions whose sin(omega t) coefficient is fixed to 0.
    mass : ndarray (n_pos, n_pos)
        Mass matrix of the normalization.
    n_t : int, optional
        AFT samples.
    """

    kind = "epmc"
    condensed = False

    def __init__(self, model, harmonics, phase_position=0, mass=None, n_t=None):
        self.model = model
        self.P, self.V = _pairs(model)
        self.M = _mass(model, mass, len(self.P))
        self.H = int(harmonics)
        if self.H < 1:
            raise InputError(f"harmonics = {harmonics}: a nonlinear mode needs at least 1 harmonic")
        self.aft = AFTDiscretization(model, self.H, n_t=n_t)
        if model.forced and not self.aft.omega_is_lam:
            raise InputError(f"model {model.name!r} is forced: load it with its forcing frequency "
                             f"{model.forcing_frequency!r} as continuation parameter (load_model(..., "
                             f"continuation={model.forcing_frequency!r})) and its forcing switched off")
        self.n_t = self.aft.n_t
        self.n, self.nh = model.n, 2 * self.H + 1
        self.n_coef = self.n * self.nh
        self.omega_index = self.n_coef
        self.xi_index = self.n_coef + 1
        self.m = self.n_coef + 2
        self.pp = int(phase_position)
        self.phase_index = self.P[self.pp] * self.nh + 2
        self.phase_state = model.states[self.P[self.pp]]
        self._lam = None if model.forced else model.value(model.continuation)
        self._v_rows = (self.V[:, None] * self.nh + np.arange(self.nh)[None, :]).ravel()
        self.n_residuals = self.n_jacobians = 0
        self._series_terms = None            # the ANM step's terms in the AFT's layout
        # the kinematic rows x_i' = v_j are the AFT's (the xi term is in the velocities' rows
        # only) and omega sits where the AFT's omega (or lam = omega) does: the engines
        # eliminate them exactly before the LU (contract item 18), as for the AFT
        self.elimination = self.aft.elimination

    @property
    def sizes(self):
        return {"phase_position": self.pp}

    def split(self, Z):
        """``(U (n, 2H+1), omega, xi, a)``."""
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z has shape {Z.shape}; this system needs ({self.size},)")
        return Z[:self.n_coef].reshape(self.n, self.nh), Z[self.omega_index], Z[self.xi_index], Z[-1]

    def pack(self, U, omega, xi, a):
        return np.concatenate([np.asarray(U, dtype=float).ravel(), [omega, xi, a]])

    def _aft_Z(self, U, omega):
        return self.aft.pack(U, omega, omega if self._lam is None else self._lam)

    def residual(self, Z):
        self.n_residuals += 1
        U, om, xi, a = self.split(Z)
        out = np.empty(self.m)
        out[:self.n_coef] = self.aft.residual(self._aft_Z(U, om))[:self.n_coef]
        out[self._v_rows] += xi * U[self.V].ravel()
        c, s = U[self.P, 1], U[self.P, 2]
        out[self.n_coef] = U[self.P[self.pp], 2]
        out[self.n_coef + 1] = c @ self.M @ c + s @ self.M @ s - a * a
        return out

    def residual_noise(self, Z):
        U, om, _, _ = self.split(Z)
        return np.concatenate([self.aft.residual_noise(self._aft_Z(U, om))[:self.n_coef], [0.0, 0.0]])

    def jacobian(self, Z):
        self.n_jacobians += 1
        U, om, xi, a = self.split(Z)
        Ja = self.aft.jacobian(self._aft_Z(U, om))
        J = np.zeros((self.m, self.size))
        nc = self.n_coef
        J[:nc, :nc] = Ja[:nc, :nc]
        # d/d omega: the AFT's omega column (autonomous) or its lam column (lam = omega, the
        # forcing switched off: df/dW = 0 at fixed phase, the column is -D U)
        J[:nc, self.omega_index] = Ja[:nc, self.aft.omega_index if self._lam is not None else self.aft.lam_index]
        J[self._v_rows, self._v_rows] += xi
        J[self._v_rows, self.xi_index] = U[self.V].ravel()
        J[nc, self.phase_index] = 1.0
        c, s = U[self.P, 1], U[self.P, 2]
        J[nc + 1, self.P * self.nh + 1] = 2 * self.M @ c
        J[nc + 1, self.P * self.nh + 2] = 2 * self.M @ s
        J[nc + 1, -1] = -2 * a
        return J

    # -- the ANM (contract item 6) ------------------------------------------------------------
    @property
    def supports_anm(self) -> bool:
        """Whether the ANM can continue the EPMC system: where it can continue the AFT of the
        states (the model's Taylor kernels; for a forced model loaded with its forcing
        frequency as parameter, kernels in the forcing phase), the other terms being
        polynomial in the unknowns."""
        return self.aft.supports_anm

    def _aft_term(self, Zr, r):
        """Term ``r`` of the path series (EPMC layout) in the AFT's layout: ``omega_r``, and the
        model's ``lam_r`` (``omega_r`` where ``lam`` is the forcing frequency, else ``lam`` is
        fixed: ``lam_0`` at the origin, 0 above)."""
        U, om, _, _ = self.split(Zr)
        if self._lam is None:
            return self.aft.pack(U, om, om)
        return self.aft.pack(U, om, self._lam if r == 0 else 0.0)

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side of the ANM for ``terms = [Z_1..Z_{p-1}]`` about ``origin``:
        the coefficient of ``a^p`` of the residual with ``Z_p = 0`` (contract item 6).

        Rows of the states: the AFT's (``_aft.AFTDiscretization.series_rhs``: the pointwise
        Taylor kernels and the ``omega D U`` products) plus the order-p part of ``xi v`` not
        linear in ``Z_p``, ``sum_{r=1..p-1} xi_r V_{p-r}``; the phase row is linear (0); the
        normalization ``c^T M c + s^T M s - a^2`` gives ``sum_{r=1..p-1} (c_r^T M c_{p-r} +
        s_r^T M s_{p-r} - a_r a_{p-r})``.
        """
        if not self.supports_anm:
            self.aft.series_rhs([], origin=None)          # raises: why the ANM cannot
        if origin is None:
            raise InputError("the EPMC's ANM right-hand side needs the series origin: "
                             "call series_rhs(terms, origin=Z0)")
        p = len(terms) + 1
        out = np.zeros(self.m)
        nc = self.n_coef
        # the terms of one step arrive one more per call: convert only the new ones
        key = np.ascontiguousarray(origin, dtype=float).tobytes()
        c = self._series_terms
        if c is None or c["key"] != key or len(c["aft"]) > len(terms) or (
                len(c["aft"]) and not np.array_equal(c["raw"][-1], terms[len(c["aft"]) - 1])):
            c = self._series_terms = dict(key=key, origin=self._aft_term(origin, 0), aft=[], parts=[], raw=[])
        for r in range(len(c["aft"]) + 1, p):
            c["aft"].append(self._aft_term(terms[r - 1], r))
            c["parts"].append(self.split(terms[r - 1]))
            c["raw"].append(np.array(terms[r - 1], dtype=float))
        out[:nc] = self.aft.series_rhs(c["aft"][:p - 1], origin=c["origin"])[:nc]
        parts = c["parts"]
        norm = 0.0
        for r in range(1, p):
            Ur, _, xir, ar = parts[r - 1]
            Uq, _, _, aq = parts[p - r - 1]
            out[self._v_rows] += xir * Uq[self.V].ravel()
            cr, sr, cq, sq = Ur[self.P, 1], Ur[self.P, 2], Uq[self.P, 1], Uq[self.P, 2]
            norm += cr @ self.M @ cq + sr @ self.M @ sq - ar * aq
        out[nc + 1] = norm
        return out

    def unpack(self, Z):
        return _unpacked(self, Z, "epmc")

    def resize(self, Z, harmonics, n_t=None):
        """The same system at another harmonic count, ``Z`` padded or truncated."""
        return _resized(EPMCSystem(self.model, harmonics, self.pp, self.M, n_t=n_t), self.split(Z))


class CondensedEPMCSystem(Discretization):
    """The EPMC of a structure given numerically, condensed onto its contacts (DESIGN §6):
    ``Z = [U, omega, xi, a]`` with ``U`` the harmonics of the port model's inputs and own
    states (``discretizations/_condensed.py``), whatever the number of modes.

    In modal coordinates (mass-normalized modes, ``M = I``) the EPMC term ``-xi q'`` changes
    every mode's damping ``2 zeta_j w_j`` to ``2 zeta_j w_j - xi``, so the residual at ``xi`` is
    the condensed harmonic balance of the same structure with those damping ratios
    (:class:`~frictionkit.runtime.discretizations.CondensedAFTDiscretization` on a copy of the
    model whose ``STRUCTURE`` is that :class:`ModalSystem`), plus

    * phase: the sin (displacement input) or cos (velocity input) coefficient of the first
      harmonic of the input the linear mode moves most is zero;
    * normalization: the modal coordinates' first harmonics ``Q_j = phi_F,j . F_1 / d_j``,
      ``d_j = w_j^2 - omega^2 + i omega (2 zeta_j w_j - xi)``, have ``sum_j |Q_j|^2 = a^2``
      (``F_1`` the first harmonic of the forces at the loaded points): the uncondensed
      :class:`EPMCSystem`'s normalization with ``M = I`` on the modal coordinates.

    The Jacobian is exact: the condensed one at ``xi`` for ``U`` and ``omega``; the ``xi``
    column ``-(dG/dxi) F_k``, ``d(1/d_jk)/dxi = i k omega / d_jk^2`` per mode; the
    normalization row from the sampled ``dF/dw``, ``dF/dz`` of the port module.  Continued by
    pseudo-arclength Newton (the compliance's series in ``xi`` are not written: no ANM).
    """

    kind = "epmc"
    condensed = True

    def __init__(self, model, harmonics, mode_shape_inputs, n_t=None):
        self.model = model
        self.st = st = model.structure
        self.H = int(harmonics)
        if self.H < 1:
            raise InputError(f"harmonics = {harmonics}: a nonlinear mode needs at least 1 harmonic")
        self._lam = None if model.forced else model.value(model.continuation)
        self.base = CondensedAFTDiscretization(model, self.H, n_t=n_t)
        self.n_t, self.nh, self.nv = self.base.n_t, self.base.nh, self.base.nv
        self.n_coef = self.nv * self.nh
        self.omega_index, self.xi_index = self.n_coef, self.n_coef + 1
        self.m = self.n_coef + 2
        p = int(np.argmax(np.abs(mode_shape_inputs)))
        self.pp = p
        self.phase_index = p * self.nh + (1 if st.velocity[p] else 2)
        self.phase_state = st.input_names[p]
        self.M = np.eye(st.m)
        self._theta = 2 * np.pi * np.arange(self.n_t) / self.n_t
        self._xi_disc = None
        self.n_residuals = self.n_jacobians = 0

    @property
    def sizes(self):
        return {"phase_position": self.pp}

    @property
    def state_names(self):
        return self.base.state_names

    def split(self, Z):
        """``(U (n_in + n_z, 2H+1), omega, xi, a)``."""
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z has shape {Z.shape}; this system needs ({self.size},)")
        return Z[:self.n_coef].reshape(self.nv, self.nh), Z[self.omega_index], Z[self.xi_index], Z[-1]

    def pack(self, U, omega, xi, a):
        return np.concatenate([np.asarray(U, dtype=float).ravel(), [omega, xi, a]])

    def _at_xi(self, xi):
        """The condensed harmonic balance of the structure with the modal damping ``c_j - xi``."""
        c = self._xi_disc
        if c is None or c[0] != xi:
            b = self.st.basis
            basis = dataclasses.replace(b, damping=b.damping - xi / (2 * b.frequencies))
            model = self.model.with_structure(ModalSystem(basis, self.st.layout, self.st.port))
            disc = CondensedAFTDiscretization(model, self.H, n_t=self.n_t)
            c = self._xi_disc = (xi, disc)
        return c[1]

    def _condensed_Z(self, disc, U, om):
        return disc.pack(U, om, om if self._lam is None else self._lam)

    def _forces(self, U, om, jac=False):
        """The port forces' complex first harmonic ``F_1`` (n_F,) and, with ``jac``, its
        derivative in ``U``, (n_F, nv, 2H+1) complex."""
        st = self.st
        x = np.zeros((st.n_port, self.n_t))
        x[:self.nv] = coefficients_to_samples(U, self.n_t)
        t = self._theta / om if self.base.forced else np.zeros(self.n_t)
        p = self.model.param_vector(om if self._lam is None else self._lam)
        e = np.exp(-1j * self._theta) * (2.0 / self.n_t)
        F1 = np.asarray(self.st.port.rhs(t, x, p), dtype=float)[st.rows_F] @ e
        if not jac:
            return F1, None
        Jp = np.asarray(self.st.port.jac(t, x, p), dtype=float)[st.rows_F][:, :self.nv]      # (n_F, nv, n_t)
        k = np.arange(1, self.H + 1)[:, None] * self._theta[None, :]
        basis = np.empty((self.nh, self.n_t))
        basis[0] = 1.0
        basis[1::2], basis[2::2] = np.cos(k), np.sin(k)
        return F1, np.einsum("fvt,t,mt->fvm", Jp, e, basis)

    def _modal(self, om, xi):
        """``phi_F^T`` (m, n_F) and ``d_j`` (m,) of the first harmonic."""
        b, st = self.st.basis, self.st
        c = 2 * b.damping * b.frequencies - xi
        return st.phi_F.T, b.frequencies ** 2 - om ** 2 + 1j * om * c

    def residual(self, Z):
        self.n_residuals += 1
        U, om, xi, a = self.split(Z)
        disc = self._at_xi(xi)
        out = np.empty(self.m)
        out[:self.n_coef] = disc.residual(self._condensed_Z(disc, U, om))[:self.n_coef]
        out[self.n_coef] = Z[self.phase_index]
        F1, _ = self._forces(U, om)
        phiT, d = self._modal(om, xi)
        Q = (phiT @ F1) / d
        out[self.n_coef + 1] = np.sum(np.abs(Q) ** 2) - a * a
        return out

    def residual_noise(self, Z):
        U, om, xi, _ = self.split(Z)
        disc = self._at_xi(xi)
        return np.concatenate([disc.residual_noise(self._condensed_Z(disc, U, om))[:self.n_coef], [0.0, 0.0]])

    def jacobian(self, Z):
        self.n_jacobians += 1
        U, om, xi, a = self.split(Z)
        disc = self._at_xi(xi)
        Zc = self._condensed_Z(disc, U, om)
        Jc = np.asarray(disc.jacobian(Zc), dtype=float)
        nc, nh, st = self.n_coef, self.nh, self.st
        J = np.zeros((self.m, self.size))
        J[:nc, :nc] = Jc[:nc, :nc]
        J[:nc, self.omega_index] = Jc[:nc, disc.omega_index if self._lam is not None else disc.lam_index]
        # the xi column of the inputs' rows: -(dG/dxi) F_k, dG/dxi = sum_j phi_in,j nu_i phi_F,j^T s / d_j^2
        b = st.basis
        k = np.arange(self.H + 1)
        s = 1j * k * om
        dk = b.frequencies[None, :] ** 2 + s[:, None] * (2 * b.damping * b.frequencies - xi)[None, :] + s[:, None] ** 2
        nu = np.where(st.velocity[None, :], s[:, None], 1.0)                              # (K, n_in)
        dG = np.einsum("ij,kj,fj,ki->kif", st.phi_in, s[:, None] / dk ** 2, st.phi_F, nu)    # (K, n_in, n_F)
        x = np.zeros((st.n_port, self.n_t))
        x[:self.nv] = coefficients_to_samples(U, self.n_t)
        t = self._theta / om if self.base.forced else np.zeros(self.n_t)
        p = self.model.param_vector(om if self._lam is None else self._lam)
        Fs = np.asarray(st.port.rhs(t, x, p), dtype=float)[st.rows_F]                    # (n_F, n_t)
        Fk = np.fft.rfft(Fs, axis=1)[:, :self.H + 1] * (2.0 / self.n_t)
        Fk[:, 0] *= 0.5                                                                    # X_k = c_k - i s_k
        dW = -np.einsum("kif,fk->ik", dG, Fk)                                              # (n_in, K)
        col = J[:st.n_in * nh, self.xi_index].reshape(st.n_in, nh)
        col[:, 0] = dW[:, 0].real
        col[:, 1::2] = dW[:, 1:].real
        col[:, 2::2] = -dW[:, 1:].imag
        J[nc, self.phase_index] = 1.0
        # normalization: sum_j |Q_j|^2 - a^2, Q_j = (phi_F^T F_1)_j / d_j
        F1, dF1 = self._forces(U, om, jac=True)
        phiT, d = self._modal(om, xi)
        Q = (phiT @ F1) / d
        dQ = np.einsum("jf,fvm->jvm", phiT, dF1) / d[:, None, None]
        J[nc + 1, :nc] = 2 * np.einsum("j,jvm->vm", Q.conj(), dQ).real.ravel()
        J[nc + 1, self.omega_index] = 2 * np.sum((Q.conj() * Q * -(-2 * om + 1j * (2 * b.damping * b.frequencies - xi))
                                                  / d).real)
        J[nc + 1, self.xi_index] = 2 * np.sum((Q.conj() * Q * (1j * om) / d).real)
        J[nc + 1, -1] = -2 * a
        return J

    def full_coefficients(self, Z, rows=None):
        """The whole reduced system's states on the orbit (the modal response at ``xi``), or
        ``rows`` of them (contract item 23)."""
        U, om, xi, _ = self.split(Z)
        disc = self._at_xi(xi)
        return disc.full_coefficients(self._condensed_Z(disc, U, om), rows=rows)

    def unpack(self, Z):
        return _unpacked(self, Z, "epmc-condensed")

    def resize(self, Z, harmonics, n_t=None):
        """The same system at another harmonic count, ``Z`` padded or truncated."""
        return _resized(CondensedEPMCSystem(self.model, harmonics, np.eye(self.st.n_in)[self.pp], n_t=n_t),
                        self.split(Z))


def _unpacked(system, Z, path):
    """``unpack`` of an EPMC system (plain or condensed: ``path``)."""
    U, om, xi, a = system.split(Z)

    def samples(n_t=256):
        return coefficients_to_samples(U, max(int(n_t), 2 * system.H + 1))

    # model_lam: the model's own continuation parameter on this orbit (its value, or the
    # forcing frequency = omega), for what evaluates the model (the contacts' dissipation)
    return dict(lam=float(a), omega=float(om), xi=float(xi), damping_ratio=float(xi / (2 * om)),
                model_lam=float(om if system._lam is None else system._lam),
                coefficients=U.copy(), harmonics=system.H, n_t=system.n_t, path=path, samples=samples)


def _resized(new, parts):
    """The unknowns ``parts = (U, omega, xi, a)`` of an EPMC system padded or truncated to the
    harmonic count of the system ``new``; returns ``(new, Z)``."""
    U, om, xi, a = parts
    U2 = np.zeros((U.shape[0], new.nh))
    k = min(U.shape[1], new.nh)
    U2[:, :k] = U[:, :k]
    return new, new.pack(U2, om, xi, a)


def _check_unforced(model, omega):
    """Refuse a model whose right-hand side depends on time (a forcing left on)."""
    rng = np.random.default_rng(0)
    x = 0.1 * rng.standard_normal(model.n)
    lam = omega if model.forced else model.value(model.continuation)
    f = [np.asarray(model.rhs(t, x, lam), dtype=float) for t in (0.0, 0.37 / omega, 1.91 / omega)]
    scale = max(float(np.max(np.abs(f[0]))), 1e-300)
    if max(float(np.max(np.abs(g - f[0]))) for g in f[1:]) > 1e-12 * scale:
        raise InputError(f"model {model.name!r} is forced and its forcing is not zero: a nonlinear mode is a "
                         "motion of the free structure; set the forcing amplitude to 0 (e.g. --set F0=0)")


def _condensable(model):
    """Whether the structure of ``model`` is modal data or matrices (a :class:`ModalSystem`, the
    same for all parameter values): the condensed EPMC applies."""
    st = model.structure
    return st is not None and getattr(st, "basis", None) is not None


def _start(model, mode, a0, harmonics, mass, n_t, discretization=None):
    """The EPMC system and its first point at amplitude ``a0``, from linear mode ``mode``."""
    if discretization not in (None, "aft", "aft-condensed"):
        raise InputError(f"discretization={discretization!r}: choose 'aft' (the states) or 'aft-condensed' "
                         "(a structure condensed onto its contacts)")
    if discretization == "aft-condensed" and not _condensable(model):
        raise InputError(f"discretization='aft-condensed': model {model.name!r} is not a structure given as "
                         "modal data or matrices (m.structure(...)); use discretization='aft'")
    if discretization == "aft-condensed" and mass is not None:
        raise InputError("mass: the condensed nonlinear mode normalizes on the mass-normalized modes; give no "
                         "mass, or discretization='aft'")
    condensed = discretization == "aft-condensed"
    if model.forced and model.forcing_frequency != model.continuation:
        raise InputError(f"model {model.name!r} is forced: load it with its forcing frequency "
                         f"{model.forcing_frequency!r} as continuation parameter (load_model(..., "
                         f"continuation={model.forcing_frequency!r})) and its forcing switched off")
    # a forced model's lam is its forcing frequency: any value will do for the unforced
    # structure's linearization at rest
    omegas, phi, modal_c = linear_modes(model, mass, lam=None if not model.forced else 1.0)
    if int(mode) != mode or not 1 <= mode <= len(omegas):
        raise InputError(f"mode = {mode}: the structure has the linear modes 1..{len(omegas)} "
                         f"(angular frequencies {', '.join(f'{w:.6g}' for w in omegas)})")
    j = int(mode) - 1
    shape = phi[:, j]
    p = int(np.argmax(np.abs(shape)))
    shape = shape * np.sign(shape[p])
    om = float(omegas[j])
    _check_unforced(model, om)
    disc = EPMCSystem(model, harmonics, phase_position=p, mass=mass, n_t=n_t)
    U = np.zeros((disc.n, disc.nh))
    U[disc.P, 1] = a0 * shape                  # x = a phi cos(omega t)
    U[disc.V, 2] = -a0 * om * shape            # v = -a omega phi sin(omega t)
    Z = disc.pack(U, om, modal_c[j], a0)
    try:
        Z = correct(disc, Z, np.eye(disc.size)[-1], a0, max_iter=40)[0]
        if condensed:
            # the condensed system from the uncondensed first point (its inputs w = C x and own
            # states; the linear mode itself is a poor guess for the condensed balance, whose
            # Newton then wanders off, e.g. on a stuck damper's large viscous linearization)
            st = model.structure
            U, om1, xi, _ = disc.split(Z)
            disc = CondensedEPMCSystem(model, harmonics, st.phi_in @ shape, n_t=disc.n_t)
            Z = correct(disc, disc.pack(st.port_states(U)[:disc.nv], om1, xi, a0), np.eye(disc.size)[-1], a0,
                        max_iter=40)[0]
    except ConvergenceError as exc:
        raise ConvergenceError(f"the nonlinear mode {mode} did not converge at amplitude a = {a0:g} from the "
                               f"linear mode (omega = {om:.6g}): {exc}; start at a smaller amplitude") from None
    return disc, Z


def nonlinear_mode(model, mode=1, amplitudes=(1e-3, 1.0), *, harmonics=None, tolerance=TOLERANCE, mass=None,
                   n_t=None, method=None, discretization=None, options=None, progress=None):
    """The nonlinear mode ``mode`` of a damped structure by the EPMC, from ``a0`` to ``a1``.

    Parameters
    ----------
    model : Model
        A structure written with second-order states (``m.second_order``): autonomous, or forced
        with its forcing switched off (e.g. ``F0 = 0``) and loaded with the forcing frequency as
        its continuation parameter.
    mode : int
        Linear mode (1 the lowest) the branch starts from, at ``a0``.
    amplitudes : (float, float)
        Modal amplitudes ``(a0, a1)`` (module docstring: the mass-weighted size of the
        positions' first harmonic), continued from ``a0``; both > 0.
    harmonics : int, optional
        Harmonics; default chosen for ``tolerance`` as for
        :func:`~frictionkit.runtime.frequency_response` (the largest change of a state's
        coefficients from ``H`` to ``1.5 H`` harmonics at the slowest-decaying points).
    mass : array_like, optional
        Mass matrix of the positions for the normalization (default identity: unit masses).
    n_t : int, optional
        AFT samples per period.
    method : {None, "anm", "newton"}
        Continuation engine: default the ANM wherever the model's Taylor kernels allow it
        (:attr:`EPMCSystem.supports_anm`), else pseudo-arclength Newton.
    discretization : {None, "aft", "aft-condensed"}
        The harmonic balance: the AFT of the model's states (:class:`EPMCSystem`), or, for a
        structure given as modal data or matrices, condensed onto its contacts
        (:class:`CondensedEPMCSystem`: its cost does not grow with the modes; Newton only).
        Default: the AFT of the states.
    options : dict or ANMOptions or NewtonOptions, optional
        Engine options (``max_steps``, ``max_lam_step``; Newton: ``step``, ``max_step``, ...).
    progress : callable, optional

    Returns
    -------
    Branch
        ``param`` the modal amplitude ``a``, ``omega`` the frequency; the EPMC columns in
        ``branch.nlmode``: ``amplitude`` (= ``param``), ``omega``, ``xi`` and
        ``damping_ratio`` ``D = xi / (2 omega)``; the usual amplitude/phase/rms columns of the
        states; ``provenance["nonlinear_mode"]`` the mode, mass and harmonic search.
        :func:`save_nonlinear_mode` writes it with the EPMC columns (group ``nlmode``).

    Raises
    ------
    InputError
        No second-order states, a forcing left on, amplitudes <= 0, a bad mode index.
    """
    try:
        a0, a1 = (float(a) for a in amplitudes)
    except (TypeError, ValueError):
        raise InputError(f"amplitudes = {amplitudes!r}: give two modal amplitudes (a0, a1)") from None
    if not (math.isfinite(a0) and math.isfinite(a1) and a0 > 0 and a1 > 0 and a0 != a1):
        raise InputError(f"amplitudes = ({a0:g}, {a1:g}): two different finite modal amplitudes > 0")
    if harmonics is not None and (int(harmonics) != harmonics or harmonics < 1):
        raise InputError(f"harmonics = {harmonics}: the number of harmonics must be an integer >= 1")
    if not (0 < float(tolerance) < 1):
        raise InputError(f"tolerance = {tolerance}: a relative accuracy between 0 and 1, e.g. 1e-8")
    if method not in (None, "anm", "newton"):
        raise InputError(f"method = {method!r}: choose 'anm', 'newton' or None (the ANM where it applies)")
    lo, hi = sorted((a0, a1))
    made = {}

    def options_for(engine):
        opts = dict(options or {}) if (options is None or isinstance(options, dict)) else options
        if not isinstance(opts, dict):
            return opts
        # the change of the amplitude per step at most a tenth of the range (a resolved curve);
        # Newton: the first step scaled by the range, the steps then grow with Newton's ease
        # (the frequency and xi dominate the norm of Z at small amplitudes)
        defaults = dict(max_steps=2000, stability=False, branch_points=False, max_lam_step=0.1 * (hi - lo))
        if engine == "newton":
            defaults.update(step=0.01 * (hi - lo), min_step=min(1e-9, 1e-3 * (hi - lo)))
        return dict(defaults, **opts, lam_min=lo, lam_max=hi)

    def branch_at(H):
        disc, Z = _start(model, mode, a0, H, mass, n_t, discretization)
        made["disc"] = disc
        if method == "anm" and not disc.supports_anm:
            raise InputError(f"method='anm' is impossible for the nonlinear modes of model {model.name!r}: "
                             + ("it has a non-analytic friction law" if model.sampled else
                                "the condensed harmonic balance of a structure has no EPMC series (use "
                                "discretization='aft' for the ANM)" if disc.condensed else
                                "its generated code has no Taylor kernels in the forcing phase (regenerate it "
                                "with `frictionkit codegen`)") + "; use method='newton' (pseudo-arclength)")
        engine = method or ("anm" if disc.supports_anm else "newton")
        made["method"] = engine
        return run(ContinuationProblem(disc, Z, 1.0 if a1 > a0 else -1.0), engine, options_for(engine), progress,
                   provenance=dict(continuation_parameter="a", discretization="epmc"))

    br, search = search_harmonics(branch_at, harmonics, tolerance)
    disc = made["disc"]
    sol = br.solutions
    xi = sol[:, disc.xi_index]
    br.nlmode = dict(amplitude=br.param.copy(), omega=br.omega.copy(), xi=xi, damping_ratio=xi / (2 * br.omega))
    br.provenance["nonlinear_mode"] = dict(mode=int(mode), mass=disc.M.tolist(), tolerance=float(tolerance),
                                           phase_state=disc.phase_state, search=search,
                                           discretization="aft-condensed" if disc.condensed else "aft")
    return br


def mode_at(branch, amplitude, counters=None):
    """The branch's nonlinear mode at exactly ``amplitude`` (Newton at fixed ``a`` from the
    nearest point): ``dict(amplitude, omega, xi, damping_ratio, solution)``."""
    disc = branch.discretization
    if disc is None or disc.kind != "epmc":
        raise InputError("mode_at needs a nonlinear-mode branch computed in this session (nonlinear_mode)")
    a = float(amplitude)
    i = int(np.argmin(np.abs(branch.param - a)))
    Z = correct(disc, branch.solutions[i], np.eye(disc.size)[-1], a, counters=counters, max_iter=30)[0]
    info = disc.unpack(Z)
    return dict(amplitude=a, omega=info["omega"], xi=info["xi"], damping_ratio=info["damping_ratio"], solution=Z)


def save_nonlinear_mode(path, branch):
    """Write a nonlinear-mode branch: the branch layout of ``results/_branch.py`` (group
    ``/periodic`` of a run file, ``param`` = the modal amplitude ``a``) plus the group
    ``/periodic/nlmode`` with the datasets ``amplitude``, ``omega``, ``xi`` and
    ``damping_ratio`` (n_points,) (``D = xi / (2 omega)``, Krack 2015), atomically."""
    import h5py
    from ..results._atomic import atomic_path
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs["layout"] = "run"
        f.attrs["main"] = "periodic"
        g = f.create_group("periodic")
        branch._write_group(g)
        nm = g.create_group("nlmode")
        for k, v in branch.nlmode.items():
            nm[k] = np.asarray(v, dtype=float)
        nm.attrs["formula"] = "damping_ratio = xi / (2 omega); EPMC, Krack, Computers & Structures 2015"
