"""Two-parameter continuation of Hopf points of equilibria: the boundary of stable sliding.

A Hopf point of the original ODE ``x' = f(x; lam, mu)`` is continued in the plane of two
parameters (what AUTO does with ISW = 2 from an HB label) on the standard extended system in
the unknowns ``Y = [x, q_r, q_i, omega, mu, lam]``::

    f(x; lam, mu)           = 0        (n)   equilibrium
    J q_r + omega q_i        = 0        (n)   J (q_r + i q_i) = i omega (q_r + i q_i)
    J q_i - omega q_r        = 0        (n)
    c . q_r - 1 = 0,  c . q_i = 0       (2)   normalisation and phase of the eigenvector

with ``J = df/dx(x; lam, mu)`` and a fixed vector ``c`` (3n + 2 equations, 3n + 3 unknowns:
a curve).  Its Jacobian uses the model's ``jac`` and central differences of it for the
second derivatives (they only steer Newton: the points solve the residual, which is exact).
The curve is followed by pseudo-arclength Newton (``_newton.correct`` and ``tangent_at`` on
this system).  For the belt oscillator of seed 000 the curve in (Vb, FN) is
``2 zeta omega1 = (FN / M1) mu_n'(-Vb)`` (trace zero, determinant ``omega1^2``): it joins the
two Hopf points B1 and B3 of one ``FN`` through a minimum of ``FN`` below which steady
sliding is stable at every belt speed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ._model import Model
from ._continuation import ScaledDiscretization
from ._newton import correct, tangent_at
from .errors import ConvergenceError, InputError

__all__ = ["HopfCurve", "hopf_curve"]


class _HopfSystem:
    """The extended Hopf system as a discretization (``m``, ``size``, ``residual``, ``jacobian``)."""

    def __init__(self, model: Model, mu_name: str, c):
        self.model = model
        self.n = n = model.n
        self.i_lam = model.lam_index
        if mu_name not in model.module.PARAMETERS:
            raise InputError(f"unknown parameter {mu_name!r} for model {model.name!r}; its parameters are "
                             f"{', '.join(model.module.PARAMETERS)}")
        self.i_mu = model.module.PARAMETERS.index(mu_name)
        if self.i_mu == self.i_lam:
            raise InputError(f"the second parameter {mu_name!r} is the model's continuation parameter; "
                             "choose another one")
        self.c = np.asarray(c, dtype=float)
        self.m = 3 * n + 2
        self.size = 3 * n + 3

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
        hx = 1e-6 * max(1.0, float(np.max(np.abs(x))))
        for k in range(n):
            e = np.zeros(n)
            e[k] = hx
            dJ = (self._J(x + e, p) - self._J(x - e, p)) / (2 * hx)
            A[n:2 * n, k] = dJ @ qr
            A[2 * n:3 * n, k] = dJ @ qi
        for col, i in ((3 * n + 1, self.i_mu), (3 * n + 2, self.i_lam)):
            h = 1e-6 * max(1.0, abs(p[i]))
            pp, pm = p.copy(), p.copy()
            pp[i] += h
            pm[i] -= h
            dJ = (self._J(x, pp) - self._J(x, pm)) / (2 * h)
            A[:n, col] = (self._f(x, pp) - self._f(x, pm)) / (2 * h)
            A[n:2 * n, col] = dJ @ qr
            A[2 * n:3 * n, col] = dJ @ qi
        return A


@dataclass
class HopfCurve:
    """A curve of Hopf points in the plane of two parameters.

    Attributes
    ----------
    model : str
    lam_name, mu_name : str
        The model's continuation parameter and the second parameter.
    lam, mu, omega : ndarray
        The points of the curve and the angular frequency of the crossing pair ``+- i omega``.
    states : ndarray (n_points, n)
        The equilibrium at each point.
    folds_mu : list of float
        Turning points of ``mu`` along the curve (e.g. the smallest normal force with a Hopf
        point), located by the sign change of the tangent's ``mu`` component.
    status, message : str
        ``"range"``, ``"max_steps"``, ``"bogdanov-takens"`` (omega went to zero),
        ``"failed"`` or ``"interrupted"``; the points computed so far are kept.
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

    def __len__(self):
        return len(self.lam)

    def save(self, path):
        """HDF5: root attributes ``model``, ``lam_name``, ``mu_name``, ``status``,
        ``message``, ``parameters`` (JSON), ``folds_mu``; datasets ``lam``, ``mu``,
        ``omega`` (n_points,) and ``states`` (n_points, n)."""
        import h5py
        with h5py.File(path, "w") as f:
            for k in ("model", "lam_name", "mu_name", "status", "message"):
                f.attrs[k] = str(getattr(self, k))
            f.attrs["kind"] = "hopf_curve"
            f.attrs["parameters"] = json.dumps(self.parameters)
            f.attrs["folds_mu"] = np.asarray(self.folds_mu, dtype=float)
            for k in ("lam", "mu", "omega", "states"):
                f[k] = np.asarray(getattr(self, k), dtype=float)

    def plot(self, path=None, ax=None, title=None):
        """``mu`` against ``lam`` (matplotlib), the turning points in ``mu`` marked; with
        ``path`` the figure is written there.  Returns the axes."""
        import matplotlib
        if ax is None and path is not None and matplotlib.get_backend().lower() not in ("agg", "pdf", "svg"):
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        fig = None
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 4.2), layout="constrained")
        ax.plot(self.lam, self.mu, color="C3", label="Hopf points")
        for f in self.folds_mu:
            ax.axhline(f, color="0.6", lw=0.8, ls=":")
            ax.annotate(f"turning point: {self.mu_name} = {f:.6g}", (self.lam[np.argmin(np.abs(self.mu - f))], f),
                        textcoords="offset points", xytext=(4, 4), fontsize=8)
        ax.set_xlabel(self.lam_name)
        ax.set_ylabel(self.mu_name)
        ax.set_title(title or f"{self.model}: Hopf points of the equilibria")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        if path is not None and fig is not None:
            fig.savefig(path, dpi=130)
            plt.close(fig)
        return ax

    @classmethod
    def load(cls, path):
        import h5py
        with h5py.File(path, "r") as f:
            a = f.attrs
            return cls(model=str(a["model"]), lam_name=str(a["lam_name"]), mu_name=str(a["mu_name"]),
                       lam=f["lam"][()], mu=f["mu"][()], omega=f["omega"][()], states=f["states"][()],
                       status=str(a["status"]), message=str(a["message"]),
                       folds_mu=[float(v) for v in np.atleast_1d(a["folds_mu"])],
                       parameters=json.loads(str(a["parameters"])))


