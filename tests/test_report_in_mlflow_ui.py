"""The report as users see it: inside the MLflow UI, in a real browser.

MLflow's artifact viewer shows an HTML artifact in ``<iframe sandbox="allow-scripts"
src="blob:...">``. There, following an ``href="#id"`` is refused ("Not allowed to load
local resource"), and the viewer is narrow (~715 px beside the artifact tree and the
assistant panel). This test starts a real ``mlflow server`` (sqlite store, one worker),
logs a real deepfix evaluation to it, opens the run's artifact route in Debian's
Chromium (driven by Playwright, no browser download) and checks that the navigation
scrolls, that nothing overflows sideways at 715 px, that no data string ran as markup
and that the report's count of checks is the run's ``deepfix_checks_run`` metric.

Skipped only when Chromium is not installed (``apt-get install -y chromium``).
``DEEPFIX_UI_SHOTS=<dir>`` saves screenshots there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: the width of MLflow's artifact viewer next to its file tree and open assistant panel
VIEWER_WIDTH = 715
#: a data string that would run if anything printed it unescaped
XSS_COLUMN = "<script>alert(1)</script>"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"mlflow server exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"mlflow server not healthy after {timeout}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """``mlflow server --workers 1`` on a free loopback port, sqlite store in tmp."""
    root = tmp_path_factory.mktemp("mlflow-ui")
    port = _free_port()
    log = root / "server.log"
    env = dict(os.environ, MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true")
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--workers", "1",
             "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
             "--default-artifact-root", str(root / "artifacts"),
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def logged_report(mlflow_server):
    """A deepfix evaluation logged to the server; returns (experiment id, run id)."""
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(mlflow_server)
    try:
        frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
        frame = frame.iloc[:, [*range(8), -1]]
        frame = frame.rename(columns={frame.columns[0]: XSS_COLUMN})
        train, test = train_test_split(frame, test_size=0.3, stratify=frame["label"],
                                       random_state=0)
        features = train.drop(columns="label")
        model = RandomForestClassifier(n_estimators=20, random_state=0).fit(
            features, train["label"])
        experiment = mlflow.set_experiment("deepfix-ui")
        with mlflow.start_run() as run:
            # explicit requirements: inferring them re-imports the model in a subprocess
            info = mlflow.sklearn.log_model(model, name="model", input_example=features.head(3),
                                            serialization_format="cloudpickle",
                                            pip_requirements=["scikit-learn"])
            mlflow.models.evaluate(
                info.model_uri, test, targets="label", model_type="classifier",
                evaluators=["deepfix"],
                # two suites keep the evaluation short; model_evaluation checks without a
                # second split do not apply, so the report has skipped checks to count
                evaluator_config={"deepfix": {"suites": ["data_integrity", "model_evaluation"],
                                              "kb": False}},
            )
        metrics = MlflowClient().get_run(run.info.run_id).data.metrics
        yield experiment.experiment_id, run.info.run_id, metrics
    finally:
        mlflow.set_tracking_uri(previous)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _report_frame(page, url: str):
    """Open the artifact route; return (the report's frame, its iframe element)."""
    page.goto(url)
    iframe = page.wait_for_selector('iframe[src^="blob:"]', timeout=60_000)
    frame = iframe.content_frame()
    frame.wait_for_selector("nav.toc a[href='#checks']", timeout=30_000)
    return frame, iframe


def _open_at_viewer_width(browser, url: str):
    """A page whose artifact viewer iframe is VIEWER_WIDTH wide. MLflow's panels are
    partly fixed, partly proportional, so the window is resized by the difference
    until the viewer has the width."""
    width = 1440
    page = browser.new_page(viewport={"width": width, "height": 900})
    messages: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    frame, iframe = _report_frame(page, url)
    for _ in range(8):
        shown = iframe.bounding_box()["width"]
        if abs(shown - VIEWER_WIDTH) <= 3:
            return page, frame, iframe, messages, dialogs
        width += round(VIEWER_WIDTH - shown)
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)
    page.close()
    raise AssertionError(f"could not size MLflow's artifact viewer to {VIEWER_WIDTH}px "
                         f"(last {shown}px at a {width}px window)")


def _settles(frame, expression: str, timeout: float = 5.0) -> float:
    """The value of ``expression`` once it stops changing (a scroll has ended). Polled
    from Python: the report's CSP forbids the eval that ``wait_for_function`` uses."""
    deadline = time.monotonic() + timeout
    last = frame.evaluate(expression)
    while time.monotonic() < deadline:
        time.sleep(0.1)
        value = frame.evaluate(expression)
        if value == last:
            return value
        last = value
    return last


