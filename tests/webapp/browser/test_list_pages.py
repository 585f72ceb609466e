"""The server-backed pages in Chromium: the sessions sidebar (seen from a second browser), the
Runs page with filters and pages, the case library, and the alert inbox fed by the webhook."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from tests.webapp.api.test_alerts_api import real_payload
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.models import DiagnosisRun

from .conftest import TIMEOUT_MS, Console, GatedModel, ask, read_json, require_browser
from .harness import LiveApp, chromium, start_app

if TYPE_CHECKING:
    from playwright.sync_api import Page

T = TypeVar("T")
TOKEN = "inbox-token"
UTC_LABEL = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
SEEDED = 30


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory,
    demo_data: DemoTelemetryBackend,
    gated_model: GatedModel,
) -> Iterator[LiveApp]:
    """The app with the Alertmanager webhook enabled, and 30 seeded runs in time order."""
    require_browser()
    app = start_app(
        tmp_path_factory.mktemp("lists-app"),
        backend=demo_data,
        model=gated_model,
        alert_webhook_token=TOKEN,
    )
    start = datetime(2026, 11, 29, 8, 0, 0)
    with app.services.database.connection_context():
        for n in range(SEEDED):
            DiagnosisRun.create(
                run_id=f"seed-{n:02d}",
                session_id="sess-seeded",
                agent_flow="CHAT",
                flow="complex",
                status="FAILED" if n % 3 == 0 else "SUCCESS",
                question=f"Seeded question {n}",
                answer=None if n % 3 == 0 else "seeded answer",
                started_at=start + timedelta(minutes=n // 2),  # pairs share a time
            )
    yield app
    gated_model.gate.set()
    app.stop()


def in_other_browser(workdir: Path, work: Callable[[Page], T]) -> T:
    """Run ``work`` on a page of a second Chromium (its own profile and storage, its own thread:
    Playwright's sync API allows one instance per thread); fails on its console errors."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            with chromium(workdir) as context:
                context.set_default_timeout(TIMEOUT_MS)
                tab = context.new_page()
                errors: list[str] = []
                tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                tab.on("pageerror", lambda e: errors.append(str(e)))
                outcome["value"] = work(tab)
                outcome["errors"] = errors
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="second-browser")
    thread.start()
    thread.join(timeout=120)
    if "error" in outcome:
        raise outcome["error"]
    assert outcome.get("errors") == [], outcome.get("errors")
    value: T = outcome["value"]
    return value


def no_inline_script(page: Page) -> None:
    assert page.locator("script:not([src])").count() == 0


def test_the_sidebar_lists_server_sessions_another_browser_can_open(
    page: Page, live: LiveApp, tmp_path: Path
) -> None:
    ids = ask(page, live)
    mine = page.locator(f"#server-sessions a[data-session-id='{ids['sessionId']}']")
    mine.wait_for()  # refreshed when the run finished
    assert "1 run" in mine.inner_text()

    def elsewhere(other: Page) -> dict[str, Any]:
        response = other.goto(live.url + "/")
        assert response is not None
        link = other.locator(f"#server-sessions a[data-session-id='{ids['sessionId']}']")
        link.wait_for()
        seeded = other.locator("#server-sessions a[data-session-id='sess-seeded']").count()
        local_before = other.locator("#session-list li").count()
        time_label = link.locator("time").inner_text()
        link.click()
        turn = other.locator(f".turn[data-run-id='{ids['runId']}']")
        turn.wait_for()
        return {
            "local_before": local_before,
            "local_after": other.locator("#session-list li").count(),
            "seeded": seeded,
            "time": time_label,
            "url": other.url,
            "csp": response.headers["content-security-policy"],
        }

    seen = in_other_browser(tmp_path / "second-profile", elsewhere)
    assert seen["local_before"] == 0 and seen["local_after"] == 1
    assert seen["url"] == live.url + "/"
    assert UTC_LABEL.match(seen["time"]) and "default-src 'self'" in seen["csp"]


def rows(page: Page) -> list[str]:
    return page.locator("#runs-body tr").evaluate_all("rs => rs.map(r => r.dataset.runId)")


def wait_rows(page: Page) -> None:
    page.locator("#runs-pager[data-state=ready]").wait_for(state="attached")


