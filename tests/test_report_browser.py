"""The report in a real browser, with hostile strings from the data.

A real evaluation is logged whose column names, category values and model exception
text carry markup (``<script>``, ``<img onerror>``, ``javascript:`` links, an image on a
remote host). Its ``report.html`` is opened the way MLflow's artifact viewer shows it,
in ``<iframe sandbox="allow-scripts" src="blob:...">``, in Debian's Chromium driven by
Playwright. Nothing of the data may run (a payload would write to the console), no
request may leave the page, no ``javascript:`` link may exist, and the hostile strings
must be shown as text.

Skipped only when Chromium is not installed (``apt-get install -y chromium``).
"""

from __future__ import annotations

import shutil

import mlflow
import numpy as np
import pandas as pd
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")

MARK = "DEEPFIX-XSS"
HOSTILE_COLUMN = f"<script>console.log('{MARK}-column')</script>"
HOSTILE_IMG_COLUMN = f"<img src=x onerror=console.log('{MARK}-img')>"
HOSTILE_CATEGORY = f"<img src=http://198.51.100.7/{MARK}.png onerror=console.log(`{MARK}-cat`)>"
HOSTILE_LINK = f"<a href=javascript:console.log(`{MARK}-link`)>click</a>"
HOSTILE_EXCEPTION = f"bad row <script>console.log(`{MARK}-exception`)</script> {HOSTILE_LINK}"

#: the page MLflow's artifact viewer builds around an HTML artifact
HOST_PAGE = """<!doctype html><html><body>
<iframe id="viewer" sandbox="allow-scripts" style="width:715px;height:900px"></iframe>
</body></html>"""


class _HostileModel:
    """Predicts from the numbers, but its probabilities fail with a hostile message."""

    def __init__(self, train: pd.DataFrame):
        self.threshold = float(train["x"].median())

    def __call__(self, frame: pd.DataFrame):
        if (frame[HOSTILE_IMG_COLUMN] < -2.5).any():
            raise ValueError(HOSTILE_EXCEPTION)
        return (frame["x"] > self.threshold).astype(int).to_numpy()


@pytest.fixture
def hostile_report(tracking_uri) -> str:
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        HOSTILE_IMG_COLUMN: rng.normal(size=n),
        HOSTILE_COLUMN: rng.choice(["plain", HOSTILE_CATEGORY, HOSTILE_LINK], size=n),
    })
    frame["label"] = (frame["x"] + rng.normal(0, 0.5, n) > 0).astype(int)
    train, test = frame.iloc[:250].reset_index(drop=True), frame.iloc[250:].reset_index(drop=True)
    test.loc[0, HOSTILE_IMG_COLUMN] = -3.0  # the model crashes on test: exception text shown
    with mlflow.start_run():
        result = mlflow.models.evaluate(
            _HostileModel(train), test, targets="label", model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"train_data": train, "kb": False,
                                          "suites": ["data_integrity", "train_test_validation"]}},
        )
    html = result.artifacts["deepfix_report"].content
    assert "&lt;script&gt;" in html  # the hostile column name reached the report, escaped
    return html


def test_hostile_strings_in_the_report_never_run_in_a_sandboxed_frame(hostile_report):
    sync_api = pytest.importorskip("playwright.sync_api")
    console: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda message: console.append(message.text))
            page.on("request", lambda request: requests.append(request.url))
            page.route("http*://**", lambda route: route.abort())  # nothing may leave anyway
            page.set_content(HOST_PAGE)
            page.evaluate(
                """(html) => {
                    const blob = new Blob([html], {type: 'text/html'});
                    document.getElementById('viewer').src = URL.createObjectURL(blob);
                }""",
                hostile_report,
            )
            frame_element = page.wait_for_selector("#viewer")
            assert frame_element.get_attribute("sandbox") == "allow-scripts"
            frame = frame_element.content_frame()
            frame.wait_for_load_state("load")
            frame.wait_for_selector("body")
            page.wait_for_timeout(500)  # let any onerror handler fire
            text = frame.locator("body").inner_text()
            javascript_links = frame.locator("a[href^='javascript:' i]").count()
            # activate every link: a javascript: href would run now
            n_links = frame.locator("a").count()
            frame.evaluate("() => document.querySelectorAll('a').forEach(a => a.click())")
            page.wait_for_timeout(300)
        finally:
            browser.close()
    ran = [line for line in console if MARK in line]
    assert not ran, ran
    external = [u for u in requests if not u.startswith(("blob:", "data:", "about:"))]
    assert not external, external
    assert javascript_links == 0 and n_links > 0
    # shown as text, so the user sees what the data holds
    assert "<script>console.log(" in text
    assert "ValueError" in text
