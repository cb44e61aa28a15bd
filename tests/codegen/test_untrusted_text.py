"""User text and names reach generated files; none of them may run code or change what the
generated module computes (issue 13).  The reference is sympy.lambdify of the declared
equations, independent of the generator."""
import ast
import unicodedata

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frictionkit.codegen import compile_module, generate_sources, recast
from frictionkit.codegen.api import _join, _module_from_source
from frictionkit.modelspec import ModelSpec, ModelSpecError, laws

INJECTIONS = [
    '"""\nimport pathlib; pathlib.Path({mark!r}).write_text("ran")\n"""',
    '\\"""; import pathlib; pathlib.Path({mark!r}).write_text("ran"); """',
    "'''\nimport pathlib; pathlib.Path({mark!r}).write_text('ran')\n'''",
    '\\\x00\u2028\u2029\r"""\\',
]


def model(names=("k", "x", "v", "c"), description="", unit=None, doc=None):
    k_name, x_name, v_name, c_name = names
    m = ModelSpec("untrusted", description)
    k = m.parameter(k_name, 1.5, unit=unit, doc=doc)
    eps = m.parameter("eps", 1e-2, unit=unit)
    x, v = m.second_order(x_name, velocity=v_name)
    mu = m.friction(c_name, laws.smooth_abs, v - 0.3, delta=eps)
    m.ode(v, -k * x - 0.2 * v + mu * x)
    return m


def reference(spec):
    f = [spec.expand_definitions(spec.odes[s]) / spec.masses.get(s, 1) for s in spec.states]
    return sp.lambdify([spec.t] + list(spec.states) + spec.parameter_symbols, f, "numpy")


def numpy_module(spec):
    # the continuation parameter is the first one, whatever its (normalised) name
    system, src = generate_sources(spec, spec.parameter_symbols[0].name, ("numpy", "cython"))
    mod = _module_from_source(src["numpy"], f"_fk_untrusted_{system.model_hash}")
    return system, src, mod


def check_same_behaviour(spec, mod):
    F = reference(spec)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5))
    p = np.array(mod.DEFAULTS)
    ref = np.array([F(0.0, *x[:, j], *p) for j in range(5)]).T
    np.testing.assert_allclose(mod.rhs(0.0, x, p), ref, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("payload", INJECTIONS)
@pytest.mark.parametrize("where", ["description", "unit", "doc"])
def test_text_cannot_run_code_when_the_module_loads(payload, where, tmp_path):
    mark = tmp_path / "marker"
    text = payload.format(mark=str(mark))
    spec = model(**{where: text})
    system, src, mod = numpy_module(spec)
    assert not mark.exists()
    # the header docstring is the module's only leading statement and holds the text verbatim
    for source in (src["numpy"], src["cython"].split("\n", 1)[1]):
        doc = ast.get_docstring(ast.parse(source.split("\nimport numpy", 1)[0] + "\n"))
        if where != "doc":       # the parameter docs are not written to generated files
            assert text in doc
    check_same_behaviour(spec, mod)


def test_hostile_text_compiles_and_runs_in_the_cython_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path / "cache"))
    mark = tmp_path / "marker"
    spec = model(description=INJECTIONS[0].format(mark=str(mark)) + INJECTIONS[3],
                 unit=INJECTIONS[1].format(mark=str(mark)), names=("\u00e9", "\u03be", "\u03b7", "c"))
    system, src, npm = numpy_module(spec)
    kernels, _ = compile_module(src["cython"], "untrusted")
    cym = _join(npm, kernels)
    assert not mark.exists() and cym.BACKEND == "cython"
    check_same_behaviour(spec, cym)


def _identifier():
    return st.from_regex(r"\A[^\W\d_]\w{0,5}\Z", fullmatch=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(names=st.tuples(_identifier(), _identifier(), _identifier(), _identifier()),
       description=st.text(max_size=40), unit=st.text(max_size=20))
def test_random_names_and_text_never_change_behaviour(names, description, unit, tmp_path_factory):
    mark = tmp_path_factory.mktemp("mark") / "marker"
    try:
        spec = model(names=names, description=description + f"{mark}", unit=unit)
        spec.validate(spec.parameter_symbols[0].name)
    except ModelSpecError as exc:
        # refused with a clear error that names the culprit (a name Python cannot use, a
        # reserved name, or two names Python cannot tell apart)
        folded = [unicodedata.normalize("NFKC", n) for n in names]
        assert any(repr(f) in str(exc) or repr(n) in str(exc) for n, f in zip(names, folded)), str(exc)
        return
    system, src, mod = numpy_module(spec)
    assert not mark.exists()
    ast.parse(src["cython"].split("\n", 1)[1].split("\nimport numpy", 1)[0] + "\n")
    check_same_behaviour(spec, mod)
