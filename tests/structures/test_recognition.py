"""Symbolic models linear but for their contacts (issue 24 item 5, ``codegen/structure.py``):
recognised, condensed, and the same answers as the structure declared from modal data."""
import numpy as np
import pytest
import sympy as sp

from frictionkit.codegen import split_linear
from frictionkit.modelspec import ModelSpec, laws
from frictionkit.modelspec.errors import ModelSpecError
from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf

from ._models import string, string_shapes


def symbolic_string(n_modes, condense=None, lam_in_stiffness=False):
    """The string of ``_models.string`` written the way the README teaches a small model: one
    ``second_order`` per mode, the bow-point velocity as a sum of modal velocities."""
    w, phi = string_shapes(n_modes)
    m = ModelSpec(f"symstring{n_modes}", "bowed string, symbolic modes", time_unit="s", condense=condense)
    Vb, FN = m.parameter("Vb", 0.3, unit="m/s"), m.parameter("FN", 0.02, unit="N")
    zeta = m.parameter("zeta", 0.003)
    mus, mud, v0, d = m.parameter("mus", 0.8), m.parameter("mud", 0.3), m.parameter("v0", 0.1), m.parameter("delta", 0.05)
    q, p = zip(*[m.second_order(f"q{j + 1}", velocity=f"p{j + 1}") for j in range(n_modes)])
    vbow = m.define("vbow", sum(float(phi[j]) * p[j] for j in range(n_modes)))
    mu = m.friction("bow", laws.hyperbolic, vbow - Vb, mus=mus, mud=mud, v0=v0, delta=d)
    for j in range(n_modes):
        stiff = float(w[j]) ** 2 * (1 + (Vb if lam_in_stiffness else 0))
        m.ode(p[j], -stiff * q[j] - 2 * zeta * float(w[j]) * p[j] + float(phi[j]) * FN * mu)
    return m


def test_the_symbolic_string_gives_the_modal_strings_answers():
    sym = load_model(symbolic_string(8), continuation="Vb")
    modal = load_model(string(8), continuation="Vb")
    assert sym.structure is not None and sym.n == 16
    ends = []
    for model in (sym, modal):
        eq = equilibrium_branch(model, 0.6, 0.05)
        hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
        disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=20)
        assert disc.kind == "aft-condensed" and disc.size == 41 + 2
        br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False))
        ends.append((hopf.param, hopf.omega, br.special_points("hopf")[0].param))
    (a1, w1, e1), (a2, w2, e2) = ends
    assert abs(a1 - a2) < 1e-12 * a2 and abs(w1 - w2) < 1e-12 * w2 and abs(e1 - e2) < 1e-10 * e2


def test_codegen_sees_the_same_port_model_whatever_the_number_of_modes():
    small, large = split_linear(symbolic_string(4), "Vb"), split_linear(symbolic_string(64), "Vb")
    assert small is not None and large is not None
    assert [x.name for x in small.port.states] == [x.name for x in large.port.states] == ["w_bow", "F0"]
    assert small.port.canonical().replace("symstring4", "") == large.port.canonical().replace("symstring64", "")
    assert len(large.A) == 3 * 64 and len(large.C) == 64 and len(large.B) == 64
    # the normal load is the force's common factor, not in B (so FN can be continued)
    fn = split_linear(symbolic_string(16), "FN")
    assert fn is not None and all(not e.free_symbols for *_, e in fn.B)


def test_what_is_not_recognised_takes_the_usual_path():
    assert split_linear(symbolic_string(2), "Vb") is None                  # 4 states: it does not pay
    assert split_linear(symbolic_string(2, condense=True), "Vb") is not None
    assert split_linear(symbolic_string(16, condense=False), "Vb") is None
    assert split_linear(symbolic_string(16, lam_in_stiffness=True), "Vb") is None   # lam in A
    m = symbolic_string(8)
    x = m.states[0]
    m.odes[m.states[1]] = m.odes[m.states[1]] - x ** 3                     # a cubic spring: not linear
    assert split_linear(m, "Vb") is None
    with pytest.raises(ModelSpecError, match="condense='yes'"):
        ModelSpec("bad", condense="yes")


def test_a_large_chain_is_recognised_and_loads():
    n = 100                                       # 200 states: 100 masses in a chain
    m = ModelSpec("chain100", "a chain of masses, friction on the last one")
    V, k, c, FN = m.parameter("V", 0.2), m.parameter("k", 1.0), m.parameter("c", 0.01), m.parameter("FN", 0.1)
    xs = [m.second_order(f"x{i}", velocity=f"v{i}") for i in range(n)]
    mu = m.friction("end", laws.coulomb_tanh, xs[-1][1] - V, eps=0.05)
    for i, (x, v) in enumerate(xs):
        left = xs[i - 1][0] if i else 0
        right = xs[i + 1][0] if i + 1 < n else x
        force = -k * (x - left) - k * (x - right) - c * v + (FN * mu if i == n - 1 else 0)
        m.ode(v, force)
    split = split_linear(m, "V")
    assert split is not None and len(split.layout.inputs) == 1
    model = load_model(m, continuation="V")
    assert model.n == 200 and model.structure.n_lin == 200
    # its equilibrium by the full ODE (LinearSystem's rhs) against a direct solve of K x = F
    from frictionkit.runtime import find_equilibrium
    _, Z = find_equilibrium(model, 0.2)
    x = Z[:200:2]
    Fend = 0.1 * -np.tanh((0.0 - 0.2) / 0.05)
    K = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    K[-1, -1] = 1.0
    np.testing.assert_allclose(x, np.linalg.solve(K, np.eye(n)[-1] * Fend), rtol=1e-10, atol=1e-14)


def test_the_source_cache_key_sees_the_structure_and_the_choice():
    """``ModelSpec.canonical`` (the generator's cache key) changes with the structure's numbers,
    its points' forces and the recognition choice, so two such models never share sources."""
    base = string(4).canonical()
    assert string(4, zeta=0.004).canonical() != base
    assert symbolic_string(8).canonical() != symbolic_string(8, condense=True).canonical()
    m = string(4)
    m.point_forces["bow"] = 2 * m.point_forces["bow"]
    assert m.canonical() != base


def test_the_recognised_strings_dissipation_is_the_uncondensed_ones():
    """The bow's energy per cycle on an orbit of the recognised string: from the condensed
    balance (the loaded point's velocity read off the modal response, ``full_coefficients(Z,
    rows)`` of a ``LinearSystem``) and from the uncondensed balance of the same model
    corrected on its own (every state a Fourier series of the unknowns)."""
    from frictionkit.runtime.engine._newton import correct
    from frictionkit.runtime.results._branch import Branch
    model = load_model(symbolic_string(8), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=20)
    br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=False))
    Z = br.solutions[len(br.solutions) // 2]
    E = Branch.from_solutions(disc, Z[None], Z[None]).dissipation["bow"][0]
    full, Zf = disc.full_solution(Z)
    Zf = correct(full, Zf, np.eye(full.size)[-1], float(disc.split(Z)[2]), max_iter=20)[0]
    E_full = Branch.from_solutions(full, Zf[None], Zf[None]).dissipation["bow"][0]
    assert E < 0 and E == pytest.approx(E_full, rel=1e-9)            # the bow feeds the string
