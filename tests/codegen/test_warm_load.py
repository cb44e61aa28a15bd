"""A warm load of a ModelSpec (codegen/api.py ``_cached_sources`` keyed on the spec itself):
no recast when the sources are cached, a new entry for every change of the spec that reaches
the generated code, the key the same in every process, and a damaged entry regenerated (with
one warning)."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import frictionkit.codegen.api as api
from frictionkit.modelspec import ModelSpec, laws, zoo


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path))
    return tmp_path / "sources"


def _belt_rhs(x, p):
    """Seed 000 eqs. (5)-(6) with the regularized law of eq. (2), written out by hand."""
    y, v = x
    vr = v - p["Vb"]
    alpha = math.sqrt(p["mus"] * (p["mus"] - p["mud"]))
    mu = ((-p["mud"] * vr * math.sqrt(vr**2 + p["eps"] / p["n"]**2) - 2 * alpha / p["n"] * vr)
          / (vr**2 + 1 / p["n"]**2))
    return [v, -2 * p["zeta"] * p["omega1"] * v - p["omega1"]**2 * y + p["FN"] / p["M1"] * mu]


_LOAD = """
import cProfile, json, pstats
from frictionkit.modelspec import zoo
from frictionkit.runtime import load_model
spec = zoo.belt()
prof = cProfile.Profile()
model = prof.runcall(load_model, spec, continuation="Vb", backend="numpy", n=10.0, FN=5.0)
ran = sorted({f"{path.replace(chr(92), '/')}:{func}" for path, _, func in pstats.Stats(prof).stats})
print(json.dumps({"ran": ran, "rhs": model.rhs(0.0, [1e-3, 0.05]).tolist(),
                  "defaults": dict(zip(model.module.PARAMETERS, model.module.DEFAULTS))}))
"""


def _load_in_fresh_interpreter(cache_root, seed):
    env = dict(os.environ, FRICTIONKIT_CACHE=str(cache_root), PYTHONHASHSEED=str(seed))
    out = subprocess.run([sys.executable, "-c", _LOAD], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_a_warm_load_in_a_fresh_process_does_not_recast(tmp_path):
    """Two fresh interpreters with different string hashes: the first recasts and fills the
    cache, the second finds the entry (the key is stable across processes) and runs neither the
    recast nor the spec's validation; both rhs equal the hand-written one."""
    cold = _load_in_fresh_interpreter(tmp_path, 1)
    warm = _load_in_fresh_interpreter(tmp_path, 2)
    recast_ran = [f for f in cold["ran"] if f.endswith("codegen/recast.py:recast")]
    assert recast_ran, "the profile does not see the cold load's recast: the check below would be empty"
    recast_module = sys.modules["frictionkit.codegen.recast"]     # the package attribute is the function
    in_recast = {f.rsplit(":", 1)[1] for f in warm["ran"] if "codegen/recast.py:" in f}
    bodies = {"<module>"} | {n for n in in_recast if isinstance(getattr(recast_module, n, None), type)}
    assert in_recast <= bodies, in_recast - bodies        # its import runs class bodies, nothing else
    assert not [f for f in warm["ran"] if f.endswith(":validate")]
    expected = _belt_rhs([1e-3, 0.05], {**cold["defaults"], "n": 10.0, "FN": 5.0})
    assert np.allclose(cold["rhs"], expected, rtol=1e-12, atol=0)
    assert warm["rhs"] == cold["rhs"]
    assert len(list((tmp_path / "sources").glob("belt__Vb_*.json"))) == 1


def _small(default_k=2.0, unit="N/m", description="a friction oscillator", cubic=False, doc="stiffness"):
    """x'' = -k x (- x**3) + mu(v - vb): a small spec whose fields the tests vary one at a time."""
    m = ModelSpec("small", description)
    k = m.parameter("k", default_k, unit=unit, doc=doc)
    vb = m.parameter("vb", 0.5, unit="m/s")
    c = m.parameter("c", 0.1)
    x, v = m.second_order("x", velocity="v")
    mu = m.friction("belt", laws.regularized, v - vb, mus=0.4, mud=0.2, eps=sp.Rational(1, 10**4), n=10)
    m.ode(v, -k * x - (x**3 if cubic else 0) - c * v + mu)
    return m


def _mu(vr):
    """laws.regularized with mus, mud, eps, n = 0.4, 0.2, 1e-4, 10, by hand (seed 000 eq. 2)."""
    alpha = math.sqrt(0.4 * 0.2)
    return (-0.2 * vr * math.sqrt(vr**2 + 1e-4 / 100) - 2 * alpha / 10 * vr) / (vr**2 + 1 / 100)


