"""``frictionkit export FILE@POINT --orbit``: one saved point's orbit over a period (issue 29).

The point is named as ``continue --restart`` names it (an index, ``fold``, ``hopf2``, AUTO's
``LP1``, ``GROUP:POINT``: ``results/_labels.py``).  The exported orbit of a saved collocation
branch of the belt (seed 000 eqs. 5-6 with the regularized law mu_n of eq. 2, n = 10) is
checked against an independent time integration: a hand-written copy of the ODE (not the
generated model), scipy's solve_ivp (DOP853, rtol 1e-12) from the exported initial state over
the exported period.
"""
from __future__ import annotations

import math

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.integrate
import scipy.io
from click.testing import CliRunner

from frictionkit.runtime.cli import main

# seed 000 Appendix B (the zoo's belt defaults), n = 10, FN = 5 N
P = dict(zeta=1.3096e-3, omega1=1.2316e3, M1=6.42e-3, FN=5.0, mus=0.4, mud=0.2, eps=1e-4, n=10.0)
# the collocation's orbit against the integration, relative to the state's peak-to-peak: the
# 40 x 3 mesh (cubic pieces, fourth-order) resolves the stick-slip orbit at the fold to about
# 1e-6 of it (the fold itself to 1e-7 of AUTO-07p's, DESIGN §6); 1e-4 leaves margin for the
# steep stick-to-slip transitions while a one-sample shift of the orbit (2 pi / 512) is 1e-2
TOL = 1e-4


def belt_rhs(t, x, vb):
    """Seed 000 eqs. (5)-(6): y'' + 2 zeta omega1 y' + omega1^2 y = (FN/M1) mu_n(y' - Vb),
    mu_n of eq. (2): (-mud vr sqrt(vr^2 + eps/n^2) - 2 (alpha/n) vr) / (vr^2 + 1/n^2),
    alpha = sqrt(mus (mus - mud)) (eq. 1)."""
    y, v = x
    vr = v - vb
    n = P["n"]
    alpha = math.sqrt(P["mus"] * (P["mus"] - P["mud"]))
    mu = (-P["mud"] * vr * math.sqrt(vr**2 + P["eps"] / n**2) - 2 * alpha / n * vr) / (vr**2 + 1 / n**2)
    return [v, -2 * P["zeta"] * P["omega1"] * v - P["omega1"] ** 2 * y + P["FN"] / P["M1"] * mu]


def invoke(*argv):
    return CliRunner().invoke(main, [str(a) for a in argv])


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    """The belt's periodic branch by the Gauss collocation of the states (40 x 3), saved."""
    path = tmp_path_factory.mktemp("export_orbit") / "coll.h5"
    res = invoke("continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
                 "--from-hopf", "1", "--method", "collocation", "--intervals", "40", "--degree", "3", "-q",
                 "--out", path)
    assert res.exit_code == 0, res.output
    return path


def _integrate(t, x0, vb):
    T = (t[1] - t[0]) * len(t)
    sol = scipy.integrate.solve_ivp(belt_rhs, (0.0, T), x0, args=(vb,), method="DOP853", rtol=1e-12,
                                    atol=1e-14, t_eval=np.append(t, T))
    assert sol.success, sol.message
    return sol.y


@pytest.mark.parametrize("label", ["fold", "100"])
def test_exported_collocation_orbit_is_the_integrated_orbit(coll, tmp_path, label):
    out = tmp_path / "orbit.csv"
    res = invoke("export", f"{coll}@{label}", "--orbit", "-o", out)
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out)                                   # plain pandas: units in the header names
    assert list(table.columns) == ["t [s]", "y [m]", "v [m/s]"] and len(table) == 512
    t, x = table["t [s]"].to_numpy(), table[["y [m]", "v [m/s]"]].to_numpy().T
    with h5py.File(coll, "r") as f:
        vb_all = f["periodic/param"][()]
    index = int(res.output.split("periodic:")[1].split()[0])
    if label != "fold":                 # the fold's point: test_fold_label_is_the_saved_point_nearest_the_fold
        assert index == int(label)
    y = _integrate(t, x[:, 0], float(vb_all[index]))
    scale = np.ptp(x, axis=1, keepdims=True)
    assert np.max(np.abs(y[:, :-1] - x) / scale) < TOL                 # the orbit, sample by sample
    assert np.max(np.abs(y[:, -1] - x[:, 0]) / scale[:, 0]) < TOL      # and it closes after the exported period
    # the check can fail: the same orbit one sample late is far outside it
    assert np.max(np.abs(y[:, :-1] - np.roll(x, 1, axis=1)) / scale) > 10 * TOL


def test_the_adaptive_branch_meets_its_tolerance_and_ends_at_the_second_hopf_point(coll):
    """The 40 x 3 start grows its mesh where it must: every point's estimate is within the
    default tolerance 1e-6 (its start was once kept on the coarser first mesh, 1.4e-6), and the
    branch ends at the equilibria's second Hopf point (under some BLAS kernels it once went
    through it and retraced itself to the first: tests/faults/test_blas_kernels.py)."""
    from frictionkit.runtime.results._branch import load_branch
    per = load_branch(coll)
    assert np.nanmax(per.accuracy["err_mesh"]) <= 1e-6
    hopf2 = load_branch(coll, "equilibria").special_points("hopf")[1].param
    assert per.status == "equilibrium" and per.special[-1].param == pytest.approx(hopf2, rel=1e-7)


