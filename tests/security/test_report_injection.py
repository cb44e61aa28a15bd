"""Issue 28, item 1: a report shows every string of a model or a file as text and runs no
script but its own.

Hostile text comes from two places: a model file whose units and description hold markup
(what a user may be sent, or paste), and an HDF5 file whose attributes and datasets were
edited (``model``, ``units``, ``continuation_parameter``, ``discretization``, ``method``, a
state's name, a ``motion`` dataset; a sweep store's model, parameters and messages).  The
pages built from them are checked as text (no payload survives as markup, the policy allows
exactly the page's own scripts) and opened in headless Chromium, where every point is shown
and hovered: the tests fail on any dialog (``alert`` and its kin, recorded before the page's
scripts run, and any native dialog), any element the page did not write, and any refusal of
the Content-Security-Policy in the console (none of the page's own scripts may need one).
"""
import base64
import hashlib
from html.parser import HTMLParser
import json
import re
from types import SimpleNamespace

from click.testing import CliRunner
import h5py
import numpy as np
import pytest

from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_run, save_run
from frictionkit.runtime.results._report import report, report_html

# every payload calls alert() (recorded by the browser fixture) or leaves an element behind
IMG = "<img src=x onerror=alert(document.domain)>"
SCRIPT = "</script><script>alert('script')</script>"
SVG = "<svg onload=alert('svg')>"
IFRAME = '"><iframe src="javascript:alert(\'iframe\')"></iframe>'
LINK = '<a href="javascript:alert(\'link\')">click</a><b style="font-size:90px">big</b>'
COMMENT = "<!--<script>alert('comment')//"
ENTITY = "&lt;img src=x onerror=alert('entity')&gt;"     # escaped text must stay text
PAYLOADS = (IMG, SCRIPT, SVG, IFRAME, LINK, COMMENT, ENTITY)

MODEL = '''
from frictionkit.modelspec import ModelSpec


def model():
    m = ModelSpec("hostile_vdp", {description!r}, time_unit={t!r})
    mu = m.parameter("mu", -0.5, unit={mu!r})
    x, v = m.second_order("x", velocity="v", unit={x!r}, velocity_unit={v!r})
    m.ode(v, mu * v - x - v**3)
    return m
'''

# what the pages may hold: the tags report_html writes, nothing else
PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "div", "table", "tr", "th",
             "td", "script"}


@pytest.fixture(scope="module")
def hostile_model(tmp_path_factory):
    """Branches of a van der Pol oscillator whose units and description are markup (a
    supercritical Hopf point at mu = 0), from the model file, and their run file."""
    folder = tmp_path_factory.mktemp("hostile_model")
    path = folder / "hostile_vdp.py"
    path.write_text(MODEL.format(description=SCRIPT, t=SVG, mu=IFRAME, x=IMG, v=LINK))
    m = load_model(path, continuation="mu", backend="numpy")
    eq = equilibrium_branch(m, -0.5, 0.5)
    disc, Z, d = periodic_start_from_hopf(m, eq.special_points("hopf")[0], 5)
    per = periodic_branch(disc, Z, -0.5, 0.5, d)
    save_run(folder / "run.h5", equilibria=eq, periodic=per)
    return folder, eq, per


def _make_hostile(f, param, state, labels):
    """Turn the branch group ``f`` of a run file into a hostile one (attributes, a state, motion)."""
    a = f.attrs
    old_state = json.loads(a["states"])[0]
    old_param = a["continuation_parameter"]
    a["model"] = SCRIPT + IMG
    a["continuation_parameter"] = param
    a["discretization"] = IFRAME
    a["method"] = LINK
    a["parameters"] = json.dumps({param if k == old_param else k: v for k, v in json.loads(a["parameters"]).items()})
    a["units"] = json.dumps({param: IMG, state: COMMENT, "v": ENTITY, "t": SVG})
    a["states"] = json.dumps([state, *json.loads(a["states"])[1:]])
    for group in ("ptp", "min", "max", "mean", "amplitude", "phase", "rms"):
        if group in f:
            f[group].move(old_state, state)
    if "motion" in f:
        del f["motion"]
    f.create_dataset("motion", data=np.array([labels[i % len(labels)] for i in range(len(f["param"]))],
                                             dtype=object), dtype=h5py.string_dtype())


