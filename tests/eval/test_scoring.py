"""The scorer: known-good answers score, known-bad ones do not, and for the stated reason."""

from __future__ import annotations

from eval.questions import Case, Expected
from eval.scoring import categories, conclusion, score

ALIASES = {
    "ledger-api": ["账本服务"],
    "pg-ledger": ["账本数据库"],
    "quote-svc": [],
    "fraud-worker": [],
    "kv-hot": [],
    "hermes": [],
    "atlas": [],
}
POOL = Case(
    "t-1",
    "t",
    "direct",
    ("Why is ledger-api slow since 10:12?",),
    Expected("incident", (("pg-ledger", "db_pool_exhaustion"),)),
)
EVIDENCE = "\n\n### Evidence\n\n- **E1** `query_logs` ...: connection pool exhausted\n"


def _answer(headline: str, body: str) -> str:
    return f"## {headline}\n\n**Question:** {POOL.turns[0]}\n\n{body}{EVIDENCE}"


def test_a_known_good_answer_is_correct() -> None:
    answer = _answer(
        "ledger-api: connection pool exhausted",
        "**Likely cause: a long-running transaction on pg-ledger holds locks; ledger-api's "
        "connection pool is exhausted.**",
    )
    verdict = score(POOL, answer, ALIASES)
    assert verdict.correct and not verdict.false_healthy, verdict


def test_naming_the_culprit_by_its_chinese_alias_counts() -> None:
    answer = _answer("ledger-api: 连接池耗尽", "**账本数据库上的慢查询导致连接池耗尽。**")
    assert score(POOL, answer, ALIASES).correct


def test_an_answer_that_stops_at_the_victim_is_wrong() -> None:
    answer = _answer("ledger-api: connection pool exhaustion", "**ledger-api's pool is full.**")
    verdict = score(POOL, answer, ALIASES)
    assert not verdict.correct and "pg-ledger not named" in verdict.reason


def test_calling_an_incident_healthy_is_a_false_healthy() -> None:
    answer = _answer("ledger-api: no evidence of a problem", "**pg-ledger is fine.**")
    verdict = score(POOL, answer, ALIASES)
    assert not verdict.correct and verdict.false_healthy


def test_a_cause_only_in_quoted_log_lines_or_the_evidence_does_not_count() -> None:
    answer = _answer(
        "ledger-api: errors",
        '**ledger-api degraded.** pg-ledger logged: "connection pool exhausted after 5000ms"',
    )
    verdict = score(POOL, answer, ALIASES)
    assert not verdict.correct and "not recognised" in verdict.reason
    assert "connection pool" not in conclusion(answer, POOL.turns)


def test_a_wrong_headline_is_not_rescued_by_a_hedge_in_the_body() -> None:
    answer = _answer(
        "ledger-api: expired certificate",
        "**pg-ledger might also have slow queries.**",
    )
    verdict = score(POOL, answer, ALIASES)
    assert not verdict.correct and "headline names another cause" in verdict.reason


def test_naming_every_cause_is_a_shotgun() -> None:
    answer = _answer(
        "ledger-api: several possibilities",
        "**pg-ledger slow queries, or a deploy, or the certificate, or the disk is full.**",
    )
    verdict = score(POOL, answer, ALIASES)
    assert not verdict.correct and verdict.reason.startswith("shotgun")


def test_two_services_need_both_culprits() -> None:
    case = Case(
        "t-2",
        "t",
        "two_services",
        ("Why are ledger-api and quote-svc misbehaving?",),
        Expected("incident", (("pg-ledger", "db_pool_exhaustion"), ("kv-hot", "cache_eviction"))),
    )
    half = "## ledger-api\n\n**pg-ledger: slow queries exhaust the connection pool.**"
    assert not score(case, half, ALIASES).correct
    both = half + "\n**quote-svc: kv-hot is evicting keys, the cache hit ratio fell.**"
    assert score(case, both, ALIASES).correct


def test_healthy_unknown_and_alert_cases() -> None:
    healthy = Case(
        "t-3", "t", "healthy", ("Is hermes healthy?",), Expected("healthy", service="hermes")
    )
    assert score(healthy, "## hermes: no evidence of a problem", ALIASES).correct
    assert not score(healthy, "## hermes: errors after a deploy", ALIASES).correct
    unknown = Case(
        "t-4", "t", "unknown_service", ("Why is zeus slow?",), Expected("unknown", service="zeus")
    )
    assert score(unknown, "zeus is not a known service; did you mean hermes?", ALIASES).correct
    assert not score(unknown, "## None: Database connection pool exhaustion", ALIASES).correct
    alerts = Case(
        "t-5", "t", "alerts", ("What is firing?",), Expected("alerts", alerts=("A1", "Watchdog"))
    )
    assert score(alerts, "Firing: A1 (critical), Watchdog (none)", ALIASES).correct
    assert not score(alerts, "Firing: A1", ALIASES).correct


def test_no_answer_is_wrong_but_not_a_false_healthy() -> None:
    verdict = score(POOL, None, ALIASES)
    assert not verdict.correct and not verdict.false_healthy


def test_category_vocabulary_knows_english_and_chinese() -> None:
    assert categories("磁盘已满") == {"disk_full"}
    assert categories("the x509 certificate expired") == {"cert_expiry"}
    assert categories("consumers are lagging behind; backlog grows") == {"queue_lag"}
