"""Recast exactness: auxiliaries from their definitions satisfy every row; the
differential rows reproduce the original right-hand side (issue 2)."""
import os

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, HealthCheck, strategies as st

from frictionkit.codegen import generate_sources, recast
from frictionkit.codegen.api import _module_from_source
from frictionkit.modelspec import ModelSpec, zoo_model
from tests.codegen.zoo_cases import CASES, random_point
from tests.models import belt_handwritten as hw


def quadratic_rows(mod, u, t, p):
    """Right-hand side of every row of the quadratic system on samples u (N, M)."""
    ops = mod.operators(p)
    lam = p[mod.PARAMETERS.index(mod.CONTINUATION)]
    R = (ops["c0"] + lam * ops["c1"])[:, None] + (ops["L0"] + lam * ops["L1"]) @ u + mod.quad(ops["qc"], u, u)
    if mod.FORCING_FREQUENCY is not None:
        w = p[mod.PARAMETERS.index(mod.FORCING_FREQUENCY)]
        R += np.outer(ops["fc0"] + lam * ops["fc1"], np.cos(w * t)) + np.outer(ops["fs0"] + lam * ops["fs1"], np.sin(w * t))
    return R, ops


def check_exact(mod, p, x, t):
    u = mod.aux(x, t, p)
    R, ops = quadratic_rows(mod, u, t, p)
    n = len(mod.STATES)
    scale = 1 + np.abs(u).max(axis=1)[:, None]
    alg = [i for i, k in enumerate(mod.KINDS) if k == "algebraic"]
    # algebraic rows vanish (relative to the size of the variables involved)
    if alg:
        assert np.max(np.abs(R[alg]) / scale[alg] ** 2) < 1e-12
    f = mod.rhs(t, x, p)
    np.testing.assert_allclose(R[:n] / ops["mass"][:n, None], f, rtol=1e-11, atol=1e-11 * np.abs(f).max())
    dbil = [i for i, k in enumerate(mod.KINDS) if k == "derivative_bilinear"]
    if dbil:
        # u' along the flow by a 4th-order central difference of aux(x(t)); rows a u' + b u u' vanish
        h = 1e-4 / (1 + np.abs(f).max())

        def quotient(h):
            def at(s):
                return mod.aux(x + s * h * f, t + s * h, p)
            return (8 * (at(1) - at(-1)) - (at(2) - at(-2))) / (12 * h)

        du = quotient(h)
        # the quotient's truncation error, estimated by halving h (fourth order: the error at
        # h is 16/15 of the difference); it matters where an auxiliary oscillates fast along
        # the flow (hypothesis: sin + cos of (b + (a + x)^2)^(9/2), an argument of ~700)
        trunc = np.abs(du - quotient(h / 2)) * 16 / 15
        D = ops["A"] @ du
        size = np.abs(ops["A"]) @ np.abs(du)          # magnitude of the row's own terms
        # rounding of the difference quotient: about eps |u| / h per differentiated variable
        noise = np.abs(ops["A"]) @ np.abs(u) * (10 * np.finfo(float).eps / h)
        bound = np.abs(ops["A"]) @ trunc
        for c, k, j, l in zip(ops["bc"], mod.B_K, mod.B_J, mod.B_L):
            D[k] += c * u[j] * du[l]
            size[k] += abs(c * u[j] * du[l])
            noise[k] += abs(c * u[j] * u[l]) * (10 * np.finfo(float).eps / h)
            bound[k] += abs(c * u[j]) * trunc[l]
        # the identity holds to the difference quotient's truncation (relative 1e-5 of the
        # row's terms, and twice its estimate) plus its rounding (rows whose terms nearly
        # vanish, e.g. x**4 near 0)
        assert np.all(np.abs(D[dbil]) <= 1e-5 * size[dbil] + 2 * bound[dbil] + noise[dbil])
        assert list(mod.POINT_ROWS) == dbil
        for m_ in range(u.shape[1]):
            pt = mod.point(u[:, m_], p)
            assert np.max(np.abs(pt)) < 1e-12
            J = mod.point_jac(u[:, m_], p)
            for k in range(u.shape[0]):
                e = np.zeros(u.shape[0])
                e[k] = 1e-6 * (1 + abs(u[k, m_]))
                fd = (mod.point(u[:, m_] + e, p) - mod.point(u[:, m_] - e, p)) / (2 * e[k])
                np.testing.assert_allclose(J[:, k], fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,cont", CASES)
def test_recast_exact_on_zoo(name, cont):
    system, src = generate_sources(name, cont, ("numpy",))
    mod = _module_from_source(src["numpy"], f"_t_{name}_{cont}")
    rng = np.random.default_rng(1)
    for _ in range(3):
        check_exact(mod, *random_point(mod, rng))


def test_belt_recast_has_the_auxiliaries_of_seed_000_eq_25():
    """Seed 000 eqs. (21)-(25): exactly Vr, R, S, mu; rows equal to eq. 25 up to sign."""
    system = recast(zoo_model("belt"), "Vb")
    assert [v.name for v in system.variables] == ["y", "v", "Vr", "R1", "a1", "mu_belt"]
    assert len(system.Q) == 5
    assert [v for v, c, _ in system.validity] == ["R1", "a1"]
    assert [c for v, c, _ in system.validity] == ["positive", "nonzero"]
    # same operators as the hand-written eq. 25 (rows compared up to their sign)
    _, src = generate_sources("belt", "Vb", ("numpy",))
    gen = _module_from_source(src["numpy"], "_t_belt_eq25")
    rng = np.random.default_rng(2)
    p = np.array(hw.DEFAULTS)
    u = rng.normal(size=(6, 20))
    Rg, _ = quadratic_rows(gen, u, None, p)
    Rh, _ = quadratic_rows(hw, u, None, p)
    for i in range(6):
        sign = np.sign(np.dot(Rg[i], Rh[i])) or 1.0
        np.testing.assert_allclose(Rg[i], sign * Rh[i], rtol=1e-13, atol=1e-13 * np.abs(Rh[i]).max())


def test_continuation_in_FN_is_linear_and_in_n_is_a_variable():
    fn = recast(zoo_model("belt"), "FN")
    assert not fn.lam_as_variable and len(fn.L1) == 1 and fn.n_vars == 6
    n = recast(zoo_model("belt"), "n")
    assert n.lam_as_variable and "n_c" in [v.name for v in n.variables]


def test_common_subexpressions_are_shared():
    m = ModelSpec("cse")
    a = m.parameter("a", 1.0)
    x = m.state("x")
    y = m.state("y")
    m.ode(x, sp.sqrt(x**2 + a) + 3 * sp.sqrt(x**2 + a) * y)
    m.ode(y, 1 / (x**2 + a) - (x**2 + a) ** 2)
    s = recast(m, "a")
    defs = [sp.sstr(d) for _, d in s.definitions]
    assert len(defs) == len(set(defs))
    assert sum("sqrt" in d and "/" not in d for d in defs) == 1


# -- property test over random expression trees built from the supported operations ------
a_, b_ = sp.symbols("a b", real=True)
x_, y_ = sp.symbols("x y", real=True)
leaves = st.sampled_from([x_, y_, a_, b_, sp.Integer(2), sp.Rational(1, 3), x_ + a_])


def _combine(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] * p[1]),
        pair.map(lambda p: p[0] / (p[1] ** 2 + b_)),          # denominators stay positive
        children.map(lambda e: sp.sqrt(e**2 + a_)),            # radicands stay positive
        children.map(lambda e: e**3),
        children.map(lambda e: (e**2 + b_) ** sp.Rational(3, 2)),
        children.map(lambda e: (e**2 + a_) ** sp.Rational(-1, 3)),
        children.map(lambda e: sp.exp(e / 4)),                 # differential recast (issue 5)
        children.map(lambda e: sp.tanh(e)),
        children.map(lambda e: sp.atan(e)),
        children.map(lambda e: sp.sin(e) + sp.cos(e)),
        children.map(lambda e: sp.log(e**2 + a_)),
    )


