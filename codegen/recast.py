"""Automatic quadratic recast (DESIGN §2): pure sympy, output a frozen description.

The recast rewrites a validated :class:`~frictionkit.modelspec.ModelSpec` as rows

    mass_i u_i' = c0_i + lam c1_i + (L0 u)_i + lam (L1 u)_i + Q_i(u, u) + forcing_i(t)

(algebraic rows have ``mass_i = 0``) by introducing auxiliary variables:

=========================  ==================================================  =============
construct                  auxiliary ``r`` and its row                         validity
=========================  ==================================================  =============
multi-term factor ``A``    ``0 = A - r`` (affine or quadratic ``A``)           --
of a product or power
``x**k``, k >= 2           binary splitting ``x**k = x**(k//2) x**(k-k//2)``,  --
                           each partial power shared
``N / D``                  ``0 = N - r d`` with ``d`` the (aux of) ``D``       ``d != 0``
``1 / x**k``               ``0 = 1 - r d``, ``d`` the aux of ``x**k``          ``d != 0``
``sqrt(A)``                ``0 = A - r*r``                                     ``r > 0``
``A**(p/q)``               ``0 = A**p - r**q`` recast further                  ``r > 0`` (q even)
=========================  ==================================================  =============

Only sub-expressions that depend on the variables or on ``lam`` are recast; parameter-only
sub-expressions stay symbolic coefficients, so one generated module serves every value
of the other parameters.  Identical sub-expressions get one auxiliary (a cache keyed by
the sub-expression).  If ``lam`` enters non-linearly (a ``lam**2`` term would appear), it
is replaced by a constant-in-time variable with the row ``0 = lam - <name>_c`` and the
recast is redone.  For the seed-000 belt model this produces exactly the auxiliaries
``Vr, R, S, mu`` of seed 000 eqs. (21)-(25) (``mu`` up to its sign).

Transcendental functions (exp, tanh, atan, sin, cos, log; sinh, cosh, sech, tan through
them) become derivative-bilinear rows ``a u' + b u u' = 0`` with a point condition
``r(0) - f(c v(0)) = 0`` (see :meth:`_Recaster._function`; Karkar, Cochelin and Vergez 2013).
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, replace

import sympy as sp
from sympy.printing.repr import ReprPrinter

from frictionkit.codegen._progress import report
from frictionkit.codegen._terms import jacobian, poly_terms, total_degree
from frictionkit.modelspec import ModelSpec
from frictionkit.modelspec.errors import DuplicateNameError, ModelSpecError

GENERATOR_VERSION = "0.1.0"


class RecastError(ModelSpecError):
    """The model cannot be recast to quadratic form (names the equation and construct)."""


class _MemoReprPrinter(ReprPrinter):
    """``sp.srepr`` (the same text) with each distinct sub-expression printed once: a large
    model repeats its coefficients (``-k/m`` on every link of a chain) and srepr sorts the
    factors and terms of every product and sum it meets (issue 28)."""

    def __init__(self):
        super().__init__()
        self._memo: dict = {}

    def _print(self, expr, **kwargs):
        if not isinstance(expr, sp.Basic) or kwargs:
            return super()._print(expr, **kwargs)
        text = self._memo.get(expr)
        if text is None:
            text = self._memo[expr] = super()._print(expr)
        return text


@dataclass(frozen=True)
class Aux:
    """An auxiliary variable: its symbol, kind, definition (in states) and validity."""

    symbol: sp.Symbol
    kind: str                    # "factor", "power", "ratio", "sqrt", "root", "lam"
    definition: sp.Expr          # value in terms of the states, parameters and lam
    row: sp.Expr                 # residual of its row: polynomial of degree <= 2 (algebraic), or
                                 # sum of a*u_l' + b*u_j*u_l' in derivative symbols (derivative-bilinear)
    validity: tuple = ()         # ((symbol name, "positive" | "nonzero", text), ...)
    point: sp.Expr | None = None  # point condition at t = 0 (derivative-bilinear rows only)

    @property
    def derivative_bilinear(self) -> bool:
        return self.point is not None


@dataclass(frozen=True)
class RecastSystem:
    """Frozen, language-neutral description of a recast model; feeds every backend.

    All coefficient expressions are sympy expressions of the parameters other than the
    continuation parameter.  ``rows`` holds each row's polynomial right-hand side for
    readable output; the operator entries are what the printers emit.
    """

    name: str
    description: str
    continuation: str
    parameters: tuple            # all parameter symbols, lam included
    defaults: tuple
    units: tuple
    states: tuple                # original first-order states (symbols)
    variables: tuple             # states, algebraic variables, auxiliaries (symbols)
    kinds: tuple
    mass: tuple                  # per row
    c0: tuple                    # per row
    c1: tuple
    L0: tuple                    # ((row, col, coef), ...)
    L1: tuple
    Q: tuple                     # ((row, i, j, coef), ...)
    forcing: tuple               # (fc0, fs0, fc1, fs1), each a per-row tuple
    forcing_frequency: str | None
    A: tuple                     # derivative-bilinear: ((row, col, coef), ...)   (empty for now)
    B: tuple                     # ((row, j, l, coef), ...)                         (empty for now)
    point_rows: tuple
    point_exprs: tuple
    definitions: tuple           # ((aux symbol, definition expr in states), ...)
    validity: tuple              # ((variable name, condition, text), ...)
    rows: tuple                  # readable polynomial right-hand side of each row
    ode_rhs: tuple               # original first-order ODE f(x, t; p)
    ode_jac: tuple               # exact df/dx, row-major tuple of tuples
    contacts: tuple              # ((name, relative velocity expr, coefficient expr of symbol _vr or None,
                                 #   force in each state's equation or None), ...)
    lam_as_variable: bool
    time: sp.Symbol
    sampled: bool = False        # no recast: only the original ODE (non-analytic law, DESIGN §5.4)
    parameter_conditions: tuple = ()  # ((where, kind, parameter-only expr), ...) checked at load
    state_units: tuple = ()      # unit text of each original state ("" dimensionless)
    time_unit: str = ""          # unit of the time t ("" dimensionless)

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    def canonical(self) -> str:
        """Canonical text of everything that defines the generated code."""
        parts = [GENERATOR_VERSION, self.name, self.continuation, str(self.forcing_frequency),
                 repr([p.name for p in self.parameters]), repr(self.defaults),
                 repr([v.name for v in self.variables]), repr(self.kinds)]
        printer = _MemoReprPrinter()
        for item in (self.mass, self.c0, self.c1, self.L0, self.L1, self.Q, self.forcing, self.A,
                     self.B, self.point_rows, self.point_exprs, self.definitions, self.validity,
                     self.ode_rhs, self.ode_jac, self.contacts, self.parameter_conditions):
            parts.append(printer.doprint(item) if not isinstance(item, str) else item)
        return "\n".join(parts)

    @functools.cached_property
    def model_hash(self) -> str:
        # computed once per system: the srepr of a large model's operators and dense Jacobian
        # takes seconds, and every rendering asks for the hash (issue 28)
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:16]

    def explain(self, order=None) -> str:
        """Readable recast system (like seed 000 eq. 25) with the validity conditions.

        ``order``: sympy's printing order (``"none"``: terms as stored, not sorted; the
        generator's choice for large systems, ``printers.print_order``)."""
        lam = sp.Symbol("lam")
        psym = self.parameters[[p.name for p in self.parameters].index(self.continuation)]
        n_aux = self.n_vars - self.n_states
        if self.sampled:
            lines = [f"model {self.name!r}: {self.description}",
                     f"continuation parameter lam = {self.continuation}",
                     "SAMPLED PATH: the model has a non-analytic law, so no quadratic recast is made;",
                     "it runs with AFT harmonic balance or shooting on the original ODE (no ANM).", "",
                     "original ODE x' = f(x, t; p):"]
            lines += [f"  {x}' = {sp.sstr(f, order=order)}" for x, f in zip(self.states, self.ode_rhs)]
            return "\n".join(lines)
        lines = [f"model {self.name!r}: {self.description}",
                 f"continuation parameter lam = {self.continuation}"
                 + ("  (enters non-linearly: recast as a constant-in-time variable)" if self.lam_as_variable else ""),
                 f"{self.n_vars} variables ({self.n_states} states, {n_aux} auxiliaries), "
                 f"{len(self.Q)} quadratic terms", "", "auxiliaries:"]
        for sym, d in self.definitions:
            lines.append(f"  {sym} = {sp.sstr(d, order=order)}")
        lines += ["", "quadratic system (m u' = c0 + lam c1 + L0 u + lam L1 u + Q(u, u) + forcing):"]
        for i, (v, kind) in enumerate(zip(self.variables, self.kinds)):
            rhs = sp.sstr(self.rows[i].xreplace({psym: lam}), order=order)
            if kind == "differential":
                m = self.mass[i]
                lhs = f"{v}'" if m == 1 else f"({sp.sstr(m, order=order)})*{v}'"
            else:
                lhs = "0"
            tag = "   [derivative-bilinear]" if kind == "derivative_bilinear" else ""
            lines.append(f"  ({i + 1}) {lhs} = {rhs}{tag}")
        if self.point_rows:
            lines += ["", "point conditions at t = 0 (replace the mean of each derivative-bilinear row):"]
            lines += [f"  row ({r + 1}): 0 = {sp.sstr(e, order=order)}" for r, e in zip(self.point_rows, self.point_exprs)]
        lines += ["", "validity conditions (checked on every solution):"]
        lines += [f"  {v} {'> 0' if c == 'positive' else '!= 0'}   ({t})" for v, c, t in self.validity] or ["  none"]
        return "\n".join(lines)


