"""Issue 28, item 7 of the work: every input bounded and checked up front.

* A sweep grid of 1e8 points allocated for minutes and died with ``MemoryError``: now a grid
  past ``--max-tasks`` (default 100,000) is refused before it is made, naming each ``--over``
  and its count; the option raises the limit.  The refusal is checked by the memory it takes
  (nothing of the grid's size is allocated), not by a time.
* Curve files (``hopf-curve``/``fold-curve --out``) were read without a check: now through the
  checked reader, naming the file and the dataset or attribute.
* A unit matplotlib cannot typeset (an unbalanced ``$``, bad mathtext) failed in a plot after
  the run: now refused when the model is declared, naming the state or parameter and the
  unit; a figure of a file holding one draws it literally.
"""
import itertools
import json
import shutil
import tracemalloc
import warnings

from click.testing import CliRunner
import h5py
import matplotlib.image
import numpy as np
import pytest

from frictionkit.modelspec import ModelSpec
from frictionkit.modelspec.errors import InvalidTextError
from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_run, save_run
from frictionkit.runtime.results._plots import plot_branches, plot_frequency_response, plot_orbit
from frictionkit.runtime.sweeps import SweepSpec, SweepStore, sweep
from frictionkit.runtime.sweeps._spec import MAX_TASKS, parse_grid

SWEEP = ["sweep", "belt", "-p", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "-q"]


def _invoke(argv):
    """``(result, peak bytes allocated)`` of the command line ``argv`` run in this process."""
    tracemalloc.start()
    try:
        r = CliRunner().invoke(main, [str(a) for a in argv])
        return r, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- sweep grids ------------------------------------------------------------------------------

