"""The trace viewer in Chromium: route diagram, steps, invocations, claims linked to excerpts."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import Console, ask, asked_run
from .harness import LiveApp

if TYPE_CHECKING:
    from playwright.sync_api import Page

HIGHLIGHT = "rgb(192, 57, 43)"  # the stroke the graph API gives the route's edges


@pytest.fixture(scope="module")
def complex_run(live: LiveApp, browser: Any) -> dict[str, Any]:
    """One finished complex run and its trace, asked once for the module through the UI."""
    return asked_run(live, browser, "trace", "graph")


def open_trace(page: Page, live: LiveApp, run: dict[str, Any], anchor: str = "") -> None:
    page.goto(f"{live.url}/trace/{run['sessionId']}/{run['runId']}{anchor}")
    page.locator("#trace[data-loaded]").wait_for()


def claims_of(trace: dict[str, Any]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """claim id -> [(evidence ref, its invocation)] from the trace's invocations."""
    claims: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for invocation in trace["toolInvocations"]:
        for ref in invocation["evidenceRefs"] or []:
            claims[ref["claim_id"]].append((ref, invocation))
    return claims


def test_the_route_is_drawn_with_its_edges_highlighted(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    open_trace(page, live, complex_run)
    svg = page.locator("#route-diagram[data-rendered] svg")
    svg.wait_for()
    taken = re.search(r"linkStyle ([\d,]+) ", complex_run["graph"]["mermaid"])
    assert taken is not None
    highlighted = svg.locator("path").evaluate_all(
        f"paths => paths.filter(p => getComputedStyle(p).stroke === '{HIGHLIGHT}').length"
    )
    assert highlighted == len(taken.group(1).split(","))
    assert svg.locator("g.node.taken").count() >= len(set(complex_run["graph"]["route"]))
    route = page.locator("#route .route-list li").all_inner_texts()
    assert route == complex_run["graph"]["route"]


def test_the_summary_steps_and_invocations_are_listed(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    open_trace(page, live, complex_run)
    trace = complex_run["trace"]
    assert page.locator("#summary .badge.state").inner_text() == "success"
    assert page.locator("#summary .answer h3").count() > 0
    steps = page.locator("#steps details.step")
    assert steps.count() == len(trace["steps"])
    agents = steps.locator(".agent").all_inner_texts()
    assert agents == [s["agentName"] for s in trace["steps"]]
    first = steps.first
    first.locator("summary.step-row").click()
    model_input = first.locator("details.lazy-json", has_text="Model input")
    model_input.locator("summary").click()
    assert '"messages"' in model_input.locator("pre").inner_text()
    invocations = page.locator("#invocations details.invocation")
    assert invocations.count() == len(trace["toolInvocations"])
    tools = invocations.locator(".tool").all_inner_texts()
    assert tools == [i["toolName"] for i in trace["toolInvocations"]]
    transitions = page.locator("#orchestration table.grid tbody tr")
    assert transitions.count() == len(trace["run"]["orchestrationTrace"]["transitions"])
    assert page.locator("#evaluation", has_text="all_cited_evidence_verified").count() == 1


def test_a_step_fetches_its_full_model_input_when_it_is_opened(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    """The viewer loads ``inputs=none``; opening a step's input fetches that step, once."""
    loads: list[str] = []
    page.on("request", lambda request: loads.append(request.url))
    open_trace(page, live, complex_run)
    assert any("/trace?" in url and "inputs=none" in url for url in loads)
    steps = complex_run["trace"]["steps"]
    # the last step of the executor's ReAct loop continues its predecessors (the demo run has
    # several rounds): what is shown is its whole conversation, rebuilt by the server
    last = max(i for i, s in enumerate(steps) if s["agentName"] == "executor")
    assert last > 0 and steps[last - 1]["agentName"] == "executor"
    fetched = f"/runs/{complex_run['runId']}/steps/{steps[last]['stepIndex']}"
    assert not any("/steps/" in url for url in loads)
    step = page.locator("#steps details.step").nth(last)
    step.locator("summary.step-row").click()
    model_input = step.locator("details.lazy-json", has_text="Model input")
    model_input.locator("summary").click()
    assert json.loads(model_input.locator("pre").inner_text()) == steps[last]["modelInput"]
    model_input.locator("summary").click()  # closed and opened again: not fetched again
    model_input.locator("summary").click()
    assert model_input.locator("pre").count() == 1
    assert [url for url in loads if "/steps/" in url] == [
        live.url + "/api/diagnosis/" + complex_run["sessionId"] + fetched
    ]


def test_a_step_input_that_failed_to_load_says_so_and_loads_when_reopened(
    page: Page, live: LiveApp, complex_run: dict[str, Any], console: Console
) -> None:
    failures = {"left": 1}

    def once_unavailable(route: Any) -> None:
        if failures["left"]:
            failures["left"] -= 1
            route.fulfill(
                status=503,
                content_type="application/json",
                body=json.dumps({"code": 503, "message": "database unavailable", "data": None}),
            )
        else:
            route.continue_()

    console.allow("503")
    page.route("**/runs/*/steps/*", once_unavailable)
    open_trace(page, live, complex_run)
    step = page.locator("#steps details.step").first
    step.locator("summary.step-row").click()
    model_input = step.locator("details.lazy-json", has_text="Model input")
    model_input.locator("summary").click()
    error = model_input.locator(".notice.error")
    assert "database unavailable" in error.inner_text()
    model_input.locator("summary").click()
    model_input.locator("summary").click()
    shown = json.loads(model_input.locator("pre").inner_text())
    assert shown == complex_run["trace"]["steps"][0]["modelInput"]
    assert error.count() == 0


def test_each_claim_opens_its_invocation_and_highlights_the_exact_excerpt(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    open_trace(page, live, complex_run)
    claims = claims_of(complex_run["trace"])
    assert len(claims) >= 10
    for claim_id, refs in claims.items():
        page.locator(f"#claim-{claim_id} .claim-statement").click()
        assert page.locator("mark.excerpt").count() == len(refs), claim_id
        for ref, invocation in refs:
            box = page.locator(f"#invocation-{invocation['invocationId']}")
            assert box.get_attribute("open") is not None
            assert box.locator("details.raw").get_attribute("open") is not None
            mark = box.locator(f'mark.excerpt[data-evidence="{ref["evidence_id"]}"]')
            assert mark.inner_text() == ref["evidence_excerpt"], (claim_id, ref["raw_path"])
            value = mark.locator("xpath=ancestor::*[@data-path][1]")
            assert value.get_attribute("data-path") == ref["raw_path"]
            assert box.locator(".highlight-caption", has_text=ref["raw_path"]).count() == 1


def test_a_citation_in_the_answer_highlights_its_excerpt(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    refs = {
        ref["evidence_id"]: (ref, inv)
        for refs in claims_of(complex_run["trace"]).values()
        for ref, inv in refs
    }
    # a number of a tool output (a log pattern's count, a median, a metric point): its excerpt is
    # the compact JSON spelling of that leaf
    point = next(
        e
        for e, (ref, _) in refs.items()
        if ".points[" in ref["raw_path"] or ref["raw_path"].endswith((".median", ".count_after"))
    )
    open_trace(page, live, complex_run)
    # At most three chips follow a sentence; every cited item keeps its chip in the evidence list.
    page.locator("#summary .answer details.evidence-list > summary").click()
    page.locator(f'#summary .answer a.cite-chip[data-evidence="{point}"]').first.click()
    ref, invocation = refs[point]
    mark = page.locator(f"#invocation-{invocation['invocationId']} mark.excerpt")
    assert mark.inner_text() == ref["evidence_excerpt"]
    assert page.url.endswith(f"#evidence-{point}")
    assert mark.is_visible()
    # the same anchor, shared as a link, highlights on load
    open_trace(page, live, complex_run, f"#evidence-{point}")
    assert page.locator("mark.excerpt").inner_text() == ref["evidence_excerpt"]


def test_a_simple_run_says_it_has_no_route(page: Page, live: LiveApp) -> None:
    ids = ask(page, live, "hello there", mode="simple")
    open_trace(page, live, ids)
    note = page.locator("#route-none")
    assert "did not go through the diagnosis graph" in note.inner_text()
    assert page.locator("#route-diagram").count() == 0
    assert page.locator("#steps details.step").count() >= 1
    assert "Hello" in page.locator("#summary .answer").inner_text()


def test_an_unknown_run_shows_a_not_found_page(page: Page, live: LiveApp, console: Console) -> None:
    console.allow("404")
    page.goto(f"{live.url}/trace/sess-unknown/run-unknown")
    alert = page.locator("#not-found")
    alert.wait_for()
    assert "Run not found" in alert.inner_text()
    assert page.locator("#trace-body").is_hidden()
    response = page.goto(f"{live.url}/trace/sess%20bad/run-1")
    assert response is not None and response.status == 404
    assert "Run not found" in page.locator("#not-found").inner_text()


def test_tokens_and_cost_show_in_the_trace_the_runs_list_and_under_the_answer(
    page: Page, live: LiveApp, complex_run: dict[str, Any]
) -> None:
    steps = complex_run["trace"]["steps"]
    prompt = sum(s["promptTokens"] for s in steps)
    completion = sum(s["completionTokens"] for s in steps)
    usage = f"{prompt:,} + {completion:,} tokens"
    cost = complex_run["trace"]["run"]["costUsd"]
    assert cost == pytest.approx((prompt * 2 + completion * 8) / 1e6, abs=1e-6)
    open_trace(page, live, complex_run)
    facts = page.locator("#summary dl.facts").inner_text()
    assert usage in facts and "$" in facts
    page.goto(f"{live.url}/runs")
    row = page.locator(f'#runs-body tr[data-run-id="{complex_run["runId"]}"]')
    assert usage in row.inner_text() and "$" in row.inner_text()
    page.goto(f"{live.url}/?session={complex_run['sessionId']}")
    meta = page.locator(".turn .turn-meta", has_text="tokens").first
    meta.wait_for()
    assert usage in meta.inner_text() and "$" in meta.inner_text()
