"""How the offline answer quotes a culprit's log line."""

from __future__ import annotations

from webapp.llm.offline.judge import QUOTE_WIDTH, quote


def test_a_long_line_is_quoted_from_its_innermost_exception() -> None:
    line = (
        "[http-nio-8080-exec-3] c.example.orders.OrderService - HikariPool-1 - Exception during "
        "pool initialization / refill: org.postgresql.util.PSQLException: FATAL: password "
        'authentication failed for user "orders"\n\tat c.example.orders.Db.open(Db.java:12)'
    )
    assert quote(line) == (
        'org.postgresql.util.PSQLException: FATAL: password authentication failed for user "orders"'
    )
    # a line that fits is quoted whole, exception name and all
    assert quote("KeyError: 'sku'") == "KeyError: 'sku'"
    long_plain = "worker " * 40
    assert len(quote(long_plain)) <= QUOTE_WIDTH + 2 and quote(long_plain).endswith("…")
