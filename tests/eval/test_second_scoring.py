"""The second generator's scorer: hand-written right answers pass, wrong ones fail for the reason."""

from __future__ import annotations

from datetime import datetime, timezone

from eval.second.cases import Case, Expect
from eval.second.reading import changes, clock_minutes, numbers, read
from eval.second.scoring import score
from eval.second.systems.cards import CARDS
from eval.second.truth import Quantity, Truth

DNS = Truth(
    "early",
    "dns_failure",
    "coredns",
    ("kube-dns",),
    ("coredns", "statements-api", "app-bff", "api-edge"),
    (datetime(2027, 3, 12, 9, 15, 10, tzinfo=timezone.utc),),
    (
        Quantity(
            "coredns", "rcode_servfail:coredns_dns_responses:rate5m", "/s", 0.02, 108.5, 267.6
        ),
        Quantity("coredns", "coredns_dns_request_duration_seconds:p99", "s", 0.0031, 1.26, 1.7),
    ),
)
FDS = Truth(
    "first",
    "fd_exhaustion",
    "cards-authz",
    ("卡授权服务", "authz"),
    ("cards-authz", "api-edge"),
    (datetime(2027, 3, 12, 10, 38, 10, tzinfo=timezone.utc),),
    (Quantity("cards-authz", "process_open_fds", "", 193.5, 1024.0, 1024.0),),
)
ASKED = "Why is statements-api failing since 9:20?"


def _case(
    question: str = ASKED, *truths: Truth, service: str = "statements-api", zone: int = 0
) -> Case:
    truths = truths or (DNS,)
    allowed = tuple({n for t in truths for n in t.involved} | {service})
    return Case(
        "t-1", "t", "named", (question,), Expect("incident", truths, service, zone, allowed=allowed)
    )


def _answer(headline: str, body: str = "", question: str = ASKED) -> str:
    return (
        f"## {headline}\n\n**Question:** {question}\n\n**Window:** 2027-03-12T09:20:00Z to "
        f"2027-03-12T12:00:00Z\n\n{body}\n\n### Evidence\n\n- **E1** (telemetry; query\\_logs ...): "
        "getaddrinfo EAI\\_AGAIN ledger-db; cards-authz is healthy\n\n### Recommended next steps\n\n"
        "1. Check the memory leak runbook for kube-dns. [E4]\n"
    )


def _score(case: Case, answer: str):  # type: ignore[no-untyped-def]
    return score(case, answer, CARDS)


def test_a_right_answer_with_onset_and_quantity_is_complete() -> None:
    answer = _answer(
        "coredns is failing DNS lookups",
        "statements-api cannot resolve its database (getaddrinfo EAI\\_AGAIN) because coredns answers "
        "SERVFAIL since 09:15 UTC: SERVFAIL rate 0.02/s -> 108/s [E1][E2], p99 lookup time 3 ms -> 1.3 s.",
    )
    verdict = _score(_case(), answer)
    assert verdict.correct and verdict.complete and not verdict.false_healthy, verdict


def test_a_right_answer_without_onset_or_quantity_is_right_but_incomplete() -> None:
    no_onset = _answer(
        "coredns returns SERVFAIL", "DNS resolution fails; SERVFAIL rate 0.02/s -> 108/s."
    )
    no_quantity = _answer("coredns returns SERVFAIL", "DNS resolution fails since 09:16.")
    for answer in (no_onset, no_quantity):
        verdict = _score(_case(), answer)
        assert verdict.correct and not verdict.complete, verdict


def test_the_onset_may_be_in_the_question_zone_and_chinese_words_name_the_mechanism() -> None:
    question = "北京时间17点20分开始账单下载不了"
    answer = _answer(
        "coredns 域名解析失败",
        "statements-api 依赖 coredns, 从北京时间17点15分开始解析失败, p99 解析耗时 3 毫秒 升至 1.3 秒。",
        question,
    )
    verdict = _score(_case(question, zone=480), answer)
    assert verdict.correct and verdict.complete, verdict


def test_an_alias_names_the_culprit() -> None:
    answer = _answer("kube-dns is answering SERVFAIL", "Name resolution fails for statements-api.")
    assert _score(_case(), answer).correct


def test_calling_the_culprit_or_the_asked_service_healthy_is_a_false_healthy() -> None:
    culprit = _answer(
        "Diagnosis", "No evidence of a problem with coredns: none of its 5 signals moved."
    )
    asked = _answer("Diagnosis", "statements-api looks healthy. coredns has DNS errors.")
    nothing = _answer("Diagnosis", "No problem found in the window.")
    for answer in (culprit, asked, nothing):
        verdict = _score(_case(), answer)
        assert not verdict.correct and verdict.false_healthy, verdict


def test_a_wrong_culprit_or_a_wrong_mechanism_is_wrong() -> None:
    symptom = _score(
        _case(), _answer("statements-api degraded", "A slow dependency: calls time out.")
    )
    assert not symptom.correct and "culprit not named" in symptom.reason
    mechanism = _score(_case(), _answer("coredns ran out of memory", "coredns was OOM-killed."))
    assert not mechanism.correct and "mechanism not named" in mechanism.reason
    quoted = _answer(
        "Diagnosis",
        "Likely cause in coredns: consumer lag - a backlog builds up. statements-api degraded: "
        "getaddrinfo EAI_AGAIN up.",
    )
    verdict = _score(_case(), quoted)
    assert not verdict.correct and "mechanism not named" in verdict.reason


