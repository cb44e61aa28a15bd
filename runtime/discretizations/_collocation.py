"""Orthogonal collocation of periodic orbits of the quadratic system (DESIGN §5.2, seed 003 §2.2).

Time is normalised to ``tau = t / T`` in ``[0, 1)`` and split into ``N_int`` equal
sub-intervals ``[tau_i, tau_i + h]``, ``h = 1 / N_int``.  On each sub-interval every
*differential* variable (``mass_i != 0``) is the Lagrange polynomial of degree ``p`` through
its values at the ``p + 1`` equidistant nodes ``tau_i + j h / p`` (seed 003 eqs. 12-13);
nodes are shared at interval ends and periodicity is built in (the node at ``tau = 1`` is the
node at ``tau = 0``), so each differential variable has ``p N_int`` unknowns.  The equations
are collocated at the ``p`` Gauss-Legendre points of each sub-interval::

    (omega / 2 pi) m_i du_i/dtau = c0_i + lam c1_i + (L0 u)_i + lam (L1 u)_i + Q_i(u, u) + forcing_i

so the discrete system stays exactly quadratic in ``Z = [Y, lam]`` with ``omega`` in ``Y``.

*Algebraic* variables (``mass_i == 0``) are unknowns at the Gauss points themselves (``p`` per
sub-interval, again ``p N_int`` per variable), not at the nodes.  This is the classical
collocation of an index-1 DAE and it makes the scheme exactly Gauss collocation of the
original ODE: the algebraic rows at a Gauss point give the auxiliaries as functions of the
interpolated states there.  Putting the algebraic variables on the continuous nodal
polynomials and collocating their rows at the Gauss points, as one might read seed 003 §2.2,
gives a singular system: the map "continuous periodic piecewise polynomial -> values at the
Gauss points" is singular for p = 2 and 4 for every N_int and for p = 3 for every even N_int
(checked numerically: smallest singular value 1e-17).

Accuracy (Gauss collocation theory, de Boor & Swartz 1973; Ascher, Mattheij & Russell,
"Numerical solution of BVPs for ODEs", §5.4): the states' uniform error is O(h^(p+1)) and at
the mesh points, like ``omega``, it superconverges as O(h^(2p)).  The seed's count of
unknowns per variable is ``N_dis = p N_int + 1`` (seed 003 §2.2, counting the repeated
periodic node); it is the property ``n_dis``.

Derivative-bilinear rows and point conditions (DESIGN §2; Karkar, Cochelin & Vergez, JSV
2013).  A recast of ``exp``, ``tanh``, ``atan``, ``sin``, ``cos``, ``log`` adds rows
``0 = (A u')_i + sum_t bc_t u_{B_J[t]} u'_{B_L[t]}`` that differentiate variables which may be
algebraic (e.g. ``vr = v - vb`` in ``th' = (1 - th^2) vr' / eps``), and such a variable has no
derivative when it lives at the Gauss points.  For these models the *nodal* set is the
differential variables, the dbil variables, the columns of ``A`` and ``B_L`` and the point
arguments, closed under "an algebraic row of a nodal variable makes all its variables nodal";
the other algebraic variables stay at the Gauss points (``B_J`` multipliers included).  Then

* a dbil row is collocated at the Gauss points (it is homogeneous of degree one in the
  derivative, so ``d/dt`` is replaced by ``d/dtau`` and ``omega`` divides out), except its
  first equation (Gauss point 0 of interval 0) which is replaced by the point condition
  ``u_r(0) - f(pc u_v(0)) = 0`` at the node ``tau = 0`` (the collocation counterpart of the
  HBM's mean, ``_hbm.py``);
* the algebraic row ``0 = g(u, tau)`` of a nodal variable is collocated *differentiated*,
  ``0 = dg/dtau = (L0 + lam L1) u' + Q(u, u') + Q(u', u) + forcing'``, at the Gauss points, its
  first equation again replaced by the row itself at ``tau = 0``.

The nodal variables thus follow Gauss collocation of an ODE (the states, the index-reduced
algebraic rows and the dbil rows).  Gauss collocation is the Gauss Runge-Kutta method, which
conserves quadratic invariants: ``d/dtau g`` is a polynomial of degree ``2p - 1`` on each
interval, exact under the Gauss rule, so ``g = 0`` holds at every mesh point once it holds at
``tau = 0``, and the dropped equation of a differentiated algebraic row is implied by the
others (exactly for polynomial rows, measured 1e-12; forcing terms to quadrature accuracy).
The dropped equation of a dbil row is left with a defect of order ``2p - 1`` (the closing
defect of ``r = f(pc v)`` around the period over one interval; tanh * exp model below, p = 3:
1.1e-4, 4.3e-6, 1.4e-7 at N_int = 20, 40, 80 against terms of size 6), which does not lower
the orders measured below.  The discrete system stays exactly quadratic except for the
point conditions, whose ANM series come from the recurrences of ``_series.py``
(:meth:`series_rhs` with the origin).
Measured on the user-declared tanh * exp belt oscillator at ``vb = 0.8`` against shooting
(``tests/discretizations/test_collocation_point_conditions.py``), p = 3, N_int = 20, 40, 80, 160:
``omega`` error 8.8e-7, 1.3e-8, 1.9e-10, 3.0e-12 (order 6 = 2p), uniform state error
(integral phase) 4.2e-5, 2.7e-6, 1.8e-7, 1.1e-8 (order 4 = p + 1), the auxiliaries'
definitions at the mesh points to 3.5e-5, 5.0e-7, 7.6e-9, 1.2e-10 (order 6); p = 4 gives
order 8 for ``omega`` (4.9e-9 at N_int = 20).  Imposing the algebraic rows of the nodal
variables at the nodes instead (no differentiation; measured with a throw-away variant of
:meth:`residual`) also converges, but ``omega`` only at order 5 for p = 3 (4.3e-8 instead
of 1.3e-8 at N_int = 40): the derivative of an interpolated algebraic variable is only
O(h^p) accurate at the Gauss points.
Models without dbil rows are unaffected (only the differential variables are nodal).

Unknown layout (variable-major like the HBM layout of ``discretizations/_base.py``)::

    Y[r*G + q]   r-th variable, q = i*p + j (node j = 0..p-1 of interval i, nodal variable)
                                 or q = i*p + l (Gauss point l = 0..p-1 of interval i, otherwise)
    Y[N*G]       omega (autonomous models only)
    Z[-1]        lam

with ``G = p N_int``.  Equation ``r*G + i*p + l`` is row ``r`` of the quadratic system at Gauss
point ``l`` of interval ``i`` (for dbil rows and algebraic rows of nodal variables, equation
``r*G`` is the condition at ``tau = 0``); the last equation (autonomous only) is the phase
condition, either ``du_k/dtau(0) = 0`` (``phase="extremum"``: state k has an extremum at
tau = 0, the same condition as the shooting module) or the integral condition
``int_0^1 <u(tau), u_ref'(tau)> dtau = 0`` over the differential variables (``phase="integral"``,
AUTO's condition, against a reference set by :meth:`set_reference`).

The condensed collocation monodromy of ``_stability.floquet_collocation`` assumes that every
nodal row is a Gauss equation and reports a singular interval block on the point rows; for
models with point conditions :meth:`monodromy` condenses the Gauss equations with the point
relations at the nodes instead (tanh * exp model: multipliers of the variational equation to
5e-7 at 40 x 3, 8e-9 at 80 x 3, order 2p), and ``floquet_collocation`` should dispatch to it.

The class is written in three modules: the operators, residual, Jacobian and ANM series
here; the point conditions and the monodromy in ``_collocation_points.py``; building and
reading solutions in ``_collocation_solutions.py`` (mixins of the one class).
"""
from __future__ import annotations