exprs = st.recursive(leaves, _combine, max_leaves=5)


def tree_model(f, g):
    """Model x' = f, y' = g of two random expression trees, parameters a = 1.3, b = 0.7."""
    m = ModelSpec("prop")
    m.parameter("a", 1.3)
    m.parameter("b", 0.7)
    X = m.state("x")
    Y = m.state("y")
    m.ode(X, f.xreplace({x_: X, y_: Y}))
    m.ode(Y, g.xreplace({x_: X, y_: Y}))
    return m


@settings(max_examples=int(os.environ.get("FK_HYPOTHESIS_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=exprs, g=exprs, lam=st.sampled_from(["a", "b"]))
def test_recast_exact_on_random_expression_trees(f, g, lam):
    m = tree_model(f, g)
    system, src = generate_sources(m, lam, ("numpy",))
    mod = _module_from_source(src["numpy"], "_t_prop")
    rng = np.random.default_rng(0)
    p = np.array(mod.DEFAULTS)
    x = rng.uniform(-0.6, 0.6, size=(2, 8))
    t = np.zeros(8)
    check_exact(mod, p, x, t)
    # the original f equals sympy's own evaluation of the expressions
    fl = sp.lambdify((x_, y_, a_, b_), [f, g], "numpy")
    ref = np.array([np.broadcast_to(v, (8,)) for v in fl(x[0], x[1], *p)])
    np.testing.assert_allclose(mod.rhs(t, x, p), ref, rtol=1e-12, atol=1e-12)