@pytest.fixture(scope="module")
def hostile_files(hostile_model):
    """A run file edited into a hostile one, and a hostile sweep store (an ``orbit`` sweep)."""
    folder, _, _ = hostile_model
    run = folder / "hostile.h5"
    run.write_bytes((folder / "run.h5").read_bytes())
    with h5py.File(run, "r+") as f:
        for group in ("equilibria", "periodic"):
            _make_hostile(f[group], IMG, SVG, [IMG, SCRIPT, LINK])
    store = folder / "sweep.h5"
    spec = dict(model="", model_file=SCRIPT + IMG, model_hash="0", param=IFRAME, start=0.0, stop=1.0,
                over=[[SVG, [1.0, 2.0, 3.0]]], fixed=[], task="orbit", options=[["at", []]])
    with h5py.File(store, "w") as f:
        f.attrs["format"], f.attrs["format_version"], f.attrs["spec"] = "frictionkit-sweep", 1, json.dumps(spec)
        for i, (motion, message) in enumerate([(IMG, LINK), ("", COMMENT), (SCRIPT, ENTITY)]):
            row = {SVG: float(i + 1), "status": IFRAME if i else "ok", "message": message, "motion": motion}
            f.create_group(f"tasks/{i:06d}").attrs["row"] = json.dumps(row)
    return run, store


@pytest.fixture(scope="module")
def pages(hostile_model, hostile_files, tmp_path_factory):
    """The pages: the model's branches; the hostile run file and sweep store through the
    ``report`` command; the hostile branches with a two-parameter curve of hostile names."""
    _, eq, per = hostile_model
    run, store = hostile_files
    folder = tmp_path_factory.mktemp("pages")
    out = {"model": report([eq, per], folder / "model.html")}
    r = CliRunner().invoke(main, ["report", str(run), str(store), "-o", str(folder / "file.html")])
    assert r.exit_code == 0, r.output
    out["file"] = folder / "file.html"
    curve = SimpleNamespace(lam=np.array([0.1, 0.2, 0.3]), mu=np.array([1.0, 2.0, 1.5]), lam_name=IMG,
                            mu_name=SVG, kind=LINK, model=SCRIPT)
    out["curve"] = report([*load_run(run), curve], folder / "curve.html", title=COMMENT + IMG)
    return out


class _Tags(HTMLParser):
    """Start tags of a page and the text of its executable scripts."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self._in = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs).get("type", "")
            self.scripts.append([self._in, ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data


def _parsed(html):
    p = _Tags()
    p.feed(html)
    return p


@pytest.mark.parametrize("name", ["model", "file", "curve"])
def test_no_string_of_a_model_or_file_is_markup_in_the_page(pages, name):
    html = pages[name].read_text(encoding="utf-8")
    for payload in PAYLOADS:
        assert payload not in html, f"{payload!r} is in the page as written"
    p = _parsed(html)
    assert {t for t, _ in p.tags} <= PAGE_TAGS, {t for t, _ in p.tags} - PAGE_TAGS
    assert not [a for _, attrs in p.tags for a in attrs if a.startswith("on")]
    # three scripts: the data (JSON, never executed), Plotly, the glue; the data parses whole
    assert [t for t, _ in p.scripts] == ["application/json", "", ""]
    data = json.loads(p.scripts[0][1])
    assert data["figures"]
    # the title and the heading: the text itself, escaped (HTMLParser unescapes it back)
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert "<" not in title and ">" not in title


@pytest.mark.parametrize("name", ["model", "file", "curve"])
def test_the_policy_allows_exactly_the_pages_own_scripts(pages, name):
    p = _parsed(pages[name].read_text(encoding="utf-8"))
    meta = [a for t, a in p.tags if t == "meta" and a.get("http-equiv", "").lower() == "content-security-policy"]
    assert len(meta) == 1, "no Content-Security-Policy meta tag"
    rules = {r.split()[0]: r.split()[1:] for r in meta[0]["content"].split(";") if r.strip()}
    assert rules["default-src"] == ["'none'"]
    own = ["'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
           for kind, text in p.scripts if kind == ""]
    assert sorted(rules["script-src"]) == sorted(own), "script-src is not the hashes of the page's scripts"
    for r in ("connect-src", "frame-src", "object-src"):
        assert r not in rules                       # default-src 'none' applies
    assert set(rules["img-src"]) <= {"data:", "blob:"}


def _wait_drawn(browser):
    """Wait for every figure to be drawn, then for the glue (a hostile string that ends the
    data block early swallows the glue: the page is then broken, and the test says so)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 60).until(lambda d: d.execute_script(
        "var g = document.querySelectorAll('.plotly-graph-div');"
        "return g.length > 0 && Array.prototype.every.call(g, function (x) { return !!x._fullLayout; })"))
    try:
        WebDriverWait(browser, 10).until(lambda d: d.execute_script("return !!window.fkShow"))
    except TimeoutException:
        pytest.fail("the page's glue did not run (a string of the data ended its script element?)")


