"""Newton corrections and pseudo-arclength predictor-corrector continuation (DESIGN §5.3).

Works on any discretization honouring ``_discretization.py`` (only ``residual`` and
``jacobian`` are used), so it also continues shooting, which has no quadratic form.

Every linear solve uses the bordered matrix ``[J(Z); b^T]`` of size ``(m+1) x (m+1)``:
the m equations ``R(Z) = 0`` plus one linear equation ``b . Z = c`` that fixes the
position on the branch (pseudo-arclength, fixed ``lam``, fixed amplitude, ...).
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from .errors import ConvergenceError

__all__ = ["Counters", "bordered_factor", "factor_jacobian", "row_scales", "correct", "tangent_at",
           "pseudo_arclength"]


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
    """LU of the bordered matrix ``[J; b^T]`` (dense or sparse J)."""

    def __init__(self, J, border, counters: Counters | None, workspace: _Workspace | None = None,
                 checked: bool = False):
        self._workspace = None
        if scipy.sparse.issparse(J):
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
                raise ConvergenceError("NaN/inf in the Jacobian (a validity condition of the recast "
                                       "is probably violated)")
            with np.errstate(all="ignore"), warnings.catch_warnings():
                # an exactly singular matrix is reported below as a ConvergenceError
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                self._lu = scipy.linalg.lu_factor(K, overwrite_a=True, check_finite=False)
            self._solve = lambda rhs: scipy.linalg.lu_solve(self._lu, rhs, check_finite=False)
            d = np.diag(self._lu[0])
            # a NaN produced by the elimination reaches the diagonal or the solves (checked there)
            if not np.all(np.isfinite(d)) or np.min(np.abs(d)) == 0.0:
                raise ConvergenceError("singular bordered tangent matrix")
        if counters is not None:
            counters.factorizations += 1

    def solve(self, rhs):
        if self._workspace is not None and self._workspace.generation != self._generation:
            raise RuntimeError("stale factorization: its workspace was refactorized since")
        out = self._solve(rhs)
        if not np.all(np.isfinite(out)):
            raise ConvergenceError("the bordered tangent system has no finite solution (singular matrix)")
        return out

    def slogdet(self):
        """``(sign, log|det|)`` of ``[J; b^T]`` from the LU (pivots' parity, the diagonal)."""
        if self._workspace is not None and self._workspace.generation != self._generation:
            raise RuntimeError("stale factorization: its workspace was refactorized since")
        if isinstance(self._lu, tuple):
            lu, piv = self._lu
            sign = -1 if np.count_nonzero(piv != np.arange(piv.size)) % 2 else 1
            d = np.diag(lu)
        else:
            sign = _perm_parity(self._lu.perm_r) * _perm_parity(self._lu.perm_c)
            d = self._lu.U.diagonal()
        if np.any(d == 0) or not np.all(np.isfinite(d)):
            return 0, -np.inf
        return sign * int(np.prod(np.sign(d))), float(np.sum(np.log(np.abs(d))))

    def det_sign(self) -> int:
        """Sign of ``det [J; b^T]`` (the branch-point test function)."""
        return self.slogdet()[0]


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


def bordered_factor(J, border, counters: Counters | None = None) -> _Bordered:
    """Factorize ``[J; border^T]`` once (``scipy.linalg.lu_factor``); ``.solve(rhs)``."""
    return _Bordered(J, np.asarray(border, dtype=float), counters)


def factor_jacobian(disc, Z, border, counters: Counters | None = None, *, scales: bool = False):
    """Assemble ``J = dR/dZ(Z)`` and factorize ``[J; border^T]`` (one LU).

    A dense Jacobian is assembled into (or copied to) the discretization's reusable buffer
    and factorized in place (:class:`_Workspace`); discretizations whose ``jacobian``
    accepts ``out=`` (a zero-filled ``(m, m+1)`` view; class attribute
    ``jacobian_accepts_out``) write it there directly.  Sparse Jacobians go to ``splu``.
    The factorization stays valid until the next call on the same discretization.

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
    if getattr(disc, "jacobian_accepts_out", False):
        ws = _Workspace.of(disc)
        J = ws.K[:-1]
        J[...] = 0.0
        disc.jacobian(Z, out=J)
        scale = row_scales(J, Z) if scales else None
        checked = scale is not None and np.isfinite(scale).all() and np.isfinite(Z).all()
        return _Bordered(None, border, counters, workspace=ws, checked=checked), scale
    J = disc.jacobian(Z)
    scale = row_scales(J, Z) if scales else None
    if scipy.sparse.issparse(J):
        return _Bordered(J, border, counters), scale
    return _Bordered(J, border, counters, workspace=_Workspace.of(disc)), scale


def row_scales(J, Z, block: int = 256):
    """Size of the terms of each equation, ``|J| |Z|`` (floored), for relative residuals.

    A dense ``J`` is read in column blocks (no second ``m x m`` array).  (A floor per
    variable's block of harmonics, which would hide the FFT rounding of high harmonics
    whose terms are 1e-9 of their equation's largest, also hides the errors of the small
    harmonics next to a Hopf point: the ANM then accepts end points that derail the branch,
    tests/runtime/test_periodic.py::test_closed_branch_returns_to_start.)
    """
    Z = np.abs(np.asarray(Z, dtype=float))
    if scipy.sparse.issparse(J):
        s = np.asarray(abs(J) @ Z).ravel()
    else:
        s = np.zeros(J.shape[0])
        for c in range(0, J.shape[1], block):
            s += np.abs(J[:, c:c + block]) @ Z[c:c + block]
    return np.maximum(s, 1e-12 * max(float(s.max()), 1e-300))


def _check_finite(R, what="residual"):
    if not np.all(np.isfinite(R)):
        bad = np.flatnonzero(~np.isfinite(R))
        raise ConvergenceError(
            f"NaN/inf in the {what} (equations {bad[:5].tolist()}{'...' if len(bad) > 5 else ''}): "
            "a validity condition of the recast is probably violated (division by zero, "
            "negative sqrt auxiliary), or the step is too long")


def correct(disc, Z, border, value=None, *, counters: Counters | None = None, xtol: float = 1e-11,
            max_iter: int = 12, divergence_factor: float = 1e3, noise_floor: float | None = None):
    """Newton's method on ``R(Z) = 0, border . Z = value``.

    Parameters
    ----------
    disc : Discretization
        Provides ``residual`` and ``jacobian``.
    Z : ndarray
        Initial guess.
    border : ndarray
        Row of the extra linear equation.
    value : float, optional
        Its right-hand side; default ``border . Z`` (keep the guess's position).
    xtol : float
        Stop when the update ``|dZ|_2 <= xtol * |Z|_2``; by quadratic convergence the
        remaining error is then of order ``xtol**2``.
    max_iter : int
        Maximal number of iterations (each one factorization).
    divergence_factor : float
        Give up when the update grows by this factor over the first one.
    noise_floor : float, optional
        Also stop when the relative update is below ``noise_floor`` and no longer shrinks
        (a quadratically converging Newton at least halves it per iteration above the
        rounding noise of the solve): the rounding floor of an ill-conditioned system, e.g.
        a point condition of a saturated ``tanh`` whose integration constant barely moves
        the solution (DESIGN §2).  Default: the discretization's ``noise_floor`` attribute,
        or 0 (off: near a Hopf point the HBM is nearly singular too, and accepting its
        noise floor there derails the continuation).

    Returns
    -------
    Z : ndarray
        The corrected point.
    iterations : int

    Raises
    ------
    ConvergenceError
        If the iteration diverges, meets NaN, or does not converge in ``max_iter``.
    """
    with _Workspace.scope(disc):
        return _correct(disc, Z, border, value, counters, xtol, max_iter, divergence_factor, noise_floor)


def _correct(disc, Z, border, value, counters, xtol, max_iter, divergence_factor, noise_floor):
    Z = np.array(Z, dtype=float)
    border = np.asarray(border, dtype=float)
    if value is None:
        value = float(border @ Z)
    if noise_floor is None:
        noise_floor = float(getattr(disc, "noise_floor", 0.0))
    first = None
    last = np.inf
    for it in range(1, max_iter + 1):
        R = disc.residual(Z)
        if counters is not None:
            counters.residual_evaluations += 1
        _check_finite(R)
        rhs = np.append(-R, value - border @ Z)
        lu, _ = factor_jacobian(disc, Z, border, counters)
        dZ = lu.solve(rhs)
        del lu
        Z = Z + dZ
        nd = np.linalg.norm(dZ)
        if first is None:
            first = nd
        elif nd > divergence_factor * max(first, 1e-300):
            raise ConvergenceError(f"Newton correction diverges (update {nd:.3g} after {it} iterations)")
        size = max(np.linalg.norm(Z), 1e-300)
        if nd <= xtol * size:
            return Z, it
        if nd <= noise_floor * size and nd > 0.5 * last:
            return Z, it
        last = nd
    raise ConvergenceError(f"Newton correction did not converge in {max_iter} iterations "
                           f"(last update {nd:.3g}, |Z| = {np.linalg.norm(Z):.3g})")


def tangent_at(disc, Z, previous, counters: Counters | None = None, J=None, *, with_det_sign=False):
    """Unit tangent of the branch at Z, oriented like ``previous`` (null vector of dR/dZ).

    With ``with_det_sign=True`` also returns the sign of ``det [J; t^T]`` for the returned
    tangent ``t`` (the branch-point test function), from the same LU: when ``J`` has rank
    ``m`` its rows span ``t``'s orthogonal complement, so
    ``det [J; b^T] = (b . t) det [J; t^T]`` for any border ``b``.
    """
    rhs = np.zeros(disc.m + 1)
    rhs[-1] = 1.0
    with _Workspace.scope(disc):
        if J is None:
            lu, _ = factor_jacobian(disc, Z, previous, counters)
        else:
            lu = bordered_factor(J, previous, counters)
        t = lu.solve(rhs)
        sign = lu.det_sign() if with_det_sign else 0
    t = t / np.linalg.norm(t)
    if not with_det_sign:
        return t
    return t, sign * int(np.sign(np.asarray(previous, dtype=float) @ t))


def pseudo_arclength(disc, Z0, t0, options, recorder, progress=None):
    """Pseudo-arclength predictor-corrector continuation (Keller).

    Predictor ``Z0 + h t0``; corrector Newton on ``R(Z) = 0, t0 . (Z - Zp) = 0``; step
    length adapted to the number of Newton iterations (target ``options.target_iterations``).
    Points are passed to ``recorder.add(Z, tangent)``; the recorder decides when to stop.
    """
    c = recorder.counters
    h = options.step
    Z, t = np.array(Z0, float), np.array(t0, float)
    while not recorder.done:
        if np.isfinite(options.max_lam_step) and abs(h * t[-1]) > options.max_lam_step:
            h = options.max_lam_step / abs(t[-1])
        Zp = Z + h * t
        try:
            Zn, its = correct(disc, Zp, t, float(t @ Zp), counters=c, xtol=options.newton_xtol,
                              max_iter=options.max_newton_iterations)
            tn, det_sign = tangent_at(disc, Zn, t, c, with_det_sign=True)
            # reject steps whose corrector went far from the predictor or whose tangent
            # turned sharply: both signal a jump to another branch
            if np.linalg.norm(Zn - Zp) > options.max_correction * abs(h):
                raise ConvergenceError(f"corrector moved {np.linalg.norm(Zn - Zp):.3g} from the "
                                       f"predictor (step {abs(h):.3g})")
            if abs(tn @ t) < np.cos(np.radians(options.max_angle)):
                raise ConvergenceError("the tangent turned by more than max_angle in one step")
        except ConvergenceError as err:
            if abs(h) / 2 < options.min_step:
                raise ConvergenceError(f"step length fell below min_step = {options.min_step:g} at "
                                       f"lam = {Z[-1]:.10g}: {err}") from err
            h /= 2
            continue
        c.steps += 1
        if tn @ t < 0:      # the corrector jumped over a turning point the wrong way
            tn, det_sign = -tn, -det_sign
        recorder.add(Zn, tn, step_length=h)
        recorder.note_det_sign(Zn, tn, det_sign)
        if progress is not None:
            progress(recorder)
        Z, t = Zn, tn
        h = float(np.clip(h * (options.target_iterations / max(its, 1)) ** 0.5,
                          options.min_step, options.max_step))
