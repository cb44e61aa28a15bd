"""The compiled ANM series loop is built when frictionkit is installed (``setup.py``), never
at the first continuation; where that build is missing or stale it is built in the model
cache with one warning, and ``FRICTIONKIT_REQUIRE_COMPILED=1`` makes that an error."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import frictionkit.codegen
from frictionkit.codegen import BuildError
from frictionkit.runtime.discretizations import _pointwise

EXTENSION = "frictionkit.runtime.discretizations._pointwise_loop"


def test_the_installed_loop_loads_without_compiling(tmp_path):
    """In a fresh process with an empty cache: the loop is the installed extension, nothing
    is compiled (no message, no cache entry) and no warning is given."""
    code = ("import warnings; warnings.simplefilter('error')\n"
            "from frictionkit.runtime.discretizations._pointwise import compiled_loop\n"
            "loop = compiled_loop(); print(loop.__name__); print(loop.__file__); print(loop.orders)")
    env = dict(os.environ, FRICTIONKIT_CACHE=str(tmp_path / "cache"), FRICTIONKIT_REQUIRE_COMPILED="1")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    name, path, _ = run.stdout.splitlines()
    assert name == EXTENSION
    assert Path(path).parent == Path(_pointwise.__file__).parent          # beside its .pyx, not in a cache
    assert "compiling" not in run.stderr
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*pointwise_loop*"))


@pytest.fixture
def not_installed(monkeypatch):
    """As if the extension had not been built at install: its import fails."""
    monkeypatch.setattr(_pointwise, "_LOOP", {})
    monkeypatch.setitem(sys.modules, EXTENSION, None)
    monkeypatch.delenv("FRICTIONKIT_REQUIRE_COMPILED", raising=False)


def test_a_missing_loop_is_built_at_first_use_with_one_warning(not_installed, monkeypatch):
    built = object()
    calls = []

    def compile_module(source, stem, compile_args=None, label=None):
        calls.append(stem)
        assert source == _pointwise.PYX.read_text(encoding="utf-8")
        return built, {}

    monkeypatch.setattr(frictionkit.codegen, "compile_module", compile_module)
    with pytest.warns(RuntimeWarning, match="not built when frictionkit was installed.*built in the model cache"):
        assert _pointwise.compiled_loop() is built
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _pointwise.compiled_loop() is built                        # once
    assert calls == ["pointwise_loop"]


def test_a_missing_loop_is_an_error_where_compiled_code_is_required(not_installed, monkeypatch):
    monkeypatch.setenv("FRICTIONKIT_REQUIRE_COMPILED", "1")
    monkeypatch.setattr(frictionkit.codegen, "compile_module", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(BuildError, match="not built when frictionkit was installed.*REQUIRE_COMPILED=1.*reinstall"):
        _pointwise.compiled_loop()


def test_a_loop_built_from_another_source_is_not_used(tmp_path, monkeypatch):
    """An editable install whose .pyx changed after the build: the stale binary is refused."""
    monkeypatch.setattr(_pointwise, "_LOOP", {})
    assert _pointwise._installed_loop() is not None
    changed = tmp_path / "_pointwise_loop.pyx"
    changed.write_text(_pointwise.PYX.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    assert _pointwise._installed_loop(changed) is None
    assert "changed since: reinstall" in _pointwise._LOOP["missing"]
