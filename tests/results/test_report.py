"""The report page, the publication plots, the exports and their commands (no browser here:
``test_report_browser.py`` clicks the page in chromium)."""
import json
import math
import re
import warnings

from click.testing import CliRunner
import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.io

from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_branch
from frictionkit.runtime.results._plots import plot_branches, plot_orbit
from frictionkit.runtime.results._report import report_html


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    eq = equilibrium_branch(m, 0.05, 12)
    disc, Z, d = periodic_start_from_hopf(m, eq.special_points("hopf")[0], 5)
    per = periodic_branch(disc, Z, 0.0, 12, d)
    folder = tmp_path_factory.mktemp("saved")
    eq.save(folder / "eq.h5")
    per.save(folder / "per.h5")
    return folder, load_branch(folder / "eq.h5"), load_branch(folder / "per.h5")


def _page_data(html):
    return json.loads(re.search(r'<script id="fk-data" type="application/json">(.*?)</script>', html,
                                re.S).group(1).replace("<\\/", "</"))


def test_units_are_the_models_and_survive_hdf5(saved):
    _, eq, per = saved
    # belt declares Vb in m/s and omega1 in rad/s (modelspec/zoo.py), so its time is in s
    assert per.provenance["units"]["Vb"] == "m/s" and per.provenance["units"]["t"] == "s"
    assert eq.provenance["units"]["FN"] == "N"
    # the states' units declared in zoo.belt (seed 000 eqs. 5-6: y in m, v = y' in m/s)
    assert (per.provenance["units"]["y"], per.provenance["units"]["v"]) == ("m", "m/s")


