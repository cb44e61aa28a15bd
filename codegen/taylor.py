"""The recast applied pointwise (DESIGN §5.0): Taylor kernels of the original ODE along a path.

At one sample point (a time sample of AFT, a Gauss point of collocation, an equilibrium)
the auxiliaries of the quadratic recast are plain functions of the states, so their path
series (the ANM's series in the path parameter ``a``) follow order by order, in order of
definition, from the recast's relations solved explicitly at the point -- no point
conditions, no truncation.  :func:`pointwise_recast` builds the frozen, language-neutral
description (STYLE §3) from the original ODE ``f(x, t; p)`` of a :class:`~.recast.RecastSystem`
with the rules of DESIGN §2 (binary products, quotients ``r D = N``, ``r r = A``, the
transcendental functions); :data:`NUMPY_RECURRENCE` and :data:`C_RECURRENCE` are the
printed recurrences, one entry per operation; :func:`taylor_context` prints the lines the
templates loop over.

Every auxiliary ``r`` has one or two *arguments*, affine expressions ``c0 + sum c_i v_i``
of the states, ``lam`` and earlier auxiliaries with coefficients of the parameters and of
the time ``t`` of the sample (held fixed along the path), and ``f`` itself is affine in
them.  The order-``k`` coefficient of an argument is ``c0 [k == 0] + sum c_i v_{i,k}``.
Recurrences (``w`` the argument, ``_j`` running over ``1..k``; DESIGN §5.0 for the first
five, the others from ``r' = g'(w) w'`` written as a bilinear relation and its coefficient
of ``a^(k-1)``):

========  ====================  =====================================================
op        relation              order-k coefficient (k >= 1)
========  ====================  =====================================================
mul       r = u v               r_k = sum_{j=0..k} u_j v_{k-j}          (Cauchy sum)
div       r v = u               r_k = (u_k - sum_{j<k} r_j v_{k-j}) / v_0
sqrt      r r = u               r_k = (u_k - sum_{j=1..k-1} r_j r_{k-j}) / (2 r_0)
pow       u r' = a u' r         r_k = sum_j (a j - (k - j)) u_j r_{k-j} / (k u_0)
exp       r' = r w'             k r_k = sum_j j w_j r_{k-j}
tanh      r' = s w', s = 1-r^2  k r_k = sum_j j w_j s_{k-j}     (s: ``v``, a sech2 aux)
sech2     s = 1 - t^2 (t = tanh w) s_k = -sum_{j=0..k} t_j t_{k-j};  s_0 = sech(w_0)^2
atan      s r' = w', s = 1+w^2  r_k = (k w_k - sum_{j<k} j r_j s_{k-j}) / (k s_0)
sin/cos   s' = c w', c' = -s w' k s_k = sum_j j w_j c_{k-j},  k c_k = -sum_j j w_j s_{k-j}
log       w r' = w'             r_k = (w_k - sum_{j<k} j r_j w_{k-j} / k) / w_0
========  ====================  =====================================================

Each ``r_k`` (k >= 1) is affine in the top-order state coefficient ``x_k`` with the
derivative at the series origin as slope, hence ``f_k`` is affine in ``x_k`` with slope
``df/dx(x_0)``: the property the ANM relies on (tested in ``tests/codegen/test_taylor.py``).

**A continued forcing frequency: the kernel in the forcing phase.**  A harmonic balance holds
the normalized time ``theta = w t`` of its samples fixed, not ``t``: when the continuation
parameter ``lam`` is the forcing frequency ``w``, the sample time ``t = theta / lam`` moves
along the path.  The kernel is then generated for ``f(x, theta / lam; p)``, the time symbol
standing for the forcing phase ``theta`` (``PointwiseRecast.phase``; the module says so with
``TAYLOR_TIME = "phase"``): the forcing ``cos(w t)`` becomes ``cos(theta)``, a coefficient of
the sample, and any other appearance of ``w`` or ``t`` is expanded in ``lam`` by the rules
above (``t = theta / lam`` a quotient), so every order is exact (Karkar, Cochelin and Vergez,
JSV 2013, normalized time for forced systems; DESIGN §5.1: ``w`` enters only as ``w D``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import re

import sympy as sp
from sympy.core.add import _unevaluated_Add

from .printers import hoist_parameter_only
from .recast import RecastError, RecastSystem

#: the constant-term marker of an affine argument: 1 at order 0, 0 above
ONE = sp.Symbol("_one", real=True)


@dataclass(frozen=True)
class TaylorAux:
    """One auxiliary of the pointwise recast: ``symbol = op(args)``.

    ``args`` are affine expressions (in states, ``lam``, earlier auxiliaries and
    :data:`ONE`); ``partner`` is the index of the paired auxiliary (cos of a sin, sin of a
    cos); ``exponent`` the parameter-only exponent of a ``pow``; ``definition`` the value
    in the original variables (for readable output).
    """

    symbol: sp.Symbol
    op: str
    args: tuple
    partner: int | None = None
    exponent: sp.Expr | None = None
    definition: sp.Expr | None = None


@dataclass(frozen=True)
class PointwiseRecast:
    """Frozen description of the pointwise recast: auxiliaries in order, and ``f`` affine in them."""

    states: tuple
    lam: sp.Symbol
    time: sp.Symbol
    parameters: tuple
    auxes: tuple                 # TaylorAux, in order of definition
    f: tuple                     # per state: affine in states, lam, auxiliaries and ONE
    phase: bool = False          # the time symbol stands for the forcing phase w t (lam = w)

    @property
    def n_aux(self) -> int:
        return len(self.auxes)


class _Pointwise:
    """Walks ``f`` and introduces one auxiliary per non-affine node (shared by a cache)."""

    def __init__(self, states, lam, where):
        self.atoms = list(states) + [lam]
        self.atom_set = set(self.atoms)     # kept with atoms: set(atoms) per call was quadratic (issue 28)
        self.lam = lam
        self.auxes: list[TaylorAux] = []
        self.cache: dict = {}
        self.where = where

    def _dep(self, e) -> bool:
        return not self.atom_set.isdisjoint(e.free_symbols)

    def _new(self, op, args, definition, **kw) -> sp.Symbol:
        key = (op, args, kw.get("exponent"))
        if key not in self.cache:
            self.cache[key] = self._register(TaylorAux(None, op, args, definition=definition, **kw))
        return self.cache[key]

    def _register(self, aux: TaylorAux) -> sp.Symbol:
        sym = sp.Symbol(f"_r{len(self.auxes)}", real=True)
        self.auxes.append(TaylorAux(sym, aux.op, aux.args, aux.partner, aux.exponent, aux.definition))
        self.atoms.append(sym)
        self.atom_set.add(sym)
        return sym

    def affine(self, e):
        """``e`` as an affine expression of the atoms (auxiliaries created as needed)."""
        if not self._dep(e):
            return e
        if e.is_Symbol:
            return e
        if e.is_Add:
            return sp.Add(*[self.affine(a) for a in e.args])
        if e.is_Mul:
            return self._mul(e)
        if e.is_Pow:
            return self._pow(e.base, e.exp, e)
        if isinstance(e, sp.Function):
            return self._function(e)
        raise RecastError(f"{self.where}: cannot expand {sp.sstr(e)} ({type(e).__name__}) in power series")

    def _arg(self, e):
        """An affine argument: constants carry the :data:`ONE` marker."""
        a = sp.expand(self.affine(e))
        # a.as_independent(*self.atoms, as_Add=True), without its set of all atoms per call
        if a.is_Add:
            const = sp.Add(*[t for t in a.args if not self._dep(t)])
            rest = _unevaluated_Add(*[t for t in a.args if self._dep(t)])
        else:
            const, rest = (sp.Integer(0), a) if self._dep(a) else (a, sp.Integer(0))
        return rest + const * ONE

    def _product(self, factors):
        acc = None
        for f in factors:
            a = self.affine(f)
            acc = a if acc is None else self._new("mul", (self._arg(acc), self._arg(a)), None)
        return acc

    def _mul(self, e):
        const = [f for f in e.args if not self._dep(f)]
        num, den = [], []
        for f in e.args:
            if not self._dep(f):
                continue
            if f.is_Pow and f.exp.is_number and f.exp.is_negative:
                den.append(f.base ** (-f.exp))
            else:
                num.append(f)
        c = sp.Mul(*const)
        if not den:
            return c * self._product(num)
        N = self._product(num) if num else sp.Integer(1)
        D = self._product(den)
        return c * self._new("div", (self._arg(N), self._arg(D)), sp.Mul(*num) / sp.Mul(*den))

    def _pow(self, base, ex, e):
        if self._dep(ex):  # b**g(x) = exp(g log b)
            return self.affine(sp.exp(ex * sp.log(base)))
        if ex.is_Integer and int(ex) > 0:
            k = int(ex)
            if k == 1:
                return self.affine(base)
            h = k // 2
            lo, hi = self.affine(base ** h), self.affine(base ** (k - h))
            return self._new("mul", (self._arg(lo), self._arg(hi)), e)
        if ex.is_number and ex.is_negative:
            return self._new("div", (ONE, self._arg(self.affine(base ** (-ex)))), e)
        if ex == sp.Rational(1, 2):
            return self._new("sqrt", (self._arg(base),), e)
        if ex.is_Rational and ex.q == 2:
            return self._new("mul", (self._arg(self.affine(base ** (ex - sp.Rational(1, 2)))),
                                     self._arg(self.affine(sp.sqrt(base)))), e)
        return self._new("pow", (self._arg(base),), e, exponent=ex)

    def _function(self, e):
        f = e.func
        if f in (sp.sinh, sp.cosh, sp.sech, sp.csch, sp.coth):
            return self.affine(e.rewrite(sp.exp))
        if f is sp.tan:
            return self.affine(sp.sin(e.args[0]) / sp.cos(e.args[0]))
        if f not in (sp.exp, sp.tanh, sp.atan, sp.sin, sp.cos, sp.log) or len(e.args) != 1:
            raise RecastError(f"{self.where}: {type(e).__name__} in {sp.sstr(e)} has no power-series "
                              f"recurrence; supported: exp, log, tanh, atan, sin, cos (sinh, cosh, tan "
                              f"through them), sqrt and powers")
        w = self._arg(e.args[0])
        if f is sp.tanh:
            key = ("tanh", (w,), None)
            if key not in self.cache:
                k = len(self.auxes)
                t = self.cache[key] = self._register(TaylorAux(None, "tanh", (w,), definition=e))
                # s = 1 - t^2 follows t: t_k needs s only up to order k - 1.  Its order 0 is
                # sech(w_0)^2 from w_0 itself: 1 - t_0^2 loses every digit of s_0 that t_0 ~ 1
                # hides (a saturated law), and all orders of t inherit s_0's error
                s_aux = self._new("sech2", (w, t), None)
                self.auxes[k] = TaylorAux(t, "tanh", (w, s_aux), definition=e)
            return self.cache[key]
        if f is sp.atan:
            sq = self._new("mul", (w, w), None)
            return self._new("atan", (w, ONE + sq), e)
        if f in (sp.sin, sp.cos):
            if ("sin", (w,), None) not in self.cache:
                k = len(self.auxes)
                self._new("sin", (w,), sp.sin(e.args[0]), partner=k + 1)
                self._new("cos", (w,), sp.cos(e.args[0]), partner=k)
            return self.cache[("sin" if f is sp.sin else "cos", (w,), None)]
        return self._new(f.__name__, (w,), e)


def pointwise_recast(system: RecastSystem) -> PointwiseRecast:
    """The pointwise recast of ``system``'s original ODE (see the module docstring); in the
    forcing phase ``theta = w t`` (``t -> theta / lam``) when ``lam`` is the forcing frequency."""
    lam = system.parameters[[p.name for p in system.parameters].index(system.continuation)]
    phase = system.forcing_frequency is not None and system.forcing_frequency == system.continuation
    walker = _Pointwise(system.states, lam, f"model {system.name!r}")
    f = []
    for x, rhs in zip(system.states, system.ode_rhs):
        walker.where = f"equation for {x.name!r} of model {system.name!r}"
        if phase:        # lam * (theta / lam) cancels: cos(w t) -> cos(theta)
            rhs = sp.sympify(rhs).xreplace({system.time: system.time / lam})
        f.append(walker._arg(rhs))
    return PointwiseRecast(tuple(system.states), lam, system.time, tuple(system.parameters),
                           tuple(walker.auxes), tuple(f), phase)


# The recurrences, printed per operation (STYLE §2: lookup tables).  NumPy: ``U``, ``V`` the
# whole argument series (K, M), ``R``/``P`` the auxiliary's / partner's column of ``S``
# (K, NA, M), ``k`` the order, ``_j = arange(1, k + 1)[:, None]``; the first string is order 0.
NUMPY_RECURRENCE = {
    "mul": ("U[0] * V[0]", "(U[:k + 1] * V[k::-1]).sum(axis=0)"),
    "div": ("U[0] / V[0]", "(U[k] - (R[:k] * V[k:0:-1]).sum(axis=0)) / V[0]"),
    "sqrt": ("numpy.sqrt(U[0])", "(U[k] - (R[1:k] * R[k - 1:0:-1]).sum(axis=0)) / (2 * R[0])"),
    "pow": ("U[0] ** E", "((E * _j - (k - _j)) * U[1:k + 1] * R[k - 1::-1]).sum(axis=0) / (k * U[0])"),
    "exp": ("numpy.exp(U[0])", "(_j * U[1:k + 1] * R[k - 1::-1]).sum(axis=0) / k"),
    "tanh": ("numpy.tanh(U[0])", "(_j * U[1:k + 1] * V[k - 1::-1]).sum(axis=0) / k"),
    # sech(u)^2 = 4 e / (1 + e)^2 with e = exp(-2|u|) <= 1: no overflow, no cancellation
    "sech2": ("4.0 * numpy.exp(-2.0 * numpy.abs(U[0])) / (1.0 + numpy.exp(-2.0 * numpy.abs(U[0]))) ** 2",
              "-(V[:k + 1] * V[k::-1]).sum(axis=0)"),
    "atan": ("numpy.arctan(U[0])", "(k * U[k] - (_j[:-1] * R[1:k] * V[k - 1:0:-1]).sum(axis=0)) / (k * V[0])"),
    "sin": ("numpy.sin(U[0])", "(_j * U[1:k + 1] * P[k - 1::-1]).sum(axis=0) / k"),
    "cos": ("numpy.cos(U[0])", "-(_j * U[1:k + 1] * P[k - 1::-1]).sum(axis=0) / k"),
    "log": ("numpy.log(U[0])", "(U[k] - (_j[:-1] * R[1:k] * U[k - 1:0:-1]).sum(axis=0) / k) / U[0]"),
}

def _c_recurrence(order0, init, lo, cmp, op, term, final=None):
    """C text of one recurrence: ``R(0) = order0``; ``R(k) = init``, then ``R(k) op= term`` for
    ``j = lo .. (cmp) k``, then ``R(k) = final`` (each step one sweep over the samples).

    An order-0 value that calls a libm function other than sqrt is a plain loop (``FK_EACH_LIBM``,
    scalar libm, < 1 ulp, as before the sweeps), not libmvec (<= 4 ulp): every order inherits it,
    and with libmvec's an ANM branch of tests/drivers/test_pointwise_default.py moved enough to
    fail.  Order 0 is one call per series; the sweeps of the orders above take the time.
    """
    text = (f"FK_EACH(R(k) = {init};) for (j = {lo}; j {cmp} k; ++j) "
            f"{{ const double jd = j; (void)jd; FK_EACH(R(k) {op}= {term};) }}")
    libm = any(f not in ("sqrt", "fabs") for f in re.findall(r"(?<![A-Za-z_])([a-z]+)\(", order0))
    each0 = "FK_EACH_LIBM" if libm else "FK_EACH"
    return f"{each0}(R(0) = {order0};)", text + (f" FK_EACH(R(k) = {final};)" if final else "")


# C: ``U(j)``, ``V(j)`` macros of the argument coefficients, ``R(j)``/``P(j)`` the
# auxiliary's / partner's coefficients (``FK_S``: orders below k from the caller's array, order k
# in the output, so nothing is copied), all at sample ``m``; ``FK_EACH(stmt)`` runs ``stmt`` for
# every sample (one vectorised sweep; ``FK_EACH_LIBM``: the same loop, not vectorised).  ``k`` is
# the order, ``j`` the index of a sum, ``kd`` and ``jd`` the same as doubles (an integer-to-double
# conversion inside a sweep keeps it from being vectorised).  The order-k coefficient accumulates
# in ``R(k)`` itself, one sweep per term of a sum, in the order of the NumPy sums.  The first string is order 0, the second sets ``R(k)``.
C_RECURRENCE = {op: _c_recurrence(*row) for op, row in {
    "mul": ("U(0) * V(0)", "0.0", 0, "<=", "+", "U(j) * V(k - j)"),
    "div": ("U(0) / V(0)", "U(k)", 0, "<", "-", "R(j) * V(k - j)", "R(k) / V(0)"),
    "sqrt": ("sqrt(U(0))", "U(k)", 1, "<", "-", "R(j) * R(k - j)", "R(k) / (2.0 * R(0))"),
    "pow": ("pow(U(0), E)", "0.0", 1, "<=", "+", "(E * jd - (kd - jd)) * U(j) * R(k - j)", "R(k) / (kd * U(0))"),
    "exp": ("exp(U(0))", "0.0", 1, "<=", "+", "jd * U(j) * R(k - j)", "R(k) / kd"),
    "tanh": ("tanh(U(0))", "0.0", 1, "<=", "+", "jd * U(j) * V(k - j)", "R(k) / kd"),
    "sech2": ("4.0 * exp(-2.0 * fabs(U(0))) / ((1.0 + exp(-2.0 * fabs(U(0)))) * (1.0 + exp(-2.0 * fabs(U(0)))))",
              "0.0", 0, "<=", "-", "V(j) * V(k - j)"),
    "atan": ("atan(U(0))", "kd * U(k)", 1, "<", "-", "jd * R(j) * V(k - j)", "R(k) / (kd * V(0))"),
    "sin": ("sin(U(0))", "0.0", 1, "<=", "+", "jd * U(j) * P(k - j)", "R(k) / kd"),
    "cos": ("cos(U(0))", "0.0", 1, "<=", "-", "jd * U(j) * P(k - j)", "R(k) / kd"),
    "log": ("log(U(0))", "0.0", 1, "<", "+", "jd * R(j) * U(k - j)", "(U(k) - R(k) / kd) / U(0)"),
}.items()}


def _c_op_macro(op, order0, orderk):
    """``FK_OP_<op>(r, U, V, p, E)``: the recurrence of :data:`C_RECURRENCE` for auxiliary ``r``
    (its coefficients ``R(J)`` are ``FK_S(J, r)``, its partner's ``P(J)`` ``FK_S(J, p)``), with
    ``U``, ``V`` the macros of the arguments' coefficients and ``E`` the exponent."""
    def fill(text):
        text = re.sub(r"(?<![A-Za-z_])R\(([^()]*)\)", r"FK_S(\1, r)", text)
        return re.sub(r"(?<![A-Za-z_])P\(([^()]*)\)", r"FK_S(\1, p)", text)
    return f"#define FK_OP_{op}(r, U, V, p, E) if (k == 0) {{ {fill(order0)} }} else {{ {fill(orderk)} }}"


C_OP_MACRO = {op: _c_op_macro(op, *texts) for op, texts in C_RECURRENCE.items()}


def _series_names(pw: PointwiseRecast, names: dict, state, aux, lam, one) -> dict:
    table = dict(names)
    table.update({x: state(i) for i, x in enumerate(pw.states)})
    table.update({a.symbol: aux(k) for k, a in enumerate(pw.auxes)})
    table[pw.lam] = lam
    table[ONE] = one
    return table


def taylor_context(pw: PointwiseRecast, names: dict, numpy_printer, c_printer=None, order=None) -> dict:
    """Printed lines of the Taylor kernel: per auxiliary its arguments and recurrence, then ``f``.

    ``numpy_printer(table)`` / ``c_printer(table)`` build a strict printer with the symbol
    name table ``table``; ``names`` maps the parameters and the time; ``order`` is sympy's
    printing order of the comments (as the printers': ``printers.print_order``).
    """
    NA = len(pw.auxes)
    n = len(pw.states)
    ser = numpy_printer(_series_names(pw, names, lambda i: f"X[:, {i}]", lambda k: f"S[:, {k}]",
                                      "LAM[:, None]", "_one"))
    top = numpy_printer(_series_names(pw, names, lambda i: f"X[k, {i}]", lambda k: f"S[k, {k}]",
                                      "LAM[k]", "float(k == 0)"))
    lines0, linesk = [], []
    for r, a in enumerate(pw.auxes):
        o0, ok = NUMPY_RECURRENCE[a.op]
        args = [f"_u = {ser.doprint(a.args[0])}"]
        if len(a.args) > 1:
            args.append(f"_v = {ser.doprint(a.args[1])}")
        subs = {"U": "_u", "V": "_v", "R": f"S[:, {r}]", "P": f"S[:, {a.partner}]",
                "E": f"({ser.doprint(a.exponent)})" if a.exponent is not None else "E"}
        comment = f"# {a.symbol} = {a.op}({', '.join(sp.sstr(x, order=order) for x in a.args)})"
        lines0 += [comment] + args + [f"S[0, {r}] = {_fill(o0, subs)}"]
        linesk += [comment] + args + [f"S[k, {r}] = {_fill(ok, subs)}"]
    ctx = {"taylor_np0": lines0, "taylor_npk": linesk, "NAUX": NA, "taylor_time": "phase" if pw.phase else "time",
           "taylor_f_np": [f"F[{i}] = {top.doprint(e)}" for i, e in enumerate(pw.f)],
           "taylor_aux_doc": [f"{a.symbol} = {sp.sstr(a.definition, order=order)}" if a.definition is not None
                              else f"{a.symbol} = {a.op}({', '.join(sp.sstr(x, order=order) for x in a.args)})"
                              for a in pw.auxes]}
    if c_printer is not None:
        # parameter-only coefficients are computed once per call, not per sample and order
        flat = [x for a in pw.auxes for x in a.args] + [a.exponent for a in pw.auxes if a.exponent is not None]
        params = [q for q in pw.parameters if q != pw.lam]
        body, hoisted = hoist_parameter_only(list(flat) + list(pw.f), params)
        it = iter(body)
        args = [tuple(next(it) for _ in a.args) for a in pw.auxes]
        exps = [None if a.exponent is None else next(it) for a in pw.auxes]
        pw = replace(pw, auxes=tuple(replace(a, args=x, exponent=e) for a, x, e in zip(pw.auxes, args, exps)),
                     f=tuple(it))
        names = {**names, **{sym: sym.name for sym, _ in hoisted}}
        hp = c_printer(dict(names))
        ctx["taylor_c_hoisted"] = [f"{sym.name} = {hp.doprint(e)}" for sym, e in hoisted]
        at = c_printer(_series_names(pw, names, lambda i: f"X[((J) * {n} + {i}) * M + m]",
                                     lambda k: f"FK_S(J, {k})", "LAM[J]", "fk_delta(J)"))
        per_aux = []
        for r, a in enumerate(pw.auxes):
            v = f"FK_V{r}" if len(a.args) > 1 else "FK_ZERO"
            lines = [f"/* {a.symbol} = {a.op}(...) */", f"#define FK_U{r}(J) ({at.doprint(a.args[0])})"]
            lines += [f"#define FK_V{r}(J) ({at.doprint(a.args[1])})"] if len(a.args) > 1 else []
            partner = a.partner if a.partner is not None else r
            exponent = at.doprint(a.exponent) if a.exponent is not None else "0.0"
            lines.append(f"FK_OP_{a.op}({r}, FK_U{r}, {v}, {partner}, ({exponent}))")
            per_aux.append(lines)
        ctx["taylor_c"] = [line for lines in per_aux for line in lines]
        ctx["taylor_c_parts"] = _c_parts(per_aux, [f"{names[q]} = p[{k}]" for k, q in enumerate(pw.parameters)],
                                         ctx["taylor_c_hoisted"])
        # each operation's recurrence once, as a macro of (auxiliary, its arguments' series,
        # partner, exponent): the auxiliaries only name their arguments
        ctx["taylor_c_ops"] = ["#define FK_ZERO(J) (0.0)"] + [C_OP_MACRO[op] for op in
                                                                sorted({a.op for a in pw.auxes})]
        ck = c_printer(_series_names(pw, names, lambda i: f"X[(k * {n} + {i}) * M + m]",
                                     lambda q: f"Sk[{q} * M + m]", "LAM[k]", "fk_delta(k)"))
        ctx["taylor_f_c"] = [f"F[{i} * M + m] = {ck.doprint(e)}" for i, e in enumerate(pw.f)]
        used = set().union(*[e.free_symbols for e in pw.f],
                           *[x.free_symbols for a in pw.auxes for x in a.args],
                           *[a.exponent.free_symbols for a in pw.auxes if a.exponent is not None])
        ctx["taylor_uses_time"] = pw.time in used
    return ctx


#: the most auxiliaries of a compiled Taylor kernel written as one C function; above, the
#: auxiliaries' recurrences are split into functions of this many, called in order.  GCC's
#: time on one function grows faster than its length (a 200-state chain: 205 auxiliaries,
#: ~800 vectorised sweeps in one function, issue 28); every zoo model has fewer.
TAYLOR_PART_AUXES = 32


def _c_parts(per_aux, param_lines, hoisted_lines):
    """The compiled Taylor kernel's recurrences in parts of :data:`TAYLOR_PART_AUXES`
    auxiliaries (``[]``: one function, as for every model up to that size): per part, the
    parameter and hoisted lines its recurrences use, and its lines."""
    if len(per_aux) <= TAYLOR_PART_AUXES:
        return []
    parts = []
    for start in range(0, len(per_aux), TAYLOR_PART_AUXES):
        body = [line for lines in per_aux[start:start + TAYLOR_PART_AUXES] for line in lines]
        words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", "\n".join(body)))
        hoisted = [h for h in hoisted_lines if h.split(" = ", 1)[0] in words]
        words |= set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", "\n".join(h.split(" = ", 1)[1] for h in hoisted)))
        params = [q for q in param_lines if q.split(" = ", 1)[0] in words]
        parts.append({"consts": params + hoisted, "lines": body})
    return parts


def _fill(text: str, subs: dict) -> str:
    """Substitute the one-letter placeholders of a recurrence (whole words only)."""
    return re.sub(r"\b([UVRPE])\b", lambda mm: subs[mm.group(1)], text)
