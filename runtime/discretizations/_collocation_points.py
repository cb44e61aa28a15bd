"""Collocation with point conditions: setup, the point rows of the Jacobian, the monodromy.

Part of :class:`~._collocation.CollocationDiscretization` (module docstring of
``_collocation.py``: a derivative-bilinear row keeps its Gauss equations except one, which
the point condition ``u_r(0) - f(pc u_v(0)) = 0`` at ``tau = 0`` replaces; Karkar, Cochelin &
Vergez, JSV 2013; DESIGN §2).  A mixin: it reads the layout of the discretization (``N``, ``G``,
``degree``, ``n_intervals``, ``_parts``, ``_ops``, ``_jacobian``).
"""
from __future__ import annotations

import numpy as np
import scipy

from ..errors import ConvergenceError, InputError

__all__ = ["CollocationPointConditions"]


class CollocationPointConditions:
    """Point conditions and the monodromy of collocated orbits (module docstring)."""

    # -- derivative-bilinear rows and point conditions (DESIGN §2) ------------------------
    def _setup_point_conditions(self):
        """Nodal set, differentiated algebraic rows and point rows (module docstring)."""
        model = self.model
        N = self.N
        pcs = model.point_conditions()
        self.dbil_rows, self.point_rows, self.has_point = pcs.dbil_rows, pcs.point_rows, pcs.present
        self.nodal = self.mass_rows.copy()
        self.alg_nodal = np.zeros(N, dtype=bool)          # algebraic rows imposed differentiated
        if not self.has_point:
            return
        self.A, self.bc, self.pc = pcs.A, pcs.bc, pcs.pc
        self.B_K, self.B_J, self.B_L = pcs.B_K, pcs.B_J, pcs.B_L
        self.point_funcs, self.point_args = pcs.funcs, pcs.args
        self._pvec = model.param_vector()
        # the differentiated variables, the dbil variables and the point arguments are nodal;
        # an algebraic nodal variable makes every variable of its row nodal (closure)
        self.nodal[self.dbil_rows] = True
        self.nodal[np.unique(np.nonzero(self.A)[1])] = True
        self.nodal[self.B_L] = True
        self.nodal[self.point_args] = True
        dbil = np.zeros(N, dtype=bool)
        dbil[self.dbil_rows] = True
        ops = model.operators()
        lin = (np.asarray(ops["L0"]) != 0) | (np.asarray(ops["L1"]) != 0)
        QK, QI, QJ = (np.asarray(a, dtype=int) for a in model.quadratic_terms)
        while True:
            alg = self.nodal & ~self.mass_rows & ~dbil
            deps = lin[alg].any(axis=0)
            sel = alg[QK]
            deps[QI[sel]] = True
            deps[QJ[sel]] = True
            if not np.any(deps & ~self.nodal):
                break
            self.nodal |= deps
        self.alg_nodal = self.nodal & ~self.mass_rows & ~dbil
        #: Newton's rounding floor (``_newton.correct``), as for the HBM with point conditions
        self.noise_floor = 1e-8

    def _replace_point_rows(self, J, U, Lfull, ops):
        """Rows ``r*G`` (first Gauss point) of the special rows -> the conditions at tau = 0."""
        N, G = self.N, self.G
        u0 = self._at_origin(U)
        rows = np.concatenate([np.flatnonzero(self.alg_nodal), self.point_rows])
        mask = np.ones(J.shape[0])
        mask[rows * G] = 0.0
        Jkeep = scipy.sparse.diags(mask) @ J[:, : N * G]
        Jq0 = self.model.quad_jac(ops["qc"], u0[:, None])[:, :, 0]
        Pj = np.asarray(self.model.point_jac(u0, self._pvec), dtype=float)
        ri, ci, vi = [], [], []
        for r in np.flatnonzero(self.alg_nodal):
            row = -(Lfull[r] + Jq0[r])
            for s in np.flatnonzero(row):
                ri.append(r * G)
                ci.append(s * G)
                vi.append(row[s])
        for k, r in enumerate(self.point_rows):
            for s in np.flatnonzero(Pj[k]):
                ri.append(r * G)
                ci.append(s * G)
                vi.append(Pj[k, s])
        P = scipy.sparse.csr_matrix((vi, (ri, ci)), shape=(J.shape[0], N * G))
        # the omega and lam columns of these rows are set in jacobian()
        return scipy.sparse.hstack([Jkeep + P, J[:, N * G:]], format="csr")

    # -- Floquet multipliers of models with point conditions ------------------------------
    def _node_relations(self, U, lam, node):
        """Linearised relations tying the constrained nodal variables to the others at a node.

        Rows: the algebraic rows of nodal variables and the point conditions, evaluated at
        node ``node`` (``tau = node / G``); columns: the N variables (non-nodal ones zero).
        """
        ops = self._ops()
        u = np.where(self.nodal, U[:, node], 0.0)
        Lfull = ops["L0"] + lam * ops["L1"]
        Jq = self.model.quad_jac(ops["qc"], u[:, None])[:, :, 0]
        alg = -(Lfull + Jq)[self.alg_nodal]
        Pj = np.asarray(self.model.point_jac(u, self._pvec), dtype=float)
        return np.vstack([alg, Pj])

    def monodromy(self, Z) -> np.ndarray:
        """Monodromy of the discretised variational equation of a model with point conditions.

        The counterpart of the condensation of ``_stability.floquet_collocation`` (which
        assumes every nodal row is a Gauss equation): on each sub-interval the Gauss
        equations of all rows (the first one of the dbil and differentiated algebraic rows
        included) are solved for the inner and end nodes and the Gauss-point variables, given
        the differential variables at the start node; the other nodal variables at the start
        node follow from the linearised algebraic rows and point relations ``r = f(pc v)`` at
        that node (the invariants the collocation keeps at the mesh points, module
        docstring).  Period and ``lam`` fixed.

        Returns
        -------
        ndarray (nd, nd)
            Monodromy of the differential variables (the states of a generated model).
        """
        if not self.has_point:
            raise InputError("monodromy() is for models with point conditions; use "
                             "_stability.floquet_collocation for the others")
        U, _, lam = self._parts(Z)
        N, G, p, n_int = self.N, self.G, self.degree, self.n_intervals
        J = self._jacobian(Z, point_rows=False).tocsr()[: N * G, : N * G]
        dif = np.flatnonzero(self.mass_rows)
        con = np.flatnonzero(self.nodal & ~self.mass_rows)
        nod = np.flatnonzero(self.nodal)
        gau = np.flatnonzero(~self.nodal)
        nn = nod.size
        rows = (np.arange(N)[:, None] * G + np.arange(p)[None, :]).ravel()        # interval 0
        M = np.eye(dif.size)
        for i in range(n_int):
            sub_rows = rows + i * p
            nodes = (i * p + np.arange(p + 1)) % G
            cols_nodal = (nod[:, None] * G + nodes[None, :])                     # (nn, p+1)
            cols_gauss = (gau[:, None] * G + i * p + np.arange(p)[None, :])       # (ng, p)
            Jr = J[sub_rows]
            start = Jr[:, cols_nodal[:, 0]].toarray()                            # (Np, nn)
            rest_cols = np.concatenate([cols_nodal[:, 1:].ravel(), cols_gauss.ravel()])
            A = Jr[:, rest_cols].toarray()                                        # (Np, Np)
            rel = self._node_relations(U, lam, i * p)[:, nod]                     # (nc, nn)
            pos = {v: k for k, v in enumerate(nod)}
            ic = [pos[v] for v in con]
            idf = [pos[v] for v in dif]
            T = np.zeros((nn, dif.size))
            T[idf] = np.eye(dif.size)
            T[ic] = -np.linalg.solve(rel[:, ic], rel[:, idf])
            try:
                X = np.linalg.solve(A, -start @ T)
            except np.linalg.LinAlgError as exc:
                raise ConvergenceError("collocation condensation: a singular interval block") from exc
            end = np.array([pos[v] * p + p - 1 for v in dif])                     # end node of dif vars
            M = X[end] @ M
        return M
