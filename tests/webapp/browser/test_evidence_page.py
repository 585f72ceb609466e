"""Evidence you can look at, in Chromium: charts of the cited series with their windows, the
log-pattern table, citation chips (hover, click), UTC times, Chinese labels, the CSP."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from ..evidence_seed import seed_analysis_run
from .conftest import asked_run
from .harness import LiveApp

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

ZH_QUESTION = "为什么 payment-service 从10点开始变慢？"
PIXEL = 0.06  # the chart rounds coordinates to 0.01 of its viewBox


@pytest.fixture(scope="module")
def chat_run(live: LiveApp, browser: Any) -> dict[str, Any]:
    """One finished complex run asked through the UI, with its trace and evidence."""
    return asked_run(live, browser, "trace", "evidence")


@pytest.fixture(scope="module")
def analysis_run(live: LiveApp) -> dict[str, Any]:
    """A finished run (Chinese question) citing detect_anomalies, a series and log_patterns."""
    return seed_analysis_run(live.services, "payment-service", ZH_QUESTION)


@pytest.fixture(scope="module")
def series_run(
    live: LiveApp, analysis_run: dict[str, Any], chat_run: dict[str, Any]
) -> dict[str, Any]:
    """The seeded analysis run (it cites a recorded series), with its trace and evidence.

    After ``chat_run``: once a page has opened the seeded session, the browser's current
    session is that one, and a question asked through the UI would join it.
    """
    base = f"{live.url}/api/diagnosis/{analysis_run['sessionId']}"
    query = f"?runId={analysis_run['runId']}"
    found = {n: httpx.get(f"{base}/{n}{query}").json()["data"] for n in ("trace", "evidence")}
    return {**analysis_run, **found}


def open_session(page: Page, live: LiveApp, session_id: str, title: str) -> Locator:
    """The chat page with ``session_id`` as the current session; its last turn, evidence drawn."""
    page.goto(live.url + "/static/favicon.svg")
    sessions = json.dumps([{"id": session_id, "title": title}])
    page.evaluate(
        "([s, id]) => { localStorage.setItem('diagnosis.sessions', s);"
        " localStorage.setItem('diagnosis.currentSession', id); }",
        [sessions, session_id],
    )
    page.goto(f"{live.url}/?session={session_id}")
    turn = page.locator(".turn[data-evidence=ready]").last
    turn.wait_for()
    return turn


def vertices(d: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+) (-?[\d.]+)", d)]


def stamp(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def assert_drawn(svg: Locator, points: list[list[Any]]) -> None:
    """The path's vertices are the recorded points, through the chart's own axes."""
    x0, x1 = map(float, (svg.get_attribute("data-x-domain") or "").split(","))
    y0, y1 = map(float, (svg.get_attribute("data-y-domain") or "").split(","))
    left, right, bottom, top = map(float, (svg.get_attribute("data-plot") or "").split(","))
    path = svg.locator("path.series")
    assert path.get_attribute("data-count") == str(len(points))
    drawn = vertices(path.get_attribute("d") or "")
    assert len(drawn) == len(points)
    for (x, y), (when, value) in zip(drawn, points, strict=True):
        assert abs(x - (left + (stamp(when) - x0) / (x1 - x0) * (right - left))) < PIXEL
        assert abs(y - (bottom + (value - y0) / (y1 - y0) * (top - bottom))) < PIXEL


def recorded_points(outputs: dict[str, Any], chart: dict[str, Any]) -> list[list[Any]]:
    """The points a chart draws, as the tool output recorded them (a series or a finding)."""
    output = outputs[chart["invocationId"]]
    if chart["kind"] == "finding":
        return output["findings"][chart["seriesIndex"]]["points"]  # type: ignore[no-any-return]
    return output["series"][chart["seriesIndex"]]["points"]  # type: ignore[no-any-return]


def assert_finding_chart(svg: Locator, chart: dict[str, Any], output: dict[str, Any]) -> None:
    """A finding's chart: the curve it recorded, its windows shaded, onset and cites marked."""
    finding = output["findings"][chart["seriesIndex"]]
    assert svg.get_attribute("data-kind") == "finding"
    assert svg.get_attribute("data-metric") == finding["signal"]
    assert_drawn(svg, finding["points"])
    downsampled = svg.locator("path.series").get_attribute("data-downsampled")
    assert (downsampled == "true") == finding["downsampled"]
    assert svg.locator("line.median").count() == 0  # the curve, not the medians alone
    baseline = svg.locator("rect.band.baseline")
    assert baseline.get_attribute("data-from") == finding["baseline"]["start"]
    assert baseline.get_attribute("data-to") == finding["baseline"]["end"]
    incident = svg.locator("rect.band.incident")
    assert incident.get_attribute("data-from") == finding["onset"]
    assert incident.get_attribute("data-to") == output["window"]["end"]
    assert svg.locator("line.onset").get_attribute("data-onset") == finding["onset"]
    peak = svg.locator("circle.peak")  # on the curve: the recorded points keep the peak
    assert peak.get_attribute("data-time") == finding["incident"]["peak_at"]
    assert [finding["incident"]["peak_at"], finding["incident"]["peak"]] in finding["points"]
    cites = [c for c in chart["cited"] if c["index"] is not None]
    assert cites, "a cited finding marks its cited point"
    for cite in cites:
        dot = svg.locator(f'circle.cited[data-evidence="{cite["evidenceId"]}"]')
        point = finding["points"][cite["index"]]
        assert dot.get_attribute("data-index") == str(cite["index"])
        assert dot.get_attribute("data-time") == point[0]
        assert float(dot.get_attribute("data-value") or "nan") == point[1]