def _no_script_ran(browser):
    """Fail on any dialog, element the page did not write, marker, or policy refusal."""
    from selenium.common.exceptions import NoAlertPresentException
    try:
        alert = browser.switch_to.alert
        text = alert.text
        alert.dismiss()
        pytest.fail(f"a dialog opened: {text!r}")
    except NoAlertPresentException:
        pass
    assert browser.execute_script("return window.__fkDialogs") == []
    injected = browser.execute_script("""
        var bad = document.querySelectorAll('img, iframe, object, embed, frame, svg[onload], [onerror], '
          + '[onload], [onmouseover], [onclick], a[href^="javascript"]');
        return Array.prototype.map.call(bad, function (e) { return e.outerHTML.slice(0, 200); });""")
    assert injected == []
    assert browser.execute_script("return document.scripts.length") == 3
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    assert refused == []


def _show_everything(browser):
    """Show every point of every branch (what a click does) and hover on every trace."""
    browser.execute_script("""
        var D = JSON.parse(document.getElementById('fk-data').textContent);
        D.branches.forEach(function (br, b) {
          br.points.forEach(function (p, i) { window.fkShow(b, i); });
        });
        document.querySelectorAll('.plotly-graph-div').forEach(function (gd) {
          gd.data.forEach(function (t, k) {
            try { Plotly.Fx.hover(gd, [{curveNumber: k, pointNumber: t.type === 'heatmap' ? [0, 0] : 0}]); }
            catch (e) { /* a trace without points */ }
          });
        });""")


@pytest.mark.parametrize("name", ["model", "file", "curve"])
def test_hostile_pages_run_no_script_in_a_browser(pages, browser, name):
    browser.get_log("browser")                       # drop the previous page's messages
    browser.get(pages[name].as_uri())
    _wait_drawn(browser)
    _no_script_ran(browser)
    _show_everything(browser)
    _no_script_ran(browser)


def test_hostile_text_is_shown_as_the_characters_it_holds(pages, browser, hostile_model):
    """The escaping shows the text, neither markup nor entities: the heading, the numbers
    table (textContent) and Plotly's axis titles hold the payloads as written."""
    browser.get(pages["model"].as_uri())
    _wait_drawn(browser)
    assert browser.execute_script("return document.querySelector('h1').textContent") \
        == "frictionkit report: hostile_vdp"
    _, eq, per = hostile_model
    browser.execute_script("window.fkShow(1, 2)")
    cells = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#fk-numbers td'), function (c) "
        "{ return c.textContent; })")
    assert f"mu [{IFRAME}]" in cells and f"peak-to-peak x [{IMG}]" in cells
    assert f"period T [{SVG}]" in cells
    titles = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#fk-orbit .g-xtitle, #fk-orbit .g-ytitle, "
        "#fk-diagram .g-xtitle'), function (t) { return t.textContent; })")
    assert f"t [{SVG}]" in titles and f"x [{IMG}]" in titles and f"mu [{IFRAME}]" in titles
    browser.get(pages["curve"].as_uri())
    _wait_drawn(browser)
    assert browser.execute_script("return document.title") == f"frictionkit report: {COMMENT}{IMG}"
    legend = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#fk-diagram .legendtext'), "
        "function (t) { return t.textContent; })")
    assert f"{IMG} points" in legend and f"{LINK} points" in legend        # the motion labels
    _no_script_ran(browser)


def test_the_policy_refuses_a_script_the_page_did_not_write(pages, browser, tmp_path):
    """Defence in depth: markup that reached the page anyway (here written into it by hand)
    does not run, and the page keeps working."""
    html = pages["model"].read_text(encoding="utf-8")
    html = html.replace("<body>", "<body><script>window.__fkInjected = 1</script>"
                                  "<img src=x onerror=\"window.__fkInjected = 2\">", 1)
    path = tmp_path / "tampered.html"
    path.write_text(html, encoding="utf-8")
    browser.get_log("browser")
    browser.get(path.as_uri())
    _wait_drawn(browser)
    assert browser.execute_script("return window.__fkInjected === undefined")
    refused = [e["message"] for e in browser.get_log("browser") if "Content Security Policy" in e["message"]]
    assert len(refused) >= 2, refused                     # the script and the handler, refused


def test_report_html_escapes_a_title_given_by_the_caller(hostile_model):
    _, eq, _ = hostile_model
    html = report_html([eq], title=SCRIPT)
    assert "<title>frictionkit report: &lt;/script&gt;&lt;script&gt;" in html
    assert "<h1>frictionkit report: &lt;/script&gt;" in html
