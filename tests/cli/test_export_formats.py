"""``frictionkit export FILE --csv --mat --h5``: several formats at once (issue 29).

Each format is written (before, ``--csv --mat`` wrote only the ``.mat``), each file atomically;
one format keeps ``-o`` as the file's name; several make ``-o`` a stem.  The three files hold
the same numbers as the branch (read through :class:`Branch`, not through the exporter), and
the CSV is read by a plain ``pandas.read_csv`` with the units in the header names.
"""
from __future__ import annotations

import shutil

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.io
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime.results._branch import load_branch


def invoke(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    """The belt's equilibria and periodic branch (AFT, H = 8)."""
    path = tmp_path_factory.mktemp("export_formats") / "belt.h5"
    res = invoke("continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
                 "--from-hopf", "1", "-H", "8", "-q", "--out", path)
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture()
def local(run_file, tmp_path):
    shutil.copy(run_file, tmp_path / "belt.h5")
    return tmp_path / "belt.h5"


def _check_csv(path, per):
    # a plain read_csv reads the file (units in the header names); its default float parser is
    # within an ulp or so, so the digits are compared through the round-trip parser
    assert list(pd.read_csv(path, index_col="point").columns[:3]) == ["Vb [m/s]", "omega [rad/s]", "T [s]"]
    df = pd.read_csv(path, index_col="point", float_precision="round_trip")
    assert len(df) == len(per)
    np.testing.assert_array_equal(df["Vb [m/s]"], per.param)
    np.testing.assert_allclose(df["ptp_y [m]"], per.ptp["y"], rtol=1e-15)
    np.testing.assert_allclose(df["omega [rad/s]"] * df["T [s]"], 2 * np.pi, rtol=1e-14)
    assert "stable" in df.columns and list(df["motion"]) == list(per.motion)


def _check_mat(path, per):
    mat = scipy.io.loadmat(path)
    np.testing.assert_array_equal(mat["Vb"].ravel(), per.param)
    np.testing.assert_array_equal(mat["ptp_y"].ravel(), per.ptp["y"])
    assert mat["solution"].shape == per.solutions.shape and str(mat["units"]["Vb"][0, 0][0]) == "m/s"


def _check_h5(path, per):
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["Vb"][()], per.param)
        np.testing.assert_array_equal(f["ptp_y"][()], per.ptp["y"])
        assert f["Vb"].attrs["units"] == "m/s" and f["ptp_v"].attrs["units"] == "m/s" and f["T"].attrs["units"] == "s"
        assert f.attrs["model"] == "belt" and f.attrs["continuation_parameter"] == "Vb"
        assert [m.decode() for m in f["motion"][()]] == list(per.motion)


CHECK = {"csv": _check_csv, "mat": _check_mat, "h5": _check_h5}


def test_csv_mat_and_h5_together_by_default_names(local):
    res = invoke("export", local, "--csv", "--mat", "--h5")
    assert res.exit_code == 0, res.output
    per = load_branch(local)
    names = {"csv": "belt.csv", "mat": "belt.mat", "h5": "belt_table.h5"}      # belt.h5 is the run file
    for fmt, name in names.items():
        assert f"wrote {local.parent / name}" in res.output
        CHECK[fmt](local.parent / name, per)
    assert load_branch(local).param.shape == per.param.shape                  # the run file untouched


@pytest.mark.parametrize("given", ["res/out", "res/out.csv", "res/out.mat"])
def test_out_is_a_stem_with_several_formats(local, given):
    (local.parent / "res").mkdir()
    res = invoke("export", local, "--mat", "--csv", "-o", local.parent / given)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (local.parent / "res").iterdir()) == ["out.csv", "out.mat"]
    per = load_branch(local)
    _check_csv(local.parent / "res" / "out.csv", per)
    _check_mat(local.parent / "res" / "out.mat", per)


@pytest.mark.parametrize("fmt", ["csv", "mat", "h5"])
def test_one_format_keeps_out_as_the_file(local, fmt):
    target = local.parent / "any_name.dat"
    res = invoke("export", local, f"--{fmt}", "-o", target)
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in local.parent.iterdir()) == ["any_name.dat", "belt.h5"]
    CHECK[fmt](target, load_branch(local))


def test_no_format_is_csv(local):
    res = invoke("export", local)
    assert res.exit_code == 0 and (local.parent / "belt.csv").is_file(), res.output
    assert pd.read_csv(local.parent / "belt.csv").columns[1] == "Vb [m/s]"


def test_the_run_file_itself_is_never_an_output(local):
    res = invoke("export", local, "--h5", "-o", local)
    assert res.exit_code != 0 and "is the file being exported" in res.output
    assert load_branch(local) is not None


def test_a_folder_that_does_not_exist_is_named(local):
    res = invoke("export", local, "--csv", "--mat", "-o", local.parent / "nowhere" / "x")
    assert res.exit_code != 0 and "nowhere" in res.output and "does not exist" in res.output
    assert "Traceback" not in res.output
