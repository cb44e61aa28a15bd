"""Error estimates of a periodic orbit's discretization, point by point (DESIGN §5.8, issue 26).

Each estimate is a relative error of the orbit: the largest, over the states, of the norm of
a state's correction divided by the norm of the state (floored at 1e-9 of the largest state's
norm, so that a state at rest does not divide by zero), the measure that
``drivers/_forced._change`` uses between two harmonic counts.

Harmonic balance of the states (AFT, DESIGN §5.0):

``err_trunc`` (truncation)
    The defect of the ODE of the balanced orbit ``x_H`` on a finer time grid, turned into an
    orbit error by one Newton step of the larger balance.  ``x_H`` padded with zeros to
    ``2H`` harmonics is evaluated on the default samples of ``2H`` (about twice as many);
    its residual there is ``f(x_H) - omega D x_H`` projected on the harmonics ``0..2H``: the
    harmonics ``H+1..2H`` of ``f(x_H)`` that the balance discards, and the aliasing of the
    coarse grid in ``0..H``.  The Newton correction ``dZ = -J_2H^{-1} R_2H`` (``lam`` held) is
    the first-order change from ``x_H`` to ``x_2H``; with a spectrum decaying like ``rho^k``
    it is the error of ``x_H`` up to a relative ``rho^H`` (Newton's quadratic convergence on a
    residual of that size).  This is the deferred-correction (defect) error estimate of
    boundary value solvers (Ascher, Mattheij and Russell, *Numerical Solution of Boundary
    Value Problems for ODEs*, SIAM 1995, §5.6), here with the finer discretization in the
    frequency domain.
``err_alias`` (aliasing)
    The same Newton step at ``H`` harmonics between the AFT's ``n_t`` samples and ``2 n_t``:
    what the aliasing of the harmonics of ``f(x(theta))`` above ``n_t - H`` moves the orbit by
    (DESIGN §5.8: "the same residual with twice the samples").
``err_decay`` (decay of the retained spectrum)
    The share of the last quarter of the harmonics in each state's norm (as
    ``drivers/_forced._tails``): no solve, a cheap indicator where the spectrum decays
    geometrically (it is then the error times a factor of order one), not an estimate where
    it does not.
``decay_rate``
    The geometric decay per harmonic ``rho`` of the retained spectrum (least squares on the
    logarithm of the harmonics' amplitudes, upper half), which the adaptive harmonic count
    (``drivers/_adaptive.py``) uses to extrapolate the truncation error to another ``H``.

Collocation of the states:

``err_mesh`` (mesh defect)
    One Newton step of the collocation on the mesh with twice the sub-intervals from the
    orbit's own piecewise polynomials (their defect at the finer mesh's Gauss points), as
    ``err_trunc`` for the harmonic balance.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .._sparse import is_sparse
from ..errors import ConvergenceError
from ._reduction import _Reduction
from ._state_collocation import StateCollocationDiscretization

__all__ = ["ERROR_COLUMNS", "orbit_errors", "relative_change", "decay_rate"]

#: the columns :func:`orbit_errors` fills, by discretization kind
ERROR_COLUMNS = {"aft": ("err_trunc", "err_alias", "err_decay", "decay_rate"),
                 "collocation-states": ("err_mesh",)}


#: an orbit whose oscillating part is below this share of its norm is taken for the equilibrium
#: it meets (the end of a branch at a Hopf point): its phase is nearly undetermined, so the
#: bordered Newton step amplifies rounding there, and it gets no estimate (NaN)
_AT_EQUILIBRIUM = 1e-6


def relative_change(dU, U):
    """Largest norm of a state's change ``dU`` (n, k) relative to its norm in ``U`` (n, k)
    (floored at 1e-9 of the largest state's norm)."""
    norms = np.linalg.norm(U, axis=1)
    scale = np.maximum(norms, 1e-9 * max(float(norms.max()), 1e-300))
    return float(np.max(np.linalg.norm(dU, axis=1) / scale))


def decay_rate(U) -> float:
    """Geometric decay per harmonic of the coefficients ``U`` (n, 2H+1): ``exp`` of the slope
    of a least-squares line through ``log`` of the largest state amplitude (relative to the
    state's norm) of each harmonic in the upper half ``H/2..H``.  1.0 when it cannot be
    measured (fewer than 4 harmonics, or nothing above rounding)."""
    H = (U.shape[1] - 1) // 2
    if H < 4:
        return 1.0
    norms = np.maximum(np.linalg.norm(U, axis=1), 1e-300)[:, None]
    amp = (np.hypot(U[:, 1::2], U[:, 2::2]) / norms).max(axis=0)         # (H,)
    k = np.arange(1, H + 1)
    sel = (k >= H // 2) & (amp > 1e-15)
    if sel.sum() < 3:
        return 1.0
    # the least-squares slope in closed form (what ``np.polyfit(k, y, 1)[0]`` solves, without
    # its scaled lstsq: 0.25 ms a call, each step end of the adaptive count makes one)
    x, y = k[sel] - k[sel].mean(), np.log(amp[sel])
    slope = float(x @ (y - y.mean())) / float(x @ x)
    return float(min(np.exp(slope), 1.0))


_GETRS = {}
_GETRF = {}


def _lu_solve(lu, b):
    """``scipy.linalg.lu_solve(lu, b)`` by LAPACK's getrs directly (the routine it wraps): the
    wrapper's argument handling costs about a third of a solve at the belt's 476 unknowns
    (0.49 ms against 0.32 ms, two right-hand sides), and the estimates make about six per step."""
    a = lu[0]
    getrs = _GETRS.get(a.dtype.char)
    if getrs is None:
        getrs = _GETRS[a.dtype.char] = scipy.linalg.get_lapack_funcs("getrs", (a,))
    x, info = getrs(a, lu[1], b)
    if info != 0:
        raise ValueError(f"getrs: illegal argument {-info}")
    return x


def _factor(A):
    """LU of ``A`` (F order, in place: it is not used afterwards) by LAPACK's getrf directly
    (what ``scipy.linalg.lu_factor`` wraps, without its checks), None if singular."""
    getrf = _GETRF.get(A.dtype.char)
    if getrf is None:
        getrf = _GETRF[A.dtype.char] = scipy.linalg.get_lapack_funcs("getrf", (A,))
    lu, piv, info = getrf(A, overwrite_a=True)
    d = np.abs(lu.diagonal())
    # a NaN or inf of the matrix reaches U's diagonal (every later pivot depends on it)
    if info < 0 or not np.all(np.isfinite(d)) or d.min() == 0.0:
        return None
    return lu, piv


class _FrozenLU:
    """The LU of the bordered Jacobian of an earlier point of the branch, kept to solve at the
    next points (the Jacobian changes little from one step end to the next).

    A solve at a new point first refines the kept LU's answer on that point's own matrix
    (iterative refinement, ``x += P^{-1} (b - A x)``, every right-hand side at once, at most
    :attr:`SWEEPS` sweeps), then, if that contracts too slowly, runs GMRES
    (``scipy.sparse.linalg.gmres``, relative residual :attr:`GMRES_RTOL`, at most
    :attr:`RESTART` iterations) from there, preconditioned by the kept LU.  An answer is
    accepted only if the kept LU's correction of it, ``P^{-1} (b - A x)`` (the error of ``x``
    to first order in ``I - P^{-1} A``), is below :attr:`RTOL` of ``x``: the correction is
    that point's Newton step to 0.1 %, far inside what an error estimate needs.  Otherwise the
    point's matrix is factored and kept; it is also factored (for the next points) when the
    sweeps and GMRES together took more than :attr:`REFRESH` iterations, the sign that the kept
    LU has gone stale.

    Measured (``OPENBLAS_NUM_THREADS=1``): the friction damper's frequency response
    (``2H = 306``, 2452 unknowns, 117 step ends) 65 s -> 28 s of CPU for the whole branch with
    GMRES alone; seed 004's eps = 1e3 -> 1e4 branch at ``H = 300`` (2402 unknowns, 97 points)
    needs 23 factorizations instead of 97.  The estimates agree with the direct solve's to
    4e-6 relative.  The sweeps before GMRES (a GMRES call costs about 1 ms of Python on top of
    its products): the belt's default branch (seed 000, 189 step ends, up to 476 unknowns)
    3.1 -> 2.6 s of CPU in-process, 4.4 sweeps per solve on average; the damper's response
    18.7 -> 17.8 s, estimates equal to 2e-5 relative.
    """

    RTOL = 1e-3
    SWEEPS = 4
    RESTART = 20
    GMRES_RTOL = 1e-5
    REFRESH = 8

    def __init__(self):
        self.lu = None
        self.factorizations = 0
        self.last_iterations = 0

    def _factor(self, A):
        """Factor ``A`` (in place: it is not used afterwards) and keep it; None if singular."""
        lu = self.lu = _factor(A)
        if lu is not None:
            self.factorizations += 1
        return lu

    def _iterative(self, A, B):
        lu = self.lu
        X, self.last_iterations = np.zeros_like(B), 0
        cols = np.flatnonzero(np.any(B, axis=0))
        if cols.size == 0:
            return X
        # iterative refinement on the kept LU, every column at once (one product and one
        # triangular solve per sweep): its correction is the acceptance test itself, and where
        # the kept LU is close to the point's matrix (most step ends) a few sweeps meet it
        b = B[:, cols]
        x = _lu_solve(lu, b)
        for sweep in range(1, self.SWEEPS + 1):
            e = _lu_solve(lu, b - A @ x)
            x += e
            if not np.all(np.isfinite(x)):
                return None
            if np.all(np.linalg.norm(e, axis=0) <= self.RTOL * np.linalg.norm(x, axis=0)):
                self.last_iterations = sweep
                X[:, cols] = x
                return X
        # contracting too slowly: GMRES, preconditioned by the same LU, from there (scipy.sparse
        # imported here: the belt's estimates never get there, and it costs a command 0.01 s)
        import scipy.sparse.linalg
        P = scipy.sparse.linalg.LinearOperator(A.shape, matvec=lambda v: _lu_solve(lu, v),
                                               dtype=float)
        self.last_iterations = self.SWEEPS
        for j, col in enumerate(cols):
            its = []
            xj, _ = scipy.sparse.linalg.gmres(A, b[:, j], x0=x[:, j], M=P, rtol=self.GMRES_RTOL, atol=0.0,
                                              restart=self.RESTART, maxiter=1, callback=its.append,
                                              callback_type="pr_norm")
            self.last_iterations = max(self.last_iterations, self.SWEEPS + len(its))
            e = _lu_solve(lu, b[:, j] - A @ xj)
            if not (np.all(np.isfinite(xj)) and np.linalg.norm(e) <= self.RTOL * np.linalg.norm(xj)):
                return None
            X[:, col] = xj
        return X

    def solve(self, A, B):
        """``A^{-1} B`` to the accuracy of the class docstring, or None (a singular ``A``)."""
        if self.lu is not None:
            X = self._iterative(A, B)
            if X is not None:
                if self.last_iterations > self.REFRESH:
                    self._factor(A)          # a stale preconditioner: the next points get this one
                return X
        lu = self._factor(A)
        return None if lu is None else _lu_solve(lu, B)


class _BorderedSystem:
    """The bordered Newton matrix ``[J(Z); t^T]`` of one discretization ``disc`` along a branch,
    solved at one point after another.

    Below :attr:`DIRECT_BELOW` unknowns the matrix is factorized at every point, after the
    reduction to the Schur complement of its identity rows where the discretization has them
    (its ``elimination``, contract item 18: the AFT's kinematic states ``x_i' = x_j``;
    :class:`._reduction._Reduction`, as the engine's bordered LU does): exact, and about half
    the unknowns.  Larger systems keep the full matrix, solved by a :class:`_FrozenLU` kept
    along the branch: its acceptance test bounds the kept LU's correction of the unknowns it
    solves for, and on the reduced system the eliminated unknowns (``x_c = b_r - B x_o``) can
    carry a much larger error (measured on the belt at H = 130, random right-hand sides,
    points a quarter of the branch apart: 0.47 relative where the full matrix's kept LU gave
    6e-4).

    Measured (``python benchmarks/run.py estimates``, ``OPENBLAS_NUM_THREADS=1``, machine
    shared): the 192 estimates of the belt's default diagram (seed 000, the 2H balance up to
    476 unknowns, 239 after the reduction) 3.1 ms each against 4.4 ms with the full matrix and
    a kept LU (4.4 refinement sweeps on average, GMRES at 84 of 182 points), medians of 5
    alternated rounds; in a quieter minute 2.2 against 3.6 ms.  The estimates then are the
    exact Newton steps (the kept LU's differ from them by up to 2e-3 relative, its acceptance
    tolerance).  From :attr:`DIRECT_BELOW` on the kept LU stays (the friction damper's 2452
    unknowns): on random matrices 3e-3 from the kept one, an LU and its solve took 0.8 ms at
    240 unknowns against 2.3 ms for the kept LU's answer (GMRES after 4 sweeps), 2.7 against
    2.2 ms at 400 and 41 against 24 ms at 1200 (medians of 20).
    """

    DIRECT_BELOW = 400

    def __init__(self, disc):
        self.disc = disc
        self.frozen = _FrozenLU()
        e = disc.elimination if getattr(disc, "jacobian_accepts_out", False) else None
        self.red = None if e is None else _Reduction(e, disc.size)
        # the reduced system's bordered matrix, refilled at every point (K itself is never
        # factorized: the Schur complement is a new array)
        self.K = None if self.red is None else np.zeros((disc.m + 1, disc.size), order="F")

    def _assemble(self, Z, t, A=None):
        disc = self.disc
        if A is None:            # Fortran (LAPACK) order: factorized in place, no copy
            A = np.zeros((disc.m + 1, disc.size), order="F")
        else:
            A[:disc.m] = 0.0
        if getattr(disc, "jacobian_accepts_out", False):
            disc.jacobian(Z, out=A[:disc.m])
        else:
            A[:disc.m] = disc.jacobian(Z)
        A[disc.m] = t
        return A

    def solve(self, Z, t, B):
        """``[J(Z); t^T]^{-1} B`` (B (size, k)), or None (a singular matrix)."""
        if self.red is not None and self.disc.size - self.red.rows.size < self.DIRECT_BELOW:
            blocks = self.red.blocks(self._assemble(Z, t, self.K))
            if blocks is not None:
                S, C, pv, Bd = blocks
                lu = _factor(S)
                return None if lu is None else self.red.expand(B, _lu_solve(lu, self.red.reduce(B, C)), pv, Bd)
            A = self.K.copy(order="F")        # not an identity at this point: the full matrix
        else:
            A = self._assemble(Z, t)
        if A.shape[0] < self.DIRECT_BELOW:
            lu = _factor(A)
            return None if lu is None else _lu_solve(lu, B)
        return self.frozen.solve(A, B)


def _bordered_step(disc, Z, t, rhs, system=None, factor=None):
    """Newton corrections of ``disc`` at ``Z`` for the right-hand sides ``rhs`` (m, k),
    bordered by the branch's unit tangent ``t`` (the correction is orthogonal to it: no
    singularity at folds).  One solve for all of them: by ``factor`` (as :func:`orbit_errors`'s)
    if given, else by ``system``, a :class:`_BorderedSystem` of ``disc`` kept along the branch;
    returns the states' relative change of each (:func:`relative_change`)."""
    B = np.zeros((disc.size, rhs.shape[1]))
    B[:disc.m] = rhs
    if factor is not None:
        dZ = factor(disc, Z, t).solve(B)
    else:
        dZ = (system if system is not None else _BorderedSystem(disc)).solve(Z, t, B)
    if dZ is None:
        return [np.nan] * rhs.shape[1]
    n_coef = disc.n_coef
    U = Z[:n_coef].reshape(-1, disc.nh)
    return [relative_change(dZ[:n_coef, j].reshape(U.shape), U) for j in range(rhs.shape[1])]


class _AFTErrors:
    """The estimates of an AFT discretization ``disc`` (module docstring): the discretization at
    ``2H`` (with the default samples of ``2H``, about ``2 n_t``) built once for a branch."""

    def __init__(self, disc, factor=None):
        self.disc, self.factor = disc, factor
        self.big, _ = disc.resize(np.zeros(disc.size), 2 * disc.H)
        big = self.big
        # the rows of the coarse residual in the big one (state i, coefficient k -> i (4H+1) + k;
        # the phase row last) and the big rows of harmonics H+1..2H (the truncation)
        nv = disc.n_coef // disc.nh
        rows = (np.arange(nv)[:, None] * big.nh + np.arange(disc.nh)[None, :]).ravel()
        self.rows = np.append(rows, big.m - 1) if disc.m > disc.n_coef else rows
        self.high = np.ones(big.m, dtype=bool)
        self.high[self.rows] = False
        self.system = _BorderedSystem(big)

    def _pad(self, Z):
        U, omega, lam = self.disc.split(Z)
        U2 = np.zeros((U.shape[0], self.big.nh))
        U2[:, :U.shape[1]] = U
        return self.big.pack(U2, omega, lam)

    def __call__(self, Z, t):
        U = self.disc.split(Z)[0]
        if np.linalg.norm(U[:, 1:]) <= _AT_EQUILIBRIUM * np.linalg.norm(U):
            raise ValueError("an equilibrium (no oscillation): no orbit error")
        out = dict(err_decay=_tail_share(U), decay_rate=decay_rate(U))
        Zb, tb = self._pad(Z), self._pad(t)
        tb /= np.linalg.norm(tb)
        big = self.big
        R = big.residual(Zb)
        # the harmonics 0..H: what the finer grid changes (aliasing), not what the engine's
        # tolerance left of the coarse residual; entries at the rounding level of either
        # residual are rounding, not a defect (next to a Hopf point the bordered step would
        # amplify them)
        R[self.rows] -= self.disc.residual(Z)
        noise = big.residual_noise(Zb)
        noise[self.rows] += self.disc.residual_noise(Z)
        R[np.abs(R) <= noise] = 0.0
        rhs = np.zeros((big.m, 2))
        rhs[self.high, 0] = -R[self.high]
        rhs[~self.high, 1] = -R[~self.high]
        out["err_trunc"], out["err_alias"] = _bordered_step(big, Zb, tb, rhs, self.system, self.factor)
        return out


def _tail_share(U):
    H = (U.shape[1] - 1) // 2
    q = max(1, H // 4)
    norms = np.linalg.norm(U, axis=1)
    top = np.linalg.norm(U[:, 2 * (H - q) + 1:], axis=1)
    return float(np.max(top / np.maximum(norms, 1e-9 * max(float(norms.max()), 1e-300))))


class _MeshErrors:
    """``err_mesh`` of a collocation of the states (module docstring): the mesh with twice the
    sub-intervals, built once for a branch."""

    def __init__(self, disc):
        self.disc = disc
        if getattr(disc, "uniform", True):
            self.fine = StateCollocationDiscretization(disc.model, 2 * disc.n_intervals, disc.degree,
                                                       phase_state=disc.sizes.get("phase_state", 0))
        else:                    # every interval of a non-uniform mesh halved
            mid = 0.5 * (disc.mesh[:-1] + disc.mesh[1:])
            self.fine = disc.with_mesh(np.sort(np.concatenate([disc.mesh, mid])))

    def _map(self, Z, omega, lam):
        """The fine mesh's unknowns of the piecewise polynomials of ``Z`` (an orbit or a
        tangent: linear in the nodal values) over the period ``2 pi / omega``."""
        if not getattr(self.disc, "uniform", True):
            # the halved mesh holds the polynomials exactly (same degree): evaluated at its nodes
            return self.disc.to_mesh(Z, self.fine)
        T = 2 * np.pi / omega
        return self.fine.from_states(lambda t: self.disc.states_at(Z, np.asarray(t, dtype=float) / T), lam, omega)

    def __call__(self, Z, t):
        omega = float(self.disc.unpack(Z)["omega"])
        Zf = self._map(Z, omega, float(Z[-1]))
        tf = self._map(t, omega, float(t[-1]))
        # the tangent's omega and lam components are its own, not the orbit's
        if self.disc.omega_index is not None:
            tf[self.fine.omega_index] = t[self.disc.omega_index]
        tf[-1] = t[-1]
        tf /= np.linalg.norm(tf)
        n, G = self.disc.model.n, self.fine.degree * self.fine.n_intervals
        X = Zf[:n * G].reshape(n, G)
        if np.linalg.norm(X - X.mean(axis=1, keepdims=True)) <= _AT_EQUILIBRIUM * np.linalg.norm(X):
            raise ValueError("an equilibrium (no oscillation): no orbit error")
        fine = self.fine
        R = fine.residual(Zf)
        J = fine.jacobian(Zf)
        b = np.append(-R, 0.0)
        if is_sparse(J):                    # the collocation's Jacobian is sparse (banded blocks)
            import scipy.sparse.linalg
            dZ = scipy.sparse.linalg.spsolve(scipy.sparse.vstack([J, tf[None, :]], format="csc"), b)
        else:
            dZ = scipy.linalg.lu_solve(scipy.linalg.lu_factor(np.vstack([J, tf[None, :]]), check_finite=False), b,
                                       check_finite=False)
        return dict(err_mesh=relative_change(dZ[:n * G].reshape(n, G), Zf[:n * G].reshape(n, G)))


def orbit_errors(disc, solutions, tangents, points=None, factor=None):
    """Error estimates (module docstring) of the periodic orbits ``solutions`` (P, size).

    Parameters
    ----------
    disc : Discretization
        The branch's discretization: the AFT harmonic balance of the states (``kind ==
        "aft"``) or the collocation of the states (``"collocation-states"``); others get no
        estimate (an empty dict).
    solutions, tangents : array_like (P, size)
        The orbits and the branch's unit tangents there (the Newton steps are bordered by
        the tangent).
    points : array_like of int, optional
        The points to estimate (default all); the others are NaN.
    factor : callable, optional
        ``factor(disc, Z, border)`` -> an object whose ``solve(rhs)`` solves the bordered system
        ``[J(Z); border^T] x = rhs`` (the engine's factorization, ``lambda d, Z, b:
        engine._bordered.factor_jacobian(d, Z, b)[0]``: for the AFT it eliminates the
        kinematic states' identity rows first, contract item 18, and factorizes the Schur
        complement of half the size, measured on the belt's H = 57 estimates: 2.8 ms per point
        against 6.9 ms, the corrections equal to 8e-11 relative); default the dense bordered
        matrix solved by a :class:`_FrozenLU` kept along the branch (this layer lies below
        the engine).  Harmonic balance only.

    Returns
    -------
    dict
        Column name -> ndarray (P,) (names in :data:`ERROR_COLUMNS`); NaN where the estimate
        could not be formed (a singular bordered Jacobian).
    """
    kind = getattr(disc, "kind", None)
    names = ERROR_COLUMNS.get(kind)
    if names is None or getattr(disc, "H", 1) == 0 or getattr(disc, "nu", 1) != 1:
        return {}
    sol = np.asarray(solutions, dtype=float).reshape(-1, disc.size)
    tan = np.asarray(tangents, dtype=float).reshape(-1, disc.size)
    cols = {k: np.full(len(sol), np.nan) for k in names}
    one = _AFTErrors(disc, factor) if kind == "aft" else _MeshErrors(disc)
    for i in (range(len(sol)) if points is None else points):
        try:
            values = one(sol[i], tan[i])
        except (ConvergenceError, ValueError, np.linalg.LinAlgError, FloatingPointError):
            continue
        for k, v in values.items():
            cols[k][i] = v if np.isfinite(v) else np.nan
    return cols