def _shot(page, name: str) -> None:
    folder = os.environ.get("DEEPFIX_UI_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name))


def test_report_navigates_fits_and_counts_inside_the_mlflow_ui(logged_report, mlflow_server,
                                                              browser):
    experiment_id, run_id, metrics = logged_report
    url = (f"{mlflow_server}/#/experiments/{experiment_id}/runs/{run_id}"
           f"/artifacts/deepfix/report.html")
    page, frame, iframe, messages, dialogs = _open_at_viewer_width(browser, url)
    try:
        assert iframe.get_attribute("sandbox") == "allow-scripts"
        _shot(page, "mlflow_ui_report_top.png")

        # no horizontal overflow at 715 px, one vertical scroller (the frame's document)
        layout = frame.evaluate("""() => {
            const root = document.scrollingElement;
            const wide = [...document.querySelectorAll('body *')].filter(
                e => e.getBoundingClientRect().right > root.clientWidth + 1
                     && !e.closest('.tablebox')).map(e => e.tagName + '.' + e.className);
            return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
                    bodyOverflowY: getComputedStyle(document.body).overflowY,
                    innerScrollers: [...document.querySelectorAll('body *')].filter(e => {
                        const s = getComputedStyle(e).overflowY;
                        return (s === 'auto' || s === 'scroll') && e.scrollHeight > e.clientHeight;
                    }).length,
                    wide: wide.slice(0, 5)};
        }""")
        assert layout["clientWidth"] >= VIEWER_WIDTH - 20, layout
        assert layout["scrollWidth"] <= layout["clientWidth"], layout
        assert layout["wide"] == [], layout
        assert layout["innerScrollers"] == 0, layout

        # and MLflow's page around the frame does not scroll too (one vertical scrollbar)
        outer = iframe.evaluate("""f => {
            const out = [];
            for (let e = f.parentElement; e; e = e.parentElement) {
                const s = getComputedStyle(e).overflowY;
                if ((s === 'auto' || s === 'scroll') && e.scrollHeight > e.clientHeight + 1)
                    out.push(e.tagName + '.' + e.className + ' ' + e.scrollHeight + '/' + e.clientHeight);
            }
            return out;
        }""")
        assert outer == [], outer

        # the navigation scrolls the frame to the section
        assert frame.evaluate("document.scrollingElement.scrollTop") == 0
        frame.click("nav.toc a[href='#checks']")
        assert _settles(frame, "document.scrollingElement.scrollTop") > 200
        top = frame.evaluate("document.getElementById('checks').getBoundingClientRect().top")
        assert abs(top) <= 2, top
        _shot(page, "mlflow_ui_report_checks.png")
        frame.evaluate("document.scrollingElement.scrollTop = 0")
        frame.click("nav.toc a[href='#dataset']")
        top = _settles(frame, "document.getElementById('dataset').getBoundingClientRect().top")
        assert abs(top) <= 2, top
        _shot(page, "mlflow_ui_report_dataset.png")
        frame.evaluate("document.querySelector('details.cols').scrollIntoView()")
        _shot(page, "mlflow_ui_report_columns.png")
        assert not any("Not allowed to load local resource" in m for m in messages), messages

        # data strings stayed text: the column name shows, and nothing ran
        assert dialogs == []
        assert frame.locator(f"td.name:text-is('{XSS_COLUMN}')").count() >= 1

        # one count of checks: the header's "Checks run" is the run's metric
        shown_run = int(frame.inner_text("[data-count='checks-run']"))
        assert shown_run == int(metrics["deepfix_checks_run"])
        skipped = frame.locator("[data-count='checks-skipped']")
        if skipped.count():
            notes = frame.inner_text("#notes")
            assert "Nothing was skipped" not in notes
            assert f"{skipped.inner_text()} were skipped" in notes or \
                f"{skipped.inner_text()} was skipped" in notes
    finally:
        page.close()


@pytest.mark.parametrize("width", [700, 1280])
def test_standalone_report_fits_and_links_scroll(browser, width, tmp_path):
    """The report file on its own (a findings-heavy sample with long names), at the
    narrowest width the layout promises and at a desktop width."""
    from mlflow_deepfix.report import render_report
    from tests.test_report import _artifact_data, _diagnosis

    path = tmp_path / "report.html"
    path.write_text(render_report(_diagnosis(), _artifact_data()), encoding="utf-8")
    page = browser.new_page(viewport={"width": width, "height": 800})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(path.as_uri())
        sizes = page.evaluate("[document.scrollingElement.scrollWidth,"
                              " document.scrollingElement.clientWidth]")
        assert sizes[0] <= sizes[1], sizes
        page.click("nav.toc a[href='#model']")
        top = _settles(page, "document.getElementById('model').getBoundingClientRect().top")
        assert abs(top) <= 2, top
        assert dialogs == []
    finally:
        page.close()
