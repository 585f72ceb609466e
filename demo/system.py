"""The demo system: its services, their names in each variant, time window and routes.

Services are referred to by a canonical key (the ``default`` variant's name); a variant maps
each key to the name that appears in its data, and shifts the whole window in time.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

VARIANTS = ("default", "renamed")
WINDOW_MINUTES = 180
STEP_SECONDS = 60

APP_SERVICES = (
    "api-gateway",
    "order-service",
    "payment-service",
    "inventory-service",
    "user-service",
    "catalog-service",
    "shipping-service",
)
INFRA_SERVICES = ("mysql-primary", "redis-cache")
SERVICE_KEYS = APP_SERVICES + INFRA_SERVICES

_RENAMED = {
    "api-gateway": "edge-proxy",
    "order-service": "checkout-svc",
    "payment-service": "billing-api",
    "inventory-service": "stock-service",
    "user-service": "account-service",
    "catalog-service": "product-catalog",
    "shipping-service": "fulfilment-worker",
    "mysql-primary": "sql-main",
    "redis-cache": "kv-cache",
}
SERVICE_NAMES: dict[str, dict[str, str]] = {
    "default": {key: key for key in SERVICE_KEYS},
    "renamed": _RENAMED,
}
# Other names people use for each service (dataset.json ``aliases``), Chinese ones included;
# the renamed variant keeps the same aliases under its own service names.
ALIASES: dict[str, tuple[str, ...]] = {
    "api-gateway": ("网关", "API网关", "gateway"),
    "order-service": ("订单服务", "orders"),
    "payment-service": ("支付服务", "payments"),
    "inventory-service": ("库存服务", "inventory", "stock"),
    "user-service": ("用户服务", "accounts"),
    "catalog-service": ("商品服务", "商品目录", "catalog"),
    "shipping-service": ("物流服务", "配送服务", "shipping"),
    "mysql-primary": ("主数据库", "数据库", "mysql"),
    "redis-cache": ("缓存", "Redis缓存", "redis"),
}
REFERENCE_TIMES: dict[str, datetime] = {
    "default": datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc),
    "renamed": datetime(2026, 6, 15, 18, 30, tzinfo=timezone.utc),
}

# Request routes per service: (method, path template); {id}, {sku}, {term} are filled in.
ROUTES: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "default": {
        "order-service": (
            ("GET", "/api/v1/orders/{id}"),
            ("POST", "/api/v1/orders"),
            ("GET", "/api/v1/orders?user={id}"),
        ),
        "payment-service": (
            ("POST", "/api/v1/payments"),
            ("GET", "/api/v1/payments/{id}"),
            ("POST", "/api/v1/payments/{id}/capture"),
        ),
        "inventory-service": (
            ("GET", "/api/v1/stock/{sku}"),
            ("POST", "/api/v1/stock/reservations"),
        ),
        "user-service": (
            ("GET", "/api/v1/users/{id}"),
            ("POST", "/api/v1/sessions"),
            ("GET", "/api/v1/users/{id}/addresses"),
        ),
        "catalog-service": (
            ("GET", "/api/v1/products/{id}"),
            ("GET", "/api/v1/products?category={term}"),
            ("GET", "/api/v1/search?q={term}"),
        ),
        "shipping-service": (
            ("POST", "/api/v1/shipments"),
            ("GET", "/api/v1/shipments/{id}"),
            ("POST", "/api/v1/shipments/{id}/label"),
        ),
    },
    "renamed": {
        "order-service": (
            ("GET", "/v2/checkout/carts/{id}"),
            ("POST", "/v2/checkout/submit"),
            ("GET", "/v2/checkout/history?account={id}"),
        ),
        "payment-service": (
            ("POST", "/v2/charges"),
            ("GET", "/v2/charges/{id}"),
            ("POST", "/v2/charges/{id}/settle"),
        ),
        "inventory-service": (
            ("GET", "/v2/stock-levels/{sku}"),
            ("POST", "/v2/holds"),
        ),
        "user-service": (
            ("GET", "/v2/accounts/{id}"),
            ("POST", "/v2/login"),
            ("GET", "/v2/accounts/{id}/delivery-points"),
        ),
        "catalog-service": (
            ("GET", "/v2/items/{id}"),
            ("GET", "/v2/items?aisle={term}"),
            ("GET", "/v2/find?q={term}"),
        ),
        "shipping-service": (
            ("POST", "/v2/consignments"),
            ("GET", "/v2/consignments/{id}"),
            ("POST", "/v2/consignments/{id}/waybill"),
        ),
    },
}

# Share of edge traffic the gateway forwards to each upstream.
GATEWAY_MIX = (
    ("catalog-service", 0.40),
    ("user-service", 0.20),
    ("order-service", 0.18),
    ("shipping-service", 0.12),
    ("payment-service", 0.10),
)


def variant_index(variant: str) -> int:
    """Position of ``variant`` in ``VARIANTS`` (its phrasing in a template pair)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS.index(variant)


def window(variant: str) -> tuple[datetime, datetime]:
    """The (start, end) of the variant's data; end is its reference time."""
    variant_index(variant)
    end = REFERENCE_TIMES[variant]
    return end - timedelta(minutes=WINDOW_MINUTES), end


def service_name(variant: str, key: str) -> str:
    """The name the variant uses for the service with canonical ``key``."""
    return SERVICE_NAMES[variant][key]
