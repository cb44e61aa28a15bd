"""Shared fixtures of the hostile-input tests: a headless Chromium that records dialogs.

The browser is Debian's chromium driven by Selenium, as ``tests/results/test_report_browser.py``
starts it; here every page also gets, before its own scripts run, a hook that records each
call of ``alert``, ``confirm``, ``prompt`` and ``print`` (a script injected into a report would
call them), and the console log is kept (Content-Security-Policy refusals are logged there).
"""
import pytest

from tests.results.test_report_browser import CHROMIUM, DRIVER, INSTALL

# runs in every frame before the page's scripts (Chrome DevTools Protocol, not subject to the
# page's Content-Security-Policy)
DIALOG_HOOK = """
window.__fkDialogs = [];
['alert', 'confirm', 'prompt', 'print'].forEach(function (k) {
  window[k] = function (m) { window.__fkDialogs.push(k + ': ' + String(m)); };
});
"""


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        pytest.fail(INSTALL)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1500", "--host-resolver-rules=MAP * ~NOTFOUND"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # a real dialog stays open (the test looks for it) instead of being dismissed silently
    opts.set_capability("unhandledPromptBehavior", "ignore")
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DIALOG_HOOK})
    yield driver
    driver.quit()