import numpy as np
from numpy.polynomial.legendre import leggauss
import scipy

from ..errors import InputError
from ..model._interface import Model
from ..model._series import taylor_remainder
from ._base import Discretization
from ._collocation_points import CollocationPointConditions
from ._collocation_solutions import CollocationSolutions


def _lagrange_tables(p: int):
    """Equidistant nodes on [0, 1]; Lagrange values and derivatives at the Gauss points.

    Returns ``nodes (p+1,)``, ``gauss (p,)``, ``weights (p,)`` (sum 1), ``Lval (p, p+1)``,
    ``Lder (p, p+1)`` (d/ds of basis j at Gauss point l) and ``Lder0 (p+1,)`` (at s = 0).
    """
    nodes = np.arange(p + 1) / p
    g, w = leggauss(p)
    gauss, weights = (g + 1) / 2, w / 2
    Vinv = np.linalg.inv(np.vander(nodes, p + 1, increasing=True))   # monomial coeffs of each basis
    powers = np.arange(p + 1)

    def values(s):
        return np.vander(np.atleast_1d(s), p + 1, increasing=True) @ Vinv

    def derivs(s):
        s = np.atleast_1d(s)
        D = np.zeros((s.size, p + 1))
        D[:, 1:] = powers[1:] * s[:, None] ** (powers[1:] - 1)
        return D @ Vinv

    return nodes, gauss, weights, values(gauss), derivs(gauss), derivs(0.0)[0], Vinv


