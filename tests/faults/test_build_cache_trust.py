"""Issue 28, item 5: the build cache verifies before it trusts.

Every cached artefact a load uses (the source entry, the NumPy module's copy and bytecode, the
compiled module) is checked against its manifest and the model before it is used; what does not
match is rebuilt with exactly one :class:`CacheWarning` naming the file, never used and never a
traceback.  A build that fails for want of disk, memory or time (``ENOSPC``, an interrupt, a
killed compiler) is not remembered as a compiler failure.  A model name too long for a file
name is refused where it is declared; a file where the cache keeps a folder is a clear error.

The model: a linear oscillator ``x'' = -k x - c x'``, whose right-hand side ``(v, -k x - c v)``
and Jacobian ``[[0, 1], [-k, -c]]`` are the analytic references; its model and continuation
parameter names are as long as names may be (64 bytes), so the longest generated file names are
built here too.  Everything runs on the NumPy backend but the compiled module's cases (one
Cython build and one rebuild in the whole file).
"""
from __future__ import annotations

import errno
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import frictionkit.codegen.build as build
from frictionkit.codegen import BuildError, compile_module, generate_module
from frictionkit.codegen.build import CacheFolderError, CacheWarning
from frictionkit.modelspec import ModelSpec, zoo
from frictionkit.modelspec.errors import FrictionkitError, ModelSpecError
from frictionkit.modelspec.spec import MAX_NAME_BYTES
from frictionkit.runtime import load_model
from frictionkit.runtime.errors import InputError

NAME = "oscillator_" + "x" * (MAX_NAME_BYTES - len("oscillator_"))          # 64 bytes
PARAM = "stiffness_" + "k" * (MAX_NAME_BYTES - len("stiffness_"))           # 64 bytes
K, C = 4.0, 0.1
STATE = np.array([0.3, -0.2])


def _model_file(folder: Path, name: str = NAME, k: float = K) -> Path:
    path = folder / "oscillator.py"
    path.write_text(textwrap.dedent(f'''
        from frictionkit.modelspec import ModelSpec

        def model():
            m = ModelSpec({name!r}, "linear oscillator")
            k = m.parameter({PARAM!r}, {k!r})
            c = m.parameter("c", {C!r})
            x, v = m.second_order("x", velocity="v")
            m.ode(v, -k * x - c * v)
            return m
    '''), encoding="utf-8")
    return path


def _assert_oscillator(model, k=K, c=C):
    """The loaded model is the linear oscillator: rhs and Jacobian against the analytic ones."""
    assert model.module.MODEL_NAME == NAME
    x, v = STATE
    assert np.array_equal(model.rhs(0.0, STATE), [v, -k * x - c * v])
    assert np.array_equal(model.jac(0.0, STATE), [[0.0, 1.0], [-k, -c]])


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(root))
    monkeypatch.setattr(build, "_fallback_root", None)
    return root


def _load(path, **kw):
    return load_model(str(path), continuation=PARAM, backend="numpy", **kw)


def _one_rebuild_warning(caught, path):
    """Exactly one warning, a CacheWarning that names ``path`` and says it was rebuilt."""
    messages = [str(w.message) for w in caught]
    assert len(caught) == 1 and caught[0].category is CacheWarning, messages
    assert str(path) in messages[0] and "rebuilt" in messages[0], messages[0]


def _warm(cache, tmp_path):
    """A model file loaded once (the cache filled), the paths of its cached artefacts."""
    path = _model_file(tmp_path)
    _assert_oscillator(_load(path))
    (entry,) = (cache / "sources").glob(f"{NAME}__{PARAM}_*.json")
    (copy,) = (cache / "modules").glob(f"{NAME}__{PARAM}_*.py")
    (pyc,) = (cache / "modules" / "__pycache__").glob(f"{copy.stem}.*.pyc")
    return path, entry, copy, pyc


# -- the NumPy module's copy and bytecode ------------------------------------------------------

def _edit(copy: Path):
    """The kind of edit that gave silently wrong numbers: the stiffness term doubled."""
    text = copy.read_text(encoding="utf-8")
    edited = text + "\n_rhs = rhs\ndef rhs(t, x, p):\n    out = _rhs(t, x, p)\n    out[1] *= 2\n    return out\n"
    copy.write_text(edited, encoding="utf-8")


