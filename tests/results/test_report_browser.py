"""The interactive report in a real browser: Debian's chromium driven by Selenium, headless.

One browser and one page for the module: a run's equilibria and periodic branch (files), and
a torus branch (file); every check starts with a real click of the pointer on a point.

Without chromium and chromium-driver the test fails and says what to install (``make test``
installs them when run as root), unless ``FRICTIONKIT_NO_BROWSER=1`` says the browser was
left out on purpose: it is then skipped, and the skip says what to install to run it.
"""
import json
import math
import os
from pathlib import Path
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from frictionkit.runtime.results._branch import load_branch
from tests.results.test_report import saved  # noqa: F401  (the module's branches, saved and read back)

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
INSTALL = ("the browser test needs Debian's chromium and chromium-driver: run "
           "`apt-get install -y --no-install-recommends chromium chromium-driver` (as root; `make test` "
           "does it when run as root)")
# the forced cubic-friction belt written out by hand, for the independent integration of the
# Poincaré map
from tests.models.torus_specs import W, ode  # noqa: E402


@pytest.fixture(scope="module")
def torus_file(tmp_path_factory):
    """A few tori below the Neimark-Sacker point of the forced cubic-friction belt (harmonics
    (6, 4): cheap; the drivers' test checks the tori themselves), saved and read back."""
    from frictionkit.runtime import load_model, periodic_branch, torus
    from frictionkit.runtime.discretizations._aft import AFTDiscretization
    from frictionkit.runtime.drivers._torus import TorusBranch
    from tests.models.torus_specs import forced_cubic_belt
    model = load_model(forced_cubic_belt(), "A", backend="numpy")
    disc = AFTDiscretization(model, 10)
    t = np.arange(64) * 2 * np.pi / W / 64
    amp = 0.3 / (1 - W * W)
    Z0 = disc.from_samples(np.vstack([0.4 + amp * np.cos(W * t), -amp * W * np.sin(W * t)]), W, 0.3)
    per = periodic_branch(disc, Z0, 0.3, 2.0, 1.0, options=dict(multiplier_stride=1))
    tb = torus(per, per.special_points("ns")[0], 1.1, 1.3, harmonics=(6, 4), eps=0.05, max_steps=6,
               method="newton")       # six short steps that stay near the NS point, where (6, 4) suffices
    path = tmp_path_factory.mktemp("torus") / "torus.h5"
    tb.save(path)
    return path, TorusBranch.load(path)


@pytest.fixture(scope="module")
def page(saved, torus_file):  # noqa: F811
    """The page `frictionkit report eq.h5 per.h5 torus.h5` writes."""
    from click.testing import CliRunner
    from frictionkit.runtime.cli import main
    folder, eq, per = saved
    tpath, tb = torus_file
    path = folder / "report.html"
    r = CliRunner().invoke(main, ["report", str(folder / "eq.h5"), str(folder / "per.h5"), str(tpath), "-o", str(path)])
    assert r.exit_code == 0, r.output
    return path, eq, per, tb


@pytest.fixture(scope="module")
def browser(page):
    if not (CHROMIUM and DRIVER):
        if os.environ.get("FRICTIONKIT_NO_BROWSER") == "1":
            pytest.skip(f"FRICTIONKIT_NO_BROWSER=1: {INSTALL}, and unset FRICTIONKIT_NO_BROWSER")
        pytest.fail(INSTALL + " (or set FRICTIONKIT_NO_BROWSER=1 to skip it)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1500", "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.get(page[0].as_uri())
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        "return !!(window.fkShow && document.getElementById('fk-diagram')._fullLayout"
        " && document.getElementById('fk-tori')._fullLayout)"))
    yield driver
    driver.quit()


def _table(driver, table_id):
    rows = driver.find_elements("css selector", f"#{table_id} tr")
    return {r.find_elements("tag name", "td")[0].text: r.find_elements("tag name", "td")[1].text
            for r in rows if len(r.find_elements("tag name", "td")) == 2}


