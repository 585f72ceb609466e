"""The eval's fixtures: generated worlds (from seeds, on the fly) and the bundled demo world."""

from __future__ import annotations

import json
from pathlib import Path

from demo.scenarios import scenario_records
from eval.families import FAMILIES
from eval.questions import Case, Expected, world_cases
from eval.runner import Fixture
from eval.telemetry import world_alerts, write_world
from eval.world import build_world
from webapp.demo.backend import DEFAULT_DATA_DIR

FAMILIES_PER_WORLD = 5


def families_for(index: int) -> list[str]:
    """The families of the ``index``-th world: a rotation, so every family recurs."""
    keys = list(FAMILIES)
    return [keys[(index * FAMILIES_PER_WORLD + j) % len(keys)] for j in range(FAMILIES_PER_WORLD)]


def generated_fixture(seed: int, index: int, root: Path, questions: int = 50) -> Fixture:
    """World ``seed`` written under ``root`` with at least ``questions`` cases."""
    world = build_world(seed, families_for(index))
    folder = root / f"world-{seed}"
    write_world(world, folder)
    firing = [a["alert_name"] for a in world_alerts(world) if a["state"] == "firing"]
    return Fixture(f"w{seed}", folder, world_cases(world, firing, questions))


def _demo_alerts() -> list[str]:
    alerts = json.loads((DEFAULT_DATA_DIR / "alerts.json").read_text(encoding="utf-8"))["alerts"]
    return [a["alert_name"] for a in alerts if a["state"] == "firing"]


def demo_fixture() -> Fixture:
    """The demo: docs/offline.md's questions, Chinese, follow-ups, typos, alerts, unknowns."""
    cases: list[Case] = []

    def add(kind: str, turns: tuple[str, ...], expected: Expected) -> None:
        cases.append(Case(f"demo-{len(cases) + 1:03d}", "demo", kind, turns, expected))

    for record in scenario_records("default"):
        if record["failure_type"] == "healthy":
            add("healthy", (record["question"],), Expected("healthy", service=record["service"]))
        else:
            causes = ((record["cause_service"], record["failure_type"]),)
            add("direct", (record["question"],), Expected("incident", causes))
    pool = Expected("incident", (("mysql-primary", "db_pool_exhaustion"),))
    add("chinese", ("支付服务为什么从10点开始变慢?",), pool)
    add("paraphrase", ("payment checkout is sluggish",), pool)
    add("time", ("p99 latency on payments went up this morning",), pool)
    add("misspelling", ("why is paymnt-service slow since 10:00",), pool)
    add("follow_up", ("Is payment-service ok since 10:00?", "and what about its database?"), pool)
    timeout = Expected("incident", (("inventory-service", "downstream_timeout"),))
    add("chinese", ("订单服务报错了,帮我看看",), timeout)
    add("follow_up", ("order-service looks unhappy since 10:40", "它为什么报错?"), timeout)
    add(
        "unknown_service",
        ("Why is search-service slow?",),
        Expected("unknown", service="search-service"),
    )
    add(
        "alerts",
        ("What alerts are firing right now?",),
        Expected("alerts", alerts=tuple(_demo_alerts())),
    )
    return Fixture("demo", DEFAULT_DATA_DIR, cases)
