"""Log templates: masking, grouping into events, counts around the split, services named."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from webapp.analysis.logpatterns import (
    mask,
    mine_patterns,
    named_services,
)

from .logsets import grouping_accuracy, mined_groups, systems
from .logsets import records as timed

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
        ("counter 00000005 then 0000000d", "counter <ID> then <ID>"),
        ("a\nv2 3", "a\nv2 <NUM>"),
        ("0x1f v9", "<HEX> v9"),
    ],
)
def test_variable_parts_are_masked(message: str, masked: str) -> None:
    assert mask(message) == masked


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


def test_grouping_accuracy_on_the_real_log_regression_set_keeps_its_floor() -> None:
    accuracy = {
        name: grouping_accuracy(truth, mined_groups(timed(messages)))
        for name, (truth, messages) in systems().items()
    }
    assert len(accuracy) >= 20
    assert sum(accuracy.values()) / len(accuracy) >= 0.9, accuracy
    assert min(accuracy.values()) >= 0.65, accuracy


def groups_of(messages: list[str]) -> list[set[str]]:
    """The messages of each mined template."""
    lines = timed(messages)
    found: dict[int, set[str]] = {}
    for line, group in zip(lines, mined_groups(lines), strict=True):
        found.setdefault(group, set()).add(line["message"])
    return sorted(found.values(), key=sorted)


def test_an_event_whose_token_count_varies_is_one_template() -> None:
    lines = [
        "chrome.exe - proxy.example.com:5070 close, 1190 bytes (1.16 KB) sent, 1671 bytes (1.63 KB) received, lifetime 00:02",
        "chrome.exe - proxy.example.com:5070 close, 403 bytes sent, 426 bytes received, lifetime <1 sec",
        "firefox.exe - 10.0.0.8:443 close, 2048 bytes (2.00 KB) sent, 96 bytes received, lifetime 01:10",
        "chrome.exe - proxy.example.com:5070 open through proxy proxy.example.com:5070 HTTPS",
    ]
    assert groups_of(lines) == [set(lines[:3]), {lines[3]}]


def test_a_variable_first_token_is_no_branch_and_methods_stay_apart() -> None:
    get = [
        f'10.11.10.{n} "GET /v2/servers/{n}/detail HTTP/1.1" status: 200 len: 1893 time: 0.2{n}'
        for n in range(1, 4)
    ]
    post = [
        f'10.11.10.{n} "POST /v2/servers HTTP/1.1" status: 202 len: 733 time: 0.5{n}'
        for n in range(4, 6)
    ]
    delete = ['10.11.10.9 "DELETE /v2/servers/7 HTTP/1.1" status: 204 len: 0 time: 0.31']
    assert groups_of(get + post + delete) == sorted([set(delete), set(get), set(post)], key=sorted)


def test_hex_counters_and_host_ports_do_not_split_an_event() -> None:
    lines = [
        "CBS Loaded Servicing Stack v6.1 with Core: 00000005 from db01.example.com:5432",
        "CBS Loaded Servicing Stack v6.1 with Core: 0000000d from 10.2.0.7:5432",
        "CBS Loaded Servicing Stack v6.1 with Core: 000000a1 from localhost:6543",
    ]
    assert groups_of(lines) == [set(lines)]


def test_short_messages_that_differ_in_a_word_are_not_merged_by_their_values() -> None:
    lines = [
        "[node-7] 10.0.0.1:9300 12 started",
        "[node-7] 10.0.0.1:9300 12 stopped",
        "Session 4471 user 17 opened",
        "Session 4472 user 18 closed",
    ]
    assert groups_of(lines) == sorted([{line} for line in lines], key=sorted)


def test_a_word_that_varies_in_a_long_event_becomes_a_placeholder() -> None:
    lines = [
        "Failed password for root from 10.0.0.1 port 22 ssh2",
        "Failed password for admin from 10.0.0.2 port 2201 ssh2",
    ]
    patterns = mine_patterns(timed(lines), None)
    assert [p.template for p in patterns] == ["Failed password for <*> from <IP> port <NUM> ssh2"]


def test_quoted_values_parenthesised_details_and_padded_timestamps_are_one_value_each() -> None:
    probes = [
        '"Probe failed" probeType="Readiness" pod="a/api-1" output="HTTP probe failed with statuscode: 503"',
        '"Probe failed" probeType="Liveness" pod="b/web-2" output="Get \\"http://10.0.0.1:8080/\\": context deadline exceeded"',
    ]
    deliveries = [
        "A1B2: to=<a@example.com>, relay=mx.example.com[10.0.0.2]:25, delay=1.2, status=sent (250 2.0.0 OK id=1cxVgO)",
        "C3D4: to=<b@example.org>, relay=none, delay=75925, status=deferred (host said: 451 4.3.0 Temporary local problem - please try later)",
    ]
    links = [
        "kernel: [    1.703194] e1000e: eth0 NIC Link is Down",
        "kernel: [39488.667162] e1000e: eth0 NIC Link is Down",
    ]
    assert groups_of(probes + deliveries + links) == sorted(
        [set(probes), set(deliveries), set(links)], key=sorted
    )


def test_a_position_taking_many_words_is_a_value_and_two_words_are_two_events() -> None:
    names = ["os-keypairs", "os-migrations", "OS-DCF", "NMN", "os-networks", "os-hypervisors"]
    extensions = [f"nova.api.openstack.extensions [-] Loaded extension: {name}" for name in names]
    modes = [
        "kernel: device vethdb09d2a entered promiscuous mode",
        "kernel: device vethdb09d2a left promiscuous mode",
    ]
    assert groups_of(extensions + modes) == sorted(
        [set(extensions), {modes[0]}, {modes[1]}], key=sorted
    )
    assert len(groups_of(extensions[:2])) == 2


def test_a_host_built_on_a_service_s_name_names_the_service() -> None:
    records = [
        {"message": "Unable to connect to ledger-db-2:5432"},
        {"message": "GET http://checkout-7d9f8-x2kq4/cart -> 503"},
        {"message": "ledger-db-replica lags"},
    ]
    found = named_services(records, ["ledger-db", "checkout", "ledger-db-replica", "api"], "api")
    assert found == {"checkout": 1, "ledger-db": 1, "ledger-db-replica": 1}