def _mesh_matrices(n_intervals: int, p: int, Lval, Lder):
    """Interpolation ``E`` and derivative ``Dm = d/dtau`` (both (G, G) CSR, ``G = p N_int``) from
    the periodic nodal values of one variable to its values at the Gauss points
    (``Lval``, ``Lder`` of :func:`_lagrange_tables`; interval length ``h = 1 / N_int``)."""
    G, h = p * n_intervals, 1.0 / n_intervals
    rows, cols, ev, dv = [], [], [], []
    for i in range(n_intervals):
        for l in range(p):
            for j in range(p + 1):
                rows.append(i * p + l)
                cols.append((i * p + j) % G)
                ev.append(Lval[l, j])
                dv.append(Lder[l, j] / h)
    return (scipy.sparse.csr_matrix((ev, (rows, cols)), shape=(G, G)),
            scipy.sparse.csr_matrix((dv, (rows, cols)), shape=(G, G)))


class CollocationDiscretization(CollocationPointConditions, CollocationSolutions, Discretization):
    """Orthogonal collocation of periodic orbits (module docstring), discretization contract.

    Parameters
    ----------
    model : Model
        Any model with a quadratic recast (derivative-bilinear rows and point conditions
        included); not a sampled one.
    n_intervals : int
        Number of sub-intervals ``N_int`` (>= 2).
    degree : int
        Polynomial degree ``p`` (>= 1, default 3 as in seed 003).
    phase : {"extremum", "integral"}
        Phase condition of autonomous models (module docstring).
    phase_state : int
        State ``k`` of the ``"extremum"`` phase condition.
    subharmonic : int
        Forced models: the normalised period spans ``subharmonic`` forcing periods (the
        orbit's angular frequency is ``Omega / subharmonic``); 2 for period-doubled orbits
        (:func:`frictionkit.runtime._switching.switch_period_doubling_collocation`).

    Raises
    ------
    ModelInterfaceError
        A derivative-bilinear row without its point condition (``POINT_ROWS``).
    InputError
        Bad ``n_intervals``, ``degree``, ``phase`` or ``phase_state``; a sampled model; the
        continuation parameter inside a dbil row or point condition.
    NotImplementedError
        A state without a differential row.
    """

    kind = "collocation-recast"
    has_quadratic = True
    floquet_route = "collocation"

    @property
    def row_names(self):
        """What the unknowns hold (``solution/variables`` of a saved branch): every variable of
        the recast."""
        return tuple(self.model.variables)

    @property
    def sizes(self) -> dict:
        """Contract: what rebuilds this discretization for a restart."""
        return dict(n_intervals=self.n_intervals, degree=self.degree)

    def __init__(self, model: Model, n_intervals: int = 50, degree: int = 3, *, phase: str = "extremum",
                 phase_state: int = 0, subharmonic: int = 1):
        if model.sampled:
            raise InputError(
                f"model {model.name!r} is sampled (a non-analytic law, no quadratic recast): "
                "use the AFT harmonic balance (AFTDiscretization) or shooting instead of collocation")
        if int(n_intervals) != n_intervals or n_intervals < 2:
            raise InputError(f"n_intervals={n_intervals} must be an integer >= 2")
        if int(degree) != degree or not 1 <= degree <= 12:
            raise InputError(f"degree={degree} must be an integer between 1 and 12 (default 3)")
        if phase not in ("extremum", "integral"):
            raise InputError(f"phase={phase!r} must be 'extremum' or 'integral'")
        if not 0 <= int(phase_state) < model.n:
            raise InputError(f"phase_state={phase_state} must index a state (0..{model.n - 1})")
        self.model = model
        self.n_intervals = int(n_intervals)
        self.degree = p = int(degree)
        self.phase, self.phase_state = phase, int(phase_state)
        self.N = model.N
        self.G = G = p * self.n_intervals
        self.h = 1.0 / self.n_intervals
        mass = np.asarray(model.operators()["mass"], dtype=float)
        self.mass_rows = mass != 0
        if not np.all(self.mass_rows[: model.n]):
            raise NotImplementedError(f"model {model.name!r}: a state without a differential row")
        self._setup_point_conditions()
        #: variables on the continuous nodal polynomials (the name is kept for the condensed
        #: monodromy of ``_stability.floquet_collocation``): the differential ones, plus, for
        #: models with derivative-bilinear rows, the set of the module docstring
        self.differential = self.nodal
        self.forced = model.forced
        self.autonomous = not self.forced
        self.omega_is_lam = self.forced and model.forcing_frequency == model.continuation
        # forced models: the mesh spans ``subharmonic`` forcing periods (period-doubled orbits)
        self.nu = int(subharmonic)
        if self.nu != subharmonic or self.nu < 1 or (self.nu > 1 and not self.forced):
            raise InputError(f"subharmonic={subharmonic} must be a positive integer (> 1 for forced models "
                             "only: an autonomous period-doubled orbit is an ordinary orbit)")
        self.m = self.N * G + (1 if self.autonomous else 0)
        self.omega_index = self.N * G if self.autonomous else None    # position of omega in Z
        self.lam_index = self.m
        (self.nodes, self.gauss, self.weights, self.Lval, self.Lder, self.Lder0,
         self._Vinv) = _lagrange_tables(p)
        self.E, self.Dm = _mesh_matrices(self.n_intervals, p, self.Lval, self.Lder)
        self.I = scipy.sparse.identity(G, format="csr")
        # times of the Gauss points and of the nodes in normalised time
        self.tau_gauss = ((np.arange(self.n_intervals)[:, None] + self.gauss[None, :]) * self.h).ravel()
        self.tau_nodes = np.arange(G) / G
        self._reference = None

    # -- sizes and layout -----------------------------------------------------------------
    @property
    def n_dis(self) -> int:
        """Seed 003 §2.2 count of discretization unknowns per variable, ``p N_int + 1``."""
        return self.G + 1

    def _omega_index(self):
        return self.N * self.G if self.autonomous else None

    def _parts(self, Z):
        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.size,):
            raise InputError(f"Z must have length {self.size} (collocation unknowns, omega, lam); got {Z.shape}")
        lam = Z[-1]
        U = Z[: self.N * self.G].reshape(self.N, self.G)
        if self.autonomous:
            omega = Z[self.N * self.G]
        elif self.omega_is_lam:
            omega = lam / self.nu
        else:
            omega = self.model.value(self.model.forcing_frequency) / self.nu
        return U, omega, lam

    def _at_gauss(self, U):
        """Values of every variable at the Gauss points, shape (N, G)."""
        out = np.empty_like(U)
        d = self.nodal
        out[d] = (self.E @ U[d].T).T
        out[~d] = U[~d]
        return out

    def _dtau(self, U):
        """d/dtau of the nodal variables at the Gauss points (zeros for the others)."""
        out = np.zeros_like(U)
        d = self.nodal
        out[d] = (self.Dm @ U[d].T).T
        return out

    def _forcing(self, ops):
        """Forcing terms at the Gauss points: ``(f0, f1)`` each (N, G), f = f0 + lam f1."""
        w = 2 * np.pi * self.nu                                    # Omega t = 2 pi nu tau
        c, s = np.cos(w * self.tau_gauss), np.sin(w * self.tau_gauss)
        f0 = ops["fc0"][:, None] * c + ops["fs0"][:, None] * s
        f1 = ops["fc1"][:, None] * c + ops["fs1"][:, None] * s
        return f0, f1

    def _ops(self):
        # operators depend on the other parameters only; lam enters through c1, L1, fc1, fs1
        # (kept while the model's parameter values stay the same: the ANM asks for them at
        # every order)
        key = self.model.param_vector().tobytes()
        cached = self.__dict__.get("_ops_cache")
        if cached is None or cached[0] != key:
            cached = (key, self.model.operators())
            self.__dict__["_ops_cache"] = cached
        return cached[1]

    # -- phase condition -----------------------------------------------------------------
    def set_reference(self, Z):
        """Reference orbit of the integral phase condition (``phase="integral"``)."""
        U, _, _ = self._parts(Z)
        self._reference = self._dtau(U)

    @property
    def amplitude_weights(self):
        """Weights of a signed amplitude ``w . Z`` (``_continuation.amplitude_weights``): the
        phase state at ``tau = 0``, where the ``"extremum"`` phase condition puts an
        extremum, minus its mean over the period.  Positive at a maximum, negative at a
        minimum, it changes sign where the branch passes through a Hopf point into its
        half-period-shifted copy.  None for forced orbits and the integral phase."""
        k = self.phase_state
        if not self.autonomous or self.phase != "extremum" or not self.nodal[k]:
            return None
        G = self.G
        w = np.zeros(self.size)
        wq = np.tile(self.weights * self.h, self.n_intervals)
        w[k * G:(k + 1) * G] = -(self.E.T @ wq)
        w[k * G] += 1.0
        return w

    def _phase_row(self):
        """Coefficients (length N*G) of the linear phase condition."""
        row = np.zeros(self.N * self.G)
        p = self.degree
        if self.phase == "extremum":
            k = self.phase_state
            idx = k * self.G + (np.arange(p + 1) % self.G)
            np.add.at(row, idx, self.Lder0 / self.h)
            return row
        if self._reference is None:
            raise InputError("phase='integral' needs a reference orbit: call set_reference(Z) first")
        # int_0^1 <u, u_ref'> dtau by Gauss quadrature on each interval (exact for these degrees)
        wq = np.tile(self.weights * self.h, self.n_intervals)
        for r in np.flatnonzero(self.mass_rows):
            row[r * self.G: (r + 1) * self.G] = self.E.T @ (wq * self._reference[r])
        return row

    # -- contract ------------------------------------------------------------------------
    def _at_origin(self, U):
        """Nodal variables at ``tau = 0`` (node 0); zero for the Gauss-point variables."""
        return np.where(self.nodal, U[:, 0], 0.0)

    def _dforcing(self, ops):
        """d/dtau of the forcing at the Gauss points: ``(g0, g1)`` each (N, G)."""
        w = 2 * np.pi * self.nu
        c, s = np.cos(w * self.tau_gauss), np.sin(w * self.tau_gauss)
        g0 = w * (-ops["fc0"][:, None] * s + ops["fs0"][:, None] * c)
        g1 = w * (-ops["fc1"][:, None] * s + ops["fs1"][:, None] * c)
        return g0, g1

    def _dbil_gauss(self, U1g, dU2, linear=True):
        """``A u2' + sum_t bc_t u1_J u2'_L`` at the Gauss points, scattered to rows ``B_K``."""
        out = self.A @ dU2 if linear else np.zeros_like(dU2)
        if len(self.B_K):
            np.add.at(out, self.B_K, self.bc[:, None] * U1g[self.B_J] * dU2[self.B_L])
        return out

    def residual(self, Z):
        U, omega, lam = self._parts(Z)
        ops = self._ops()
        Ug = self._at_gauss(U)
        f0, f1 = self._forcing(ops)
        Lfull = ops["L0"] + lam * ops["L1"]
        rhs = (ops["c0"][:, None] + lam * ops["c1"][:, None] + Lfull @ Ug
               + self.model.quad(ops["qc"], Ug, Ug) + f0 + lam * f1)
        dU = self._dtau(U)
        R = ops["mass"][:, None] * (omega / (2 * np.pi)) * dU - rhs
        if self.has_point:
            # algebraic rows of nodal variables: d/dtau of the row at the Gauss points, the row
            # itself at tau = 0 in place of the first Gauss point (module docstring)
            a = self.alg_nodal
            g0, g1 = self._dforcing(ops)
            drhs = (Lfull @ dU + self.model.quad(ops["qc"], Ug, dU) + self.model.quad(ops["qc"], dU, Ug)
                    + g0 + lam * g1)
            R[a] = -drhs[a]
            u0 = self._at_origin(U)
            rhs0 = (ops["c0"] + lam * ops["c1"] + Lfull @ u0
                    + self.model.quad(ops["qc"], u0[:, None], u0[:, None])[:, 0] + ops["fc0"] + lam * ops["fc1"])
            R[a, 0] = -rhs0[a]
            # derivative-bilinear rows, the first Gauss equation replaced by the point condition
            R[self.dbil_rows] = self._dbil_gauss(Ug, dU)[self.dbil_rows]
            R[self.point_rows, 0] = self.model.point(u0, self._pvec)
        R = R.ravel()
        if self.autonomous:
            R = np.append(R, self._phase_row() @ Z[: self.N * self.G])
        return R

    def jacobian(self, Z):
        """dR/dZ as a ``scipy.sparse.csr_matrix`` of shape (m, m + 1)."""
        return self._jacobian(Z, point_rows=True)

    def _jacobian_pattern(self, ops):
        """COO pattern of dR/dZ for a model without point conditions (built once).

        Block (r, s) of the variables is ``diag(-(L0 + lam L1 + Jq)[r, s]) E_s`` (``E_s`` = E
        for a nodal variable, the identity otherwise) on the structurally non-zero pairs
        (operators and the model's ``quad_jac`` at a generic point), plus
        ``(mass_r omega / 2 pi) Dm`` on the differential rows; then the omega and lam columns
        and the phase row.  Returns index arrays and, for each entry, where its coefficient
        comes from.
        """
        N, G = self.N, self.G
        rng = np.random.default_rng(0)
        Jq = self.model.quad_jac(ops["qc"], rng.standard_normal((N, 3)))
        pattern = (ops["L0"] != 0) | (ops["L1"] != 0) | np.any(Jq != 0, axis=2)
        Ec, Ic, Dc = self.E.tocoo(), self.I.tocoo(), self.Dm.tocoo()
        rows, cols, coef_at, base = [], [], [], []
        for r, s_ in zip(*np.nonzero(pattern)):
            B = Ec if self.nodal[s_] else Ic
            rows.append(r * G + B.row)
            cols.append(s_ * G + B.col)
            coef_at.append((r * N + s_) * G + B.row)          # index into COEF (N, N, G)
            base.append(B.data)
        mass_r = np.flatnonzero(self.mass_rows)
        drows = np.concatenate([r * G + Dc.row for r in mass_r]) if mass_r.size else np.zeros(0, int)
        dcols = np.concatenate([r * G + Dc.col for r in mass_r]) if mass_r.size else np.zeros(0, int)
        dbase = np.concatenate([ops["mass"][r] * Dc.data for r in mass_r]) if mass_r.size else np.zeros(0)
        return dict(rows=np.concatenate(rows + [drows]).astype(np.intp),
                    cols=np.concatenate(cols + [dcols]).astype(np.intp),
                    n_coef=int(sum(len(b) for b in base)),
                    coef_at=np.concatenate(coef_at).astype(np.intp), base=np.concatenate(base), dbase=dbase)

    def _jacobian_fast(self, Z):
        """dR/dZ of a model without point conditions from the cached COO pattern."""
        U, omega, lam = self._parts(Z)
        ops = self._ops()
        key = self.__dict__.get("_ops_cache", (None,))[0]
        pat = self.__dict__.get("_jac_pattern")
        if pat is None or pat[0] != key:
            pat = (key, self._jacobian_pattern(ops))
            self.__dict__["_jac_pattern"] = pat
        pat = pat[1]
        N, G = self.N, self.G
        Ug = self._at_gauss(U)
        COEF = -(ops["L0"] + lam * ops["L1"])[:, :, None] - self.model.quad_jac(ops["qc"], Ug)
        data = np.concatenate([COEF.ravel()[pat["coef_at"]] * pat["base"],
                               (omega / (2 * np.pi)) * pat["dbase"]])
        _, f1 = self._forcing(ops)
        dlam = -(ops["c1"][:, None] + ops["L1"] @ Ug + f1)
        domega = ops["mass"][:, None] / (2 * np.pi) * self._dtau(U)
        if self.omega_is_lam:
            dlam = dlam + domega / self.nu
        n_rows = N * G
        all_rows = np.arange(n_rows)
        rows, cols, vals = [pat["rows"]], [pat["cols"]], [data]
        if self.autonomous:
            rows.append(all_rows)
            cols.append(np.full(n_rows, n_rows))
            vals.append(domega.ravel())
            phase = self._phase_row()
            nz = np.flatnonzero(phase)
            rows.append(np.full(nz.size, n_rows))
            cols.append(nz)
            vals.append(phase[nz])
        rows.append(all_rows)
        cols.append(np.full(n_rows, self.size - 1))
        vals.append(dlam.ravel())
        return scipy.sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(self.m, self.size))

    def _jacobian(self, Z, point_rows=True):
        """dR/dZ; ``point_rows=False`` keeps the first Gauss equation of the dbil rows and of
        the algebraic rows of nodal variables (the Gauss equations only, for :meth:`monodromy`)."""
        if not self.has_point:
            return self._jacobian_fast(Z)
        U, omega, lam = self._parts(Z)
        ops = self._ops()
        N, G = self.N, self.G
        Ug = self._at_gauss(U)
        dU = self._dtau(U)
        Jq = self.model.quad_jac(ops["qc"], Ug)                  # (N, N, G)
        Lfull = ops["L0"] + lam * ops["L1"]
        special = np.zeros(N, dtype=bool)
        if self.has_point:
            special[self.dbil_rows] = True
            special |= self.alg_nodal
            Jqd = self.model.quad_jac(ops["qc"], dU)             # linear in its argument
        blocks = [[None] * N for _ in range(N)]
        for r in range(N):
            for s in range(N):
                Es = self.E if self.nodal[s] else self.I
                blk = None
                if not special[r]:
                    coef = -(Lfull[r, s] + Jq[r, s])
                    if np.any(coef != 0):
                        blk = scipy.sparse.diags(coef) @ Es
                    if r == s and self.mass_rows[r]:
                        dm = (ops["mass"][r] * omega / (2 * np.pi)) * self.Dm
                        blk = dm if blk is None else blk + dm
                elif self.alg_nodal[r]:
                    # d/dU_s of -(Lfull dU + Jq(Ug) dU)_r; every s of the row is nodal
                    cd = -(Lfull[r, s] + Jq[r, s])
                    cv = -Jqd[r, s]
                    if np.any(cd != 0):
                        blk = scipy.sparse.diags(cd) @ self.Dm
                    if np.any(cv != 0):
                        b2 = scipy.sparse.diags(cv) @ self.E
                        blk = b2 if blk is None else blk + b2
                else:
                    cd = np.full(G, self.A[r, s])
                    cv = np.zeros(G)
                    for t in np.flatnonzero(self.B_K == r):
                        if self.B_L[t] == s:
                            cd = cd + self.bc[t] * Ug[self.B_J[t]]
                        if self.B_J[t] == s:
                            cv = cv + self.bc[t] * dU[self.B_L[t]]
                    if np.any(cd != 0):
                        blk = scipy.sparse.diags(cd) @ self.Dm
                    if np.any(cv != 0):
                        b2 = scipy.sparse.diags(cv) @ Es
                        blk = b2 if blk is None else blk + b2
                blocks[r][s] = blk
        for r in range(N):     # bmat needs one block per block-row and block-column
            if blocks[r][r] is None:
                blocks[r][r] = scipy.sparse.csr_matrix((G, G))
        JU = scipy.sparse.bmat(blocks, format="csr")
        _, f1 = self._forcing(ops)
        dlam = -(ops["c1"][:, None] + ops["L1"] @ Ug + f1)
        domega = ops["mass"][:, None] / (2 * np.pi) * dU
        if self.omega_is_lam:
            dlam = dlam + domega / self.nu
        if self.has_point:
            a = self.alg_nodal
            _, g1 = self._dforcing(ops)
            u0 = self._at_origin(U)
            dlam[a] = -(ops["L1"] @ dU + g1)[a]
            if point_rows:
                dlam[a, 0] = -(ops["c1"] + ops["L1"] @ u0 + ops["fc1"])[a]
            dlam[self.dbil_rows] = 0.0
        cols = [JU]
        if self.autonomous:
            cols.append(scipy.sparse.csr_matrix(domega.reshape(-1, 1)))
        cols.append(scipy.sparse.csr_matrix(dlam.reshape(-1, 1)))
        J = scipy.sparse.hstack(cols, format="csr")
        if self.has_point and point_rows:
            J = self._replace_point_rows(J, U, Lfull, ops)
        if self.autonomous:
            phase = np.append(self._phase_row(), [0.0, 0.0])
            J = scipy.sparse.vstack([J, scipy.sparse.csr_matrix(phase)], format="csr")
        return J

    def quadratic(self, Z1, Z2):
        """Bilinear part ``Q(Z1, Z2)`` (not symmetrised): omega1 m D u2 / 2pi - lam1 L1 u2 - Q(u1, u2).

        The point conditions are not polynomial: their entries are zero here and their
        power series come from :meth:`series_rhs`.
        """
        U1, omega1, lam1 = self._parts(Z1)
        U2, _, _ = self._parts(Z2)
        ops = self._ops()
        U1g, U2g = self._at_gauss(U1), self._at_gauss(U2)
        out = -lam1 * (ops["L1"] @ U2g) - self.model.quad(ops["qc"], U1g, U2g)
        if self.autonomous or self.omega_is_lam:     # otherwise omega D u is linear
            out = out + ops["mass"][:, None] * (omega1 / (2 * np.pi)) * self._dtau(U2)
        if self.has_point:
            a = self.alg_nodal
            dU1, dU2 = self._dtau(U1), self._dtau(U2)
            d = lam1 * (ops["L1"] @ dU2) + self.model.quad(ops["qc"], U1g, dU2) + self.model.quad(ops["qc"], dU1, U2g)
            out[a] = -d[a]
            u1, u2 = self._at_origin(U1), self._at_origin(U2)
            q0 = lam1 * (ops["L1"] @ u2) + self.model.quad(ops["qc"], u1[:, None], u2[:, None])[:, 0]
            out[a, 0] = -q0[a]
            out[self.dbil_rows] = self._dbil_gauss(U1g, dU2, linear=False)[self.dbil_rows]
            out[self.point_rows, 0] = 0.0
        out = out.ravel()
        if self.autonomous:
            out = np.append(out, 0.0)
        return out

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side of the ANM (contract item 5).

        ``sum_r Q(Z_r, Z_{p-r})`` for every polynomial row; the point rows get ``-rho_p``,
        the part of the order-p Taylor coefficient of ``f(pc u_v(0))`` that does not
        depend on ``Z_p`` (recurrences of ``_series.py``), which needs the origin ``Z_0``.
        """
        if not self.has_point:
            return self._series_rhs_polynomial(terms)
        out = super().series_rhs(terms)
        if origin is None:
            raise InputError("the ANM series of a model with point conditions needs the series "
                             "origin: call series_rhs(terms, origin=Z0)")
        cols = [self._parts(origin)[0]] + [self._parts(t)[0] for t in terms]
        for k, (r, f, v) in enumerate(zip(self.point_rows, self.point_funcs, self.point_args)):
            w = np.array([self.pc[k] * Uj[v, 0] for Uj in cols])
            out[r * self.G] = -taylor_remainder(f, w)
        return out

    def _series_rhs_polynomial(self, terms):
        """``sum_r Q(Z_r, Z_{p-r})`` of a model without point conditions, vectorised.

        The variables of each term and their Gauss-point values are stored once per series
        (recognised by identity); every order is one batched ``quad`` over the ``p - 1``
        products plus one contraction each for the ``lam L1 u`` and ``omega D u`` products
        (:meth:`quadratic` summed over r, term by term).
        """
        p = len(terms) + 1
        c = self.__dict__.get("_series_stack")
        if c is None or c["n"] > len(terms) or any(x is not t for x, t in zip(c["ids"], terms)):
            c = None
        if c is None or c["U"].shape[0] < len(terms):
            cap = max(32, 2 * len(terms))
            new = dict(n=0, ids=[], U=np.zeros((cap, self.N, self.G)), Ug=np.zeros((self.N, cap, self.G)),
                       om=np.zeros(cap), lam=np.zeros(cap))
            if c is not None:
                k = c["n"]
                new.update(n=k, ids=c["ids"])
                new["U"][:k], new["Ug"][:, :k] = c["U"][:k], c["Ug"][:, :k]
                new["om"][:k], new["lam"][:k] = c["om"][:k], c["lam"][:k]
            c = new
            self.__dict__["_series_stack"] = c
        for k in range(c["n"], len(terms)):
            U, om, lam = self._parts(terms[k])
            c["U"][k], c["Ug"][:, k], c["om"][k], c["lam"][k] = U, self._at_gauss(U), om, lam
            c["ids"].append(terms[k])
        c["n"] = len(terms)
        ops = self._ops()
        N, G = self.N, self.G
        a = np.ascontiguousarray(c["Ug"][:, :p - 1]).reshape(N, -1)
        b = np.ascontiguousarray(c["Ug"][:, p - 2::-1]).reshape(N, -1)        # u_{p-1}, ..., u_1
        out = -self.model.quad(ops["qc"], a, b).reshape(N, p - 1, G).sum(axis=1)
        Urev = c["U"][p - 2::-1]
        out -= ops["L1"] @ self._at_gauss(np.tensordot(c["lam"][:p - 1], Urev, axes=1))
        if self.autonomous or self.omega_is_lam:
            W = np.tensordot(c["om"][:p - 1], Urev, axes=1)
            out += ops["mass"][:, None] * self._dtau(W) / (2 * np.pi)
        out = out.ravel()
        if self.autonomous:
            out = np.append(out, 0.0)
        return out
