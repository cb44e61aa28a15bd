"""Bad input to a sweep: each a clear error before any task starts (no cluster is started)."""
from __future__ import annotations

import socket

import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.sweeps import SweepSpec, SweepStore, parse_grid, sweep


def test_parse_grid_forms():
    name, v = parse_grid("FN=0.5:10:40")
    assert name == "FN" and np.array_equal(v, np.linspace(0.5, 10, 40))
    assert parse_grid("mu=1,2.5,3")[1].tolist() == [1.0, 2.5, 3.0]
    with pytest.raises(InputError, match="--over"):
        parse_grid("FN0.5:10:4")


def test_empty_grid_is_refused(tmp_path):
    with pytest.raises(InputError, match="no points"):
        sweep("belt", "Vb", 0.05, 12, {"FN": []}, fixed={"n": 10}, out=tmp_path / "s.h5")
    assert not (tmp_path / "s.h5").exists()


def test_unknown_parameter_is_refused(tmp_path):
    with pytest.raises(InputError, match="not in model 'belt'.*FN, Vb"):
        sweep("belt", "Vb", 0.05, 12, {"Fn": [1, 2]}, fixed={"n": 10}, out=tmp_path / "s.h5")
    assert not (tmp_path / "s.h5").exists()


def test_store_of_another_sweep_is_refused(tmp_path):
    out = tmp_path / "s.h5"
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1, 2]}, {"n": 10}, harmonics=5)
    SweepStore(out, spec).commit([])
    other_grid = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1, 3]}, {"n": 10}, harmonics=5)
    with pytest.raises(InputError, match="another sweep.*grid"):
        SweepStore(out, other_grid)
    other_model = SweepSpec.build("belt", "def", "Vb", 0.05, 12, {"FN": [1, 2]}, {"n": 10}, harmonics=5)
    with pytest.raises(InputError, match="another sweep.*hash def"):
        SweepStore(out, other_model)
    assert SweepStore(out, spec).done == set()        # the same sweep opens


def test_option_of_another_task_is_refused():
    with pytest.raises(InputError, match="t_end.*continuation"):
        SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1]}, task="continuation", t_end=5)


def test_cli_errors_name_the_problem(tmp_path):
    with socket.socket() as s:                      # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = CliRunner()
    base = ["sweep", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10",
            "--out", str(tmp_path / "s.h5"), "-q"]
    res = r.invoke(main, base + ["--over", "FN=1:2:0"])
    assert res.exit_code != 0 and "no points" in res.output and "Traceback" not in res.output
    res = r.invoke(main, base + ["--over", "XX=1:2:3"])
    assert res.exit_code != 0 and "XX" in res.output and "not in model" in res.output
    res = r.invoke(main, base + ["--over", "FN=1:2:3", "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert res.exit_code != 0 and "no Dask scheduler answers" in res.output