_TRANSCENDENTAL = (sp.exp, sp.log, sp.tanh, sp.atan, sp.sin, sp.cos, sp.tan, sp.sinh, sp.cosh,
                   sp.sech, sp.csch, sp.coth, sp.asin, sp.acos, sp.asinh, sp.acosh, sp.atanh, sp.erf)


class _Recaster:
    """Polynomialization with auxiliaries, for one choice of ``lam`` handling."""

    def __init__(self, spec: ModelSpec, lam: sp.Symbol, lam_var: sp.Symbol | None):
        self.spec = spec
        self.lam = lam
        self.lam_var = lam_var
        self.base_vars = list(spec.states) + list(spec.algebraic)
        self.auxes: list[Aux] = []
        self.cache: dict = {}
        self.products: dict = {}  # variable part of a product -> its recast (see _mul_expr)
        self.taken = {s.name for s in spec.parameter_symbols} | {s.name for s in self.base_vars}
        self.taken |= set(spec.definitions)
        self.next_name = None  # name for the next new auxiliary (a user definition)
        self.state_validity: set = set()  # denominators that are original variables
        self.where = ""
        self.counters: dict = {}
        self._gens_key = self._defs_key = None
        if lam_var is not None:
            self.auxes.append(Aux(lam_var, "lam", lam, lam - lam_var))

    # -- bookkeeping ----------------------------------------------------------------
    def _sub(self, expr):
        return expr.xreplace({self.lam: self.lam_var}) if self.lam_var is not None else expr

    @property
    def gens(self):
        """The generators: original variables, auxiliaries so far, and ``lam`` unless it is a
        variable.  Rebuilt only when an auxiliary was added or renamed (the list and its set
        were rebuilt on every call, quadratic in the number of auxiliaries: issue 28)."""
        key = len(self.auxes)       # auxiliaries are only appended; rename() resets the key
        if self._gens_key != key:
            self._gens = (self.base_vars + [a.symbol for a in self.auxes]
                          + ([self.lam] if self.lam_var is None else []))
            self._gens_set = frozenset(self._gens)
            self._gens_key = key
        return self._gens

    @property
    def gens_set(self) -> frozenset:
        self.gens
        return self._gens_set

    def _depends(self, expr) -> bool:
        return not self.gens_set.isdisjoint(expr.free_symbols)

    def _name(self, kind: str, key) -> sp.Symbol:
        name, self.next_name = self.next_name, None
        if name is None:
            base = {"factor": "a", "power": "pw", "ratio": "r", "sqrt": "R", "root": "rt",
                    "inverse": "inv", "exp": "e", "tanh": "th", "atan": "at", "sin": "sn", "cos": "cs",
                    "log": "lg"}[kind]
            k = self.counters.get(base, 0) + 1
            while f"{base}{k}" in self.taken:
                k += 1
            self.counters[base] = k
            name = f"{base}{k}"
        self.taken.add(name)
        return sp.Symbol(name, real=True)

    def rename(self, old: sp.Symbol, name: str) -> sp.Symbol:
        """Give a freshly created auxiliary the name of the user definition it equals."""
        new = sp.Symbol(name, real=True)
        self.taken.add(name)
        for k, a in enumerate(self.auxes):
            vals = tuple((name if v == old.name else v, c, t) for v, c, t in a.validity)
            self.auxes[k] = replace(a, symbol=new if a.symbol == old else a.symbol,
                                    row=a.row.xreplace({old: new, self.dot(old): self.dot(new)}), validity=vals,
                                    point=None if a.point is None else a.point.xreplace({old: new}))
        self.cache = {k: (new if v == old else v) for k, v in self.cache.items()}
        self.products.clear()
        self._gens_key = self._defs_key = None
        return new

    def define(self, name: str, expr):
        """Recast a user definition that depends on the variables as one unit.

        The definition is brought to a single fraction (``sp.together``) so that a friction
        law written as one fraction gets one ratio auxiliary, named after the definition
        (seed 000: ``mu``); a multi-term polynomial definition becomes a ``factor``
        auxiliary with the definition's name (seed 000: ``Vr``).  Returns the value to
        substitute for the definition's symbol (a monomial of one auxiliary).
        """
        before = {a.symbol for a in self.auxes}
        # exact=True: exp(-a) stays in the numerator (one exp auxiliary, not 1/exp(a), which
        # overflows and is badly conditioned for large a)
        num, den = sp.fraction(sp.together(expr), exact=True)
        # distribute products over sums at the top level only: keep powers such as (v - vb)**2
        # and function arguments such as exp(-(v - vb)**2) intact, so that they get one
        # auxiliary each instead of being expanded (which could also make lam enter non-linearly)
        num, den = sp.expand_mul(num, deep=False), sp.expand_mul(den, deep=False)
        single = sp.Mul(num, sp.Pow(den, -1, evaluate=False), evaluate=False) if self._depends(den) else expr
        P = sp.expand(self.poly(single))
        terms = sp.Add.make_args(P)
        if len(terms) == 1:
            coef, rest = terms[0].as_independent(*self.gens, as_Add=False)
            if rest.is_Symbol:
                if rest not in before and rest != self.lam and rest not in set(self.base_vars):
                    return coef * self.rename(rest, name)
                return P
        self.next_name = name
        out = self.factor(P)
        self.next_name = None
        return out

    def _new_aux(self, kind, key, definition, row_of, validity=(), point_of=None):
        """Create (or reuse) the auxiliary for ``key``; ``row_of(r)`` builds its row.

        With ``point_of``, the row is derivative-bilinear and ``point_of(r)`` its point
        condition at t = 0 (Karkar, Cochelin and Vergez 2013).
        """
        ck = (kind, key)
        if ck in self.cache:
            return self.cache[ck]
        sym = self._name(kind, key)
        self.cache[ck] = sym
        vals = tuple((sym.name, cond, text) for cond, text in validity)
        # register first, so that the row can already treat ``sym`` as a variable
        k = len(self.auxes)
        placeholder = None if point_of is None else sp.Integer(0)
        self.auxes.append(Aux(sym, kind, definition, sp.Integer(0), vals, placeholder))
        row = sp.expand(row_of(sym))
        self.auxes[k] = Aux(sym, kind, definition, row, vals, None if point_of is None else point_of(sym))
        return sym

    def _degree(self, poly_expr) -> int:
        if not self._depends(poly_expr):
            return 0
        # term by term (codegen/_terms.py): Poly builds a dense representation over every
        # generator, hundreds for a long chain (issue 28); poly_expr is expanded by its callers
        return total_degree(sp.expand(poly_expr), self.gens)

    def _definition(self, expr):
        """Value of ``expr`` in terms of states/params/lam (auxiliaries substituted)."""
        if self._defs_key != len(self.auxes):      # auxiliaries are only appended (rename() resets)
            self._defs = {a.symbol: a.definition for a in self.auxes}
            self._defs_key = len(self.auxes)
        subs = self._defs
        for _ in range(len(subs) + 1):
            new = expr.xreplace(subs)
            if new == expr:
                break
            expr = new
        return expr

    # -- the rules ------------------------------------------------------------------
    def poly(self, e):
        """Return a polynomial of degree <= 2 in the variables (and lam) equal to ``e``."""
        if not self._depends(e):
            return e
        if e.is_Symbol:
            return e
        if e.is_Add:
            # the recast of a term that depends on the variables is already expanded; expanding
            # only the others keeps a large sum linear in its number of terms
            return sp.Add(*[self.poly(a) if self._depends(a) else sp.expand(a) for a in e.args])
        if e.is_Mul:
            return self._mul_expr(e)
        if e.is_Pow:
            return self._pow(e.base, e.exp)
        if isinstance(e, sp.Function):
            return self._function(e)
        raise RecastError(f"{self.where}: cannot recast {sp.sstr(e)} ({type(e).__name__}) to quadratic form")

    # -- transcendental functions: derivative-bilinear rows + point conditions ----------
    def dot(self, v: sp.Symbol) -> sp.Symbol:
        """Symbol standing for the time derivative ``v'`` in derivative-bilinear rows."""
        return sp.Symbol(f"{v.name}'", real=True)

    def _argument(self, arg):
        """The argument as ``c * v`` with ``v`` one variable (an auxiliary if needed)."""
        X = self.factor(self.poly(arg))
        c, v = X.as_independent(*self.gens, as_Add=False)
        if v == self.lam:
            raise _LamNonlinear()
        return c, v

    def _dbil(self, kind, key, definition, row_of, point_of, validity=()):
        """Auxiliary with a derivative-bilinear row and its point condition."""
        return self._new_aux(kind, key, definition, row_of, validity, point_of)

    def _function(self, e):
        """Recast of exp, tanh, atan, sin, cos, log (DESIGN §2 table); others are rewritten.

        ========  ==================================================  ========================
        function  derivative-bilinear row(s)                          point condition (t = 0)
        ========  ==================================================  ========================
        exp(x)    e' - e x' = 0                                       e - exp(x)
        tanh(x)   t' - x' + s x' = 0,  s = t*t (algebraic)             t - tanh(x)
        atan(x)   a' + s a' - x' = 0,  s = x*x (algebraic)             a - atan(x)
        sin, cos  s' - c x' = 0,  c' + s x' = 0                       s - sin(x), c - cos(x)
        log(x)    x l' - x' = 0                                       l - log(x)
        ========  ==================================================  ========================

        with ``x = c v`` the argument (``v`` a variable, ``c`` a coefficient).
        """
        f, arg = e.func, (e.args[0] if e.args else None)
        if f in (sp.sinh, sp.cosh, sp.sech, sp.csch, sp.coth):
            return self.poly(e.rewrite(sp.exp))
        if f in (sp.tan, sp.cot, sp.sec, sp.csc):
            return self.poly(e.rewrite(sp.sin) if f is not sp.tan else sp.sin(arg) / sp.cos(arg))
        if f not in (sp.exp, sp.tanh, sp.atan, sp.sin, sp.cos, sp.log) or len(e.args) != 1:
            raise RecastError(
                f"{self.where}: {type(e).__name__} in {sp.sstr(e)} depends on the variables and has no "
                f"quadratic recast; supported: exp, log, tanh, atan, sin, cos (and sinh, cosh, sech, tan "
                f"through them), sqrt and rational powers")
        c, v = self._argument(arg)
        dv = self.dot(v)
        x_def = self._definition(c * v)
        if f is sp.exp:
            return self._dbil("exp", (c, v), sp.exp(x_def), lambda r: self.dot(r) - c * r * dv,
                              lambda r: r - sp.exp(c * v))
        if f is sp.tanh:
            th = self._name("tanh", (c, v)) if ("tanh", (c, v)) not in self.cache else self.cache[("tanh", (c, v))]
            if ("tanh", (c, v)) in self.cache:
                return th
            self.cache[("tanh", (c, v))] = th
            k = len(self.auxes)
            self.auxes.append(Aux(th, "tanh", sp.tanh(x_def), sp.Integer(0), (), sp.Integer(0)))
            s = self.factor(th * th)
            self.auxes[k] = Aux(th, "tanh", sp.tanh(x_def), sp.expand(self.dot(th) - c * dv + c * s * dv), (),
                                th - sp.tanh(c * v))
            return th
        if f is sp.atan:
            s = self.factor(sp.expand((c * v) ** 2)) if c != 0 else 0
            return self._dbil("atan", (c, v), sp.atan(x_def),
                              lambda r: self.dot(r) + s * self.dot(r) - c * dv, lambda r: r - sp.atan(c * v))
        if f in (sp.sin, sp.cos):
            key = (c, v)
            if ("sin", key) not in self.cache:
                s = self._name("sin", key)
                co = self._name("cos", key)
                self.cache[("sin", key)], self.cache[("cos", key)] = s, co
                self.auxes.append(Aux(s, "sin", sp.sin(x_def), sp.expand(self.dot(s) - c * co * dv), (),
                                      s - sp.sin(c * v)))
                self.auxes.append(Aux(co, "cos", sp.cos(x_def), sp.expand(self.dot(co) + c * s * dv), (),
                                      co - sp.cos(c * v)))
            return self.cache[("sin" if f is sp.sin else "cos", key)]
        # log(c v) = log(c) + log(v) is not used: the row x l' - x' = 0 holds for x = c v directly
        return self._dbil("log", (c, v), sp.log(x_def), lambda r: v * self.dot(r) - dv,
                          lambda r: r - sp.log(c * v),
                          (("nonzero", f"log argument {sp.sstr(x_def)} must stay away from 0"),))

    def _mul_expr(self, e):
        """Recast of a product: its parameter-only factors times the recast of the others.

        The recast of the variable part is cached (a large sum repeats a few monomials with
        many coefficients), and ``c * core`` is expanded only when it is not one term already.
        """
        const, num, den = [], [], []
        for f in e.args:
            if not self._depends(f):
                const.append(f)
            elif f.is_Pow and f.exp.is_number and f.exp < 0:
                den.append(f.base ** (-f.exp))
            else:
                num.append(f)
        c = sp.Mul(*const)
        key = (tuple(num), tuple(den))
        if key not in self.products:
            self.products[key] = self._mul_core(num, den)
        core = self.products[key]
        if core.is_Add or not all(f.is_Symbol or f.is_Number for f in sp.Mul.make_args(c)):
            return sp.expand(c * core)
        return c * core

    def _mul_core(self, num, den):
        """Recast of the product of the variable factors ``num`` over ``den`` (expanded)."""
        if den:
            N = sp.Mul(*num)
            D = sp.Mul(*den)
            key = N / D
            if not num:  # 1/D
                d = self.factor(self.poly(D))
                r = self._new_aux("inverse", key, self._definition(key), lambda r: 1 - r * d)
                self._mark_nonzero(d)
                return r
            Np = self.poly(N)
            Dp = sp.expand(self.poly(D))
            cD, Dm = self.monic(Dp) if self._depends(Dp) else (sp.Integer(1), Dp)
            d = self.factor(Dm)
            Nn = sp.expand(Np / cD)
            r = self._new_aux("ratio", (Nn, d), self._definition(Nn / d), lambda r: Nn - r * d)
            self._mark_nonzero(d)
            return r
        acc = sp.Integer(1)
        for f in num:
            acc = self.mul(acc, self.poly(f))
        return sp.expand(acc)

    def _mark_nonzero(self, d):
        """Record the validity condition ``d != 0`` for a denominator variable ``d``."""
        d = d.as_independent(*self.gens, as_Add=False)[1]
        for k, a in enumerate(self.auxes):
            if a.symbol == d:
                cond = (d.name, "nonzero", f"{d} = {sp.sstr(a.definition)} is a denominator")
                if cond not in a.validity:
                    self.auxes[k] = replace(a, validity=a.validity + (cond,))
                return
        self.state_validity.add((d.name, "nonzero", f"{d} is a denominator"))


    def mul(self, A, B):
        """Product of two polynomials of degree <= 2, kept of degree <= 2."""
        if not self._depends(A) or not self._depends(B):
            return sp.expand(A * B)
        a = self.factor(A)
        b = self.factor(B)
        return sp.expand(a * b)

    def factor(self, P):
        """Reduce a polynomial to a single monomial ``c*v`` (an auxiliary if needed)."""
        P = sp.expand(P)
        if not self._depends(P):
            return P
        terms = sp.Add.make_args(P)
        if len(terms) == 1:
            coef, rest = terms[0].as_independent(*self.gens, as_Add=False)
            if rest.is_Symbol:
                return P
        c, Pm = self.monic(P)
        return c * self._new_aux("factor", Pm, self._definition(Pm), lambda r: Pm - r)

    def monic(self, P):
        """Split ``P = c * Pm`` with ``Pm`` monic in the variables (so that multiples share an aux)."""
        lc = poly_terms(P, self.gens)[0][1]
        if lc == 1:
            return sp.Integer(1), P
        return lc, sp.expand(P / lc)

    def _pow(self, base, ex):
        if not ex.is_number:
            raise RecastError(f"{self.where}: power {sp.sstr(base ** ex)} has a non-constant exponent; "
                              f"write it with exp/log (differential recast, not available yet)")
        ex = sp.nsimplify(ex) if ex.is_Float else ex
        if not ex.is_Rational:
            raise RecastError(f"{self.where}: exponent {ex} of {sp.sstr(base)} is not rational")
        if ex.is_Integer:
            k = int(ex)
            if k == 1:
                return self.poly(base)
            if k < 0:
                d = self.factor(self._pow(base, sp.Integer(-k)))
                key = base ** ex
                r = self._new_aux("inverse", key, self._definition(key), lambda r: 1 - r * d)
                self._mark_nonzero(d)
                return r
            b = self.factor(self.poly(base))
            return self._ipow(b, k)
        p, q = int(ex.p), int(ex.q)
        if p < 0:
            root = self._pow(base, sp.Rational(-p, q))
            d = self.factor(root)
            key = base ** ex
            r = self._new_aux("inverse", key, self._definition(key), lambda r: 1 - r * d)
            self._mark_nonzero(d)
            return r
        Bp = self.poly(base ** p) if p > 1 else self.poly(base)
        key = base ** sp.Rational(p, q)
        positive = (("positive", f"principal root: {sp.sstr(key)} > 0"),) if q % 2 == 0 else ()
        if q == 2:
            return self._new_aux("sqrt", key, self._definition(key), lambda r: Bp - r * r, positive)
        return self._new_aux("root", key, self._definition(key),
                             lambda r: Bp - self._ipow(r, q), positive)

    def _ipow(self, b, k):
        """``b**k`` for a single monomial ``b`` by binary splitting with shared partial powers."""
        if k == 1:
            return b
        if k == 2:
            return sp.expand(b * b)
        h = k // 2
        lo = self._ipow_aux(b, h)
        hi = self._ipow_aux(b, k - h)
        return sp.expand(lo * hi)

    def _ipow_aux(self, b, k):
        if k == 1:
            return b
        P = self._ipow(b, k)
        key = self._definition(b) ** k
        return self._new_aux("power", key, self._definition(P), lambda r: P - r) if self._degree(P) > 1 else P