@pytest.mark.parametrize("change, shows", [
    (dict(default_k=3.0), lambda mod: dict(zip(mod.PARAMETERS, mod.DEFAULTS))["k"] == 3.0),
    (dict(unit="kN/m"), lambda mod: dict(zip(mod.PARAMETERS, mod.UNITS))["k"] == "kN/m"),
    (dict(description="another description"), lambda mod: "another description" in mod.__doc__),
    (dict(cubic=True), lambda mod: True),                    # the rhs below has the cubic term
    (dict(doc="spring stiffness"), lambda mod: True),        # not in the code: a new key all the same
])
def test_every_change_of_the_spec_gives_a_new_entry_that_shows_it(cache, change, shows):
    api._cached_sources(_small(), "vb", ("numpy",))
    meta, src = api._cached_sources(_small(**change), "vb", ("numpy",))
    assert len(list(cache.glob("small__vb_*.json"))) == 2
    mod = api._module_from_source(src["numpy"], f"_fk_test_{meta.model_hash}_{sorted(change)[0]}")
    assert shows(mod)
    x, v, p = 0.3, 0.1, dict(k=2.0, vb=0.5, c=0.1)               # rhs at a point, by hand
    cubic = x**3 if change.get("cubic") else 0.0
    assert mod.rhs(0.0, np.array([x, v]), np.array([p["k"], p["vb"], p["c"]]))[1] == pytest.approx(
        -p["k"] * x - cubic - p["c"] * v + _mu(v - p["vb"]), rel=1e-12)


def test_the_continuation_parameter_is_in_the_key(cache):
    meta_vb, src_vb = api._cached_sources(_small(), "vb", ("numpy",))
    meta_k, src_k = api._cached_sources(_small(), "k", ("numpy",))
    assert {p.name for p in cache.glob("*.json")} >= {p.name for p in cache.glob("small__vb_*.json")}
    assert len(list(cache.glob("small__k_*.json"))) == 1
    assert 'CONTINUATION = "k"' in src_k["numpy"] and 'CONTINUATION = "vb"' in src_vb["numpy"]


def test_the_spec_text_is_the_same_in_every_process():
    code = "from frictionkit.modelspec import zoo; print(zoo.belt().canonical())"
    texts = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout for seed in (1, 2)}
    assert len(texts) == 1 and "0x" not in texts.pop()          # no address of a law function


@pytest.mark.parametrize("damage", [
    "{", "[]", b"\xff\xfe", json.dumps({"sources": {"numpy": "x = 1"}}),            # no model_hash
    json.dumps({"name": "belt", "model_hash": "0", "sampled": False, "sources": {}}),  # no numpy
])
def test_a_damaged_entry_is_regenerated_with_one_warning(cache, damage):
    from frictionkit.codegen.build import CacheWarning
    meta, src = api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    (path,) = cache.glob("*.json")
    path.write_bytes(damage if isinstance(damage, bytes) else damage.encode())
    with pytest.warns(CacheWarning, match="has been rebuilt") as caught:
        again_meta, again = api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    assert len(caught) == 1 and str(path) in str(caught[0].message)
    assert (again_meta, again) == (meta, src)
    entry = json.loads(path.read_text(encoding="utf-8"))
    assert {k: v for k, v in entry.items() if k not in ("key", "sha256")} == {**dataclasses.asdict(meta),
                                                                               "sources": src}
    assert path.name.endswith(f"_{entry['key'][:20]}.json") and entry["sha256"] == api._entry_digest(entry)


def test_the_numpy_module_is_imported_from_its_cached_copy_and_bytecode(cache):
    """The NumPy module is imported from ``<cache>/modules`` (its bytecode written next to it,
    PYTHONDONTWRITEBYTECODE or not) and is the rendered source; its rhs is the hand-written one."""
    import importlib.util
    from pathlib import Path
    mod = api.generate_module(_small(), "vb", backend="numpy")
    path = Path(mod.__file__)
    assert path.parent == cache.parent / "modules"
    assert Path(importlib.util.cache_from_source(str(path))).is_file()
    assert path.read_text(encoding="utf-8") == api.generate_sources(_small(), "vb", ("numpy",))[1]["numpy"]
    assert mod.rhs(0.0, np.array([0.3, 0.1]), np.array([2.0, 0.5, 0.1]))[1] == pytest.approx(
        -2.0 * 0.3 - 0.1 * 0.1 + _mu(0.1 - 0.5), rel=1e-12)


def test_a_cache_that_cannot_be_written_still_loads(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(blocker / "cache"))     # below a file: no folder
    mod = api.generate_module(_small(), "vb", backend="numpy")
    assert mod.rhs(0.0, np.array([0.3, 0.1]), np.array([2.0, 0.5, 0.1]))[1] == pytest.approx(
        -2.0 * 0.3 - 0.1 * 0.1 + _mu(0.1 - 0.5), rel=1e-12)


def test_canonical_text_covers_every_field_of_a_spec():
    """The source cache is keyed on ``ModelSpec.canonical``: a field it does not write would let
    two different specs share cached sources.  Every field is listed here with how it enters
    the text; a new field fails this test until ``canonical`` writes it (and it is added)."""
    import dataclasses

    from frictionkit.modelspec import ModelSpec

    written = {"name", "description", "sampled", "time_unit", "t", "parameters", "states", "algebraic",
               "odes", "masses", "constraints", "definitions", "contacts", "forcing_frequency",
               "state_units", "state_docs", "_kinematic",
               # structures (DESIGN §6): the structure's fingerprint, the points' symbols, the
               # forces; the recognition choice
               "linear_structure", "ports", "point_forces", "condense"}
    assert {f.name for f in dataclasses.fields(ModelSpec)} == written
