"""The Schur complement of the identity rows of a bordered matrix (contract item 18).

A discretization's :class:`~._base.Elimination` lists rows of ``J`` that are an identity in
some unknowns (the AFT's kinematic states ``x_i' = x_j``); eliminating them leaves a dense
system of about half the size.  Linear algebra of the contract, below the engine: the engine's
bordered LU (``engine/_bordered.py``) and the error estimates' bordered Newton step
(``_error.py``) both reduce through :class:`_Reduction`.
"""
from __future__ import annotations

import numpy as np

__all__ = []


class _Reduction:
    """Index arrays of a discretization's :class:`Elimination` (contract item 18) for the
    bordered matrix ``K`` of size ``size``, made once per workspace (the engine's bordered LU,
    ``engine/_bordered.py``) or per estimator (the error estimates' 2H balance, ``_error.py``).

    With ``r, c`` the identity rows and columns and ``o_r, o_c`` the others, reordering the
    rows as ``(r, o_r)`` and the columns as ``(c, o_c)`` gives ``[[I, B], [C, E]]``, and
    ``K x = b`` is ``x_c = b_r - B x_o``, ``S x_o = b_o - C b_r`` with the Schur complement
    ``S = E - C B`` (exact: no pivot is taken in the identity block).  Hence
    ``det K = sgn(r, o_r) sgn(c, o_c) det S`` (``det I = 1``; a permutation matrix's
    determinant is its parity, the same for a permutation and its inverse).  ``B`` has one
    entry per column in the pair columns and full ``dense_cols``, so ``C B`` costs a column
    scaling and a product with a few columns, not a matrix product.  The blocks are read out
    of ``K`` (Fortran order) by precomputed indices, transposed so that the results are in
    LAPACK's order.
    """

    def __init__(self, elimination, size: int):
        e = elimination
        self.elimination, self.size = e, size
        # order the identity pairs with the paired ones first, and the other columns as
        # (pair columns, dense columns, the rest): C B is then a scaling of C[:, :p] and a
        # product with C, subtracted from the slices S[:, :p] and S[:, p:p+d]
        p, d = e.pair_rows.size, e.dense_cols.size
        order = np.concatenate([e.pair_rows, np.setdiff1d(np.arange(e.rows.size), e.pair_rows)])
        self.rows, self.cols = e.rows[order], e.cols[order]
        self.pair_rows, self.ppos, self.dpos = np.arange(p), np.arange(p), np.arange(p, p + d)
        self.o_rows = np.setdiff1d(np.arange(size), e.rows)
        self.o_cols = np.concatenate([e.pair_cols, e.dense_cols,
                                      np.setdiff1d(np.arange(size), np.concatenate([e.cols, e.pair_cols,
                                                                                    e.dense_cols]))])
        # [C | S]^T = K^T[(cols, o_cols), o_rows]: K^T is a C-order view of the F-order K, and
        # rows of it picked by one index array (a slice for o_rows when contiguous, as the AFT's
        # are) are copied 99 contiguous doubles at a time (4 us at the belt's H = 48, against
        # 8 us for a flat take of the same entries)
        lo = int(self.o_rows[0]) if self.o_rows.size else 0
        contiguous = np.array_equal(self.o_rows, np.arange(lo, lo + self.o_rows.size))
        all_cols = np.concatenate([self.cols, self.o_cols])
        self.cs_index = ((all_cols, slice(lo, lo + self.o_rows.size)) if contiguous
                         else np.ix_(all_cols, self.o_rows))
        self.p_flat = self.rows[:p] + size * e.pair_cols
        self.d_flat = self.rows[:, None] + size * e.dense_cols[None, :]
        self.i_flat = self.rows + size * self.cols
        self.sign = (_perm_parity(np.concatenate([self.rows, self.o_rows]))
                     * _perm_parity(np.concatenate([self.cols, self.o_cols])))
        # the index arrays of the compiled series loop (:meth:`_Bordered.reduction`)
        self.ints = {k: np.ascontiguousarray(getattr(self, k), dtype=np.intc)
                     for k in ("rows", "cols", "o_rows", "o_cols", "pair_rows", "ppos", "dpos")}

    @classmethod
    def of(cls, workspace, elimination):
        """The reduction kept on ``workspace`` (an object with ``K`` and ``reduction``), made
        again when the elimination or the size changed."""
        red = getattr(workspace, "reduction", None)
        if red is None or red.elimination is not elimination or red.size != workspace.K.shape[0]:
            red = workspace.reduction = cls(elimination, workspace.K.shape[0])
        return red

    def blocks(self, K):
        """``(S, C, pv, Bd)`` of the F-order matrix ``K``: the Schur complement (F order, to be
        factorized in place), ``C``, the pair entries of ``B`` and its dense columns; None when
        ``K``'s identity block is not one (the full LU is used then)."""
        Kf = K.ravel(order="F")                     # a view: K is Fortran-contiguous
        if not np.all(Kf.take(self.i_flat) == 1.0):
            return None
        k, p, d = self.rows.size, self.ppos.size, self.dpos.size
        CS = K.T[self.cs_index].T
        C, S = CS[:, :k], CS[:, k:]
        pv, Bd = Kf.take(self.p_flat), Kf.take(self.d_flat)
        S[:, :p] -= C[:, :p] * pv
        if d:
            S[:, p:p + d] -= C @ Bd
        return S, C, pv, Bd

    def solve(self, getrs, lu, piv, C, pv, Bd, rhs):
        """``K^-1 rhs`` (rhs (size,) or (size, nrhs)) through the reduced LU ``(lu, piv)`` of S."""
        return self.expand(rhs, getrs(lu, piv, self.reduce(rhs, C))[0], pv, Bd)

    def reduce(self, rhs, C):
        """The right-hand side ``b_o - C b_r`` of the Schur complement's system ``S x_o = ...``."""
        return rhs[self.o_rows] - C @ rhs[self.rows]

    def expand(self, rhs, xo, pv, Bd):
        """``K^-1 rhs`` from the Schur complement's solution ``xo``: ``x_c = b_r - B x_o``."""
        p, d = self.ppos.size, self.dpos.size
        br = rhs[self.rows]
        xv = br - Bd @ xo[p:p + d] if d else br
        xv[:p] -= (pv if rhs.ndim == 1 else pv[:, None]) * xo[:p]
        x = np.empty(rhs.shape)
        x[self.o_cols], x[self.cols] = xo, xv
        return x


def _perm_parity(perm) -> int:
    """+1 for an even permutation, -1 for an odd one: ``(-1)^(n - cycles)``, the cycles
    counted by pointer doubling (each element gets the smallest index of its cycle)."""
    perm = np.asarray(perm, dtype=np.intp)
    n = perm.size
    label = np.arange(n)
    jump = perm.copy()
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2))))) + 1):
        label = np.minimum(label, label[jump])
        jump = jump[jump]
    cycles = int(np.count_nonzero(label == np.arange(n)))
    return -1 if (n - cycles) % 2 else 1
