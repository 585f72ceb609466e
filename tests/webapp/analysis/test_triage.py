"""``triage`` over the demo dataset: every service checked, suspects ranked and linked, the
output recorded and citable like any tool's."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from webapp.analysis.names import described_services
from webapp.analysis.series import parse_stamp
from webapp.analysis.triage import Suspect, _acted, _rank, _turn_around
from webapp.demo.backend import DemoTelemetryBackend
from webapp.persistence.context import run_scope
from webapp.persistence.memory_audit import MemoryAudit
from webapp.telemetry import TelemetryError
from webapp.telemetry.logfiles import LogFileBackend
from webapp.tools.analysis_tools import analysis_tools
from webapp.tools.registry import ToolBox


@pytest.fixture(scope="module")
def backend() -> DemoTelemetryBackend:
    return DemoTelemetryBackend()


def run(backend: Any, **arguments: Any) -> dict[str, Any]:
    tools = analysis_tools(backend, backend.service_aliases())
    tool = {t.name: t for t in tools}["triage"]
    output: dict[str, Any] = tool.handler(arguments).raw_output
    return output


def test_every_service_is_checked_and_suspects_are_grouped_into_incidents(
    backend: DemoTelemetryBackend,
) -> None:
    output = run(backend)
    suspects = output["suspects"]
    names = [s["service"] for s in suspects]
    assert len(names) + output["quiet_services"] == len(backend.services())
    assert len(set(names)) == len(names)
    start, end = parse_stamp(output["window"]["start"]), parse_stamp(output["window"]["end"])
    assert all(start <= parse_stamp(s["onset"]) <= end for s in suspects)
    # Incidents are numbered in order, each led by the suspect whose trouble began first.
    numbers = [s["incident"] for s in suspects]
    assert numbers == sorted(numbers) and numbers[0] == 1
    for number in set(numbers):
        members = [s for s in suspects if s["incident"] == number]
        assert members[0]["onset"] == min(m["onset"] for m in members)
    # A link names another suspect, with the line (or the timing) that ties them.
    links = [(s, link) for s in suspects for link in s["links"]]
    assert links and all(link["to"] in names and link["evidence"] for _, link in links)
    assert any(link["how"] == "log" and link["to"] in link["evidence"] for _, link in links)
    # A suspect tied to others belongs to the incident of one of them, or leads its own; a
    # proxy in front of two failing services does not merge their incidents.
    incident = {s["service"]: s["incident"] for s in suspects}
    leaders = {
        s["service"]
        for n, s in enumerate(suspects)
        if n == 0 or s["incident"] != suspects[n - 1]["incident"]
    }
    for suspect in suspects:
        tied = {incident[link["to"]] for link in suspect["links"]}
        assert not tied or suspect["incident"] in tied or suspect["service"] in leaders
    # Several separate problems are several incidents.
    assert len(set(numbers)) >= 2


def test_a_stated_start_reaches_back_for_baselines_and_keeps_later_onsets(
    backend: DemoTelemetryBackend,
) -> None:
    output = run(backend, start="2026-11-30T10:30:00Z", end="2026-11-30T12:00:00Z")
    assert output["window"]["analysed_start"] == "2026-11-30T09:30:00Z"
    assert all(s["onset"] >= "2026-11-30T10:30:00Z" for s in output["suspects"])
    assert output["suspects"], "the demo has incidents after 10:30"


def test_the_hint_marks_the_service_a_business_description_names(
    backend: DemoTelemetryBackend,
) -> None:
    aliases = backend.service_aliases()
    service = next(s for s, names in aliases.items() if any(not n.isascii() for n in names))
    chinese = next(n for n in aliases[service] if not n.isascii())
    output = run(backend, hint=f"{chinese}从10点开始出问题了")
    assert output["described"] == [service]
    marked = [s["service"] for s in output["suspects"] if s["described"]]
    assert marked in ([], [service])


def test_the_output_is_recorded_and_each_link_is_a_citable_leaf(
    backend: DemoTelemetryBackend,
) -> None:
    audit = MemoryAudit()
    box = ToolBox(analysis_tools(backend), audit, "executor")
    with run_scope("s1", "run-1"):
        result = box.call("triage", json.dumps({"hint": "what broke?"}), None)
    body = json.loads(result.content)
    assert result.status == "SUCCESS"
    recorded = audit.invocations_for_run("run-1")[-1]
    assert recorded.tool_name == "triage" and recorded.raw_output == body["result"]
    suspects = body["result"]["suspects"]
    index, suspect = next((i, s) for i, s in enumerate(suspects) if s["links"])
    assert (
        suspect["links"][0]["evidence"]
        == recorded.raw_output["suspects"][index]["links"][0]["evidence"]
    )


def test_bad_arguments_are_a_clear_error_and_a_failing_backend_is_not_a_crash(
    backend: DemoTelemetryBackend,
) -> None:
    box = ToolBox(analysis_tools(backend), MemoryAudit(), "executor")
    with run_scope("s1", "run-2"):
        bad = box.call("triage", json.dumps({"start": "yesterday"}), None)
        backwards = box.call(
            "triage",
            json.dumps({"start": "2026-11-30T11:00:00Z", "end": "2026-11-30T10:00:00Z"}),
            None,
        )
    assert bad.status != "SUCCESS" and "ISO-8601" in bad.content
    assert backwards.status != "SUCCESS" and "before end" in backwards.content

    class NoLogs(DemoTelemetryBackend):
        immutable = False

        def query_metrics(self, **kwargs: Any) -> dict[str, Any]:
            if kwargs.get("service") == self.services()[0]:
                raise TelemetryError("metrics store unreachable")
            return super().query_metrics(**kwargs)

    output = run(NoLogs())
    assert output["unreadable_services"] == [NoLogs().services()[0]]


def test_descriptions_match_business_words_in_english_and_chinese() -> None:
    descriptions = {
        "progress-svc": ["Saves continue-watching positions from every player / 保存继续观看进度"],
        "history-api": ["Watch history and the recently-watched row / 观看历史与最近观看"],
        "rider-auth": ["Courier app sign-in / 骑手 App 登录"],
        "dispatch-api": ["Assigns ready orders to nearby couriers / 把出餐订单派给附近骑手"],
    }
    assert described_services("positions stopped saving since 9:25", descriptions)[0][0] == (
        "progress-svc"
    )
    assert described_services("北京时间17点开始继续观看的进度保存不了", descriptions)[0][0] == (
        "progress-svc"
    )
    chinese = described_services("骑手登录失败,从10点50分开始的", descriptions)
    assert chinese[0][0] == "rider-auth" and chinese[0][1] > chinese[1][1]
    # A word every description shares says nothing; a question with no such word matches none.
    assert described_services("what broke around 10:15?", descriptions) == []


def test_a_team_label_of_its_metrics_names_a_service() -> None:
    class Labelled(DemoTelemetryBackend):
        def query_metrics(self, **kwargs: Any) -> dict[str, Any]:
            found = super().query_metrics(**kwargs)
            if kwargs.get("service") == "shipping-service":
                for series in found["series"]:
                    series["labels"] = {**series.get("labels", {}), "team": "parcelforce"}
            return found

    output = run(Labelled(), hint="the parcelforce services are failing since 10:20")
    assert output["described"] == ["shipping-service"]


def test_a_job_s_statement_in_the_other_s_first_minute_says_which_acted(tmp_path: Path) -> None:
    """Onsets are found per minute: a job that began a minute "after" the database whose locks
    rose, but logged ``LOCK TABLE`` within the database's first minute, acted first."""
    (tmp_path / "nightly-job").mkdir()
    (tmp_path / "nightly-job" / "journal.log").write_text(
        "2030-01-01T07:55:40+0000 host-1 nightly-job[17]: BEGIN; LOCK TABLE ledger IN SHARE MODE\n"
        "2030-01-01T07:55:43+0000 host-1 nightly-job[17]: run 5 started, batch size 5000\n",
        encoding="utf-8",
    )
    backend = LogFileBackend(tmp_path)
    at = datetime(2030, 1, 1, 7, 55, tzinfo=timezone.utc)
    job = Suspect("nightly-job", at.replace(minute=56), [], [])
    database = Suspect("db", at, [{"kind": "metric", "signal": "pg_locks_count"}], [])
    assert "LOCK TABLE" in _acted(backend, job, database)
    # a signal the line does not speak of (a count of requests) ties nothing
    busy = Suspect("db", at, [{"kind": "metric", "signal": "http_requests_total"}], [])
    assert _acted(backend, job, busy) == ""


