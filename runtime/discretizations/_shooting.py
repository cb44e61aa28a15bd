"""Simple shooting on the original first-order ODE ``x' = f(x, t; p)`` of a model.

The periodic orbit is the fixed point of the flow map over one period (DESIGN §5.3,
shooting; seed ``004_*.txt`` uses the same "simple shooting method with a stiff-ODE
solver"): with ``phi(x0, T; lam)`` the state reached at time ``T`` from ``x0`` at ``t = 0``,

    phi(x0, T; lam) - x0 = 0                                  (n periodicity rows)
    f_k(x0; lam)         = 0                                  (phase condition, autonomous)

The phase condition puts the start of the orbit at an extremum of state ``k``
(``phase_state``, default 0), which is a fixed, continuation-friendly condition.  For a
forced model the period is the forcing period ``2 pi / w`` and there is no phase condition.

Newton's method needs ``d phi / d x0`` (the monodromy matrix ``M`` at convergence, whose
eigenvalues are the Floquet multipliers), ``d phi / d T = f(phi)`` and, for continuation,
``d phi / d lam``.  They come from integrating, together with the orbit, the variational
equation ``Phi' = J(x(t)) Phi, Phi(0) = I`` with the model's exact Jacobian ``model.jac``
and the parameter sensitivity ``s' = J s + df/dlam, s(0) = 0`` with the model's exact
``df/dlam`` (:meth:`Model.dfdlam`; a central difference only for a module without it: with
``atan(eps v)``, ``eps = 1e5`` (seed 004 eq. 7) a difference was 3-8 % wrong and Newton
converged only linearly).

The integrator is scipy's ``solve_ivp``, default ``LSODA``: it switches to its stiff BDF
mode with the model's Jacobian when the regularization sharpness ``n`` makes the belt
model stiff, and at the tight tolerances shooting needs it is far cheaper than scipy's
``Radau`` (measured on van der Pol, mu = 1, one period with the variational equation at
rtol = 1e-12: Radau 7359 steps / 3.1 s, LSODA 661 steps / 0.03 s, same period to 1e-13;
scipy's Radau error estimator is only third order).  For the implicit methods the
Jacobian of the augmented system is supplied block-diagonally (the coupling term ``(dJ/dx . Phi)`` is left out: it only slows
the simplified Newton of the implicit solver, never changes the solution).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy

from ..errors import ConvergenceError, InputError
from ..model._interface import Model
from ._base import Discretization


def forcing_period(model: Model, lam: float) -> float:
    """Period ``2 pi / w`` of a forced model (``w`` possibly the continuation parameter)."""
    name = model.forcing_frequency
    w = model.param_vector(lam)[model.parameters.index(name)]
    if not np.isfinite(w) or w <= 0:
        raise InputError(f"forcing frequency {name} = {w} must be positive and finite for shooting")
    return 2 * np.pi / w


def _check_options(method, rtol, atol, max_iter, tol):
    if method not in ("Radau", "BDF", "LSODA", "DOP853", "RK45", "RK23"):
        raise InputError(f"method={method!r} is not a scipy.integrate.solve_ivp method; use "
                         "'LSODA' (default), 'Radau', 'BDF' or 'DOP853'")
    if not (0 < rtol < 1) or not (atol > 0):
        raise InputError(f"rtol={rtol} and atol={atol} must be positive (rtol < 1)")
    if int(max_iter) < 1:
        raise InputError(f"max_iter={max_iter} must be at least 1")
    if not (tol > 0):
        raise InputError(f"tol={tol} must be positive")


class _Flow:
    """Flow of the original ODE with optional variational and lam-sensitivity equations."""

    def __init__(self, model: Model, lam: float, *, variational: bool, sensitivity: bool):
        self.model, self.lam = model, float(lam)
        self.n = model.n
        self.variational, self.sensitivity = variational, sensitivity
        self.p = model.param_vector(lam)
        self.nblocks = 1 + (self.n if variational else 0) + (1 if sensitivity else 0)
        self.size = self.n * self.nblocks

    def _f(self, t, x, p=None):
        return np.asarray(self.model.rhs(t, x, params=self.p if p is None else p), dtype=float)

    def _J(self, t, x):
        return np.asarray(self.model.jac(t, x, params=self.p), dtype=float)

    def dfdlam(self, t, x):
        """``df/dlam`` (exact where the model provides it: :meth:`Model.dfdlam`)."""
        return self.model.dfdlam(t, x, params=self.p)

    def fun(self, t, y):
        n = self.n
        x = y[:n]
        out = np.empty_like(y)
        out[:n] = self._f(t, x)
        if self.nblocks > 1:
            J = self._J(t, x)
            rest = y[n:].reshape(self.nblocks - 1, n).T      # columns: Phi e_1..e_n, s
            drest = J @ rest
            if self.sensitivity:
                drest[:, -1] += self.dfdlam(t, x)
            out[n:] = drest.T.ravel()
        return out

    def jac(self, t, y):
        J = self._J(t, y[: self.n])
        return np.kron(np.eye(self.nblocks), J)

    def initial(self, x0):
        y0 = np.zeros(self.size)
        y0[: self.n] = x0
        if self.variational:
            y0[self.n: self.n + self.n * self.n] = np.eye(self.n).ravel()  # rows of I = columns
        return y0

    def split(self, y):
        n = self.n
        x = y[:n]
        M = y[n: n + n * n].reshape(n, n).T if self.variational else None
        s = y[-n:] if self.sensitivity else None
        return x, M, s


def _integrate(flow: _Flow, x0, T, *, method, rtol, atol, events=None, dense_output=False):
    kw = dict(method=method, rtol=rtol, atol=atol, events=events, dense_output=dense_output)
    if method in ("Radau", "BDF", "LSODA"):
        kw["jac"] = flow.jac
    try:
        sol = scipy.integrate.solve_ivp(flow.fun, (0.0, T), flow.initial(x0), **kw)
    except (ValueError, FloatingPointError) as exc:  # e.g. NaN from a model outside its domain
        raise ConvergenceError(f"time integration over one period failed at lam={flow.lam}: {exc}") from exc
    if sol.status != 0 or not np.all(np.isfinite(sol.y[:, -1])):
        raise ConvergenceError(f"time integration over one period failed at lam={flow.lam}: {sol.message} "
                               "(try a smaller rtol/atol, method='Radau', or a better initial guess)")
    return sol


@dataclass
class PeriodicOrbit:
    """A periodic orbit of the original ODE found by shooting.

    Attributes
    ----------
    x0 : ndarray, shape (n,)
        State at ``t = 0`` (for autonomous models an extremum of state ``phase_state``).
    T : float
        Period.
    lam : float
        Continuation-parameter value.
    monodromy : ndarray, shape (n, n)
        ``d phi(x0, T) / d x0``, from the variational equation.
    multipliers : ndarray, shape (n,)
        Floquet multipliers (eigenvalues of ``monodromy``), sorted by decreasing modulus.
    ptp : ndarray, shape (n,)
        Peak-to-peak amplitude of each state, extrema located by root-finding on ``f_i = 0``.
    residual : float
        Final periodicity defect ``max_i |phi_i - x0_i| / scale_i`` (``scale_i = max_t |x_i|``).
    iterations : int
        Newton iterations.
    success : bool
    message : str
    status : str
        ``"converged"`` for an orbit found by Newton (the result convention of
        ``results/_result.py``; the orbit is a dataclass of its own, one layer lower).
    """

    x0: np.ndarray
    T: float
    lam: float
    monodromy: np.ndarray
    multipliers: np.ndarray
    ptp: np.ndarray
    residual: float
    iterations: int
    success: bool = True
    message: str = ""
    model: Model = field(default=None, repr=False)
    options: dict = field(default_factory=dict, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)
    status: str = "converged"

    @property
    def omega(self) -> float:
        """Angular frequency ``2 pi / T``."""
        return 2 * np.pi / self.T

    @property
    def floquet_multipliers(self) -> np.ndarray:
        return self.multipliers

    @property
    def trivial_multiplier_error(self) -> float:
        """Distance of the multiplier closest to 1 from 1 (autonomous orbits; NaN if forced)."""
        if self.model is not None and self.model.forced:
            return float("nan")
        return float(np.min(np.abs(self.multipliers - 1.0)))

    def times(self, n_t: int) -> np.ndarray:
        """Uniform grid ``T k / n_t``, ``k = 0..n_t-1`` (endpoint excluded, FFT-ready)."""
        return self.T * np.arange(int(n_t)) / int(n_t)

    def at(self, t, *, accurate: bool = True) -> np.ndarray:
        """States at arbitrary times ``t`` (array_like, any order, wrapped into one period).

        Parameters
        ----------
        t : array_like, shape (M,)
        accurate : bool
            ``True``: integrate segment by segment between the sorted times at the orbit's
            tolerances; ``False``: one integration and its dense output (cheaper, lower
            order; good enough for initial guesses).

        Returns
        -------
        ndarray, shape (n, M)
        """
        t = np.mod(np.asarray(t, dtype=float).ravel(), self.T)
        order = np.argsort(t)
        ts = t[order]
        flow = _Flow(self.model, self.lam, variational=False, sensitivity=False)
        opts = self.options
        kw = dict(method=opts["method"], rtol=opts["rtol"], atol=opts["atol"])
        if opts["method"] in ("Radau", "BDF", "LSODA"):
            kw["jac"] = flow.jac
        out = np.empty((self.model.n, t.size))
        if not accurate:
            sol = scipy.integrate.solve_ivp(flow.fun, (0.0, self.T), np.array(self.x0, dtype=float), dense_output=True, **kw)
            if sol.status != 0:
                raise ConvergenceError(f"sampling the orbit failed: {sol.message}")
            out[:, order] = sol.sol(ts)
            return out
        x = np.array(self.x0, dtype=float)
        t_prev = 0.0
        for idx, tk in zip(order, ts):
            if tk > t_prev:
                sol = scipy.integrate.solve_ivp(flow.fun, (t_prev, tk), x, **kw)
                if sol.status != 0:
                    raise ConvergenceError(f"sampling the orbit failed: {sol.message}")
                x = sol.y[:, -1]
                t_prev = tk
            out[:, idx] = x
        return out

    def samples(self, n_t: int) -> np.ndarray:
        """States on :meth:`times` ``(n_t)``, shape ``(n, n_t)``.

        Integrated segment by segment from sample to sample at the orbit's tolerances
        (not interpolated from a dense output, whose order is lower than the integrator's).
        """
        n_t = int(n_t)
        if n_t < 1:
            raise InputError(f"n_t={n_t} must be at least 1")
        if n_t in self._cache:
            return self._cache[n_t].copy()
        out = self.at(self.times(n_t))
        self._cache[n_t] = out
        return out.copy()


def _period_and_extrema(model, lam, x0, T, *, method, rtol, atol):
    """Integrate the orbit with the variational equation and events ``f_i = 0`` for the ptp."""
    n = model.n
    flow = _Flow(model, lam, variational=True, sensitivity=False)

    def make_event(i):
        return lambda t, y: flow._f(t, y[:n])[i]

    events = [make_event(i) for i in range(n)]
    sol = _integrate(flow, x0, T, method=method, rtol=rtol, atol=atol, events=events)
    x_end, M, _ = flow.split(sol.y[:, -1])
    lo = np.minimum(sol.y[:n].min(axis=1), x0)
    hi = np.maximum(sol.y[:n].max(axis=1), x0)
    for i in range(n):
        ye = sol.y_events[i]
        if len(ye):
            lo[i] = min(lo[i], ye[:, i].min())
            hi[i] = max(hi[i], ye[:, i].max())
    scale = np.maximum(np.abs(sol.y[:n]).max(axis=1), np.finfo(float).tiny)
    return x_end, M, hi - lo, scale


def converged_orbit(model: Model, lam: float, x0, T: float, *, iterations: int, method: str, rtol: float,
                    atol: float, **options) -> PeriodicOrbit:
    """The :class:`PeriodicOrbit` of a converged shooting solution ``(x0, T)``: one more
    integration with the variational equation gives its monodromy, multipliers, extrema and
    final defect.  ``options`` (e.g. ``tol``, ``phase_state``) are recorded in ``orbit.options``."""
    opts = dict(method=method, rtol=rtol, atol=atol)
    x0 = np.array(x0, dtype=float)
    x_end, M, ptp, scale = _period_and_extrema(model, lam, x0, T, **opts)
    mult = np.linalg.eigvals(M)
    mult = mult[np.argsort(-np.abs(mult))]
    residual = float(np.max(np.abs(x_end - x0) / scale))
    return PeriodicOrbit(x0=x0, T=float(T), lam=float(lam), monodromy=M, multipliers=mult, ptp=ptp,
                         residual=residual, iterations=int(iterations), success=True, message="converged",
                         model=model, options=dict(opts, **options))


class ShootingDiscretization(Discretization):
    """Shooting as a discretization for pseudo-arclength continuation.

    Unknown ``Z = [x0 (n), T, lam]`` for autonomous models (``m = n + 1`` equations:
    periodicity and the phase condition ``f_k(x0) = 0``), ``Z = [x0 (n), lam]`` for forced
    models (``m = n``, period ``2 pi / w``).  ``residual`` and ``jacobian`` follow
    ``_base.py``; the system is not quadratic, so ``quadratic`` and ``series_rhs``
    raise ``NotImplementedError`` (use the pseudo-arclength engine, not the ANM).

    The Jacobian column of ``lam`` comes from the sensitivity equation
    ``s' = J s + df/dlam`` (module docstring); everything is exact up to the integration
    tolerance, and Newton stops at its noise floor ``100 rtol``.

    Parameters
    ----------
    model : Model
    rtol, atol, method : see :func:`~frictionkit.runtime.drivers.find_periodic_orbit`.
    phase_state : int
        Index ``k`` of the phase condition ``f_k(x0) = 0``.
    periods : int
        Forced models: period = ``periods`` forcing periods (2 on a period-doubled branch).
    sensitivity : bool
        Integrate the sensitivity equation for the ``lam`` column of the Jacobian (default).
        ``False`` leaves that column zero and saves its integration: only for Newton at a
        fixed ``lam`` (a border ``lam = const``, :func:`~frictionkit.runtime.drivers.find_periodic_orbit`),
        whose update never moves ``lam`` whatever that column holds.
    """

    kind = "shooting"
    floquet_route = "monodromy"

    def __init__(self, model: Model, *, rtol: float = 1e-10, atol: float = 1e-13, method: str = "LSODA",
                 phase_state: int = 0, periods: int = 1, sensitivity: bool = True):
        _check_options(method, rtol, atol, 1, 1.0)
        self.sensitivity = bool(sensitivity)
        if int(periods) != periods or periods < 1:
            raise InputError(f"periods={periods} must be a positive integer")
        self.periods = int(periods)
        self.model = model
        self.n = model.n
        self.forced = model.forced
        self.m = self.n if self.forced else self.n + 1
        self.phase_state = int(phase_state)
        if not 0 <= self.phase_state < self.n:
            raise InputError(f"phase_state={phase_state} must index a state (0..{self.n - 1})")
        self.opts = dict(method=method, rtol=rtol, atol=atol)
        # the integration tolerance bounds what Newton can achieve: below 100 rtol an update
        # that no longer halves is integration noise (contract item 12); without this floor
        # Newton iterates on noise and the step control shortens every step
        self.noise_floor = 100 * rtol
        self._last = None

    # -- helpers ---------------------------------------------------------------------
    def _split(self, Z):
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z must have length {self.size} ([x0, T, lam] or [x0, lam]), got {Z.shape}")
        x0 = Z[: self.n]
        lam = Z[-1]
        T = self.periods * forcing_period(self.model, lam) if self.forced else Z[self.n]
        return x0, T, lam

    def _evaluate(self, Z):
        key = np.asarray(Z, dtype=float).tobytes()
        last = self._last                    # one read: another thread may replace it
        if last is not None and last[0] == key:
            return last[1]
        x0, T, lam = self._split(Z)
        if not T > 0:
            raise ConvergenceError(f"period T={T} is not positive")
        flow = _Flow(self.model, lam, variational=True, sensitivity=self.sensitivity)
        sol = _integrate(flow, x0, T, **self.opts)
        x_end, M, s = flow.split(sol.y[:, -1])
        scale = np.maximum(np.abs(sol.y[: self.n]).max(axis=1), np.finfo(float).tiny)
        out = dict(flow=flow, x0=x0, T=T, lam=lam, x_end=x_end, M=M, s=s, scale=scale)
        self._last = (key, out)
        return out

    def from_orbit(self, orbit: PeriodicOrbit) -> np.ndarray:
        """Unknown vector ``Z`` of a :class:`PeriodicOrbit`."""
        if self.forced:
            return np.append(orbit.x0, orbit.lam)
        return np.concatenate([orbit.x0, [orbit.T, orbit.lam]])

    def scaled_defect(self, Z) -> float:
        """Size of the residual at ``Z``: the periodicity defect relative to each state's
        size over the orbit (``max_t |x_i(t)|``) and, for autonomous orbits, the phase
        condition ``x_k'(0) = 0`` relative to the size of ``x_k'`` (``scale_k 2 pi / T``): a
        step that trades a tiny periodicity defect for a large phase residual is no progress
        either.  Integration noise puts a floor of about ``noise_floor`` under it."""
        e = self._evaluate(Z)
        R = self.residual(Z)
        m = float(np.max(np.abs(R[: self.n]) / e["scale"]))
        if self.forced:
            return m
        return max(m, abs(R[self.n]) / (e["scale"][self.phase_state] * 2 * np.pi / e["T"]))

    def scaled_update(self, dZ, Z) -> float:
        """Size of an update ``dZ`` of ``Z``: each state's change relative to its size over
        the orbit, and the period's relative change (every variable must converge)."""
        e = self._evaluate(Z)
        err = float(np.max(np.abs(dZ[: self.n]) / e["scale"]))
        return err if self.forced else max(err, abs(dZ[self.n]) / e["T"])

    # -- contract --------------------------------------------------------------------
    def residual(self, Z):
        e = self._evaluate(Z)
        r = e["x_end"] - e["x0"]
        if self.forced:
            return r
        return np.append(r, e["flow"]._f(0.0, e["x0"])[self.phase_state])

    def jacobian(self, Z):
        e = self._evaluate(Z)
        n, flow = self.n, e["flow"]
        Jac = np.zeros((self.m, self.size))
        Jac[:n, :n] = e["M"] - np.eye(n)
        f_end = flow._f(e["T"], e["x_end"])
        lam_col = self.size - 1
        if self.forced:
            name = self.model.forcing_frequency
            if name == self.model.continuation:     # T = 2 pi / lam
                Jac[:n, lam_col] = f_end * (-2 * np.pi * self.periods / e["lam"] ** 2)
        else:
            k = self.phase_state
            Jac[:n, n] = f_end
            Jac[n, :n] = flow._J(0.0, e["x0"])[k]
        if self.sensitivity:                        # else the lam column is left out (class docstring)
            Jac[:n, lam_col] += e["s"]
            if not self.forced:
                Jac[n, lam_col] = flow.dfdlam(0.0, e["x0"])[self.phase_state]
        return Jac

    def monodromy(self, Z):
        """The monodromy matrix of the last integration at ``Z`` (contract item 15)."""
        return self._evaluate(Z)["M"]

    def quadratic(self, Z1, Z2):
        raise NotImplementedError("shooting is not a quadratic discretization: continue it with the "
                                  "pseudo-arclength engine, not the ANM")

    def series_rhs(self, terms, origin=None):
        raise NotImplementedError("shooting is not a quadratic discretization: continue it with the "
                                  "pseudo-arclength engine, not the ANM")

    def unpack(self, Z):
        """``lam``, ``omega``, ``T``, ``x0`` and ``samples(n_t)`` (integrated, shape (n, n_t))."""
        x0, T, lam = self._split(Z)
        model, opts = self.model, self.opts

        def samples(n_t):
            orb = PeriodicOrbit(x0=np.array(x0), T=float(T), lam=float(lam), monodromy=None, multipliers=None,
                                ptp=None, residual=float("nan"), iterations=0, model=model, options=opts)
            return orb.samples(n_t)

        return dict(lam=float(lam), omega=2 * np.pi / T, T=float(T), x0=np.array(x0), samples=samples)
