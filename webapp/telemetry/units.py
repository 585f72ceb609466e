"""Units of Prometheus metrics: from the server's metadata (its ``unit``, else the unit its
``help`` text names: "Request duration in seconds"), else from naming conventions."""

from __future__ import annotations

import re

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


def is_counter(metric: str, kind: str | None = None) -> bool:
    """True for counters (metadata type or the ``_total`` naming convention)."""
    if kind:
        return kind == "counter"
    return metric.endswith("_total")


#: Units a metric's help text may name ("... in seconds", "(bytes)"): the suffixes' words.
HELP_UNITS = {suffix[1:]: unit for suffix, unit in SUFFIX_UNITS if "_" not in suffix[1:]}
_HELP_UNIT = re.compile(r"(?:\bin\s+|\(\s*)(" + "|".join(HELP_UNITS) + r")\b", re.IGNORECASE)


def unit_for(
    metric: str,
    metadata_unit: str | None = None,
    counter: bool = False,
    help_text: str | None = None,
) -> str:
    """The unit of ``metric``'s values as queried (a counter's rate is per second)."""
    base = metric.removesuffix("_total").removesuffix("_sum") if counter else metric
    named = _HELP_UNIT.search(help_text or "")  # "Time spent in seconds" -> s
    unit = (metadata_unit or "").strip() or (HELP_UNITS[named.group(1).lower()] if named else "")
    if not unit:
        unit = next((u for suffix, u in SUFFIX_UNITS if base.endswith(suffix)), "")
    if counter:
        return f"{unit}/s" if unit else "/s"
    return unit


#: Units of measure as an answer writes them after a number. A count's noun (``requests``,
#: ``connections``), a ratio and a bare rate (``/s``) are left to the signal's name: they add
#: nothing to it, and backends disagree on them.
MEASURES = {
    **dict.fromkeys(("ns", "nanoseconds"), "ns"),
    **dict.fromkeys(("us", "µs", "microseconds"), "µs"),
    **dict.fromkeys(("ms", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "seconds"), "s"),
    **dict.fromkeys(("%", "percent"), "%"),
    **{word: word for word in ("bytes", "bits", "celsius", "meters", "volts", "joules", "grams")},
}


def spoken_unit(unit: str | None) -> str:
    """``unit`` as an answer writes it (``seconds`` -> ``s``, ``bytes/s``), or "" for one it
    leaves out (``requests``, ``ratio``, ``/s``)."""
    text = str(unit or "").strip()
    per_second = text.endswith("/s")
    word = MEASURES.get((text[:-2] if per_second else text).strip().lower())
    return f"{word}/s" if word and per_second else word or ""
