"""The chat page in Chromium: streamed progress and answers, sessions, feedback, AIOps, errors."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .conftest import QUESTION, Console, GatedModel, ask, read_json
from .harness import LiveApp

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: The analyser follows the dependency within the executor's own rounds: no evidence retry.
ROUTE = ["planner", "executor", "gatekeeper", "verified_input", "verifier", "composer"]


def progress_nodes(page: Page) -> list[str]:
    return (
        page.locator(".turn")
        .last.locator(".progress-item")
        .evaluate_all("items => items.map(item => item.dataset.node)")
    )


def test_progress_appears_live_and_the_answer_renders_as_markdown(
    page: Page, live: LiveApp, gated_model: GatedModel
) -> None:
    page.goto(live.url + "/")
    gated_model.gate.clear()  # the composer waits: the run is caught half-way
    try:
        page.fill("#question", QUESTION)
        page.click("#send")
        turn = page.locator(".turn").last
        turn.locator('.progress-item[data-node="verifier"]').first.wait_for()
        assert turn.locator(".badge.state").inner_text() == "running"
        assert turn.locator(".answer").inner_text() == ""
        assert progress_nodes(page) == ROUTE[:-1]
    finally:
        gated_model.gate.set()
    turn.locator(".badge.state.ok").wait_for()
    assert progress_nodes(page) == ROUTE
    turn.locator(".turn-meta", has_text="tokens").wait_for()  # the footer: tokens and cost
    assert "$" in turn.locator(".turn-meta").inner_text()
    first = turn.locator(".progress-item").first
    assert first.get_attribute("data-outcome") == "completed"
    assert first.locator(".attempt").inner_text() == "attempt 1"
    headline = turn.locator(".answer > p:first-child > strong").inner_text()
    assert headline.startswith("Likely cause in mysql-primary")
    conclusions = turn.locator(".answer ol").first.inner_text()
    assert "Likely cause in mysql-primary" in conclusions and "pool exhaustion" in conclusions
    assert turn.locator(".answer img").count() == 0
    session_id = turn.get_attribute("data-session-id")
    run_id = turn.get_attribute("data-run-id")
    citation = turn.locator('.answer a.cite-chip[data-evidence="E1"]').first
    assert citation.get_attribute("href") == f"/trace/{session_id}/{run_id}#evidence-E1"
    assert turn.locator(".answer script, .answer [onerror]").count() == 0
    route = read_json(page, f"{live.url}/api/diagnosis/{session_id}/graph?runId={run_id}")
    assert route["route"] == ROUTE


def test_the_session_is_remembered_titled_and_restored(page: Page, live: LiveApp) -> None:
    ids = ask(page, live)
    page.reload()
    item = page.locator(f'.session[data-session-id="{ids["sessionId"]}"]')
    item.wait_for()
    assert item.get_attribute("aria-current") == "true"
    assert item.locator(".session-title").inner_text() == QUESTION
    assert page.locator("#conversation-title").inner_text() == QUESTION
    restored = page.locator(f'.turn[data-run-id="{ids["runId"]}"]')
    restored.locator(".answer h3").first.wait_for()
    page.click("#clear-history")
    page.locator("#status", has_text="History cleared").wait_for()
    page.click("#new-session")
    assert page.locator("#conversation-title").inner_text() == "New session"
    assert page.locator(".turn").count() == 0
    second = ask(page, live, "Is user-service healthy? Anything wrong since 10:00?")
    assert second["sessionId"] != ids["sessionId"]
    assert page.locator(".session").count() == 2


def test_useful_feedback_is_confirmed_and_joins_the_case_library(
    page: Page, live: LiveApp, console: Console
) -> None:
    ids = ask(page, live)
    turn = page.locator(".turn").last
    turn.locator('button[data-feedback="useful"]').click()
    status = turn.locator(".feedback-status")
    status.filter(has_text="added to the case library").wait_for()
    assert turn.locator('button[data-feedback="useful"]').get_attribute("aria-pressed") == "true"
    cases = read_json(page, live.url + "/api/cases")["cases"]
    assert ids["runId"] in [case["runId"] for case in cases]
    turn.locator('button[data-feedback="useful"]').click()  # idempotent: 200, nothing changes
    status.filter(has_text="already recorded").wait_for()
    assert "error" not in (status.get_attribute("class") or "")
    assert [c["runId"] for c in read_json(page, live.url + "/api/cases")["cases"]].count(
        ids["runId"]
    ) == 1


def test_the_open_trace_link_leads_to_the_run(page: Page, live: LiveApp) -> None:
    ids = ask(page, live)
    page.locator(".turn").last.get_by_role("link", name="Open trace").click()
    page.wait_for_url(f"**/trace/{ids['sessionId']}/{ids['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator("#summary .question-text").inner_text() == QUESTION


def test_the_aiops_button_streams_a_report(page: Page, live: LiveApp) -> None:
    page.goto(live.url + "/")
    page.click("#aiops")
    turn = page.locator(".turn.aiops").last
    turn.locator(".badge.state:not(.running), .turn-error:not([hidden])").first.wait_for()
    error = turn.locator(".turn-error")
    assert error.is_hidden(), f"the AIOps run failed: {error.inner_text()}"
    assert turn.locator(".badge.flow").inner_text() == "aiops"
    assert turn.locator(".badge.state").inner_text().startswith("success")
    assert turn.locator(".progress-item").count() > 0
    assert turn.locator(".progress-item .alert").count() > 0
    assert turn.locator(".answer h1, .answer h2, .answer h3").count() > 0
    citation = turn.locator(".answer a.cite-chip").first
    evidence_id = citation.get_attribute("data-evidence")
    session_id, run_id = turn.get_attribute("data-session-id"), turn.get_attribute("data-run-id")
    assert citation.get_attribute("href") == f"/trace/{session_id}/{run_id}#evidence-{evidence_id}"
    trace = read_json(page, f"{live.url}/api/diagnosis/{session_id}/trace?runId={run_id}")
    refs = {
        ref["evidence_id"]: (ref, invocation)
        for invocation in trace["toolInvocations"]
        for ref in invocation["evidenceRefs"] or []
    }
    ref, invocation = refs[evidence_id]
    citation.click()  # the trace viewer opens at the cited excerpt
    page.locator("#trace[data-loaded]").wait_for()
    route = page.locator("#route")
    assert "Route through the AIOps supervisor graph" in route.inner_text()
    assert page.locator("#route-diagram").count() == 1 and page.locator("#route-none").count() == 0
    assert page.locator(".alert-routes li").count() == 5
    assert "planner" in page.locator(".alert-routes li").first.inner_text()
    orchestration = page.locator("#orchestration").inner_text()
    assert "aiops-stategraph-v1" in orchestration and "composer_completed" in orchestration
    assert page.locator(".invocation").count() == len(trace["toolInvocations"])
    mark = page.locator(f"#invocation-{invocation['invocationId']} mark.excerpt")
    assert mark.inner_text() == ref["evidence_excerpt"]


def test_failures_are_shown_as_readable_messages(
    page: Page, live: LiveApp, console: Console
) -> None:
    console.allow("Failed to load resource")
    page.goto(live.url + "/")
    page.route("**/api/chat_stream", lambda route: route.abort("connectionrefused"))
    page.fill("#question", QUESTION)
    page.click("#send")
    error = page.locator(".turn").last.locator(".turn-error")
    error.filter(has_text="Could not reach the server").wait_for()
    page.unroute("**/api/chat_stream")
    page.route(
        "**/api/chat_stream",
        lambda route: route.fulfill(
            status=503,
            content_type="application/json",
            body='{"code": 503, "message": "the database is unavailable right now", "data": null}',
        ),
    )
    page.fill("#question", QUESTION)
    page.click("#send")
    error = page.locator(".turn").last.locator(".turn-error")
    error.filter(has_text="the database is unavailable right now").wait_for()
    assert page.locator("#status.error").inner_text() != ""
    assert re.search(r"503", error.inner_text())


def test_html_in_an_answer_is_shown_as_text_never_run(page: Page, live: LiveApp) -> None:
    payload = '<img src="/x.png" onerror="window.__injected = 1">'
    ask(page, live, f"Why is payment-service slow since 10:00? {payload}")
    answer = page.locator(".turn").last.locator(".answer")
    assert payload in answer.inner_text()  # the answer quotes the question: shown as text
    assert answer.locator("img, script, [onerror]").count() == 0
    assert page.evaluate("window.__injected") is None
