"""The offline model end to end on what a conversation asks: alerts, unknown names, follow-ups,
questions without a time, and answers in the question's language.

Every case runs the real diagnosis graph (``offline_diagnoser``) over a real dataset folder;
expected names are read from the backend, not written into the test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from webapp.demo.backend import DEFAULT_DATA_DIR, DemoTelemetryBackend
from webapp.diagnosis import Diagnoser, DiagnosisResult
from webapp.llm.offline import simple
from webapp.llm.offline.conversation import Catalog
from webapp.wiring import offline_diagnoser


@pytest.fixture(scope="module")
def demo() -> Diagnoser:
    return offline_diagnoser()


def firing(backend: Any) -> list[dict[str, Any]]:
    return list(backend.query_alerts(state="firing")["alerts"])


def tools_called(diagnoser: Diagnoser, result: DiagnosisResult) -> list[tuple[str, dict[str, Any]]]:
    return [
        (r.tool_name, dict(r.arguments)) for r in diagnoser.audit.invocations_for_run(result.run_id)
    ]


def test_an_alerts_question_lists_every_firing_alert_from_the_alerts_output(
    demo: Diagnoser,
) -> None:
    result = demo.diagnose("What alerts are firing right now?")
    assert result.run.status == "SUCCESS" and not result.run.degraded
    answer = result.answer or ""
    conclusions = answer.split("### Evidence")[0]
    for alert in firing(demo.backend):
        line = next(x for x in conclusions.splitlines() if f"Alert {alert['alert_name']} " in x)
        assert alert["service"] in line.replace("\\", "")
        assert alert["severity"] in line and alert["active_at"] in line
    pending = [
        a["alert_name"]
        for a in demo.backend.query_alerts(state="all")["alerts"]
        if a["state"] != "firing"
    ]
    assert pending and not any(name in conclusions for name in pending)
    # Every conclusion's evidence is a leaf of the query_alerts output.
    evidence = result.run.state["verified_evidence"]
    assert evidence and {e["tool"] for e in evidence} == {"query_alerts"}
    assert [t for t, _ in tools_called(demo, result)] == ["query_alerts"]


def test_alerts_in_chinese_are_answered_in_chinese(demo: Diagnoser) -> None:
    result = demo.diagnose("有哪些告警?")
    answer = result.answer or ""
    assert answer.startswith("**正在触发的告警：") and "### 结论" in answer
    assert "正在触发" in answer
    assert all(a["alert_name"] in answer for a in firing(demo.backend))


def test_why_is_an_alert_firing_diagnoses_its_service(demo: Diagnoser) -> None:
    alert = firing(demo.backend)[0]
    result = demo.diagnose(f"why is {alert['alert_name']} firing?")
    calls = tools_called(demo, result)
    assert calls[0][0] == "query_alerts"
    logs = [args for tool, args in calls if tool == "query_logs"]
    assert logs and {args["service"] for args in logs} >= {alert["service"]}
    answer = (result.answer or "").split("### Evidence")[0]
    others = [a["alert_name"] for a in firing(demo.backend)[1:]]
    assert alert["alert_name"] in answer and not any(name in answer for name in others)


def test_no_firing_alert_is_said_so_with_evidence(tmp_path: Path) -> None:
    folder = tmp_path / "quiet"
    shutil.copytree(DEFAULT_DATA_DIR, folder)
    alerts = json.loads((folder / "alerts.json").read_text(encoding="utf-8"))
    for alert in alerts["alerts"]:
        alert["state"] = "pending"
    (folder / "alerts.json").write_text(json.dumps(alerts), encoding="utf-8")
    result = offline_diagnoser(folder).diagnose("any alerts?")
    assert result.run.status == "SUCCESS" and not result.run.degraded
    assert "No alert is firing" in (result.answer or "")
    assert [e["raw_path"] for e in result.run.state["verified_evidence"]] == ["$.alerts"]


def test_an_unknown_service_is_said_to_be_unknown_with_suggestions(demo: Diagnoser) -> None:
    result = demo.diagnose("Why is search-service slow?")
    answer = result.answer or ""
    assert "**Unknown service:** search-service is not a known service" in answer
    assert "Did you mean" in answer
    head = answer.split("### Evidence")[0].lower()
    assert "healthy" not in head and "likely cause" not in head and "none:" not in head
    assert result.run.state["planner_plan"]["unknown_services"][0]["name"] == "search-service"


def test_a_follow_up_resolves_its_database_from_the_previous_answer(demo: Diagnoser) -> None:
    first = demo.diagnose("Is payment-service ok since 10:00?")
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Is payment-service ok since 10:00?"},
        {"role": "assistant", "content": first.answer or ""},
    ]
    second = demo.diagnose("and what about its database?", history=history)
    plan = second.run.state["planner_plan"]
    services = [args.get("service") for _, args in tools_called(demo, second)]
    conclusions = (first.answer or "").split("### Evidence")[0]
    dependency = str(services[0])
    # The database is the other service the first answer found in the data, not a guess.
    assert dependency != "payment-service" and dependency in conclusions
    assert "payment-service" in services
    assert plan["window"]["text"] == "since 10:00"
    assert 'read from "since 10:00"' in (second.answer or "")
    recorded = second.self_evaluation["rule_evaluation"]["understanding"]
    assert recorded["window"] == plan["window"] and recorded["language"] == "en"
    # The two name each other (the database logs its clients); the follow-up keeps the first
    # answer's direction instead of also blaming the caller for its database.
    summary = (second.answer or "").split("### Conclusions")[0]
    assert f"Likely cause in {dependency} (which payment-service depends on)" in summary
    assert f"(which {dependency} depends on)" not in summary


@pytest.mark.parametrize("question", ["why is it slow?", "它为什么变慢?", "what is causing it?"])
def test_a_follow_up_keeps_the_previous_turns_service_and_window(
    demo: Diagnoser, question: str
) -> None:
    history = [
        {"role": "user", "content": "payment-service looks unhappy since 10:00"},
        {"role": "assistant", "content": "## Diagnosis"},
    ]
    result = demo.diagnose(question, history=history)
    calls = tools_called(demo, result)
    assert calls[0][1]["service"] == "payment-service"
    # the previous turn's window: the analysis starts where that turn's "since 10:00" did
    assert calls[0][1].get("start", "2026-11-30T10:00:00Z") <= "2026-11-30T10:00:00Z"
    assert result.run.state["planner_plan"]["window"]["start"] == "2026-11-30T10:00:00Z"
    answer = (result.answer or "").split("### Evidence")[0]
    assert "payment-service" in answer and "No evidence of a problem" not in answer


def test_a_question_without_a_time_compares_across_the_onset_the_data_shows(
    demo: Diagnoser,
) -> None:
    result = demo.diagnose("payment checkout is sluggish")
    calls = tools_called(demo, result)
    assert calls[0] == ("detect_anomalies", {"service": "payment-service"})
    reference = DemoTelemetryBackend().reference_time().strftime("%Y-%m-%dT%H:%M:%SZ")
    starts = {
        args["start"] for tool, args in calls if tool == "query_logs" and args["level"] == "ERROR"
    }
    # Not "an hour before now": the split comes from the onset detect_anomalies found.
    assert starts and all(s < reference for s in starts)
    assert "2026-11-30T11:00:00Z" not in starts
    answer = result.answer or ""
    assert "no time given" in answer and "No evidence of a problem" not in answer


def test_the_simple_chat_answers_in_the_questions_language(demo: Diagnoser) -> None:
    catalog = Catalog([t.definition() for t in demo.tools])
    assert simple.next_step([{"role": "user", "content": "你好"}], catalog) == simple.HELP_ZH
    assert simple.next_step([{"role": "user", "content": "hello"}], catalog) == simple.HELP
    call = simple.next_step([{"role": "user", "content": "什么是连接池?"}], catalog)
    assert isinstance(call, dict) and call["tool"] == "lookup_knowledge"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "什么是连接池?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup_knowledge", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": json.dumps({"result": {"documents": []}}),
        },
    ]
    answer = simple.next_step(messages, catalog)
    assert isinstance(answer, str) and answer.startswith("运行手册中没有找到相关内容")


def test_tool_results_are_read_once_and_stay_as_sent() -> None:
    from webapp.llm.offline.conversation import payload, tool_results

    user = {"role": "user", "content": json.dumps({"question": "why?", "plan": {"queries": []}})}
    call = {"id": "c1", "function": {"name": "query_logs", "arguments": '{"service": "a"}'}}
    body = {"invocation_id": "inv-1", "tool": "query_logs", "result": {"records": [], "total": 0}}
    messages: list[dict[str, Any]] = [
        user,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(body)},
    ]
    first, again = tool_results(messages), tool_results(messages)
    assert first == again and first[0] is again[0]  # the second round parses nothing again
    assert (first[0].tool, first[0].arguments, first[0].invocation_id) == (
        "query_logs",
        {"service": "a"},
        "inv-1",
    )
    assert first[0].status == "SUCCESS" and first[0].result == body["result"]
    assert payload(messages) is payload(messages)  # one parse per conversation
    other = [{"role": "user", "content": json.dumps({"question": "else?"})}]
    assert payload(other) == {"question": "else?"}  # another conversation is read afresh


def test_a_result_shortened_to_save_context_is_still_what_the_model_read() -> None:
    """The ReAct loop shows the results of earlier rounds as their shape; the offline model
    keeps reading what it saw of them in an earlier round, while other conversations come and
    go."""
    from webapp.llm.compact import summary_message
    from webapp.llm.offline.conversation import READ_CACHE, tool_results

    call = {"id": "c1", "function": {"name": "detect_anomalies", "arguments": '{"service":"a"}'}}
    body = {"invocation_id": "inv-remembered-1", "tool": "detect_anomalies"}
    full = {**body, "result": {"findings": [{"signal": "errors"}], "healthy_signals": 3}}
    asked: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    first = [asked, {"role": "tool", "tool_call_id": "c1", "content": json.dumps(full)}]
    assert tool_results(first)[0].result == full["result"]
    short = {"role": "tool", "tool_call_id": "c1", "content": json.dumps(summary_message(full))}
    for n in range(READ_CACHE * 2):  # other conversations' results, read while this one runs
        other = {"invocation_id": f"inv-other-{n}", "tool": "detect_anomalies", "result": {}}
        tool_results([asked, {"role": "tool", "tool_call_id": "c1", "content": json.dumps(other)}])
        if n % 100 == 0:
            tool_results([asked, short])  # this conversation's next round
    later = tool_results([asked, short])
    assert later[0].invocation_id == "inv-remembered-1" and later[0].result == full["result"]