def test_a_suspect_that_began_first_and_names_a_later_one_logs_its_client() -> None:
    """A database whose lines name the application connected to it (``app=orders``), and whose
    trouble began minutes before the application's, leads the incident."""
    at = datetime(2030, 1, 1, 9, 31, tzinfo=timezone.utc)
    line = "user=orders_rw,app=orders ERROR: canceling statement due to conflict with recovery"
    replica = Suspect("db-replica", at, [], [], [{"to": "orders", "how": "log", "evidence": line}])
    orders = Suspect("orders", at.replace(minute=33), [], [])
    _turn_around([replica, orders])
    assert replica.links == [] and orders.links == [
        {"to": "db-replica", "how": "log", "evidence": line}
    ]
    assert [s.service for s in _rank([replica, orders])] == ["db-replica", "orders"]
    # a proxy in front of several names them all: it stands in front, its links stay
    proxy = Suspect(
        "edge",
        at,
        [],
        [],
        [{"to": "orders", "how": "log", "evidence": "GET /o"}, {"to": "menu", "how": "log"}],
    )
    menu = Suspect("menu", at.replace(minute=30), [], [])
    orders = Suspect("orders", at.replace(minute=38), [], [])
    _turn_around([proxy, menu, orders])
    assert len(proxy.links) == 2 and orders.links == []
    # in the same minute nothing says which came first: the line's direction stands
    caller = Suspect("orders", at, [], [], [{"to": "db", "how": "log", "evidence": "to db: EOF"}])
    db = Suspect("db", at.replace(second=40), [], [])
    _turn_around([caller, db])
    assert caller.links[0]["to"] == "db" and db.links == []


def test_a_job_that_starts_in_the_other_s_first_minute_acted_first(tmp_path: Path) -> None:
    (tmp_path / "export-job").mkdir()
    (tmp_path / "export-job" / "journal.log").write_text(
        "2030-01-01T07:05:00+0000 host-2 systemd[1]: Starting export-job.service - Export...\n"
        "2030-01-01T07:41:40+0000 host-2 systemd[1]: Starting export-job.service - Export...\n"
        "2030-01-01T07:41:41+0000 host-2 export-job[9]: listing 9737000 objects\n",
        encoding="utf-8",
    )
    backend = LogFileBackend(tmp_path)
    at = datetime(2030, 1, 1, 7, 41, tzinfo=timezone.utc)
    job = Suspect("export-job", at.replace(minute=42), [], [])
    store = Suspect("store", at, [{"kind": "metric", "signal": "s3_requests_waiting"}], [])
    assert _acted(backend, job, store).endswith("Starting export-job.service - Export...")
    # a start minutes before the other's first minute says nothing about it
    later = Suspect("store", at.replace(minute=45), store.findings, [])
    assert _acted(backend, job, later) == ""