@pytest.mark.parametrize("over, named", [
    (["FN=0.5:10:100000000"], "FN (100,000,000 values) has 100,000,000 points"),
    (["FN=0.5:10:1000", "mu=0:1:1000"], "FN (1,000 values) x mu (1,000 values) has 1,000,000 points"),
], ids=["1e8", "1000x1000"])
def test_a_grid_past_the_limit_is_refused_before_it_is_made(over, named, tmp_path):
    r, peak = _invoke(SWEEP + [a for o in over for a in ("--over", o)] + ["--out", tmp_path / "s.h5"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output and named in r.output and "--max-tasks" in r.output, r.output
    assert f"limit of {MAX_TASKS:,} tasks" in r.output, r.output
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB allocated to refuse the grid"
    assert list(tmp_path.iterdir()) == []


def test_max_tasks_raises_the_limit(tmp_path):
    # past the grid check, the next check refuses the model: the grid itself was accepted
    r = CliRunner().invoke(main, ["sweep", "no_such_model", "-p", "Vb", "--start", "0.05", "--stop", "12",
                                  "--over", "FN=0.5:10:200001", "--max-tasks", "200001", "--out",
                                  str(tmp_path / "s.h5"), "-q"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "no_such_model" in r.output and "--max-tasks" not in r.output, r.output


def test_python_sweep_refuses_a_large_grid_before_loading_the_model(tmp_path):
    with pytest.raises(InputError, match=r"over: the grid FN \(1,000,000 values\).*max_tasks=1000000"):
        sweep("no_such_model", "Vb", 0.05, 12, {"FN": np.zeros(10**6)}, out=tmp_path / "s.h5")
    with pytest.raises(InputError, match="--over FN=0:1:11: the grid FN .* limit of 10 tasks"):
        parse_grid("FN=0:1:11", "--over FN=0:1:11", max_points=10)


def test_a_spec_counts_and_indexes_its_grid_without_making_it():
    grid = {"a": np.arange(3.0), "b": np.arange(4.0) / 4, "c": np.arange(5.0) * 10}
    small = SweepSpec.build("belt", "h", "Vb", 0.05, 12, grid)
    reference = list(itertools.product(*grid.values()))         # the last name varies fastest
    assert len(small) == len(reference) == 60
    assert [tuple(small.point(i).values()) for i in range(60)] == reference
    huge = SweepSpec.build("belt", "h", "Vb", 0.05, 12, {"a": np.arange(1000.0), "b": np.arange(1000.0),
                                                          "c": np.arange(1000.0)})
    tracemalloc.start()
    try:
        assert len(huge) == 10**9 and huge.point(10**9 - 1) == {"a": 999.0, "b": 999.0, "c": 999.0}
        assert huge.point(1_002_003) == {"a": 1.0, "b": 2.0, "c": 3.0}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


# -- curve files ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def curve_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("curve") / "hopf.h5"
    BifurcationCurve("belt", "Vb", "FN", np.array([0.14, 0.2, 0.5]), np.array([5.0, 4.0, 3.0]), np.ones(3),
                     np.zeros((3, 2)), "range", "reached", folds_mu=[4.0], parameters={"n": 10.0, "FN": 5.0}).save(path)
    return path


def _replace(f, name, **kwargs):
    del f[name]
    f.create_dataset(name, **kwargs)


CURVE_CASES = {
    "huge-lam": (lambda f: _replace(f, "lam", shape=(10**12,), dtype="f8", chunks=(1,)),
                 "dataset /lam: shape (1000000000000,) needs"),
    "hollow-mu": (lambda f: _replace(f, "lam", shape=(10**8,), dtype="f8", chunks=(10**5,)),
                  "dataset /lam: shape (100000000,) claims 763 MiB of values but the file stores 0"),
    "huge-states": (lambda f: _replace(f, "states", shape=(3, 10**9), dtype="f8", chunks=(1, 1)),
                    "dataset /states: shape (3, 1000000000) needs"),
    "mu-short": (lambda f: _replace(f, "mu", data=np.zeros(2)), "dataset /mu: shape (2,), expected (3,)"),
    "omega-text": (lambda f: _replace(f, "omega", data=np.array(["a"] * 3, dtype=object), dtype=h5py.string_dtype()),
                   "dataset /omega: holds object, not real numbers"),
    "states-rows": (lambda f: _replace(f, "states", data=np.zeros((4, 2))),
                    "dataset /states: shape (4, 2), expected (3, any)"),
    "parameters-text": (lambda f: f.attrs.__setitem__("parameters", '{"n": "abc"}'),
                        "attribute 'parameters' of /: '{\"n\": \"abc\"}' is not a table of numbers"),
    "parameters-nested": (lambda f: f.attrs.__setitem__("parameters", "[" * 200_000 + "]" * 200_000),
                          "attribute 'parameters' of /: JSON nested too deeply"),
    "folds-text": (lambda f: f.attrs.__setitem__("folds_mu", "many"),
                   "attribute 'folds_mu' of /: <U4 of shape (1,), not a list of numbers"),
    "kind": (lambda f: f.attrs.__setitem__("kind", "torus_curve"),
             "attribute 'kind' of /: 'torus_curve', not one of fold_curve, hopf_curve, ns_curve, pd_curve"),
    "name-missing": (lambda f: f.attrs.__delitem__("mu_name"), "attribute 'mu_name' of /: missing"),
}


@pytest.fixture
def hostile_curve(curve_file, tmp_path, request):
    edit, expected = CURVE_CASES[request.param]
    path = tmp_path / f"{request.param}.h5"
    shutil.copy(curve_file, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    return path, expected


def test_a_curve_file_reads_back(curve_file):
    c = BifurcationCurve.load(curve_file)
    assert c.kind == "hopf" and c.mu.tolist() == [5.0, 4.0, 3.0] and c.folds_mu == [4.0]
    assert c.parameters == {"n": 10.0, "FN": 5.0} and c.states.shape == (3, 2)


@pytest.mark.parametrize("hostile_curve", sorted(CURVE_CASES), indirect=True)
def test_a_hostile_curve_file_is_named(hostile_curve, tmp_path):
    path, expected = hostile_curve
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as info:
            BifurcationCurve.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(path) in str(info.value) and expected in str(info.value), str(info.value)
    assert peak < 50 * 2**20
    store = tmp_path / "s.h5"
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10}, harmonics=5)
    with SweepStore(store, spec) as s:
        s.commit([{"index": i, "branches": {}, "row": {"FN": fn, "status": "ok", "message": "",
                                                        "eq_stable": "[[0.05, 3.0]]", "orbit_stable": "[]"}}
                  for i, fn in enumerate((1.0, 2.0))])
    for argv in (["report", path, "-o", tmp_path / "r.html"],
                 ["plot-sweep", store, "--curve", path, "--out", tmp_path / "m.png"]):
        r = CliRunner().invoke(main, [str(a) for a in argv])
        assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (argv, r.output, r.exception)
        assert "Traceback" not in r.output and str(path) in r.output and expected in r.output, r.output
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "m.png").exists()


# -- units ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("declare, named", [
    (lambda m: m.parameter("mu", 0.5, unit="$m^$"), "unit of parameter 'mu' '$m^$' is not mathtext"),
    (lambda m: m.parameter("mu", 0.5, unit=r"$\frac{1}{s$"), r"unit of parameter 'mu' '$\\frac{1}{s$'"),
    (lambda m: m.state("x", unit="$m"), "unit of state 'x' '$m' has an unbalanced '$'"),
    (lambda m: m.second_order("x", velocity="v", velocity_unit=r"$\foo$"), r"unit of state 'v' '$\\foo$'"),
    (lambda m: ModelSpec("vdp", "oscillator", time_unit="s$"), "time unit of model 'vdp' 's$' has an unbalanced"),
], ids=["parameter-mathtext", "parameter-frac", "state-dollar", "velocity-symbol", "time-unit"])
def test_a_unit_matplotlib_cannot_typeset_is_refused_at_declaration(declare, named):
    with pytest.raises(InvalidTextError) as info:
        declare(ModelSpec("vdp", "oscillator"))
    assert named in str(info.value), str(info.value)


