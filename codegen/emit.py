"""Render a :class:`~.recast.RecastSystem` into NumPy and Cython model modules (jinja2).

Every expression is printed here by a sympy printer; the templates in ``templates/``
only loop over the printed lines (STYLE §1).  Both modules honour the generated-model
interface documented in ``frictionkit.runtime.model._interface``.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import jinja2
import sympy as sp

from ._progress import report
from .build import TEMPLATES
from .printers import (CModelPrinter, NumPyModelPrinter, PrintError, cse_lines, hoist_parameter_only,
                       print_order)
from .recast import GENERATOR_VERSION, RecastSystem
from .taylor import pointwise_recast, taylor_context

#: libm functions with SIMD variants for SSE4, AVX, AVX2 and AVX-512 in glibc >= 2.35's libmvec
#: (x86-64; checked with ``nm -D libmvec.so.1``), and their number of arguments
LIBMVEC_FUNCTIONS = {**dict.fromkeys(("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh",
                                      "erf", "erfc", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2",
                                      "sin", "sinh", "tan", "tanh"), 1),
                     "atan2": 2, "hypot": 2, "pow": 2}
_env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), trim_blocks=True,
                          lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)



#: odd functions: a point condition r + f(c v) is r - f(-c v)
_ODD = (sp.tanh, sp.atan, sp.sin)


@dataclass
class _Block:
    temps: list
    out: list
    tempdecl: str = ""


@dataclass
class _Kernel:
    """Printed lines of one C kernel: per call (parameters, hoisted parameter-only
    sub-expressions) and per sample (states, common sub-expressions, outputs)."""

    params: list
    hoisted: list
    states: list
    temps: list
    out: list
    uses_time: bool
    zero_fill: int = 0           # output rows set to zero before the sample loop (0: none)


def _c_kernel(system: RecastSystem, exprs, out_index, names) -> _Kernel:
    """C lines computing ``exprs`` at every sample; ``out_index(k)`` the k-th output slot."""
    cp = CModelPrinter(dict(names), print_order(system.n_vars))
    body, hoisted = hoist_parameter_only(exprs, system.parameters)
    h_lines, h_out, _ = cse_lines([e for _, e in hoisted], cp, prefix="_h")
    for (sym, _), e in zip(hoisted, h_out):
        cp._names[sym] = sym.name
    h_lines += [f"{sym.name} = {e}" for (sym, _), e in zip(hoisted, h_out)]
    temps, outs, _ = cse_lines(body, cp, prefix="_f")
    used = set().union(*[sp.sympify(e).free_symbols for e in exprs]) if exprs else set()
    params = [f"{names[p]} = p[{k}]" for k, p in enumerate(system.parameters) if p in used]
    states = [f"{names[x]} = x[{i} * M + m]" for i, x in enumerate(system.states) if x in used]
    for line in temps + outs + h_lines:
        if "?" in line:
            raise PrintError("conditional expressions (Piecewise) cannot be compiled; use backend='numpy'")
    return _Kernel(params, h_lines, states, temps, [f"{out_index(k)} = {e}" for k, e in enumerate(outs)],
                   system.time in used)


def _simd_declarations(kernels, lines=()) -> list:
    """C declarations, for ``#pragma omp declare simd``, of the libmvec functions the printed
    lines of ``kernels`` and the further ``lines`` (the Taylor kernel's) call (only those: the
    generated module declares nothing it does not use)."""
    text = "\n".join([line for k in kernels for line in k.hoisted + k.temps + k.out] + list(lines))
    used = sorted(f for f in LIBMVEC_FUNCTIONS if re.search(rf"\b{f}\(", text))
    return [f"double {f}({', '.join(['double'] * LIBMVEC_FUNCTIONS[f])})" for f in used]


def _quad_sums(system: RecastSystem, pairs, template):
    """Lines ``out[slot] = sum of qc * u`` of the Jacobian of Q(u, u), one per (row, column)
    pair; a square term ``qc u_i u_i`` gives ``2 qc u_i`` once (symmetric terms once)."""
    sums = {pc: [] for pc in pairs}
    for t, (k, i, j, _) in enumerate(system.Q):
        if i == j:
            sums[(k, i)].append(f"2.0 * qc{t} * {template.format(i)}")
        else:
            sums[(k, i)].append(f"qc{t} * {template.format(j)}")
            sums[(k, j)].append(f"qc{t} * {template.format(i)}")
    return [" + ".join(sums[pc]) for pc in pairs]


def _names(system: RecastSystem, time_name: str, ascii_only: bool = False) -> dict:
    """Names of the parameters, states and time in generated code.

    User names are prefixed (``p_<param>``, ``x_<state>``) so that they never meet the
    generated code's own locals (``out``, ``m``, ``_f0``...; user names cannot start with
    an underscore).  ``ascii_only`` (C kernels): a non-ASCII name becomes its index
    (``p_3``), which no user name can produce (names cannot start with a digit).
    """
    def name(prefix, sym, k):
        return f"{prefix}{sym.name}" if sym.name.isascii() or not ascii_only else f"{prefix}{k}"
    names = {p: name("p_", p, k) for k, p in enumerate(system.parameters)}
    names.update({x: name("x_", x, k) for k, x in enumerate(system.states)})
    names[system.time] = time_name
    return names


def docstring_text(text: str) -> str:
    """``text`` made safe inside a triple-quoted (non-raw) docstring of generated code.

    Backslashes and double quotes are escaped (so no user string can close the docstring
    and have the rest run at import), and every non-printable character (newlines, NUL,
    line and paragraph separators...) is written as its escape: one header line per item.
    """
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)


#: what each operator array of ``operators(p)`` holds (the generated header lists it)
OPERATOR_DOC = (
    "mass (N,): m_i of each row (0 for algebraic and derivative-bilinear rows)",
    "c0, c1 (N,): constant and lam-proportional terms of each row",
    "L0, L1 (N, N): linear and lam-proportional linear terms, row i, column k",
    "qc (NQ,): coefficient of term t of Q, qc[t] * u[Q_I[t]] * u[Q_J[t]] in row Q_K[t]",
    "fc0, fs0, fc1, fs1 (N,): forcing (fc0 + lam fc1) cos(w t) + (fs0 + lam fs1) sin(w t)",
    "A (N, N), bc (NB,): derivative-bilinear rows, (A u')_i + bc[t] u[B_J[t]] u'[B_L[t]] in row B_K[t]",
    "pc (NP,): coefficient c of point condition k, u_r(0) - f(c u_v(0))",
)


def _header(system: RecastSystem, backend: str) -> str:
    lines = [f"generated by frictionkit codegen {GENERATOR_VERSION} — do not edit.", "",
             f"Model {system.name!r}: {system.description}",
             f"Continuation parameter (lam): {system.continuation}. Backend: {backend}. "
             f"Model hash: {system.model_hash}.",
             f"Regenerate with: frictionkit codegen {system.name} --param {system.continuation}", "",
             "Parameters, p[k] (default, unit):"]
    for k, (p, d, u) in enumerate(zip(system.parameters, system.defaults, system.units)):
        lines.append(f"    {k:2d}  {p.name} = {d!r} {u}".rstrip())
    lines.append("Variables, u[k] (kind: definition):")
    defs = dict(system.definitions)
    for k, (v, kind) in enumerate(zip(system.variables, system.kinds)):
        d = "original state" if v in system.states else f"{v} = {sp.sstr(defs.get(v, v))}"
        lines.append(f"    {k:2d}  {v} ({kind}: {d})")
    if not system.sampled:
        lines += ["Operator arrays, operators(p) (N variables, NQ quadratic terms):"]
        lines += [f"    {d}" for d in OPERATOR_DOC]
    lines += ["", "Recast, as `frictionkit codegen --explain` prints it:"]
    explained = _once(system, "explain", lambda: system.explain(order=print_order(system.n_vars)))
    lines += [f"    {line}" if line else "" for line in explained.splitlines()]
    body = "\n".join(docstring_text(line) for line in lines)
    return f'"""{body}\n"""'


def _dfdlam_entries(system: RecastSystem):
    """The nonzero entries ``(i, df_i/dlam)`` of the original ODE's derivative in ``lam``
    (exact: the shooting Jacobian's ``lam`` column, the AFT Jacobian's), or ``None`` where the
    derivative is not a plain function (a non-analytic law's ``sign`` gives a ``DiracDelta``);
    the runtime then differentiates numerically."""
    lam = next(p for p in system.parameters if p.name == system.continuation)
    d = [sp.diff(e, lam) for e in system.ode_rhs]
    if any(e.has(sp.DiracDelta, sp.Derivative, sp.Subs) for e in d):
        return None
    return [(i, e) for i, e in enumerate(d) if e != 0]


def _dfdlam_block(system: RecastSystem, printer):
    """The NumPy module's ``dfdlam`` lines (:func:`_dfdlam_entries`), or ``None``."""
    entries = _dfdlam_entries(system)
    if entries is None:
        return None
    temps, outs, _ = cse_lines([e for _, e in entries], printer, prefix="_h")
    return _Block(temps, [f"out[{i}] = {e}" for (i, _), e in zip(entries, outs)])


def _dfdlam_c(system: RecastSystem, names):
    """The compiled ``dfdlam`` kernel (every entry written, zeros too: no zero fill), or
    ``None`` where the NumPy module has no exact one or C cannot print it (a ``Piecewise``):
    the joined module then keeps the NumPy ``dfdlam``."""
    entries = _dfdlam_entries(system)
    if entries is None:
        return None
    try:
        kernel = _c_kernel(system, [e for _, e in entries], lambda k: f"out[{entries[k][0]} * M + m]", names)
    except PrintError:
        return None
    written = {i for i, _ in entries}
    kernel.out += [f"out[{i} * M + m] = 0.0" for i in range(system.n_states) if i not in written]
    return kernel


def kinematic_pairs(system: RecastSystem) -> tuple:
    """The kinematic state equations ``x_i' = x_j`` of the original ODE, as pairs ``(i, j)``.

    Exact (sympy's structural equality of ``f_i`` with the state symbol ``x_j``), e.g. the
    position equation of every ``second_order`` declaration.  ``j`` is not itself kinematic
    and appears once, so the runtime can eliminate each ``x_j`` with the equations of ``x_i``
    (the AFT's bordered LU, ``runtime/engine/_bordered.py``)."""
    index = {x: k for k, x in enumerate(system.states)}
    rhs = list(system.ode_rhs)
    kinematic = {i: index[f] for i, f in enumerate(rhs) if f in index and index[f] != i}
    pairs, used = [], set()
    for i, j in sorted(kinematic.items()):
        if j not in kinematic and j not in used:
            pairs.append((i, j))
            used.add(j)
    return tuple(pairs)


def _contact_laws_use_lam(system: RecastSystem) -> bool:
    """Whether a contact's friction law (a function of the relative velocity) involves the
    continuation parameter: the limit velocity ``V_n`` of the motion labels is then searched
    at every parameter value, else once per branch (``analysis/_motion.py``)."""
    lam = next(p for p in system.parameters if p.name == system.continuation)
    return any(c[2] is not None and lam in sp.sympify(c[2]).free_symbols for c in system.contacts)


#: the parts of a backend's sources named in the progress of a generation (``_progress.py``)
_PARTS = ("auxiliaries", "right-hand side", "Jacobian", "Taylor kernel")
_PARTS_C = _PARTS + ("C right-hand side", "C Jacobian", "C auxiliaries")


def _parts(backend: str):
    """``step(part)``: report that the sources of ``backend`` start ``part`` (of :data:`_PARTS`)."""
    parts = _PARTS_C if backend == "cython" else _PARTS
    label = f"{'Cython' if backend == 'cython' else 'NumPy'} sources:"

    def step(part):
        report(f"{label} {part}", parts.index(part), len(parts))
    return step


def _context(system: RecastSystem, backend: str) -> dict:
    ascii_only = backend == "cython"
    order = print_order(system.n_vars)
    npp = NumPyModelPrinter(_names(system, "t", ascii_only), order)
    idx = {v: i for i, v in enumerate(system.variables)}
    pnames = [_names(system, "t", ascii_only)[p] for p in system.parameters]
    ctx = dict(
        name=system.name, hash=system.model_hash, version=GENERATOR_VERSION,
        continuation=system.continuation, parameters=repr(tuple(p.name for p in system.parameters)),
        defaults=repr(tuple(float(d) for d in system.defaults)), units=repr(tuple(system.units)), state_units=repr(tuple(system.state_units)),
        time_unit=repr(system.time_unit),
        states=repr(tuple(x.name for x in system.states)),
        variables=repr(tuple(v.name for v in system.variables)), kinds=repr(tuple(system.kinds)),
        forcing_frequency=repr(system.forcing_frequency), validity=repr(tuple(system.validity)),
        definitions=repr(tuple(f"{s} = {sp.sstr(d, order=order)}" for s, d in system.definitions)),
        lam_as_variable=repr(system.lam_as_variable), sampled=repr(system.sampled),
        kinematic=repr(kinematic_pairs(system)),
        QK=repr([q[0] for q in system.Q]), QI=repr([q[1] for q in system.Q]), QJ=repr([q[2] for q in system.Q]),
        BK=repr([b[0] for b in system.B]), BJ=repr([b[1] for b in system.B]), BL=repr([b[2] for b in system.B]),
        point_rows=repr(tuple(system.point_rows)), contacts=repr(tuple(c[0] for c in system.contacts)),
        contact_laws_use_lam=repr(_contact_laws_use_lam(system)),
        N=system.n_vars, n=system.n_states, NQ=len(system.Q), NB=len(system.B),
        NPARAM=len(system.parameters),
        unpack=", ".join(pnames) + ", = p",
        header=_header(system, backend), backend=backend,
    )
    pr = npp.doprint
    ops = []
    for i, m in enumerate(system.mass):
        if m != 0:
            ops.append(f"mass[{i}] = {pr(m)}")
    for name, vec in (("c0", system.c0), ("c1", system.c1)):
        ops += [f"{name}[{i}] = {pr(c)}" for i, c in enumerate(vec) if c != 0]
    for name, entries in (("L0", system.L0), ("L1", system.L1), ("A", system.A)):
        ops += [f"{name}[{i}, {j}] = {pr(c)}" for i, j, c in entries]
    ops += [f"qc[{t}] = {pr(c)}" for t, (_, _, _, c) in enumerate(system.Q)]
    ops += [f"bc[{t}] = {pr(c)}" for t, (_, _, _, c) in enumerate(system.B)]
    for name, vec in zip(("fc0", "fs0", "fc1", "fs1"), system.forcing):
        ops += [f"{name}[{i}] = {pr(c)}" for i, c in enumerate(vec) if c != 0]
    ctx["operator_lines"] = ops
    snames = _names(system, "t", ascii_only)
    ctx["state_unpack"] = [f"{snames[x]} = x[{i}]" for i, x in enumerate(system.states)]
    defs = dict(system.definitions)
    aux_exprs = [v if v in system.states else defs[v] for v in system.variables]
    step = _parts(backend)
    step("auxiliaries")
    temps, outs, _ = cse_lines(aux_exprs, npp, prefix="_a")
    ctx["aux_lines"] = temps + [f"out[{k}] = {e}" for k, e in enumerate(outs)]
    # structure of each point condition r - f(c * v), for the ANM's power-series recurrences
    funcs, args, pcs = [], [], []
    for r, e in zip(system.point_rows, system.point_exprs):
        # the function of the variables (a coefficient may hold functions of parameters only,
        # e.g. exp(x*exp(a/4)/4): c = exp(a/4)/4)
        fn = [node for node in sp.preorder_traversal(e)
              if isinstance(node, sp.Function) and node.has(*system.variables)]
        sign = 1
        if len(fn) == 1 and type(fn[0]) in _ODD and sp.expand(e - (system.variables[r] + fn[0])) == 0:
            # sympy writes tanh(-w) as -tanh(w): r + f(c v) with f odd is r - f(-c v)
            sign = -1
        elif len(fn) != 1 or sp.expand(e - (system.variables[r] - fn[0])) != 0:
            raise PrintError(f"point condition {e} is not of the form r - f(c*v)")
        c, v = fn[0].args[0].as_independent(*system.variables, as_Add=False)
        c = sign * c
        funcs.append(type(fn[0]).__name__)
        args.append(idx[v])
        pcs.append(c)
    ctx["point_funcs"] = repr(tuple(funcs))
    ctx["point_args"] = repr(tuple(args))
    ctx["NP"] = len(pcs)
    ctx["operator_lines"] += [f"pc[{k}] = {pr(c)}" for k, c in enumerate(pcs)]
    up = NumPyModelPrinter({**_names(system, "t", ascii_only), **{v: f"u0[{k}]" for k, v in enumerate(system.variables)}}, order)
    ctx["point_lines"] = [f"out[{r}] = {up.doprint(e)}" for r, e in enumerate(system.point_exprs)]
    ctx["point_jac_lines"] = [f"out[{r}, {k}] = {up.doprint(sp.diff(e, v))}"
                              for r, e in enumerate(system.point_exprs)
                              for k, v in enumerate(system.variables) if sp.diff(e, v) != 0]
    ctx["contact_velocity_lines"] = [f"out[{k}] = {pr(c[1])}" for k, c in enumerate(system.contacts)]
    law_lines = []
    vr = sp.Symbol("_vr", real=True)
    for k, c in enumerate(system.contacts):
        lp = NumPyModelPrinter({**_names(system, "t", ascii_only), vr: f"vr[{k}]"}, order)
        # None: a law with internal states whose steady sliding has no closed form (NaN: the
        # motion labels of the contact are unknown, ModelSpec.steady_sliding_law)
        law_lines.append(f"out[{k}] = {lp.doprint(c[2]) if c[2] is not None else 'numpy.nan'}")
    ctx["contact_law_lines"] = law_lines
    # the contacts' forces in the states' equations (recast._contact_forces): a row per nonzero
    # force, NaN rows where an equation is not linear in the contact's coefficient
    force_lines = []
    for k, c in enumerate(system.contacts):
        if c[3] is None:
            force_lines.append(f"out[{k}] = numpy.nan")
        else:
            force_lines += [f"out[{k}, {i}] = {pr(e)}" for i, e in enumerate(c[3]) if e != 0]
    ctx["contact_force_lines"] = force_lines
    ctx["quad_np"] = [f"out[{k}] += qc[{t}] * a[{i}] * b[{j}]" for t, (k, i, j, _) in enumerate(system.Q)]
    # square terms qc u_i u_i: one line with the factor 2 (symmetric terms once)
    ctx["quad_jac_np"] = [line for t, (k, i, j, _) in enumerate(system.Q)
                          for line in ((f"out[{k}, {i}] += 2 * qc[{t}] * u[{i}]",) if i == j else
                                       (f"out[{k}, {i}] += qc[{t}] * u[{j}]", f"out[{k}, {j}] += qc[{t}] * u[{i}]"))]
    # sparse Jacobian of Q(u, u): one output row per structurally nonzero entry (k, col)
    pairs = []
    for k, i, j, _ in system.Q:
        for col in (i, j):
            if (k, col) not in pairs:
                pairs.append((k, col))
    pos = {pc: e for e, pc in enumerate(pairs)}
    ctx["JQ_K"] = repr([k for k, _ in pairs])
    ctx["JQ_COL"] = repr([c for _, c in pairs])
    ctx["NJQ"] = len(pairs)
    ctx["quad_jac_sparse_np"] = [line for t, (k, i, j, _) in enumerate(system.Q)
                                 for line in ((f"out[{pos[(k, i)]}] += 2 * qc[{t}] * u[{i}]",) if i == j else
                                              (f"out[{pos[(k, i)]}] += qc[{t}] * u[{j}]",
                                               f"out[{pos[(k, j)]}] += qc[{t}] * u[{i}]"))]
    step("right-hand side")
    t_, o_, _ = cse_lines(system.ode_rhs, npp, prefix="_f")
    ctx["rhs_np"] = _Block(t_, [f"out[{i}] = {e}" for i, e in enumerate(o_)])
    jac_entries = [(i, j, e) for i, row in enumerate(system.ode_jac) for j, e in enumerate(row) if e != 0]
    step("Jacobian")
    t_, o_, _ = cse_lines([e for _, _, e in jac_entries], npp, prefix="_g")
    ctx["jac_np"] = _Block(t_, [f"out[{i}, {j}] = {e}" for (i, j, _), e in zip(jac_entries, o_)])
    ctx["dfdlam_np"] = _dfdlam_block(system, npp)
    # parameter conditions, checked by check_parameters(p) when a model is loaded
    conds = [(w, kind, e) for w, kind, e in system.parameter_conditions]
    ctx["conditions"] = repr(tuple((w, kind, sp.sstr(e), tuple(sorted(str(x) for x in e.free_symbols)))
                                   for w, kind, e in conds))
    ctx["condition_lines"] = [pr(e) for _, _, e in conds]
    ctx["taylor"], ctx["NAUX"] = not system.sampled, 0
    if ctx["taylor"]:
        step("Taylor kernel")
        ctx.update(_taylor(system, backend))
    if backend == "cython":
        names = _names(system, "tm", ascii_only=True)
        n, N = system.n_states, system.n_vars
        ctx["unpack"] = ", ".join(names[p] for p in system.parameters) + ", = p"
        step("C right-hand side")
        ctx["rhs_c"] = _c_kernel(system, system.ode_rhs, lambda k: f"out[{k} * M + m]", names)
        step("C Jacobian")
        ctx["jac_c"] = _c_kernel(system, [e for _, _, e in jac_entries],
                                 lambda k: f"out[{jac_entries[k][0] * n + jac_entries[k][1]} * M + m]", names)
        # structural zeros written by the kernel too: the wrapper's output needs no zero fill.
        # One statement per zero up to SORTED_PRINT_MAX_VARIABLES variables (the zoo's text);
        # above, one fill loop: a 200-state chain has 40,000 zeros, 99% of its C (issue 28)
        nonzero = {(i, j) for i, j, _ in jac_entries}
        if print_order(N) is None:
            ctx["jac_c"].out += [f"out[{i * n + j} * M + m] = 0.0" for i in range(n) for j in range(n)
                                 if (i, j) not in nonzero]
        else:
            ctx["jac_c"].zero_fill = n * n
        # the auxiliaries' definitions (principal branches): the validity check and the start
        # of every AFT / shooting point rebuild all N variables from the states
        step("C auxiliaries")
        ctx["aux_c"] = _c_kernel(system, aux_exprs, lambda k: f"out[{k} * M + m]", names)
        ctx["dfdlam_c"] = _dfdlam_c(system, names)
        kernels = [k for k in (ctx["rhs_c"], ctx["jac_c"], ctx["aux_c"], ctx["dfdlam_c"]) if k is not None]
        ctx["simd_decls"] = _simd_declarations(kernels,
                                               ctx.get("taylor_c_ops", []) + ctx.get("taylor_c", [])
                                               + ctx.get("taylor_f_c", []))
        ctx["qc_c"] = [f"qc{t} = qc[{t}]" for t in range(len(system.Q))]
        rows = {}
        for t, (k, i, j, _) in enumerate(system.Q):
            rows.setdefault(k, []).append(f"qc{t} * a[{i} * M + m] * b[{j} * M + m]")
        ctx["quad_c"] = [f"out[{k} * M + m] = {' + '.join(rows[k]) if k in rows else '0.0'}" for k in range(N)]
        ctx["quad_jac_c"] = [f"out[{k * N + c} * M + m] = {e}"
                             for (k, c), e in zip(pairs, _quad_sums(system, pairs, "u[{} * M + m]"))]
        ctx["quad_jac_sparse_c"] = [f"out[{e} * M + m] = {line}"
                                    for e, line in enumerate(_quad_sums(system, pairs, "u[{} * M + m]"))]
    return ctx


_LAST: dict = {}


def _once(system: RecastSystem, what: str, make):
    """``make()``, kept for the last system rendered: both backends' renderings of one system
    share its pointwise recast and its explanation (seconds each for a 200-state chain)."""
    key = (id(system), what)
    hit = _LAST.get(key)
    if hit is None or hit[0] is not system:
        if any(s is not system for s, _ in _LAST.values()):
            _LAST.clear()
        hit = _LAST[key] = (system, make())
    return hit[1]


def _taylor(system: RecastSystem, backend: str) -> dict:
    """Printed lines of the Taylor kernel of the pointwise recast (DESIGN §5.0)."""
    pw = _once(system, "pointwise", lambda: pointwise_recast(system))
    order = print_order(system.n_vars)
    if backend == "numpy":
        return taylor_context(pw, _names(system, "t"), functools.partial(NumPyModelPrinter, order=order),
                              order=order)
    names = _names(system, "tm", ascii_only=True)
    ctx = taylor_context(pw, names, functools.partial(NumPyModelPrinter, order=order),
                         functools.partial(CModelPrinter, order=order), order=order)
    ctx["taylor_c_params"] = [f"{names[q]} = p[{k}]" for k, q in enumerate(system.parameters)]
    return ctx


def render(system: RecastSystem, backend: str) -> str:
    """Source text of the generated module for ``backend`` ("numpy" or "cython")."""
    if backend not in ("numpy", "cython"):
        raise ValueError(f"unknown backend {backend!r}; choose 'numpy' or 'cython'")
    tpl = _env.get_template("numpy_module.py.j2" if backend == "numpy" else "cython_module.pyx.j2")
    return tpl.render(s=_context(system, backend))
