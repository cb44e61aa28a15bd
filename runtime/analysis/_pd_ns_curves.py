"""Two-parameter curves of period doublings and Neimark–Sacker points of periodic orbits.

A period doubling (PD) of a periodic branch ``R(Z; mu) = 0``, ``Z = [Y, lam]`` (any periodic
discretization that rebuilds itself on the model with another ``mu``, contract item 17, and
has a monodromy matrix ``M(Z)``, contract items 14-15) is where ``M`` has the multiplier
-1; a Neimark–Sacker (NS) point is where it has a pair ``exp(+-i theta)``, ``0 < theta < pi``.
Both are continued in a second parameter ``mu`` on a *minimally augmented* system
(Govaerts, *Numerical methods for bifurcations of dynamical equilibria*, SIAM 2000: bordered
matrices and their test functions; Kuznetsov, *Elements of applied bifurcation theory*, 3rd
ed., Springer 2004, ch. 10: the flip and Neimark-Sacker test functions of fixed points of maps;
Govaerts, Kuznetsov & Dhooge, "Numerical continuation of bifurcations of limit cycles in
MATLAB", SIAM J. Sci. Comput. 27, 2005, 231-252: the same for cycles, as MatCont does): one (PD)
or two (NS) scalar test functions added to the orbit's own equations, from a bordered system of
the monodromy matrix.

**PD** (:func:`pd_curve`), unknowns ``[Z, mu]``::

    R(Z; mu) = 0,     g(Z; mu) = 0,     [[M(Z) + I, b], [c^T, 0]] [v; g] = [0; 1]

``g = 0`` exactly where ``M + I`` is singular (by Cramer's rule ``g`` is ``det(M + I)``
divided by the determinant of the bordered matrix), with ``b, c`` its left and right
singular vectors at the previous point (refreshed after every accepted point, which leaves
the zero set unchanged and keeps the bordered matrix well conditioned).

**NS** (:func:`ns_curve`), unknowns ``[Z, mu, theta]``, the complex form of the bordered
system of ``M^2 - 2 cos(theta) M + I = (M - e^{i theta})(M - e^{-i theta})``::

    R(Z; mu) = 0,   Re g = 0,   Im g = 0,   [[M(Z) - e^{i theta} I, b], [c^H, 0]] [v; g] = [0; 1]

(``b, c`` complex; the two real equations and the extra unknown ``theta``, as the complex
bordering of ``J - i omega I`` does for Hopf points).  The run stops at the strong resonances ``theta -> 0`` (1:1) and
``theta -> pi`` (1:2), where the pair meets on the real axis.

The gradient of ``g`` is ``-w^H (dM) v`` with ``w`` the solution of the adjoint bordered
system ``[[M + I, b], [c^T, 0]]^H [w; g] = [0; 1]`` (differentiate the bordered system).  On
the AFT, ``w^H (dM/dU) v`` over all Fourier coefficients ``U`` comes from one reverse pass
through the Magnus product (``AFTDiscretization.monodromy_gradient``, the cost of a few
monodromies); the other unknowns' ``dM/dZ_j`` (all of them on collocation and shooting) and
``dM/dmu`` are forward and central differences of the monodromy (the gradient steers Newton
only: the points solve the exact residual).  ``dg/dtheta = i e^{i theta} w^H v`` is exact.  The monodromy is the one
the branch's stability uses, so the curve passes through the very points that
``branch_stability`` locates on one-parameter branches: the Magnus monodromy of the balanced
orbit for the AFT (``AFTDiscretization.monodromy``), the condensed collocation Jacobian for
collocation of the states (:func:`floquet_collocation`).

Both are followed by the pseudo-arclength loop of :mod:`._curves` (scaled unknowns, stop on
the parameter bounds, turning points in ``mu`` located).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ..discretizations._base import Discretization
from ..discretizations._error import orbit_errors
from ..discretizations._scaled import ScaledDiscretization
from ..engine._newton import correct
from ..errors import ConvergenceError, InputError
from ..results._branch import Branch
from ._branch_points import _dense
from ._curves import BifurcationCurve, _floor, _follow, _parameters, _start_mu, disc_at
from ._floquet import adaptive_magnus_monodromy, floquet_collocation

__all__ = ["pd_curve", "ns_curve"]

#: Largest distance of the start's multiplier from -1 (PD) or from the unit circle (NS) that
#: still counts as a point of that kind (the located points of a branch are at ~1e-10).
_START_TOL = 1e-3


def monodromy_of(disc, Z, intervals: int | None = None) -> np.ndarray:
    """The monodromy matrix of ``disc`` at ``Z`` (contract item 14).

    ``"monodromy"`` route (AFT, shooting): ``disc.monodromy(Z)`` (with ``intervals``, the
    AFT's Magnus quadrature on that many equal steps instead of its sample grid);
    ``"collocation"``: the condensed collocation Jacobian (:func:`floquet_collocation`).
    Harmonic balances of the recast (route ``"hill"``) have none: :class:`InputError`.
    """
    route = disc.floquet_route
    if route == "monodromy":
        if intervals is not None and disc.kind in ("aft", "aft-condensed"):
            return np.asarray(disc.monodromy(Z, intervals=intervals), dtype=float)
        return np.asarray(disc.monodromy(Z), dtype=float)
    if route == "collocation":
        return np.asarray(floquet_collocation(disc, Z).monodromy, dtype=float)
    raise InputError(f"a {disc.kind} branch has no monodromy matrix (its multipliers come from Hill's method); "
                     "continue the branch with the AFT (method 'aft', the default) or collocation of the states "
                     "('collocation') to follow its period doublings or Neimark-Sacker points")


class _MultiplierSystem(Discretization):
    """The minimally augmented PD or NS system (module docstring) as a discretization.

    ``W = [Z, mu]`` (PD) or ``[Z, mu, theta]`` (NS); ``steps(W)`` gives the difference steps
    of the unknowns (their current sizes times 1e-6).
    """

    def __init__(self, disc, mu_name, which, steps, intervals=None):
        self.base, self.mu_name, self.which = disc, mu_name, which
        self.intervals = intervals
        self.n_extra = 1 if which == "pd" else 2
        self.m = disc.m + self.n_extra
        self.model = disc.model
        self.steps = steps
        self.b = self.c = None
        self._discs = {}
        self.n_residuals = self.n_jacobians = self.n_monodromies = 0

    @property
    def kind(self):
        return f"{self.which}-system"

    def disc_at(self, mu):
        """The discretization of the model with ``mu_name = mu`` (cached)."""
        return disc_at(self.base, self.mu_name, mu, self._discs)

    def split(self, W):
        W = np.asarray(W, dtype=float)
        nz = self.base.size
        return W[:nz], W[nz], (W[nz + 1] if self.which == "ns" else None)

    def _M(self, d, Z):
        self.n_monodromies += 1
        return monodromy_of(d, Z, self.intervals)

    def shifted(self, M, theta):
        """``M + I`` (PD) or ``M - e^{i theta} I`` (NS)."""
        n = M.shape[0]
        return M + np.eye(n) if self.which == "pd" else M - np.exp(1j * theta) * np.eye(n)

    def set_borders(self, M, theta):
        """``b, c``: the left and right singular vectors of the smallest singular value."""
        U, _, Vh = np.linalg.svd(self.shifted(M, theta))
        self.b, self.c = U[:, -1], Vh[-1].conj()

    def _bordered(self, A):
        n = A.shape[0]
        B = np.zeros((n + 1, n + 1), dtype=A.dtype if self.which == "pd" else complex)
        B[:n, :n], B[:n, n], B[n, :n] = A, self.b, self.c.conj()
        return scipy.linalg.lu_factor(B, check_finite=False)

    def test_function(self, M, theta, vectors=False):
        """``g`` (and the vectors ``v``, ``w`` of the bordered and adjoint systems)."""
        lu = self._bordered(self.shifted(M, theta))
        rhs = np.zeros(M.shape[0] + 1, dtype=lu[0].dtype)
        rhs[-1] = 1.0
        vg = scipy.linalg.lu_solve(lu, rhs, check_finite=False)
        if not vectors:
            return vg[-1]
        # adjoint: B^H [w; g] = e  (trans=2: conjugate transpose)
        wg = scipy.linalg.lu_solve(lu, rhs, trans=2 if self.which == "ns" else 1, check_finite=False)
        return vg[-1], vg[:-1], wg[:-1]

    def _equations(self, g):
        return [g.real] if self.which == "pd" else [g.real, g.imag]

    def residual(self, W):
        Z, mu, theta = self.split(W)
        d = self.disc_at(mu)
        self.n_residuals += 1
        return np.concatenate([d.residual(Z), self._equations(self.test_function(self._M(d, Z), theta))])

    def jacobian(self, W):
        W = np.asarray(W, dtype=float)
        Z, mu, theta = self.split(W)
        nz = Z.size
        d = self.disc_at(mu)
        self.n_jacobians += 1
        M = self._M(d, Z)
        g, v, w = self.test_function(M, theta, vectors=True)
        wH = w.conj()
        h = self.steps(W)
        out = np.zeros((self.m, self.size))
        out[:d.m, :nz] = _dense(d.jacobian(Z))
        dp, dm = self.disc_at(mu + h[nz]), self.disc_at(mu - h[nz])
        out[:d.m, nz] = (dp.residual(Z) - dm.residual(Z)) / (2 * h[nz])
        # dg = -w^H (dM) v: AFT coefficients by the adjoint (AFTDiscretization.monodromy_gradient),
        # other unknowns by forward differences of the monodromy (one monodromy per unknown;
        # steps 1e-6 of each unknown's size: gradient to ~1e-6 relative, which only steers
        # Newton and the tangent), mu by a central one
        grad = np.empty(nz + 1, dtype=complex)
        Mv = M @ v
        # the orbit's coefficients by the adjoint of the Magnus product (AFT): one pass instead
        # of one monodromy each (contract item 22); the unknowns after them by differences
        adjoint = (d.monodromy_gradient(Z, w, v, intervals=self.intervals) if d.floquet_route == "monodromy"
                   else None)
        first = 0 if adjoint is None else adjoint.size
        grad[:first] = adjoint if adjoint is not None else grad[:0]
        for j in range(first, nz):
            e = np.zeros(nz)
            e[j] = h[j]
            grad[j] = wH @ (self._M(d, Z + e) @ v - Mv) / h[j]
        grad[nz] = wH @ ((self._M(dp, Z) - self._M(dm, Z)) @ v) / (2 * h[nz])
        grad = -grad
        rows = slice(d.m, self.m)
        if self.which == "pd":
            out[d.m, :nz + 1] = grad.real
        else:
            out[d.m, :nz + 1], out[d.m + 1, :nz + 1] = grad.real, grad.imag
            dth = 1j * np.exp(1j * theta) * (wH @ v)         # -w^H d(M - e^{i th} I)/dth v
            out[rows, nz + 1] = dth.real, dth.imag
        return out


def _check_start(branch, point, kind, fun):
    """The branch, its discretization and model for a curve of ``kind`` from ``point``."""
    names = {"pd": "period doubling ('pd')", "ns": "Neimark-Sacker point ('ns')"}
    other = {"pd": "pd_curve", "ns": "ns_curve", "fold": "fold_curve", "hopf": "hopf_curve"}
    got = getattr(point, "kind", None)
    if got != kind:
        model = getattr(getattr(branch, "discretization", None), "model", None)
        name = model.continuation if model is not None else "the parameter"
        what = (f"a {got!r} special point at {name} = {point.param:.10g}" if got is not None and hasattr(point, "param")
                else f"an object of type {type(point).__name__!r}")
        hint = f"; continue it with {other[got]}" if got in other else ""
        raise InputError(f"{fun} needs a {names[kind]} special point of a periodic branch, not {what}{hint}")
    disc = getattr(branch, "discretization", None)
    if disc is None:
        raise InputError(f"{fun} needs the branch's discretization: for a branch loaded from a file use "
                         f"frictionkit.runtime.{fun} (it rebuilds it) or attach_discretization(branch) first")
    if branch.kind != "periodic":
        raise InputError(f"{fun} continues points of periodic orbits, not of a {branch.kind} branch")
    try:
        disc.on_model(disc.model)
    except (NotImplementedError, AttributeError):
        raise InputError(f"{fun}: a {disc.kind} branch cannot be rebuilt with another parameter value (no "
                         "on_model); continue the branch with the AFT or collocation of the states") from None
    return disc, disc.model


def _scales(disc, Z0, mu0, bounds_lam, bounds_mu, theta0=None):
    """``rescale(W)``: the current sizes of the unknowns (as ``fold_curve``): each state's
    block by its largest entry, omega, lam, mu (and theta)."""
    info = disc.unpack(Z0)
    n_var, width = np.shape(info["coefficients"] if disc.H is not None else info["variables"])
    n_y = n_var * width
    floors = (1e-8 * max(float(np.abs(Z0[:n_y]).max()), 1e-300), _param_floor(Z0[-1], bounds_lam),
              _param_floor(mu0, bounds_mu))
    nz = Z0.size

    def rescale(W):
        U = W[:n_y].reshape(n_var, width)
        rest = np.abs(W[n_y:nz - 1])                              # omega (autonomous orbits)
        out = [np.repeat(np.maximum(np.abs(U).max(axis=1), floors[0]), width), np.where(rest > 0, rest, 1.0),
               [max(abs(W[nz - 1]), floors[1]), max(abs(W[nz]), floors[2])]]
        if theta0 is not None:
            out.append([1.0])                   # theta in (0, pi): an angle of size 1
        return np.concatenate(out)
    return rescale


def _insert_at_mu(sys_, pts, i_mu, mu_values, xtol):
    """The points with the curve's points at exactly ``mu = mu_values`` inserted where the
    curve crosses them (the chord between two points corrected onto the hyperplane, as the
    bounds are); a value the curve does not cross is left out."""
    out = list(pts)
    for target in sorted(float(v) for v in mu_values):
        for k in range(len(out) - 1):
            a, b = out[k][i_mu] - target, out[k + 1][i_mu] - target
            if min(abs(a), abs(b)) <= 1e-13 * abs(target):     # a point there already (a bound)
                # to the last bit, as an inserted point (the bound's correction leaves it within
                # rounding, which differs with the BLAS's thread count)
                j = k if abs(a) <= abs(b) else k + 1
                out[j] = np.array(out[j], dtype=float)
                out[j][i_mu] = target
                break
            if a * b < 0:
                e = np.zeros(sys_.size)
                e[i_mu] = 1.0
                guess = out[k] + a / (a - b) * (out[k + 1] - out[k])
                W, _ = correct(sys_, guess / sys_.scale, e, target / sys_.scale[i_mu], xtol=xtol)
                W = W * sys_.scale
                W[i_mu] = target             # to the last bit (it is, to rounding)
                out.insert(k + 1, W)
                break
    return out


def _param_floor(v0, bounds):
    """:func:`._curves._floor`, but a parameter that starts at zero (to rounding: a Neimark-Sacker
    point at ``lam = 1e-17``) on an unbounded range takes the unit as its scale, not 1e-8 of
    its rounding error."""
    f = _floor(v0, bounds)
    return max(f, 1.0) if abs(v0) < 1e-12 else f


#: codimension-2 points along the curves, by the kind of the other multiplier that reaches the
#: unit circle (Kuznetsov 2004, ch. 9-10; Govaerts, Kuznetsov & Dhooge 2005, table 1): on a PD
#: curve a real one through +1 (fold-flip), a second one through -1 (1:2 resonance) or a complex
#: pair (flip-NS); on an NS curve through +1 (fold-NS), -1 (flip-NS) or another pair (double NS)
_CODIM2 = {"pd": {"+1": "fold-flip", "-1": "1:2", "circle": "flip-NS"},
           "ns": {"+1": "fold-NS", "-1": "flip-NS", "circle": "double-NS"}}


def _other_multipliers(sys0, W):
    """The multipliers of the orbit at the curve's point ``W`` other than the critical ones
    (``-1``, or the pair ``exp(+-i theta)``) and, for an autonomous orbit, the trivial one
    (the eigenvalue whose eigenvector is the flow at ``t = 0``, not merely the one nearest 1:
    at a fold-flip another multiplier is nearer)."""
    Z, mu, theta = sys0.split(W)
    d = sys0.disc_at(mu)
    vals, vecs = np.linalg.eig(monodromy_of(d, Z, sys0.intervals))
    keep = np.ones(vals.size, dtype=bool)
    critical = [-1.0] if sys0.which == "pd" else [np.exp(1j * theta), np.exp(-1j * theta)]
    for c in critical:
        keep[int(np.argmin(np.where(keep, np.abs(vals - c), np.inf)))] = False
    if not getattr(d.model, "forced", False):
        info = d.unpack(Z)
        x0 = np.asarray(info["samples"](64), dtype=float)[:d.model.n, 0]
        f = np.asarray(d.model.rhs(0.0, x0, info["lam"]), dtype=float)
        cos = np.abs(vecs.conj().T @ f) / (np.linalg.norm(vecs, axis=0) * max(np.linalg.norm(f), 1e-300))
        keep[int(np.argmax(np.where(keep, cos, -1.0)))] = False
    return vals[keep]


def _crossing_values(rest):
    """``{"+1": mu - 1, "-1": mu + 1, "circle": |mu| - 1}`` of the other multiplier nearest each
    crossing (real ones for +-1, complex pairs for the circle; None where there is none)."""
    real = rest[np.abs(rest.imag) <= 1e-9 * np.maximum(1.0, np.abs(rest))].real
    cplx = rest[rest.imag > 1e-9 * np.maximum(1.0, np.abs(rest))]
    out = {"+1": None, "-1": None, "circle": None}
    if real.size:
        out["+1"] = float(real[np.argmin(np.abs(real - 1))] - 1)
        out["-1"] = float(real[np.argmin(np.abs(real + 1))] + 1)
    if cplx.size:
        out["circle"] = float(np.abs(cplx[np.argmin(np.abs(np.abs(cplx) - 1))]) - 1)
    return out


def _counts(rest):
    """Numbers of other multipliers outside the unit circle: real above 1, real below -1, pairs."""
    tiny = 1e-9 * np.maximum(1.0, np.abs(rest))
    real = rest[np.abs(rest.imag) <= tiny].real
    return {"+1": int(np.count_nonzero(real > 1)), "-1": int(np.count_nonzero(real < -1)),
            "circle": int(np.count_nonzero((rest.imag > tiny) & (np.abs(rest) > 1)))}


def _codim2_points(sys0, sys_, pts, i_mu, i_lam, xtol):
    """Codimension-2 points between consecutive points of a PD or NS curve.

    Where the number of other multipliers outside the unit circle of one kind (:func:`_counts`)
    changes between two points, the crossing value of that kind (:func:`_crossing_values`) is
    zeroed by the Illinois variant of regula falsi in ``mu``, each trial point corrected onto
    the curve at that ``mu`` (as the points at requested ``mu`` values are); where ``mu`` turns
    between the two points, or the values do not bracket a zero, the point is reported at the
    chord's interpolation with ``located = False``.  Returns a list of dicts ``kind``,
    ``lam``, ``mu``, ``located``, ``multiplier`` (the crossing value at the point).
    """
    out = []
    if len(pts) < 2:
        return out
    rests = [_other_multipliers(sys0, W) for W in pts]
    counts = [_counts(r) for r in rests]
    e = np.zeros(sys_.size)
    e[i_mu] = 1.0
    for k in range(len(pts) - 1):
        for key in ("+1", "-1", "circle"):
            if counts[k][key] == counts[k + 1][key]:
                continue
            fa, fb = _crossing_values(rests[k])[key], _crossing_values(rests[k + 1])[key]
            Wa, Wb = np.asarray(pts[k], dtype=float), np.asarray(pts[k + 1], dtype=float)
            located, W = False, None
            if fa is not None and fb is not None and fa * fb < 0 and Wa[i_mu] != Wb[i_mu]:
                a, b, ga, gb, side = Wa, Wb, fa, fb, 0
                try:
                    for _ in range(40):
                        guess = a + ga / (ga - gb) * (b - a)
                        target = float(guess[i_mu])
                        Wt, _ = correct(sys_, guess / sys_.scale, e, target / sys_.scale[i_mu], xtol=xtol)
                        Wt = Wt * sys_.scale
                        g = _crossing_values(_other_multipliers(sys0, Wt))[key]
                        if g is None:
                            break
                        W = Wt
                        if g * ga < 0:               # Illinois: halve the end kept twice in a row
                            b, gb, ga, side = Wt, g, (ga / 2 if side == -1 else ga), -1
                        else:
                            a, ga, gb, side = Wt, g, (gb / 2 if side == 1 else gb), 1
                        if abs(g) < 1e-11 or abs(b[i_mu] - a[i_mu]) <= 1e-13 * max(1.0, abs(target)):
                            located = True
                            break
                except ConvergenceError:
                    located = False
            if W is None:
                t = fa / (fa - fb) if fa is not None and fb is not None and fa != fb else 0.5
                W = Wa + t * (Wb - Wa)
            g = _crossing_values(_other_multipliers(sys0, W))[key]
            out.append(dict(kind=_CODIM2[sys0.which][key], lam=float(W[i_lam]), mu=float(W[i_mu]),
                            located=bool(located), multiplier=None if g is None else float(g)))
    return out


#: the curve's Magnus steps by default: those of the error-controlled monodromy at the start
#: (``_floquet.adaptive_magnus_monodromy``) for this error per step, frozen along the curve
_INTERVALS_RTOL = 1e-4


def _curve_intervals(disc, Z0, which, intervals, fun):
    """The Magnus steps of the curve's monodromy: ``"grid"``, the discretization's own (None);
    an integer (equal steps); or None (default): on an AFT, the steps that the error-controlled
    monodromy of the branch's stability (``multiplier_rtol``) chooses at the start orbit for an
    error of ``_INTERVALS_RTOL`` per step (short where the Jacobian is large: a stiff bristle
    state in slip), frozen along the curve so that the monodromy is a smooth function of the
    unknowns; the curve then passes through the points the branch locates.  Others have their
    own monodromy (None)."""
    aft = disc.floquet_route == "monodromy" and disc.unpack(Z0).get("path") == "aft"
    if isinstance(intervals, str):
        if intervals != "grid":
            raise InputError(f"{fun}: intervals = {intervals!r}: give a number of steps, 'grid' (the AFT's samples) "
                             "or None (refined until the multipliers converge)")
        return None
    if intervals is not None:
        if not aft:
            raise InputError(f"{fun}: intervals = {intervals} applies to the Magnus monodromy of a harmonic "
                             f"balance of the states (AFT); a {disc.kind} branch has its own monodromy")
        if int(intervals) != intervals or intervals < 1:
            raise InputError(f"{fun}: intervals = {intervals} must be a positive integer (Magnus steps per period)")
        return int(intervals)
    if not aft:
        return None
    U, omega, lam = disc.split(Z0)
    _, info = adaptive_magnus_monodromy(disc.model, lam, Z0, omega, disc.H, rtol=_INTERVALS_RTOL,
                                        n_start=int(disc.n_t))
    return info["edges"]


def _orbit_errors(sys0, P, nz):
    """The estimated relative error of the orbit at each point of the curve (the truncation and
    aliasing estimates of ``discretizations/_error.py``, the Newton step bordered at fixed
    ``lam``: the orbit equations are regular at a PD or NS point), on the AFT; None elsewhere
    (the collocation's mesh estimate is opt-in on branches for its cost)."""
    if sys0.base.kind != "aft":
        return None
    e_lam = np.zeros(nz)
    e_lam[nz - 1] = 1.0
    out = np.full(len(P), np.nan)
    for i, W in enumerate(P):
        Z, mu, _ = sys0.split(W)
        cols = orbit_errors(sys0.disc_at(mu), Z[None], e_lam[None])
        if cols:
            out[i] = cols["err_trunc"][0] + cols["err_alias"][0]
    return out


def _curve(branch, point, mu_name, mu_min, mu_max, which, *, direction, lam_min, lam_max, step, max_step,
           max_steps, xtol, mu_values, intervals=None):
    fun = f"{which}_curve"
    disc, model = _check_start(branch, point, which, fun)
    mu0 = _start_mu(model, mu_name, mu_min, mu_max)
    Z0 = np.asarray(point.solution, dtype=float)
    intervals = _curve_intervals(disc, Z0, which, intervals, fun)
    M0 = monodromy_of(disc, Z0, intervals)
    mult = np.linalg.eigvals(M0)
    where = f"{model.continuation} = {float(Z0[-1]):.10g}"
    if which == "pd":
        k = int(np.argmin(np.abs(mult + 1)))
        if abs(mult[k] + 1) > _START_TOL:
            grid = np.linalg.eigvals(monodromy_of(disc, Z0)) if intervals is not None else mult
            if np.min(np.abs(grid + 1)) <= _START_TOL:
                raise InputError(f"{fun}: the orbit at {where} has its multiplier at -1 on the AFT's sample grid "
                                 f"only (a branch with multiplier_rtol = 0); with converged multipliers it is "
                                 f"{complex(mult[k]):.6g}: pass intervals='grid' to follow that doubling, or locate "
                                 "it on a branch with the default multiplier_rtol")
            raise InputError(f"{fun}: the orbit at {where} has no multiplier at -1 (the nearest is "
                             f"{complex(mult[k]):.6g}): not a period doubling; pass a located 'pd' point")
        theta0 = None
    else:
        cplx = np.flatnonzero(mult.imag > 1e-9 * np.maximum(1.0, np.abs(mult)))
        k = int(cplx[np.argmin(np.abs(np.abs(mult[cplx]) - 1))]) if cplx.size else -1
        if k < 0 or abs(abs(mult[k]) - 1) > _START_TOL:
            near = f"the nearest complex multiplier is {complex(mult[k]):.6g}" if k >= 0 else "no complex multiplier"
            raise InputError(f"{fun}: the orbit at {where} has no complex pair on the unit circle ({near}): "
                             "not a Neimark-Sacker point; pass a located 'ns' point")
        theta0 = float(np.angle(mult[k]))
    rescale = _scales(disc, Z0, mu0, (lam_min, lam_max), (mu_min, mu_max), theta0)
    W0 = np.append(Z0, mu0) if which == "pd" else np.concatenate([Z0, [mu0, theta0]])
    sys0 = _MultiplierSystem(disc, mu_name, which, lambda W: 1e-6 * rescale(W), intervals)
    sys0.set_borders(M0, theta0)
    sys_ = ScaledDiscretization(sys0, rescale(W0))

    def refresh(W):
        """Sizes of the unknowns, and the borders at the accepted point ``W``."""
        Z, mu, theta = sys0.split(W)
        sys0.set_borders(monodromy_of(sys0.disc_at(mu), Z, intervals), theta)
        return rescale(W)

    nz = Z0.size
    stop = None
    if which == "ns":
        def stop(W):
            th = W[nz + 1]
            if th <= 1e-3:
                return "resonance-1:1", f"theta went to 0 (1:1 resonance) at {mu_name} = {W[nz]:.10g}"
            if th >= np.pi - 1e-3:
                return "resonance-1:2", f"theta went to pi (1:2 resonance) at {mu_name} = {W[nz]:.10g}"
            return None
    pts, turning, status, message = _follow(
        sys_, W0 / sys_.scale, refresh, i_mu=nz, i_lam=nz - 1, mu_min=mu_min, mu_max=mu_max, lam_min=lam_min,
        lam_max=lam_max, direction=direction, step=step, max_step=max_step, max_steps=max_steps, xtol=xtol,
        names=(model.continuation, mu_name), stop=stop)
    if status == "resonance-1:2":
        # the last point past theta = pi: corrected onto theta = pi (the pair meets at -1; the
        # complex bordered system stays regular there, unlike theta = 0 where it meets the
        # trivial multiplier of an autonomous orbit)
        e = np.zeros(sys0.size)
        e[nz + 1] = 1.0
        try:
            W, _ = correct(sys_, pts[-1] / sys_.scale, e, np.pi / sys_.scale[nz + 1], xtol=xtol)
            pts[-1] = W * sys_.scale
            message = f"theta = pi (1:2 resonance) at {mu_name} = {pts[-1][nz]:.10g}"
        except ConvergenceError:
            pass
    codim2 = _codim2_points(sys0, sys_, pts, nz, nz - 1, xtol)
    pts = _insert_at_mu(sys_, pts, nz, mu_values, xtol)
    P = np.array(pts) if pts else np.zeros((0, sys0.size))
    sols = P[:, :nz]
    cols = Branch.from_solutions(disc, sols, np.zeros((len(P), disc.size)))
    ptp = np.column_stack([cols.ptp[s] for s in model.states]).reshape(-1, model.n)
    om = np.asarray(cols.omega, dtype=float)
    extra = dict(theta=P[:, nz + 1]) if which == "ns" else {}
    err = _orbit_errors(sys0, P, nz)
    if err is not None:
        extra["orbit_error"] = err
    counters = dict(points=len(P), residuals=sys0.n_residuals, jacobians=sys0.n_jacobians,
                    monodromies=sys0.n_monodromies, unknowns=sys0.size)
    return BifurcationCurve(model=model.name, lam_name=model.continuation, mu_name=mu_name, lam=P[:, nz - 1],
                            mu=P[:, nz], omega=om, states=ptp, status=status, message=message, folds_mu=turning,
                            parameters=_parameters(model), kind=which, columns=extra, solutions=sols,
                            counters=counters, codim2=codim2)


def pd_curve(branch, pd, mu_name: str, mu_min: float, mu_max: float, *, direction: float = 1.0,
             lam_min: float = -np.inf, lam_max: float = np.inf, step: float = 1e-2, max_step: float = 0.1,
             max_steps: int = 500, xtol: float = 1e-10, mu_values=(), intervals: int | str | None = None
             ) -> BifurcationCurve:
    """Continue a period doubling of a periodic branch in a second parameter ``mu_name``.

    Parameters
    ----------
    branch : Branch
        The periodic branch that holds ``pd``: an AFT harmonic balance or a collocation of
        the states (any discretization with ``on_model`` and a monodromy matrix, contract
        items 14-17); it fixes H (and the samples) or the mesh.
    pd : SpecialPoint
        A ``"pd"`` point of ``branch`` (located by ``branch_stability``).
    mu_name : str
        The second parameter (its value in the branch's model is the start).
    mu_min, mu_max : float
        Range of the second parameter; the run stops on its bounds (the last point exactly
        on the bound) or on ``lam_min``/``lam_max``.
    direction : float
        Sign of the first step in ``mu``.
    step, max_step : float
        First and largest pseudo-arclength step in unknowns scaled by their sizes.
    max_steps : int
    xtol : float
        Newton tolerance (relative update).
    mu_values : sequence of float
        Values of ``mu`` where the curve must have a point (each corrected onto
        ``mu = value`` where the curve crosses it, as its bounds are): e.g. to compare with
        one-parameter branches at those values.
    intervals : int, "grid" or None
        AFT branches: the Magnus monodromy on this many equal steps per period; ``"grid"``, on
        the AFT's samples (as a branch with ``multiplier_rtol = 0`` has it); None (default):
        the error-controlled steps of the branch's stability chosen at the start (1e-4 per
        step) and kept along the curve (the samples do not resolve a stiff internal state: on
        the LuGre belt at H = 90 the critical multiplier moves by 2.7e-3 from 375 to 1500
        equal steps).

    Returns
    -------
    BifurcationCurve
        ``kind = "pd"``: ``lam``, ``mu``, ``omega`` (of the period-1 orbit) and ``states``
        (peak-to-peak amplitudes) of the period doublings, ``solutions`` the orbits'
        unknowns, ``counters`` the work, ``codim2`` the codimension-2 points found along it
        and, on the AFT, ``columns["orbit_error"]``, the estimated relative error of each
        point's orbit (what the harmonic count leaves; ``discretizations/_error.py``); also
        on failure or Ctrl-C (``status``/``message``).

    Raises
    ------
    InputError
        ``pd`` is not a ``"pd"`` point (the message names what it is), its orbit has no
        multiplier at -1, the branch has no monodromy (HBM of the recast) or cannot be
        rebuilt with another ``mu``, or ``mu_name`` is not a parameter.
    """
    return _curve(branch, pd, mu_name, mu_min, mu_max, "pd", direction=direction, lam_min=lam_min,
                  lam_max=lam_max, step=step, max_step=max_step, max_steps=max_steps, xtol=xtol,
                  mu_values=mu_values, intervals=intervals)


def ns_curve(branch, ns, mu_name: str, mu_min: float, mu_max: float, *, direction: float = 1.0,
             lam_min: float = -np.inf, lam_max: float = np.inf, step: float = 1e-2, max_step: float = 0.1,
             max_steps: int = 500, xtol: float = 1e-10, mu_values=(), intervals: int | str | None = None
             ) -> BifurcationCurve:
    """Continue a Neimark–Sacker point of a periodic branch in a second parameter ``mu_name``.

    As :func:`pd_curve`, from an ``"ns"`` point; the curve's ``columns["theta"]`` is the
    argument ``theta`` of the critical pair ``exp(+-i theta)``.  The run stops with status
    ``"resonance-1:1"`` or ``"resonance-1:2"`` where ``theta`` reaches 0 or pi (strong
    resonances: the pair meets on the real axis).
    """
    return _curve(branch, ns, mu_name, mu_min, mu_max, "ns", direction=direction, lam_min=lam_min,
                  lam_max=lam_max, step=step, max_step=max_step, max_steps=max_steps, xtol=xtol,
                  mu_values=mu_values, intervals=intervals)
