"""Accuracy study of the HBM against orthogonal collocation (seed ``003_*.txt``, Vigué et al. 2018).

Protocol (seed 003 §3), implemented by :func:`convergence_study`:

1. **Reference** (§3.1): the HBM with ``H_ref`` harmonics (500 in the paper) at the fixed
   parameter value ``lam = at``.  The start is a time simulation of the original ODE to the
   attracting cycle, refined by shooting (:func:`periodic_orbit_from_simulation`); its samples
   give the Fourier coefficients at a moderate H, which are converged by Newton at fixed
   ``lam`` and then raised step by step (50, 150, ..., ``H_ref``), each converged again.
2. **Test solutions** (§3.3): for each H of the HBM and each ``N_int`` of the collocation
   (degree p), the solution of the *discrete* problem is not taken at ``lam = at`` (the
   discretization moves the branch) but where the mass has *the same kinetic energy over a
   period as in the reference*.  We take the period average
   ``K = (1/T) int_0^T (1/2) M v(t)^2 dt`` of the velocity state ``v`` (``energy_variable``);
   the constant ``M/2`` cancels, so the matched quantity is the mean square of ``v``.  The
   other reading of "over a period", the integral ``int_0^T`` (``= T`` times the mean), is
   available as ``energy="integral"``.  The test solution solves the square system
   ``R(Z) = 0, K(Z) = K_ref`` for all the discrete unknowns *and* ``lam`` by Newton.
3. **Errors** (§3.2): every solution is evaluated on ``N_t = 10^5`` points regularly spaced
   over *its own* period, all variables of the quadratic system (for collocation the states
   are the piecewise polynomials and the auxiliaries are computed from them by the model's
   definitions, ``model.aux``, which is what they are at the collocation points).  The time
   origins are aligned by one convention for every solution: the sin(theta) Fourier
   coefficient of the first state vanishes and its cos(theta) coefficient is positive (the
   HBM phase condition).  Then, with ``M(X)`` the mean of the reference (seed 003 eq. (14)),

   * the relative error without bias of variable X (eq. (15))
     ``eps_r(X) = |X_ref - X_test|_2 / |X_ref - M(X)|_2``;
   * the mean relative error over all variables (eq. (16))
     ``eps_rm = |u_ref - u_test|_F / |u_ref - M_u|_F`` over the matrix (variables x samples).

   Eq. (16) mixes variables, so it depends on their units; the paper's vector is
   ``(V_r, R, S, mu_n, y, z)`` with ``z = dy/dt / omega_1``.  ``variable_scales`` multiplies
   variables before eq. (16) (e.g. ``{"v": 1/omega1}`` turns the belt model's ``v = dy/dt``
   into the paper's ``z``); eq. (15) is unaffected.
4. **Against** ``N_dis``: ``2H + 1`` (HBM) and ``p N_int + 1`` (collocation), seed 003 §2.2.

Fits (seed 003 §4.1): the HBM mean error is fitted in semilog scale,
``log10 eps_rm = a + b N_dis`` (paper, case W1: ``b = -0.052`` for ``61 <= N_dis <= 183``, i.e.
``c = 10^(-2b) = 1.27`` in ``O(c^-H)``); the collocation error in log-log scale,
``log10 eps_rm = a + s log10 N_dis`` (theory ``s = -(p+1)``; paper ``-4.3`` for
``394 <= N_dis <= 484``).  See :meth:`ConvergenceStudy.fit_hbm` and
:meth:`ConvergenceStudy.fit_collocation`.

HDF5 layout written by :meth:`ConvergenceStudy.save` (readable without frictionkit; never
pickled).  Root attributes: ``format = "frictionkit-convergence-study"``, ``format_version``
(1), ``model``, ``model_hash``, ``param``, ``at``, ``parameters`` (JSON dict of all parameter
values), ``variables`` (JSON list, row order of every error matrix), ``variable_scales``
(JSON dict), ``energy_variable``, ``energy`` ("mean" or "integral"), ``n_t``, ``degree``,
``frictionkit_version``.  Groups:

``/reference``
    attrs ``harmonics``, ``lam``, ``omega``, ``energy``; dataset ``coefficients`` (N, 2H+1),
    real Fourier layout ``[u0, c1, s1, ..., cH, sH]`` per variable, time origin aligned.
``/hbm`` and ``/collocation``
    one row per test solution: ``size`` (k,) (H, resp. N_int), ``n_dis`` (k,), ``lam``,
    ``omega``, ``energy`` (k,), ``converged`` (k,) bool, ``iterations`` (k,) int,
    ``relative_error`` (k, N) (eq. 15), ``mean_error`` (k,) (eq. 16), ``message`` (k,) str
    (empty when converged), ``seconds`` (k,) wall time of the energy-matched Newton solve
    (from a neighbouring solution).  Rows that did not converge hold NaN.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json
import time

import numpy as np

from ..discretizations._collocation import CollocationDiscretization
from ..discretizations._hbm import (
    HBMDiscretization,
    coefficients_at,
    coefficients_to_samples,
    samples_to_coefficients,
    shift_phase,
)
from ..engine._newton import correct
from .._version import __version__
from ..errors import ConvergenceError, FrictionkitError, InputError
from ..results._atomic import atomic_path
from ..results._figure import finish, subplots
from ..model._interface import Model
from ._orbits import periodic_orbit_from_simulation

__all__ = ["ConvergenceStudy", "MethodErrors", "convergence_study", "reference_orbit", "relative_errors",
           "parse_int_range"]

FORMAT = "frictionkit-convergence-study"


# -- errors of seed 003 §3.2 ------------------------------------------------------------------
def relative_errors(ref: np.ndarray, test: np.ndarray, scales: np.ndarray | None = None):
    """Relative errors without bias, seed 003 eqs. (14)-(16).

    Parameters
    ----------
    ref, test : ndarray, shape (N, N_t)
        Every variable on ``N_t`` points regularly spaced over each solution's own period.
    scales : ndarray, shape (N,), optional
        Factors applied to each variable before eq. (16) (units); eq. (15) is scale-free.

    Returns
    -------
    per_variable : ndarray, shape (N,)
        ``eps_r(X)`` of eq. (15) for each row.
    mean : float
        ``eps_rm`` of eq. (16).
    """
    ref = np.asarray(ref, dtype=float)
    test = np.asarray(test, dtype=float)
    centred = ref - ref.mean(axis=1, keepdims=True)               # X_ref - M(X), eq. (14)
    diff = ref - test
    per = np.linalg.norm(diff, axis=1) / np.linalg.norm(centred, axis=1)       # eq. (15)
    s = np.ones(ref.shape[0]) if scales is None else np.asarray(scales, dtype=float)
    mean = np.linalg.norm(s[:, None] * diff) / np.linalg.norm(s[:, None] * centred)   # eq. (16)
    return per, float(mean)


def _aligned_phase(y_samples: np.ndarray) -> float:
    """Shift (radians) that puts the sin(theta) coefficient of ``y`` at zero, cos positive."""
    c = samples_to_coefficients(y_samples, 1)
    return float(np.arctan2(c[2], c[1]))


def parse_int_range(text: str, name: str = "range") -> list[int]:
    """``"1..60"``, ``"10..160:5"`` or ``"5,10,20"`` (combinations separated by commas).

    Raises
    ------
    InputError
        Malformed text.
    """
    out: list[int] = []
    try:
        for part in str(text).replace(" ", "").split(","):
            if not part:
                continue
            if ".." in part:
                span, _, step = part.partition(":")
                a, b = span.split("..")
                out.extend(range(int(a), int(b) + 1, int(step) if step else 1))
            else:
                out.append(int(part))
    except ValueError:
        raise InputError(f"{name} {text!r}: expected A..B, A..B:STEP or a comma list of integers") from None
    if not out:
        raise InputError(f"{name} {text!r} is empty")
    return sorted(set(out))


# -- reference ------------------------------------------------------------------------------
def _newton(disc, Z, energy_row=None, *, tol=1e-13, noise_floor=1e-10, max_iter=30, what="HBM"):
    """:func:`engine.correct` on ``R(Z) = 0`` plus one extra equation, every variable's correction scaled.

    ``energy_row`` is ``None`` (extra equation ``lam = Z[-1]``: fixed parameter) or a callable
    ``Z -> (g, dg/dZ)`` (the energy match of seed 003 §3.3, ``lam`` free).  Converged when
    each variable's correction is below ``tol`` times its scale (``max |coefficients|``) and
    the omega and lam corrections below ``tol`` times their values, or when that relative
    correction is below ``noise_floor`` and stopped shrinking.
    """
    fixed = np.zeros(np.size(Z))
    fixed[-1] = 1.0
    extra = fixed if energy_row is None else energy_row
    return correct(disc, Z, extra, xtol=tol, noise_floor=noise_floor, max_iter=max_iter,
                   update_size=lambda dZ, Z: _per_variable_update(disc.N, dZ, Z), what=f"{what} Newton")


def _per_variable_update(N, dZ, Z):
    """Largest correction of a variable's coefficients against that variable's size, and of omega, lam."""
    nvar = Z[:-2].size // N
    scale = np.maximum(np.abs(Z[:-2].reshape(N, nvar)).max(axis=1), np.finfo(float).tiny)
    return max(float(np.max(np.abs(dZ[:-2].reshape(N, nvar)).max(axis=1) / scale)),
               abs(dZ[-2]) / abs(Z[-2]), abs(dZ[-1]) / max(abs(Z[-1]), 1e-300))


def reference_orbit(model: Model, at: float, harmonics: int = 500, *, x_init=None, t_transient: float | None = None,
                    steps=(50, 150, 300)):
    """Reference periodic orbit by HBM at ``lam = at`` (seed 003 §3.1).

    A time simulation of the original ODE to the attracting cycle, refined by shooting,
    gives samples of one period; their Fourier coefficients start a Newton correction at
    fixed ``lam`` with ``min(steps[0], harmonics)`` harmonics; the harmonic count is then
    raised through ``steps`` to ``harmonics``, re-converged each time.

    Parameters
    ----------
    model : Model
    at : float
        Value of the continuation parameter.
    harmonics : int
        Reference harmonic count ``H_ref``.
    x_init : array_like, optional
        Start of the simulation (default: all states zero).
    t_transient : float, optional
        Simulated time before shooting (default 200 periods ``2 pi / max |Im lambda|`` of the
        Jacobian of the original ODE at ``x_init``; 1 if it has no complex eigenvalue).

    Returns
    -------
    disc : HBMDiscretization
    Z : ndarray
        Converged unknowns, time origin aligned (module docstring).
    orbit : PeriodicOrbit
        The shooting orbit (an independent check of the reference).

    Raises
    ------
    InputError
        ``harmonics < 1``.
    ConvergenceError
        No periodic orbit found at ``at`` (the simulation settles on an equilibrium, or
        shooting or Newton fails).
    """
    if int(harmonics) != harmonics or harmonics < 1:
        raise InputError(f"reference harmonics = {harmonics}: the number of harmonics must be an integer >= 1")
    harmonics = int(harmonics)
    x_init = np.zeros(model.n) if x_init is None else np.asarray(x_init, dtype=float)
    if t_transient is None:         # 200 periods of the linearization at x_init
        w = np.max(np.abs(np.linalg.eigvals(np.atleast_2d(model.jac(0.0, x_init, at))).imag))
        t_transient = 200 * 2 * np.pi / w if w > 0 else 1.0
    name = f"{model.continuation} = {at:g}"
    try:
        orbit = periodic_orbit_from_simulation(model, at, x_init, t_transient)
    except ConvergenceError as exc:
        raise ConvergenceError(
            f"no periodic orbit found at {name}: a time simulation over {t_transient:g} from "
            f"{np.array2string(x_init)} followed by shooting failed ({exc}); the equilibrium may be the only "
            f"attractor there (outside the Hopf-to-fold interval of the branch)") from exc
    # a cycle collapsed onto an equilibrium is not an orbit
    x = orbit.samples(1024)
    scale = np.maximum(np.abs(x).max(axis=1), np.finfo(float).tiny)
    if np.max(orbit.ptp / scale) < 1e-6:
        raise ConvergenceError(f"no periodic orbit found at {name}: the simulation settles on an equilibrium "
                               f"(peak-to-peak/scale = {np.max(orbit.ptp / scale):.2e})")
    u = model.aux(x, orbit.times(1024), at)
    H0 = min(int(steps[0]), harmonics)
    disc = HBMDiscretization(model, H0)
    Z = disc.pack(shift_phase(samples_to_coefficients(u, H0), 0), orbit.omega, at)
    Z, _ = _newton(disc, Z, what=f"reference HBM (H = {H0}) at {name}")
    for H in [h for h in steps[1:] if H0 < h < harmonics] + ([harmonics] if harmonics > H0 else []):
        disc, Z = disc.resize(Z, H)
        Z, _ = _newton(disc, Z, what=f"reference HBM (H = {H}) at {name}")
    return disc, Z, orbit


# -- test solutions -------------------------------------------------------------------------
def _hbm_energy(disc: HBMDiscretization, k: int, mode: str):
    """``Z -> (K(Z), dK/dZ)``: mean square of variable k (or T times it), Parseval."""
    nh = disc.nh

    def f(Z):
        c = Z[k * nh:(k + 1) * nh]
        w = np.full(nh, 0.5)
        w[0] = 1.0
        K = float(np.sum(w * c * c))
        row = np.zeros(Z.size)
        row[k * nh:(k + 1) * nh] = 2 * w * c
        if mode == "integral":
            T = 2 * np.pi / Z[disc.omega_index]
            row *= T
            row[disc.omega_index] = -K * T / Z[disc.omega_index]
            K *= T
        return K, row
    return f


class _CollocationEnergy:
    """Mean square of a differential variable of a collocation solution (exact quadrature)."""

    def __init__(self, disc: CollocationDiscretization, k: int, mode: str):
        from numpy.polynomial.legendre import leggauss
        import scipy.sparse as sp
        p, n_int, G = disc.degree, disc.n_intervals, disc.G
        g, w = leggauss(p + 1)                    # exact for the degree-2p square
        s, w = (g + 1) / 2, w / 2
        Lv = np.vander(s, p + 1, increasing=True) @ disc._Vinv     # (p+1, p+1) basis values
        rows, cols, vals = [], [], []
        for i in range(n_int):
            for l in range(p + 1):
                for j in range(p + 1):
                    rows.append(i * (p + 1) + l)
                    cols.append((i * p + j) % G)
                    vals.append(Lv[l, j])
        self.E = sp.csr_matrix((vals, (rows, cols)), shape=(n_int * (p + 1), G))
        self.w = np.tile(w * disc.h, n_int)
        self.k, self.G, self.mode, self.disc = k, G, mode, disc

    def __call__(self, Z):
        k, G = self.k, self.G
        vq = self.E @ Z[k * G:(k + 1) * G]
        K = float(np.sum(self.w * vq * vq))
        row = np.zeros(Z.size)
        row[k * G:(k + 1) * G] = 2 * (self.E.T @ (self.w * vq))
        if self.mode == "integral":
            oi = self.disc.omega_index
            T = 2 * np.pi / Z[oi]
            row *= T
            row[oi] = -K * T / Z[oi]
            K *= T
        return K, row


def _hbm_all_samples(disc: HBMDiscretization, Z, n_t: int) -> np.ndarray:
    U, _, _ = disc.split(Z)
    return coefficients_to_samples(shift_phase(U, 0), n_t)


@dataclass
class MethodErrors:
    """Errors of the test solutions of one method (one row per H or N_int)."""

    method: str
    size: np.ndarray            # H or N_int
    n_dis: np.ndarray
    lam: np.ndarray
    omega: np.ndarray
    energy: np.ndarray
    converged: np.ndarray
    iterations: np.ndarray
    relative_error: np.ndarray  # (k, N), eq. (15)
    mean_error: np.ndarray      # (k,), eq. (16)
    message: list
    seconds: np.ndarray = None  # wall time of each energy-matched Newton solve

    @classmethod
    def empty(cls, method, sizes, n_dis, N):
        k = len(sizes)
        nan = np.full(k, np.nan)
        return cls(method, np.asarray(sizes, dtype=int), np.asarray(n_dis, dtype=int), nan.copy(), nan.copy(),
                   nan.copy(), np.zeros(k, dtype=bool), np.zeros(k, dtype=int), np.full((k, N), np.nan),
                   nan.copy(), [""] * k, nan.copy())


@dataclass
class ConvergenceStudy:
    """Result of :func:`convergence_study` (seed 003 protocol; layout in the module docstring)."""

    model: str
    model_hash: str
    param: str
    at: float
    parameters: dict
    variables: tuple
    variable_scales: dict
    energy_variable: str
    energy: str
    n_t: int
    degree: int
    reference_harmonics: int
    reference_lam: float
    reference_omega: float
    reference_energy: float
    reference_coefficients: np.ndarray
    hbm: MethodErrors | None = None
    collocation: MethodErrors | None = None
    info: dict = field(default_factory=dict)

    # -- fits (seed 003 §4.1) --------------------------------------------------------------
    def _select(self, res, lo, hi):
        if res is None:
            raise InputError("this study has no such method")
        ok = res.converged & np.isfinite(res.mean_error) & (res.mean_error > 0)
        ok &= (res.n_dis >= lo) & (res.n_dis <= hi)
        if ok.sum() < 2:
            raise InputError(f"fewer than two converged solutions with {lo} <= N_dis <= {hi}")
        return res.n_dis[ok].astype(float), np.log10(res.mean_error[ok])

    def fit_hbm(self, n_dis_min: float = 61, n_dis_max: float = 183) -> dict:
        """Semilog fit ``log10 eps_rm = a + b N_dis`` of the HBM mean error (seed 003 §4.1).

        Returns ``slope`` (b; paper W1: -0.052), ``intercept`` (a), ``c = 10^(-2b)`` (paper
        1.27: the error is ``O(c^-H)`` since ``N_dis = 2H + 1``) and the points used.
        """
        x, y = self._select(self.hbm, n_dis_min, n_dis_max)
        b, a = np.polyfit(x, y, 1)
        return dict(slope=float(b), intercept=float(a), c=float(10 ** (-2 * b)), points=int(x.size),
                    n_dis_min=float(x.min()), n_dis_max=float(x.max()))

    def fit_collocation(self, n_dis_min: float = 394, n_dis_max: float = 484) -> dict:
        """Log-log fit ``log10 eps_rm = a + s log10 N_dis`` (theory ``s = -(p+1)``; paper W1 -4.3)."""
        x, y = self._select(self.collocation, n_dis_min, n_dis_max)
        s, a = np.polyfit(np.log10(x), y, 1)
        return dict(slope=float(s), intercept=float(a), points=int(x.size), n_dis_min=float(x.min()),
                    n_dis_max=float(x.max()))

    def n_dis_for(self, method: str, target: float) -> int | None:
        """Smallest computed N_dis from which the mean error stays below ``target`` (None if never)."""
        res = self.hbm if method == "hbm" else self.collocation
        if res is None:
            return None
        err = np.where(res.converged, res.mean_error, np.inf)
        below = err < target
        for i in range(len(below)):
            if below[i:].all():
                return int(res.n_dis[i])
        return None

    # -- I/O -------------------------------------------------------------------------------
    def save(self, path):
        """Write the HDF5 layout of the module docstring."""
        import h5py

        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            a = f.attrs
            a["format"] = FORMAT
            a["format_version"] = 1
            for key in ("model", "model_hash", "param", "energy_variable", "energy"):
                a[key] = str(getattr(self, key))
            a["at"] = float(self.at)
            a["n_t"] = int(self.n_t)
            a["degree"] = int(self.degree)
            a["parameters"] = json.dumps(self.parameters)
            a["variables"] = json.dumps(list(self.variables))
            a["variable_scales"] = json.dumps(self.variable_scales)
            a["frictionkit_version"] = __version__
            g = f.create_group("reference")
            g.attrs["harmonics"] = int(self.reference_harmonics)
            g.attrs["lam"] = float(self.reference_lam)
            g.attrs["omega"] = float(self.reference_omega)
            g.attrs["energy"] = float(self.reference_energy)
            g["coefficients"] = self.reference_coefficients
            for res in (self.hbm, self.collocation):
                if res is None:
                    continue
                g = f.create_group(res.method)
                for key in ("size", "n_dis", "lam", "omega", "energy", "converged", "iterations",
                            "relative_error", "mean_error", "seconds"):
                    g[key] = getattr(res, key)
                g.create_dataset("message", data=np.array(res.message, dtype=object), dtype=h5py.string_dtype())

    @classmethod
    def load(cls, path) -> "ConvergenceStudy":
        """Read a file written by :meth:`save`."""
        import h5py
        with h5py.File(path, "r") as f:
            a = f.attrs
            if a.get("format") != FORMAT:
                raise InputError(f"{path}: not a frictionkit convergence study (format {a.get('format')!r})")
            g = f["reference"]
            out = cls(model=str(a["model"]), model_hash=str(a["model_hash"]), param=str(a["param"]),
                      at=float(a["at"]), parameters=json.loads(a["parameters"]),
                      variables=tuple(json.loads(a["variables"])), variable_scales=json.loads(a["variable_scales"]),
                      energy_variable=str(a["energy_variable"]), energy=str(a["energy"]), n_t=int(a["n_t"]),
                      degree=int(a["degree"]), reference_harmonics=int(g.attrs["harmonics"]),
                      reference_lam=float(g.attrs["lam"]), reference_omega=float(g.attrs["omega"]),
                      reference_energy=float(g.attrs["energy"]), reference_coefficients=g["coefficients"][()])
            for method in ("hbm", "collocation"):
                if method not in f:
                    continue
                g = f[method]
                res = MethodErrors(method, *(g[k][()] for k in ("size", "n_dis", "lam", "omega", "energy",
                                                               "converged", "iterations", "relative_error",
                                                               "mean_error")),
                                   message=[m.decode() if isinstance(m, bytes) else str(m) for m in g["message"][()]],
                                   seconds=g["seconds"][()])
                setattr(out, method, res)
        return out

    # -- plots -----------------------------------------------------------------------------
    def plot(self, path=None, variables=None):
        """Figure like seed 003 Figs. 4-5: per-variable errors (eq. 15, semilog) for each
        method, mean error (eq. 16) semilog and log-log.  Returns the figure."""
        fig, axes = subplots(path, 2, 2, figsize=(11, 8))
        names = list(self.variables) if variables is None else list(variables)
        for ax, res, title in ((axes[0, 0], self.hbm, "HBM"), (axes[0, 1], self.collocation,
                                                               f"collocation (p = {self.degree})")):
            if res is None:
                ax.set_visible(False)
                continue
            for name in names:
                i = self.variables.index(name)
                ax.semilogy(res.n_dis, res.relative_error[:, i], ".-", ms=3, label=name)
            ax.set_title(f"{title}: error per variable (eq. 15)")
            ax.set_xlabel("$N_{dis}$")
            ax.legend(fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
        for ax, loglog in ((axes[1, 0], False), (axes[1, 1], True)):
            for res, style, label in ((self.hbm, "s-", "HBM"), (self.collocation, "o--", "collocation")):
                if res is None:
                    continue
                plot = ax.loglog if loglog else ax.semilogy
                plot(res.n_dis, res.mean_error, style, ms=3, label=label)
            ax.set_xlabel("$N_{dis}$")
            ax.set_title("mean relative error (eq. 16), " + ("log-log" if loglog else "semilog"))
            ax.legend()
            ax.grid(True, which="both", alpha=0.3)
        fig.suptitle(f"{self.model}, {self.param} = {self.at:g}, reference HBM H = {self.reference_harmonics}")
        fig.tight_layout()
        finish(fig, path, dpi=120)
        return fig


def _variable_index(model: Model, name, what):
    names = model.variables
    if name not in names:
        raise InputError(f"{what} {name!r} is not a variable of model {model.name!r}; its variables are "
                         f"{', '.join(names)}")
    return names.index(name)


def convergence_study(model: Model, at: float, *, harmonics=range(1, 61), intervals=(), degree: int = 3,
                      reference_harmonics: int = 500, n_t: int = 100_000, energy_variable: str | None = None,
                      energy: str = "mean", variable_scales: dict | None = None, reference=None,
                      progress=None) -> ConvergenceStudy:
    """HBM and collocation errors against a reference orbit, seed 003 protocol (module docstring).

    Parameters
    ----------
    model : Model
        The model with its parameter values (the continuation parameter is ``lam``).
    at : float
        Parameter value of the reference orbit (W1: ``Vb = 0.5`` with ``n = 10``).
    harmonics : iterable of int
        Harmonic counts H of the HBM test solutions (each >= 1); empty to skip the HBM.
    intervals : iterable of int
        ``N_int`` of the collocation test solutions (each >= 2); empty to skip collocation.
    degree : int
        Collocation degree p (seed 003: 3).
    reference_harmonics : int
        ``H_ref`` (seed 003 §3.1: 500).
    n_t : int
        Number of evaluation points per period (seed 003 §3.2: 10^5).
    energy_variable : str, optional
        Velocity variable whose kinetic energy is matched (default the second state).
    energy : {"mean", "integral"}
        Kinetic energy averaged over a period (default) or integrated over it.
    variable_scales : dict, optional
        ``{variable: factor}`` applied before eq. (16).
    reference : tuple, optional
        ``(disc, Z)`` of an already converged reference HBM at ``at`` (skips step 1).
    progress : callable, optional
        ``progress(method, size, message)`` after each test solution.

    Returns
    -------
    ConvergenceStudy
        Test solutions that do not converge are kept as NaN rows with their message.

    Raises
    ------
    InputError
        ``H < 1``, ``N_int < 2``, bad degree, unknown variable, ``n_t`` too small.
    ConvergenceError
        No reference orbit at ``at``.
    """
    harmonics, intervals, k_energy, energy_variable, scales = _check_study(
        model, at, harmonics, intervals, degree, reference_harmonics, n_t, energy_variable, energy, variable_scales)

    # 1. reference (seed 003 §3.1)
    if reference is None:
        rdisc, Zr, _ = reference_orbit(model, at, reference_harmonics)
    else:
        rdisc, Zr = reference
    Ur, omega_r, lam_r = rdisc.split(Zr)
    Ur = shift_phase(Ur, 0)
    K_ref, _ = _hbm_energy(rdisc, k_energy, energy)(rdisc.pack(Ur, omega_r, lam_r))
    ref_samples = coefficients_to_samples(Ur, n_t)

    finish = _Finisher(ref_samples, scales)
    hbm = _hbm_errors(rdisc, Ur, omega_r, lam_r, harmonics, k_energy, energy, K_ref, n_t, finish, progress)
    col = _collocation_errors(model, rdisc, Ur, omega_r, lam_r, intervals, degree, k_energy, energy, K_ref, n_t,
                              finish, progress)

    return ConvergenceStudy(
        model=model.name, model_hash=str(model.model_hash), param=model.continuation, at=float(at),
        parameters=dict(zip(model.parameters, map(float, model.param_vector(at)))),
        variables=tuple(model.variables), variable_scales={k: float(v) for k, v in (variable_scales or {}).items()},
        energy_variable=energy_variable, energy=energy, n_t=int(n_t), degree=int(degree),
        reference_harmonics=int(rdisc.H), reference_lam=float(lam_r), reference_omega=float(omega_r),
        reference_energy=float(K_ref), reference_coefficients=Ur, hbm=hbm, collocation=col)


def _check_study(model, at, harmonics, intervals, degree, reference_harmonics, n_t, energy_variable, energy,
                 variable_scales):
    """Checked arguments of :func:`convergence_study`: harmonics, intervals, the energy
    variable's index and name, the per-variable scales."""
    harmonics = [int(h) for h in harmonics]
    intervals = [int(k) for k in intervals]
    bad = [h for h in harmonics if h < 1]
    if bad:
        raise InputError(f"harmonics {bad}: the number of harmonics H must be >= 1")
    bad = [k for k in intervals if k < 2]
    if bad:
        raise InputError(f"intervals {bad}: the number of collocation intervals N_int must be >= 2")
    if int(degree) != degree or not 1 <= degree <= 12:
        raise InputError(f"degree = {degree} must be an integer between 1 and 12 (seed 003: 3)")
    if energy not in ("mean", "integral"):
        raise InputError(f"energy = {energy!r} must be 'mean' or 'integral'")
    if int(reference_harmonics) < 1:
        raise InputError(f"reference harmonics = {reference_harmonics}: must be >= 1")
    if harmonics and max(harmonics) >= reference_harmonics:
        raise InputError(f"test harmonics up to {max(harmonics)} must stay below the reference's "
                         f"{reference_harmonics}")
    if n_t <= 2 * int(reference_harmonics):
        raise InputError(f"n_t = {n_t} points cannot represent {reference_harmonics} harmonics (need > 2H)")
    if model.forced:
        raise InputError(f"model {model.name!r} is forced; the energy-matched study is for autonomous orbits")
    if energy_variable is None:
        if model.n < 2:
            raise InputError(f"model {model.name!r} has one state: name the velocity with energy_variable")
        energy_variable = model.states[1]
    k_energy = _variable_index(model, energy_variable, "energy variable")
    mass = np.asarray(model.operators(at)["mass"])
    if mass[k_energy] == 0:
        raise InputError(f"energy variable {energy_variable!r} must be a differential variable (a state)")
    scales = np.ones(model.N)
    for name, value in (variable_scales or {}).items():
        scales[_variable_index(model, name, "scaled variable")] = float(value)

    return harmonics, intervals, k_energy, energy_variable, scales


