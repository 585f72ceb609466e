"""Log templates (drain3): masking, counts around the split, new templates, services named."""

from __future__ import annotations

import gzip
import json
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from webapp.analysis.logpatterns import (
    clear_caches,
    mask,
    mask_all,
    mine_patterns,
    named_services,
    plain_mask,
)
from webapp.demo.backend import DEFAULT_DATA_DIR

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
SPLIT = T0 + timedelta(minutes=60)


def record(minute: float, message: str, level: str = "ERROR") -> dict[str, Any]:
    stamp = (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return {"timestamp": stamp, "service": "svc", "level": level, "message": message}


def records() -> list[dict[str, Any]]:
    old = [
        record(i, f"Slow request: GET /api/items/{1000 + i} took {900 + i}ms", "WARN")
        for i in range(0, 120, 2)
    ]
    new = [
        record(60 + i, f"POST /api/pay/{i} failed: connection pool exhausted (active={i}/50)")
        for i in range(40)
    ]
    return old + new


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        ("GET /api/v1/payments/34584 took 1013ms", "GET /api/v1/payments/<NUM> took <NUM>"),
        ("from 10.0.3.21:8080 refused", "from <IP> refused"),
        ("trace 4bf92f3577b34da6a3ce929d0e0e4736 done", "trace <ID> done"),
        ("id 550e8400-e29b-41d4-a716-446655440000 gone", "id <UUID> gone"),
        ("addr 0xdeadbeef", "addr <HEX>"),
        ("api v1 is fine", "api v1 is fine"),
        ("waited 50s at 99.5%", "waited <NUM> at <NUM>"),
    ],
)
def test_variable_parts_are_masked(message: str, masked: str) -> None:
    assert mask(message) == masked


def test_the_digit_shape_shortcut_masks_exactly_as_the_masks_do() -> None:
    clear_caches()
    with gzip.open(DEFAULT_DATA_DIR / "logs.jsonl.gz", "rt", encoding="utf-8") as lines:
        messages = [json.loads(line)["message"] for line in lines]
    assert mask_all(messages) == [plain_mask(m) for m in messages]
    rng = random.Random(5)
    alphabet = "0123456789abcdefABCDEFxX-+.:_ /%µsmhKiBG٣é\t=v\ud800"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    texts += ["v1 v2 0x1f 5x1f 1.2.3.4:80 v10.0.0.1", "deadbeef-dead-beef-dead-beefdeadbeef 12s"]
    assert mask_all(texts) == [plain_mask(t) for t in texts] == [mask(t) for t in texts]
    assert mask_all(["a\nv2 3", "0x1f v9"]) == ["a\nv2 <NUM>", "<HEX> v9"]


def test_templates_are_counted_before_and_after_the_split_and_new_ones_flagged() -> None:
    patterns = mine_patterns(records(), SPLIT)
    assert len(patterns) == 2
    first, second = patterns
    assert first.new and first.count_before == 0 and first.count_after == 40
    assert "connection pool exhausted" in first.template and "<NUM>" in first.template
    assert first.first_seen == SPLIT
    assert first.example.startswith("POST /api/pay/0 failed")
    assert not second.new and second.count_before == 30 and second.count_after == 30
    assert second.levels == ("WARN",) and len(second.times) == 60


def test_mining_is_deterministic_whatever_the_input_order() -> None:
    forward = [p.as_dict() for p in mine_patterns(records(), SPLIT)]
    backward = [p.as_dict() for p in mine_patterns(list(reversed(records())), SPLIT)]
    assert forward == backward


def test_without_a_split_everything_is_after_and_nothing_is_new() -> None:
    patterns = mine_patterns(records(), None)
    assert all(not p.new and p.count_before == 0 for p in patterns)
    assert sum(p.count_after for p in patterns) == len(records())


def test_the_pattern_has_the_spec_shape() -> None:
    body = mine_patterns(records(), SPLIT)[0].as_dict()
    assert set(body) == {"template", "example", "count_before", "count_after", "first_seen", "new"}
    assert body["first_seen"] == "2026-11-30T10:00:00Z"


def test_no_records_give_no_patterns() -> None:
    assert mine_patterns([], SPLIT) == []


def test_services_named_in_messages_are_counted_as_dependency_hints() -> None:
    logs = [
        {"message": "call to inventory-service timed out after 2000ms"},
        {"message": "circuit breaker for inventory-service is OPEN"},
        {"message": "jdbc:mysql://mysql-primary:3306/orders refused"},
        {"message": "order-service retrying"},  # the service itself is excluded
        {"message": "my-inventory-service-proxy is a different name"},
        {"message": "库存服务超时"},
    ]
    services = ["inventory-service", "mysql-primary", "order-service", "payment-service"]
    aliases = {"inventory-service": ["库存服务"]}
    assert named_services(logs, services, "order-service", aliases) == {
        "inventory-service": 3,
        "mysql-primary": 1,
    }
