"""Bordered linear algebra shared by every engine (DESIGN §5.3).

Every linear solve of a continuation uses the bordered matrix ``[J(Z); b^T]`` of size
``(m+1) x (m+1)``: the m equations ``R(Z) = 0`` plus one linear equation ``b . Z = c`` that
fixes the position on the branch (pseudo-arclength, fixed ``lam``, fixed amplitude, ...).
Dense discretizations assemble their Jacobian straight into a reusable buffer
(:class:`_Workspace`); sparse ones (collocation) are factorized by SuperLU.  Each
factorization also gives the sign of its determinant, the branch-point test function.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import scipy

from .._sparse import is_sparse
from ..discretizations._reduction import _perm_parity, _Reduction
from ..errors import ConvergenceError, NonFiniteError

__all__ = ["Counters", "bordered_factor", "factor_jacobian", "row_scales"]


@dataclass
class Counters:
    """Work counters of a continuation run."""

    steps: int = 0
    factorizations: int = 0
    residual_evaluations: int = 0
    jacobian_evaluations: int = 0

    def as_dict(self) -> dict:
        return dict(steps=self.steps, factorizations=self.factorizations,
                    residual_evaluations=self.residual_evaluations,
                    jacobian_evaluations=self.jacobian_evaluations)


class _Workspace:
    """A reusable ``(m+1) x (m+1)`` Fortran-order buffer for bordered dense matrices.

    Kept on the discretization (attribute ``_bordered_workspace``) for the duration of a
    :meth:`scope` (a continuation run, a Newton correction): the Jacobian is assembled
    straight into its first ``m`` rows and factorized in place, so a step allocates no
    ``m x m`` array.  Measured at H = 200 (2409 unknowns, belt n = 10): copying ``J`` into a
    fresh 46 MB array and factorizing took 0.35 s against 0.23 s for the LU alone, the
    difference being kernel time in page faults.  ``generation`` counts the factorizations
    held in it: a factorization whose buffer was reused refuses to solve instead of
    returning wrong numbers.
    """

    def __init__(self, n):
        self.K = np.zeros((n, n), order="F")
        self.generation = 0
        self.reduction = None          # the _Reduction of the discretization's elimination

    @staticmethod
    @contextlib.contextmanager
    def scope(disc):
        """Keep a workspace on ``disc`` inside the ``with`` block only (the outermost scope
        frees it: a branch keeps its discretization, and at H = 500 the buffer is a GB)."""
        had = "_bordered_workspace" in getattr(disc, "__dict__", {})
        try:
            yield
        finally:
            if not had:
                getattr(disc, "__dict__", {}).pop("_bordered_workspace", None)

    @classmethod
    def of(cls, disc):
        n = disc.m + 1
        ws = getattr(disc, "_bordered_workspace", None)
        if ws is None or ws.K.shape[0] != n:
            ws = cls(n)
            try:
                disc._bordered_workspace = ws
            except AttributeError:      # a discretization without a __dict__: no reuse
                pass
        return ws


class _Bordered:
    """LU of the bordered matrix ``[J; b^T]`` (dense or sparse J).

    With ``elimination`` (a dense J in a workspace; the discretization's contract item 18) the
    LU is that of the Schur complement left by eliminating the identity rows (:class:`_Reduction`):
    ``solve``, ``det_sign`` and ``slogdet`` are those of the full matrix, and ``dense_lu`` adds the
    reduction for the compiled series loop."""

    def __init__(self, J, border, counters: Counters | None, workspace: _Workspace | None = None,
                 checked: bool = False, elimination=None):
        self._workspace = None
        self._reduced = None
        if is_sparse(J):
            import scipy.sparse.linalg   # here: a model of a few states never imports scipy.sparse
            K = scipy.sparse.vstack([J, scipy.sparse.csr_matrix(border[None, :])]).tocsc()
            self._lu = scipy.sparse.linalg.splu(K)
            self._solve = self._lu.solve
        else:
            if workspace is not None:
                K = workspace.K
                if J is not None:            # else: already assembled into K[:-1]
                    K[:-1] = J
                workspace.generation += 1
                self._workspace, self._generation = workspace, workspace.generation
            else:
                J = np.asarray(J)
                K = np.empty((J.shape[0] + 1, J.shape[1]), order="F")   # LAPACK order: no copy
                K[:-1] = J
            K[-1] = border
            # ``checked``: J is known finite (its row scales |J||Z| are, which a NaN or inf
            # entry would spoil), only the border row is left to check
            if not (np.isfinite(border).all() if checked else np.isfinite(K).all()):
                raise NonFiniteError("NaN/inf in the Jacobian (a validity condition of the recast "
                                       "is probably violated)")
            if elimination is not None and workspace is not None:
                red = _Reduction.of(workspace, elimination)
                blocks = red.blocks(K)
                if blocks is not None:
                    self._reduced = (red,) + blocks[1:]
                    K = blocks[0]
            # LAPACK's getrf and getrs directly (what scipy's lu_factor and lu_solve wrap): the
            # wrappers' checks and warning filters cost 10-15 us per factorization, and as much
            # again as the solve itself per solve at a few hundred unknowns (the ANM solves 20
            # times per LU).  K is F-ordered float64: factorized in place.
            lu, piv, info = _lapack("getrf", K)(K, overwrite_a=True)
            self._lu = (lu, piv)
            getrs = _lapack("getrs", lu)
            if self._reduced is None:
                self._solve = lambda rhs: getrs(lu, piv, rhs)[0]
            else:
                red, C, pv, Bd = self._reduced
                self._solve = lambda rhs: red.solve(getrs, lu, piv, C, pv, Bd, rhs)
            # info > 0: an exactly zero pivot; a NaN produced by the elimination reaches the
            # diagonal (every later pivot depends on it) or the solves (checked there)
            if info != 0 or not np.isfinite(lu.diagonal()).all():
                raise ConvergenceError("singular bordered tangent matrix")
        if counters is not None:
            counters.factorizations += 1

    def solve(self, rhs, checked: bool = True):
        """Solution of ``[J; b^T] x = rhs``.  ``checked=False`` skips the test of ``x`` for
        NaN/inf (a ``ConvergenceError`` otherwise): for callers that test the results of many
        solves at once (the ANM series tests all its terms once per step)."""
        self._check_fresh()
        out = self._solve(rhs)
        if checked and not np.isfinite(out).all():
            raise ConvergenceError("the bordered tangent system has no finite solution (singular matrix)")
        return out

    @property
    def dense_lu(self):
        """``(lu, piv)`` behind :meth:`solve` (LAPACK getrf's, as ``scipy.linalg.lu_factor`` gives
        them; dense J; None for a sparse one), for compiled callers (the AFT's ANM loop,
        ``Discretization.series_terms``).
        After an elimination, ``(lu, piv, reduction)``: ``lu, piv`` of the Schur complement
        and ``reduction`` the dict of :meth:`reduction`."""
        self._check_fresh()
        if not isinstance(self._lu, tuple):
            return None
        return self._lu if self._reduced is None else self._lu + (self.reduction(),)

    def reduction(self):
        """The elimination behind a reduced LU as arrays for compiled code (None without one):
        ``rows, cols, o_rows, o_cols, pair_rows, ppos, dpos`` (intc), ``C`` (F order), ``pv``,
        ``Bd`` (C order), as in :class:`_Reduction`."""
        if self._reduced is None:
            return None
        red, C, pv, Bd = self._reduced
        return dict(red.ints, C=C, pv=pv, Bd=np.ascontiguousarray(Bd))

    def _check_fresh(self):
        if self._workspace is not None and self._workspace.generation != self._generation:
            raise RuntimeError("stale factorization: its workspace was refactorized since")

    def _sign_and_diagonal(self):
        """Sign of the permutations and the diagonal of U."""
        self._check_fresh()
        if isinstance(self._lu, tuple):
            lu, piv = self._lu
            sign = -1 if np.count_nonzero(piv != np.arange(piv.size)) % 2 else 1
            if self._reduced is not None:         # det K = sign of the reordering * det S
                sign *= self._reduced[0].sign
            return sign, np.diagonal(lu)
        return _perm_parity(self._lu.perm_r) * _perm_parity(self._lu.perm_c), self._lu.U.diagonal()

    def slogdet(self):
        """``(sign, log|det|)`` of ``[J; b^T]`` from the LU (pivots' parity, the diagonal)."""
        sign, d = self._sign_and_diagonal()
        if np.any(d == 0) or not np.all(np.isfinite(d)):
            return 0, -np.inf
        return sign * int(np.prod(np.sign(d))), float(np.sum(np.log(np.abs(d))))

    def det_sign(self) -> int:
        """Sign of ``det [J; b^T]`` (the branch-point test function; no logarithms: the ANM
        asks for it at every step)."""
        sign, d = self._sign_and_diagonal()
        if isinstance(self._lu, tuple):     # dense: U's diagonal is finite without zeros (__init__)
            return sign * (-1 if np.count_nonzero(d < 0) % 2 else 1)
        if not np.all(np.isfinite(d)):
            return 0
        negative = np.count_nonzero(d < 0)
        return 0 if np.count_nonzero(d) < d.size else sign * (-1 if negative % 2 else 1)


_LAPACK: dict = {}


def _lapack(name, a):
    """LAPACK's routine ``name`` (``getrf``, ``getrs``) for ``a``'s type, looked up once."""
    key = (name, a.dtype.char)
    if key not in _LAPACK:
        _LAPACK[key] = scipy.linalg.get_lapack_funcs(name, (a,))
    return _LAPACK[key]


def bordered_factor(J, border, counters: Counters | None = None) -> _Bordered:
    """Factorize ``[J; border^T]`` once (LAPACK getrf); ``.solve(rhs)``."""
    return _Bordered(J, np.asarray(border, dtype=float), counters)


def factor_jacobian(disc, Z, border, counters: Counters | None = None, *, scales: bool = False):
    """Assemble ``J = dR/dZ(Z)`` and factorize ``[J; border^T]`` (one LU).

    A dense Jacobian is assembled into (or copied to) the discretization's reusable buffer
    and factorized in place (:class:`_Workspace`); discretizations whose ``jacobian``
    accepts ``out=`` (a zero-filled ``(m, m+1)`` view; class attribute
    ``jacobian_accepts_out``) write it there directly.  Sparse Jacobians go to ``splu``.
    The factorization stays valid until the next call on the same discretization.  A dense
    Jacobian with identity rows (the discretization's ``elimination``, contract item 18: the
    AFT's kinematic states) is factorized through their Schur complement (:class:`_Reduction`;
    measured at the belt's H = 48: the LU of 197 unknowns 150-166 us, of the 101 left ~35 us).

    Returns
    -------
    lu : _Bordered
        ``.solve(rhs)``, ``.det_sign()``.
    scale : ndarray or None
        With ``scales=True``, the row sizes ``|J| |Z|`` (:func:`row_scales`), computed
        before ``J`` is overwritten by its factors.
    """
    if counters is not None:
        counters.jacobian_evaluations += 1
    border = np.asarray(border, dtype=float)
    if disc.jacobian_accepts_out:
        ws = _Workspace.of(disc)
        J = ws.K[:-1]
        J[...] = 0.0
        disc.jacobian(Z, out=J)
        scale = row_scales(J, Z) if scales else None
        checked = scale is not None and np.isfinite(scale).all() and np.isfinite(Z).all()
        return _Bordered(None, border, counters, workspace=ws, checked=checked,
                         elimination=disc.elimination), scale
    J = disc.jacobian(Z)
    scale = row_scales(J, Z) if scales else None
    if is_sparse(J):
        return _Bordered(J, border, counters), scale
    return _Bordered(J, border, counters, workspace=_Workspace.of(disc), elimination=disc.elimination), scale


def row_scales(J, Z, block: int = 256):
    """Size of the terms of each equation, ``|J| |Z|`` (floored), for relative residuals.

    A dense ``J`` is read in column blocks (no second ``m x m`` array).  (A floor per
    variable's block of harmonics, which would hide the FFT rounding of high harmonics
    whose terms are 1e-9 of their equation's largest, also hides the errors of the small
    harmonics next to a Hopf point: the ANM then accepts end points that derail the branch,
    tests/engine/test_periodic.py::test_closed_branch_returns_to_start.)
    """
    Z = np.abs(np.asarray(Z, dtype=float))
    if is_sparse(J):
        s = np.asarray(abs(J) @ Z).ravel()
    else:
        s = np.zeros(J.shape[0])
        for c in range(0, J.shape[1], block):
            s += np.abs(J[:, c:c + block]) @ Z[c:c + block]
    return np.maximum(s, 1e-12 * max(float(s.max()), 1e-300))
