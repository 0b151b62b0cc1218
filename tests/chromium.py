"""Debian's Chromium for the browser tests: where it is, how it is launched on a machine
with no outside network (no background fetches, no sandbox as root), and the mark that
skips a test only when it is not installed (CI installs it from Debian, see .ci/run)."""

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
requires_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")