def test_each_cited_finding_draws_the_curve_it_recorded(
    page: Page, live: LiveApp, chat_run: dict[str, Any]
) -> None:
    """The analyser cites detect_anomalies findings: each chart is the finding's own curve."""
    turn = open_session(page, live, chat_run["sessionId"], "payment")
    outputs = {i["invocationId"]: i["rawOutput"] for i in chat_run["trace"]["toolInvocations"]}
    charts = chat_run["evidence"]["charts"]
    assert charts and all(c["kind"] == "finding" and c["points"] for c in charts)
    assert turn.locator("svg.evidence-chart").count() == len(charts)
    for chart in charts:
        svg = turn.locator(
            f'svg.evidence-chart[data-invocation-id="{chart["invocationId"]}"]'
            f'[data-metric="{chart["metric"]}"]'
        )
        assert_finding_chart(svg, chart, outputs[chart["invocationId"]])
    # the trace viewer draws the same curves, in its charts section and in each invocation
    page.goto(f"{live.url}/trace/{chat_run['sessionId']}/{chat_run['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator("#charts svg.evidence-chart").count() == len(charts)
    for chart in charts:
        where = f'svg.evidence-chart[data-metric="{chart["metric"]}"]'
        output = outputs[chart["invocationId"]]
        assert_finding_chart(page.locator(f"#charts {where}"), chart, output)
        inside = page.locator(f"#invocation-{chart['invocationId']} {where}")
        assert_drawn(inside, output["findings"][chart["seriesIndex"]]["points"])


def test_each_cited_series_is_drawn_with_its_windows_and_cited_points(
    page: Page, live: LiveApp, series_run: dict[str, Any]
) -> None:
    turn = open_session(page, live, series_run["sessionId"], "payment")
    outputs = {i["invocationId"]: i["rawOutput"] for i in series_run["trace"]["toolInvocations"]}
    charts = series_run["evidence"]["charts"]
    assert any(c["points"] for c in charts), "the run cites a metric series"
    assert turn.locator("svg.evidence-chart").count() == len(charts)
    series = [chart for chart in charts if chart["kind"] == "series"]
    for chart in series:
        recorded = recorded_points(outputs, chart)
        svg = turn.locator(f'svg.evidence-chart[data-invocation-id="{chart["invocationId"]}"]')
        assert svg.get_attribute("data-metric") == chart["metric"]
        assert_drawn(svg, recorded)
        windows = chart["windows"]
        baseline = svg.locator("rect.band.baseline")
        assert baseline.get_attribute("data-from") == windows["baselineStart"]
        assert baseline.get_attribute("data-to") == windows["baselineEnd"]
        incident = svg.locator("rect.band.incident")
        assert incident.get_attribute("data-from") == windows["onset"]
        assert svg.locator("line.onset").get_attribute("data-onset") == windows["onset"]
        for cite in (c for c in chart["cited"] if c["index"] is not None):  # cited points
            dot = svg.locator(f'circle.cited[data-evidence="{cite["evidenceId"]}"]')
            assert dot.get_attribute("data-time") == recorded[cite["index"]][0]
            assert float(dot.get_attribute("data-value") or "nan") == recorded[cite["index"]][1]
    # the trace viewer draws the same charts, in its charts section and in each invocation
    page.goto(f"{live.url}/trace/{series_run['sessionId']}/{series_run['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator("#charts svg.evidence-chart").count() == len(charts)
    first = series[0]
    inside = page.locator(f"#invocation-{first['invocationId']} svg.evidence-chart")
    assert_drawn(inside, recorded_points(outputs, first))


def test_citations_are_chips_with_the_excerpt_on_hover_that_open_the_trace(
    page: Page, live: LiveApp, chat_run: dict[str, Any]
) -> None:
    turn = open_session(page, live, chat_run["sessionId"], "payment")
    answer = turn.locator(".answer")
    text = answer.text_content() or ""
    # ids and paths only in the trace viewer
    assert "inv-" not in text and "$." not in text
    assert answer.locator("a.cite").count() == 0
    items = {e["evidenceId"]: e for e in chat_run["evidence"]["evidence"]}
    chip = answer.locator("ol a.cite-chip").first
    item = items[chip.inner_text()]
    chip.hover()
    card = page.locator("#cite-card")
    card.wait_for(state="visible")
    assert card.locator(".card-excerpt").inner_text() == item["excerpt"]
    assert item["tool"] in card.inner_text() and item["service"] in card.inner_text()
    page.mouse.move(0, 0)
    card.wait_for(state="hidden")
    chip.click()
    page.wait_for_url(re.compile(r"/trace/"))
    page.locator("#trace[data-loaded]").wait_for()
    assert page.url.endswith(f"#evidence-{item['evidenceId']}")
    box = page.locator(f"#invocation-{item['invocationId']}")
    assert box.get_attribute("open") is not None
    mark = box.locator(f'mark.excerpt[data-evidence="{item["evidenceId"]}"]')
    assert mark.inner_text() == item["excerpt"] and mark.is_visible()
    # in the trace, the invocation ids and paths are shown
    assert item["invocationId"] in box.locator("summary").first.inner_text()


def test_times_are_utc_with_the_zone_and_local_time_on_hover(
    page: Page, live: LiveApp, chat_run: dict[str, Any]
) -> None:
    turn = open_session(page, live, chat_run["sessionId"], "payment")
    window = turn.locator(".question-window")
    assert re.search(r"2026-11-30 10:00:00 UTC – 2026-11-30 12:00:00 UTC", window.inner_text())
    times = turn.locator("time.utc")
    assert times.count() > 5
    for when in times.all()[:20]:
        assert (when.text_content() or "").endswith("UTC")
        assert (when.get_attribute("title") or "").startswith("Local time: ")
        assert (when.get_attribute("datetime") or "").endswith("Z")
    assert turn.locator("svg.evidence-chart .zone-label").first.text_content() == "UTC"
    page.goto(f"{live.url}/trace/{chat_run['sessionId']}/{chat_run['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    started = page.locator("#summary dl.facts time").first
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", started.inner_text())
    assert page.locator("#summary .question-window time").count() == 2


def test_log_patterns_are_a_table_and_analysis_windows_are_drawn(
    page: Page, live: LiveApp, analysis_run: dict[str, Any]
) -> None:
    turn = open_session(page, live, analysis_run["sessionId"], ZH_QUESTION)
    table = turn.locator("figure.log-table table.log-patterns")
    patterns = analysis_run["outputs"]["log_patterns"]["raw"]["patterns"]
    rows = table.locator("tbody tr")
    assert rows.count() == len(patterns)
    for n, pattern in enumerate(patterns):
        cells = rows.nth(n).locator("td").all_inner_texts()
        assert cells[:3] == [
            pattern["template"],
            str(pattern["count_before"]),
            str(pattern["count_after"]),
        ]
        assert cells[3] == ("是" if pattern["new"] else "否")
        cited = "cited" in (rows.nth(n).get_attribute("class") or "")
        assert cited == (n in analysis_run["patternRows"])
    # the series' windows are the detect_anomalies finding of the same metric
    finding = next(
        f
        for f in analysis_run["outputs"]["detect_anomalies"]["raw"]["findings"]
        if f["signal"] == analysis_run["metric"]
    )
    invocation = analysis_run["outputs"]["query_metrics"]["invocationId"]
    svg = turn.locator(f'svg.evidence-chart[data-invocation-id="{invocation}"]')
    assert_drawn(svg, analysis_run["outputs"]["query_metrics"]["raw"]["series"][0]["points"])
    assert (
        svg.locator("rect.band.baseline").get_attribute("data-from") == finding["baseline"]["start"]
    )
    assert svg.locator("line.onset").get_attribute("data-onset") == finding["onset"]
    assert svg.locator("line.onset.cited-onset").count() == 1  # the finding's onset is cited
    # a cited finding whose series no query_metrics call recorded draws the curve it recorded
    anomalies = analysis_run["outputs"]["detect_anomalies"]
    outputs = {anomalies["invocationId"]: anomalies["raw"]}
    evidence = httpx.get(
        f"{live.url}/api/diagnosis/{analysis_run['sessionId']}/evidence"
        f"?runId={analysis_run['runId']}"
    ).json()["data"]
    findings = [c for c in evidence["charts"] if c["kind"] == "finding"]
    assert findings and turn.locator('svg.evidence-chart[data-kind="finding"]').count() == len(
        findings
    )
    for chart in findings:
        svg = turn.locator(
            f'svg.evidence-chart[data-kind="finding"][data-metric="{chart["metric"]}"]'
        )
        assert_finding_chart(svg, chart, outputs[chart["invocationId"]])


def test_a_finding_recorded_without_points_is_drawn_from_its_numbers(
    page: Page, live: LiveApp
) -> None:
    """A run recorded before findings carried their points still draws, with no error."""
    seeded = seed_analysis_run(live.services, "payment-service", ZH_QUESTION, legacy=True)
    turn = open_session(page, live, seeded["sessionId"], ZH_QUESTION)
    charts = turn.locator('svg.evidence-chart[data-kind="finding"]')
    assert charts.count() >= 1
    for chart in charts.all():
        assert chart.locator("path.series").count() == 0
        assert chart.locator("rect.band.baseline").count() == 1
        assert chart.locator("rect.band.incident").count() == 1
        assert chart.locator("line.onset").count() == 1
        assert chart.locator("line.median").count() == 2
        assert chart.locator("circle.peak").count() == 1
    page.goto(f"{live.url}/trace/{seeded['sessionId']}/{seeded['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator('#charts svg.evidence-chart[data-kind="finding"] line.median').count() >= 2


def test_a_chinese_question_gets_chinese_labels(
    page: Page, live: LiveApp, analysis_run: dict[str, Any]
) -> None:
    turn = open_session(page, live, analysis_run["sessionId"], ZH_QUESTION)
    assert turn.get_attribute("data-lang") == "zh"
    assert turn.locator(".trace-link").inner_text() == "打开追踪"
    assert turn.locator("[data-feedback=useful]").inner_text() == "有用"
    assert turn.locator(".question-window .label").inner_text().startswith("时间窗口")
    headers = turn.locator("table.log-patterns thead th").all_inner_texts()
    assert headers[:4] == ["模板", "之前", "之后", "新出现"]
    # the browser is English: the page's own labels stay English
    assert page.locator("#send").inner_text() == "Ask"
    page.goto(f"{live.url}/trace/{analysis_run['sessionId']}/{analysis_run['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator("#summary-title").inner_text() == "运行概要"
    assert page.locator("#charts-title").inner_text() == "引用证据的图表"


def test_the_page_follows_a_chinese_browser(
    page: Page, live: LiveApp, chat_run: dict[str, Any]
) -> None:
    page.add_init_script(
        "Object.defineProperty(navigator, 'languages', {get: () => ['zh-CN', 'zh']});"
    )
    page.goto(live.url + "/")
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.locator("#send").inner_text() == "提问"
    assert page.locator("#new-session").inner_text() == "新会话"
    assert page.locator("header nav").inner_text().startswith("对话")
    page.goto(f"{live.url}/trace/{chat_run['sessionId']}/{chat_run['runId']}")
    page.locator("#trace[data-loaded]").wait_for()
    assert page.locator("#claims-title").inner_text() == "论断及其证据"


def test_the_evidence_pages_keep_the_policy(
    page: Page, live: LiveApp, chat_run: dict[str, Any], analysis_run: dict[str, Any]
) -> None:
    violations: list[str] = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    turn = open_session(page, live, analysis_run["sessionId"], ZH_QUESTION)
    turn.locator("a.cite-chip").first.hover()
    page.locator("#cite-card").wait_for(state="visible")
    for run in (chat_run, analysis_run):
        response = page.goto(f"{live.url}/trace/{run['sessionId']}/{run['runId']}")
        assert response is not None
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.locator("#trace[data-loaded]").wait_for()
        page.locator("#charts svg.evidence-chart").first.wait_for()
    assert violations == []


def test_an_aiops_report_gets_chips_readable_evidence_and_charts(page: Page, live: LiveApp) -> None:
    page.goto(live.url + "/")
    page.click("#aiops")
    turn = page.locator(".turn.aiops[data-evidence=ready]").last
    turn.wait_for()
    answer = turn.locator(".answer")
    assert "inv-" not in (answer.text_content() or "")
    chip = answer.locator("a.cite-chip").first
    assert re.fullmatch(r"A\d+-E\d+", chip.inner_text())
    chip.hover()
    assert page.locator("#cite-card .card-excerpt").inner_text()
    assert turn.locator("svg.evidence-chart").count() > 0  # the analyser cites findings