def _forcing_split(spec, expr, lam, where, gens):
    """Split ``expr`` into (autonomous part, cos coefficient, sin coefficient)."""
    w, t = spec.forcing_frequency, spec.t
    if w is None or t not in expr.free_symbols:
        return expr, sp.Integer(0), sp.Integer(0)
    expr = sp.expand(expr)
    cos_c = expr.coeff(sp.cos(w * t))
    sin_c = expr.coeff(sp.sin(w * t))
    rest = sp.expand(expr - cos_c * sp.cos(w * t) - sin_c * sp.sin(w * t))
    states = set(gens) - {lam}
    for c in (cos_c, sin_c):
        if c.free_symbols & (states | {t}):
            raise RecastError(f"{where}: the forcing cos({w}*t)/sin({w}*t) must enter additively with a "
                              f"coefficient of parameters only (parametric excitation is not supported)")
    if t in rest.free_symbols:
        raise RecastError(f"{where}: time appears inside a nonlinearity; only additive cos({w}*t), "
                          f"sin({w}*t) forcing is supported")
    return rest, cos_c, sin_c


def _lam_split(c, lam, where):
    c = sp.expand(c)
    c1 = c.coeff(lam, 1)
    c0 = sp.expand(c - c1 * lam)
    if lam in c0.free_symbols or lam in c1.free_symbols:
        raise RecastError(f"{where}: the forcing amplitude depends non-linearly on the continuation "
                          f"parameter {lam}")
    return c0, c1


