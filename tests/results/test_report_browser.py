"""The interactive report in a real browser: Debian's chromium driven by Selenium, headless.

Without chromium and chromium-driver the test fails and says what to install (``make test``
installs them when run as root), unless ``FRICTIONKIT_NO_BROWSER=1`` says the browser was
left out on purpose: it is then skipped, and the skip says what to install to run it.
"""
import json
import math
import os
import shutil

import pytest

from frictionkit.runtime.results._report import report
from tests.results.test_report import saved  # noqa: F401  (the module's branches, saved and read back)

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
INSTALL = ("the browser test needs Debian's chromium and chromium-driver: run "
           "`apt-get install -y --no-install-recommends chromium chromium-driver` (as root; `make test` "
           "does it when run as root)")


@pytest.fixture(scope="module")
def page(saved):  # noqa: F811
    folder, eq, per = saved
    path = folder / "report.html"
    report([eq, per], path)
    return path, eq, per


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        if os.environ.get("FRICTIONKIT_NO_BROWSER") == "1":
            pytest.skip(f"FRICTIONKIT_NO_BROWSER=1: {INSTALL}, and unset FRICTIONKIT_NO_BROWSER")
        pytest.fail(INSTALL + " (or set FRICTIONKIT_NO_BROWSER=1 to skip it)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1500", "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


def _numbers(driver):
    rows = driver.find_elements("css selector", "#fk-numbers tr")
    return {r.find_elements("tag name", "td")[0].text: r.find_elements("tag name", "td")[1].text
            for r in rows if len(r.find_elements("tag name", "td")) == 2}


def test_click_a_periodic_point_shows_its_orbit(page, browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait
    path, eq, per = page
    browser.get(path.as_uri())
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(
        "return !!(window.fkShow && document.getElementById('fk-diagram')._fullLayout)"))
    # a point two thirds along the periodic branch (branch 1 of the page), away from the start
    i = 2 * len(per) // 3
    x, y = float(per.param[i]), float(per.ptp["y"][i])
    diagram = browser.find_element("id", "fk-diagram")
    dx, dy = browser.execute_script("""
        var gd = arguments[0], xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        var r = gd.getBoundingClientRect();
        return [xa._offset + xa.l2p(arguments[1]) - r.width / 2, ya._offset + ya.l2p(arguments[2]) - r.height / 2];
        """, diagram, x, y)
    ActionChains(browser).move_to_element_with_offset(diagram, int(dx), int(dy)).pause(0.3).click().perform()
    WebDriverWait(browser, 20).until(lambda d: _numbers(d).get("point") not in (None, "0"))
    shown = _numbers(browser)
    j = int(shown["point"])
    # the click picks the point under the pointer: this one or a neighbour on the same branch
    assert abs(j - i) <= 3, shown
    # its numbers, computed here from the branch columns (not from the page's data)
    assert shown["Vb [m/s]"] == f"{per.param[j]:.6g}"
    assert shown["period T [s]"] == f"{2 * math.pi / per.omega[j]:.6g}"
    assert shown["stability"] == ("stable" if per.stable[j] == 1 else "unstable")
    # the orbit panel now draws that orbit: y over one period, in metres (not normalised)
    t, ys = browser.execute_script(
        "var d = document.getElementById('fk-orbit').data; return [d[0].x, d[0].y];")
    assert t[-1] == pytest.approx(2 * math.pi / per.omega[j], rel=1e-6)
    assert max(ys) - min(ys) == pytest.approx(per.ptp["y"][j], rel=2e-3)
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    # nothing left the page: every request the browser made was to the file itself or data:
    urls = [json.loads(e["message"])["message"]["params"]["request"]["url"]
            for e in browser.get_log("performance")
            if json.loads(e["message"])["message"]["method"] == "Network.requestWillBeSent"]
    assert urls, "the performance log recorded no request at all (not even the page): the check is blind"
    assert all(u.startswith(("file://", "data:", "blob:", "about:")) for u in urls), urls
