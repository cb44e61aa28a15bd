"""Term-by-term polynomial and derivative helpers of the recast, linear in expression size.

``sp.Poly(expr, *gens, domain=sp.EX)`` builds a dense representation over all generators
(the recast has one per auxiliary, hundreds for a large model) and asks ``is_zero`` of every
coefficient; ``Matrix.jacobian`` differentiates every factor of every term through the
``Derivative`` machinery.  Both dominated the recast of a 10,000-term right-hand side
(issue 13).  The functions here give the same results, term by term:

* :func:`poly_terms` is ``Poly(expr, *gens, domain=EX).terms()`` (same monomials, same
  coefficients, same lex order) for an expanded ``expr``, built from a sparse dictionary;
* :func:`jacobian` is ``Matrix(f).jacobian(x)`` (structurally equal: the product rule of
  ``Mul._eval_derivative_n_times`` is applied term by term), with the derivative of every
  distinct factor computed once.
"""
from __future__ import annotations

import sympy as sp
from sympy.core.exprtools import decompose_power


def poly_terms(expr, gens):
    """``[(monomial exponents, coefficient), ...]`` of an expanded polynomial in ``gens``.

    Equal to ``sp.Poly(expr, *gens, domain=sp.EX).terms()`` (lex order, highest first) for an
    ``expr`` that is already expanded, except that a coefficient is dropped only when it is
    structurally zero (``Poly`` also drops one that sympy can prove zero; the recast's
    coefficients are expanded, so the two agree on them).
    """
    index = {g: k for k, g in enumerate(gens)}
    found: dict = {}
    for term in sp.Add.make_args(expr):
        coeff, monom = [], {}
        for factor in sp.Mul.make_args(term):
            if factor.is_Number:
                coeff.append(factor)
                continue
            base, ex = decompose_power(factor)
            if ex < 0:
                ex, base = -ex, sp.Pow(base, -1)
            k = index.get(base)
            if k is None:
                if factor.free_symbols & index.keys():
                    raise sp.PolynomialError(f"{factor} contains an element of the set of generators.")
                coeff.append(factor)
            else:
                monom[k] = ex
        key = tuple(sorted(monom.items()))
        found.setdefault(key, []).append(sp.Mul(*coeff))
    n = len(gens)
    out = []
    for key, cs in found.items():
        c = sp.Add(*cs)     # one flatten per monomial (adding one by one is quadratic)
        if c == 0:
            continue
        dense = [0] * n
        for k, ex in key:
            dense[k] = ex
        out.append((tuple(dense), c))
    out.sort(key=lambda mc: mc[0], reverse=True)
    return out


def total_degree(expr, gens) -> int:
    """Total degree of an expanded polynomial ``expr`` in ``gens`` (``Poly.total_degree``)."""
    return max((sum(m) for m, _ in poly_terms(expr, gens)), default=0)


def _derivative(e, x, cache):
    """``e.diff(x)``, with every factor's derivative computed once (structurally equal)."""
    key = (e, x)
    if key in cache:
        return cache[key]
    if x not in e.free_symbols:
        d = sp.Integer(0)
    elif e.is_Pow and x not in e.exp.free_symbols:
        # Pow._eval_derivative with a constant exponent (dexp * log(base) = 0), the base's
        # derivative from the cache: the same expression without sympy's Derivative machinery
        # (its assumption queries cost ~20 ms a call on a chain's cubic links, issue 28)
        d = e * (_derivative(e.base, x, cache) * e.exp / e.base)
    elif e.is_Add:
        d = sp.Add(*[_derivative(a, x, cache) for a in e.args])
    elif e.is_Mul:
        # Mul._eval_derivative_n_times for n = 1: the sum over the factors of the product with
        # that factor differentiated (general Leibniz rule)
        args = e.args
        d = sp.Add(*[sp.Mul(*(args[:i] + (di,) + args[i + 1:]))
                     for i, a in enumerate(args) for di in (_derivative(a, x, cache),) if di != 0])
    else:
        d = e.diff(x)
    cache[key] = d
    return d


def jacobian(f, states):
    """``Matrix(f).jacobian(states)`` as a sympy Matrix, differentiating term by term.

    Only the states in a row's free symbols are differentiated (the others give a structural
    zero without a walk of the row): the cost grows with the nonzero entries, not with
    ``len(f) * len(states)`` walks (a chain of 200 states, issue 28)."""
    cache: dict = {}
    zero = sp.Integer(0)
    rows = []
    for fi in f:
        fi = sp.sympify(fi)
        free = fi.free_symbols
        rows.append([_derivative(fi, x, cache) if x in free else zero for x in states])
    return sp.Matrix(rows)