class _Finisher:
    """Fills row ``i`` of a :class:`MethodErrors` from a converged test solution (eq. 16)."""

    def __init__(self, ref_samples, scales):
        self.ref_samples, self.scales = ref_samples, scales

    def __call__(self, res, i, Z, it, samples, K):
        per, mean = relative_errors(self.ref_samples, samples, self.scales)
        res.relative_error[i] = per
        res.mean_error[i] = mean
        res.lam[i], res.omega[i], res.energy[i] = Z[-1], Z[-2], K
        res.converged[i], res.iterations[i] = True, it


def _hbm_errors(rdisc, Ur, omega_r, lam_r, harmonics, k_energy, energy, K_ref, n_t, finish, progress):
    """HBM test solutions (seed 003 steps 2-3), from the largest H down, each started from
    the previous one; None without harmonics."""
    if not harmonics:
        return None
    hbm = MethodErrors.empty("hbm", harmonics, [2 * h + 1 for h in harmonics], rdisc.model.N)
    prev_disc, prev_Z = rdisc, rdisc.pack(Ur, omega_r, lam_r)
    for i in np.argsort(harmonics)[::-1]:
        H = harmonics[i]
        disc, Z0 = prev_disc.resize(prev_Z, H)
        try:
            t0 = time.perf_counter()
            g = _hbm_energy(disc, k_energy, energy)
            Z, it = _newton(disc, Z0, lambda Z: _shift(g(Z), K_ref), what=f"HBM H = {H}")
            hbm.seconds[i] = time.perf_counter() - t0
            finish(hbm, i, Z, it, _hbm_all_samples(disc, Z, n_t), g(Z)[0])
            prev_disc, prev_Z = disc, Z
        except FrictionkitError as exc:
            hbm.message[i] = str(exc)
        if progress is not None:
            progress("hbm", H, hbm.message[i])
    return hbm