@pytest.mark.parametrize("damage", ["edit", "truncate", "empty"])
def test_a_damaged_numpy_copy_is_rebuilt_with_one_warning(cache, tmp_path, damage):
    path, _, copy, _ = _warm(cache, tmp_path)
    good = copy.read_bytes()
    if damage == "edit":
        _edit(copy)
    else:       # a truncated copy used to raise SyntaxError from the import
        copy.write_bytes(good[: len(good) // 2] if damage == "truncate" else b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _load(path)
    _one_rebuild_warning(caught, copy)
    _assert_oscillator(model)
    assert copy.read_bytes() == good
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # and trusted again, silently
        _assert_oscillator(_load(path))


def test_bytecode_that_is_not_the_copys_is_rebuilt_with_one_warning(cache, tmp_path):
    """Bytecode compiled from an edited source, put in place of the cached one: Python's own
    check (time stamp and size of the source) would accept it, the manifest does not."""
    import py_compile
    path, _, copy, pyc = _warm(cache, tmp_path)
    other = tmp_path / "other" / copy.name
    other.parent.mkdir()
    shutil.copy2(copy, other)
    _edit(other)
    good = pyc.read_bytes()
    py_compile.compile(str(other), cfile=str(pyc), doraise=True)
    assert pyc.read_bytes() != good
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _load(path)
    _one_rebuild_warning(caught, pyc)
    _assert_oscillator(model)


# -- the source entry --------------------------------------------------------------------------

def _belt_entry(cache):
    load_model(zoo.belt(), continuation="Vb", backend="numpy")
    (entry,) = (cache / "sources").glob("belt__Vb_*.json")
    return entry


def _other_version_entry(cache, tmp_path):
    """The entry of this model with another default stiffness (another key, same name)."""
    folder = tmp_path / "other"
    folder.mkdir()
    before = set((cache / "sources").glob("*.json"))
    _load(_model_file(folder, k=9.0))
    (entry,) = set((cache / "sources").glob("*.json")) - before
    return entry


@pytest.mark.parametrize("swap", ["another_model", "another_version", "edited", "truncated"])
def test_a_source_entry_that_is_not_this_models_is_rebuilt_with_one_warning(cache, tmp_path, swap):
    """``load_model("fresh.py")`` returned the belt when the source entry held the belt's
    source; now the entry is checked against the spec's key and name and its own hash."""
    path, entry, _, _ = _warm(cache, tmp_path)
    good = json.loads(entry.read_text(encoding="utf-8"))
    if swap == "another_model":
        shutil.copyfile(_belt_entry(cache), entry)
    elif swap == "another_version":
        shutil.copyfile(_other_version_entry(cache, tmp_path), entry)
    elif swap == "edited":              # the stiffness's default changed inside the source
        bad = dict(good, sources={"numpy": good["sources"]["numpy"].replace(f"{K!r},", "9.0,")})
        assert bad != good
        entry.write_text(json.dumps(bad), encoding="utf-8")
    else:
        entry.write_text(entry.read_text(encoding="utf-8")[:1000], encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _load(path)
    _one_rebuild_warning(caught, entry)
    _assert_oscillator(model)
    assert model.value(PARAM) == K
    assert json.loads(entry.read_text(encoding="utf-8")) == good


# -- transient build failures --------------------------------------------------------------------

TINY = "# cython: language_level=3\ndef answer(double x):\n    return 2.0 * x + 7\n"


def _fake_compiler(returncode=1, output="", raises=None, calls=None):
    """Stands for the build child: writes ``output`` to the log it is given, then fails."""
    def run(cmd, stdout=None, **kwargs):
        if calls is not None:
            calls.append(cmd)
        if raises is not None:
            raise raises
        stdout.write(output)
        return subprocess.CompletedProcess(cmd, returncode)
    return run


TRANSIENT = {
    "disk full (compiler)": dict(output="fatal error: error writing to /tmp/ccA.s: No space left on device\n"),
    "disk full (here)": dict(raises=OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "build.log")),
    "compiler killed": dict(returncode=-9, output="gcc: internal compiler error: Killed (program cc1)\n"),
    "interrupted child": dict(returncode=75, output="build interrupted (KeyboardInterrupt)\n"),
}


@pytest.mark.parametrize("fault", sorted(TRANSIENT))
def test_a_transient_build_failure_is_not_remembered(cache, monkeypatch, fault):
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(**TRANSIENT[fault]))
    with pytest.raises(BuildError, match="the next load tries again"):
        compile_module(TINY, "tiny")
    assert not list(cache.glob("*/FAILED.json"))
    assert not list(cache.glob("*/build-*"))             # its temporary folder removed
    calls = []
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(output="Error compiling Cython file\n",
                                                                calls=calls))
    with pytest.raises(BuildError, match=r"failed \(exit code 1\)"):
        compile_module(TINY, "tiny")                     # tried again: the compiler ran
    assert len(calls) == 1 and len(list(cache.glob("*/FAILED.json"))) == 1
    with pytest.raises(BuildError, match="failed before"):
        compile_module(TINY, "tiny")                     # a genuine failure stays remembered
    assert len(calls) == 1