def test_naming_many_services_or_causes_is_a_shotgun() -> None:
    services = _answer(
        "coredns DNS errors",
        "coredns, ledger-api, risk-score, login-api, otp-sender and hsm-proxy all changed.",
    )
    causes = _answer(
        "coredns DNS errors",
        "coredns: DNS failures, or a memory leak, a bad deploy, a lock held by a batch job or rate limiting.",
    )
    for answer in (services, causes):
        verdict = _score(_case(), answer)
        assert not verdict.correct and verdict.reason.startswith("shotgun"), verdict


def test_two_incidents_need_both_culprits_and_both_mechanisms() -> None:
    case = _case("Several alerts fired around 10:45am - what is going on?", DNS, FDS, service="")
    one = _answer("coredns DNS failure", "coredns returns SERVFAIL.", case.turns[0])
    both = _answer(
        "Two incidents",
        "coredns returns SERVFAIL (DNS) since 09:15, 0.02/s -> 108/s. cards-authz ran out of file "
        "descriptors at 10:38: open fds 193 -> 1,024.",
        case.turns[0],
    )
    assert "cards-authz" in _score(case, one).reason
    verdict = _score(case, both)
    assert verdict.correct and verdict.complete, verdict


def test_only_the_conclusion_counts() -> None:
    runbook = (
        'Here is what the runbooks say about "What broke around 9:20?":\n\n- **Cluster DNS (coredns)** '
        "(`runbooks/coredns.md#0`): SERVFAIL rate and DNS resolution errors of coredns.\n"
    )
    echoed = _answer(
        "Diagnosis",
        "The verified evidence does not support a conclusion.",
        "Is coredns failing DNS?",
    )
    evidence_only = _answer("Diagnosis", "The verified evidence does not support a conclusion.")
    for question, answer in (
        ("What broke around 9:20?", runbook),
        ("Is coredns failing DNS?", echoed),
        (ASKED, evidence_only),
    ):
        verdict = _score(_case(question), answer)
        assert not verdict.correct and not verdict.false_healthy, (question, verdict)


def test_a_healthy_service_is_right_only_when_called_fine_without_a_cause() -> None:
    case = Case(
        "t-2", "t", "healthy", ("Is risk-score ok?",), Expect("healthy", service="risk-score")
    )
    fine = _answer(
        "Diagnosis",
        "No evidence of a problem with risk-score: its warnings were there all morning.",
        "Is risk-score ok?",
    )
    degraded = _answer("Diagnosis", "risk-score degraded: p99 latency up.", "Is risk-score ok?")
    blamed = _answer(
        "Diagnosis",
        "risk-score looks fine. Likely cause of the alert: a config push.",
        "Is risk-score ok?",
    )
    assert _score(case, fine).correct
    assert not _score(case, degraded).correct and not _score(case, blamed).correct


def test_a_window_outside_the_data_must_be_said_without_a_verdict() -> None:
    question = "What happened to cards-authz yesterday at 14:00?"
    case = Case(
        "t-3", "t", "out_of_range", (question,), Expect("out_of_range", service="cards-authz")
    )
    honest = _answer(
        "Not enough data", "The data covers 06:00-12:00 today; there is nothing before.", question
    )
    fine = _answer("Diagnosis", "No evidence of a problem with cards-authz.", question)
    silent = _answer("Diagnosis", "cards-authz degraded: open fds up.", question)
    assert _score(case, honest).correct
    assert not _score(case, fine).correct and not _score(case, silent).correct


def test_a_point_value_is_read_in_any_unit() -> None:
    question = "What was node_timex_offset_seconds of idp-issuer at 10:52?"
    expect = Expect(
        "value",
        service="idp-issuer",
        metric="node_timex_offset_seconds",
        unit="s",
        values=(94.62, 93.36, 96.62),
    )
    case = Case("t-4", "t", "point_value", (question,), expect)
    assert _score(case, _answer("Value", "At 10:52 it was 94.6 s.", question)).correct
    assert _score(case, _answer("Value", "It was 94620 ms.", question)).correct
    assert not _score(case, _answer("Value", "It was 0.0005 s at 10:52.", question)).correct


def test_numbers_times_and_changes_are_read_like_a_person_reads_them() -> None:
    text = "p99 181 ms -> 4.3 s from 10:02 UTC; errors 0.2% → 14%; fds rose from 133 to 1,024 open files; v2.14.0, 5xx, p95"
    assert [(n.dimension, round(n.value, 4)) for n in numbers(text)] == [
        ("time", 0.181),
        ("time", 4.3),
        ("ratio", 0.002),
        ("ratio", 0.14),
        ("", 133.0),
        ("count", 1024.0),
    ]
    assert len(changes(text)) == 3
    assert clock_minutes("since 9:40am, 10点42分, 北京时间18点, 2027-03-12T10:42:07Z") == [
        642,
        580,
        642,
        1080,
    ]
    reading = read(_answer("Head", "Body since 10:00."))
    assert "Evidence" not in reading.conclusion and "memory leak" not in reading.conclusion
    assert reading.limits.startswith("**Window:**")
