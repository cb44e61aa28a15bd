"""Issue 28, item 5: hostile HDF5 files read by report, plot, export and restart.

Every case below edits one attribute or dataset of a real run file (belt, equilibria and a
short periodic branch): a chunked (1e9, 1e9) ``solution`` in a file of kilobytes, a hollow
``param`` of 1e8 values, 200,000 nested brackets in ``states``, shapes that contradict each
other, text where numbers belong.  Each must give a clear error naming the file and the
dataset or attribute, from Python and from every command that reads the file — never a
traceback, never a large allocation.
"""
import json
import re
import shutil
import tracemalloc
import warnings

from click.testing import CliRunner
import h5py
import numpy as np
import pytest

from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_run, save_run
from frictionkit.runtime.results._sweeps import load_sweep_map
from frictionkit.runtime.sweeps import SweepSpec, SweepStore


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eq, per = run_continuation(m, 0.05, 12, start="hopf", harmonics=5, progress=False, echo=lambda s: None,
                                   options=dict(max_steps=30))
    path = tmp_path_factory.mktemp("base") / "base.h5"
    save_run(path, equilibria=eq, periodic=per)
    return path


def _replace(g, name, **kwargs):
    """Dataset ``name`` of ``g`` made anew from ``kwargs``, its attributes kept."""
    attrs = dict(g[name].attrs)
    del g[name]
    g.create_dataset(name, **kwargs).attrs.update(attrs)


def _shorter(g, name, n):
    data = g[name][()]
    _replace(g, name, data=data[:n])


# name: (group, edit, what the message must say)
CASES = {
    "huge-solution": ("periodic", lambda g: _replace(g, "solution", shape=(10**9, 10**9), dtype="f8",
                                                     chunks=(1, 1)),
                      "dataset /periodic/solution: shape (1000000000, 1000000000), expected"),
    "huge-param": ("periodic", lambda g: _replace(g, "param", shape=(10**12,), dtype="f8", chunks=(1,)),
                   "dataset /periodic/param: shape (1000000000000,) needs 7.28 TiB"),
    "hollow-param": ("periodic", lambda g: _replace(g, "param", shape=(10**8,), dtype="f8", chunks=(10**5,)),
                     "dataset /periodic/param: shape (100000000,) claims 763 MiB of values but the file stores 0"),
    "nested-states": ("periodic", lambda g: g.attrs.__setitem__("states", "[" * 200_000 + "]" * 200_000),
                      "attribute 'states' of /periodic: JSON nested too deeply"),
    "nested-special-data": ("equilibria", lambda g: _replace(
        g["special"], "data", data=np.array(["[" * 200_000 + "]" * 200_000] * 2, dtype=object),
        dtype=h5py.string_dtype()), "dataset /equilibria/special/data: JSON nested too deeply"),
    "states-not-names": ("periodic", lambda g: g.attrs.__setitem__("states", '["y", 3]'),
                         "attribute 'states' of /periodic: '[\"y\", 3]' is not a list of names"),
    "state-path": ("periodic", lambda g: g.attrs.__setitem__("states", '["y", "../equilibria/ptp/v"]'),
                   "is not a list of names"),
    "states-repeated": ("periodic", lambda g: g.attrs.__setitem__("states", '["y", "y"]'),
                        "not a list of distinct state names"),
    "stable-short": ("periodic", lambda g: _shorter(g, "stable", 5),
                     "dataset /periodic/stable: shape (5,), expected (121,)"),
    "tangent-narrow": ("periodic", lambda g: _replace(g, "tangent", data=np.zeros((121, 23))),
                       "dataset /periodic/tangent: shape (121, 23), expected (121, 24)"),
    "multipliers-mismatch": ("periodic", lambda g: _replace(g, "multipliers_im", data=np.zeros((121, 3))),
                             "dataset /periodic/multipliers_im: shape (121, 3), expected (121, 2)"),
    "motion-short": ("periodic", lambda g: _shorter(g, "motion", 3),
                     "dataset /periodic/motion: shape (3,), expected (121,)"),
    "ptp-long": ("periodic", lambda g: _replace(g["ptp"], "y", data=np.zeros(7)),
                 "dataset /periodic/ptp/y: shape (7,), expected (121,)"),
    "special-lengths": ("equilibria", lambda g: _replace(g["special"], "param", data=np.zeros(3)),
                        "dataset /equilibria/special/param: shape (3,), expected (2,)"),
    "special-width": ("equilibria", lambda g: _replace(g["special"], "solution", data=np.zeros((2, 4))),
                      "dataset /equilibria/special/solution: shape (2, 4), expected (2, 3)"),
    "special-kind": ("equilibria", lambda g: _replace(g["special"], "kind", data=np.array(["hopf", "<b>"], dtype=object),
                                                      dtype=h5py.string_dtype()),
                     "special point kind '<b>' is not one of"),
    "param-text": ("periodic", lambda g: _replace(g, "param", data=np.array(["1"] * 121, dtype=object),
                                                  dtype=h5py.string_dtype()),
                   "dataset /periodic/param: holds object, not real numbers"),
    "eigenvalues-rows": ("equilibria", lambda g: _replace(g, "eigenvalues", data=np.zeros((3, 2), complex)),
                         "dataset /equilibria/eigenvalues: shape (3, 2), expected (13, any)"),
    "harmonics-huge": ("periodic", lambda g: g["solution"].attrs.__setitem__("harmonics", 10**9),
                       "dataset /periodic/solution: harmonics 1000000000 and index_omega 22 do not fit 24 unknowns"),
    "index-omega": ("periodic", lambda g: g["solution"].attrs.__setitem__("index_omega", 10**6),
                    "index_omega 1000000 do not fit"),
    "parameter-text": ("periodic", lambda g: g.attrs.__setitem__("parameters", '{"n": "abc", "Vb": 1}'),
                       "attribute 'parameters' of /periodic: '{\"n\": \"abc\", \"Vb\": 1}' is not a table of numbers"),
    "parameters-list": ("periodic", lambda g: g.attrs.__setitem__("parameters", "[1, 2]"),
                        "attribute 'parameters' of /periodic: '[1, 2]' is not a table of numbers"),
    "units-numbers": ("periodic", lambda g: g.attrs.__setitem__("units", '{"y": 5}'),
                      "attribute 'units' of /periodic: '{\"y\": 5}' is not a table of text"),
    "sizes-text": ("periodic", lambda g: g.attrs.__setitem__("sizes", '"abc"'),
                   "attribute 'sizes' of /periodic: '\"abc\"' is not a table"),
    "kind": ("periodic", lambda g: g.attrs.__setitem__("kind", "torus"),
             "attribute 'kind' of /periodic: 'torus', not 'periodic' or 'equilibrium'"),
    "counter-text": ("periodic", lambda g: g.attrs.__setitem__("steps", "many"),
                     "attribute 'steps' of /periodic: 'many', not an integer"),
    "not-json": ("periodic", lambda g: g.attrs.__setitem__("options", "{options"),
                 "attribute 'options' of /periodic: not JSON"),
}


