"""Claim kinds as data: every kind renders a statement and reads the same fields back."""

from __future__ import annotations

import re

import pytest

from webapp.llm.offline import claims
from webapp.llm.offline.causes import CAUSE_KINDS, CauseKind

VALUES = {
    "service": "ledger-writer",
    "signal": "GET <*> failed: could not write <*> (no space)",
    "direction": "up",
    "onset": "2031-03-14 13:13 UTC",
    "incident": "0.97",
    "peak": "0.99",
    "baseline": "0.411",
    "change": "+0.56",
    "z": "100.0",
    "count": "42",
    "first_seen": "2031-03-14T13:13:10Z",
    "example": "write failed: No space left on device (segment 3-1): retry in 5 s",
    "dependency": "quote-api",
    "excerpt": "calling quote-api: timed out",
    "culprit": "quote-api",
    "victim": "ledger-writer",
    "victim_onset": "2031-03-14 13:14 UTC",
    "mechanism": CAUSE_KINDS[0].label,
    "signals": "dbcp_busy, slowlog_rate",
    "time": "2031-03-14T13:12:59Z",
    "message": "rolling update complete: 4.9.9 replaces 4.8.9",
    "start": "2031-03-14T12:00:00Z",
    "end": "2031-03-14T15:00:00Z",
    "title": "Volume full: what to do",
    "step": "Free space: delete old archives (keep 2 days).",
    "value": "93.36 s",
}
#: Field values a Chinese claim holds in Chinese (the rest are data: names, numbers, log lines).
ZH = {"direction": claims.direction("up", "zh"), "mechanism": CAUSE_KINDS[0].says("zh")}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("kind", claims.KINDS, ids=[k.name for k in claims.KINDS])
def test_every_kind_reads_back_what_it_rendered(kind: claims.ClaimKind, language: str) -> None:
    values = {name: VALUES[name] for name in kind.fields}
    if language == "zh":
        values = {**values, **{k: v for k, v in ZH.items() if k in values}}
    statement = kind.render(language, **values)
    assert claims.read(statement) == (kind, values)
    assert (language == "zh") == bool(re.search(r"[\u4e00-\u9fff]", kind.templates[language]))


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("cause", CAUSE_KINDS, ids=[c.key for c in CAUSE_KINDS])
def test_every_cause_label_survives_a_cause_claim(cause: CauseKind, language: str) -> None:
    values = {**{n: VALUES[n] for n in claims.CAUSE.fields}, "mechanism": cause.says(language)}
    statement = claims.CAUSE.render(language, **values)
    assert claims.read(statement) == (claims.CAUSE, values)
    assert cause.says(language) != cause.says("zh" if language == "en" else "en")


def test_every_kind_has_a_chinese_template_with_its_fields() -> None:
    assert all(kind.zh for kind in claims.KINDS)
    with pytest.raises(ValueError, match="zh template"):
        claims.ClaimKind("x", "{a} and {b}", "{a} 和 {c}")


def test_quotes_and_line_breaks_in_a_field_cannot_end_it_early() -> None:
    statement = claims.NEW_LOGS.render(
        service="a", count="1", first_seen="t", example='say "hi"\nthere'
    )
    assert claims.read(statement) == (
        claims.NEW_LOGS,
        {"service": "a", "count": "1", "first_seen": "t", "example": "say 'hi' there"},
    )


def test_free_text_is_no_kind_and_a_missing_field_is_refused() -> None:
    assert claims.read("the database was on fire at 10:02") is None
    with pytest.raises(ValueError, match="missing fields"):
        claims.MOVED.render(service="a")