def hopf_curve(model: Model, hopf, mu_name: str, mu_min: float, mu_max: float, *, direction: float = 1.0,
               lam_min: float = -np.inf, lam_max: float = np.inf, step: float = 1e-2, max_step: float = 0.1,
               max_steps: int = 1000, xtol: float = 1e-11) -> HopfCurve:
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
    HopfCurve
        Also on failure or Ctrl-C (``status``/``message`` say why; the points so far are kept).
    """
    if getattr(hopf, "kind", None) != "hopf":
        raise InputError("hopf_curve needs a 'hopf' special point of an equilibrium branch")
    n = model.n
    mu0 = float(model.value(mu_name)) if mu_name in model.module.PARAMETERS else None
    if mu0 is None:
        raise InputError(f"unknown parameter {mu_name!r} for model {model.name!r}; its parameters are "
                         f"{', '.join(model.module.PARAMETERS)}")
    if not mu_min <= mu0 <= mu_max:
        raise InputError(f"the start {mu_name} = {mu0:g} is outside [{mu_min:g}, {mu_max:g}]")
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
    # unknowns scaled by their sizes at the start (state, eigenvector parts, omega, mu, lam):
    # pseudo-arclength steps are then relative changes, and a curve that is steep in one
    # parameter (the belt's Hopf curve near a pole of FN(Vb)) is not crossed in one step
    def size(block, floor=1e-300):
        return max(float(np.max(np.abs(block))), floor)
    scale = np.concatenate([np.full(n, size(x0, 1e-12)), np.full(n, size(v.real)), np.full(n, size(v.imag)),
                            [om0 or 1.0, abs(mu0) or 1.0, abs(lam0) or 1.0]])
    sys_ = ScaledDiscretization(hs, scale)
    e_mu = np.zeros(hs.size)
    e_mu[-2] = 1.0
    e_lam = np.zeros(hs.size)
    e_lam[-1] = 1.0
    W = Y0 / scale
    pts, status, message = [], "failed", ""
    folds = []
    try:
        W, _ = correct(sys_, W, e_mu, mu0 / scale[-2], xtol=xtol)      # the Hopf point at mu0, refined
        t = tangent_at(sys_, W, e_mu * (1.0 if direction >= 0 else -1.0))
        pts.append(W * scale)
        h = step
        for _ in range(max_steps):
            Wp = W + h * t
            try:
                Wn, its = correct(sys_, Wp, t, float(t @ Wp), xtol=xtol)
                tn = tangent_at(sys_, Wn, t)
                # a corrector far from the predictor or a sharply turning tangent: the step
                # cut a bend of the curve (e.g. its turning point in mu)
                if np.linalg.norm(Wn - Wp) > 0.3 * h or tn @ t < np.cos(np.radians(20.0)):
                    raise ConvergenceError("step too long for the curvature")
            except ConvergenceError:
                if h / 2 < 1e-12:
                    raise
                h /= 2
                continue
            Y, Yn = W * scale, Wn * scale
            om, mu, lam = Yn[3 * n], Yn[-2], Yn[-1]
            if om <= 1e-8 * om0:
                pts.append(Yn)
                status, message = "bogdanov-takens", f"omega went to zero at {mu_name} = {mu:.10g}"
                break
            bound = None
            for b_val, b_vec in ((mu_min, e_mu), (mu_max, e_mu), (lam_min, e_lam), (lam_max, e_lam)):
                if np.isfinite(b_val) and (Y @ b_vec - b_val) * (Yn @ b_vec - b_val) < 0:
                    bound = (b_val, b_vec)
                    break
            if tn[-2] * t[-2] < 0:
                folds.append((W, Wn))
            if bound is not None:
                b_val, b_vec = bound
                s_ = (b_val - Y @ b_vec) / ((Yn - Y) @ b_vec)
                Wb, _ = correct(sys_, W + s_ * (Wn - W), b_vec, b_val / float(b_vec @ scale), xtol=xtol)
                pts.append(Wb * scale)
                name = mu_name if b_vec is e_mu else model.continuation
                status, message = "range", f"reached {name} = {b_val:g}"
                break
            pts.append(Yn)
            W, t = Wn, tn
            h = float(np.clip(h * (4.0 / max(its, 1)) ** 0.5, 1e-12, max_step))
        else:
            status, message = "max_steps", f"step budget exhausted (max_steps = {max_steps})"
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted by the user (Ctrl-C); the points so far are kept"
    except ConvergenceError as err:
        status, message = "failed", f"Hopf-curve continuation failed: {err}"
    P = np.array(pts) if pts else np.zeros((0, hs.size))
    folds_mu = [_fold_mu(sys_, Wa, Wb_, xtol) * scale[-2] for Wa, Wb_ in folds]
    return HopfCurve(model=model.name, lam_name=model.continuation, mu_name=mu_name, lam=P[:, -1], mu=P[:, -2],
                     omega=P[:, 3 * n], states=P[:, :n], status=status, message=message,
                     folds_mu=[float(f) for f in folds_mu if np.isfinite(f)],
                     parameters={k: float(v) for k, v in zip(model.module.PARAMETERS, model.param_vector())})


def _fold_mu(sys_, Wa, Wb, xtol):
    """Scaled ``mu`` at a turning point of the curve in ``mu``: the tangent's ``mu``
    component zeroed by Brent's method on corrected points between ``Wa`` and ``Wb`` (NaN if
    it fails)."""
    from ._continuation import locate_on_branch
    chord = Wb - Wa

    def test(W):
        return tangent_at(sys_, W, chord)[-2]
    try:
        # mu is quadratic in the chord coordinate at the turning point (see _locate_folds)
        W = locate_on_branch(sys_, Wa, Wb, test, xtol=xtol, stol=1e-8)
    except (ConvergenceError, ValueError):
        return np.nan
    return float(W[-2])