def _collocation_errors(model, rdisc, Ur, omega_r, lam_r, intervals, degree, k_energy, energy, K_ref, n_t,
                        finish, progress):
    """Collocation test solutions, from the largest N_int down, each started from the
    previous one; None without intervals."""
    if not intervals:
        return None
    col = MethodErrors.empty("collocation", intervals, [degree * k + 1 for k in intervals], model.N)
    n = model.n

    # start at the maximum of the first state: the collocation phase condition (an
    # extremum at tau = 0); a stick-slip orbit (S1) far from it made Newton diverge
    theta0 = 2 * np.pi * np.argmax(coefficients_to_samples(Ur[:1], 1 << 16)[0]) / (1 << 16)

    def ref_states(t):
        return coefficients_at(Ur[:n], theta0 + omega_r * np.asarray(t))

    states, lam_g, omega_g = ref_states, lam_r, omega_r
    for i in np.argsort(intervals)[::-1]:
        n_int = intervals[i]
        t0 = time.perf_counter()
        disc = CollocationDiscretization(model, n_int, degree)
        Z0 = disc.from_states(states, lam_g, omega_g)
        try:
            g = _CollocationEnergy(disc, k_energy, energy)
            Z, it = _newton(disc, Z0, lambda Z: _shift(g(Z), K_ref), what=f"collocation N_int = {n_int}")
            col.seconds[i] = time.perf_counter() - t0
            finish(col, i, Z, it, _collocation_samples(disc, Z, n_t), g(Z)[0])
            states = (lambda d, Zc: (lambda t: d.states_at(Zc, np.asarray(t) * Zc[-2] / (2 * np.pi))))(disc, Z)
            lam_g, omega_g = Z[-1], Z[-2]
        except FrictionkitError as exc:
            col.message[i] = str(exc)
        if progress is not None:
            progress("collocation", n_int, col.message[i])
    return col


def _shift(gK, K_ref):
    K, row = gK
    return K - K_ref, row


def _collocation_samples(disc: CollocationDiscretization, Z, n_t: int) -> np.ndarray:
    """All N variables of a collocation solution on ``n_t`` regular points of its period.

    States: the piecewise polynomials; auxiliaries: ``model.aux`` of the states (exactly the
    algebraic unknowns at the Gauss points).  Time origin aligned (module docstring).
    """
    tau = np.arange(n_t) / n_t
    phi = _aligned_phase(disc.states_at(Z, tau)[0])
    tau = tau + phi / (2 * np.pi)
    x = disc.states_at(Z, tau)
    omega, lam = Z[-2], Z[-1]
    return np.asarray(disc.model.aux(x, tau * 2 * np.pi / omega, lam))