def test_an_interrupt_during_a_build_records_nothing(cache, monkeypatch):
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(raises=KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        compile_module(TINY, "tiny")
    assert not list(cache.glob("*/FAILED.json")) and not list(cache.glob("*/build-*"))
    calls = []
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(calls=calls))
    with pytest.raises(BuildError):
        compile_module(TINY, "tiny")                     # the lock is free and the compiler runs
    assert len(calls) == 1


def test_a_full_disk_remembered_by_an_older_version_is_retried(cache, monkeypatch):
    folder = cache / build.build_key(TINY)
    folder.mkdir(parents=True)
    (folder / "build.log").write_text("error: [Errno 28] No space left on device\n")
    (folder / "FAILED.json").write_text(json.dumps({"returncode": 1, "log": str(folder / "build.log")}))
    calls = []
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(calls=calls))
    with pytest.raises(BuildError):
        compile_module(TINY, "tiny")
    assert len(calls) == 1


# -- the compiled module (the file's only Cython build and rebuild) ----------------------------

@pytest.fixture(scope="module")
def compiled_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("compiled") / "cache"


_CHILD = """
import json, sys, warnings
import numpy as np
from frictionkit.runtime import load_model
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m = load_model(sys.argv[1], continuation=sys.argv[2], backend="cython")
    print(json.dumps({"backend": m.module.BACKEND, "file": m.module.__file__,
                      "rhs": m.rhs(0.0, [0.3, -0.2]).tolist(), "jac": m.jac(0.0, [0.3, -0.2]).tolist(),
                      "warnings": [[w.category.__name__, str(w.message)] for w in caught]}))
"""


def _in_child(cache, path):
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), PARAM], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, FRICTIONKIT_CACHE=str(cache)))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _assert_compiled_oscillator(res):
    x, v = STATE
    assert res["backend"] == "cython"
    assert res["rhs"] == [v, -K * x - C * v] and res["jac"] == [[0.0, 1.0], [-K, -C]]


def test_a_full_disk_during_the_build_then_the_build(compiled_cache, tmp_path, monkeypatch):
    """The compiler fails for want of disk: not remembered; the next load builds, and the
    compiled kernels (longest allowed names) give the analytic rhs and Jacobian."""
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(compiled_cache))
    monkeypatch.setattr(build, "_fallback_root", None)
    path = _model_file(tmp_path)
    real = build.subprocess.run
    monkeypatch.setattr(build.subprocess, "run", _fake_compiler(**TRANSIENT["disk full (compiler)"]))
    with pytest.raises(BuildError, match="No space left on device.*the next load tries again"):
        generate_module(str(path), PARAM, backend="cython")
    monkeypatch.setattr(build.subprocess, "run", real)
    assert not list(compiled_cache.glob("*/FAILED.json"))
    _assert_compiled_oscillator(_in_child(compiled_cache, path))


