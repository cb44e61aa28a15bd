"""Backends agree with each other, with finite differences and with sympy.lambdify (issue 2)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import sympy as sp

from frictionkit.codegen import BuildError, compile_module, generate_module, resolve_spec
from frictionkit.modelspec import ZOO
from tests.codegen.zoo_cases import SAMPLED, random_point

SHIPPED = [(name, c) for name, (_, params) in sorted(ZOO.items()) for c in params]
COMPILED = [(name, c) for name, c in SHIPPED if name not in SAMPLED]


def rel_close(a, b, rtol):
    assert np.shape(a) == np.shape(b)
    if np.size(a) == 0:          # e.g. no quadratic terms: nothing to compare
        return
    scale = max(np.abs(a).max(), np.abs(b).max(), 1e-300)
    assert np.max(np.abs(a - b)) <= rtol * scale


@pytest.mark.parametrize("name,cont", COMPILED)
def test_numpy_and_cython_agree(name, cont):
    npm = generate_module(name, cont, backend="numpy")
    cym = generate_module(name, cont, backend="cython")
    assert npm.BACKEND == "numpy" and cym.BACKEND == "cython"
    assert npm.MODEL_HASH == cym.MODEL_HASH
    rng = np.random.default_rng(3)
    p, x, t = random_point(npm, rng, m=50)
    rel_close(npm.rhs(t, x, p), cym.rhs(t, x, p), 1e-13)
    rel_close(npm.jac(t, x, p), cym.jac(t, x, p), 1e-13)
    rel_close(npm.rhs(t[0], x[:, 0], p), cym.rhs(t[0], x[:, 0], p), 1e-13)
    # aux and dfdlam are compiled too (two printers of the same sympy expressions), dfdlam
    # exactly where the NumPy module has an exact one; same shapes, one sample or a batch
    assert cym.aux is not npm.aux and (cym.dfdlam is not npm.dfdlam) == (npm.dfdlam is not None)
    rel_close(npm.aux(x, t, p), cym.aux(x, t, p), 1e-13)
    rel_close(npm.aux(x[:, 0], t[0], p), cym.aux(x[:, 0], t[0], p), 1e-13)
    if npm.dfdlam is not None:
        rel_close(npm.dfdlam(t, x, p), cym.dfdlam(t, x, p), 1e-13)
        rel_close(npm.dfdlam(t[0], x[:, 0], p), cym.dfdlam(t[0], x[:, 0], p), 1e-13)
    u = npm.aux(x, t, p)
    ops = npm.operators(p)
    rel_close(npm.quad(ops["qc"], u, u[::-1].copy()), cym.quad(ops["qc"], u, u[::-1].copy()), 1e-13)
    rel_close(npm.quad_jac(ops["qc"], u), cym.quad_jac(ops["qc"], u), 1e-13)
    rel_close(npm.quad_jac_sparse(ops["qc"], u), cym.quad_jac_sparse(ops["qc"], u), 1e-13)


@pytest.mark.parametrize("name,cont", COMPILED)
def test_vectorised_compiled_kernels_agree_with_numpy_sample_by_sample(name, cont):
    """The compiled sample loops are SIMD-vectorised (libmvec's exp/atan/tanh... where
    available, a scalar remainder loop): every sample of every output, over a wide range of
    states, agrees with NumPy to 1e-13 relative to that output's magnitude, and a NaN state
    gives NaN wherever NumPy gives NaN (no -ffast-math)."""
    npm = generate_module(name, cont, backend="numpy")
    cym = generate_module(name, cont, backend="cython")
    rng = np.random.default_rng(7)
    p, x, t = random_point(npm, rng, m=1003)          # odd: vector body and remainder loop
    x *= rng.choice([0.1, 1.0, 10.0], size=x.shape)
    kernels = ("rhs", "jac", "aux") + (("dfdlam",) if npm.dfdlam is not None else ())

    def call(mod, fn):          # aux takes (x, t, p), the others (t, x, p)
        return mod.aux(x, t, p) if fn == "aux" else getattr(mod, fn)(t, x, p)

    for fn in kernels:
        with np.errstate(invalid="ignore"):        # aux: a negative root argument is NaN in both
            ref = call(npm, fn)
        junk = np.full_like(ref, np.nan)
        del junk                                       # a freed NaN block of the output's size:
        got = call(cym, fn)                            # every entry must be written (no zero fill)
        assert np.array_equal(np.isnan(got), np.isnan(ref)), fn
        ref, got = np.nan_to_num(ref), np.nan_to_num(got)
        scale = np.abs(ref).max(axis=-1, keepdims=True)
        assert np.all(np.abs(got - ref) <= 1e-13 * scale), (fn, np.max(np.abs(got - ref) / np.maximum(scale, 1e-300)))
    x[rng.integers(len(x), size=40), rng.integers(x.shape[1], size=40)] = np.nan
    for fn in kernels:
        with np.errstate(all="ignore"):
            ref = call(npm, fn)
        got = call(cym, fn)
        assert np.array_equal(np.isnan(got), np.isnan(ref)), fn
        # a constant Jacobian (or a dfdlam free of the states: shaw's forcing amplitude) has no NaN
        assert fn in ("jac", "dfdlam") or np.isnan(ref).any()


@pytest.mark.parametrize("name,cont", SHIPPED)
def test_jacobians_agree_with_finite_differences(name, cont):
    mod = generate_module(name, cont, backend="numpy")
    rng = np.random.default_rng(4)
    p, x, t = random_point(mod, rng, m=5)
    J = mod.jac(t, x, p)
    n = x.shape[0]
    for j in range(n):
        h = 1e-6 * (1 + np.abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        fd = (mod.rhs(t, xp, p) - mod.rhs(t, xm, p)) / (2 * h)
        np.testing.assert_allclose(J[:, j], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    # Q(u, u) is quadratic: its central difference is exact up to rounding
    if mod.SAMPLED:
        return
    u = mod.aux(x, t, p)
    ops = mod.operators(p)
    JQ = mod.quad_jac(ops["qc"], u)
    # the sparse kernel holds exactly the structurally nonzero entries of the dense one
    dense = np.zeros_like(JQ)
    dense[mod.JQ_K, mod.JQ_COL] = mod.quad_jac_sparse(ops["qc"], u)
    np.testing.assert_array_equal(dense, JQ)
    for i in range(u.shape[0]):
        e = np.zeros_like(u)
        e[i] = 1.0
        fd = (mod.quad(ops["qc"], u + e, u + e) - mod.quad(ops["qc"], u - e, u - e)) / 2
        np.testing.assert_allclose(JQ[:, i], fd, rtol=1e-12, atol=1e-12 * (1 + np.abs(fd).max()))


@pytest.mark.parametrize("name,cont", SHIPPED)
def test_rhs_and_jac_agree_with_lambdify_of_the_declared_model(name, cont):
    """Independent of the recast: sympy.lambdify of the user's own equations."""
    spec = resolve_spec(name)
    f = [spec.expand_definitions(spec.odes[s]) / spec.masses.get(s, 1) for s in spec.states]
    args = [spec.t] + list(spec.states) + spec.parameter_symbols
    F = sp.lambdify(args, f, "numpy")
    Jf = sp.lambdify(args, sp.Matrix(f).jacobian(spec.states), "numpy")
    mod = generate_module(name, cont, backend="numpy")
    rng = np.random.default_rng(5)
    p, x, t = random_point(mod, rng, m=7)
    for k in range(7):
        ref = np.array(F(t[k], *x[:, k], *p), dtype=float)
        rel_close(mod.rhs(t[k], x[:, k], p), ref, 1e-13)
        rel_close(mod.jac(t[k], x[:, k], p), np.array(Jf(t[k], *x[:, k], *p), dtype=float), 1e-13)


