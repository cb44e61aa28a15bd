"""The compiled per-order ANM loop of the AFT (``_pointwise_loop.pyx``) against the contract's
Python loop (``Discretization.series_terms`` calling ``series_rhs`` order by order).

Two implementations of the same recurrence: they must agree to rounding, terms and series
buffers alike.  The independent checks of the series (folds against AUTO-07p and shooting)
are in tests/engine, tests/drivers and tests/seeds.
"""
import sys
import warnings

import numpy as np
import pytest

import frictionkit.codegen
from frictionkit.runtime import equilibrium_branch, load_model, periodic_start_from_hopf
from frictionkit.runtime.discretizations import Discretization, _pointwise
from frictionkit.runtime.engine._bordered import bordered_factor


def _start(model, rng, H):
    eq = equilibrium_branch(model, *rng)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], H)
    lu = bordered_factor(disc.jacobian(Z), d)
    rhs = np.zeros(disc.size)
    rhs[-1] = 1.0
    v = lu.solve(rhs)
    return disc, Z, v / np.linalg.norm(v), lu


def _equilibrium_start(model, lam):
    """An equilibrium of ``model`` at ``lam`` (AFT with H = 0) and its branch's tangent."""
    eq = equilibrium_branch(model, lam, lam + 0.5, options=dict(max_steps=3))
    disc, Z, t = eq.discretization, eq.solutions[1], eq.tangents[1]
    lu = bordered_factor(disc.jacobian(Z), t)
    rhs = np.zeros(disc.size)
    rhs[-1] = 1.0
    v = lu.solve(rhs)
    return disc, Z, v / np.linalg.norm(v), lu


@pytest.fixture(scope="module", params=["belt", "tanh_exp_belt", "belt equilibria"])
def start(request):
    if request.param == "belt":
        model, rng = load_model("belt", continuation="Vb", n=10), (0.05, 12)
    elif request.param == "belt equilibria":
        return _equilibrium_start(load_model("belt", continuation="Vb", n=10), 0.1)
    else:
        model, rng = load_model("examples/tanh_exp_belt.py", continuation="vb"), (1.5, 0.1)
    return _start(model, rng, 12)


def _python_loop(disc, Z, Z1, order, lu):
    terms = Discretization.series_terms(disc, Z, Z1, order, lambda r: lu.solve(r, checked=False))
    c = disc._series._c
    return np.array(terms), {k: c[k][:order].copy() for k in ("X", "A", "U", "LAM", "omega")}


def test_the_compiled_loop_gives_the_python_loops_terms_and_buffers(start):
    disc, Z, Z1, lu = start
    assert disc.model.taylor_kernel() is not None and _pointwise.compiled_loop() is not None
    ref, buffers = _python_loop(disc, Z, Z1, 20, lu)
    terms = np.array(disc.series_terms(Z, Z1, 20, lambda r: lu.solve(r, checked=False), lu.dense_lu))
    assert terms.shape == ref.shape == (20, disc.size)
    # relative to each order's size: the terms fall by ~ 1/a_max per order
    err = np.abs(terms - ref).max(axis=1) / np.abs(ref).max(axis=1)
    assert err.max() < 1e-13, err
    c = disc._series._c
    assert c["order"] == 20
    for key, value in buffers.items():
        # equilibria carry omega = NaN in both
        got = np.where(np.isnan(value) & np.isnan(c[key][:20]), 0.0, c[key][:20])
        value = np.nan_to_num(value)
        scale = np.abs(value).reshape(len(value), -1).max(axis=1) + 1e-300
        diff = np.abs(got - value).reshape(len(value), -1).max(axis=1)
        assert (diff <= 1e-13 * scale).all(), key
    # the next orders of the buffers are zero, as series_rhs leaves them
    assert not c["X"][20:].any() and not c["A"][20:].any()


def test_models_without_the_compiled_kernel_take_the_python_loop():
    model = load_model("belt", continuation="Vb", n=10, backend="numpy")
    assert model.taylor_kernel() is None
    disc, Z, Z1, lu = _start(model, (0.05, 12), 6)
    ref, _ = _python_loop(disc, Z, Z1, 8, lu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        terms = disc.series_terms(Z, Z1, 8, lambda r: lu.solve(r, checked=False), lu.dense_lu)
    np.testing.assert_array_equal(np.array(terms), ref)


def test_without_a_compiler_the_loop_runs_in_python_with_one_warning(start, monkeypatch):
    disc, Z, Z1, lu = start
    ref, _ = _python_loop(disc, Z, Z1, 10, lu)

    def no_compiler(source, stem, compile_args=None, label=None):
        raise frictionkit.codegen.BuildError(f"compiling the Cython module {stem} failed (no compiler)")

    monkeypatch.setattr(frictionkit.codegen, "compile_module", no_compiler)
    monkeypatch.setattr(_pointwise, "_LOOP", {})
    # neither built at install (an import of None fails) nor required
    monkeypatch.setitem(sys.modules, "frictionkit.runtime.discretizations._pointwise_loop", None)
    monkeypatch.delenv("FRICTIONKIT_REQUIRE_COMPILED", raising=False)
    solve = lambda r: lu.solve(r, checked=False)          # noqa: E731
    with pytest.warns(RuntimeWarning, match="could not be built.*in Python"):
        first = disc.series_terms(Z, Z1, 10, solve, lu.dense_lu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # warned once, not at every step
        again = disc.series_terms(Z, Z1, 10, solve, lu.dense_lu)
    np.testing.assert_array_equal(np.array(first), ref)
    np.testing.assert_array_equal(np.array(again), ref)


def test_a_series_after_a_longer_one_is_the_fresh_series(start):
    """The series' buffers are reused from step to step (``PointwiseSeries.restart`` zeroes
    only the orders the last series wrote): a short series after a long one at another origin
    gives the terms and buffers of a new discretization's series, to the last bit."""
    disc, Z, Z1, lu = start
    solve = lambda r: lu.solve(r, checked=False)
    disc.series_terms(Z, Z1, 20, solve, lu.dense_lu)
    Z2 = Z + 1e-3 * Z1
    got = np.array(disc.series_terms(Z2, Z1, 6, solve, lu.dense_lu))
    new = disc.on_model(disc.model)
    ref = np.array(new.series_terms(Z2, Z1, 6, solve, lu.dense_lu))
    np.testing.assert_array_equal(got, ref)
    a, b = disc._series._c, new._series._c
    for key in ("X", "A", "U", "LAM", "omega"):
        np.testing.assert_array_equal(a[key], b[key])


def test_skipping_the_kinematic_rows_changes_no_term(start):
    """The compiled loop transforms only the non-kinematic rows of ``f_p`` (the kinematic
    ones, ``x_i' = x_j``, are zero at every order >= 1): the terms are those of the loop
    transforming every row, to the last bit."""
    disc, Z, Z1, lu = start
    if disc.H == 0:
        pytest.skip("equilibria take no FFT")
    assert disc.model.kinematic and disc._transformed != (0, disc.n)
    solve = lambda r: lu.solve(r, checked=False)
    skipped = np.array(disc.series_terms(Z, Z1, 12, solve, lu.dense_lu))
    every = disc.on_model(disc.model)
    every._transformed = (0, disc.n)
    np.testing.assert_array_equal(skipped, np.array(every.series_terms(Z, Z1, 12, solve, lu.dense_lu)))
