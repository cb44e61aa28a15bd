"""``frictionkit report/plot --model MODEL_FILE``: branches computed with a model file (not a
zoo model) get their missing multipliers and their collocation orbits, through the file the
user names (never the one the branch file names), checked against the branch's hash."""
import json
import re
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from frictionkit.runtime import load_branch

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "tanh_exp_belt.py")
OTHER = str(Path(__file__).resolve().parents[2] / "examples" / "stribeck_oscillator.py")
START = ["--param", "vb", "--start", "1.5", "--stop", "0.1", "--from-hopf", "1", "-q"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("model_file")
    run = CliRunner()
    # short branches: a budget of steps (the run then says it stopped early, exit 1, the branch kept)
    run.invoke(main, ["continue", EXAMPLE, *START, "-H", "10", "--max-steps", "6", "--out", str(d / "hb.h5")])
    run.invoke(main, ["continue", EXAMPLE, *START, "--method", "collocation", "--intervals", "10", "--max-steps",
                      "4", "--out", str(d / "coll.h5")])
    assert (d / "hb.h5").exists() and (d / "coll.h5").exists()
    return d


def _points(html):
    data = json.loads(re.search(r'<script id="fk-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    return data["branches"][-1]["points"]


def test_report_computes_a_model_files_multipliers_only_with_model(files, tmp_path):
    per = load_branch(files / "hb.h5", "periodic")
    done = np.flatnonzero(np.isfinite(per.multipliers).all(axis=1))
    erased = done[::2]
    assert erased.size >= 2
    path = tmp_path / "holes.h5"
    shutil.copy(files / "hb.h5", path)
    with h5py.File(path, "r+") as f:
        g = f["periodic"]
        for name in ("multipliers_re", "multipliers_im"):
            d = g[name][()]
            d[erased] = np.nan
            g[name][...] = d
    # without --model: the model file the branch names is not run, and the page says how
    r = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "a.html")])
    assert r.exit_code == 0, r.output
    assert "--model MODEL_FILE" in r.output and "not a zoo model" in r.output
    pts = _points((tmp_path / "a.html").read_text())
    assert all(pts[i]["mr"][0] is None for i in erased)
    # the wrong model file: refused by the hash (or the parameters), the saved ones shown
    r = CliRunner().invoke(main, ["report", str(path), "--model", OTHER, "-o", str(tmp_path / "b.html")])
    assert r.exit_code == 0, r.output
    assert "--multipliers:" in r.output and "computed at" not in r.output
    # with it: the erased points get what the continuation had computed there
    r = CliRunner().invoke(main, ["report", str(path), "--model", EXAMPLE, "-o", str(tmp_path / "c.html")])
    assert r.exit_code == 0, r.output
    assert "--multipliers: computed at" in r.output
    pts = _points((tmp_path / "c.html").read_text())
    for i in erased:
        got = np.array(pts[i]["mr"], dtype=float) + 1j * np.array(pts[i]["mi"], dtype=float)
        np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(per.multipliers[i]), rtol=1e-6, atol=1e-9)


def test_plot_and_report_show_a_model_files_collocation_orbit_with_model(files, tmp_path):
    coll = files / "coll.h5"
    br = load_branch(coll, "periodic")
    i = len(br) - 1
    r = CliRunner().invoke(main, ["plot", str(coll), "--orbit", str(i), "-o", str(tmp_path / "o.png")])
    assert r.exit_code != 0 and "--model MODEL_FILE" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["plot", str(coll), "--orbit", str(i), "--model", EXAMPLE, "-o",
                                  str(tmp_path / "o.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o.png").stat().st_size > 0
    r = CliRunner().invoke(main, ["report", str(coll), "--model", EXAMPLE, "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    p = _points((tmp_path / "r.html").read_text())[i]
    # the orbit sampled through the model: its peak-to-peak is the one the branch saved
    assert len(p["t"]) > 10 and np.ptp(p["x"][0]) == pytest.approx(br.ptp["x"][i], rel=2e-3)
