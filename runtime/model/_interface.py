"""The generated-model interface: the runtime's only contract with a model.

A *model module* is a Python module (emitted by ``frictionkit codegen`` or written by
hand) that exposes the names below.  The runtime never looks at anything else, so a
hand-written module that honours this list works exactly like a generated one.

Notation (``../shared/DESIGN.md`` §2): ``u`` is the vector of the N variables of the
quadratic system (the n original first-order states first, in ``STATES`` order, then the
auxiliaries), ``lam`` the continuation parameter and ``p`` a 1-D float array of *all*
parameter values in ``PARAMETERS`` order (``lam`` included, at ``PARAMETERS.index(CONTINUATION)``).
Row ``i`` of the quadratic system reads, at time ``t``::

    mass_i u_i' = c0_i + lam c1_i + (L0 u)_i + lam (L1 u)_i + Q_i(u, u)
                  + (fc0_i + lam fc1_i) cos(w t) + (fs0_i + lam fs1_i) sin(w t)     (differential)
             0  = same right-hand side                                             (algebraic)
             0  = (A u')_i + sum_t bc_t u_{B_J[t]} u'_{B_L[t]}                       (derivative-bilinear)

with ``w`` the parameter named by ``FORCING_FREQUENCY`` (``None`` for autonomous models).

Contract (numbered as in scipy's ``OdeSolver``):

1. Metadata: ``MODEL_NAME`` (str), ``MODEL_HASH`` (hex str of the canonical recast),
   ``GENERATOR_VERSION`` (str), ``BACKEND`` ("numpy", "cython" or "hand-written"),
   ``CONTINUATION`` (str), ``PARAMETERS`` (tuple of str), ``DEFAULTS`` (tuple of float,
   same order), ``STATES`` (tuple of str, length n), ``VARIABLES`` (tuple of str, length
   N, ``VARIABLES[:n] == STATES``), ``KINDS`` (tuple of "differential" / "algebraic" /
   "derivative_bilinear", one per row), ``FORCING_FREQUENCY`` (str or None),
   ``VALIDITY`` (tuple of ``(variable, "positive" | "nonzero", text)``), ``DEFINITIONS``
   (tuple of str, the readable definition of each auxiliary).
2. Sparse structure: ``Q_K, Q_I, Q_J`` (int arrays of length NQ): bilinear term ``t``
   adds ``qc[t] * a[Q_I[t]] * b[Q_J[t]]`` to row ``Q_K[t]``; ``B_K, B_J, B_L`` (length NB)
   likewise for the derivative-bilinear terms ``bc[t] * u[B_J[t]] * u'[B_L[t]]``.
3. ``operators(p) -> dict`` with float arrays ``mass (N,)``, ``c0, c1 (N,)``,
   ``L0, L1 (N, N)``, ``qc (NQ,)``, ``fc0, fs0, fc1, fs1 (N,)``, ``A (N, N)``, ``bc (NB,)``.
4. ``quad(qc, a, b) -> (N, M)``: ``Q(a, b)`` for a batch of M samples, ``a, b`` of shape
   ``(N, M)``.  ``quad_jac(qc, u) -> (N, N, M)``: the Jacobian of ``Q(u, u)`` with
   respect to ``u`` at each sample.
5. The original first-order ODE ``x' = f(x, t; p)``: ``rhs(t, x, p)`` and its exact
   Jacobian ``jac(t, x, p)``; ``x`` of shape ``(n,)`` or ``(n, M)`` (then ``t`` scalar or
   ``(M,)``) giving ``(n,)``/``(n, M)`` and ``(n, n)``/``(n, n, M)``.
6. ``aux(x, t, p) -> u``: all N variables computed from the states by the auxiliaries'
   definitions (principal branches), same batching as ``rhs``.
7. ``POINT_ROWS`` (tuple of int: the derivative-bilinear rows whose mean / one
   collocation equation is replaced by a point condition), ``point(u0, p) -> (len(POINT_ROWS),)``
   and ``point_jac(u0, p) -> (len(POINT_ROWS), N)``.  Empty for purely algebraic recasts.
   Each point condition reads ``u_r(0) - f(pc * u_v(0))`` with ``f = POINT_FUNCS[k]`` (exp,
   tanh, atan, sin, cos, log), ``v = POINT_ARGS[k]`` and ``pc = operators(p)["pc"][k]``,
   which is what the ANM's power-series recurrences need.
8. Contacts (for motion classification): ``CONTACTS`` (tuple of str),
   ``contact_velocity(x, t, p) -> (n_contacts, ...)`` and ``contact_law(vr, p)`` giving
   the friction coefficient of each contact at relative velocities ``vr``.
9. Optional (generated modules have it): ``JQ_K, JQ_COL`` and ``quad_jac_sparse(qc, u) ->
   (len(JQ_K), M)``, the structurally nonzero entries of ``quad_jac`` only.
10. Optional ``SAMPLED`` (bool, default False): the module carries only the original ODE
   (a non-analytic law, DESIGN §5.4); ``VARIABLES == STATES`` and the quadratic operators
   are zero and must not be used: only AFT harmonic balance and shooting apply.
11. Optional ``dfdlam(t, x, p)`` (generated modules have it, or ``dfdlam = None`` where the
   derivative is not a plain function): the exact derivative of ``rhs`` in the continuation
   parameter, same batching as ``rhs``.  Without it the runtime uses central differences.
12. Optional (generated modules of recast models have it): ``NAUX`` (int) and
   ``taylor(t, X, LAM, A, k, p) -> (A_k, F_k)``, the pointwise recast's Taylor kernel
   (DESIGN §5.0): given the path-series coefficients ``X`` (k+1, n, M) of the states at
   M points (times ``t``, scalar or (M,), held fixed along the path), ``LAM`` (k+1,) of
   ``lam`` and ``A`` (k, NAUX, M) of the auxiliaries up to order k-1, the order-k
   coefficients of the auxiliaries (NAUX, M) and of ``f`` (n, M).  ``F_k`` is affine in
   ``X[k]`` with slope ``jac`` at ``X[0]`` (k >= 1).  Compiled modules also export the C
   function as ``TAYLOR_CAPSULE`` (:meth:`Model.taylor_kernel`).  Optional ``TAYLOR_TIME``
   (``"time"``, the default, or ``"phase"``): with ``"phase"`` (generated when ``lam`` is the
   forcing frequency ``w``) the kernel's ``t`` is the forcing phase ``theta = w t``, held fixed
   along the path, and the kernel expands ``f(x, theta / lam; p)`` (codegen/taylor.py).
13. Optional ``KINEMATIC`` (tuple of ``(i, j)``, default ``()``; generated modules have it): the
   state equations ``x_i' = x_j`` exactly (``j`` not itself kinematic, each ``j`` once), which
   the AFT lets the engines eliminate before their LU (:attr:`Model.kinematic`).
14. Optional ``CONTACT_LAWS_USE_LAM`` (bool, default True; generated modules have it): whether a
   contact's friction law involves the continuation parameter (:attr:`Model.contact_laws_use_lam`).
15. Optional ``structure_for(p)`` and ``STRUCTURE`` (structural models, DESIGN §6;
   ``model/_structure.py``): the :class:`~frictionkit.runtime.model._structure.StructuralSystem`
   of a linear part with contacts at the parameter values ``p`` (``STRUCTURE``: the same for
   every ``p``, a structure given numerically), whose module is built by ``structural_module``
   (states: the linear part's, then the own states; no quadratic recast: ``operators``/``quad``
   raise).  The condensed harmonic balance reads it (:attr:`Model.structure`).
16. Optional ``contact_force(x, t, p) -> (n_contacts, n, ...)`` (generated modules have it):
   the force of each contact in the right-hand side of each state's equation (``mass x' =
   rhs``), NaN for a contact whose equations are not linear in its friction coefficient
   (codegen ``recast._contact_forces``); a structural model's port module has it for the
   port's states (the force slots: the force on each loaded point).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import importlib
import importlib.util
from pathlib import Path
import sys
from types import ModuleType

import numpy as np

from frictionkit.modelspec.errors import ModelSpecError

from ..errors import InputError, ModelInterfaceError

#: Names every model module must define (contract items 1-8).
REQUIRED_NAMES = (
    "MODEL_NAME", "MODEL_HASH", "GENERATOR_VERSION", "BACKEND", "CONTINUATION",
    "PARAMETERS", "DEFAULTS", "STATES", "VARIABLES", "KINDS", "FORCING_FREQUENCY",
    "VALIDITY", "DEFINITIONS", "Q_K", "Q_I", "Q_J", "B_K", "B_J", "B_L",
    "operators", "quad", "quad_jac", "rhs", "jac", "aux",
    "POINT_ROWS", "point", "point_jac", "CONTACTS", "contact_velocity", "contact_law",
)

KINDS = ("differential", "algebraic", "derivative_bilinear")


class _Constant:
    """A read-only attribute of :class:`Model`: the module constant ``attr``, converted."""

    def __init__(self, attr, convert=None, doc=""):
        self.attr, self.convert, self.__doc__ = attr, convert, doc

    def __get__(self, model, owner=None):
        if model is None:
            return self
        value = getattr(model.module, self.attr)
        return value if self.convert is None else self.convert(value)


@dataclass
class Model:
    """A model module seen through the generated-model interface, with parameter values.

    Parameters
    ----------
    module : module
        Any module honouring the contract in this file's docstring.
    params : dict, optional
        Parameter values overriding the module's defaults.

    Notes
    -----
    ``Model`` is cheap to copy with :meth:`with_params`; it caches nothing that depends on
    the continuation parameter, because the runtime changes ``lam`` at every step.
    """

    module: ModuleType
    params: dict = field(default_factory=dict)
    # the parameter vector of ``params`` (param_vector runs a few thousand times per branch),
    # with the values it was made from: rebuilt if ``params`` is changed in place
    _vector: tuple = field(default=(None, None), init=False, repr=False, compare=False)

    def __post_init__(self):
        missing = [n for n in REQUIRED_NAMES if not hasattr(self.module, n)]
        if missing:
            raise ModelInterfaceError(
                f"model module {self.module.__name__!r} does not honour the generated-model "
                f"interface: missing {', '.join(missing)} (see frictionkit.runtime.model._interface)")
        bad = [k for k in self.module.KINDS if k not in KINDS]
        if bad:
            raise ModelInterfaceError(f"model {self.name!r}: unknown row kinds {bad}; expected {KINDS}")
        if tuple(self.module.VARIABLES[: self.n]) != tuple(self.module.STATES):
            raise ModelInterfaceError(f"model {self.name!r}: VARIABLES must start with STATES")
        unknown = [k for k in self.params if k not in self.module.PARAMETERS]
        if unknown:
            raise InputError(
                f"unknown parameter(s) {', '.join(map(str, unknown))} for model {self.name!r}; "
                f"its parameters are {', '.join(self.module.PARAMETERS)}")
        self.params = {k: float(v) for k, v in self.params.items()}
        self.check_parameters()

    def check_parameters(self):
        """Refuse parameter values outside the model's domain, naming the parameter.

        The generated module's ``check_parameters`` (optional for hand-written modules)
        checks its ``PARAMETER_CONDITIONS``: finite values, the domains declared with
        ``ModelSpec.parameter(..., positive=True, bounds=...)``, non-zero masses and
        denominators, non-negative root arguments of parameter-only sub-expressions.  Called
        whenever a :class:`Model` is made (``load_model``, :meth:`with_params`).

        Raises
        ------
        InputError
            Naming the parameter, its value and the condition it breaks.
        """
        check = getattr(self.module, "check_parameters", None)
        if check is None:
            return
        try:
            check(self.param_vector())
        except ModelSpecError as exc:
            raise InputError(str(exc)) from None

    # -- metadata: module constants, read through the one door ---------------------
    name = _Constant("MODEL_NAME", None, "The model's name.")
    continuation = _Constant("CONTINUATION", None, "Name of the continuation parameter ``lam``.")
    model_hash = _Constant("MODEL_HASH", str, "Hex hash of the canonical recast (contract item 1).")
    generator_version = _Constant("GENERATOR_VERSION", str, "Version of the generator that emitted the module.")
    backend = _Constant("BACKEND", str, '``"numpy"``, ``"cython"`` or ``"hand-written"``.')
    parameters = _Constant("PARAMETERS", tuple, "Parameter names, as ordered in :meth:`param_vector`.")
    states = _Constant("STATES", tuple, "Names of the n original first-order states.")
    variables = _Constant("VARIABLES", tuple, "The N variables of the quadratic system, ``states`` first.")
    kinds = _Constant("KINDS", tuple, 'Row kinds: "differential", "algebraic", "derivative_bilinear".')
    forcing_frequency = _Constant("FORCING_FREQUENCY", None, "The forcing-frequency parameter; None if autonomous.")
    validity = _Constant("VALIDITY", tuple, 'Recast validity ``(variable, "positive"|"nonzero", text)``.')
    contacts = _Constant("CONTACTS", tuple, "Names of the friction contacts (contract item 8).")
    point_rows = _Constant("POINT_ROWS", tuple, "Rows replaced by a point condition (contract item 7).")
    point_funcs = _Constant("POINT_FUNCS", tuple, "Function (exp, tanh, ...) of each point condition (item 7).")
    point_args = _Constant("POINT_ARGS", None, "Argument of each point condition's function (item 7).")

    @property
    def n(self) -> int:
        """Number of original first-order states."""
        return len(self.module.STATES)

    @property
    def N(self) -> int:
        """Number of variables of the quadratic system (states + auxiliaries)."""
        return len(self.module.VARIABLES)


    @property
    def units(self) -> dict:
        """Units by name: every parameter (``UNITS``, declared with ``parameter(..., unit=)``),
        every state (optional ``STATE_UNITS``) and the time ``"t"``; ``""`` is dimensionless.

        The time unit is the module's optional ``TIME_UNIT``; without it, ``"s"`` when some
        parameter is declared per second (``rad/s``, ``m/s``, ...), else dimensionless ``""``.
        """
        mod = self.module
        out = dict(zip(self.parameters, getattr(mod, "UNITS", ("",) * len(self.parameters))))
        out.update(zip(self.states, getattr(mod, "STATE_UNITS", ("",) * self.n)))
        per_second = any(u.replace(" ", "").endswith("/s") for u in out.values())
        out["t"] = str(getattr(mod, "TIME_UNIT", "s" if per_second else ""))
        return {k: str(v or "") for k, v in out.items()}


    @property
    def quadratic_terms(self) -> tuple:
        """``(Q_K, Q_I, Q_J)``: sparse structure of the bilinear terms (contract item 2)."""
        mod = self.module
        return mod.Q_K, mod.Q_I, mod.Q_J

    @property
    def derivative_bilinear_terms(self) -> tuple:
        """``(B_K, B_J, B_L)``: sparse structure of the derivative-bilinear terms (item 2)."""
        mod = self.module
        return mod.B_K, mod.B_J, mod.B_L


    @property
    def sampled(self) -> bool:
        """True for models with a non-analytic law (no quadratic recast; contract item 9)."""
        return bool(getattr(self.module, "SAMPLED", False))

    @property
    def forced(self) -> bool:
        return self.module.FORCING_FREQUENCY is not None

    @property
    def has_taylor(self) -> bool:
        """True when the module has the pointwise Taylor kernel (contract item 12)."""
        return hasattr(self.module, "taylor")

    @property
    def taylor_in_phase(self) -> bool:
        """True when the Taylor kernel's ``t`` is the forcing phase ``w t`` (contract item 12,
        ``TAYLOR_TIME = "phase"``): its series then hold the phase fixed along a path on which
        the continued forcing frequency moves, as a harmonic balance's samples do."""
        return self.has_taylor and getattr(self.module, "TAYLOR_TIME", "time") == "phase"

    @property
    def exact_dfdlam(self) -> bool:
        """True when :meth:`dfdlam` is exact (the module exports ``dfdlam``), not a difference."""
        return hasattr(self.module, "dfdlam")

    @property
    def kinematic(self) -> tuple:
        """Pairs ``(i, j)`` of the kinematic state equations ``x_i' = x_j`` (contract item 13;
        ``()`` for modules without ``KINEMATIC``)."""
        return tuple((int(i), int(j)) for i, j in getattr(self.module, "KINEMATIC", ()))

    @property
    def contact_laws_use_lam(self) -> bool:
        """Whether a contact's friction law involves the continuation parameter (contract item
        14; True, the safe answer, for modules without ``CONTACT_LAWS_USE_LAM``)."""
        return bool(getattr(self.module, "CONTACT_LAWS_USE_LAM", True))

    @property
    def structure(self):
        """The :class:`~frictionkit.runtime.model._structure.StructuralSystem` of a structural
        model at this model's parameter values (contract item 15), or None."""
        get = getattr(self.module, "structure_for", None)
        if get is not None:
            return get(self.param_vector())
        return getattr(self.module, "STRUCTURE", None)

    @property
    def naux(self) -> int:
        """Number of pointwise auxiliaries of the Taylor kernel (``NAUX``; 0 without one)."""
        return int(getattr(self.module, "NAUX", 0))

    @property
    def lam_index(self) -> int:
        return self.module.PARAMETERS.index(self.module.CONTINUATION)

    def with_structure(self, system) -> "Model":
        """A copy whose linear part is ``system`` (a
        :class:`~frictionkit.runtime.model._structure.StructuralSystem` with the same ports,
        contract item 15), e.g. other modal damping ratios."""
        mod = ModuleType(f"{self.module.__name__}_with_structure")
        mod.__dict__.update(self.module.__dict__)
        mod.STRUCTURE = system
        mod.structure_for = lambda p: system
        return Model(mod, dict(self.params))

    def with_params(self, **values) -> "Model":
        """Return a copy with some parameter values changed."""
        merged = dict(self.params)
        merged.update(values)
        return Model(self.module, merged)

    def param_vector(self, lam: float | None = None) -> np.ndarray:
        """All parameter values in ``PARAMETERS`` order; ``lam`` overrides the continuation one."""
        made_from, base = self._vector
        if base is None or made_from != self.params:
            base = np.array([self.params.get(k, d) for k, d in zip(self.module.PARAMETERS, self.module.DEFAULTS)],
                            dtype=float)
            self._vector = (dict(self.params), base)
        p = base.copy()
        if lam is not None:
            p[self.lam_index] = lam
        return p

    def value(self, name: str) -> float:
        """Current value of one parameter."""
        if name not in self.module.PARAMETERS:
            raise InputError(f"unknown parameter {name!r} for model {self.name!r}; "
                             f"its parameters are {', '.join(self.module.PARAMETERS)}")
        return float(self.param_vector()[self.module.PARAMETERS.index(name)])

    # -- evaluation (thin pass-through so the runtime never touches the module) -----------
    def operators(self, lam: float | None = None) -> dict:
        return self.module.operators(self.param_vector(lam))

    def quad(self, qc, a, b):
        return self.module.quad(qc, np.ascontiguousarray(a, dtype=float), np.ascontiguousarray(b, dtype=float))

    def quad_jac(self, qc, u):
        return self.module.quad_jac(qc, np.ascontiguousarray(u, dtype=float))

    def rhs(self, t, x, lam: float | None = None, params=None):
        """Right-hand side of the original ODE; ``params`` (all parameter values in
        ``PARAMETERS`` order) overrides the model's values and ``lam``."""
        p = self.param_vector(lam) if params is None else np.asarray(params, dtype=float)
        return self.module.rhs(t, np.asarray(x, dtype=float), p)

    def jac(self, t, x, lam: float | None = None, params=None):
        """``df/dx`` of the original ODE (``params`` as in :meth:`rhs`)."""
        p = self.param_vector(lam) if params is None else np.asarray(params, dtype=float)
        return self.module.jac(t, np.asarray(x, dtype=float), p)

    def dfdlam(self, t, x, lam: float | None = None, params=None):
        """``df/dlam`` of the original ODE (``params`` as in :meth:`rhs`; contract item 11).

        Exact where the module provides it; otherwise a central difference with the step
        ``eps**(1/3) max(1, |lam|)``.  (The shooting Jacobian's ``lam`` column: a friction law
        ``atan(eps v)`` with ``eps = 1e5`` (seed 004 eq. 7) has width 1e-5, and the
        difference was 3-8 % wrong there, which made Newton converge only linearly.)
        """
        p = self.param_vector(lam) if params is None else np.asarray(params, dtype=float)
        x = np.asarray(x, dtype=float)
        exact = getattr(self.module, "dfdlam", None)
        if exact is not None:
            return np.asarray(exact(t, x, p), dtype=float)
        k = self.lam_index
        h = np.finfo(float).eps ** (1 / 3) * max(1.0, abs(p[k]))
        pp, pm = p.copy(), p.copy()
        pp[k] += h
        pm[k] -= h
        return (np.asarray(self.module.rhs(t, x, pp)) - np.asarray(self.module.rhs(t, x, pm))) / (2 * h)

    def taylor(self, t, X, LAM, A, k: int, params=None):
        """Order-``k`` path-series coefficients of the pointwise auxiliaries and of ``f``
        (contract item 12): ``X`` (k+1, n, M), ``LAM`` (k+1,), ``A`` (k, NAUX, M) ->
        ``(A_k, F_k)`` of shapes (NAUX, M), (n, M); ``params`` as in :meth:`rhs`."""
        if not hasattr(self.module, "taylor"):
            raise ModelInterfaceError(f"model {self.name!r} has no Taylor kernel (a sampled model, or "
                                      f"generated before frictionkit had one): regenerate it with "
                                      f"`frictionkit codegen`")
        p = self.param_vector() if params is None else np.asarray(params, dtype=float)
        return self.module.taylor(t, np.asarray(X, dtype=float), np.asarray(LAM, dtype=float),
                                  np.asarray(A, dtype=float), int(k), p)

    def taylor_kernel(self):
        """The compiled Taylor kernel as a ``PyCapsule`` named ``"frictionkit.fk_taylor.v1"``
        (the C function behind :meth:`taylor`, for compiled callers: the AFT's per-order ANM
        loop, ``discretizations/_pointwise_loop.pyx``), or None: NumPy-backend, hand-written
        and older generated modules have none."""
        return getattr(self.module, "TAYLOR_CAPSULE", None)

    def aux(self, x, t=0.0, lam: float | None = None):
        return self.module.aux(np.asarray(x, dtype=float), t, self.param_vector(lam))

    def point_conditions(self) -> "PointConditions":
        """The derivative-bilinear rows and point conditions, checked (contract items 2, 3, 7).

        Raises
        ------
        ModelInterfaceError
            A derivative-bilinear row without its point condition, or the reverse.
        InputError
            The continuation parameter enters ``A``, ``bc`` or ``pc`` (the recast keeps it
            out of these rows: it becomes a constant-in-time variable otherwise).
        """
        dbil = np.array([i for i, k in enumerate(self.kinds) if k == "derivative_bilinear"], dtype=int)
        rows = np.array(self.point_rows, dtype=int)
        if not (dbil.size or rows.size):
            return PointConditions(dbil, rows)
        if set(dbil.tolist()) != set(rows.tolist()):
            raise ModelInterfaceError(
                f"model {self.name!r}: every derivative-bilinear row needs a point condition "
                f"(rows {dbil.tolist()} vs POINT_ROWS {rows.tolist()})")
        ops = self.operators()
        lam0 = self.value(self.continuation)
        other = self.operators(lam0 + 1.0 + abs(lam0))
        for key in ("A", "bc", "pc"):
            if not np.array_equal(np.asarray(other[key], dtype=float), np.asarray(ops[key], dtype=float)):
                raise InputError(
                    f"model {self.name!r}: the continuation parameter {self.continuation!r} enters a "
                    f"derivative-bilinear row or point condition (operator {key!r}); regenerate the "
                    "model with a current frictionkit codegen, which recasts it as a constant-in-time variable")
        B_K, B_J, B_L = (np.asarray(a, dtype=int) for a in self.derivative_bilinear_terms)
        return PointConditions(dbil, rows, A=np.asarray(ops["A"], dtype=float), bc=np.asarray(ops["bc"], dtype=float),
                               pc=np.asarray(ops["pc"], dtype=float), B_K=B_K, B_J=B_J, B_L=B_L,
                               funcs=tuple(self.point_funcs), args=np.asarray(self.point_args, dtype=int))

    def point(self, u0, params):
        """Point conditions at ``u(0) = u0`` (contract item 7); ``params`` all parameter values."""
        return self.module.point(u0, params)

    def point_jac(self, u0, params):
        """``d point / d u0``, shape (len(POINT_ROWS), N)."""
        return self.module.point_jac(u0, params)

    def contact_velocity(self, x, t, params):
        """Relative velocity of each contact (contract item 8), shape (n_contacts, ...)."""
        return self.module.contact_velocity(x, t, params)

    def contact_law(self, vr, params):
        """Friction coefficient of each contact at relative velocities ``vr``."""
        return self.module.contact_law(vr, params)

    def contact_force(self, x, t, params):
        """Force of each contact in each state's equation (contract item 16), shape
        (n_contacts, n, ...); None for a module without it."""
        f = getattr(self.module, "contact_force", None)
        return None if f is None else np.asarray(f(x, t, params), dtype=float)

    def validity_report(self, u: np.ndarray) -> list[dict]:
        """Check the validity conditions of the recast on samples ``u`` of shape (N, M).

        Returns one dict per condition with the worst value, its size relative to the
        variable's scale (max |u_i|), and whether it holds (DESIGN §6: a Gibbs dip of a
        truncated sqrt auxiliary is reported, not fatal).
        """
        out = []
        names = self.module.VARIABLES
        for var, cond, text in self.module.VALIDITY:
            row = np.asarray(u)[names.index(var)]
            scale = float(np.max(np.abs(row))) or 1.0
            if cond == "positive":
                worst = float(np.min(row))
                ok = worst > 0
            else:
                worst = float(np.min(np.abs(row)))
                ok = worst > 0
            out.append(dict(variable=var, condition=cond, text=text, worst=worst,
                            relative=worst / scale, ok=ok))
        return out


@dataclass(frozen=True)
class PointConditions:
    """Derivative-bilinear rows ``0 = (A u')_i + sum_t bc_t u_{B_J[t]} u'_{B_L[t]}`` and their
    point conditions ``u_r(0) - f(pc u_v(0))`` (contract items 2, 3 and 7), from
    :meth:`Model.point_conditions`; the arrays after ``point_rows`` are None without them."""

    dbil_rows: np.ndarray
    point_rows: np.ndarray
    A: np.ndarray | None = None
    bc: np.ndarray | None = None
    pc: np.ndarray | None = None
    B_K: np.ndarray | None = None
    B_J: np.ndarray | None = None
    B_L: np.ndarray | None = None
    funcs: tuple = ()
    args: np.ndarray | None = None

    @property
    def present(self) -> bool:
        return bool(self.dbil_rows.size or self.point_rows.size)


def load_module_from_path(path: str | Path, name: str | None = None) -> ModuleType:
    """Import a model module (or model-spec file) from a file path without touching sys.path."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"model file {str(path)!r} does not exist")
    name = name or f"_frictionkit_user_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
