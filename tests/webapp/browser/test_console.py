"""The console in Chromium: the runs list shows each run's headline, the case library renders
its answers as Markdown with the chat's safety rules, the trace's log-pattern table has a row
of its own, every page fits a 400 px screen, and a Chinese browser reads every label in
Chinese."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.webapp.api.test_alerts_api import real_payload
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun

from .conftest import GatedModel, ask, read_json, require_browser
from .harness import LiveApp, start_app

if TYPE_CHECKING:
    from playwright.sync_api import Page

TOKEN = "console-token"
#: A stored answer that tries everything the renderer must refuse.
HOSTILE = (
    "**The pool ran dry.**\n\n"
    '<img src="http://evil.example/pixel.png"> <script>alert(1)</script>\n\n'
    "![chart](http://evil.example/chart.png)\n\n"
    "1. payment-service degraded [E1]\n2. mysql-primary slow\n"
)
#: Words a Chinese page may show in Latin letters: names of things, not labels.
LATIN_NAMES = {"API", "AIOps", "UTC", "JSON", "LTTB", "Alertmanager", "Bearer", "Authorization"}
#: Elements whose text is a label; data inside them (ids, times, names, answers) is skipped.
LABELS = "h1, h2, h3, h4, th, dt, label, button, summary, option, .hint, .status, .badge, nav a"
DATA = (
    "code, time, .mono, .markdown, #conversation-title, button.session, .claim-statement, "
    ".evidence-chip, .step > summary, .invocation > summary, table.kv th, table.kv td, "
    "#evaluation h3, "
    "#orchestration h3, .alert-name, .alert-group-title code, .chart-card figcaption, "
    ".alert-item .badge:not([data-state])"
)


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory,
    demo_data: DemoTelemetryBackend,
    gated_model: GatedModel,
) -> Iterator[LiveApp]:
    """The app with the webhook enabled, a hostile stored answer marked useful, one alert."""
    require_browser()
    app = start_app(
        tmp_path_factory.mktemp("console-app"),
        backend=demo_data,
        model=gated_model,
        alert_webhook_token=TOKEN,
    )
    with app.services.database.connection_context():
        DiagnosisRun.create(
            run_id="run-hostile",
            session_id="sess-hostile",
            agent_flow="CHAT",
            flow="complex",
            status="SUCCESS",
            question="Why is payment-service slow?",
            answer=HOSTILE,
        )
    yield app
    gated_model.gate.set()
    app.stop()


@pytest.fixture(scope="module")
def seeded(live: LiveApp, browser: object) -> dict[str, str]:
    """One diagnosis asked through the chat page and marked useful, the hostile case marked
    useful, one webhook alert stored; the diagnosis' ids."""
    from playwright.sync_api import BrowserContext

    assert isinstance(browser, BrowserContext)
    page = browser.new_page()
    try:
        ids = ask(page, live)
        for body in (ids, {"sessionId": "sess-hostile", "runId": "run-hostile"}):
            sent = page.request.post(
                live.url + "/api/feedback", data={**body, "feedback": "useful"}
            )
            assert sent.ok, sent.text()
        posted = page.request.post(
            live.url + "/api/alerts/alertmanager",
            data=json.dumps(real_payload()),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        assert posted.status == 202, posted.text()
    finally:
        page.close()
    return ids


def pages(ids: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each console page and the selector that says it has loaded its data."""
    trace = f"/trace/{ids['sessionId']}/{ids['runId']}"
    return {
        "chat": (f"/?session={ids['sessionId']}", ".turn[data-evidence=ready]"),
        "runs": ("/runs", "#runs-pager[data-state=ready]"),
        "cases": ("/cases", "#cases-pager[data-state=ready]"),
        "alerts": ("/alerts", "#alerts-pager[data-state=ready]"),
        "trace": (trace, "#trace[data-loaded=true]"),
    }


def open_page(page: Page, live: LiveApp, path: str, ready: str) -> None:
    page.goto(live.url + path)
    page.locator(ready).first.wait_for(state="attached")


def test_the_runs_list_shows_each_runs_headline(
    page: Page, live: LiveApp, seeded: dict[str, str]
) -> None:
    runs = {r["runId"]: r for r in read_json(page, live.url + "/api/runs?limit=50")["runs"]}
    headline = runs[seeded["runId"]]["headline"]
    assert headline and headline == runs[seeded["runId"]]["answer"].splitlines()[0].strip("*")
    assert runs["run-hostile"]["headline"] == "The pool ran dry."
    open_page(page, live, "/runs", "#runs-pager[data-state=ready]")
    row = page.locator(f"#runs-body tr[data-run-id='{seeded['runId']}']")
    assert row.locator(".run-headline").inner_text() == headline


def test_the_case_library_renders_markdown_and_loads_nothing_from_elsewhere(
    page: Page, live: LiveApp, seeded: dict[str, str]
) -> None:
    elsewhere: list[str] = []
    page.on("request", lambda r: elsewhere.append(r.url) if "evil.example" in r.url else None)
    open_page(page, live, "/cases", "#cases-pager[data-state=ready]")
    case = page.locator(".case[data-run-id='run-hostile']")
    assert case.locator(".case-headline").inner_text() == "The pool ran dry."
    case.locator("details.case-answer > summary").click()
    answer = case.locator(".case-answer .markdown")
    assert answer.locator("strong").first.inner_text() == "The pool ran dry."
    assert answer.locator("ol > li").count() == 2
    assert answer.locator("img, script").count() == 0
    assert "<script>" in answer.inner_text()  # raw HTML is shown as text, never run
    cite = answer.locator("a.cite").first
    assert cite.get_attribute("href") == "/trace/sess-hostile/run-hostile#evidence-E1"
    assert elsewhere == []
    mine = page.locator(f".case[data-run-id='{seeded['runId']}'] .case-answer .markdown")
    assert mine.locator("h3").count() >= 1  # the diagnosis' sections, rendered


def test_the_trace_log_pattern_table_gets_a_row_of_its_own(
    page: Page, live: LiveApp, seeded: dict[str, str]
) -> None:
    path, ready = pages(seeded)["trace"]
    open_page(page, live, path, ready)
    charts = page.locator("#charts .charts")
    table = charts.locator(":scope > .log-table").first
    chart = charts.locator(":scope > .chart-card").first
    width = charts.bounding_box()["width"]  # type: ignore[index]
    assert table.bounding_box()["width"] > 0.95 * width  # type: ignore[index]
    assert chart.bounding_box()["width"] < 0.5 * width  # type: ignore[index]


@pytest.mark.parametrize("name", ["chat", "runs", "cases", "alerts", "trace"])
def test_every_page_fits_a_400_px_screen(
    page: Page, live: LiveApp, seeded: dict[str, str], name: str
) -> None:
    page.set_viewport_size({"width": 400, "height": 800})
    path, ready = pages(seeded)[name]
    open_page(page, live, path, ready)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 400
    # Wide content scrolls inside its own box, never the page: what pokes out is clipped.
    poking = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter((el) => {
             const box = el.getBoundingClientRect();
             if (box.width === 0 || box.right <= 401) return false;
             for (let up = el.parentElement; up; up = up.parentElement) {
               if (getComputedStyle(up).overflowX !== 'visible') return false;
             }
             return true;
           }).map((el) => el.tagName + '.' + el.className)"""
    )
    assert poking == []


@pytest.mark.parametrize("name", ["chat", "runs", "cases", "alerts", "trace"])
def test_a_chinese_browser_reads_every_label_in_chinese(
    page: Page, live: LiveApp, seeded: dict[str, str], name: str
) -> None:
    page.add_init_script(
        "Object.defineProperty(navigator, 'languages', {get: () => ['zh-CN', 'zh']});"
        "Object.defineProperty(navigator, 'language', {get: () => 'zh-CN'});"
    )
    path, ready = pages(seeded)[name]
    open_page(page, live, path, ready)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    english = page.evaluate(
        """([labels, data]) => {
             const words = new Set();
             for (const el of document.querySelectorAll(labels)) {
               if (el.closest(data) || !el.getClientRects().length) continue;
               const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
               while (walker.nextNode()) {
                 const node = walker.currentNode;
                 if (node.parentElement.closest(data)) continue;
                 for (const word of node.nodeValue.match(/[A-Za-z]{3,}/g) || []) words.add(word);
               }
             }
             return [...words];
           }""",
        [LABELS, DATA],
    )
    assert sorted(set(english) - LATIN_NAMES) == []
    placeholders = page.locator("[placeholder]").evaluate_all(
        "els => els.map(e => e.placeholder).filter(p => /^[\\x00-\\x7f]+$/.test(p))"
    )
    assert placeholders == []