def recast(spec: ModelSpec, continuation: str) -> RecastSystem:
    """Recast a model to quadratic form for the continuation parameter ``continuation``.

    Parameters
    ----------
    spec : ModelSpec
        The declared model (validated here).
    continuation : str
        Name of the parameter that becomes ``lam``.

    Returns
    -------
    RecastSystem
        The frozen description consumed by the printers and templates.
    """
    spec.validate(continuation)
    lam = spec.parameters[continuation].symbol
    if spec.sampled:
        return _sampled(spec, lam)
    try:
        return _recast(spec, lam, lam_var=None)
    except _LamNonlinear:
        name = f"{continuation}_c"
        for kind, names in (("parameter", spec.parameters), ("definition", spec.definitions),
                            ("state", [x.name for x in spec.states]),
                            ("algebraic variable", [z.name for z in spec.algebraic])):
            if name in names:
                raise DuplicateNameError(
                    f"{kind} {name!r} of model {spec.name!r} collides with the constant-in-time variable "
                    f"{name!r} the recast makes for the continuation parameter {continuation!r} (it enters "
                    f"non-linearly); rename the {kind} {name!r}") from None
        return _recast(spec, lam, lam_var=sp.Symbol(name, real=True))


class _LamNonlinear(Exception):
    pass


def _original_ode(spec: ModelSpec):
    """The original first-order ODE f(x, t; p) and its exact Jacobian (algebraic variables
    eliminated explicitly)."""
    elim = {}
    for z in spec.algebraic:
        sols = sp.solve(spec.expand_definitions(spec.constraints[z]).xreplace(elim), z, dict=False)
        if len(sols) != 1:
            raise RecastError(f"constraint for {z.name!r}: cannot be solved uniquely for {z.name} "
                              f"({len(sols)} solutions); declare {z.name} with m.define() instead")
        elim[z] = sols[0]
    f = []
    for s in spec.states:
        rhs = spec.expand_definitions(spec.odes[s]).xreplace(elim)
        f.append(rhs / spec.masses.get(s, sp.Integer(1)))
    J = jacobian(f, spec.states)
    return f, J, elim


