"""Quasi-periodic (torus) branches started at a Neimark–Sacker point (DESIGN §5.9).

At a Neimark–Sacker (NS) point of a periodic orbit ``x_p(t)`` of period ``T`` the monodromy
matrix ``M = Phi(T)`` has a pair of multipliers ``exp(+-i theta)``.  With ``M v = e^{i theta} v``
the solution ``Phi(t) v = p(t) e^{i theta t / T}`` of the variational equation has
``p(t + T) = p(t)`` (Floquet), so the torus born there is, to first order in its size ``eps``
(Kuznetsov, *Elements of applied bifurcation theory*, 3rd ed., Springer 2004, §4.7 and §7.3:
the normal form of the NS bifurcation of the Poincaré map; Schilder, Osinga & Vahl, SIAM J.
Appl. Dyn. Syst. 4, 2005, §4, the same start)::

    X(theta1, theta2) = x_p(theta1 / w1) + eps Re(p(theta1 / w1) e^{i theta2}),
    w1 = 2 pi / T,  w2 = theta / T   (theta in (0, pi): the rotation number w2 / w1 = theta / 2 pi)

(``theta + 2 pi j`` gives the same torus with the harmonics ``k1`` shifted by ``j``; the
choice in ``(0, pi)`` keeps the harmonics of the small torus at ``|k1|`` near 0).  ``Phi`` is
integrated here from the balanced orbit's Fourier series (``scipy.integrate.solve_ivp``,
rtol 1e-10).  The start is then corrected by the one Newton of the engine with the torus's
projection on the critical mode held at ``eps`` (``lam`` free: the first point of the torus
branch, which leaves the periodic orbit transversally), and the branch is followed by one of
the engine's two loops: the ANM (``method="anm"``, the default wherever the model's Taylor
kernels apply, ``TorusAFT.supports_anm``) or pseudo-arclength Newton (``method="newton"``).
Torus sizes grow like ``sqrt(|lam - lam_ns|)`` near a generic NS point.  Each torus gets an
error estimate (``discretizations/_torus.TorusErrors``) and its transverse Lyapunov exponents
(:func:`torus_lyapunov`).

Limitation: where the rotation number is a rational ``p/q`` inside a resonance (Arnold) tongue
the flow on the torus is phase-locked, not quasi-periodic, and the torus has no
parametrization with a constant rotation (Schilder, Osinga & Vahl, §2): the harmonic balance
still returns points there, but their harmonics decay slowly; for the test model the tongues
crossed (2:5 near A = 0.82) are too narrow to be seen at the branch's steps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json

import numpy as np
from scipy.integrate import solve_ivp

from .._roots import bracketed_root
from .._version import __version__
from ..discretizations._aft import _expm_batch, magnus_exponents
from ..discretizations._hbm import coefficients_at
from ..discretizations._torus import TorusAFT, TorusErrors, choose_phase_harmonics
from ..engine._anm import anm
from ..engine._bordered import Counters
from ..engine._newton import correct, tangent_at
from ..engine._options import ANMOptions, NewtonOptions
from ..engine._predictor_corrector import pseudo_arclength
from ..errors import ConvergenceError, InputError
from ..results._atomic import atomic_path, read_hdf5
from ..results._checked import json_attr, text_attr, dataset
from ..results._figure import finish, subplots
from ..results._plots import drawable

__all__ = ["TorusBranch", "torus", "continue_torus", "torus_start_from_ns", "torus_lyapunov",
           "torus_from_simulation", "torus_start_from_simulation"]

#: Largest distance of the critical pair from the unit circle at which an orbit counts as "at
#: a Neimark-Sacker point" (located NS points are at ~1e-10; an orbit a few steps off still
#: gives a usable start, the correction moves lam).
NS_TOL = 2e-2
#: What every saved torus result says about stability (computed: :func:`torus_lyapunov`).
STABILITY_NOTE = ("stability: the leading transverse Lyapunov exponent of each torus (transverse_exponent, "
                  "+- exponent_error; stable = 1 if negative, 0 if positive, NaN if within twice its error)")
#: ... and when it was not asked for.
NO_STABILITY_NOTE = "stability of tori is not computed"
#: The error and stability columns of a torus branch (NaN where not computed).
EXTRA_COLUMNS = ("orbit_error", "rotation_error", "omega1_error", "omega2_error", "size_error", "err_trunc",
                 "err_alias", "err_decay", "transverse_exponent", "exponent_error", "stable")


@dataclass
class TorusBranch:
    """A branch of quasi-periodic solutions (tori).

    Attributes
    ----------
    model, lam_name : str
    lam, omega1, omega2, rotation_number, torus_size : ndarray (n_points,)
        The parameter, the two base frequencies (``omega1`` the forcing frequency for a forced
        torus), ``omega2 / omega1`` and the torus's largest distance from its periodic part.
    amplitudes : ndarray (n_points, n)
        Peak-to-peak of each state on the torus.
    extra : dict
        Columns :data:`EXTRA_COLUMNS` (n_points,), NaN where not computed: ``orbit_error``
        (relative error of the torus's states: truncation ``err_trunc`` + aliasing
        ``err_alias``, ``discretizations/_torus.TorusErrors``), ``rotation_error`` (absolute,
        of ``rotation_number``), ``err_decay`` (the box edge's share of the spectrum),
        ``transverse_exponent`` (the leading transverse Lyapunov exponent, per unit time),
        ``exponent_error`` and ``stable`` (:func:`torus_lyapunov`).
    states : tuple of str
    solutions : ndarray (n_points, size)
        The unknowns of :class:`TorusAFT` (rebuild with ``discretization``).
    status, message : str
    counters : dict
        Work: ``steps``, ``factorizations`` (LUs), residuals, Jacobians, ``unknowns``.
    provenance : dict
        Model hash, harmonics, truncation, grid, phase harmonics, the NS start, the model's units
        (``units``: by parameter, state and ``"t"``), versions.
    stability : str
        :data:`STABILITY_NOTE`, or :data:`NO_STABILITY_NOTE` if the exponents were not asked.
    """

    model: str
    lam_name: str
    lam: np.ndarray
    omega1: np.ndarray
    omega2: np.ndarray
    rotation_number: np.ndarray
    torus_size: np.ndarray
    amplitudes: np.ndarray
    states: tuple
    solutions: np.ndarray
    status: str
    message: str
    counters: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    stability: str = STABILITY_NOTE
    discretization: object = None
    extra: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.lam)

    @property
    def success(self) -> bool:
        return self.status in ("range", "max_steps")

    def columns(self) -> dict:
        """Column data: ``lam``, ``omega1``, ``omega2``, ``rotation_number``, ``torus_size``,
        ``ptp_<state>`` for every state and :data:`EXTRA_COLUMNS`."""
        out = dict(lam=self.lam, omega1=self.omega1, omega2=self.omega2, rotation_number=self.rotation_number,
                   torus_size=self.torus_size)
        for i, s in enumerate(self.states):
            out[f"ptp_{s}"] = self.amplitudes[:, i]
        for k in EXTRA_COLUMNS:
            out[k] = np.asarray(self.extra.get(k, np.full(len(self.lam), np.nan)), dtype=float)
        return out

    def invariant_curve(self, i: int, n_points: int = 256):
        """Point ``i``'s section ``theta1 = 0`` (the stroboscopic invariant curve of a forced
        torus): ``(theta2, x (n, n_points))``."""
        return self.discretization.invariant_curve(self.solutions[i], 0.0, n_points)

    def plot(self, path=None, points=None, axes=(0, 1), n_points=512):
        """The Poincaré sections ``theta1 = 0`` of some tori (the stroboscopic invariant curves
        at the forcing period of a forced torus) in the plane of two states, and the rotation
        number against the parameter (matplotlib); with ``path`` the figure is written there.

        ``points``: indices of the tori drawn (default about six along the branch); ``axes``:
        the two states (indices).  Needs the ``discretization`` (a branch of this session).
        Returns the two axes."""
        if self.discretization is None:
            raise InputError("plotting the sections needs the torus discretization: a branch continued in "
                             "this session (a loaded file has the columns and the unknowns only)")
        i, j = axes
        if not (0 <= i < len(self.states) and 0 <= j < len(self.states)):
            raise InputError(f"axes {axes}: state indices in 0..{len(self.states) - 1}")
        if points is None:
            points = sorted(set(np.linspace(0, len(self) - 1, min(6, len(self))).astype(int).tolist()))
        fig, (ax, ax2) = subplots(path, 1, 2, figsize=(10, 4.2), layout="constrained")
        for k in points:
            _, x = self.invariant_curve(k, n_points)
            ax.plot(np.append(x[i], x[i][0]), np.append(x[j], x[j][0]), lw=1.0,
                    label=drawable(f"{self.lam_name} = {self.lam[k]:.6g}"))
        ax.set_xlabel(drawable(self.states[i]))
        ax.set_ylabel(drawable(self.states[j]))
        ax.set_title(drawable("Poincaré sections theta1 = 0 of the tori"))
        ax.legend(loc="best", fontsize=7)
        ax.grid(alpha=0.3)
        ax2.plot(self.lam, self.rotation_number, "C1")
        ax2.set_xlabel(drawable(self.lam_name))
        ax2.set_ylabel("rotation number omega2 / omega1")
        ax2.set_title(drawable(f"{self.model}: rotation number"), fontsize=10)
        ax2.grid(alpha=0.3)
        if path is not None:
            finish(fig, path, dpi=130)
        return ax, ax2

    def save(self, path):
        """HDF5 (written atomically): root attributes ``kind = "torus_branch"``, ``model``,
        ``lam_name``, ``status``, ``message``, ``stability``, ``states``, ``counters`` and
        ``provenance`` (JSON); datasets ``columns/<name>`` (n_points,) and ``solutions``."""
        import h5py
        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            f.attrs["kind"] = "torus_branch"
            for k in ("model", "lam_name", "status", "message", "stability"):
                f.attrs[k] = str(getattr(self, k))
            f.attrs["states"] = json.dumps(list(self.states))
            f.attrs["counters"] = json.dumps(self.counters)
            f.attrs["provenance"] = json.dumps(self.provenance)
            for k, v in self.columns().items():
                f[f"columns/{k}"] = np.asarray(v, dtype=float)
            f["solutions"] = np.asarray(self.solutions, dtype=float)

    @classmethod
    def load(cls, path):
        """The branch saved by :meth:`save` (checked on reading: a damaged file is an
        :class:`InputError` naming it); ``discretization`` is None."""
        return read_hdf5(path, cls._read, "torus file")

    @classmethod
    def _read(cls, f):
        if text_attr(f, "kind", "-") != "torus_branch":
            raise InputError("not a torus branch (its attribute 'kind' is not 'torus_branch')")
        states = tuple(json_attr(f, "states", "list of names"))
        n_pts = f["columns/lam"].shape[0] if "columns/lam" in f else 0
        cols = {k: np.asarray(dataset(f, f"columns/{k}", (n_pts,)), dtype=float)
                for k in ("lam", "omega1", "omega2", "rotation_number", "torus_size")}
        amps = np.column_stack([np.asarray(dataset(f, f"columns/ptp_{s}", (n_pts,)), dtype=float)
                                for s in states]) if states else np.zeros((n_pts, 0))
        extra = {k: np.asarray(dataset(f, f"columns/{k}", (n_pts,)), dtype=float)
                 for k in EXTRA_COLUMNS if f"columns/{k}" in f}
        return cls(model=text_attr(f, "model"), lam_name=text_attr(f, "lam_name"), amplitudes=amps, extra=extra,
                   states=states, solutions=np.asarray(dataset(f, "solutions", (n_pts, None)), dtype=float),
                   status=text_attr(f, "status"), message=text_attr(f, "message", ""),
                   counters=json_attr(f, "counters", "table"), provenance=json_attr(f, "provenance", "table"),
                   stability=text_attr(f, "stability"), **cols)


def _orbit_function(disc, Z):
    """``x(t)`` of the balanced periodic orbit ``Z`` of an AFT discretization at any times."""
    U, omega, lam = disc.split(Z)

    def x(t):
        return coefficients_at(U, omega * np.atleast_1d(np.asarray(t, dtype=float)))
    return x, omega, lam


def critical_pair(disc, Z):
    """``(multiplier, eigenvector, monodromy)`` of the complex pair of ``disc.monodromy(Z)``
    nearest the unit circle with ``Im > 0``, or ``(None, None, M)`` if it has no complex pair."""
    M = np.asarray(disc.monodromy(Z), dtype=float)
    mult, vecs = np.linalg.eig(M)
    cplx = np.flatnonzero(mult.imag > 1e-9 * np.maximum(1.0, np.abs(mult)))
    if not cplx.size:
        return None, None, M
    k = int(cplx[np.argmin(np.abs(np.abs(mult[cplx]) - 1))])
    return mult[k], vecs[:, k], M


def torus_start_from_ns(branch, point, harmonics=(8, 4), *, truncation="box", grid=None, eps=1e-2,
                        phase_variable=None):
    """A torus discretization and the first-order guess of a small torus at an NS point.

    Parameters
    ----------
    branch : Branch
        A periodic AFT branch (its ``discretization`` has ``split`` and ``monodromy``).
    point : SpecialPoint or int
        A located ``"ns"`` point of ``branch``, or the index of an orbit of it near one.
    harmonics : (int, int)
        ``(H1, H2)`` of the torus.
    eps : float
        The torus's size relative to the orbit's (largest peak-to-peak of a state).

    Returns
    -------
    disc : TorusAFT
    Z : ndarray
        The guess ``x_p + eps Re(p e^{i theta2})`` (module docstring).
    Z_orbit : ndarray
        The periodic orbit itself in the torus's unknowns (its ``theta2``-independent part).
    info : dict
        ``lam_ns``, ``theta`` (argument of the critical multiplier), ``multiplier``.

    Raises
    ------
    InputError
        The orbit's multipliers have no complex pair within :data:`NS_TOL` of the unit circle
        (no Neimark-Sacker point nearby), or the branch is not a periodic AFT branch.
    """
    pdisc = getattr(branch, "discretization", None)
    if pdisc is None or getattr(pdisc, "kind", None) != "aft" or not getattr(pdisc, "H", 0):
        raise InputError("a torus starts from a periodic branch of the AFT harmonic balance (method 'aft') "
                         "continued in this session; this branch has no such discretization")
    if isinstance(point, (int, np.integer)):
        if not 0 <= int(point) < len(branch.solutions):
            raise InputError(f"orbit index {point} is outside the branch (0..{len(branch.solutions) - 1})")
        Z = np.asarray(branch.solutions[int(point)], dtype=float)
    else:
        kind = getattr(point, "kind", None)
        if kind != "ns":
            raise InputError(f"a torus starts at a Neimark-Sacker point ('ns') of a periodic branch, not at "
                             f"{'a ' + repr(kind) + ' point' if kind else 'an object of type ' + type(point).__name__}")
        Z = np.asarray(point.solution, dtype=float)
    model = pdisc.model
    mu, v, M = critical_pair(pdisc, Z)
    where = f"{model.continuation} = {float(Z[-1]):.10g}"
    if mu is None or abs(abs(mu) - 1) > NS_TOL:
        near = (f"its complex pair nearest the unit circle is {complex(mu):.6g} (modulus {abs(mu):.6g})"
                if mu is not None else f"its multipliers {np.round(np.linalg.eigvals(M), 6).tolist()} have no complex pair")
        raise InputError(f"no Neimark-Sacker point near the orbit at {where}: {near}; a torus is born where a "
                         f"complex pair crosses the unit circle (|mu| within {NS_TOL:g} of 1): start from an "
                         "'ns' point of a branch computed with multipliers")
    theta = float(np.angle(mu))
    xfun, w1, lam = _orbit_function(pdisc, Z)
    T = 2 * np.pi / w1
    disc = TorusAFT(model, harmonics, truncation, grid, phase_variable)
    t_grid = disc._th1 / w1
    n = model.n

    def variational(t, y):
        x = xfun(t)[:, 0]
        J = np.asarray(model.jac(t if model.forced else 0.0, x, lam), dtype=float)
        return (J @ y.reshape(n, n)).reshape(-1)

    sol = solve_ivp(variational, (0.0, T), np.eye(n).reshape(-1), method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=np.append(t_grid, T))
    if not sol.success:
        raise ConvergenceError(f"the variational equation along the orbit at {where} failed: {sol.message}")
    Phi = sol.y.T.reshape(-1, n, n)
    mult, vecs = np.linalg.eig(Phi[-1])
    k = int(np.argmin(np.abs(mult - mu)))       # the same pair, from the integrated monodromy
    v = vecs[:, k] if mult[k].imag > 0 else vecs[:, k].conj()
    p = (Phi[:-1] @ v) * np.exp(-1j * theta * t_grid / T)[:, None]       # (N1, n), T-periodic
    p = p / np.abs(p).max()
    xp = xfun(t_grid)                                                     # (n, N1)
    size = float((xp.max(axis=1) - xp.min(axis=1)).max())
    th2 = disc._th2
    pert = (p.T[:, :, None] * np.exp(1j * th2)[None, None, :]).real     # (n, N1, N2)
    grid_orbit = np.repeat(xp[:, :, None], disc.N2, axis=2)
    U = disc.from_grid(grid_orbit + eps * size * pert)
    disc.set_phase_harmonics(*choose_phase_harmonics(disc, U))
    U = disc.phase_fixed(U)
    w2 = theta / T
    U0 = disc.from_grid(grid_orbit)
    if disc.autonomous:
        U0 = disc.shift_phase(U0, *_phase_shift_of(disc, U, U0))
    Zt = disc.pack(U, w1, w2, lam)
    Z0 = disc.pack(U0, w1, w2, lam)
    return disc, Zt, Z0, dict(lam_ns=float(lam), theta=theta, multiplier=complex(mu), size=size)


def _phase_shift_of(disc, U, U0):
    """The theta1 shift that puts the orbit ``U0`` in the phase of the torus ``U`` (its k2 = 0 part)."""
    j = disc.harmonic_index(disc.phase_harmonics[0])
    a = disc.to_complex(U[disc.phase_states[0]])[j]
    b = disc.to_complex(U0[disc.phase_states[0]])[j]
    return (np.angle(a) - np.angle(b)) / disc.phase_harmonics[0][0], 0.0


class _TorusRecorder:
    """Engine recorder (``engine/_recorder.py`` protocol, both engines) of a torus branch:
    stops on the bounds of ``lam`` (the last point corrected onto the bound) or after
    ``max_steps`` points."""

    def __init__(self, disc, lam_bounds, max_steps, xtol):
        self.disc, self.bounds, self.max_steps, self.xtol = disc, lam_bounds, max_steps, xtol
        self.counters = Counters()
        self.points, self.tangents = [], []
        self.status, self.message, self.done = "failed", "", False
        self._bound = None            # the bound the last ANM step was clipped to

    def note_det_sign(self, Z, t, sign):
        pass

    # -- the ANM's part of the protocol (items 2, 4, 6, 7) ---------------------------------
    def clip(self, series, a_max):
        """End of an ANM step: ``a_max``, or where ``lam`` first reaches a bound on the series
        (a scan of 65 points, then Brent's method)."""
        self._bound = None
        a = np.linspace(0.0, a_max, 65)
        lam = series.components(a, [self.disc.size - 1])[:, 0]
        hits = []
        for b in self.bounds:
            if np.isfinite(b):
                i = np.flatnonzero((lam[1:] - b) * (lam[:-1] - b) < 0)
                if i.size:
                    hits.append((int(i[0]), b))
        if not hits:
            return a_max
        i, b = min(hits)
        self._bound = b
        return bracketed_root(lambda s: series(s)[-1] - b, a[i], a[i + 1], xtol=1e-15 * a_max, rtol=1e-15)

    def unclip(self):
        self._bound = None

    @property
    def stop_reason(self):
        return None if self._bound is None else "range"

    @property
    def stop_bound(self):
        return self._bound

    def refine_tangent(self, Z, t_exact):
        """The next ANM step's exact tangent at the last step end (``engine/_recorder.py``)."""
        if np.array_equal(self.points[-1], Z) and float(t_exact @ self.tangents[-1]) > 0:
            self.tangents[-1] = np.array(t_exact)

    def add_intermediate(self, Z, t):
        self.points.append(np.array(Z))
        self.tangents.append(np.array(t))

    def hopf_jump(self):
        return None

    def add(self, Zn, tn, step_length=None, series=None, on_bound=False):
        Z = self.points[-1]
        e = np.zeros(self.disc.size)
        e[-1] = 1.0
        if self._bound is not None:
            # an ANM step clipped to a bound: its end on the bound (corrected there unless the
            # engine already did)
            b = self._bound
            Zb = np.array(Zn) if on_bound else correct(self.disc, Zn, e, b, counters=self.counters, xtol=self.xtol)[0]
            Zb[-1] = b
            self.points.append(Zb)
            self.tangents.append(np.array(tn))
            self.status, self.message, self.done = "range", f"reached lam = {b:g}", True
            return
        for b in self.bounds:
            if np.isfinite(b) and (Z[-1] - b) * (Zn[-1] - b) < 0:
                s = (b - Z[-1]) / (Zn[-1] - Z[-1])
                Zb, _ = correct(self.disc, Z + s * (Zn - Z), e, b, counters=self.counters, xtol=self.xtol)
                Zb[-1] = b
                self.points.append(Zb)
                self.tangents.append(tn)
                self.status, self.message, self.done = "range", f"reached lam = {b:g}", True
                return
        self.points.append(np.array(Zn))
        self.tangents.append(tn)
        if len(self.points) > self.max_steps:
            self.status, self.message, self.done = "max_steps", f"step budget exhausted (max_steps = {self.max_steps})", True


def _check_method(method):
    if method not in (None, "anm", "newton"):
        raise InputError(f"method = {method!r}: choose 'anm' (asymptotic numerical method) or 'newton' "
                         "(pseudo-arclength)")


def _engine(disc, method):
    """The engine's name: ``method``, or by default the ANM where ``disc.supports_anm``."""
    _check_method(method)
    if method is None:
        return "anm" if disc.supports_anm else "newton"
    if method == "anm" and not disc.supports_anm:
        raise InputError(f"the ANM cannot continue the tori of model {disc.model.name!r}: it needs the model's "
                         "Taylor kernels (an analytic friction law, `frictionkit codegen`), and, when the forcing "
                         "frequency is continued, kernels in the forcing phase; use method='newton'")
    return method


def continue_torus(disc, Z, Z_orbit=None, *, lam_min=-np.inf, lam_max=np.inf, max_steps=100, step=0.02,
                   max_step=0.2, xtol=1e-10, info=None, errors=True, stability=True, direction=1.0,
                   method=None, order=20) -> TorusBranch:
    """Correct a torus guess and continue the torus branch (ANM or pseudo-arclength Newton).

    Parameters
    ----------
    disc : TorusAFT
    Z : ndarray
        A guess of a torus (:func:`torus_start_from_ns`).
    Z_orbit : ndarray, optional
        The periodic orbit the torus grows from: the start is corrected with its distance
        from it along ``Z - Z_orbit`` held (``lam`` free) and the branch leaves it; without it
        the start is corrected at fixed ``lam`` and the branch goes up in ``lam`` (down if
        ``direction < 0``).
    lam_min, lam_max : float
        The range of the continuation parameter (the run stops on its bounds).
    max_steps : int
    step, max_step : float
        First and largest pseudo-arclength step (Euclidean norm of the unknowns).
    xtol : float
        Newton tolerance (relative update).
    errors : bool
        Estimate each torus's truncation and aliasing error (``discretizations/_torus.TorusErrors``:
        one LU of the balance in a box 1.5 times larger per point).
    stability : bool
        The transverse Lyapunov exponents of each torus (:func:`torus_lyapunov`).
    method : {"anm", "newton"}, optional
        The continuation engine: the asymptotic numerical method (default wherever
        ``disc.supports_anm``: the model's Taylor kernels apply) or pseudo-arclength Newton (the
        default otherwise).  ``step`` is Newton's first step; ``max_step`` bounds both.
    order : int
        The ANM's series order.

    Returns
    -------
    TorusBranch
        Also on failure or Ctrl-C (``status``/``message`` say why; the points so far kept).
    """
    if not isinstance(disc, TorusAFT):
        raise InputError("continue_torus needs a TorusAFT discretization (from torus_start_from_ns)")
    Z = np.asarray(Z, dtype=float)
    if Z.shape != (disc.size,):
        raise InputError(f"the torus guess has shape {Z.shape}, the discretization needs ({disc.size},)")
    method = _engine(disc, method)
    if Z_orbit is not None:
        b = Z - np.asarray(Z_orbit, dtype=float)
        b[disc.n_coef:] = 0.0
        if not np.linalg.norm(b):
            raise InputError("the torus guess coincides with the periodic orbit: give it a size (eps > 0)")
        b /= np.linalg.norm(b)
    else:
        b = np.zeros(disc.size)
        b[-1] = 1.0 if direction >= 0 else -1.0
    if method == "anm":
        opts = ANMOptions(order=order, max_step=max_step, newton_xtol=xtol, max_steps=max(max_steps, 1))
    else:
        opts = NewtonOptions(step=step, max_step=max_step, min_step=min(1e-10, step), target_iterations=4,
                             max_correction=0.3, max_angle=20.0, newton_xtol=xtol, max_steps=max(max_steps, 1))
    rec = _TorusRecorder(disc, (lam_min, lam_max), max_steps, xtol)
    r0, j0 = disc.n_residuals, disc.n_jacobians
    try:
        Z0, _ = correct(disc, Z, b, float(b @ Z), counters=rec.counters, xtol=xtol, max_iter=30,
                        what="torus start")
    except ConvergenceError as err:
        raise ConvergenceError(f"the torus start did not converge ({err}); try a smaller eps or more harmonics") from None
    t0 = tangent_at(disc, Z0, b, rec.counters)
    if t0 @ b < 0:
        t0 = -t0
    if not lam_min <= Z0[-1] <= lam_max:
        raise InputError(f"the corrected torus start lies at lam = {Z0[-1]:.10g}, outside [{lam_min:g}, {lam_max:g}]")
    rec.points.append(Z0)
    rec.tangents.append(t0)
    if max_steps == 0:
        rec.status, rec.message = "max_steps", "the corrected start only (max_steps = 0)"
        return _result(disc, rec, disc.n_residuals - r0, disc.n_jacobians - j0, info or {}, errors, stability,
                       method)
    try:
        (anm if method == "anm" else pseudo_arclength)(disc, Z0, t0, opts, rec)
    except KeyboardInterrupt:
        rec.status, rec.message = "interrupted", "interrupted by the user (Ctrl-C); the points so far are kept"
    except ConvergenceError as err:
        rec.status, rec.message = "failed", f"continuation of the torus failed after lam = {rec.points[-1][-1]:.10g}: {err}"
    return _result(disc, rec, disc.n_residuals - r0, disc.n_jacobians - j0, info or {}, errors, stability,
                   method)


def torus_columns(disc, solutions, errors=True, stability=True):
    """The columns :data:`EXTRA_COLUMNS` of the tori ``solutions`` (P, size) of ``disc``: error
    estimates (:class:`TorusErrors`) and transverse exponents (:func:`torus_lyapunov`, its
    error including the torus's estimated error carried to the exponent); NaN where not asked
    or where the estimate failed (a singular Jacobian)."""
    P = np.asarray(solutions, dtype=float).reshape(-1, disc.size)
    out = {k: np.full(len(P), np.nan) for k in EXTRA_COLUMNS}
    est = TorusErrors(disc) if errors else None
    for i, Z in enumerate(P):
        e = None
        if est is not None:
            try:
                e = est(Z)
            except (np.linalg.LinAlgError, FloatingPointError, ValueError):
                e = None
            if e is not None:
                for k in EXTRA_COLUMNS[:8]:
                    out[k][i] = e[k] if np.isfinite(e[k]) else np.nan
        if stability:
            try:
                ly = torus_lyapunov(disc, Z, corrected=None if e is None else e["corrected"],
                                    big=None if e is None else est.big)
            except (np.linalg.LinAlgError, FloatingPointError, ValueError):
                continue
            out["transverse_exponent"][i] = ly["leading"]
            out["exponent_error"][i] = ly["error"]
            out["stable"][i] = ly["stable"]
    return out


def _result(disc, rec, n_res, n_jac, info, errors=True, stability=True, method="newton"):
    P = np.array(rec.points)
    un = [disc.unpack(Z) for Z in P]
    model = disc.model
    counters = dict(rec.counters.as_dict(), residual_evaluations=n_res, jacobian_evaluations=n_jac,
                    points=len(P), unknowns=disc.size)
    prov = dict(model=model.name, model_hash=model.model_hash, continuation_parameter=model.continuation,
                method=method, discretization=disc.kind, harmonics=[disc.H1, disc.H2],
                truncation=disc.truncation, grid=[disc.N1, disc.N2], n_harmonics=int(disc.nk),
                phase_harmonics=[list(k) for k in disc.phase_harmonics],
                phase_states=[model.states[i] for i in disc.phase_states], forced=bool(disc.forced),
                parameters={k: float(v) for k, v in zip(model.parameters, model.param_vector())},
                units=dict(model.units),
                frictionkit_version=__version__, stability=STABILITY_NOTE if stability else NO_STABILITY_NOTE,
                start={k: (v if not isinstance(v, complex) else [v.real, v.imag]) for k, v in info.items()})
    return TorusBranch(model=model.name, lam_name=model.continuation, lam=P[:, -1],
                       omega1=np.array([u["omega"] for u in un]), omega2=np.array([u["omega2"] for u in un]),
                       rotation_number=np.array([u["rotation_number"] for u in un]),
                       torus_size=np.array([disc.torus_size(Z) for Z in P]),
                       amplitudes=np.array([disc.amplitudes(Z) for Z in P]).reshape(len(P), disc.n),
                       states=tuple(model.states), solutions=P, status=rec.status, message=rec.message,
                       counters=counters, provenance=prov, discretization=disc,
                       stability=STABILITY_NOTE if stability else NO_STABILITY_NOTE,
                       extra=torus_columns(disc, P, errors, stability))


def torus(branch, point, lam_min=-np.inf, lam_max=np.inf, *, harmonics=(8, 4), truncation="box", grid=None,
          eps=1e-2, max_steps=100, step=0.02, max_step=0.2, xtol=1e-10, errors=True, stability=True,
          method=None, order=20) -> TorusBranch:
    """The branch of tori born at a Neimark–Sacker point of a periodic branch.

    Parameters
    ----------
    branch : Branch
        A periodic branch of the AFT harmonic balance (with its ``discretization``).
    point : SpecialPoint or int
        An ``"ns"`` point of it (``branch.special_points("ns")``), or the index of an orbit
        whose critical multipliers are within :data:`NS_TOL` of the unit circle.
    lam_min, lam_max : float
        Range of the continuation parameter.
    harmonics : (int, int)
        ``(H1, H2)``: harmonics of the two angles; ``truncation`` "box" or "diamond".
    grid : (int, int), optional
        Grid of the two angles (default ``4 H + 8`` rounded up to a fast FFT length, >= 16).
    eps : float
        Size of the first torus relative to the orbit's (the start leaves the orbit there).
    max_steps, step, max_step, xtol, errors, stability, method, order :
        As :func:`continue_torus` (``method``: "anm" by default where the model's Taylor
        kernels apply, else "newton").

    Returns
    -------
    TorusBranch
        Columns ``omega1, omega2, rotation_number, torus_size``, peak-to-peak amplitudes, the
        error estimates ``orbit_error``, ``rotation_error`` and the stability columns
        ``transverse_exponent``, ``exponent_error``, ``stable`` (:class:`TorusBranch`).

    Raises
    ------
    InputError
        ``point`` is not an NS point or the orbit has no complex pair of multipliers near the
        unit circle (the message gives the nearest one), or bad sizes.

    Notes
    -----
    Forced models: ``omega1`` is the forcing frequency and ``omega2`` unknown; autonomous
    models: both unknown (two phase conditions).
    """
    _check_method(method)
    disc, Z, Z0, info = torus_start_from_ns(branch, point, harmonics, truncation=truncation, grid=grid, eps=eps)
    return continue_torus(disc, Z, Z0, lam_min=lam_min, lam_max=lam_max, max_steps=max_steps, step=step,
                          max_step=max_step, xtol=xtol, info=info, errors=errors, stability=stability,
                          method=method, order=order)


def _trace_mean(disc, Z):
    """Average of ``tr df/dx`` over ``disc``'s grid of the torus ``Z`` (the sum of the Lyapunov
    exponents, :func:`torus_lyapunov`)."""
    U, w1, w2, lam = disc.split(Z)
    x = disc.to_grid(U).reshape(disc.n, disc.M)
    J = np.asarray(disc.model.jac(disc._times(w1), x, lam), dtype=float)
    return float(np.trace(J).mean())


def _tangents(disc, Z):
    """Coefficients of the torus's invariant tangent fields: ``dX/dtheta2`` (forced), or
    ``dX/dtheta1, dX/dtheta2`` (autonomous): each, along the torus's flow, solves the
    variational equation (a shift of an angle maps solutions on the torus to solutions)."""
    U = disc.split(Z)[0]
    ks = [disc.K[1:, 0], disc.K[1:, 1]] if disc.autonomous else [disc.K[1:, 1]]
    # d/dtheta_i of c cos(k.theta) + s sin(k.theta): cosine coefficient k_i s, sine -k_i c
    return [disc._deriv_k(U, k.astype(float)) for k in ks]


def _qr_exponents(disc, Z, periods, steps_per_turn, block=16):
    """Transverse exponents by QR re-orthonormalisation (module docstring of
    :func:`torus_lyapunov`) over ``periods`` of ``2 pi / w1``: ``(full window, second half)``."""
    U, w1, w2, lam = disc.split(Z)
    n, nz = disc.n, (2 if disc.autonomous else 1)
    fast = float(np.abs(disc.K[:, 0] * w1 + disc.K[:, 1] * w2).max())
    T1 = 2 * np.pi / abs(w1)
    L = periods * T1
    S = int(np.ceil(L * fast / (2 * np.pi) * steps_per_turn / block)) * block
    h = L / S
    g = 0.5 - np.sqrt(3) / 6
    t = (np.arange(S)[:, None] * h + np.array([g, 1 - g])[None, :] * h).reshape(-1)
    P = np.empty((S, n, n))
    chunk = 4096 * block
    for a in range(0, S, chunk):
        tt = t[2 * a:2 * min(a + chunk, S)]
        x = disc.evaluate(Z, w1 * tt, w2 * tt)
        P[a:a + tt.size // 2] = _expm_batch(magnus_exponents(disc.model, lam, tt, x, np.full(tt.size // 2, h))[2])
    B = P.reshape(S // block, block, n, n)
    while B.shape[1] > 1:
        B = B[:, 1::2] @ B[:, 0::2]
    B = B[:, 0]
    # the frame: the invariant tangents first (their span stays the torus's tangent space), then
    # the rest of an orthonormal basis
    tang = np.column_stack([disc.evaluate(disc.pack(V, w1, w2, lam), 0.0, 0.0) for V in _tangents(disc, Z)])
    Q = np.linalg.qr(np.column_stack([tang, np.random.default_rng(0).standard_normal((n, n))]))[0][:, :n]
    logs = np.empty((B.shape[0], n))
    for j in range(B.shape[0]):
        Q, R = np.linalg.qr(B[j] @ Q)
        d = np.diag(R)
        Q = Q * np.sign(d)
        logs[j] = np.log(np.abs(d))
    half = B.shape[0] // 2
    full = logs.sum(axis=0) / L
    second = logs[half:].sum(axis=0) / (L - half * block * h)
    return full[nz:], second[nz:], full[:nz]


def torus_lyapunov(disc, Z, *, corrected=None, big=None, periods=200, steps_per_turn=12):
    """The transverse Lyapunov exponents of a torus ``Z`` of ``disc`` and their error estimate.

    A torus ``x = X(theta1, theta2)`` of an ``n``-state system has ``n`` Lyapunov exponents
    (Benettin, Galgani, Giorgilli & Strelcyn, Meccanica 15, 1980, 9-30 and 21-30): those of the
    variational equation ``y' = df/dx(X(w1 t, w2 t + phi), t) y`` along the torus's own flow (the
    torus gives the trajectory; no simulation of the state).  The tangent fields
    ``dX/dtheta`` solve it, so one exponent (forced torus: ``dX/dtheta2``) or two (self-excited:
    ``dX/dtheta1``, ``dX/dtheta2``) are zero; the other ``n - 1`` or ``n - 2`` are the
    transverse ones, whose signs decide the torus's stability (all negative: attracting).

    * One transverse exponent (a forced one-degree-of-freedom oscillator, ``n = 2``): the sum of
      the exponents is the time average of ``tr df/dx`` (Liouville's formula), which on an
      ergodic torus (irrational ``w2 / w1``) is its average over the torus (Birkhoff), computed
      on the grid: ``lambda = mean(tr df/dx)``, no time integration; its error estimate is the
      change of that mean on a grid twice as fine (aliasing).
    * More: QR re-orthonormalisation of the propagators (Benettin et al., above; the
      fourth-order Magnus steps of ``AFTDiscretization.monodromy``, ``steps_per_turn`` per turn
      of the fastest retained harmonic, over ``periods`` periods ``2 pi / w1``), the frame
      started with the tangent fields first, so that the first (zero) exponents stay on the
      torus and the others are the transverse ones; the error estimate is the change between
      the full window and its second half, or the computed zero exponents' distance from 0 if
      larger (the averages converge like ``1 / periods``).

    Parameters
    ----------
    disc : TorusAFT
    Z : ndarray
        The torus.
    corrected, big : ndarray, TorusAFT, optional
        The torus corrected in a larger discretization (:class:`TorusErrors`'s ``corrected``
        and ``big``): the trace average there minus here is added to the error estimate
        (the torus's truncation and aliasing carried to the exponent; without them the
        torus's own error is not in the exponent's).
    periods, steps_per_turn : int
        The QR route's window and step (unused with one transverse exponent).

    Returns
    -------
    dict
        ``exponents`` (transverse, descending), ``leading``, ``error``, ``method``
        (``"trace"`` or ``"qr"``) and ``stable``: 1.0 if ``leading < -2 error``, 0.0 if
        ``leading > 2 error``, NaN in between (uncertain).

    Notes
    -----
    On a phase-locked torus (inside a resonance tongue the flow on it is not ergodic) the
    exponents are those of the locked periodic orbit on it, not the torus average.
    """
    n = disc.n
    nz = 2 if disc.autonomous else 1
    if n - nz < 1:
        raise InputError(f"a {'self-excited' if disc.autonomous else 'forced'} torus of a {n}-state model has no "
                         "transverse direction")
    err = 0.0
    if n - nz == 1:
        lead = _trace_mean(disc, Z)
        exps = np.array([lead])
        method = "trace"
        # the grid's aliasing: the same average on the grid twice as fine
        fine, Zf = disc.resize(Z, (disc.H1, disc.H2), (2 * disc.N1, 2 * disc.N2))
        err = abs(_trace_mean(fine, Zf) - lead)
    else:
        full, second, zero = _qr_exponents(disc, Z, periods, steps_per_turn)
        exps = np.sort(full)[::-1]
        lead = float(exps[0])
        # the average's convergence: the window's change and the zero exponents' distance from 0
        err = max(float(np.abs(np.sort(second)[::-1] - exps).max()), float(np.abs(zero).max()))
        method = "qr"
    if corrected is not None and big is not None:
        err += abs(_trace_mean(big, corrected) - _trace_mean(disc, Z))
    stable = 1.0 if lead < -2 * err else 0.0 if lead > 2 * err else np.nan
    return dict(exponents=exps, leading=float(lead), error=float(err), method=method, stable=stable)


#: The share of the largest spectral peak below which a peak off the harmonics of the forcing
#: counts as absent (the simulation is periodic, not quasi-periodic).
SECOND_PEAK_TOL = 1e-4


def _hann_spectrum(y, dt):
    """Amplitude spectrum of ``y`` (N,) under a Hann window: ``(angular frequencies, |Y|)``."""
    N = y.size
    win = np.hanning(N)
    Y = np.abs(np.fft.rfft((y - y.mean()) * win)) / win.sum()
    return 2 * np.pi * np.fft.rfftfreq(N, dt), Y


def _peak(w, Y, j):
    """Angular frequency of the peak at bin ``j`` refined by the parabola through the log
    amplitudes of the three bins about it (Gasior & Gonzalez, "Improving FFT frequency
    measurement resolution by parabolic and Gaussian spectrum interpolation", AIP Conf. Proc.
    732, 2004, 276-285: the Gaussian interpolation, exact for a Gaussian window's peak)."""
    if j < 1 or j >= Y.size - 1:
        return float(w[j])
    a, b, c = np.log(np.maximum(Y[j - 1:j + 2], 1e-300))
    den = a - 2 * b + c
    d = 0.5 * (a - c) / den if den < 0 else 0.0
    return float(w[j] + d * (w[1] - w[0]))


def _lsq_fit(disc, t, x, w1, w2, K=None):
    """Least-squares 2-D Fourier coefficients (n, nb) of the samples ``x`` (n, N) at times ``t``
    on the torus angles ``(w1 t, w2 t)`` and the residual's norm relative to ``x``'s; ``K`` a
    subset of the harmonics (default ``disc.K``; the coefficients are then in its layout)."""
    K = disc.K if K is None else K
    th1, th2 = w1 * t, w2 * t
    ph = K[1:, 0][:, None] * th1[None, :] + K[1:, 1][:, None] * th2[None, :]
    A = np.empty((t.size, 2 * len(K) - 1))
    A[:, 0] = 1.0
    A[:, 1::2] = np.cos(ph).T
    A[:, 2::2] = np.sin(ph).T
    C, *_ = np.linalg.lstsq(A, x.T, rcond=None)
    r = np.linalg.norm(A @ C - x.T) / max(np.linalg.norm(x - x.mean(axis=1, keepdims=True)), 1e-300)
    return C.T, float(r)


def torus_start_from_simulation(model, lam, x0, harmonics=(8, 8), *, truncation="box", grid=None,
                                transient=300.0, record=200.0, samples_per_period=16, rtol=1e-8):
    """A torus discretization and a guess of a torus from a simulation of the model at ``lam``.

    The ODE is integrated (``solve_ivp``, DOP853, ``rtol``) from ``x0`` over ``transient``
    periods of the first frequency (the forcing's; for an autonomous model ``2 pi`` time units)
    and sampled over the next ``record`` ones.  The frequencies are the peaks of the phase
    state's Hann-windowed spectrum, refined by Gaussian interpolation (:func:`_peak`): for a
    forced model ``w1`` is the forcing frequency and ``w2`` the largest peak off its harmonics,
    reduced to ``(0, w1/2]`` (as the start at an NS point: the same torus, rotation number in
    ``(0, 1/2]``); for an autonomous model ``w1`` is the largest peak and ``w2`` the largest off
    its harmonics.  ``w2`` is then refined by minimising the residual of the least-squares fit
    of the 2-D Fourier coefficients with ``|k2| <= 1`` to the samples (a scan over a spectral
    bin each side of the interpolated peak, then bounded Brent; the
    frequency analysis of Laskar, "Frequency analysis for multi-dimensional systems",
    Physica D 67, 1993, 257-281, with a 2-D Fourier basis), and the fitted coefficients, put in
    the phase of the phase conditions, are the guess.

    Returns
    -------
    disc : TorusAFT
    Z : ndarray
        The guess (correct it with :func:`continue_torus`, no ``Z_orbit``).
    info : dict
        ``lam``, the FFT estimates ``w1_fft``, ``w2_fft``, the fit's relative residual
        ``fit_residual`` and ``second_peak_decay`` (the second frequency's spectral amplitude in
        the record's second half over that in its first: near 1 on a torus, below 1 on a
        decaying transient).

    Raises
    ------
    InputError
        ``x0`` of the wrong size; the simulation diverged (its message says where); or it is
        periodic (no peak off the harmonics of the first frequency above
        :data:`SECOND_PEAK_TOL` of the largest): no torus at that parameter.
    """
    from scipy.optimize import minimize_scalar

    n = model.n
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    if x0.shape != (n,):
        raise InputError(f"the initial state has {x0.size} values; model {model.name!r} has {n} states "
                         f"({', '.join(model.states)})")
    lam = float(lam)
    where = f"{model.continuation} = {lam:.10g}"
    forced = bool(model.forced)
    wf = (lam if model.continuation == model.forcing_frequency else float(model.value(model.forcing_frequency))) \
        if forced else 1.0
    T1 = 2 * np.pi / wf
    t_rec = T1 * np.arange(int(round(record * samples_per_period))) / samples_per_period + transient * T1

    def f(t, y):
        return np.asarray(model.rhs(t if forced else 0.0, y, lam), dtype=float)

    big = 1e6 * max(1.0, float(np.abs(x0).max()))

    def blowup(t, y):
        return big - float(np.abs(y).max())
    blowup.terminal = True
    sol = solve_ivp(f, (0.0, t_rec[-1]), x0, method="DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=t_rec,
                    events=blowup)
    y = np.asarray(sol.y, dtype=float)
    if sol.status != 0 or y.ndim != 2 or y.shape[1] != t_rec.size or not np.all(np.isfinite(y)):
        ev = sol.t_events[0] if sol.t_events is not None and len(sol.t_events[0]) else None
        when = (f"|x| passed {big:.3g} at t = {float(ev[0]):.6g}" if ev is not None else str(sol.message))
        raise InputError(f"the simulation at {where} from x0 = {x0.tolist()} diverged or failed ({when}): no torus "
                         "to fit; start nearer the attractor or at another parameter")
    x = sol.y
    disc = TorusAFT(model, harmonics, truncation, grid)
    i = disc.phase_state
    w, Y = _hann_spectrum(x[i], t_rec[1] - t_rec[0])
    dw = w[1] - w[0]
    if not forced:
        wf = _peak(w, Y, int(np.argmax(Y)))
    # bins away from the harmonics of wf (a Hann peak is 2 bins wide each side)
    harm = np.abs(w / wf - np.round(w / wf)) * wf > 3 * dw
    harm &= w > 3 * dw
    if not harm.any() or Y[harm].max() <= SECOND_PEAK_TOL * Y.max():
        raise InputError(f"the simulation at {where} is periodic (its spectrum has no peak off the harmonics of "
                         f"w1 = {wf:.6g} above {SECOND_PEAK_TOL:g} of the largest): no torus here; a torus exists "
                         "where the periodic orbit is unstable past a Neimark-Sacker point")
    j = int(np.flatnonzero(harm)[np.argmax(Y[harm])])
    fpk = _peak(w, Y, j)
    w2 = fpk - np.floor(fpk / wf) * wf
    if w2 > wf / 2:
        w2 = wf - w2
    # the second frequency's amplitude over the record's two halves (a decaying transient of a
    # periodic attractor shrinks; a torus keeps it)
    half = t_rec.size // 2
    amps = []
    for part in (slice(0, half), slice(half, 2 * half)):
        wp, Yp = _hann_spectrum(x[i, part], t_rec[1] - t_rec[0])
        k = int(np.argmin(np.abs(wp - fpk)))
        amps.append(float(Yp[max(k - 2, 0):k + 3].max()))
    tt = t_rec - t_rec[0]
    # the residual of the fit on the harmonics |k2| <= 1 (the full set has local minima about
    # every bin / H2, and a near-degenerate basis where k . w ~ 0 for some large k): a scan of a
    # bin each side of the interpolated peak, then Brent about the best
    K1 = disc.K[np.abs(disc.K[:, 1]) <= 1]
    scan = w2 + dw * np.linspace(-1.0, 1.0, 41)
    best = int(np.argmin([_lsq_fit(disc, tt, x, wf, v, K1)[1] for v in scan]))
    h = scan[1] - scan[0]
    res = minimize_scalar(lambda v: _lsq_fit(disc, tt, x, wf, v, K1)[1], bounds=(scan[best] - h, scan[best] + h),
                          method="bounded", options=dict(xatol=1e-12 * wf))
    w2_fit = float(res.x)
    U, r = _lsq_fit(disc, tt, x, wf, w2_fit)
    disc.set_phase_harmonics(*choose_phase_harmonics(disc, U))
    U = disc.phase_fixed(U)
    return disc, disc.pack(U, wf, w2_fit, lam), dict(lam=lam, w1_fft=float(wf), w2_fft=float(w2), fit_residual=r,
                                                     second_peak_decay=amps[1] / max(amps[0], 1e-300))


def _lam_row(disc):
    e = np.zeros(disc.size)
    e[-1] = 1.0
    return e


def torus_from_simulation(model, lam, x0, lam_min=-np.inf, lam_max=np.inf, *, harmonics=(8, 8), truncation="box",
                          grid=None, transient=300.0, record=200.0, direction=1.0, max_steps=100, step=0.02,
                          max_step=0.2, xtol=1e-10, errors=True, stability=True, method=None,
                          order=20) -> TorusBranch:
    """The branch of tori through the attracting torus that a simulation at ``lam`` settles on.

    :func:`torus_start_from_simulation` (simulation, frequencies from the spectrum, 2-D Fourier
    fit), then :func:`continue_torus`: Newton at fixed ``lam`` and pseudo-arclength in
    ``[lam_min, lam_max]``, up in ``lam`` (down if ``direction < 0``), by the ANM or Newton
    (``method``, ``order``).  ``max_steps = 0`` gives the corrected torus alone.  Other
    parameters as those two functions.
    """
    _check_method(method)
    if not lam_min <= float(lam) <= lam_max:
        raise InputError(f"the simulation's {model.continuation} = {float(lam):g} is outside [{lam_min:g}, {lam_max:g}]")
    disc, Z, info = torus_start_from_simulation(model, lam, x0, harmonics, truncation=truncation, grid=grid,
                                                transient=transient, record=record)
    try:
        correct(disc, Z, _lam_row(disc), float(Z[-1]), xtol=xtol, max_iter=30, what="torus from the simulation")
    except ConvergenceError:
        raise InputError(
            f"the torus fitted to the simulation at {model.continuation} = {float(lam):.10g} did not converge "
            f"(fit residual {info['fit_residual']:.2g} of the signal; the second frequency "
            f"w2 = {info['w2_fft']:.6g} kept {info['second_peak_decay']:.2g} of its amplitude from the first half of "
            "the record to the second: well below 1 is a decaying transient onto a periodic attractor, a residual "
            "above ~1e-3 a transient not yet over or too few harmonics); lengthen transient (--transient) or raise "
            "the harmonics") from None
    return continue_torus(disc, Z, None, lam_min=lam_min, lam_max=lam_max, max_steps=max_steps, step=step,
                          max_step=max_step, xtol=xtol, info=dict(info, start="simulation"), errors=errors,
                          stability=stability, direction=direction, method=method, order=order)
