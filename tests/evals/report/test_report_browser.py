"""The report page in a real browser (headless Chromium, Debian's `chromium` package), as a person opens
it: from file://, offline. No console error, no request beyond the page itself, a heatmap that is drawn,
and a model answer carrying <script> that shows as text and runs nothing. Skips where no Chromium is
installed (`.ci/run` installs it)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

import ctxprobe
from tests.evals.report.headless_chromium import Browser, chromium_path
from tests.evals.report.synthetic_runs import INJECTED, write_limit, write_run

BINARY = chromium_path()
pytestmark = [
    pytest.mark.skipif(
        BINARY is None, reason="no Chromium: `apt-get install chromium` (Debian) or set CTXPROBE_CHROMIUM"
    ),
    pytest.mark.timeout(180),
]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A nightly-sized run (its first wrong answer at 1m is an injected <script>) and a limit folder."""
    root = tmp_path_factory.mktemp("browser")
    return ctxprobe.report([write_run(root / "nightly"), write_limit(root / "limit")], root / "report.html")


@pytest.fixture(scope="module")
def browser(page: Path) -> Iterator[Browser]:
    pytest.importorskip("websocket", reason="websocket-client (the test extra) drives Chromium")
    assert BINARY is not None
    b = Browser(BINARY)
    try:
        b.open(page.as_uri())
        yield b
    finally:
        b.close()


def test_loads_offline_without_console_errors_or_requests(browser: Browser, page: Path) -> None:
    assert browser.evaluate("document.readyState") == "complete"
    assert browser.console_errors() == []
    others = [u for u in browser.requests() if u != page.as_uri() and not u.startswith("data:")]
    assert others == []
    assert browser.evaluate("document.images.length") >= 2
    assert browser.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")


def test_injected_script_shows_as_text_and_does_not_run(browser: Browser) -> None:
    assert browser.evaluate("document.title").startswith("ctxprobe report:")
    assert browser.evaluate("document.scripts.length") == 0
    assert browser.evaluate('document.querySelectorAll("img[src=x]").length') == 0
    shown = browser.evaluate("document.body.innerText")
    assert INJECTED in shown  # the model's answer, visible as the text it was


def test_screenshot_shows_the_heatmap(browser: Browser, tmp_path: Path) -> None:
    whole = imread(browser.screenshot(tmp_path / "page.png"))
    assert whole.std() > 0.05  # not blank
    rect = browser.evaluate('JSON.stringify(document.querySelector("table.heat").getBoundingClientRect())')
    import json

    box = json.loads(rect)
    assert box["width"] > 300 and box["height"] > 200
    heat = imread(browser.screenshot(tmp_path / "heatmap.png", clip={k: box[k] for k in ("x", "y", "width", "height")}))
    rgb = (heat[..., :3] * 255).round().astype(int)
    colours = {tuple(c) for c in rgb.reshape(-1, 3)[::7]}
    saturated = rgb.max(axis=2) - rgb.min(axis=2) > 60  # red, yellow, green cells (not grey or text)
    assert saturated.mean() > 0.3 and len(colours) > 20
    reds, greens = (rgb[..., 0] > rgb[..., 1] + 60) & saturated, (rgb[..., 1] > rgb[..., 0] + 60) & saturated
    assert np.count_nonzero(reds) and np.count_nonzero(greens)  # both ends of the scale are on screen
    keep = os.environ.get("CTXPROBE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / "page.png", Path(keep) / "report-page.png")
        shutil.copy(tmp_path / "heatmap.png", Path(keep) / "report-heatmap.png")
        browser.screenshot(Path(keep) / "report-full.png", full_page=True)