def _unit_fields(spec: ModelSpec) -> dict:
    """The state and time units of ``spec`` (metadata: not part of the model hash)."""
    return dict(state_units=tuple(spec.state_units.get(x.name, "") for x in spec.states),
                time_unit=spec.time_unit or "")


def _contacts(spec: ModelSpec, elim=None) -> tuple:
    """``((name, relative velocity, law of the symbol _vr or None, forces), ...)``: each law as a
    function of the relative velocity alone, in steady sliding if it takes internal states
    (:meth:`ModelSpec.steady_sliding_law`; None where that has no closed form: the motion
    labels are then unknown, as validation warned), and the contact's force in the equation
    of each state (:func:`_contact_forces`)."""
    vr = sp.Symbol("_vr", real=True)
    return tuple((c.name, spec.expand_definitions(c.relative_velocity), spec.steady_sliding_law(c, vr)[0],
                  _contact_forces(spec, c, elim or {})) for c in spec.contacts)


def _contact_forces(spec: ModelSpec, contact, elim):
    """The force of ``contact`` in the right-hand side of each state's equation (``mass x' =
    rhs``, before the division by the mass), as written: ``mu_c d(rhs)/d(mu_c)`` with the
    friction coefficient ``mu_c`` (the definition :meth:`ModelSpec.friction` returns) kept as
    a symbol while the other definitions are substituted, then ``mu_c`` too.  It is the part of
    the equation the contact contributes wherever the equation is linear in ``mu_c`` (a
    normal load times the coefficient), whatever the law: sampled, inlined by the recast (a
    law linear in the relative velocity), or with internal states.  None where an equation is
    not linear in ``mu_c`` (the split is not defined there).  ``elim``: the algebraic variables
    eliminated, as in the original ODE."""
    mu = contact.coefficient
    keep = {sym: e for sym, e in spec.definitions.values() if sym != mu}
    out = []
    for s in spec.states:
        e = spec.odes[s]
        for _ in range(len(keep) + 1):
            new = e.xreplace(keep)
            if new == e:
                break
            e = new
        d = sp.diff(e, mu)
        if d != 0 and sp.diff(d, mu) != 0:
            return None
        out.append(spec.expand_definitions(d * mu).xreplace(elim) if d != 0 else sp.Integer(0))
    return tuple(out)


