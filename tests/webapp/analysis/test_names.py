"""Service names in a question: exact, alias, misspelt, partial, and unknown with suggestions."""

from __future__ import annotations

import pytest

from webapp.analysis.names import resolve_services, stem, suggest

SERVICES = [
    "api-gateway",
    "order-service",
    "payment-service",
    "inventory-service",
    "user-service",
    "catalog-service",
    "shipping-service",
    "mysql-primary",
    "redis-cache",
]
ALIASES = {
    "order-service": ["订单服务", "orders-api"],
    "redis-cache": ["缓存", "redis"],
    "payment-service": ["支付服务"],
}

CASES = [
    ("why is payment-service slow?", ["payment-service"], ["exact"]),
    ("PAYMENT-SERVICE errors", ["payment-service"], ["exact"]),
    (
        "payment-service and order-service errors",
        ["payment-service", "order-service"],
        ["exact", "exact"],
    ),
    (
        "order-service then payment-service",
        ["order-service", "payment-service"],
        ["exact", "exact"],
    ),
    ("why is paymnt-service slow", ["payment-service"], ["fuzzy"]),
    ("inventroy-service latency", ["inventory-service"], ["fuzzy"]),
    ("order-svc timeouts", ["order-service"], ["fuzzy"]),
    ("shiping-service 500s", ["shipping-service"], ["fuzzy"]),
    ("payment checkout is sluggish", ["payment-service"], ["partial"]),
    ("payments are failing", ["payment-service"], ["partial"]),
    ("paymnt errors", ["payment-service"], ["partial"]),
    ("mysql is slow", ["mysql-primary"], ["partial"]),
    ("订单服务报错了,帮我看看", ["order-service"], ["alias"]),
    ("缓存命中率下降的原因是什么?", ["redis-cache"], ["alias"]),
    ("支付服务为什么从10点开始变慢?", ["payment-service"], ["alias"]),
    ("redis memory is full", ["redis-cache"], ["alias"]),
    ("the orders-api returns 503", ["order-service"], ["alias"]),
    ("what alerts are firing right now?", [], []),
    ("hello there", [], []),
    ("the e-commerce follow-up checklist", [], []),
]


@pytest.mark.parametrize(("question", "services", "how"), CASES)
def test_services_are_resolved_by_name_alias_misspelling_or_part(
    question: str, services: list[str], how: list[str]
) -> None:
    resolution = resolve_services(question, SERVICES, ALIASES)
    assert resolution.services == services
    assert [m.how for m in resolution.matches] == how
    assert resolution.unknown == []


def test_a_misspelt_name_is_resolved_with_its_score() -> None:
    match = resolve_services("paymnt-service is down", SERVICES).matches[0]
    assert (match.service, match.text) == ("payment-service", "paymnt-service")
    assert 80 <= match.score < 100


@pytest.mark.parametrize(
    ("question", "unknown", "suggested"),
    [
        ("is search-service down?", "search-service", "user-service"),
        ("why is billing-api slow?", "billing-api", None),
        ("cart-service errors since 10:00", "cart-service", "catalog-service"),
    ],
)
def test_an_unknown_service_is_reported_with_suggestions(
    question: str, unknown: str, suggested: str | None
) -> None:
    resolution = resolve_services(question, SERVICES, ALIASES)
    assert resolution.services == []
    assert [u.text for u in resolution.unknown] == [unknown]
    suggestions = resolution.unknown[0].suggestions
    assert len(suggestions) == 3 and set(suggestions) <= set(SERVICES)
    if suggested:
        assert suggested in suggestions


def test_a_known_service_next_to_an_unknown_one_is_still_resolved() -> None:
    resolution = resolve_services("payment-service calls search-service", SERVICES)
    assert resolution.services == ["payment-service"]
    assert [u.text for u in resolution.unknown] == ["search-service"]


def test_aliases_of_services_the_backend_does_not_have_are_ignored() -> None:
    assert resolve_services("支付服务", ["order-service"], ALIASES).services == []


def test_stems_drop_generic_parts_and_suggestions_rank_by_similarity() -> None:
    assert stem("payment-service") == "payment"
    assert stem("order-svc") == "order"
    assert stem("api-gateway") == "gateway"
    assert suggest("paymnt-service", SERVICES)[0] == "payment-service"


def test_a_swapped_letter_in_a_bare_name_part_still_resolves() -> None:
    services = ["loyaltyd", "ledger-api", "quote-svc"]
    assert resolve_services("why is loyalytd throwing errors", services).services == ["loyaltyd"]
    # An ordinary short word one letter off a name part is not taken for it.
    assert resolve_services("the quota is fine", services).services == []


def test_a_misspelling_about_as_close_to_two_services_is_suggested_not_guessed() -> None:
    services = ["billing-api", "bulling-api", "ledger-api"]
    resolution = resolve_services("why is bolling-api down?", services)
    assert resolution.services == []
    assert [u.text for u in resolution.unknown] == ["bolling-api"]
    assert set(resolution.unknown[0].suggestions[:2]) == {"billing-api", "bulling-api"}