def test_the_runs_page_pages_through_every_run_and_filters(page: Page, live: LiveApp) -> None:
    response = page.goto(live.url + "/runs")
    assert (
        response is not None and "default-src 'self'" in response.headers["content-security-policy"]
    )
    no_inline_script(page)
    wait_rows(page)
    every = [r["runId"] for r in walk_api(page, live, "/api/runs")]
    first = rows(page)
    assert first == every[:25]
    page.click("#runs-next")
    wait_rows(page)  # the label changes with the page, once it has loaded
    assert page.locator("#runs-pager [data-page=label]").inner_text() == "Page 2"
    assert rows(page) == every[25:50]
    page.click("[data-page='previous']")
    wait_rows(page)
    assert rows(page) == first
    label = page.locator("#runs-body tr").first.locator("time").inner_text()
    assert UTC_LABEL.match(label)

    page.select_option("select[name=status]", "FAILED")
    page.fill("input[name=text]", "seeded QUESTION")
    page.click("#runs-apply")
    page.wait_for_url(re.compile(r"status=FAILED"))
    wait_rows(page)
    failed = [f"seed-{n:02d}" for n in sorted(range(0, SEEDED, 3), reverse=True)]
    assert sorted(rows(page), reverse=True) == failed and len(rows(page)) == 10
    assert set(page.locator("#runs-body .badge.state").all_inner_texts()) == {"failed"}
    page.reload()  # the filters are in the address: a shareable link
    wait_rows(page)
    assert page.input_value("select[name=status]") == "FAILED" and len(rows(page)) == 10
    page.fill("input[name=since]", "2026-11-29T08:10:00")
    page.click("#runs-apply")
    page.wait_for_url(re.compile(r"since="))
    wait_rows(page)
    assert sorted(rows(page)) == ["seed-21", "seed-24", "seed-27"]


def walk_api(page: Page, live: LiveApp, path: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        data = read_json(page, f"{live.url}{path}?limit=200{cursor}")
        found += data["runs"]
        if not data["nextCursor"]:
            return found
        cursor = "&cursor=" + data["nextCursor"]


def test_the_case_library_shows_useful_answers(page: Page, live: LiveApp) -> None:
    ids = ask(page, live)
    body = {**ids, "feedback": "useful"}
    assert page.request.post(live.url + "/api/feedback", data=body).ok
    response = page.goto(live.url + "/cases")
    assert response is not None
    no_inline_script(page)
    case = page.locator(f".case[data-run-id='{ids['runId']}']")
    case.wait_for()
    question = case.locator("a.case-question")
    assert question.get_attribute("href") == f"/trace/{ids['sessionId']}/{ids['runId']}"
    assert UTC_LABEL.match(case.locator(".case-head time").inner_text())
    page.fill("input[name=text]", "no case reads like this")
    page.click("#case-filters button[type=submit]")
    page.locator("#cases-pager[data-state=ready]").wait_for(state="attached")
    assert page.locator("#case-list li").count() == 0
    assert "No case yet" in page.locator("#cases-status").inner_text()


def wait_finished(page: Page, live: LiveApp, run_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        runs = read_json(page, f"{live.url}/api/runs?limit=200")["runs"]
        if any(r["runId"] == run_id and r["status"] in ("SUCCESS", "FAILED") for r in runs):
            return
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish")


def test_the_inbox_shows_a_webhook_alert_its_run_and_investigates_it_now(
    page: Page, live: LiveApp, console: Console
) -> None:
    page.goto(live.url + "/static/favicon.svg")
    posted = page.request.post(
        live.url + "/api/alerts/alertmanager",
        data=json.dumps(real_payload()),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    assert posted.status == 202, posted.text()
    first_run = posted.json()["data"]["runId"]
    wait_finished(page, live, first_run)
    response = page.goto(live.url + "/alerts")
    assert (
        response is not None and "default-src 'self'" in response.headers["content-security-policy"]
    )
    no_inline_script(page)
    page.locator("#alert-groups[data-state=ready]").wait_for(state="attached")
    group = page.locator(".alert-group").first
    assert group.get_attribute("data-group-key") == real_payload()["groupKey"]
    alert = group.locator(".alert-item[data-fingerprint='6b157f79b26a43ad']")
    assert alert.get_attribute("data-status") == "firing"
    assert "AlwaysFiring" in alert.locator(".alert-name").inner_text()
    assert UTC_LABEL.match(alert.locator(".hint time").first.inner_text())
    linked = alert.locator(f".alert-run[data-run-id='{first_run}']")
    assert linked.locator(".badge.state").inner_text() == "success"
    assert linked.locator("a").get_attribute("href", timeout=1000) is not None

    alert.locator("button.investigate").click()
    started = page.locator("#alerts-status a.started-run")
    started.wait_for()
    new_run = started.inner_text()
    assert new_run != first_run
    refreshed = page.locator(".alert-item[data-fingerprint='6b157f79b26a43ad'] .alert-run")
    assert refreshed.evaluate_all("rs => rs.map(r => r.dataset.runId)") == [new_run, first_run]
    runs = read_json(page, f"{live.url}/api/alerts")["alerts"][0]["runs"]
    assert [r["runId"] for r in runs] == [new_run, first_run]
    page.select_option("#alert-state", "resolved")
    page.locator("#alert-groups[data-state=ready]").wait_for(state="attached")
    assert page.locator(".alert-group").count() == 0
    assert page.locator("#alerts-status").inner_text() == "No resolved alert."
    assert console.unexpected() == []