def _sampled(spec: ModelSpec, lam) -> RecastSystem:
    """Description of a non-analytic model: the original ODE only (DESIGN §5.4)."""
    f, J, elim = _original_ode(spec)
    n = len(spec.states)
    zero = (sp.Integer(0),) * n
    return RecastSystem(
        name=spec.name, description=spec.description, continuation=lam.name,
        parameters=tuple(p.symbol for p in spec.parameters.values()),
        defaults=tuple(p.default for p in spec.parameters.values()),
        units=tuple(p.unit or "" for p in spec.parameters.values()), states=tuple(spec.states),
        variables=tuple(spec.states), kinds=("differential",) * n,
        mass=tuple(spec.masses.get(s, sp.Integer(1)) for s in spec.states), c0=zero, c1=zero, L0=(), L1=(),
        Q=(), forcing=(zero, zero, zero, zero),
        forcing_frequency=spec.forcing_frequency.name if spec.forcing_frequency is not None else None,
        A=(), B=(), point_rows=(), point_exprs=(), definitions=(), validity=(), rows=tuple(f),
        ode_rhs=tuple(f), ode_jac=tuple(tuple(J.row(i)) for i in range(J.rows)),
        contacts=_contacts(spec, elim), lam_as_variable=False, time=spec.t, sampled=True,
        parameter_conditions=tuple(spec.parameter_conditions()), **_unit_fields(spec))


