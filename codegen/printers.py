"""Sympy printers for the generated code (STYLE §1-2: printers print, templates only loop).

Both printers run in strict mode: an expression they cannot print raises instead of
emitting a comment.  Symbols are printed through a name table so that user names never
clash with the generated code's own locals (``p_<param>``, ``x_<state>``).
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter


from frictionkit.modelspec.errors import ModelSpecError


class PrintError(ModelSpecError):
    """An expression contains a construct the backend cannot print."""


class _NamedMixin:
    def _print_Symbol(self, expr):
        try:
            return self._names[expr]
        except KeyError:
            raise PrintError(f"symbol {expr} has no name in the generated code (undeclared?)") from None

    def _print_Dummy(self, expr):
        return self._print_Symbol(expr)

    def emptyPrinter(self, expr):  # pragma: no cover - strict refusal
        raise PrintError(f"cannot print {type(expr).__name__} ({expr})")


class NumPyModelPrinter(_NamedMixin, NumPyPrinter):
    """NumPy printer (``numpy.sqrt``, ``numpy.cos``...) with a symbol name table."""

    def __init__(self, names: dict, order=None):
        super().__init__({"strict": True, "fully_qualified_modules": True, "order": order})
        self._names = names

    def _print_Piecewise(self, expr):
        # numpy.select needs arrays of equal shape; broadcast every branch
        return super()._print_Piecewise(expr)


class CModelPrinter(_NamedMixin, C99CodePrinter):
    """C99 printer for the compiled (Cython) kernels; small integer powers as products."""

    def __init__(self, names: dict, order=None):
        super().__init__({"strict": True, "order": order})
        self._names = names

    def _print_Pow(self, expr):
        if expr.exp.is_Integer and 2 <= int(expr.exp) <= 4:
            b = self.parenthesize(expr.base, 100)
            return "(" + "*".join([b] * int(expr.exp)) + ")"
        if expr.exp.is_Integer and -4 <= int(expr.exp) <= -1:
            b = self.parenthesize(expr.base, 100)
            return "(1.0/(" + "*".join([b] * (-int(expr.exp))) + "))"
        return super()._print_Pow(expr)


#: the most variables of a system whose sums and products are printed in sympy's sorted order
#: (``print_order``); above, in the order of their arguments (``order="none"``): sorting every
#: sum's terms costs more than the rest of the printing on a 200-state chain (issue 28).  Every
#: zoo model is below the limit, so its generated text does not change.
SORTED_PRINT_MAX_VARIABLES = 64


def print_order(n_variables: int):
    """The printers' ``order`` setting for a system of ``n_variables`` variables."""
    return None if n_variables <= SORTED_PRINT_MAX_VARIABLES else "none"


#: the most expressions given to sympy's cse with its ``"basic"`` optimizations (negations and
#: common factors pulled out first: a few operations fewer on small models); above, none.  The
#: basic pass costs tens of ms per expression and more as the set grows (a 200-state chain's
#: right-hand side: 200 expressions, most of a minute, issue 28); without it cse is linear.
#: Every zoo model is below the limit, so its generated text does not change.
CSE_BASIC_MAX = 64


def cse_lines(exprs, printer, prefix="_c", assign="{lhs} = {rhs}"):
    """Common sub-expressions of ``exprs``: (list of printed assignments, printed results, temps).

    sympy's ``cse`` with its ``"basic"`` optimizations up to :data:`CSE_BASIC_MAX` expressions,
    without above (the same values; only the grouping of a few operations differs)."""
    exprs = list(exprs)
    opt = "basic" if len(exprs) <= CSE_BASIC_MAX else None
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols(prefix), optimizations=opt)
    lines, temps = [], []
    for sym, e in reps:
        printer._names[sym] = sym.name
        lines.append(assign.format(lhs=sym.name, rhs=printer.doprint(e)))
        temps.append(sym.name)
    return lines, [printer.doprint(e) for e in reduced], temps


def hoist_parameter_only(exprs, params, prefix="_k"):
    """Replace the parameter-only sub-expressions of ``exprs`` by symbols.

    The compiled kernels evaluate these once per call instead of once per sample
    (``1/n**2``, ``2*sqrt(mus*(mus - mud))/n``, ``FN/M1``).  In a sum or product the
    parameter-only operands are grouped first (``-2*omega1*zeta*v`` -> ``_k0*v``).

    Returns
    -------
    list of sympy.Expr, list of (Symbol, sympy.Expr)
        The expressions with the symbols substituted, and the hoisted definitions.
    """
    params = set(params)
    table: dict = {}

    def const(e):
        return e.free_symbols <= params

    def sym_for(e):
        if e not in table:
            table[e] = sp.Symbol(f"{prefix}{len(table)}", real=True)
        return table[e]

    def walk(e):
        if not e.free_symbols or e.is_Symbol:
            return e
        if const(e):
            return sym_for(e)
        if e.is_Add or e.is_Mul:
            fixed = [a for a in e.args if const(a)]
            rest = [walk(a) for a in e.args if not const(a)]
            group = e.func(*fixed)
            if group.free_symbols and not group.is_Symbol:
                group = sym_for(group)
            return e.func(group, *rest)
        return e.func(*[walk(a) for a in e.args])

    out = [walk(sp.sympify(e)) for e in exprs]
    return out, [(s, e) for e, s in table.items()]