def _click(driver, div_id, x, y, axes=("xaxis", "yaxis")):
    """A real click of the pointer at the data coordinates (x, y) of the plot ``div_id``."""
    from selenium.webdriver.common.action_chains import ActionChains
    div = driver.find_element("id", div_id)
    dx, dy = driver.execute_script("""
        var gd = arguments[0], xa = gd._fullLayout[arguments[3]], ya = gd._fullLayout[arguments[4]];
        var r = gd.getBoundingClientRect();
        return [xa._offset + xa.l2p(arguments[1]) - r.width / 2, ya._offset + ya.l2p(arguments[2]) - r.height / 2];
        """, div, x, y, *axes)
    ActionChains(driver).move_to_element_with_offset(div, int(dx), int(dy)).pause(0.3).click().perform()


def test_click_a_periodic_point_shows_its_orbit_and_the_command_that_continues_from_it(page, browser, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait
    path, eq, per, _ = page
    # a point two thirds along the periodic branch (branch 1 of the page), away from the start
    i = 2 * len(per) // 3
    _click(browser, "fk-diagram", float(per.param[i]), float(per.ptp["y"][i]))
    WebDriverWait(browser, 20).until(lambda d: _table(d, "fk-numbers").get("point") not in (None, "0"))
    shown = _table(browser, "fk-numbers")
    j = int(shown["point"])
    # the click picks the point under the pointer: this one or a neighbour on the same branch
    assert abs(j - i) <= 3, shown
    # its numbers, computed here from the branch columns (not from the page's data)
    assert shown["Vb [m/s]"] == f"{per.param[j]:.6g}"
    assert shown["period T [s]"] == f"{2 * math.pi / per.omega[j]:.6g}"
    assert shown["stability"] == ("stable" if per.stable[j] == 1 else "unstable")
    # the orbit panel now draws that orbit (summed by the page from its coefficients): y over
    # one period, in metres (not normalised), its extremes the branch's Newton-refined ones
    t, ys = browser.execute_script(
        "var d = document.getElementById('fk-orbit').data; return [d[0].x, d[0].y];")
    assert t[-1] == pytest.approx(2 * math.pi / per.omega[j], rel=1e-6)
    assert max(ys) - min(ys) == pytest.approx(per.ptp["y"][j], rel=2e-3)
    # "continue from here": the shown command line runs and continues from that very point
    cmd = browser.find_element("id", "fk-continue").text
    assert cmd.startswith("frictionkit continue --restart ") and f"per.h5@{j} " in cmd, cmd
    words = shlex.split(cmd)
    out = Path(words[words.index("--out") + 1])
    assert not out.exists()
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    run = subprocess.run(words, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"at point /:{j} (Vb = {per.param[j]:.10g})" in run.stdout, run.stdout
    more = load_branch(out)
    assert more.param[0] == pytest.approx(per.param[j], abs=1e-9) and len(more) > 1
    assert more.ptp["y"][0] == pytest.approx(per.ptp["y"][j], rel=1e-6)
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # nothing left the page: every request the browser made was to the file itself or data:
    urls = [json.loads(e["message"])["message"]["params"]["request"]["url"]
            for e in browser.get_log("performance")
            if json.loads(e["message"])["message"]["method"] == "Network.requestWillBeSent"]
    assert urls, "the performance log recorded no request at all (not even the page): the check is blind"
    assert all(u.startswith(("file://", "data:", "blob:", "about:")) for u in urls), urls


def test_the_orbit_panels_axes_do_not_overprint(page, browser):
    """The right axis of the time plot (its numbers and title) ends left of the phase
    portrait's axis (its numbers and title), in the page as drawn."""
    right = browser.execute_script("""
        var o = document.getElementById('fk-orbit');
        function box(sel) { var r = [Infinity, -Infinity];
          o.querySelectorAll(sel).forEach(function (e) { var b = e.getBoundingClientRect();
            if (b.width) { r[0] = Math.min(r[0], b.left); r[1] = Math.max(r[1], b.right); } }); return r; }
        return [box('.y4tick, .g-y4title'), box('.y2tick, .g-y2title')];""")
    (_, end_right_axis), (start_phase, _) = right
    assert math.isfinite(end_right_axis) and math.isfinite(start_phase), right
    assert end_right_axis < start_phase, right


def test_click_an_equilibrium_shows_its_state_and_eigenvalues(page, browser):
    from selenium.webdriver.support.ui import WebDriverWait
    _, eq, per, _ = page
    # an equilibrium beyond the fold of the periodic branch (no orbit there), inside the axes
    j = int(np.flatnonzero(eq.param > per.param.max() + 0.3)[0])
    _click(browser, "fk-diagram", float(eq.param[j]), 0.0)
    WebDriverWait(browser, 20).until(lambda d: _table(d, "fk-numbers").get("eigenvalues [1/s]"))
    shown = _table(browser, "fk-numbers")
    k = int(shown["point"])
    assert abs(k - j) <= 1 and float(shown["y [m]"]) == pytest.approx(eq.solutions[k][0], rel=1e-5)
    traces = browser.execute_script("return document.getElementById('fk-orbit').data.map(function (t) "
                                    "{ return [t.name, t.x, t.y]; })")
    named = {n: (x, y) for n, x, y in traces}
    # the phase portrait: one point, the equilibrium; the eigenvalues (not the unit circle)
    assert named["equilibrium"][0][0] == pytest.approx(eq.solutions[k][0], rel=1e-6)
    ev = np.array(named["eigenvalues"][0]) + 1j * np.array(named["eigenvalues"][1])
    np.testing.assert_allclose(np.sort_complex(ev), np.sort_complex(eq.eigenvalues[k]), rtol=1e-6)
    assert "unit circle" not in named and "imaginary axis" in named
    assert "continue --restart" in browser.find_element("id", "fk-continue").text and \
        f"eq.h5@{k} " in browser.find_element("id", "fk-continue").text


def test_click_a_torus_shows_its_poincare_section(page, browser):
    """The section drawn for the clicked torus: the points of its Poincaré (stroboscopic) map
    are those of an independent solve_ivp integration of the ODE started at the first of
    them, sampled at the forcing period (within 1e-5 of the torus's size; measured 2.8e-6
    for the largest of these tori, at the truncation (6, 4)), and they lie on the curve."""
    from selenium.webdriver.support.ui import WebDriverWait
    _, _, _, tb = page
    i = len(tb) - 1
    _click(browser, "fk-tori", float(tb.lam[i]), float(tb.rotation_number[i]))
    WebDriverWait(browser, 20).until(lambda d: _table(d, "fk-torus-numbers").get("point") == str(i))
    shown = _table(browser, "fk-torus-numbers")
    assert shown["rotation number omega2/omega1"] == f"{tb.rotation_number[i]:.10g}"
    traces = browser.execute_script("return document.getElementById('fk-tori').data.map(function (t) "
                                    "{ return [t.name, t.x, t.y]; })")
    named = {n: np.array([x, y]) for n, x, y in traces}
    curve, pts = named["invariant curve (section theta1 = 0)"], named["points of the Poincaré map"]
    size = np.ptp(curve, axis=1).max()
    T1 = 2 * np.pi / W
    n = pts.shape[1]
    sol = solve_ivp(ode, (0.0, (n - 1) * T1), pts[:, 0], args=(tb.lam[i],), method="DOP853", rtol=1e-11,
                    atol=1e-13, t_eval=T1 * np.arange(n))
    assert sol.success and n >= 30
    assert np.abs(sol.y - pts).max() < 1e-5 * size, np.abs(sol.y - pts).max() / size
