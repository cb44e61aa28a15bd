"""Contract between a discretization (HBM, collocation, ...) and the continuation engines.

A discretization turns the quadratic system of a model (``model/_interface.py``) into a
discrete algebraic system in one unknown vector ``Z = [Y, lam]`` of length ``m + 1``::

    R(Z) = C + L Z + Q(Z, Z) = 0,        R: R^(m+1) -> R^m

where ``Y`` holds the discrete unknowns (the coefficients / nodal values of every
variable, then the angular frequency ``omega`` for autonomous orbits) and ``lam`` is last.
Because ``lam`` and ``omega`` are unknowns, the products ``lam*L1 u`` and ``omega*D u`` are
quadratic and ``R`` is exactly quadratic: that is what the ANM needs (DESIGN §5.3).

The engines (``engine/``), the analyses (``analysis/``), the results (``results/``) and the
drivers use a discretization only through the members below (numbered, as in scipy's
``OdeSolver``); they never test its class.  Abstract members (a subclass must define
them) are marked *abstract*; the others have defaults here.

1. ``kind`` (*abstract*, str): what the unknowns are, in provenance words: ``"hbm"``,
   ``"aft"``, ``"collocation-states"``, ``"collocation-recast"``, ``"shooting"``,
   ``"equilibria"`` (a harmonic balance with ``H = 0``), or the name of an augmented
   system (``"scaled"``, ``"hopf-system"``, ``"fold-system"``).
2. ``m`` (number of equations, set by ``__init__``) and ``size = m + 1`` (unknowns).
3. ``residual(Z) -> (m,)`` (*abstract*).
4. ``jacobian(Z) -> (m, m+1)`` (*abstract*) dense ndarray or scipy.sparse matrix: dR/dZ.
   With ``jacobian_accepts_out = True`` (default False) a dense discretization accepts
   ``jacobian(Z, out=A)`` with ``A`` a zero-filled (m, m+1) array to assemble into; the
   engines then assemble it straight into their reusable bordered buffer
   (``engine/_bordered.factor_jacobian``).
5. ``has_quadratic`` (default False) and ``quadratic(Z1, Z2) -> (m,)``: the bilinear part
   ``Q(Z1, Z2)`` (symmetrised or not: the ANM only uses sums symmetric in the two
   arguments).  Without it the ANM is impossible and second derivatives are taken by
   differences of the Jacobian.
6. ``series_rhs(terms, origin=None) -> (m,)`` (default ``sum_r Q(Z_r, Z_{p-r})``): the
   right-hand side of order ``p`` of the ANM recurrence given ``[Z_1..Z_{p-1}]`` and the
   series origin ``Z_0``; non-polynomial point conditions override it with their
   power-series recurrences (``model/_series.py``), which need ``origin``; the
   pointwise discretizations of the states (AFT) take it from the generated Taylor
   kernels (DESIGN §5.0).  ``supports_anm`` (default ``has_quadratic``) says whether it
   works, i.e. whether the ANM engine can continue the system.
   ``series_terms(origin, Z1, order, solve, lu=None) -> [Z_1..Z_order]``: all the terms of
   one ANM step from its first (default: ``series_rhs`` order by order, each solved by
   ``solve`` and made orthogonal to ``Z_1``); ``lu`` is the dense ``(lu, piv)`` of
   ``scipy.linalg.lu_factor`` behind ``solve`` when there is one, for a compiled loop (the
   AFT's, ``_pointwise_loop.pyx``), with a third item, the reduction, when the engine
   factorized the Schur complement of item 18's elimination.
7. ``unpack(Z) -> dict`` (default: ``lam`` and ``omega`` only) with at least ``lam``,
   ``omega`` (NaN for equilibria) and, for orbits, ``samples(n_t)``: a callable giving the
   original states on ``n_t`` equispaced points of one period (shape (n, n_t)); harmonic
   balances add ``coefficients`` (variables, 2H+1) and ``harmonics``, orbits may add ``T``.
8. ``samples(Z, n_t) -> (t, x)``: times [s] of ``n_t`` equispaced points of one period
   and the original states there (n, n_t) (default from ``unpack``; equilibria: a unit
   interval and constant states).  ``Branch.time_series`` uses it.
9. ``omega_index`` (default None): position of ``omega`` in ``Z`` when it is an unknown.
10. ``H`` and ``n_t`` (default None): the harmonics and time samples of a harmonic
    balance (provenance and layout of HBM branches).
11. ``phase_index`` and ``amplitude_weights`` (default None): the phase-fixed coefficient
    (``Z[phase_index - 1]`` is the cos coefficient of the phase variable) or explicit
    weights ``w`` of a signed amplitude ``w . Z``, whose sign change marks the passage of a
    periodic branch through a Hopf point (``engine/_recorder.amplitude_weights``).
12. ``noise_floor`` (default 0): the residual size below which Newton stops improving
    (point conditions evaluated in floating point); ``residual_noise(Z) -> (m,)`` (default
    zeros): the absolute rounding level of each residual entry (FFT-evaluated residuals).
13. ``n_residuals``, ``n_jacobians`` (default 0): work counters the discretization
    increments itself (reported in ``Branch.counters``).
14. ``floquet_route`` (default None): how the Floquet multipliers of an orbit are computed
    (``"hill"``: Hill's method on the harmonic coefficients, ``"collocation"``: condensed
    collocation Jacobian, ``"monodromy"``: ``monodromy(Z)`` of the variational equation);
    ``supports_stability`` is ``floquet_route is not None``.
15. ``monodromy(Z)`` (routes ``"monodromy"``, and collocation with point conditions): the
    monodromy matrix of the orbit ``Z``.
16. ``forced`` (default False), ``model`` (default None): the model the system discretizes.
17. ``on_model(model)`` (harmonic balances): the same discretization (sizes, phase
    variable) of another :class:`Model`, e.g. other parameter values (two-parameter curves).
18. ``elimination`` (default None): an :class:`Elimination`, equations of ``R`` that are an
    identity in some unknowns at every ``Z`` (kinematic rows ``x_i' = x_j`` of the AFT), which
    the engines' dense bordered LU eliminates exactly before factorizing
    (``engine/_bordered.py``); ``jacobian`` still returns the full matrix.
19. ``state_names`` (default: the model's states): the variables whose coefficients
    ``unpack()["coefficients"]`` holds (first in ``Z`` for harmonic balances, ``2H+1`` each)
    and whose samples ``samples`` and ``unpack()["samples"]`` give: the branch's ``states``.
    The condensed harmonic balance of a structure (``_condensed.py``) has its inputs and own
    states there, not the modal coordinates.
20. ``contact_velocity(x, t, params)`` (default: the model's): the contacts' relative
    velocities from samples ``x`` of ``state_names`` (motion labels).
21. ``row_names`` (default None): the names of what the unknowns hold, where they are not
    deduced from the harmonic layout (the quadratic collocation: every variable of the
    recast); a saved branch's ``solution/variables``.
22. ``monodromy_gradient(Z, left, right, intervals=None)`` (default: None, not available):
    ``left^H (dM/dY) right`` for the unknowns ``Y`` of the orbit's coefficients at once (the
    AFT: a reverse pass through its Magnus product), for the PD and NS curves' Jacobian.
23. ``full_coefficients(Z, rows=None)`` (default None, not available): where ``state_names``
    are not the model's states (a structure condensed onto its contacts), the Fourier
    coefficients (n, 2H+1) of the model's states on the orbit ``Z``; with ``rows`` (n_r, n),
    only ``rows @ coefficients`` (n_r, 2H+1) (the contacts' dissipation reads a few rows).
24. ``multipliers_of(M, start=None, with_start=False)`` (default: every eigenvalue,
    ``numpy.linalg.eigvals``): the Floquet multipliers of the monodromy ``M`` that the
    stability analysis needs; a large structure returns only the leading ones, every one on or
    outside the unit circle among them (``_structured_monodromy.leading_multipliers``).
    ``with_start``: return ``(multipliers, start)``, ``start`` a hint for the multipliers of a
    matrix close to ``M`` (an iterative eigensolver's start vector; None for direct ones),
    passed back as ``start`` for that matrix only.
25. ``point_coefficients(Z)`` (default ``{}``): the displacement Fourier coefficients
    ``(2H+1,)`` of each named point of a structure on the orbit ``Z`` that ``state_names``
    do not already hold, by column name ``y_<point>`` (the branch's amplitude, phase and rms
    columns of the structure's points, issue 25).
26. ``monodromy_operator(Z, intervals=None)`` (default None, not available): the monodromy of
    the orbit ``Z`` on ``intervals`` steps as a ``scipy.sparse.linalg.LinearOperator`` (its
    products with vectors, never the matrix), where that is the cheaper route to the leading
    multipliers (``multipliers_of`` takes it: a very large structure,
    ``_structured_monodromy.MonodromyOperator``).
27. ``extrema(Z)`` (default None, not available): ``(minimum, maximum)`` of each state over
    the orbit ``Z``, located exactly (the collocations: the roots of each interval's
    polynomial derivative); the branch's min, max and ptp columns take them, else the
    extremes of 1024 samples (the harmonic balances have their own, ``trig_extrema``).
28. ``monodromy_order`` (default None): the order ``p`` of the fixed-step rule by which
    ``monodromy(Z, intervals)`` integrates the variational equation (its error falls like
    ``intervals^-p``), which the Richardson extrapolation and error estimate of
    ``analysis._stability.refined_monodromy_stability`` need: 4 for the AFT's Magnus rule, 6
    for the condensed structure's exponential collocation at three Gauss points; None where
    the monodromy is not such a rule (shooting's is integrated to a tolerance).

HBM layout (DESIGN §5.1): ``Y[i*(2H+1) + k]`` is coefficient k of variable i with
k = 0 the mean, k = 2j-1 the cos(j w t) and k = 2j the sin(j w t) coefficient; for
autonomous models ``Y[-1]`` is ``omega``.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np

__all__ = ["Discretization", "Elimination"]


@dataclass(frozen=True)
class Elimination:
    """Rows of ``J = dR/dZ`` that are an identity in some unknowns (contract item 18).

    With ``k = len(rows)``: ``J[rows[t], cols[t]] = 1`` and ``J[rows[t], cols[s]] = 0``
    (``s != t``); the other nonzero entries of row ``rows[t]`` lie only in column
    ``pair_cols[u]`` where ``pair_rows[u] == t`` (at most one such column per row, each column
    of ``pair_cols`` once) and in the columns ``dense_cols``.  No column of ``pair_cols`` or
    ``dense_cols`` is in ``cols``; ``rows`` are rows of ``R`` (never the border row).

    Attributes
    ----------
    rows, cols : ndarray of int (k,)
        The identity block.
    pair_rows, pair_cols : ndarray of int
        Positions in ``rows`` and columns of ``Z`` of the one-per-column entries.
    dense_cols : ndarray of int
        Columns where every row of ``rows`` may have an entry (``omega``, a continued ``lam``).
    """

    rows: np.ndarray
    cols: np.ndarray
    pair_rows: np.ndarray
    pair_cols: np.ndarray
    dense_cols: np.ndarray

    def __post_init__(self):
        for name in ("rows", "cols", "pair_rows", "pair_cols", "dense_cols"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.intp).ravel())
        coupled = np.concatenate([self.pair_cols, self.dense_cols])
        if (self.rows.size != self.cols.size or self.pair_rows.size != self.pair_cols.size
                or np.unique(self.rows).size != self.rows.size or np.unique(self.cols).size != self.cols.size
                or np.unique(coupled).size != coupled.size or np.isin(coupled, self.cols).any()
                or np.unique(self.pair_rows).size != self.pair_rows.size
                or (self.pair_rows.size and not 0 <= self.pair_rows.min() <= self.pair_rows.max() < self.rows.size)):
            raise ValueError("Elimination: inconsistent index arrays (see its docstring)")


class Discretization(abc.ABC):
    """Abstract base of every discrete system the engines continue (module docstring)."""

    m: int
    model = None
    forced = False
    jacobian_accepts_out = False
    has_quadratic = False
    omega_index = None
    phase_index = None
    amplitude_weights = None
    H = None
    n_t = None
    noise_floor = 0.0
    n_residuals = 0
    n_jacobians = 0
    floquet_route = None
    elimination = None
    row_names = None

    @property
    def state_names(self) -> tuple:
        """What ``unpack()["coefficients"]`` and the samples hold (contract item 19)."""
        return tuple(self.model.states) if self.model is not None else ()

    def full_coefficients(self, Z, rows=None):
        """The model's states' Fourier coefficients on ``Z`` where ``state_names`` are others
        (contract item 23); None here."""
        return None

    def extrema(self, Z):
        """``(minimum, maximum)`` of each state, exact (contract item 27); None here."""
        return None

    def point_coefficients(self, Z) -> dict:
        """The named points' displacement coefficients on ``Z`` (contract item 25); none here."""
        return {}

    def contact_velocity(self, x, t, params):
        """Relative velocity of each contact from samples of ``state_names`` (item 20)."""
        return self.model.contact_velocity(x, t, params)

    @property
    def sizes(self) -> dict:
        """Sizes beyond ``H`` and ``n_t`` that rebuild this discretization (saved with a branch
        for its restart), e.g. collocation's ``n_intervals`` and ``degree``; none by default."""
        return {}

    @property
    @abc.abstractmethod
    def kind(self) -> str:
        """What the unknowns are (contract item 1)."""

    @property
    def size(self) -> int:
        return self.m + 1

    @property
    def supports_anm(self) -> bool:
        """Whether :meth:`series_rhs` works, i.e. the ANM can continue this system (item 6):
        by default when the system is quadratic; the AFT harmonic balance and collocation of
        the states have it from the pointwise Taylor kernels (DESIGN §5.0)."""
        return self.has_quadratic

    @property
    def supports_stability(self) -> bool:
        """Whether the analysis can compute Floquet multipliers of its points (item 14)."""
        return self.floquet_route is not None

    @abc.abstractmethod
    def residual(self, Z):
        """``R(Z)``, shape (m,) (contract item 3)."""

    @abc.abstractmethod
    def jacobian(self, Z):
        """``dR/dZ``, shape (m, m+1) (contract item 4)."""

    def quadratic(self, Z1, Z2):
        """The bilinear part ``Q(Z1, Z2)`` (contract item 5)."""
        raise NotImplementedError(f"a {self.kind} system has no quadratic part (has_quadratic is False)")

    def series_rhs(self, terms, origin=None):
        """Order-p right-hand side ``sum_{r=1}^{p-1} Q(Z_r, Z_{p-r})`` (contract item 6)."""
        p = len(terms) + 1
        out = np.zeros(self.m)
        for r in range(1, p):
            out += self.quadratic(terms[r - 1], terms[p - r - 1])
        return out

    def series_terms(self, origin, Z1, order: int, solve, lu=None):
        """Terms ``[Z_1..Z_order]`` of one ANM step at ``origin`` (contract item 6).

        Order p >= 2 solves ``[J; t^T] w = [-series_rhs; 0]`` with ``solve`` and removes the
        ``Z_1`` component of ``w`` (``engine/_anm.py``: ``J Z_1 = 0``, so ``J Z_p`` is kept).
        ``lu`` (unused here) is the dense LU behind ``solve``, ``(lu, piv)`` as from
        ``scipy.linalg.lu_factor``, or None; a subclass with a compiled loop uses it."""
        terms = [Z1]
        rhs = np.zeros(self.m + 1)
        for p in range(2, order + 1):
            np.negative(self.series_rhs(terms, origin=origin), out=rhs[:-1])
            rhs[-1] = 0.0
            w = solve(rhs)
            terms.append(w - (w @ Z1) * Z1)
        return terms

    def residual_noise(self, Z):
        """Absolute rounding level of each entry of ``residual(Z)`` (item 12), default 0.

        The engines compare ``|R_i|`` minus this level with the row size ``(|J| |Z|)_i``:
        an FFT-evaluated residual (AFT) carries ``~ eps max_t |f(t)|`` in every harmonic,
        which is far above ``eps (|J| |Z|)_i`` for the small high harmonics."""
        return np.zeros(self.m)

    def unpack(self, Z) -> dict:
        """``lam`` and ``omega`` of ``Z`` (contract item 7); orbits add ``samples``."""
        Z = np.asarray(Z, dtype=float)
        om = float(Z[self.omega_index]) if self.omega_index is not None else np.nan
        return dict(lam=float(Z[-1]), omega=om)

    def samples(self, Z, n_t: int):
        """Times of one period and the original states there, ``(t, x (n, n_t))`` (item 8)."""
        info = self.unpack(Z)
        if "samples" not in info:
            raise NotImplementedError(f"a {self.kind} system has no time series")
        x = np.asarray(info["samples"](int(n_t)))
        if not np.isfinite(info["omega"]):
            return np.linspace(0.0, 1.0, int(n_t)), x
        T = info.get("T", 2 * np.pi / info["omega"])
        return T * np.arange(int(n_t)) / int(n_t), x

    def on_model(self, model):
        """The same discretization of another model (contract item 17)."""
        raise NotImplementedError(f"a {self.kind} system cannot be rebuilt on another model")

    def monodromy(self, Z):
        """The monodromy matrix of the orbit ``Z`` (contract item 15)."""
        raise NotImplementedError(f"a {self.kind} system has no monodromy matrix")

    def monodromy_gradient(self, Z, left, right, intervals=None):
        """``left^H (dM/dY) right`` (contract item 22); None: not available (the caller takes
        differences of :meth:`monodromy`)."""
        return None

    def multipliers_of(self, M, start=None, with_start=False):
        """The eigenvalues of the monodromy ``M`` the stability analysis needs (contract item
        24): all of them (``start`` unused; the hint returned with ``with_start`` is None)."""
        mu = np.linalg.eigvals(M)
        return (mu, None) if with_start else mu

    def monodromy_operator(self, Z, intervals=None):
        """The monodromy as a linear operator (contract item 26); None: not available (the
        caller forms :meth:`monodromy`)."""
        return None

    @property
    def monodromy_order(self):
        """Order of :meth:`monodromy`'s fixed-step rule in its ``intervals`` (contract item
        28); None: not such a rule."""
        return None
