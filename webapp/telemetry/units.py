"""Units of Prometheus metrics: from the server's metadata, else from naming conventions."""

from __future__ import annotations

#: Name suffixes and the unit they declare (Prometheus/OpenMetrics naming conventions), longest
#: first so ``_per_second`` wins over ``_second``.
SUFFIX_UNITS = (
    ("_milliseconds", "ms"),
    ("_per_second", "/s"),
    ("_per_sec", "/s"),
    ("_seconds", "s"),
    ("_ratio", "ratio"),
    ("_percent", "%"),
    ("_celsius", "celsius"),
    ("_bytes", "bytes"),
    ("_bits", "bits"),
    ("_meters", "meters"),
    ("_volts", "volts"),
    ("_joules", "joules"),
    ("_grams", "grams"),
    ("_ms", "ms"),
)
#: Counter suffixes: queried as a per-second rate.
COUNTER_SUFFIXES = ("_total", "_count", "_sum", "_created")


def is_counter(metric: str, kind: str | None = None) -> bool:
    """True for counters (metadata type or the ``_total`` naming convention)."""
    if kind:
        return kind == "counter"
    return metric.endswith(COUNTER_SUFFIXES[:1])


def unit_for(metric: str, metadata_unit: str | None = None, counter: bool = False) -> str:
    """The unit of ``metric``'s values as queried (a counter's rate is per second)."""
    base = metric.removesuffix("_total").removesuffix("_sum") if counter else metric
    unit = (metadata_unit or "").strip()
    if not unit:
        unit = next((u for suffix, u in SUFFIX_UNITS if base.endswith(suffix)), "")
    if counter:
        return f"{unit}/s" if unit else "/s"
    return unit
