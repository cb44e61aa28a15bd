"""The rendered-source cache of models given as a ModelSpec or a model file (codegen/api.py
``_cached_sources``): what it returns is what the generator renders, a hit renders nothing,
anything that changes the generated code changes the key, and a damaged or read-only cache is
never an error (a damaged entry is rebuilt with one warning)."""
from __future__ import annotations

import dataclasses
import json

import pytest

import frictionkit.codegen.api as api
from frictionkit.codegen.build import CacheWarning
from frictionkit.modelspec import zoo


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(tmp_path))
    return tmp_path / "sources"


def _no_render(*args, **kwargs):
    raise AssertionError("rendered although the sources are cached")


def test_a_hit_returns_the_rendered_sources_without_rendering(cache, monkeypatch):
    _, fresh = api.generate_sources(zoo.belt(), "Vb", ("numpy", "cython"))
    _, first = api._cached_sources(zoo.belt(), "Vb", ("numpy", "cython"))
    assert first == fresh and len(list(cache.glob("belt__Vb_*.json"))) == 1
    monkeypatch.setattr(api, "_render", _no_render)
    _, again = api._cached_sources(zoo.belt(), "Vb", ("numpy", "cython"))
    assert again == fresh


def test_the_key_follows_the_model_and_the_backends(cache):
    api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    api._cached_sources(zoo.belt(), "Vb", ("numpy", "cython"))
    api._cached_sources(zoo.belt(), "FN", ("numpy",))
    changed = zoo.belt()
    key = next(k for k, p in changed.parameters.items() if p.name == "n")
    changed.parameters[key] = dataclasses.replace(changed.parameters[key], default=12.0)   # in the code
    api._cached_sources(changed, "Vb", ("numpy",))
    names = sorted(p.name for p in cache.glob("*.json"))
    assert len(names) == 4 and len({n.rsplit("_", 1)[1] for n in names}) == 4, names


def test_a_damaged_entry_is_rendered_again(cache):
    api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    (path,) = cache.glob("*.json")
    path.write_text("{", encoding="utf-8")
    with pytest.warns(CacheWarning, match="is not valid JSON"):
        _, src = api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    assert src == api.generate_sources(zoo.belt(), "Vb", ("numpy",))[1]
    assert json.loads(path.read_text(encoding="utf-8"))["sources"] == src     # the entry's layout


def test_a_cache_that_cannot_be_written_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(blocker / "cache"))     # below a file: no folder
    _, src = api._cached_sources(zoo.belt(), "Vb", ("numpy",))
    assert src == api.generate_sources(zoo.belt(), "Vb", ("numpy",))[1]


def test_a_cached_model_loads_without_the_templates_or_printers(tmp_path):
    """A warm load imports neither jinja2 nor the printers (about 25 ms of the belt's load):
    checked in a fresh interpreter, after a first load has filled the cache."""
    import subprocess
    import sys
    code = ("import sys; from frictionkit.runtime import load_model; from frictionkit.modelspec import zoo; "
            "load_model(zoo.belt(), continuation='Vb', n=10.0); "
            "print(sorted(m for m in sys.modules if m.startswith('jinja2') or m.endswith('codegen.printers')))")
    env = dict(__import__("os").environ, FRICTIONKIT_CACHE=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "jinja2" in first.stdout          # the first load renders
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert warm.stdout.strip() == "[]", warm.stdout
