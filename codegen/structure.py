"""Recognising a symbolic model that is linear but for its contacts (DESIGN §6, issue 24 item 5).

A model written the way the README teaches for a few states — one ``m.second_order`` per mode
of a string, a chain of masses, the contact's relative velocity as a sum of states — is often
linear except through its friction contacts: every equation is

    x_i' = sum_j A_ij x_j + sum_s B_is F_s,     F_s in {FN mu_c(w_c + d_c), cos(w t), sin(w t), 1}

with ``w_c = sum_j C_cj x_j`` the part of contact c's relative velocity that is linear in the
states (``d_c`` the rest: parameters such as the belt's speed).  :func:`split_linear` finds
that form by one linear scan of each equation (no recast, no term-by-term expansion of the
structure: the coefficients stay sympy expressions of the parameters, evaluated when the model
is loaded), and returns the *port model* of the contacts and the forcing alone (the one codegen
generates, whatever the number of states) with the coefficients of ``A``, ``B`` and ``C``.  The
runtime then gives the model the condensed harmonic balance of structures
(``runtime/discretizations/_condensed.py``).

It recognises a model when

* no structure is declared, the model is analytic (not ``sampled``), has no algebraic
  variables and at least one friction contact;
* every state equation is linear in the states, the contacts' coefficients and the harmonic
  forcing, with coefficients that are parameter expressions without the time;
* every contact's relative velocity is affine in the states;
* the continuation parameter is not in ``A``, ``C``, nor in the ratios of a column of ``B``
  (a common factor such as the normal load goes into the port model's force);
* it pays: ``ModelSpec(condense=True)``, or by default at least 8 states and at least four
  states per contact.

Otherwise the model takes the usual path (recast, generated code for every state).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec
from frictionkit.modelspec.spec import PortLayout

__all__ = ["LinearSplit", "split_linear"]

#: default recognition: at least this many states, and this many states per contact
MIN_STATES, STATES_PER_CONTACT = 8, 4


@dataclass(frozen=True)
class LinearSplit:
    """A model split into its linear part and its port model (:func:`split_linear`).

    Attributes
    ----------
    port : ModelSpec
        The contacts and the forcing: states ``w_c`` (the contacts' linear inputs, ``w' = 0``)
        then one force slot per column of ``B`` (``F_s' = force``).
    layout : PortLayout
        Its layout (points are None: the linear part is not a structure of points).
    states : tuple of str
        The linear part's states: the model's states, in order.
    A, B, C : tuple of (int, int, sympy.Expr)
        Nonzero entries of ``A`` (n x n), ``B`` (n x n_F) and ``C`` (n_in x n), expressions of
        the parameters.
    parameters : tuple of str
        The parameters the entries depend on.
    fingerprint : str
        Hash of the entries (the model's hash includes it).
    """

    port: ModelSpec
    layout: PortLayout
    states: tuple
    A: tuple
    B: tuple
    C: tuple
    parameters: tuple
    fingerprint: str

    def evaluator(self, parameters):
        """``p -> (A, B, C)`` as float arrays, for the parameter vector ``p`` in the order of
        ``parameters`` (the generated module's ``PARAMETERS``): the entries printed once by
        sympy's NumPy printer (``lambdify``), evaluated at load and when parameters change."""
        syms = [sp.Symbol(name, real=True) for name in parameters]
        n, n_in, n_F = len(self.states), len(self.layout.inputs), len(self.layout.forces)
        blocks = [(self.A, (n, n)), (self.B, (n, n_F)), (self.C, (n_in, n))]
        funcs = [sp.lambdify([syms], [e for *_, e in entries] or [0], "numpy") for entries, _ in blocks]
        index = [(np.array([i for i, _, _ in entries], dtype=int), np.array([j for _, j, _ in entries], dtype=int))
                 for entries, _ in blocks]

        def evaluate(p):
            out = []
            for f, (entries, shape), (rows, cols) in zip(funcs, blocks, index):
                M = np.zeros(shape)
                if entries:
                    np.add.at(M, (rows, cols), np.broadcast_to(np.asarray(f(list(p)), dtype=float), rows.shape))
                out.append(M)
            return tuple(out)
        return evaluate


def _expand_except(spec, expr, keep):
    """``expr`` with every definition substituted except the symbols in ``keep``."""
    subs = {sym: e for sym, e in spec.definitions.values() if sym not in keep}
    for _ in range(len(subs) + 1):
        new = expr.xreplace(subs)
        if new == expr:
            return new
        expr = new
    return expr


def _terms(expr, dynamic, t):
    """``{atom: coefficient}`` of an expression linear in ``dynamic`` symbols and in the forcing
    ``cos(. t)``, ``sin(. t)`` (atom ``1`` for the rest), or None if it is not."""
    out = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        coef, rest = term.as_independent(*dynamic, t, as_Add=False)
        if rest == 1:
            atom = sp.Integer(1)
        elif rest in dynamic:
            atom = rest
        elif isinstance(rest, (sp.cos, sp.sin)) and rest.free_symbols & {t} and not (rest.free_symbols & dynamic):
            atom = rest
        else:
            return None
        if t in coef.free_symbols:
            return None
        out[atom] = out.get(atom, sp.Integer(0)) + coef
    return {a: c for a, c in out.items() if c != 0}


def split_linear(spec: ModelSpec, continuation: str):
    """The :class:`LinearSplit` of ``spec``, or None if it is not linear but for its contacts
    (module docstring)."""
    if spec.linear_structure is not None or spec.sampled or spec.algebraic or not spec.contacts:
        return None
    choice = getattr(spec, "condense", None)
    if choice is False:
        return None
    states = list(spec.states)
    if choice is None and (len(states) < MIN_STATES or len(states) < STATES_PER_CONTACT * len(spec.contacts)):
        return None
    t = spec.t
    lam = spec.parameters[continuation].symbol if continuation in spec.parameters else None
    mus = {c.coefficient for c in spec.contacts}
    sset = set(states)
    dynamic = sset | mus
    # the contacts' inputs: the part of each relative velocity linear in the states
    C, offsets = [], []
    for c in spec.contacts:
        vr = spec.expand_definitions(c.relative_velocity)
        terms = _terms(vr, sset, t)
        if terms is None or any(isinstance(a, (sp.cos, sp.sin)) for a in terms):
            return None
        row = {states.index(a): e for a, e in terms.items() if a in sset}
        if not row or any(lam is not None and lam in e.free_symbols for e in row.values()):
            return None
        C.append(row)
        offsets.append(terms.get(sp.Integer(1), sp.Integer(0)))
    # the equations: linear in the states, the contacts' coefficients and the forcing
    A, columns = [], {}
    for i, x in enumerate(states):
        rhs = _expand_except(spec, spec.odes[x], mus) / spec.masses.get(x, sp.Integer(1))
        terms = _terms(rhs, dynamic, t)
        if terms is None:
            return None
        for atom, coef in terms.items():
            if atom in sset:
                if lam is not None and lam in coef.free_symbols:
                    return None
                A.append((i, states.index(atom), coef))
            else:
                columns.setdefault(atom, {})[i] = coef
    # a column's common factor (e.g. the normal load, maybe the continuation parameter) goes
    # into the port model's force; the ratios must not hold the continuation parameter
    port = ModelSpec(spec.name, spec.description, False, spec.time_unit, t=t)
    port.parameters = dict(spec.parameters)
    port.forcing_frequency = spec.forcing_frequency
    taken = set(spec.parameters) | {x.name for x in states} | set(spec.definitions) | {c.name for c in spec.contacts}

    def fresh(base):
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    inputs = []
    for c, row in zip(spec.contacts, C):
        w = sp.Symbol(fresh(f"w_{c.name}"), real=True)
        port.states.append(w)
        port.odes[w] = sp.Integer(0)
        port.state_units[w.name] = ""
        inputs.append((w.name, None, "input"))
    coefs = {}
    for c, (wname, _, _), off in zip(spec.contacts, inputs, offsets):
        w = sp.Symbol(wname, real=True)
        coefs[c.coefficient] = port.friction(c.name, c.law, w + off, **c.law_params)
    B, forces, forcing, timed = [], [], [], []
    for s, (atom, col) in enumerate(sorted(columns.items(), key=lambda kv: sp.default_sort_key(kv[0]))):
        rows = sorted(col)
        ref = col[rows[0]]
        for i in rows:
            ratio = sp.cancel(col[i] / ref)
            if lam is not None and lam in ratio.free_symbols:
                return None
            B.append((i, s, ratio))
        name = fresh(f"F{s}")
        sym = sp.Symbol(name, real=True)
        port.states.append(sym)
        port.odes[sym] = ref * coefs.get(atom, atom)
        port.state_units[name] = ""
        forces.append((name, None))
        if t in atom.free_symbols:
            timed.append(name)
            forcing.append(name)
    layout = PortLayout(tuple(inputs), (), tuple(forces), None, tuple(forcing), tuple(timed))
    Crows = tuple((ci, j, e) for ci, row in enumerate(C) for j, e in sorted(row.items()))
    entries = [e for *_, e in A] + [e for *_, e in B] + [e for *_, e in Crows]
    params = sorted({s.name for e in entries for s in e.free_symbols})
    text = sp.srepr([tuple(A), tuple(B), Crows, [x.name for x in states]])
    return LinearSplit(port, layout, tuple(x.name for x in states), tuple(A), tuple(B), Crows, tuple(params),
                       hashlib.sha256(text.encode()).hexdigest()[:16])