def test_a_compiled_module_that_is_not_its_manifests_is_rebuilt(compiled_cache, tmp_path):
    """One byte of the extension changed (same size, another hash): rebuilt with one warning,
    never imported.  Loads run in child processes: this process never maps a file it damages."""
    path = _model_file(tmp_path)
    first = _in_child(compiled_cache, path)                   # built, if the test above did not
    _assert_compiled_oscillator(first)
    so = Path(first["file"])
    data = bytearray(so.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tmp = so.with_name("edited.tmp")
    tmp.write_bytes(bytes(data))
    os.replace(tmp, so)                      # a new file: nobody's mapping of the old one changes
    res = _in_child(compiled_cache, path)
    assert len(res["warnings"]) == 1, res["warnings"]
    category, message = res["warnings"][0]
    assert category == "CacheWarning" and str(so) in message and "rebuilt" in message
    _assert_compiled_oscillator(res)
    res = _in_child(compiled_cache, path)
    assert res["warnings"] == [] and res["file"] == str(so)
    _assert_compiled_oscillator(res)


def test_the_manifest_binds_the_key_the_module_and_its_source(compiled_cache, tmp_path):
    """What the lookup checks before an import, on the entry built above (nothing imported
    here): a manifest of another key or module, of another source, a damaged or missing one."""
    path = _model_file(tmp_path)
    _assert_compiled_oscillator(_in_child(compiled_cache, path))          # built, if not yet
    (manifest,) = compiled_cache.glob("*/MANIFEST.json")
    info = json.loads(manifest.read_text())
    so = manifest.parent / (info["name"] + importlib.machinery.EXTENSION_SUFFIXES[0])     # not the .pyx beside it
    pyx = (manifest.parent / f"{info['name']}.pyx").read_text(encoding="utf-8")
    key = manifest.parent.name
    assert build._check(so, key, pyx) is None
    assert build._check(so, key, pyx + "\n") == ("was built from another source than this model's (the "
                                                 "manifest's .pyx hash differs)")
    for change in (dict(key="0" * 20), dict(name="_fk_belt__Vb_0")):
        manifest.write_text(json.dumps(dict(info, **change)))
        assert build._check(so, key, pyx).startswith("belongs to another build")
    manifest.write_text("{")
    assert build._check(so, key, pyx).startswith("has a damaged manifest")
    manifest.unlink()
    assert build._check(so, key, pyx) == "has no manifest (MANIFEST.json)"
    manifest.write_text(json.dumps(info))
    assert build._check(so, key, pyx) is None


# -- names and folders -------------------------------------------------------------------------

def test_a_model_name_too_long_for_a_file_name_is_refused_at_declaration(cache, tmp_path):
    with pytest.raises(ModelSpecError, match=rf"model name .* is 240 bytes long .*limited to {MAX_NAME_BYTES} "
                                             r"bytes.*choose a shorter name"):
        ModelSpec("m" * 240)
    with pytest.raises(ModelSpecError, match=r"parameter name .* is 65 bytes long"):
        ModelSpec("short").parameter("p" * 65, 1.0)
    ModelSpec("m" * MAX_NAME_BYTES).parameter("p" * MAX_NAME_BYTES, 1.0)        # the limit itself
    # from a model file: the same words, as an input error of load_model
    with pytest.raises(InputError, match=r"model name .* is 240 bytes long"):
        _load(_model_file(tmp_path, name="m" * 240))
    assert not cache.exists()


def _no_errno(exc):
    assert "Errno" not in str(exc) and "File exists" not in str(exc), str(exc)


def test_a_cache_path_that_is_a_file_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FRICTIONKIT_CACHE", str(blocker))
    monkeypatch.setattr(build, "_fallback_root", None)
    path = _model_file(tmp_path)
    for backend in ("numpy", "auto"):
        with pytest.raises(CacheFolderError, match=rf"cache folder {blocker} is a file, not a folder: move or "
                                                   r"delete that file, or set FRICTIONKIT_CACHE to a folder"):
            load_model(str(path), continuation=PARAM, backend=backend)
    with pytest.raises(CacheFolderError) as info:
        compile_module(TINY, "tiny")
    _no_errno(info.value)
    assert isinstance(info.value, FrictionkitError) and blocker.read_text() == "not a folder"


@pytest.mark.parametrize("sub", ["modules", "sources", "modules/__pycache__", "key"])
def test_a_cache_subfolder_that_is_a_file_is_a_clear_error(cache, tmp_path, sub):
    path = _model_file(tmp_path)
    cache.mkdir()
    if sub == "key":
        blocker = cache / build.build_key(TINY)
    else:
        blocker = cache / sub
        blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("in the way")
    with pytest.raises(CacheFolderError, match=rf"{blocker} is a file where the frictionkit cache keeps a "
                                               r"folder: delete it") as info:
        if sub == "key":
            compile_module(TINY, "tiny")
        else:
            _load(path)
    _no_errno(info.value)
    blocker.unlink()
    if sub != "key":
        _assert_oscillator(_load(path))          # the remedy works
