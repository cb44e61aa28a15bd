"""Linear structures with contacts (DESIGN §6): reduction, the modal linear part, the model.

A structural model (``ModelSpec.structure``) is a linear structure given numerically plus a
small symbolic part: the forces at the structure's named points (friction contacts, harmonic
forcing) and the model's own states (a friction law's internal state).  Codegen sees only
the small part, as the *port model* (``ModelSpec.port_model``): its states are the *inputs*
``w`` (displacements/velocities of points that the laws read), the own states ``z`` and one
slot per loaded point whose right-hand side is the force ``F`` on it.  This module joins the
generated port module with the structure:

* :func:`reduce_structure`: matrices -> the modes below a cut-off (``scipy.sparse.linalg.eigsh``
  in shift-invert mode, sharing one factorization of ``K``), augmented with the static
  correction of the truncated modes at the loaded points (the attachment vectors ``K^-1 b``,
  made mass-orthogonal to the retained modes, then a Rayleigh-Ritz step: the static
  flexibility at the loaded points is then exact); modal data are taken as given.
* :class:`StructuralSystem`: the modal equations ``q_j'' + 2 zeta_j w_j q_j' + w_j^2 q_j =
  phi_F,j . F`` in first-order pole-residue form, ``x' = A x + B F``, ``w = C x``, with
  ``A`` diagonalised: each mode has the poles ``lambda = w (-zeta +- sqrt(zeta^2 - 1))``, so
  the dynamic compliance from the forces to the inputs at the angular frequency ``s / i``
  is ``G(s) = sum_poles R_pole / (s - lambda_pole)`` (DESIGN §6), with rank-one residues
  ``R = (C V)_pole (V^-1 B)_pole``.  :meth:`StructuralSystem.compliance_series` gives the
  Taylor coefficients of ``G(i k omega)`` in ``omega`` exactly (a geometric series per
  pole), which is what the condensed harmonic balance and its ANM series need.
* :func:`structural_module`: a module honouring the generated-model interface for the whole
  reduced system (states: the modal coordinates and velocities, then ``z``), so that every
  path that works on the full ODE (equilibria and their eigenvalues, time simulation, the
  uncondensed AFT harmonic balance that cross-checks the condensed one, shooting) works on
  a structural model too; its ``STRUCTURE`` (contract item 15) is the
  :class:`StructuralSystem` the condensed harmonic balance reads.
"""
from __future__ import annotations

import hashlib
import math
import time
import types
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy                 # scipy.sparse(.linalg): imported by the functions that use it, as
                             # every model loads this module and few need scipy.sparse

from .._sparse import is_sparse
from ..errors import InputError, ModelInterfaceError

__all__ = ["ModalBasis", "StructuralSystem", "reduce_structure", "structural_module"]


# ---------------------------------------------------------------------------------------
# reduction
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModalBasis:
    """The retained (and static-correction) modes of a structure.

    Attributes
    ----------
    frequencies : ndarray (m,)
        Natural angular frequencies [rad/s], increasing.
    damping : ndarray (m,)
        Modal damping ratios.
    shapes : ndarray (n_points, m)
        Mass-normalised mode shapes at the structure's named points (``points``).
    points : tuple of str
    full_shapes : ndarray (n_dof, m) or None
        The mode shapes at every degree of freedom (matrices only), for recovering any
        degree of freedom's response on demand.
    info : dict
        How the basis was made: ``n_dof``, ``retained`` (modes below the cut-off),
        ``static`` (static-correction vectors), ``seconds`` (CPU of the reduction).
    """

    frequencies: np.ndarray
    damping: np.ndarray
    shapes: np.ndarray
    points: tuple
    full_shapes: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def digest(self) -> str:
        h = hashlib.sha256()
        for a in (self.frequencies, self.damping, self.shapes):
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()


