"""Two-parameter continuation: Hopf points of equilibria and folds of periodic orbits.

**Hopf points** (:func:`hopf_curve`).  A Hopf point of the original ODE
``x' = f(x; lam, mu)`` is continued in the plane of two parameters (what AUTO does with
ISW = 2 from an HB label) on the standard extended system in the unknowns
``Y = [x, q_r, q_i, omega, mu, lam]``::

    f(x; lam, mu)           = 0        (n)   equilibrium
    J q_r + omega q_i        = 0        (n)   J (q_r + i q_i) = i omega (q_r + i q_i)
    J q_i - omega q_r        = 0        (n)
    c . q_r - 1 = 0,  c . q_i = 0       (2)   normalisation and phase of the eigenvector

with ``J = df/dx(x; lam, mu)`` and a fixed vector ``c`` (3n + 2 equations, 3n + 3 unknowns:
a curve).  Its Jacobian uses the model's ``jac`` and central differences of it for the
second derivatives (they only steer Newton: the points solve the residual, which is exact).
For the belt oscillator of seed 000 the curve in (Vb, FN) is
``2 zeta omega1 = (FN / M1) mu_n'(-Vb)`` (trace zero, determinant ``omega1^2``): it joins the
two Hopf points B1 and B3 of one ``FN`` through a minimum of ``FN`` below which steady
sliding is stable at every belt speed.

**Folds of periodic orbits** (:func:`fold_curve`).  A fold (turning point in ``lam``) of a
periodic branch ``R(Z; mu) = 0``, ``Z = [Y, lam]`` (harmonic balance or collocation of the
states), is where ``A = dR/dY`` is singular.  It is
continued on the minimally augmented system (Govaerts, *Numerical methods for bifurcations
of dynamical equilibria*, SIAM 2000, ch. 4) in the unknowns ``[Z, mu]``::

    R(Z; mu) = 0,      g(Z; mu) = 0,      [[A, b], [c^T, 0]] [v; g] = [0; 1]

with ``b, c`` the left and right singular vectors of ``A`` at the start.  The gradient of
``g`` is ``-w^T (dA) v`` with ``w`` the solution of the transposed bordered system; its ``Z``
part is the directional derivative of ``J(Z)^T w`` along ``[v; 0]`` (the symmetry of second
derivatives: exact for the quadratic HBM rows, by central differences for the point rows
and the AFT),
its ``mu`` part a central difference of the residual in ``mu``.  Each ``mu`` gets its own
discretization of the model with that parameter value.

Both curves are followed by the engine's pseudo-arclength loop
(``engine._predictor_corrector.pseudo_arclength``) in unknowns scaled by their sizes at the start, stop on the parameter bounds
(the last point exactly on the bound) and locate their turning points in ``mu``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json

import numpy as np

from ..discretizations._base import Discretization
from ..discretizations._scaled import ScaledDiscretization
from ..engine._bordered import Counters
from ..engine._newton import correct, tangent_at
from ..engine._options import NewtonOptions
from ..engine._predictor_corrector import pseudo_arclength
from ..errors import ConvergenceError, InputError
from ..results._atomic import atomic_path, read_hdf5
from ..results._checked import NUMBERS, Damaged, dataset, json_attr, text_attr
from ..results._figure import finish, subplots
from ..results._plots import drawable
from ..model._interface import Model
from ._branch_points import _dense

__all__ = ["BifurcationCurve", "hopf_curve", "fold_curve"]


class _HopfSystem(Discretization):
    """The extended Hopf system as a discretization (``m``, ``size``, ``residual``, ``jacobian``)."""

    kind = "hopf-system"

    def __init__(self, model: Model, mu_name: str, c):
        self.model = model
        self.n = n = model.n
        self.i_lam = model.lam_index
        if mu_name not in model.parameters:
            raise InputError(f"unknown parameter {mu_name!r} for model {model.name!r}; its parameters are "
                             f"{', '.join(model.parameters)}")
        self.i_mu = model.parameters.index(mu_name)
        if self.i_mu == self.i_lam:
            raise InputError(f"the second parameter {mu_name!r} is the model's continuation parameter; "
                             "choose another one")
        self.c = np.asarray(c, dtype=float)
        self.fd_floor = (1e-12, 1e-12)      # smallest sizes of (mu, lam) for difference steps
        self.m = 3 * n + 2

    def split(self, Y):
        n = self.n
        return Y[:n], Y[n:2 * n], Y[2 * n:3 * n], Y[3 * n], Y[3 * n + 1], Y[3 * n + 2]

    def params(self, lam, mu):
        p = self.model.param_vector(lam)
        p[self.i_mu] = mu
        return p

    def _f(self, x, p):
        return np.asarray(self.model.rhs(0.0, x, params=p), dtype=float)

    def _J(self, x, p):
        return np.asarray(self.model.jac(0.0, x, params=p), dtype=float)

    def residual(self, Y):
        x, qr, qi, om, mu, lam = self.split(np.asarray(Y, dtype=float))
        p = self.params(lam, mu)
        J = self._J(x, p)
        return np.concatenate([self._f(x, p), J @ qr + om * qi, J @ qi - om * qr,
                               [self.c @ qr - 1.0, self.c @ qi]])

    def jacobian(self, Y):
        Y = np.asarray(Y, dtype=float)
        n = self.n
        x, qr, qi, om, mu, lam = self.split(Y)
        p = self.params(lam, mu)
        J = self._J(x, p)
        A = np.zeros((self.m, self.size))
        I = np.eye(n)
        A[:n, :n] = J
        A[n:2 * n, n:2 * n], A[n:2 * n, 2 * n:3 * n], A[n:2 * n, 3 * n] = J, om * I, qi
        A[2 * n:3 * n, n:2 * n], A[2 * n:3 * n, 2 * n:3 * n], A[2 * n:3 * n, 3 * n] = -om * I, J, -qr
        A[3 * n, n:2 * n] = self.c
        A[3 * n + 1, 2 * n:3 * n] = self.c
        # second derivatives by central differences of jac (and f, J in the parameters)
        # relative steps: the states and the parameters set the scales on which f varies
        # (the drill's law varies on the scale of eta ~ kappa, down to 1e-4)
        hx = 1e-7 * max(float(np.max(np.abs(x))), abs(lam), abs(mu), 1e-12)
        for k in range(n):
            e = np.zeros(n)
            e[k] = hx
            dJ = (self._J(x + e, p) - self._J(x - e, p)) / (2 * hx)
            A[n:2 * n, k] = dJ @ qr
            A[2 * n:3 * n, k] = dJ @ qi
        for col, i, floor in ((3 * n + 1, self.i_mu, self.fd_floor[0]), (3 * n + 2, self.i_lam, self.fd_floor[1])):
            # relative (parameters far below 1: kappa = 1e-4), floored by the parameter's scale
            # on the curve (a parameter at 0: mu_v)
            h = 1e-7 * max(abs(p[i]), floor)
            pp, pm = p.copy(), p.copy()
            pp[i] += h
            pm[i] -= h
            dJ = (self._J(x, pp) - self._J(x, pm)) / (2 * h)
            A[:n, col] = (self._f(x, pp) - self._f(x, pm)) / (2 * h)
            A[n:2 * n, col] = dJ @ qr
            A[2 * n:3 * n, col] = dJ @ qi
        return A


#: Colour and legend of each kind of curve.
_KIND_LABELS = {"hopf": ("C3", "Hopf points"), "fold": ("C0", "folds of periodic orbits"),
                "pd": ("C1", "period doublings"), "ns": ("C5", "Neimark-Sacker points")}


@dataclass
class BifurcationCurve:
    """A curve of Hopf points or of folds of periodic orbits in the plane of two parameters.

    Attributes
    ----------
    kind : str
        ``"hopf"`` (Hopf points of equilibria), ``"fold"`` (folds of periodic orbits), ``"pd"``
        (period doublings) or ``"ns"`` (Neimark-Sacker points; ``analysis/_pd_ns_curves.py``).
    model : str
    lam_name, mu_name : str
        The model's continuation parameter and the second parameter.
    lam, mu, omega : ndarray
        The points of the curve; the angular frequency of the crossing pair ``+- i omega``
        (Hopf) or of the orbit (fold).
    states : ndarray (n_points, n)
        The equilibrium at each point (Hopf) or the peak-to-peak amplitudes of the states of
        the orbit (fold).
    folds_mu : list of float
        Turning points of ``mu`` along the curve (e.g. the smallest normal force with a Hopf
        point), located by the sign change of the tangent's ``mu`` component.
    status, message : str
        ``"range"``, ``"max_steps"``, ``"bogdanov-takens"`` (omega went to zero),
        ``"failed"`` or ``"interrupted"``; the points computed so far are kept.
    success : bool
        False after a failure or an interruption (the result convention).
    columns : dict of ndarray
        Further per-point columns (NS curves: ``theta``, the argument of the critical
        multipliers ``exp(+-i theta)``).
    solutions : ndarray or None
        The orbits' unknowns on the curve (fold, PD, NS curves; not saved).
    counters : dict
        Work counters of the run (PD, NS curves: points, residuals, Jacobians, monodromies).
    codim2 : list of dict
        Codimension-2 points detected along a PD or NS curve (``analysis/_pd_ns_curves``):
        ``kind`` (``"fold-flip"``, ``"1:2"``, ``"flip-NS"`` on PD curves; ``"fold-NS"``,
        ``"flip-NS"``, ``"double-NS"`` on NS curves), ``lam``, ``mu``, ``located`` (zeroed on
        the curve, or only bracketed) and ``multiplier`` (the crossing multiplier's distance
        from +1, -1 or the unit circle there).
    """

    model: str
    lam_name: str
    mu_name: str
    lam: np.ndarray
    mu: np.ndarray
    omega: np.ndarray
    states: np.ndarray
    status: str
    message: str
    folds_mu: list = field(default_factory=list)
    parameters: dict = field(default_factory=dict)
    kind: str = "hopf"
    columns: dict = field(default_factory=dict)
    solutions: np.ndarray | None = None
    counters: dict = field(default_factory=dict)
    codim2: list = field(default_factory=list)

    def __len__(self):
        return len(self.lam)

    @property
    def success(self) -> bool:
        return self.status not in ("failed", "interrupted")

    def save(self, path):
        """HDF5: root attributes ``kind`` (``hopf_curve`` or ``fold_curve``), ``model``,
        ``lam_name``, ``mu_name``, ``status``, ``message``, ``parameters`` (JSON),
        ``folds_mu``, ``counters`` (JSON); datasets ``lam``, ``mu``, ``omega`` (n_points,),
        ``states`` (n_points, n) and ``columns/<name>`` (n_points,); ``kind`` may also be
        ``pd_curve`` or ``ns_curve``, whose codimension-2 points are the attribute
        ``codim2_kinds`` (JSON list of names), the dataset ``codim2`` (k, 3): ``lam``, ``mu``,
        the crossing multiplier's distance (NaN where none), and the attribute
        ``codim2_located`` (k,) of 0/1."""
        import h5py
        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            for k in ("model", "lam_name", "mu_name", "status", "message"):
                f.attrs[k] = str(getattr(self, k))
            f.attrs["kind"] = f"{self.kind}_curve"
            f.attrs["parameters"] = json.dumps(self.parameters)
            f.attrs["folds_mu"] = np.asarray(self.folds_mu, dtype=float)
            for k in ("lam", "mu", "omega", "states"):
                f[k] = np.asarray(getattr(self, k), dtype=float)
            for k, v in self.columns.items():
                f[f"columns/{k}"] = np.asarray(v, dtype=float)
            f.attrs["counters"] = json.dumps(self.counters)
            if self.codim2:
                f.attrs["codim2_kinds"] = json.dumps([c["kind"] for c in self.codim2])
                f.attrs["codim2_located"] = np.array([int(c["located"]) for c in self.codim2])
                f["codim2"] = np.array([[c["lam"], c["mu"], np.nan if c["multiplier"] is None else c["multiplier"]]
                                        for c in self.codim2], dtype=float)

    def plot(self, path=None, ax=None, title=None):
        """``mu`` against ``lam`` (matplotlib), the turning points in ``mu`` marked; with
        ``path`` the figure is written there.  Returns the axes."""
        fig = None
        if ax is None:
            fig, ax = subplots(path, figsize=(6, 4.2), layout="constrained")
        color, label = _KIND_LABELS.get(self.kind, ("C0", self.kind))
        ax.plot(self.lam, self.mu, color=color, label=label)
        for f in self.folds_mu:
            ax.axhline(f, color="0.6", lw=0.8, ls=":")
            ax.annotate(drawable(f"turning point: {self.mu_name} = {f:.6g}"),
                        (self.lam[np.argmin(np.abs(self.mu - f))], f),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
        for c in self.codim2:
            ax.plot([c["lam"]], [c["mu"]], "o" if c["located"] else "s", color="k", ms=5, mfc="none")
            ax.annotate(drawable(c["kind"]), (c["lam"], c["mu"]), textcoords="offset points", xytext=(5, -10),
                        fontsize=8)
        ax.set_xlabel(drawable(self.lam_name))
        ax.set_ylabel(drawable(self.mu_name))
        ax.set_title(drawable(title or f"{self.model}: " + ("Hopf points of the equilibria" if self.kind == "hopf"
                                                            else _KIND_LABELS.get(self.kind, ("", self.kind))[1])))
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        if fig is not None:
            finish(fig, path, dpi=130)
        return ax

    @classmethod
    def load(cls, path):
        """The curve saved by :meth:`save` to ``path``, every attribute and dataset checked before
        it is read (``results/_checked``): a damaged or hostile file is an :class:`InputError`
        naming the file and the attribute or dataset."""
        return read_hdf5(path, cls._read, "curve file")

    @classmethod
    def _read(cls, f):
        kinds = tuple(f"{k}_curve" for k in _KIND_LABELS) + ("hopf_curve", "fold_curve")
        kind = text_attr(f, "kind", "hopf_curve")
        if kind not in kinds:
            raise Damaged(f"attribute 'kind' of /: {kind[:60]!r}, not one of {', '.join(sorted(set(kinds)))}")
        lam = dataset(f, "lam", (None,))
        n = len(lam)
        folds = np.atleast_1d(f.attrs.get("folds_mu", np.zeros(0)))
        if folds.dtype.kind not in NUMBERS or folds.ndim != 1:
            raise Damaged(f"attribute 'folds_mu' of /: {folds.dtype} of shape {folds.shape}, not a list of numbers")
        codim2 = []
        if "codim2_kinds" in f.attrs:
            kinds = json_attr(f, "codim2_kinds", "list of names")
            rows = dataset(f, "codim2", (len(kinds), 3))
            located = np.atleast_1d(f.attrs.get("codim2_located", np.zeros(len(kinds))))
            if located.dtype.kind not in NUMBERS or located.shape != (len(kinds),):
                raise Damaged(f"attribute 'codim2_located' of /: {located.dtype} of shape {located.shape}, "
                              f"not {len(kinds)} numbers")
            codim2 = [dict(kind=str(k), lam=float(r[0]), mu=float(r[1]), located=bool(o),
                           multiplier=None if np.isnan(r[2]) else float(r[2]))
                      for k, r, o in zip(kinds, rows, located)]
        columns = {}
        if "columns" in f:
            for name in f["columns"]:
                columns[str(name)] = dataset(f, f"columns/{name}", (n,))
        return cls(model=text_attr(f, "model"), lam_name=text_attr(f, "lam_name"), mu_name=text_attr(f, "mu_name"),
                   lam=lam, mu=dataset(f, "mu", (n,)), omega=dataset(f, "omega", (n,)),
                   states=dataset(f, "states", (n, None)), status=text_attr(f, "status"),
                   message=text_attr(f, "message", ""), folds_mu=[float(v) for v in folds],
                   parameters=json_attr(f, "parameters", "table of numbers", {}), kind=kind.replace("_curve", ""),
                   columns=columns, counters=json_attr(f, "counters", "table of numbers", {}), codim2=codim2)


def hopf_curve(model: Model, hopf, mu_name: str, mu_min: float, mu_max: float, *, direction: float = 1.0,
               lam_min: float = -np.inf, lam_max: float = np.inf, step: float = 1e-2, max_step: float = 0.1,
               max_steps: int = 1000, xtol: float = 1e-11) -> BifurcationCurve:
    """Continue a Hopf point of an equilibrium branch in a second parameter ``mu_name``.

    Parameters
    ----------
    model : Model
        The model whose equilibrium branch gave ``hopf`` (its continuation parameter is the
        first parameter of the curve).
    hopf : SpecialPoint
        A ``"hopf"`` point of :func:`equilibrium_branch` (its ``solution`` holds the states).
    mu_name : str
        The second parameter (its current value in ``model`` is the start).
    mu_min, mu_max : float
        Range of the second parameter; the run stops on its bounds (the last point exactly
        on the bound) or on ``lam_min``/``lam_max``.
    direction : float
        Sign of the first step in ``mu``.
    step, max_step : float
        First and largest pseudo-arclength step, in unknowns scaled by their sizes at the
        start (0.1: about a 10 % change of the parameters per step).
    max_steps : int
    xtol : float
        Newton tolerance (relative update).

    Returns
    -------
    BifurcationCurve
        ``kind = "hopf"``; also on failure or Ctrl-C (``status``/``message`` say why; the
        points so far are kept).
    """
    if getattr(hopf, "kind", None) != "hopf":
        raise InputError("hopf_curve needs a 'hopf' special point of an equilibrium branch")
    n = model.n
    mu0 = _start_mu(model, mu_name, mu_min, mu_max)
    lam0 = float(hopf.param)
    x0 = np.asarray(hopf.solution, dtype=float)[:n]
    w, V = np.linalg.eig(np.asarray(model.jac(0.0, x0, lam0), dtype=float))
    pair = np.flatnonzero(np.abs(w.imag) > 1e-9 * max(1.0, float(np.max(np.abs(w)))))
    if not pair.size:
        raise InputError(f"no complex eigenvalue pair at the Hopf point {model.continuation} = {lam0:g}")
    k = int(pair[np.argmin(np.abs(w[pair].real))])            # the crossing pair
    om0 = abs(float(w[k].imag))
    v = V[:, k] if w[k].imag > 0 else np.conj(V[:, k])
    c = v.real / (v.real @ v.real)
    v = v / (c @ v)                                     # c . q_r = 1, c . q_i = 0
    hs = _HopfSystem(model, mu_name, c)
    Y0 = np.concatenate([x0, v.real, v.imag, [om0, mu0, lam0]])
    # unknowns scaled by their current sizes (state, eigenvector parts, omega, mu, lam):
    # pseudo-arclength steps are then relative changes, and a curve that is steep in one
    # parameter (the belt's Hopf curve near a pole of FN(Vb)) is not crossed in one step
    floors = (1e-8 * max(float(np.max(np.abs(x0))), 1e-300), _floor(mu0, (mu_min, mu_max)),
              _floor(lam0, (lam_min, lam_max)))

    def rescale(Y):
        def size(block, floor):
            return max(float(np.max(np.abs(block))), floor)
        x, qr, qi = Y[:n], Y[n:2 * n], Y[2 * n:3 * n]
        return np.concatenate([np.full(n, size(x, floors[0])), np.full(n, size(qr, 1e-300)),
                               np.full(n, size(qi, 1e-300)),
                               [abs(Y[3 * n]) or 1.0, max(abs(Y[-2]), floors[1]), max(abs(Y[-1]), floors[2])]])
    hs.fd_floor = (floors[1], floors[2])
    sys_ = ScaledDiscretization(hs, rescale(Y0))
    pts, turning, status, message = _follow(
        sys_, Y0 / sys_.scale, rescale, i_mu=hs.size - 2, i_lam=hs.size - 1, mu_min=mu_min, mu_max=mu_max,
        lam_min=lam_min, lam_max=lam_max, direction=direction, step=step, max_step=max_step, max_steps=max_steps,
        xtol=xtol, names=(model.continuation, mu_name),
        stop=lambda Y: (("bogdanov-takens", f"omega went to zero at {mu_name} = {Y[-2]:.10g}")
                        if Y[3 * n] <= 1e-8 * om0 else None))
    P = np.array(pts) if pts else np.zeros((0, hs.size))
    return BifurcationCurve(model=model.name, lam_name=model.continuation, mu_name=mu_name, lam=P[:, -1],
                            mu=P[:, -2], omega=P[:, 3 * n], states=P[:, :n], status=status, message=message,
                            folds_mu=turning, parameters=_parameters(model), kind="hopf")


def _start_mu(model, mu_name, mu_min, mu_max):
    """The model's value of the second parameter (checked: a parameter, not the continuation
    one, inside its range)."""
    if mu_name not in model.parameters:
        raise InputError(f"unknown parameter {mu_name!r} for model {model.name!r}; its parameters are "
                         f"{', '.join(model.parameters)}")
    if mu_name == model.continuation:
        raise InputError(f"the second parameter {mu_name!r} is the model's continuation parameter; "
                         "choose another one")
    if not mu_min < mu_max:
        raise InputError(f"the range of {mu_name} is empty: mu_min = {mu_min:g} must lie below mu_max = {mu_max:g} "
                         "(the direction of the first step is the argument direction)")
    mu0 = float(model.value(mu_name))
    if not mu_min <= mu0 <= mu_max:
        raise InputError(f"the start {mu_name} = {mu0:g} is outside [{mu_min:g}, {mu_max:g}]")
    return mu0


def _parameters(model):
    return {k: float(v) for k, v in zip(model.parameters, model.param_vector())}


def _floor(v0, bounds):
    """Smallest scale of a parameter in the step control.

    A range that excludes zero (or an unbounded one) is followed in relative steps down to
    1e-8 of the start (the drill's kappa from 1 to 1e-4); a bounded range that contains zero
    (mu_v from 0 to 0.05) in steps relative to its largest bound, not to the parameter
    itself, which passes through or starts at zero.
    """
    lo, hi = bounds
    contains_zero = np.isfinite(lo) and np.isfinite(hi) and lo <= 0 <= hi
    if v0 != 0 and not contains_zero:
        return 1e-8 * abs(v0)
    sizes = [abs(b) for b in bounds if np.isfinite(b)] + [abs(v0)]
    return max(sizes) or 1.0


def _follow(sys_, W, rescale, *, i_mu, i_lam, mu_min, mu_max, lam_min, lam_max, direction, step, max_step,
            max_steps, xtol, names, stop=None):
    """Follow a curve of the scaled system ``sys_`` from ``W`` by the engine's pseudo-arclength loop.

    After every accepted point the unknowns are rescaled by ``rescale(Y)`` (their current
    sizes), so that a step is a relative change even when a parameter falls by decades along
    the curve (the drill's Hopf curve from kappa = 1 to 1e-4).  Returns the points
    (unscaled), the turning points in ``mu`` (located), status and message; a failure or
    Ctrl-C keeps the points so far.
    """
    e_mu = np.zeros(len(W))
    e_mu[i_mu] = 1.0
    opts = NewtonOptions(step=step, max_step=max_step, min_step=min(1e-12, step), target_iterations=4,
                         max_correction=0.3, max_angle=20.0, newton_xtol=xtol, max_steps=max_steps)
    rec = _CurveRecorder(sys_, rescale, i_mu, i_lam, (mu_min, mu_max), (lam_min, lam_max), names, stop,
                         max_steps, xtol)
    try:
        W, _ = correct(sys_, W, e_mu, float(W[i_mu]), xtol=xtol)      # the start at its mu, refined
        t = tangent_at(sys_, W, e_mu * (1.0 if direction >= 0 else -1.0))
        rec.start(W, t)
        pseudo_arclength(sys_, W, t, opts, rec, rescale=rec.rescale)
    except KeyboardInterrupt:
        rec.status, rec.message = "interrupted", "interrupted by the user (Ctrl-C); the points so far are kept"
    except ConvergenceError as err:
        rec.status, rec.message = "failed", f"continuation of the curve failed: {err}"
    turning = []
    for Ya, Yb, sc in rec.folds:
        sys_.scale = sc
        turning.append(_turning_mu(sys_, Ya / sc, Yb / sc, i_mu, xtol) * sc[i_mu])
    return rec.points, [float(f) for f in turning if np.isfinite(f)], rec.status, rec.message


class _CurveRecorder:
    """Engine recorder (:mod:`..engine._recorder` protocol) of a two-parameter curve.

    Stops on the bounds of both parameters (the last point corrected onto the bound), on the
    ``stop`` predicate or after ``max_steps`` points; notes the turning points in ``mu``;
    rescales the unknowns after every point (``rescale``).
    """

    def __init__(self, sys_, rescale, i_mu, i_lam, mu_bounds, lam_bounds, names, stop, max_steps, xtol):
        self.sys_, self._rescale, self.i_mu, self.stop, self.xtol = sys_, rescale, i_mu, stop, xtol
        e = np.eye(sys_.size)
        self.bounds = [(b, e[i_mu], names[1]) for b in mu_bounds] + [(b, e[i_lam], names[0]) for b in lam_bounds]
        self.max_steps = max_steps
        self.counters = Counters()
        self.points, self.folds = [], []
        self.status, self.message, self.done = "failed", "", False

    def start(self, W, t):
        self.W, self.t = W, t
        self.points.append(W * self.sys_.scale)

    def note_det_sign(self, Z, t, sign):
        pass

    def add(self, Wn, tn, step_length=None):
        scale = self.sys_.scale
        Y, Yn = self.W * scale, Wn * scale
        stopped = self.stop(Yn) if self.stop is not None else None
        if stopped is not None:
            self.points.append(Yn)
            self.status, self.message = stopped
            self.done = True
            return
        bound = next(((b, vec, name) for b, vec, name in self.bounds
                      if np.isfinite(b) and (Y @ vec - b) * (Yn @ vec - b) < 0), None)
        if tn[self.i_mu] * self.t[self.i_mu] < 0:
            self.folds.append((Y, Yn, scale.copy()))
        if bound is not None:
            b, vec, name = bound
            s_ = (b - Y @ vec) / ((Yn - Y) @ vec)
            Wb, _ = correct(self.sys_, self.W + s_ * (Wn - self.W), vec, b / float(vec @ scale), xtol=self.xtol)
            self.points.append(Wb * scale)
            self.status, self.message, self.done = "range", f"reached {name} = {b:g}", True
            return
        self.points.append(Yn)
        if len(self.points) > self.max_steps:
            self.status, self.message = "max_steps", f"step budget exhausted (max_steps = {self.max_steps})"
            self.done = True

    def rescale(self, Wn, tn):
        """The accepted point and tangent in unknowns scaled by the point's current sizes."""
        scale = self.sys_.scale
        Yn = Wn * scale
        new = self._rescale(Yn)
        t = tn * scale / new
        self.sys_.scale = new
        self.W, self.t = Yn / new, t / np.linalg.norm(t)
        return self.W, self.t


def disc_at(base, mu_name, mu, cache):
    """The discretization ``base`` on its model with ``mu_name = mu``, kept in ``cache`` (a dict,
    at most 9 values: the curves ask for the same few values of ``mu`` at a time)."""
    mu = float(mu)
    d = cache.get(mu)
    if d is None:
        d = base.on_model(base.model.with_params(**{mu_name: mu}))
        if len(cache) > 8:
            cache.clear()
        cache[mu] = d
    return d


class _FoldSystem(Discretization):
    """The minimally augmented fold system in ``W = [Z, mu]`` (module docstring)."""

    kind = "fold-system"

    def __init__(self, disc, mu_name, b, c):
        self.base, self.mu_name = disc, mu_name
        self.b, self.c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
        self.m = disc.m + 1
        self.fd_floor = 1e-12                # smallest size of mu for difference steps
        self._discs = {}

    def disc_at(self, mu):
        """The discretization of the model with ``mu_name = mu`` (cached)."""
        return disc_at(self.base, self.mu_name, mu, self._discs)

    def _bordered(self, J):
        import scipy.linalg
        A = J[:, :-1]
        m = A.shape[0]
        M = np.empty((m + 1, m + 1))
        M[:m, :m], M[:m, m], M[m, :m], M[m, m] = A, self.b, self.c, 0.0
        return scipy.linalg.lu_factor(M, check_finite=False)

    def _g(self, d, Z, want_vectors=False):
        import scipy.linalg
        J = _dense(d.jacobian(Z))
        lu = self._bordered(J)
        rhs = np.zeros(J.shape[0] + 1)
        rhs[-1] = 1.0
        vg = scipy.linalg.lu_solve(lu, rhs, check_finite=False)
        if not want_vectors:
            return vg[-1]
        wg = scipy.linalg.lu_solve(lu, rhs, trans=1, check_finite=False)
        return vg[-1], vg[:-1], wg[:-1], J

    def residual(self, W):
        W = np.asarray(W, dtype=float)
        Z, mu = W[:-1], W[-1]
        d = self.disc_at(mu)
        return np.append(d.residual(Z), self._g(d, Z))

    def jacobian(self, W):
        W = np.asarray(W, dtype=float)
        Z, mu = W[:-1], W[-1]
        d = self.disc_at(mu)
        _, v, w, J = self._g(d, Z, want_vectors=True)
        out = np.zeros((self.m, self.size))
        out[:-1, :-1] = J
        hm = 1e-7 * max(abs(mu), self.fd_floor)
        dp, dm = self.disc_at(mu + hm), self.disc_at(mu - hm)
        out[:-1, -1] = (dp.residual(Z) - dm.residual(Z)) / (2 * hm)
        vh = np.append(v, 0.0)                     # the null direction, lam fixed
        # grad_Z g = -w^T d(J vh)/dZ = -(d/de) J(Z + e vh)^T w  (symmetric second derivatives)
        e = 1e-6 * max(np.linalg.norm(Z), 1e-300) / max(np.linalg.norm(vh), 1e-300)
        out[-1, :-1] = -(_dense(d.jacobian(Z + e * vh)).T @ w - _dense(d.jacobian(Z - e * vh)).T @ w) / (2 * e)
        # dg/dmu = -w^T (dA/dmu) v, A v by central differences along vh at mu +- hm
        Av = [(x.residual(Z + e * vh) - x.residual(Z - e * vh)) / (2 * e) for x in (dp, dm)]
        out[-1, -1] = -(w @ (Av[0] - Av[1])) / (2 * hm)
        return out


def fold_curve(branch, fold, mu_name: str, mu_min: float, mu_max: float, *, direction: float = 1.0,
               lam_min: float = -np.inf, lam_max: float = np.inf, step: float = 1e-2, max_step: float = 0.1,
               max_steps: int = 500, xtol: float = 1e-10) -> BifurcationCurve:
    """Continue a fold of a periodic branch in a second parameter ``mu_name``.

    Parameters
    ----------
    branch : Branch
        The periodic branch that holds ``fold``: a harmonic balance (HBM, AFT) or a
        collocation, any discretization that rebuilds itself on the model with another
        ``mu`` (``on_model``, contract item 17); it fixes H or the mesh.  The collocations'
        sparse Jacobians are made dense (the bordered system of ``g``): fine for a few
        thousand unknowns.
    fold : SpecialPoint
        A ``"fold"`` point of ``branch``.
    mu_name : str
        The second parameter (its value in the branch's model is the start).
    mu_min, mu_max, lam_min, lam_max, direction, step, max_step, max_steps, xtol
        As in :func:`hopf_curve`.

    Returns
    -------
    BifurcationCurve
        ``kind = "fold"``: ``lam``, ``mu`` and ``omega`` of the folds, ``states`` the
        peak-to-peak amplitudes of the states; also on failure or Ctrl-C.
    """
    from ..results._branch import Branch
    if getattr(fold, "kind", None) != "fold":
        raise InputError("fold_curve needs a 'fold' special point of a periodic branch")
    disc = getattr(branch, "discretization", None)
    if disc is None:
        raise InputError("fold_curve needs the branch's discretization: for a branch loaded from a file use "
                         "frictionkit.runtime.fold_curve (it rebuilds it) or attach_discretization(branch) first")
    if branch.kind != "periodic":
        raise InputError(f"fold_curve continues folds of periodic orbits, not of a {branch.kind} branch")
    model = disc.model
    mu0 = _start_mu(model, mu_name, mu_min, mu_max)
    try:
        disc.on_model(model)
    except NotImplementedError:
        raise InputError(f"fold_curve: a {disc.kind} branch cannot be rebuilt with another {mu_name} (no "
                         "on_model); continue the fold on an AFT, HBM or collocation-of-the-states branch") from None
    Z0 = np.asarray(fold.solution, dtype=float)
    A = _dense(disc.jacobian(Z0))[:, :-1]
    U_, _, Vt = np.linalg.svd(A)
    sys0 = _FoldSystem(disc, mu_name, U_[:, -1], Vt[-1])
    # scaled unknowns (current sizes): each variable's block (its harmonics, or its nodal values
    # on a collocation mesh; contract item 7) by its largest entry, then omega, lam, mu
    info = disc.unpack(Z0)
    n_var, width = np.shape(info["coefficients"] if disc.H is not None else info["variables"])
    n_y = n_var * width
    floors = (1e-8 * max(float(np.abs(Z0[:n_y]).max()), 1e-300), _floor(Z0[-1], (lam_min, lam_max)),
              _floor(mu0, (mu_min, mu_max)))

    def rescale(W):
        U = W[:n_y].reshape(n_var, width)
        rest = np.abs(W[n_y:-2])                              # omega (autonomous orbits)
        return np.concatenate([np.repeat(np.maximum(np.abs(U).max(axis=1), floors[0]), width),
                               np.where(rest > 0, rest, 1.0), [max(abs(W[-2]), floors[1]), max(abs(W[-1]), floors[2])]])
    W0 = np.append(Z0, mu0)
    sys0.fd_floor = floors[2]
    sys_ = ScaledDiscretization(sys0, rescale(W0))
    pts, turning, status, message = _follow(
        sys_, W0 / sys_.scale, rescale, i_mu=sys0.size - 1, i_lam=sys0.size - 2, mu_min=mu_min, mu_max=mu_max,
        lam_min=lam_min, lam_max=lam_max, direction=direction, step=step, max_step=max_step, max_steps=max_steps,
        xtol=xtol, names=(model.continuation, mu_name))
    P = np.array(pts) if pts else np.zeros((0, sys0.size))
    # omega and peak-to-peak amplitudes of the folds as a branch's columns (exact extrema of
    # a Fourier series, piecewise polynomials sampled)
    cols = Branch.from_solutions(disc, P[:, :-1], np.zeros((len(P), disc.size)))
    ptp = np.column_stack([cols.ptp[s] for s in model.states]).reshape(-1, model.n)
    om = np.asarray(cols.omega, dtype=float)
    return BifurcationCurve(model=model.name, lam_name=model.continuation, mu_name=mu_name, lam=P[:, -2],
                            mu=P[:, -1], omega=om, states=ptp, status=status, message=message,
                            folds_mu=turning, parameters=_parameters(model), kind="fold")


def _turning_mu(sys_, Wa, Wb, i_mu, xtol):
    """Scaled ``mu`` at a turning point of a curve in ``mu``: the tangent's ``mu`` component
    zeroed by Brent's method on corrected points between ``Wa`` and ``Wb`` (NaN if it fails)."""
    from ..engine._locate import locate_on_branch
    chord = Wb - Wa

    def test(W):
        return tangent_at(sys_, W, chord)[i_mu]
    try:
        # mu is quadratic in the chord coordinate at the turning point (see _locate_folds)
        W = locate_on_branch(sys_, Wa, Wb, test, xtol=xtol, stol=1e-8)
    except (ConvergenceError, ValueError):
        return np.nan
    return float(W[i_mu])