def _recast(spec: ModelSpec, lam, lam_var):
    rc = _Recaster(spec, lam, lam_var)
    is_freq = spec.forcing_frequency is not None and spec.forcing_frequency == lam
    rows_state, forcing_rows = [], []
    # differential rows, then algebraic constraints
    equations = [(s, spec.odes[s], f"equation for {s.name!r}") for s in spec.states]
    equations += [(z, spec.constraints[z], f"constraint for {z.name!r}") for z in spec.algebraic]
    # user definitions that depend on the variables (and are used) are recast as units
    used, stack = set(), [e for _, e, _ in equations] + [c.relative_velocity for c in spec.contacts]
    defs = {sym: e for sym, e in spec.definitions.values()}
    while stack:
        for s in stack.pop().free_symbols:
            if s in defs and s not in used:
                used.add(s)
                stack.append(defs[s])
    defsubs = {}
    for name, (sym, expr) in spec.definitions.items():
        if sym not in used:
            continue
        e = rc._sub(expr.xreplace(defsubs))
        if spec.t in spec.expand_definitions(expr).free_symbols or not rc._depends(e):
            defsubs[sym] = e
            continue
        rc.where = f"definition {name!r}"
        defsubs[sym] = rc.define(name, e)
    for done, (var, expr, where) in enumerate(equations):
        report("recast: equation", done, len(equations))
        rc.where = where
        full = expr.xreplace(defsubs)
        auto, fc, fs = _forcing_split(spec, full, lam, where, rc.gens)
        if is_freq:
            if lam in auto.free_symbols:
                raise RecastError(f"{where}: the continuation parameter {lam} is the forcing frequency and "
                                  f"may only appear inside cos({lam}*t), sin({lam}*t)")
            fcs = (fc, fs, sp.Integer(0), sp.Integer(0))
        else:
            back = {lam_var: lam} if lam_var is not None else {}
            fc0, fc1 = _lam_split(fc.xreplace(back), lam, where)
            fs0, fs1 = _lam_split(fs.xreplace(back), lam, where)
            fcs = (fc0, fs0, fc1, fs1)
        auto = rc._sub(auto)
        # rc.poly's result is expanded when it depends on the variables (see _Recaster.poly)
        rows_state.append(rc.poly(auto) if rc._depends(auto) else sp.expand(auto))
        forcing_rows.append(fcs)
    gens_lam = lam if lam_var is None and not is_freq else None
    variables = list(rc.base_vars) + [a.symbol for a in rc.auxes]
    n_state, n_alg = len(spec.states), len(spec.algebraic)
    all_rows = rows_state + [a.row for a in rc.auxes]
    kinds = ["differential"] * n_state + ["algebraic"] * n_alg
    kinds += ["derivative_bilinear" if a.derivative_bilinear else "algebraic" for a in rc.auxes]
    mass = [spec.masses.get(s, sp.Integer(1)) for s in spec.states] + [sp.Integer(0)] * (n_alg + len(rc.auxes))
    zero = sp.Integer(0)
    forcing_rows += [(zero, zero, zero, zero)] * len(rc.auxes)
    N = len(variables)
    index = {v: i for i, v in enumerate(variables)}
    gens = variables + ([lam] if gens_lam is not None else [])
    c0, c1, L0, L1, Q, A, B = [zero] * N, [zero] * N, [], [], [], [], []
    dots = [rc.dot(v) for v in variables]
    gens_set = set(gens)
    point_rows, point_exprs = [], []
    for i, row in enumerate(all_rows):
        report("recast: quadratic terms of row", i, len(all_rows))
        if kinds[i] == "derivative_bilinear":
            aux = rc.auxes[i - n_state - n_alg]
            all_rows[i] = row = sp.expand(row)
            for monom, coef in poly_terms(row, variables + dots):
                vs = [k for k in range(N) for _ in range(monom[k])]
                ds = [k for k in range(N) for _ in range(monom[N + k])]
                if len(ds) != 1 or len(vs) > 1:
                    raise RecastError(f"internal: derivative-bilinear row {i} ({variables[i]}) is not of the "
                                      f"form a u' + b u u'")
                if vs:
                    B.append((i, vs[0], ds[0], coef))
                else:
                    A.append((i, ds[0], coef))
            point_rows.append(i)
            point_exprs.append(aux.point)
            continue
        if i >= len(rows_state):    # auxiliary rows; the equations' rows are expanded already
            all_rows[i] = row = sp.expand(row)
        if not row.free_symbols & gens_set:
            c0[i] = row
            continue
        for monom, coef in poly_terms(row, gens):
            powers = list(monom)
            lam_pow = powers.pop() if gens_lam is not None else 0
            vars_in = [v for v, k in zip(variables, powers) for _ in range(k)]
            if lam_pow >= 2 or (lam_pow == 1 and len(vars_in) > 1):
                raise _LamNonlinear()
            if len(vars_in) > 2:
                raise RecastError(f"internal: row {i} ({variables[i]}) has degree {len(vars_in)} > 2")
            if lam_pow == 1 and not vars_in:
                c1[i] = coef
            elif lam_pow == 1:
                L1.append((i, index[vars_in[0]], coef))
            elif not vars_in:
                c0[i] = coef
            elif len(vars_in) == 1:
                L0.append((i, index[vars_in[0]], coef))
            else:
                a, b = sorted((index[vars_in[0]], index[vars_in[1]]))
                Q.append((i, a, b, coef))
    f, J, elim = _original_ode(spec)
    definitions = tuple((a.symbol, a.definition.xreplace(elim)) for a in rc.auxes)
    validity = tuple(v for a in rc.auxes for v in a.validity) + tuple(sorted(rc.state_validity))
    contacts = _contacts(spec, elim)
    params = tuple(p.symbol for p in spec.parameters.values())
    fc0, fs0, fc1, fs1 = (tuple(r[k] for r in forcing_rows) for k in range(4))
    return RecastSystem(
        name=spec.name, description=spec.description, continuation=lam.name, parameters=params,
        defaults=tuple(p.default for p in spec.parameters.values()),
        units=tuple(p.unit or "" for p in spec.parameters.values()),
        states=tuple(spec.states), variables=tuple(variables), kinds=tuple(kinds), mass=tuple(mass),
        c0=tuple(c0), c1=tuple(c1), L0=tuple(L0), L1=tuple(L1), Q=tuple(Q),
        forcing=(fc0, fs0, fc1, fs1),
        forcing_frequency=spec.forcing_frequency.name if spec.forcing_frequency is not None else None,
        A=tuple(A), B=tuple(B), point_rows=tuple(point_rows), point_exprs=tuple(point_exprs),
        definitions=definitions, validity=validity,
        rows=tuple(all_rows),    # expanded above
        ode_rhs=tuple(f), ode_jac=tuple(tuple(J.row(i)) for i in range(J.rows)), contacts=contacts,
        lam_as_variable=lam_var is not None, time=spec.t,
        parameter_conditions=tuple(spec.parameter_conditions()), **_unit_fields(spec))