def test_fold_label_is_the_saved_point_nearest_the_fold(coll, tmp_path):
    from frictionkit.runtime.results._branch import load_branch
    per = load_branch(coll)
    fold = per.special_points("fold")[0]
    res = invoke("export", f"{coll}@LP1", "--orbit", "-o", tmp_path / "o.csv")
    assert res.exit_code == 0, res.output
    index = int(res.output.split("periodic:")[1].split()[0])
    assert index in (fold.index, fold.index + 1)
    # the nearer of the two saved points around the fold (at a turning point both lie below
    # it in the parameter, so the nearer one can be further from it than from the other)
    other = fold.index + 1 if index == fold.index else fold.index
    assert abs(per.param[index] - fold.param) <= abs(per.param[other] - fold.param)


def test_orbit_in_three_formats_at_once(coll, tmp_path):
    res = invoke("export", f"{coll}@periodic:200", "--orbit", "--csv", "--mat", "--h5", "-o", tmp_path / "o200.csv")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o200.csv", "o200.h5", "o200.mat"]
    csv = pd.read_csv(tmp_path / "o200.csv", float_precision="round_trip")   # every digit (plain: test above)
    mat = scipy.io.loadmat(tmp_path / "o200.mat")
    with h5py.File(tmp_path / "o200.h5", "r") as f:
        h5 = {k: f[k][()] for k in ("t", "y", "v")}
        units = {k: f[k].attrs["units"] for k in ("t", "y", "v")}
        assert f.attrs["label"] == "periodic:200" and f.attrs["parameter"] == "Vb"
        assert f.attrs["period"] == pytest.approx(2 * math.pi / f.attrs["omega"], rel=1e-15)
    assert units == {"t": "s", "y": "m", "v": "m/s"}
    assert str(mat["units"]["v"][0, 0][0]) == "m/s"
    for name, col in (("t", "t [s]"), ("y", "y [m]"), ("v", "v [m/s]")):
        np.testing.assert_array_equal(mat[name].ravel(), h5[name])
        np.testing.assert_allclose(csv[col], h5[name], rtol=1e-15, atol=0)


def test_default_orbit_name_carries_the_point(coll, tmp_path):
    import shutil
    local = tmp_path / "coll.h5"
    shutil.copy(coll, local)
    res = invoke("export", f"{local}@-1", "--orbit", "--mat")
    assert res.exit_code == 0, res.output
    with h5py.File(local, "r") as f:
        last = len(f["periodic/param"]) - 1
    assert (tmp_path / f"coll_periodic_{last}.mat").is_file()


@pytest.mark.parametrize("suffix, extra, message", [
    ("@fold2", ["--orbit"], "1 fold point"),
    ("@99999", ["--orbit"], "points (0.."),
    ("@sideways", ["--orbit"], "'sideways' is not a point; expected an index"),
    ("@fold0", ["--orbit"], "ranked from 1"),
    ("@equilibria:hopf1", ["--orbit"], "is an equilibrium, which has no orbit"),
    ("@nogroup:3", ["--orbit"], "no branch 'nogroup'"),
    ("", ["--orbit"], "--orbit: name the point"),
    ("@fold", [], "a point goes with --orbit"),
    ("", ["--model", "m.py"], "--model m.py: goes with --orbit"),
])
def test_bad_points_are_refused_by_name(coll, tmp_path, suffix, extra, message):
    res = invoke("export", f"{coll}{suffix}", *extra, "-o", tmp_path / "x.csv")
    assert res.exit_code != 0 and message in res.output, res.output
    assert "Traceback" not in res.output and not (tmp_path / "x.csv").exists()


def test_a_missing_file_is_named(tmp_path):
    res = invoke("export", f"{tmp_path / 'none.h5'}@fold", "--orbit")
    assert res.exit_code != 0 and "no file" in res.output and "none.h5" in res.output


def test_a_model_file_the_branch_names_is_never_run(coll, tmp_path):
    """The orbit of a collocation branch is sampled through its model: a model file the branch
    file names is not run (the file may come from anywhere); the message says to give it."""
    import shutil
    edited = tmp_path / "edited.h5"
    shutil.copy(coll, edited)
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\ndef model():\n    raise SystemExit\n")
    with h5py.File(edited, "r+") as f:
        f["periodic"].attrs["model_source"] = str(evil)
        f["periodic"].attrs["model"] = "evil"
    res = invoke("export", f"{edited}@5", "--orbit", "-o", tmp_path / "o.csv")
    assert res.exit_code != 0 and "--orbit --model MODEL_FILE" in res.output and str(evil) in res.output
    assert not (tmp_path / "ran").exists() and not (tmp_path / "o.csv").exists()