@pytest.fixture
def hostile(base, tmp_path, request):
    group, edit, expected = CASES[request.param]
    path = tmp_path / f"{request.param}.h5"
    shutil.copy(base, path)
    with h5py.File(path, "r+") as f:
        edit(f[group])
    return path, group, expected


@pytest.mark.parametrize("hostile", sorted(CASES), indirect=True)
def test_python_names_the_file_and_the_dataset(hostile):
    path, _, expected = hostile
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            load_run(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value) and expected in str(info.value), str(info.value)
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MiB allocated to read a damaged file"


@pytest.mark.parametrize("hostile", sorted(CASES), indirect=True)
@pytest.mark.parametrize("command", ["report", "plot", "export-csv", "export-mat", "restart"])
def test_every_command_names_the_file_and_the_dataset(hostile, command, tmp_path):
    path, group, expected = hostile
    if command == "restart" and group != "periodic":
        pytest.skip("a restart reads the run file's main (periodic) branch only")
    args = {"report": ["report", path, "-o", tmp_path / "r.html"],
            "plot": ["plot", path, "-o", tmp_path / "p.png"],
            "export-csv": ["export", path, "--csv", "-o", tmp_path / "e.csv"],
            "export-mat": ["export", path, "--mat", "-o", tmp_path / "e.mat"],
            "restart": ["continue", "--restart", path, "--max-steps", 1, "--out", tmp_path / "c.h5", "-q"]}[command]
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Error:" in r.output and str(path) in r.output and expected in r.output, r.output
    assert [p.name for p in tmp_path.iterdir() if p.suffix != ".h5" or p.name == "c.h5"] == []


# -- sweep stores -------------------------------------------------------------------------

def _store(path):
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10}, harmonics=5)
    with SweepStore(path, spec) as store:
        store.commit([{"index": 0, "branches": {},
                       "row": {"FN": 1.0, "status": "ok", "message": "", "eq_stable": "[[0.05, 3.0]]",
                               "orbit_stable": "[]"}}])
    return spec


def _set_spec(f, change):
    d = json.loads(f.attrs["spec"])
    change(d)
    f.attrs["spec"] = json.dumps(d)


def _set_row(f, change):
    g = f["tasks/000000"]
    row = json.loads(g.attrs["row"])
    change(row)
    g.attrs["row"] = json.dumps(row)


STORE_CASES = {
    "spec-nested": (lambda f: f.attrs.__setitem__("spec", "[" * 200_000 + "]" * 200_000),
                    "attribute 'spec' of /: JSON nested too deeply"),
    "spec-fields": (lambda f: _set_spec(f, lambda d: d.pop("task")), "not the spec of a frictionkit sweep"),
    "spec-over": (lambda f: _set_spec(f, lambda d: d.__setitem__("over", [["FN", ["a", "b"]]])),
                  "not the spec of a frictionkit sweep"),
    "row-nested": (lambda f: f["tasks/000000"].attrs.__setitem__("row", "{" * 100_000),
                   "attribute 'row' of /tasks/000000: not JSON"),
    "row-grid-text": (lambda f: _set_row(f, lambda r: r.__setitem__("FN", "x")),
                      "attribute 'row' of /tasks/000000: FN = 'x', not a number"),
    "row-intervals": (lambda f: _set_row(f, lambda r: r.__setitem__("eq_stable", "[" * 100_000 + "]" * 100_000)),
                      "eq_stable is not a JSON list of [lo, hi] intervals"),
    "task-name": (lambda f: f["tasks"].create_group("abc"), "group /tasks/abc: not a task index"),
}


@pytest.mark.parametrize("case", sorted(STORE_CASES))
def test_a_damaged_sweep_store_is_named(case, tmp_path):
    path = tmp_path / "s.h5"
    spec = _store(path)
    edit, expected = STORE_CASES[case]
    with h5py.File(path, "r+") as f:
        edit(f)
    with pytest.raises(InputError, match="sweep store") as info:
        load_sweep_map(path)
    assert str(path) in str(info.value) and expected in str(info.value), str(info.value)
    r = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit) and expected in r.output, r.output
    if case.startswith("spec"):                  # resuming it: refused as damaged, never a traceback
        with pytest.raises(InputError, match=re.escape(str(path))):
            SweepStore(path, spec)