def test_generated_matches_the_hand_written_belt_model():
    from tests.models import belt_handwritten as hw
    mod = generate_module("belt", "Vb", backend="numpy")
    assert mod.PARAMETERS == hw.PARAMETERS
    rng = np.random.default_rng(6)
    p, x, t = random_point(mod, rng, m=9)
    rel_close(mod.rhs(t, x, p), hw.rhs(t, x, p), 1e-13)
    rel_close(mod.contact_law(np.array([x[1]]), p), hw.contact_law(np.array([x[1]]), p), 1e-13)


# -- build cache ---------------------------------------------------------------------------
TINY = '''# cython: language_level=3
def answer(double x):
    return 2.0 * x + {k}
'''


def test_concurrent_builds_of_the_same_module_are_safe(tmp_path):
    env = dict(os.environ, FRICTIONKIT_CACHE=str(tmp_path))
    code = ("from frictionkit.codegen import compile_module\n"
            f"m, info = compile_module({TINY.format(k=41)!r}, 'tiny')\n"
            "print(m.answer(0.5), info['cached'])\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [o[0] for o in outs] == ["42.0", "42.0"]
    assert sorted(o[1] for o in outs) == ["False", "True"]   # exactly one process compiled
    assert len(list(tmp_path.glob("*/_fk_tiny_*.so"))) == 1


def test_failed_build_keeps_its_log_and_falls_back(tmp_path, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path))
    with pytest.raises(BuildError, match=r"compiler output kept in .*build.log"):
        compile_module("def broken(:\n", "broken")
    logs = list(tmp_path.glob("*/build.log"))
    assert logs and "broken" in logs[0].read_text() or logs[0].stat().st_size > 0
    assert list(tmp_path.glob("*/FAILED.json"))
    # the loader falls back to NumPy with one warning, or raises when compiled code is required
    import frictionkit.codegen.api as api
    monkeypatch.setattr(api, "compile_module", lambda src, stem: (_ for _ in ()).throw(BuildError("boom")))
    monkeypatch.setattr(api, "_warned", set())
    monkeypatch.delenv("FRICTIONKIT_REQUIRE_COMPILED", raising=False)
    with pytest.warns(RuntimeWarning, match="falling back to the NumPy backend"):
        mod = api.generate_module("belt", "Vb", backend="auto")
    assert mod.BACKEND == "numpy"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api.generate_module("belt", "Vb", backend="auto")   # warned once only
    monkeypatch.setenv("FRICTIONKIT_REQUIRE_COMPILED", "1")
    with pytest.raises(BuildError):
        api.generate_module("belt", "Vb", backend="auto")


def test_sampled_model_has_only_the_original_ode():
    """Seed 004 drill string (piecewise law, eq. 18): no recast, NumPy only, flagged SAMPLED."""
    mod = generate_module("drill", "eta", backend="auto")
    assert mod.SAMPLED and mod.BACKEND == "numpy" and mod.VARIABLES == mod.STATES
    p = np.array(mod.DEFAULTS)
    theta, kappa, eta = p[mod.PARAMETERS.index("theta")], p[mod.PARAMETERS.index("kappa")], p[mod.PARAMETERS.index("eta")]
    w = np.array([-1.0, -0.2, -0.05, 0.0])          # psi' - eta
    x = np.array([np.zeros(4), eta + w])
    T = np.where(w <= -4 * kappa, 0.0, -theta * w * (w + 4 * kappa) ** 3 / (27 * kappa**4))
    np.testing.assert_allclose(mod.rhs(0.0, x, p)[1], -2 * p[0] * (eta + w) + T, rtol=1e-14)