def reduce_structure(structure, loaded_points=()) -> ModalBasis:
    """The modal basis of a :class:`~frictionkit.modelspec.Structure`.

    Modal data are taken as given.  Matrices are reduced: the modes of ``K phi = w^2 M phi``
    below the cut-off (or the ``modes`` lowest), by ``scipy.sparse.linalg.eigsh`` in
    shift-invert mode about 0 with one sparse LU of ``K`` (``scipy.linalg.eigh`` for small
    dense matrices); with ``static_correction`` the attachment vectors ``K^-1 b_P`` of the
    ``loaded_points`` (where forces act), mass-orthogonalised against the retained modes,
    join them and a Rayleigh-Ritz step on the union gives the basis (the static response
    to loads at those points is then exact: it lies in the basis).  Damping: Rayleigh
    ``(alpha / w + beta w) / 2``, given modal ratios, or a damping matrix that must be
    diagonal in the basis (proportional damping).

    Raises
    ------
    InputError
        A mass that is not positive definite, a singular stiffness (a rigid-body mode), a
        cut-off with no mode below it, non-proportional damping, a critically damped mode.
    """
    import scipy.sparse.linalg
    if structure.kind == "modal":
        d = structure.data
        return ModalBasis(d["frequencies"].copy(), d["damping"].copy(), d["shapes"].copy(), structure.points,
                          None, dict(n_dof=int(d["frequencies"].size), retained=int(d["frequencies"].size),
                                     static=0, seconds=0.0))
    t0 = time.process_time()
    d = structure.data
    M, K = d["mass"], d["stiffness"]
    n = M.shape[0]
    sparse = scipy.sparse.issparse(M) or scipy.sparse.issparse(K)
    _check_positive_definite(M, "mass matrix")
    solve_K = _factor(K)
    if not sparse and n <= 600:
        # small dense: the inverse problem M phi = mu K phi, mu = 1 / w^2, whose largest
        # eigenvalues (the lowest modes) LAPACK gets to full relative accuracy (K phi = w^2 M phi
        # would lose them to the condition number of K: 1e-7 on a 60-element beam's first mode)
        if "modes" in d:
            mu, Phi = scipy.linalg.eigh(np.asarray(M), np.asarray(K), subset_by_index=[n - d["modes"], n - 1])
        else:
            mu, Phi = scipy.linalg.eigh(np.asarray(M), np.asarray(K), subset_by_value=[d["cutoff"] ** -2, np.inf])
        order = np.argsort(-mu)
        w2, Phi = 1.0 / mu[order], Phi[:, order]
    else:
        w2, Phi = _lowest_modes(M, K, solve_K, d.get("modes"), d.get("cutoff"), n)
    if "cutoff" in d and not w2.size:
        lowest = float(np.sqrt(_lowest_modes(M, K, solve_K, 1, None, n)[0][0]))
        raise InputError(f"structure: no mode below the cut-off {d['cutoff']:g} rad/s (the lowest natural "
                         f"frequency is {lowest:.6g} rad/s); raise cutoff or give modes=<count>")
    if np.any(w2 <= 0):
        raise InputError("structure: the stiffness matrix has a zero or negative eigenvalue (a rigid-body or "
                         "unstable mode); constrain the structure (remove its free degrees of freedom)")
    Phi = Phi / np.sqrt(np.einsum("ij,ij->j", Phi, M @ Phi))
    retained = Phi.shape[1]
    static = 0
    P = d["point_vectors"]
    loaded = [structure.points.index(p) for p in dict.fromkeys(loaded_points)]
    if d.get("static_correction", True) and loaded:
        B = P[loaded].T                                          # (n_dof, n_loaded) unit loads
        Psi0 = solve_K(B)
        ref = np.sqrt(np.abs(np.einsum("ij,ij->j", Psi0, M @ Psi0))) + 1e-300
        Psi = Psi0.copy()
        for _ in range(2):                   # mass-orthogonal to the modes (twice: no loss)
            Psi -= Phi @ (Phi.T @ (M @ Psi))
        size = np.sqrt(np.abs(np.einsum("ij,ij->j", Psi, M @ Psi)))
        Psi = Psi[:, size > 1e-10 * ref] / size[size > 1e-10 * ref]   # already spanned: nothing to add
        if Psi.shape[1]:
            # mass-orthonormal among themselves too; they are then also K-orthogonal to the
            # modes (Phi^T K Psi = Lambda Phi^T M Psi = 0), so the Ritz problem on [Phi, Psi]
            # splits: the retained modes stay as they are (to their own accuracy) and only the
            # static block is diagonalised
            G = Psi.T @ (M @ Psi)
            Psi = Psi @ np.linalg.inv(np.linalg.cholesky(0.5 * (G + G.T))).T
            Ks = Psi.T @ (K @ Psi)
            ws2, X = scipy.linalg.eigh(0.5 * (Ks + Ks.T))
            w2 = np.concatenate([w2, ws2])
            Phi = np.hstack([Phi, Psi @ X])
            order = np.argsort(w2, kind="stable")
            w2, Phi = w2[order], Phi[:, order]
            static = Psi.shape[1]
    w = np.sqrt(w2)
    zeta = _modal_damping(d, w, Phi, retained)
    return ModalBasis(w, zeta, P @ Phi, structure.points, Phi,
                      dict(n_dof=int(n), retained=int(retained), static=int(static),
                           seconds=float(time.process_time() - t0)))


def _dense(A):
    return A.toarray() if is_sparse(A) else A