def test_units_matplotlib_can_typeset_are_accepted():
    m = ModelSpec("vdp", "oscillator", time_unit="s")
    m.parameter("mu", 0.5, unit=r"$\mathrm{s^{-1}}$")
    m.parameter("price", 1.0, unit=r"\$/kg")                  # a literal dollar, escaped
    m.second_order("x", velocity="v", unit="m", velocity_unit="$m/s$")
    assert m.parameters["mu"].unit == r"$\mathrm{s^{-1}}$" and m.state_units == {"x": "m", "v": "$m/s$"}


def test_a_file_with_bad_mathtext_units_still_plots(tmp_path):
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eq, per = run_continuation(m, 0.05, 12, start="hopf", harmonics=5, progress=False, echo=lambda s: None,
                                   options=dict(max_steps=10))
    path = tmp_path / "run.h5"
    save_run(path, equilibria=eq, periodic=per)
    with h5py.File(path, "r+") as f:
        for g in ("equilibria", "periodic"):
            units = json.loads(f[g].attrs["units"])
            units.update(y="$m^$", Vb=r"$\foo$", t="s$")
            f[g].attrs["units"] = json.dumps(units)
            f[g].attrs["model"] = r"$\frac{$"
    eq, per = load_run(path)
    plot_branches([eq, per], path=tmp_path / "b.png")
    plot_orbit(per, 2, path=tmp_path / "o.png")
    plot_frequency_response([per], path=tmp_path / "f.png")      # the model name in its title
    assert matplotlib.image.imread(tmp_path / "b.png").shape[2] == 4
    r = CliRunner().invoke(main, ["plot", str(path), "-o", str(tmp_path / "c.png")])
    assert r.exit_code == 0 and (tmp_path / "c.png").stat().st_size > 0, r.output


def test_a_store_claiming_a_huge_two_parameter_grid_is_refused_before_the_map_is_made(tmp_path):
    # 60,000 x 60,000 values in the stored spec (1 MB of JSON) would be a map of 3.6e9 cells
    path = tmp_path / "s.h5"
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0], "n": [10.0]}, harmonics=5)
    with SweepStore(path, spec) as store:
        store.commit([{"index": 0, "branches": {}, "row": {"FN": 1.0, "n": 10.0, "status": "ok", "message": "",
                                                            "eq_stable": "[[0.05, 3.0]]", "orbit_stable": "[]"}}])
    with h5py.File(path, "r+") as f:
        d = json.loads(f.attrs["spec"])
        d["over"] = [["FN", np.linspace(1, 2, 60_000).tolist()], ["n", np.linspace(5, 10, 60_000).tolist()]]
        f.attrs["spec"] = json.dumps(d)
    r, peak = _invoke(["plot-sweep", path, "--at", "1", "--out", tmp_path / "m.png"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "the map over FN (60,000 values) x n (60,000 values) has 3,600,000,000 cells" in r.output, r.output
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB allocated"
    assert not (tmp_path / "m.png").exists()