def orbit_of(p, n_t=256):
    """The orbit a point of the page stores, summed here with NumPy: ``(t, x)`` over one
    period (the page's Fourier coefficients are ``q`` times integers: ``_coefficients``)."""
    if "t" in p:
        return np.array(p["t"]), np.array(p["x"])
    T = 2 * math.pi / p["w"]
    theta = 2 * math.pi * np.arange(n_t + 1) / n_t
    x = []
    for c0, q, k in p["f"]:
        a = q * np.array(k + [0] * (len(k) % 2), dtype=float)
        h = np.arange(1, len(a) // 2 + 1)
        x.append(c0 + a[0::2] @ np.cos(np.outer(h, theta)) + a[1::2] @ np.sin(np.outer(h, theta)))
    return theta / theta[-1] * T, np.array(x)


def numbers_of(branch, p):
    """The numbers shown for a point of the page (``keys`` and the indices into ``texts``)."""
    return {k: branch["texts"][j] for k, j in zip(branch["keys"], p["v"]) if j is not None}


def test_page_is_self_contained_and_holds_every_point(saved):
    _, eq, per = saved
    html = report_html([eq, per])
    # no external script or stylesheet: Plotly is inlined
    assert not re.search(r'<(script|link)[^>]+(src|href)=["\']?(https?:)?//', html)
    assert "Plotly" in html and len(html) > 1_000_000
    data = _page_data(html)
    assert [len(b["points"]) for b in data["branches"]] == [len(eq), len(per)]
    # a point whose multipliers were computed (the others inherit their flag, multiplier_stride)
    done = np.flatnonzero(np.isfinite(per.max_multiplier))
    i = int(done[np.argmin(np.abs(done - len(per) // 2))])
    p = data["branches"][1]["points"][i]
    # the orbit stored for the click: one period in seconds, y in metres (not normalised); its
    # sampled peak-to-peak is the branch's Newton-refined extremum to sampling accuracy
    t, x = orbit_of(p)
    assert t[-1] == pytest.approx(2 * math.pi / per.omega[i], rel=1e-6)
    assert np.ptp(x[0]) == pytest.approx(per.ptp["y"][i], rel=2e-3)
    shown = numbers_of(data["branches"][1], p)
    assert shown["Vb [m/s]"] == f"{per.param[i]:.6g}"
    assert shown["period T [s]"] == f"{2 * math.pi / per.omega[i]:.6g}"
    # multipliers as saved (periodic) and eigenvalues (equilibria)
    np.testing.assert_allclose(np.array(p["mr"]) + 1j * np.array(p["mi"]), per.multipliers[i], rtol=1e-6, atol=1e-12)
    q = data["branches"][0]["points"][3]
    assert q["mname"] == "eigenvalues" and len(q["mr"]) == 2
    # an equilibrium: its state (y = the static deflection, v = 0) and eigenvalues in the numbers
    eq_shown = numbers_of(data["branches"][0], q)
    assert eq_shown["v [m/s]"] == "0" and float(eq_shown["y [m]"]) == pytest.approx(eq.solutions[3][0], rel=1e-5)
    assert eq_shown["eigenvalues [1/s]"].count("i") == 2              # a complex pair
    # every special point in the table, with its label and the units of its columns
    assert html.count("<td>hopf</td>") == len(eq.special_points("hopf")) + len(per.special_points("hopf"))
    assert "<td>fold</td>" in html and "<td>fold1</td>" in html
    assert "<th>Vb [m/s]</th><th>omega [rad/s]</th>" in html


def test_the_page_orbits_are_the_branch_orbits_to_the_stated_resolution(saved):
    """The Fourier coefficients stored as integers of QUANTUM times the largest: every
    point's orbit within H * QUANTUM / 2 of it from the branch's own samples (time_series),
    and the page holds far fewer characters than the samples it replaces."""
    from frictionkit.runtime.results._report import QUANTUM
    _, _, per = saved
    data = _page_data(report_html([per]))
    for i in range(0, len(per), 7):
        p = data["branches"][0]["points"][i]
        t, x = orbit_of(p, 64)
        _, ref = per.time_series(i, n_t=64)
        scale = np.abs(per.solutions[i][:2 * (2 * per.harmonics + 1)].reshape(2, -1)[:, 1:]).max(axis=1)
        err = np.abs(x[:, :-1] - ref).max(axis=1)
        assert np.all(err <= per.harmonics * QUANTUM * scale + 1e-6 * np.abs(ref).max(axis=1)), (i, err, scale)


def test_the_model_and_its_parameters_with_units_are_on_the_page(saved):
    """The parameter values of the branch and the units the zoo model declares for them
    (modelspec/zoo.py, read here from the spec, not from the branch)."""
    from frictionkit.modelspec.zoo import ZOO
    _, eq, per = saved
    html = report_html([eq, per])
    spec = ZOO["belt"][0]()
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      re.search(r'<table class="fk fk-model">(.*?)</table>', html).group(1))
    table = {name: (value, unit) for name, value, unit in rows}
    assert table["FN"] == ("5", spec.parameters["FN"].unit) == ("5", "N")
    assert table["n"][0] == "10"
    assert table["Vb (continuation parameter)"] == ("varied", "m/s")
    for p in spec.parameters.values():
        if p.name != "Vb":
            assert table[p.name][1] == (p.unit or "-"), p.name
    assert table["state y"][1] == "m" and table["time t"][1] == "s"
    # one table for the two branches of one run (same model and parameters)
    assert html.count('class="fk fk-model"') == 1


def test_plotly_is_the_minified_cartesian_bundle_of_plotly_pys_version_or_its_cdn(saved, tmp_path):
    """Inlined: plotly.js's cartesian bundle, once, of the version plotly.py draws with; --cdn:
    plotly.py's own CDN URL with the SHA-256 of its bundle as integrity, the policy allowing
    that URL and the glue's hash, nothing else."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version
    from frictionkit.runtime.results._report import PLOTLY_BUNDLE
    folder, eq, per = saved
    bundle = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    assert f"plotly.js (cartesian - minified) v{get_plotlyjs_version()}" in bundle[:200]
    html = report_html([eq, per])
    assert html.count(bundle) == 1 and html.count("window.Plotly = Plotly") == 1
    r = CliRunner().invoke(main, ["report", str(folder / "per.h5"), "--cdn", "-o", str(tmp_path / "c.html")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "c.html").read_text()
    src = re.search(r'<script src="([^"]+)" integrity="([^"]+)" crossorigin="anonymous"></script>', page)
    assert src and src.group(1) == f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"
    import base64
    import hashlib
    assert src.group(2) == "sha256-" + base64.b64encode(hashlib.sha256(get_plotlyjs().encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    script_src = csp.split("script-src ")[1].split(";")[0].split()
    assert script_src[0] == src.group(1) and len(script_src) == 2 and script_src[1].startswith("'sha256-")
    assert "window.Plotly = Plotly" not in page and len(page) < 300_000


@pytest.fixture(scope="module")
def hopf_file(tmp_path_factory):
    """The Hopf curve of the belt's equilibria in (Vb, FN), FN from 5 down to 1 N."""
    out = tmp_path_factory.mktemp("hopf") / "hopf.h5"
    r = CliRunner().invoke(main, ["hopf-curve", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                                  "--set", "n=10", "FN=5", "--second", "FN", "--min", "1", "--max", "5",
                                  "--direction", "down", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_report_with_a_hopf_curve(saved, hopf_file, tmp_path):
    folder, eq, _ = saved
    r = CliRunner().invoke(main, ["report", str(folder / "eq.h5"), str(hopf_file), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "r.html").read_text()
    assert 'id="fk-curves"' in html and "hopf curve" in html


def test_report_errors_name_the_input(saved, tmp_path):
    folder, eq, _ = saved
    with pytest.raises(InputError, match="state 'z'"):
        report_html([eq], state="z")
    bad = tmp_path / "bad.h5"
    bad.write_text("not hdf5")
    r = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "r.html")])
    assert r.exit_code != 0 and "not a frictionkit result file" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["report", str(folder / "eq.h5"), "-o", str(tmp_path / "no" / "r.html")])
    assert r.exit_code != 0 and "does not exist" in r.output


def test_branch_plot_has_units_and_a_legend_for_every_channel(saved):
    _, eq, per = saved
    fig = plot_branches([eq, per], path=None)
    ax_a, ax_w = fig.axes
    assert ax_a.get_xlabel() == "Vb [m/s]" and ax_w.get_ylabel() == "angular frequency omega [rad/s]"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "equilibria" in labels and any(lab.startswith("periodic orbits (aft, H = 5)") for lab in labels)
    assert {"stable", "unstable"} <= set(labels)
    assert any(lab.startswith("motion: ") for lab in labels)
    assert any(lab.startswith("fold at Vb = ") and lab.endswith("m/s") for lab in labels)
    assert any(lab.startswith("hopf at Vb = ") for lab in labels)
    # no text on the axes: special points are named in the legend only
    assert not ax_a.texts and not ax_w.texts
    # unstable parts are dashed with markers in both panels, stable parts solid
    for ax in (ax_a, ax_w):
        styles = {(ln.get_linestyle(), ln.get_marker()) for ln in ax.lines if ln.get_lw() < 5}
        assert ("-", "None") in styles and ("--", "o") in styles


def test_orbit_plot_in_physical_units(saved):
    _, _, per = saved
    i = len(per) // 2
    fig = plot_orbit(per, i, path=None)
    ax_y = fig.axes[0]
    y = ax_y.lines[0].get_ydata()
    assert np.ptp(y) == pytest.approx(per.ptp["y"][i], rel=1e-3)       # not normalised to 1
    assert fig.axes[1].get_xlabel() == "time t [s]"
    assert "y [m]" in ax_y.get_ylabel() and any("v [m/s]" in a.get_ylabel() + a.get_xlabel() for a in fig.axes)
    assert ax_y.lines[0].get_xdata()[-1] < 2 * math.pi / per.omega[i]


def test_dataframe_xarray_csv_and_mat(saved, tmp_path):
    folder, _, per = saved
    df = per.to_dataframe()
    assert len(df) == len(per) and df.attrs["units"]["Vb"] == "m/s" and df.attrs["units"]["T"] == "s"
    np.testing.assert_array_equal(df["Vb"], per.param)
    np.testing.assert_allclose(df["T"] * df["omega"], 2 * math.pi, rtol=1e-14)
    assert list(df["motion"]) == list(per.motion)
    ds = per.to_xarray()
    assert ds["omega"].attrs["units"] == "rad/s" and ds.sizes["point"] == len(per)
    r = CliRunner().invoke(main, ["export", str(folder / "per.h5"), "--csv", "-o", str(tmp_path / "b.csv")])
    assert r.exit_code == 0, r.output
    first = (tmp_path / "b.csv").read_text().splitlines()[0]
    assert first.startswith("point,Vb [m/s],omega [rad/s],T [s]")          # the units in the header names
    # a plain read_csv parses it (its default float parser is within ~1e-12 relative) ...
    back = pd.read_csv(tmp_path / "b.csv", index_col="point")
    np.testing.assert_allclose(back["ptp_y [m]"], per.ptp["y"], rtol=1e-12)
    # ... and the text holds every digit (the round-trip parser gives the numbers exactly)
    back = pd.read_csv(tmp_path / "b.csv", index_col="point", float_precision="round_trip")
    np.testing.assert_array_equal(back["ptp_y [m]"], per.ptp["y"])
    r = CliRunner().invoke(main, ["export", str(folder / "per.h5"), "--mat", "-o", str(tmp_path / "b.mat")])
    assert r.exit_code == 0, r.output
    mat = scipy.io.loadmat(tmp_path / "b.mat")
    np.testing.assert_array_equal(mat["Vb"].ravel(), per.param)
    assert mat["solution"].shape == per.solutions.shape
    assert str(mat["units"]["Vb"][0, 0][0]) == "m/s"


def test_plot_and_models_commands(saved, tmp_path):
    folder, _, _ = saved
    for out, extra in (("d.pdf", []), ("o.svg", ["--orbit", "3"])):
        r = CliRunner().invoke(main, ["plot", str(folder / "eq.h5"), str(folder / "per.h5"), *extra,
                                      "-o", str(tmp_path / out)])
        assert r.exit_code == 0, r.output
        assert (tmp_path / out).stat().st_size > 1000
    r = CliRunner().invoke(main, ["plot", str(folder / "per.h5"), "--orbit", "100000", "-o", str(tmp_path / "x.png")])
    assert r.exit_code != 0 and "--orbit 100000" in r.output and not (tmp_path / "x.png").exists()
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0 and all(n in r.output for n in ("belt", "shaw", "weakstrong", "vrande2", "drill"))
    r = CliRunner().invoke(main, ["models", "belt"])
    assert r.exit_code == 0 and re.search(r"Vb\s+0.2\s+m/s\s+belt speed", r.output)
    r = CliRunner().invoke(main, ["models", "nosuch"])
    assert r.exit_code != 0 and "unknown zoo model" in r.output


# -- a sweep store in the report --------------------------------------------------------------
_REGION = {(True, False): "stable sliding", (False, True): "stick-slip only", (True, True): "coexistence (bistable)",
           (False, False): "other"}


@pytest.fixture(scope="module")
def sweep_store(tmp_path_factory):
    """A small real continuation sweep (belt, n = 10, three values of FN, H = 5) run in this
    process through run_task, the function the Dask workers run (as tests/sweeps/test_map.py)."""
    from frictionkit.runtime.sweeps import SweepSpec, SweepStore, run_task
    model = load_model("belt", continuation="Vb", n=10)
    spec = SweepSpec.build("belt", model.model_hash, "Vb", 0.05, 12.0, {"FN": [1.0, 5.0, 10.0]}, {"n": 10},
                           harmonics=5, at=(3.0,))
    out = tmp_path_factory.mktemp("sweep") / "belt_sweep.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        SweepStore(out, spec).commit([run_task(spec.to_json(), i) for i in range(len(spec))])
    return out


def _figure_data(html, div_id):
    """The traces Plotly draws in the div ``div_id`` (the page's glue passes the figure of
    that id in its data block to Plotly.newPlot)."""
    return next(f["data"] for f in _page_data(html)["figures"] if f["id"] == div_id)


def test_a_sweep_map_has_units_and_the_hopf_curve_drawn_over_it(sweep_store, hopf_file, tmp_path):
    """A report of a sweep store alone (no branch to take units from) and of the Hopf curve in
    the same two parameters: the map's axes carry the zoo model's units (modelspec/zoo.py:
    Vb in m/s, FN in N) and the curve is a trace of the map itself, its points the file's."""
    from frictionkit.runtime.analysis._curves import BifurcationCurve
    r = CliRunner().invoke(main, ["report", str(sweep_store), str(hopf_file), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "r.html").read_text()
    fig = next(f for f in _page_data(html)["figures"] if f["id"] == "fk-sweep-0")
    assert fig["layout"]["xaxis"]["title"]["text"] == "Vb [m/s]" and fig["layout"]["yaxis"]["title"]["text"] == "FN [N]"
    curve = BifurcationCurve.load(hopf_file)
    drawn = [t for t in fig["data"] if t.get("name", "").startswith("hopf curve")]
    assert len(drawn) == 1
    import base64

    def array(v):          # plotly's JSON of a NumPy array: {"dtype", "bdata": base64 of its bytes}
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]) if isinstance(v, dict) else np.array(v)
    np.testing.assert_array_equal(array(drawn[0]["x"]), curve.lam)
    np.testing.assert_array_equal(array(drawn[0]["y"]), curve.mu)
    assert "Click any point of the diagram" not in html and "Hover a task" in html


def test_report_shows_a_sweep_map_one_point_per_task(saved, sweep_store, tmp_path):
    folder, _, _ = saved
    r = CliRunner().invoke(main, ["report", str(folder / "per.h5"), str(sweep_store), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "r.html").read_text()
    assert not re.search(r'<(script|link)[^>]+(src|href)=["\']?(https?:)?//', html)   # still offline
    traces = [t for t in _figure_data(html, "fk-sweep-0") if t["name"].startswith("tasks: ")]
    # the store's own table, read with h5py (layout: runtime/sweeps/_store.py)
    with h5py.File(sweep_store, "r") as f:
        t = f["table"]
        fn, status = t["FN"][()], [s.decode() if isinstance(s, bytes) else s for s in t["status"][()]]
        eq = [json.loads(s) for s in t["eq_stable"].asstr()[()]]
        orb = [json.loads(s or "[]") for s in t["orbit_stable"].asstr()[()]]
    inside = lambda iv, v: any(lo <= v <= hi for lo, hi in iv)       # noqa: E731
    expected = {float(fn[k]): _REGION[inside(eq[k], 3.0), inside(orb[k], 3.0)] if status[k] != "failed"
                else "failed" for k in range(len(fn))}
    shown = {y: tr["name"][len("tasks: "):] for tr in traces for y in tr["y"]}
    assert sum(len(tr["y"]) for tr in traces) == len(fn) == 3            # one point per task
    assert shown == expected
    assert len(set(expected.values())) >= 2                            # the map is not one colour
    # hover: the task's parameter and outcome
    text = [s for tr in traces for s in tr["text"]]
    assert all("FN = " in s and "outcome: " in s and "status: " in s for s in text)
    # the region map under the tasks, as plot-sweep draws it: one row per swept value
    heat = [tr for tr in _figure_data(html, "fk-sweep-0") if tr["type"] == "heatmap"]
    assert len(heat) == 1 and len(heat[0]["z"]) == 3


def test_report_and_plot_show_the_orbits_of_a_saved_collocation_branch(tmp_path):
    """A collocation branch saved to HDF5 (unknowns: the states at the mesh nodes, not Fourier
    coefficients): the report's clicked orbit and ``plot --orbit`` come from its rebuilt
    discretization (zoo model), and the report's orbit has the branch's peak-to-peak."""
    from frictionkit.runtime.drivers._compose import run_continuation
    m = load_model("belt", "Vb")
    _, per = run_continuation(m, 0.05, 1.0, start="hopf", harmonics=10, discretization="collocation",
                              progress=False, options=dict(max_steps=6, stability=False))
    per.save(tmp_path / "coll.h5")
    r = CliRunner().invoke(main, ["report", str(tmp_path / "coll.h5"), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    data = _page_data((tmp_path / "r.html").read_text())
    i = len(per) - 1
    p = data["branches"][-1]["points"][i]
    assert len(p["t"]) > 10 and np.ptp(p["x"][0]) == pytest.approx(per.ptp["y"][i], rel=2e-3)
    r = CliRunner().invoke(main, ["plot", str(tmp_path / "coll.h5"), "--orbit", str(i), "-o", str(tmp_path / "o.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o.png").stat().st_size > 0


def test_report_computes_the_multipliers_a_branch_lacks_as_the_continuation_does(saved, tmp_path):
    """``frictionkit report`` fills the multipliers of the points a continuation left without
    (multiplier_stride, ANM interior points): with those of every other computed point of the
    file erased, the page shows them again as the continuation had saved them."""
    import shutil
    folder, _, per = saved
    done = np.flatnonzero(np.isfinite(per.max_multiplier))
    erased = done[::2]
    assert erased.size >= 3
    path = tmp_path / "holes.h5"
    shutil.copy(folder / "per.h5", path)
    with h5py.File(path, "r+") as f:
        for name in ("multipliers_re", "multipliers_im"):
            d = f[name][()]
            d[erased] = np.nan
            f[name][...] = d
    r = CliRunner().invoke(main, ["report", str(path), "--saved-multipliers", "-o", str(tmp_path / "s.html")])
    assert r.exit_code == 0, r.output
    pts = _page_data((tmp_path / "s.html").read_text())["branches"][0]["points"]
    assert all(p["mr"][0] is None for p in (pts[i] for i in erased))
    r = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    assert "--multipliers: computed at" in r.output
    branch = _page_data((tmp_path / "r.html").read_text())["branches"][0]
    for i in range(len(per)):
        p = branch["points"][i]
        got = np.array(p["mr"], dtype=float) + 1j * np.array(p["mi"], dtype=float)
        assert np.all(np.isfinite(got)), i                            # every point has them now
        if i in erased:
            np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(per.multipliers[i]), rtol=1e-6,
                                       atol=1e-9)