def _check_positive_definite(M, what):
    """Refuse a mass matrix that is not symmetric positive definite (its LDL^T pivots, from a
    sparse LU with symmetric pivoting, or a Cholesky factorization of a dense one)."""
    import scipy.sparse.linalg
    if not scipy.sparse.issparse(M):
        try:
            np.linalg.cholesky(M)
            return
        except np.linalg.LinAlgError:
            raise InputError(f"structure: the {what} is not positive definite; check its assembly (every "
                             "degree of freedom needs mass) or use a lumped mass") from None
    diag = M.diagonal()
    if np.any(diag <= 0):
        raise InputError(f"structure: the {what} has a non-positive diagonal entry (degree of freedom "
                         f"{int(np.flatnonzero(diag <= 0)[0])}); it is not positive definite")
    try:
        lu = scipy.sparse.linalg.splu(scipy.sparse.csc_matrix(M), permc_spec="MMD_AT_PLUS_A",
                                      diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
    except RuntimeError:
        raise InputError(f"structure: the {what} is singular; it is not positive definite") from None
    # with symmetric pivoting, U's diagonal holds the pivots of L D L^T (Sylvester's inertia)
    if np.any(lu.U.diagonal() <= 0):
        raise InputError(f"structure: the {what} is not positive definite (a negative pivot of its "
                         "factorization); check its assembly")


def _factor(K):
    """``b -> K^-1 b`` by one factorization (sparse LU or dense LU)."""
    import scipy.sparse.linalg
    try:
        if scipy.sparse.issparse(K):
            lu = scipy.sparse.linalg.splu(scipy.sparse.csc_matrix(K))
            if not np.all(np.isfinite(lu.U.diagonal())) or np.any(lu.U.diagonal() == 0):
                raise RuntimeError
            return lambda b: lu.solve(np.asarray(b, dtype=float))
        with warnings.catch_warnings():          # a singular K: our error, not scipy's warning
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            fac = scipy.linalg.lu_factor(np.asarray(K), check_finite=True)
        if np.any(np.diag(fac[0]) == 0):
            raise RuntimeError
        return lambda b: scipy.linalg.lu_solve(fac, np.asarray(b, dtype=float))
    except (RuntimeError, scipy.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        raise InputError("structure: the stiffness matrix is singular (a rigid-body mode or an unconstrained "
                         "degree of freedom); constrain the structure") from None


def _lowest_modes(M, K, solve_K, modes, cutoff, n):
    """The ``modes`` lowest modes, or those below ``cutoff``, by eigsh in shift-invert mode
    about 0 (the operator is ``K^-1``: ``solve_K``), doubling the count until one lies above
    the cut-off."""
    import scipy.sparse.linalg
    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=solve_K, dtype=float)
    k = int(modes) if modes is not None else min(n - 1, 12)
    while True:
        # a fixed start vector: ARPACK's random one would make a branch's modes differ in the
        # last digits from run to run
        w2, Phi = scipy.sparse.linalg.eigsh(K, k=k, M=M, sigma=0.0, which="LM", OPinv=op,
                                            v0=np.random.default_rng(0).standard_normal(n))
        order = np.argsort(w2)
        w2, Phi = w2[order], Phi[:, order]
        if modes is not None:
            return w2, Phi
        if np.sqrt(max(w2[-1], 0.0)) >= cutoff or k >= n - 1:
            keep = np.sqrt(np.maximum(w2, 0.0)) < cutoff
            return w2[keep], Phi[:, keep]
        k = min(n - 1, 2 * k)


def _modal_damping(d, w, Phi, retained):
    m = w.size
    if "rayleigh" in d:
        a, b = d["rayleigh"]
        return 0.5 * (a / w + b * w)
    if "damping_ratio" in d:
        r = d["damping_ratio"]
        if r.size == 1:
            return np.full(m, float(r[0]))
        if r.size != retained:
            raise InputError(f"structure: damping_ratio has {r.size} entries but {retained} modes are retained; "
                             "give one ratio, or one per retained mode")
        # the static-correction modes (above the retained ones) take the last ratio
        return np.concatenate([r, np.full(m - retained, float(r[-1]))])
    if "damping_matrix" in d:
        Cr = Phi.T @ (d["damping_matrix"] @ Phi)
        diag = np.diag(Cr).copy()
        off = Cr - np.diag(diag)
        scale = np.sqrt(np.abs(np.outer(diag, diag))) + 1e-300
        worst = float(np.max(np.abs(off) / scale)) if m > 1 else 0.0
        if worst > 1e-6:
            raise InputError(f"structure: the damping matrix is not proportional (in the modes its off-diagonal "
                             f"entries reach {worst:.2g} of the diagonal); give rayleigh=(alpha, beta) or "
                             "damping_ratio= instead")
        return diag / (2 * w)
    return np.zeros(m)


# ---------------------------------------------------------------------------------------
# the linear part in pole-residue form
# ---------------------------------------------------------------------------------------
class StructuralSystem:
    """The reduced structure and its ports: what the condensed harmonic balance reads
    (contract item 15 of ``_interface.py``).

    The linear part is a first-order system ``x' = A x + B F`` of ``n_lin`` states, read by
    the port model's inputs ``w = C x`` (the laws' displacements and velocities), forced by
    the port model's forces ``F`` at the loaded points; the whole reduced system's state is
    ``[x, z]`` (``z``: the port model's own states).  ``A`` is diagonalised, ``A = V diag(lambda)
    V^-1``, which gives the pole-residue form of the dynamic compliance (module docstring).
    :class:`ModalSystem` (modal data, ``x = (q, q')``) and :class:`LinearSystem` (any ``A``,
    ``B``, ``C``: a symbolic model recognised as linear but for its contacts) implement it.

    Attributes
    ----------
    layout : PortLayout
        Inputs, own states and forces of the port model (``ModelSpec.port_model``).
    port : module
        The generated port module (its ``rhs``, ``jac``, ``dfdlam``, ``taylor``: those of
        the forces and the own states as functions of ``[w, z, 0]``).
    n_in, n_z, n_F, n_lin : int
        Inputs, own states, loaded points (force channels), linear states.
    input_names, own_names, lin_names : tuple of str
    poles : ndarray (n_lin,) complex
    residues : ndarray (n_lin, n_in, n_F) complex
        ``R_pole = Cm[:, pole] Bm[pole]`` with ``Cm = C V``, ``Bm = V^-1 B``.
    A, B, C : ndarray or sparse
        The first-order system (``B`` (n_lin, n_F), ``C`` (n_in, n_lin) dense).
    """

    def _setup(self, layout, port, poles, Cm, Bm, lin_names):
        self.layout, self.port = layout, port
        self.input_names = tuple(name for name, _, _ in layout.inputs)
        self.own_names = tuple(layout.states)
        self.lin_names = tuple(lin_names)
        self.n_in, self.n_z, self.n_F = len(layout.inputs), len(layout.states), len(layout.forces)
        self.n_lin = len(self.lin_names)
        self.poles = np.asarray(poles, dtype=complex)
        self._Cm, self._Bm = np.asarray(Cm, dtype=complex), np.asarray(Bm, dtype=complex)
        self.residues = self._Cm.T[:, :, None] * self._Bm[:, None, :]
        self._res2 = self.residues.reshape(self.n_lin, -1)
        # the port model's row blocks: inputs, own states, force slots
        self.rows_z = slice(self.n_in, self.n_in + self.n_z)
        self.rows_F = slice(self.n_in + self.n_z, self.n_in + self.n_z + self.n_F)
        self.n_port = self.n_in + self.n_z + self.n_F
        # conjugate_partner(), identity_pairs(): computed once for the poles they were made from
        self._partner, self._identity_pairs = (None, None), (None, None)

    # -- dynamic compliance --------------------------------------------------------------

    def conjugate_partner(self):
        """The index of every pole's complex conjugate among the poles (a real structure's come
        in conjugate pairs; a real pole is its own), or None where a pole has none to 1e-12
        relative.  Computed once (an ``n_lin x n_lin`` search: 1.1 ms at 512 states, which
        every monodromy of the orbit needed before)."""
        poles = self.poles
        if self._partner[0] is not poles:
            scale = max(1.0, float(np.abs(poles).max(initial=0.0)))
            partner = np.argmin(np.abs(poles[:, None] - np.conj(poles)[None, :]), axis=1)
            ok = (np.all(np.abs(poles[partner] - np.conj(poles)) <= 1e-12 * scale)
                  and np.all(partner[partner] == np.arange(poles.size)))
            self._partner = (poles, partner if ok else None)
        return self._partner[1]

    def identity_pairs(self):
        """The modal coordinates of the unit vectors of the linear states on one pole of every
        conjugate pair (:meth:`conjugate_partner`; the first of each): ``(real, imag)`` parts of
        ``from_states(eye(n_lin))[keep]``, each ``(n_keep, n_lin)``, computed once (the
        monodromy matrix starts from them: 3.6 to 4.0 ms at 512 states each time before).  None
        without conjugate pairs."""
        partner = self.conjugate_partner()
        if partner is None:
            return None
        if self._identity_pairs[0] is not self.poles:
            keep = np.flatnonzero(partner >= np.arange(partner.size))
            xi = self.from_states(np.eye(self.n_lin))[keep]
            self._identity_pairs = (self.poles, (np.ascontiguousarray(xi.real), np.ascontiguousarray(xi.imag)))
        return self._identity_pairs[1]

    def states_from_pairs(self, xr, xm):
        """``Re(to_states(xi))`` for the modal coordinates ``xi`` of real states given on one
        pole of every conjugate pair (:meth:`identity_pairs`' rows), ``xi = xr + i xm`` there
        and its conjugate on the partner: ``(n_lin, k)`` real."""
        partner = self.conjugate_partner()
        keep = np.flatnonzero(partner >= np.arange(partner.size))
        full = np.empty((self.n_lin, xr.shape[1]), dtype=complex)
        full[keep] = xr + 1j * xm
        full[partner[keep]] = xr - 1j * xm
        return self.to_states(full).real
    def compliance_series(self, k, omega, order: int) -> np.ndarray:
        """Taylor coefficients in ``delta`` of ``G(i k (omega + delta))``: shape
        (order + 1, len(k), n_in, n_F), complex.

        Per pole, ``1 / (i k (omega + delta) - lambda) = sum_m (-i k)^m delta^m / d^(m+1)``
        with ``d = i k omega - lambda``: coefficient m is the previous one times
        ``-i k / d`` (exact; cost O(poles x harmonics) per order, then one product with the
        residues)."""
        k = np.asarray(k, dtype=float)
        d = 1j * k[None, :] * omega - self.poles[:, None]                 # (n_lin, K)
        c = 1.0 / d
        ratio = (-1j * k[None, :]) * c
        out = np.empty((order + 1, k.size, self.n_in, self.n_F), dtype=complex)
        for mth in range(order + 1):
            out[mth] = (c.T @ self._res2).reshape(k.size, self.n_in, self.n_F)
            if mth < order:
                c = c * ratio
        return out

    def compliance(self, k, omega) -> np.ndarray:
        """``G(i k omega)``, shape (len(k), n_in, n_F) complex."""
        return self.compliance_series(k, omega, 0)[0]

    def modal_harmonics(self, F_hat, k, omega) -> np.ndarray:
        """The modal coordinates' complex harmonics (n_lin, K) forced by the complex force
        harmonics ``F_hat`` (n_F, K) at ``k omega``: ``diag(1 / (i k omega - lambda)) Bm F_hat``."""
        s = 1j * np.asarray(k, dtype=float) * omega
        return (self._Bm @ F_hat) / (s[None, :] - self.poles[:, None])

    def state_harmonics(self, F_hat, k, omega) -> np.ndarray:
        """The linear states' complex harmonics (n_lin, K) forced by the complex force harmonics
        ``F_hat`` (n_F, K) at ``k omega``: ``V diag(1 / (i k omega - lambda)) Bm F_hat``."""
        return self.to_states(self.modal_harmonics(F_hat, k, omega))

    def rows_of_modes(self, W) -> np.ndarray:
        """``W V`` (n_r, n_lin) complex for rows ``W`` (n_r, n_lin) over the linear states: what
        those rows read of each modal coordinate (``W x = (W V) xi``).  Here ``to_states`` of
        the identity (``n_lin^2``); the subclasses' are cheaper."""
        return np.asarray(W, dtype=float) @ self.to_states(np.eye(self.n_lin))

    # -- exact modal propagation over a time step (the structured monodromy) ------------------
    def step_integrals(self, h, nodes):
        """Exact integrals of the modal equations over a step ``h`` for an input that is the
        polynomial interpolating its values at the fractions ``nodes`` (c_1..c_s) of the step.

        With ``L_j`` the Lagrange basis on ``nodes``, for every pole ``lambda``::

            E   = exp(lambda h),  E_i = exp(lambda c_i h)
            a_ij = int_0^{c_i h} exp(lambda (c_i h - s)) L_j(s / h) ds
            b_j  = int_0^h       exp(lambda (h - s))     L_j(s / h) ds

        so that ``xi(t + c_i h) = E_i xi(t) + sum_j a_ij Bm F_j`` and ``xi(t + h) = E xi(t) +
        sum_j b_j Bm F_j`` exactly (modal coordinates ``xi``; ``F_j`` the input at node j).
        Closed forms from ``int_0^tau exp(lambda (tau - s)) s^k ds = k! tau^(k+1)
        phi_(k+1)(lambda tau)`` with ``phi_k(z) = (e^z - sum_{n<k} z^n/n!) / z^k`` (their
        Taylor series where ``|z| < 1/2``).

        Returns
        -------
        E : (n_lin,), Ei : (s, n_lin), a : (s, s, n_lin), b : (s, n_lin), complex
        """
        c = np.asarray(nodes, dtype=float)
        s = c.size
        lam = self.poles
        coef = np.linalg.inv(np.vander(c, increasing=True))      # column j: L_j's monomial coefficients

        # [L_j] -> int_0^tau e^{lambda (tau - u)} L_j(u / h) du at tau = c_1 h .. c_s h and h,
        # all at once: the moments k! tau^(k+1) phi_(k+1)(lambda tau) / h^k, (s, s + 1, n_lin)
        tau = np.append(c * h, h)[:, None]
        z = lam[None, :] * tau
        mom = np.array([math.factorial(k) * tau ** (k + 1) * _phi(z, k + 1) / h ** k for k in range(s)])
        ints = np.einsum("kj,ktn->tjn", coef, mom)                  # (s + 1, s, n_lin)
        return np.exp(lam * h), np.exp(np.outer(c * h, lam)), ints[:s], ints[s]

    def modal_coordinates(self):
        """``(Cm, Bm)``: ``C V`` (n_in, n_lin) and ``V^-1 B`` (n_lin, n_F), complex."""
        return self._Cm, self._Bm

    # -- the port model ------------------------------------------------------------------
    def port_states(self, x):
        """The port model's states ``[w, z, 0]`` from full states ``x`` (n_lin + n_z, ...)."""
        x = np.asarray(x, dtype=float)
        out = np.zeros((self.n_port,) + x.shape[1:])
        out[:self.n_in] = np.tensordot(self.C, x[:self.n_lin], axes=1)
        out[self.rows_z] = x[self.n_lin:]
        return out

    # -- what a subclass gives ---------------------------------------------------------------
    def to_states(self, xi):
        """Linear states from modal coordinates: ``V xi`` (n_lin, ...)."""
        raise NotImplementedError

    def from_states(self, x):
        """Modal coordinates from linear states: ``V^-1 x`` (n_lin, ...)."""
        raise NotImplementedError

    def lin_rhs(self, x):
        """``A x`` for linear states ``x`` (n_lin, ...)."""
        raise NotImplementedError

    def kinematic(self):
        """Pairs ``(i, j)``: the linear equations ``x_i' = x_j`` (contract item 13)."""
        return ()


class ModalSystem(StructuralSystem):
    """Modal data: ``x = (q_1..q_m, q_1'..q_m')``, ``q_j'' + 2 zeta_j w_j q_j' + w_j^2 q_j =
    phi_F,j . F``; each mode has the poles ``lambda+- = w (-zeta +- sqrt(zeta^2 - 1))`` and the
    eigenvectors ``(1, lambda+-)``.

    Attributes (besides :class:`StructuralSystem`'s)
    ------------------------------------------------
    basis : ModalBasis
    m : int
        Modes (``n_lin = 2 m``).
    phi_in : ndarray (n_in, m)
        Mode shapes at the input points; ``velocity`` (n_in,) bool: the input is a velocity.
    phi_F : ndarray (n_F, m)
        Mode shapes at the loaded points.
    """

    def __init__(self, basis: ModalBasis, layout, port):
        self.basis = basis
        pts = list(basis.points)
        self.velocity = np.array([q == "velocity" for _, _, q in layout.inputs], dtype=bool)
        self.phi_in = basis.shapes[[pts.index(p) for _, p, _ in layout.inputs]].reshape(len(layout.inputs), -1)
        self.phi_F = basis.shapes[[pts.index(p) for _, p in layout.forces]].reshape(len(layout.forces), -1)
        self.m = m = basis.frequencies.size
        w, zeta = basis.frequencies, basis.damping
        root = np.sqrt(zeta.astype(complex) ** 2 - 1.0)
        lp, lm = w * (-zeta + root), w * (-zeta - root)
        if np.any(np.abs(lp - lm) < 1e-10 * w):
            j = int(np.flatnonzero(np.abs(lp - lm) < 1e-10 * w)[0])
            raise InputError(f"structure: mode {j + 1} ({w[j]:.6g} rad/s) is critically damped (ratio "
                             f"{zeta[j]:.6g}); its pole is double: change its damping slightly")
        self._lp, self._lm, self._gap = lp, lm, lp - lm
        gap = self._gap
        Bm = np.concatenate([self.phi_F.T / gap[:, None], -self.phi_F.T / gap[:, None]])    # (2m, n_F)
        lam_in = np.where(self.velocity[:, None], np.concatenate([lp, lm])[None, :], 1.0)  # (n_in, 2m)
        Cm = np.concatenate([self.phi_in, self.phi_in], axis=1) * lam_in                    # (n_in, 2m)
        self._w2, self._c = w * w, 2 * zeta * w
        self.B = np.concatenate([np.zeros((m, len(layout.forces))), self.phi_F.T])
        self.C = np.zeros((len(layout.inputs), 2 * m))
        for i in range(len(layout.inputs)):
            self.C[i, (m if self.velocity[i] else 0):(2 * m if self.velocity[i] else m)] = self.phi_in[i]
        taken = set(port.PARAMETERS) | set(layout.states) | {n for n, _, _ in layout.inputs}
        base = "q" if not any(f"q{j + 1}" in taken or f"q{j + 1}_dot" in taken for j in range(m)) else "mode"
        names = tuple(f"{base}{j + 1}" for j in range(m)) + tuple(f"{base}{j + 1}_dot" for j in range(m))
        self._setup(layout, port, np.concatenate([lp, lm]), Cm, Bm, names)

    def to_states(self, xi):
        m = self.m
        out = np.empty(xi.shape, dtype=complex)
        out[:m] = xi[:m] + xi[m:]
        out[m:] = self._lp.reshape((-1,) + (1,) * (xi.ndim - 1)) * xi[:m] \
            + self._lm.reshape((-1,) + (1,) * (xi.ndim - 1)) * xi[m:]
        return out

    def rows_of_modes(self, W):
        """``W V`` in closed form: mode j's two poles read ``W_q,j + lambda+- W_q',j``."""
        W = np.asarray(W, dtype=float)
        Wq, Wv = W[:, :self.m], W[:, self.m:]
        return np.concatenate([Wq + Wv * self._lp, Wq + Wv * self._lm], axis=1)

    def from_states(self, x):
        m = self.m
        shape = (-1,) + (1,) * (np.ndim(x) - 1)
        lp, lm, gap = (a.reshape(shape) for a in (self._lp, self._lm, self._gap))
        q, qd = x[:m], x[m:]
        return np.concatenate([(qd - lm * q) / gap, (lp * q - qd) / gap])

    def states_from_pairs(self, xr, xm):
        """:meth:`StructuralSystem.states_from_pairs` without complex arrays where every mode
        is underdamped (the pairs are ``lp_j``, ``lm_j = conj(lp_j)``): ``q = 2 xr``,
        ``q' = 2 Re(lp xi) = 2 (Re(lp) xr - Im(lp) xm)`` (512 states: 0.8 ms against
        4.7 ms through complex arrays and ``to_states``, medians of 15)."""
        m = self.m
        partner = self.conjugate_partner()
        if partner is None or not np.array_equal(partner[:m], np.arange(m, 2 * m)):
            return super().states_from_pairs(xr, xm)
        out = np.empty((2 * m, xr.shape[1]))
        np.multiply(xr, 2.0, out=out[:m])
        np.multiply(xr, (2 * self._lp.real)[:, None], out=out[m:])
        out[m:] -= (2 * self._lp.imag)[:, None] * xm
        return out

    def lin_rhs(self, x):
        m = self.m
        shape = (-1,) + (1,) * (np.ndim(x) - 1)
        out = np.empty(np.shape(x))
        out[:m] = x[m:]
        out[m:] = -self._w2.reshape(shape) * x[:m] - self._c.reshape(shape) * x[m:]
        return out

    @property
    def A(self):
        m = self.m
        A = np.zeros((2 * m, 2 * m))
        A[np.arange(m), m + np.arange(m)] = 1.0
        A[m + np.arange(m), np.arange(m)] = -self._w2
        A[m + np.arange(m), m + np.arange(m)] = -self._c
        return A

    def kinematic(self):
        return tuple((j, self.m + j) for j in range(self.m))

    def point_harmonics(self, F_hat, k, omega, shapes, velocity=False) -> np.ndarray:
        """Complex harmonics (n_rows, K) of the displacement (or velocity) read by the rows of
        ``shapes`` (n_rows, m): any point, or any degree of freedom with ``basis.full_shapes``."""
        q = self.state_harmonics(F_hat, k, omega)[:self.m]
        q = np.asarray(shapes, dtype=float) @ q
        return q * (1j * np.asarray(k, dtype=float) * omega) if velocity else q


class LinearSystem(StructuralSystem):
    """Any first-order linear part ``x' = A x + B F``, ``w = C x`` (numbers), diagonalised by
    ``numpy.linalg.eig`` once: a symbolic model recognised as linear but for its contacts
    (``codegen``'s recognition).

    Raises
    ------
    InputError
        ``A`` is not diagonalisable to working accuracy (a defective eigenvalue: a double pole),
        or has a zero eigenvalue (a free integrator: no static compliance).
    """

    def __init__(self, A, B, C, names, layout, port):
        A = np.asarray(A, dtype=float)
        self.A, self.B, self.C = A, np.asarray(B, dtype=float), np.asarray(C, dtype=float)
        lam, V = np.linalg.eig(A)
        cond = np.linalg.cond(V)
        if not np.isfinite(cond) or cond > 1e10:
            raise InputError(f"model {port.MODEL_NAME!r}: its linear part is not diagonalisable to working "
                             f"accuracy (eigenvector condition number {cond:.2g}: a double pole, e.g. a critically "
                             "damped mode); declare it with m.structure(...) from modal data instead")
        if np.any(np.abs(lam) < 1e-12 * max(1.0, float(np.max(np.abs(lam))))):
            raise InputError(f"model {port.MODEL_NAME!r}: its linear part has a zero eigenvalue (a free "
                             "integrator or a rigid-body mode): constrain the structure")
        self._V, self._Vinv = V, np.linalg.inv(V)
        self._setup(layout, port, lam, self.C @ V, self._Vinv @ self.B, names)

    def to_states(self, xi):
        return np.tensordot(self._V, xi, axes=1)

    def rows_of_modes(self, W):
        return np.asarray(W, dtype=float) @ self._V

    def from_states(self, x):
        return np.tensordot(self._Vinv, np.asarray(x), axes=1)

    def lin_rhs(self, x):
        return np.tensordot(self.A, np.asarray(x, dtype=float), axes=1)

    def kinematic(self):
        out = []
        for i, row in enumerate(self.A):
            nz = np.flatnonzero(row)
            if nz.size == 1 and row[nz[0]] == 1.0 and not np.any(self.B[i]):
                out.append((i, int(nz[0])))
        used = [j for _, j in out]
        return tuple((i, j) for i, j in out if used.count(j) == 1 and j not in [a for a, _ in out])


def _phi(z, k):
    """``phi_k(z) = (e^z - sum_{n<k} z^n / n!) / z^k`` elementwise (complex): the direct formula
    where ``|z| >= 1/2``, else the Taylor series ``sum_n z^n / (n + k)!`` (no cancellation)."""
    z = np.asarray(z, dtype=complex)
    small = np.abs(z) < 0.5
    zs = np.where(small, 1.0, z)
    head = sum(zs ** n / math.factorial(n) for n in range(k))
    direct = (np.exp(zs) - head) / zs ** k
    series = np.zeros_like(z)
    term = np.full_like(z, 1.0 / math.factorial(k))
    for n in range(24):                    # |z| < 1/2: the terms fall below 1e-30 by n = 24
        series = series + term
        term = term * z / (n + 1 + k)
    return np.where(small, series, direct)


# ---------------------------------------------------------------------------------------
# the generated-model interface of the whole reduced system
# ---------------------------------------------------------------------------------------
class _PerParameters:
    """The structural system of a parameter vector: a symbolic model's linear part depends on
    parameters (``make(p)`` builds it), cached on the values of those that enter it
    (``depends``: their positions in ``p``); a numeric structure is one system for all."""

    def __init__(self, make, depends=()):
        self.make, self.depends = make, tuple(depends)
        self._cache = {}

    def __call__(self, p):
        key = tuple(float(p[i]) for i in self.depends)
        out = self._cache.get(key)
        if out is None:
            if len(self._cache) > 16:
                self._cache.clear()
            out = self._cache[key] = self.make(p)
        return out


def structural_module(port, layout, system, fingerprint: str, depends=()) -> types.ModuleType:
    """A module honouring the generated-model interface for a structure's linear part and its
    ports (states: the linear states, then the own states), with ``STRUCTURE`` or
    ``structure_for`` (contract item 15).

    Parameters
    ----------
    port : module
        The generated port module.
    layout : PortLayout
    system : StructuralSystem or callable
        The linear part, or ``p -> StructuralSystem`` when it depends on the parameters at
        ``depends`` (positions in ``PARAMETERS``; a recognised symbolic model).
    fingerprint : str
        Hash of what defines the linear part (the structure's numbers or expressions).

    Notes
    -----
    The full system's ``rhs``/``jac``/``dfdlam``/``taylor`` are ``x' = A x + B F``, ``z' = h``
    with the port module's ``F``, ``h`` at ``[C x, z, 0]``; there is no quadratic recast of
    the whole (``operators``/``quad`` raise): the paths that apply are the AFT harmonic
    balance of the states (condensed onto the inputs by default,
    ``runtime/discretizations/_condensed.py``; uncondensed for cross-checks), shooting, time
    simulation and equilibria.
    """
    get = system if callable(system) and not isinstance(system, StructuralSystem) else None
    if get is None:
        fixed = system
        get = lambda p: fixed                      # noqa: E731
        digest = system.basis.digest() if isinstance(system, ModalSystem) else ""
    else:
        get = _PerParameters(system, depends)
        digest = ""
    first = get(np.array(port.DEFAULTS, dtype=float))
    n_lin, nz, n_in = first.n_lin, first.n_z, first.n_in
    n = n_lin + nz
    rz, rF = first.rows_z, first.rows_F
    states = first.lin_names + first.own_names
    h = hashlib.sha256((str(port.MODEL_HASH) + fingerprint + digest).encode()).hexdigest()[:16]
    mod = types.ModuleType(f"_frictionkit_structure_{port.MODEL_NAME}_{h}",
                           f"Linear structure ({n_lin} states) with the port model {port.MODEL_NAME!r}.")

    def rhs(t, x, p):
        st = get(p)
        x = np.asarray(x, dtype=float)
        fp = np.asarray(port.rhs(t, st.port_states(x), p), dtype=float)
        out = np.empty(x.shape)
        out[:n_lin] = st.lin_rhs(x[:n_lin]) + np.tensordot(st.B, fp[rF], axes=1)
        out[n_lin:] = fp[rz]
        return out

    def jac(t, x, p):
        st = get(p)
        x = np.asarray(x, dtype=float)
        Jp = np.asarray(port.jac(t, st.port_states(x), p), dtype=float)      # (np, np[, M])
        batch = x.shape[1:]
        J = np.zeros((n, n) + batch)
        A = np.asarray(st.A)
        J[:n_lin, :n_lin] = A.reshape(A.shape + (1,) * len(batch))
        dF_dw, dF_dz = Jp[rF, :n_in], Jp[rF, rz]
        dh_dw, dh_dz = Jp[rz, :n_in], Jp[rz, rz]
        J[:n_lin, :n_lin] += np.einsum("af,fi...,ib->ab...", st.B, dF_dw, st.C)
        J[:n_lin, n_lin:] += np.einsum("af,fz...->az...", st.B, dF_dz)
        J[n_lin:, :n_lin] += np.einsum("zi...,ib->zb...", dh_dw, st.C)
        J[n_lin:, n_lin:] += dh_dz
        return J

    def dfdlam(t, x, p):
        st = get(p)
        x = np.asarray(x, dtype=float)
        dp = np.asarray(port.dfdlam(t, st.port_states(x), p), dtype=float)
        out = np.zeros(x.shape)
        out[:n_lin] = np.tensordot(st.B, dp[rF], axes=1)
        out[n_lin:] = dp[rz]
        return out

    def taylor(t, X, LAM, A, k, p):
        st = get(p)
        X = np.asarray(X, dtype=float)
        Xp = np.zeros((X.shape[0], st.n_port) + X.shape[2:])
        Xp[:, :n_in] = np.einsum("ib,qb...->qi...", st.C, X[:, :n_lin])
        Xp[:, rz] = X[:, n_lin:]
        Ak, Fp = port.taylor(t, Xp, LAM, A, k, p)
        Fp = np.asarray(Fp, dtype=float)
        F = np.empty(X.shape[1:])
        F[:n_lin] = st.lin_rhs(X[k, :n_lin]) + np.tensordot(st.B, Fp[rF], axes=1)
        F[n_lin:] = Fp[rz]
        return Ak, F

    def contact_velocity(x, t, p):
        return port.contact_velocity(get(p).port_states(x), t, p)

    def _no_recast(*args, **kwargs):
        raise ModelInterfaceError(f"structural model {port.MODEL_NAME!r} has no quadratic recast of the whole "
                                  "system: use the AFT harmonic balance (the default), shooting or simulation")

    def aux(x, t, p):
        return np.asarray(x, dtype=float).copy()

    empty = np.array([], dtype=np.intp)
    port_units = tuple(getattr(port, "STATE_UNITS", ("",) * first.n_port))
    mod.__dict__.update(
        MODEL_NAME=port.MODEL_NAME, MODEL_HASH=h, GENERATOR_VERSION=port.GENERATOR_VERSION,
        BACKEND=port.BACKEND, CONTINUATION=port.CONTINUATION, PARAMETERS=tuple(port.PARAMETERS),
        DEFAULTS=tuple(port.DEFAULTS), UNITS=tuple(getattr(port, "UNITS", ("",) * len(port.PARAMETERS))),
        STATES=states, VARIABLES=states, KINDS=("differential",) * n,
        STATE_UNITS=("",) * n_lin + port_units[rz],
        FORCING_FREQUENCY=port.FORCING_FREQUENCY, VALIDITY=(), DEFINITIONS=(), SAMPLED=False,
        KINEMATIC=first.kinematic(), Q_K=empty, Q_I=empty, Q_J=empty,
        B_K=empty, B_J=empty, B_L=empty, POINT_ROWS=(), POINT_FUNCS=(), POINT_ARGS=(),
        CONTACTS=tuple(port.CONTACTS), CONTACT_LAWS_USE_LAM=bool(getattr(port, "CONTACT_LAWS_USE_LAM", True)),
        NAUX=int(getattr(port, "NAUX", 0)), structure_for=get,
        operators=_no_recast, quad=_no_recast, quad_jac=_no_recast, rhs=rhs, jac=jac, aux=aux,
        point=lambda u0, p: np.zeros(0), point_jac=lambda u0, p: np.zeros((0, n)),
        contact_velocity=contact_velocity, contact_law=port.contact_law)
    if not depends:
        mod.STRUCTURE = first
    if hasattr(port, "TIME_UNIT"):
        mod.TIME_UNIT = port.TIME_UNIT
    if hasattr(port, "TAYLOR_TIME"):          # the port kernel's time: the time or the forcing phase
        mod.TAYLOR_TIME = port.TAYLOR_TIME
    if hasattr(port, "check_parameters"):
        mod.check_parameters = port.check_parameters
    if hasattr(port, "dfdlam"):
        mod.dfdlam = dfdlam
    if hasattr(port, "taylor"):
        mod.taylor = taylor
    return mod
