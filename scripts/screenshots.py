"""Screenshots of the browser UI for the documentation, under ``docs/``.

Serves the app in-process (a temporary SQLite database, the offline model), drives the system
Chromium headless through Playwright exactly as the browser tests do, and writes the PNGs:
``chat.png`` (an answer with its citation chips, one hovered to show its excerpt and source),
``evidence.png`` (the cited findings' curves with their windows, and the question's
window), ``patterns.png`` (an answer to a Chinese question citing ``detect_anomalies`` and
``log_patterns``: Chinese labels, the log-pattern table) and ``trace.png`` (the trace viewer
with the route diagram and the excerpt a claim was verified against highlighted).
Run with ``.venv/bin/python scripts/screenshots.py [--out docs]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the harness lives with the browser tests

from tests.webapp.browser.harness import (  # noqa: E402
    VIEWPORT,
    LiveApp,
    chromium,
    screenshot_folder,
    start_app,
)
from tests.webapp.evidence_seed import seed_analysis_run  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Page

FIRST = "Why is shipping-service failing since 10:20?"
QUESTION = "Why is payment-service slow since 10:00?"
ZH_QUESTION = "为什么 payment-service 从10点开始变慢？"
CLAIM = "C5"  # a log line quoted in the answer: the highlight is easy to see
TALL = {"width": 1280, "height": 1500}
TRACE_MARGIN_PX = 140


def ask(page: Page, question: str) -> None:
    """Ask on the chat page and wait until the streamed run is done."""
    page.fill("#question", question)
    page.click("#send")
    page.locator(".turn").last.locator(".badge.state.ok").wait_for()


def chat_screenshot(page: Page, live: LiveApp, path: Path) -> str:
    """The chat page after a streamed diagnosis; returns the trace link of that run."""
    page.goto(live.url + "/")
    ask(page, FIRST)
    page.click("#new-session")
    ask(page, QUESTION)
    turn = page.locator(".turn[data-evidence=ready]").last
    turn.wait_for()
    turn.locator(".answer > :first-child").evaluate("h => h.scrollIntoView({block: 'start'})")
    turn.locator(".answer ol a.cite-chip").nth(2).hover()
    page.locator("#cite-card").wait_for(state="visible")
    page.screenshot(path=str(path))
    page.mouse.move(0, 0)
    href = turn.locator(".trace-link").get_attribute("href")
    assert href, "the turn has no trace link"
    return href


def panel_screenshot(page: Page, path: Path) -> None:
    """The evidence panel of the last answer: its window and the charts of the cited series."""
    page.set_viewport_size(TALL)  # type: ignore[arg-type]
    panel = page.locator(".turn").last.locator(".evidence-panel")
    panel.evaluate("p => p.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    box = panel.bounding_box()
    composer = page.locator("#ask").bounding_box()  # the sticky question form below it
    assert box is not None and composer is not None, "the evidence panel is not visible"
    page.screenshot(
        path=str(path),
        clip={
            "x": box["x"] - 8,
            "y": box["y"] - 8,
            "width": box["width"] + 16,
            "height": min(box["height"] + 16, composer["y"] - box["y"]),
        },
    )


def patterns_screenshot(page: Page, live: LiveApp, path: Path) -> None:
    """A Chinese question's answer citing detect_anomalies and log_patterns (seeded run)."""
    seeded = seed_analysis_run(live.services, "payment-service", ZH_QUESTION)
    page.evaluate(
        "([s, id]) => { localStorage.setItem('diagnosis.sessions', s);"
        " localStorage.setItem('diagnosis.currentSession', id); }",
        [f'[{{"id": "{seeded["sessionId"]}", "title": "{ZH_QUESTION}"}}]', seeded["sessionId"]],
    )
    page.goto(live.url + "/")
    turn = page.locator(".turn[data-evidence=ready]").last
    turn.wait_for()
    turn.locator(".answer > :first-child").evaluate("h => h.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)  # type: ignore[arg-type]


def trace_screenshot(page: Page, live: LiveApp, href: str, path: Path) -> None:
    """The trace viewer: route diagram on top, a claim's excerpt highlighted in its output."""
    page.goto(live.url + href)
    page.locator("#route-diagram[data-rendered] svg").wait_for()
    page.locator(f"#claim-{CLAIM} .claim-statement").click()
    mark = page.locator("mark.excerpt").first
    mark.wait_for()
    # fold what lies between the route and the highlighted output, as a reader would
    for summary in (
        "#summary .answer-box > summary",
        "#charts .card-details > summary",
        "#claims .card-details > summary",
        "#steps .card-details > summary",
    ):
        page.locator(summary).click()
    page.evaluate("window.scrollTo(0, 0)")
    page.mouse.move(0, 0)
    box = mark.bounding_box()
    assert box is not None, "the highlighted excerpt is not visible"
    scroll_y = page.evaluate("window.scrollY")
    height = int(box["y"] + scroll_y + box["height"] + TRACE_MARGIN_PX)
    page.screenshot(
        path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": height}
    )


def main() -> int:
    """Write both screenshots; exit 1 with the reason when no browser can be driven."""
    out = screenshot_folder(__doc__.splitlines()[0], ROOT / "docs")
    if out is None:
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        live = start_app(Path(scratch))
        try:
            with chromium(Path(scratch) / "profile") as browser:
                page = browser.new_page()
                href = chat_screenshot(page, live, out / "chat.png")
                panel_screenshot(page, out / "evidence.png")
                patterns_screenshot(page, live, out / "patterns.png")
                trace_screenshot(page, live, href, out / "trace.png")
        finally:
            live.stop()
    names = ", ".join(f"{out / n}.png" for n in ("chat", "evidence", "patterns", "trace"))
    print(f"screenshots: wrote {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
