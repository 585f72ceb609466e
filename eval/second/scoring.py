"""The second generator's scorer: deterministic, with its own vocabulary.

Only the answer's conclusion counts (``eval.second.reading``). Per outcome:

* **incident** - right when it names every expected culprit (name or declared alias) with its
  mechanism (the words any competent write-up uses for it in English or Chinese, or its
  distinctive log line quoted: ``Fault.words``), no sentence about a culprit gives it another
  mechanism without its own (a quoted log line does not rescue "cause: consumer lag"), neither
  a culprit nor the asked service is called healthy (a *false healthy*; "no problem found"
  about nothing in particular counts too when no culprit is named), and it is not a shotgun
  (more than three services outside the incidents and the question, or more than two other
  mechanisms). A right answer is **complete** when it also states, for every culprit, the
  onset within 5 minutes (a clock time in UTC or in the question's zone) and a quantity: a
  number with a unit, a counted number ("1,024 open files") or an ``a -> b`` change whose ends
  may be bare, within 25% (plus 2% of the larger of baseline and peak) of the baseline, the
  settled level or the peak of one of the fault's key signals or of the first victim's symptom.
* **healthy** - right when the asked service is said to be fine (or nothing is found at all)
  and no sentence about it, or about nothing in particular, calls something degraded or gives
  a cause.
* **out_of_range** - right when the answer says the data does not cover that time (in the
  conclusion or in its stated window and limitations) and neither calls the service healthy
  nor gives a cause.
* **value** - right when a number of the conclusion equals the series' value at that minute
  or one step either side (within 2%, or to the precision written), in the series' unit or
  converted from the one written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eval.second.cases import Case, Expect
from eval.second.catalog import System
from eval.second.mechanisms import FAULTS
from eval.second.reading import (
    TRUTH_UNITS,
    Number,
    Reading,
    changes,
    clock_minutes,
    names_in,
    numbers,
    read,
    sentences,
)
from eval.second.truth import Quantity, Truth

#: Causes an analyser may claim that none of the mechanisms is (counted for the shotgun).
OTHER_CAUSES = {
    "slow_dependency": r"slow dependency|downstream (timeout|slow)|依赖变慢",
    "cache_eviction": r"cache (eviction|miss)|evict|缓存(淘汰|未命中)",
    "disk_full": r"disk (is )?full|no space left|磁盘(已满|满)",
    "cpu_saturation": r"cpu saturat|cpu throttl|CPU ?饱和",
    "consumer_lag": r"consumer lag|backlog builds|消费(延迟|积压)",
    "certificate": r"certificate|\bTLS\b|handshake|证书",
    "gc_pause": r"\bGC pause|garbage collect|垃圾回收",
}
_HEALTHY = re.compile(
    r"no evidence of (a |any )?problem|no (problem|issue|anomal\w*)s?( found| detected)?\b|"
    r"(is|are|looks?|seems?|was|were) (healthy|fine|ok(ay)?|normal)\b|"
    r"(?<!un)(?<!not )healthy(?! signal)|"
    r"nothing (is |was )?(wrong|unusual)|no significant change|none of its \d+ signals moved|"
    r"没有证据表明|未发现(问题|异常)|没有(发现)?(问题|异常)|无异常|(?<!不)正常|(?<!不)健康|均无显著变化",
    re.I,
)
_TROUBLE = re.compile(
    r"\bdegraded\b|\bunhealthy\b|not healthy|\bis failing\b|(likely|root|probable) cause|caused by|"
    r"triggered by|出现异常|不正常|可能的原因|根因|导致",
    re.I,
)
_RANGE = re.compile(
    r"(data|telemetry|metrics?|logs?) (only )?(covers?|starts?|begins?|is available|spans?|runs?)|"
    r"outside (the|its) (data|range|window)|no data (for|before|from|at|on)|not covered|"
    r"before the data|beyond the data|nothing before|out of (the )?range|"
    r"数据(只|仅)?(覆盖|范围|从|起始|开始)|超出(了)?(数据)?(的)?范围|没有.{0,8}数据|不在.{0,6}范围",
    re.I,
)


Aliases = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Verdict:
    """How one answer scored and why."""

    correct: bool
    reason: str
    false_healthy: bool = False
    complete: bool = False


def _healthy_about(
    reading: Reading, services: Sequence[str], aliases: Aliases
) -> tuple[set[str], bool]:
    """Services the conclusion calls healthy, and whether it says so of nothing in particular."""
    named: set[str] = set()
    generic = False
    for sentence in sentences(reading.conclusion):
        if _HEALTHY.search(sentence):
            found = names_in(sentence, services, aliases)
            named |= found
            generic = generic or not found
    return named, generic


def _claims(text: str) -> set[str]:
    """The mechanisms (and other causes) ``text`` names."""
    found = {key for key, fault in FAULTS.items() if re.search(fault.words, text, re.I)}
    return found | {key for key, words in OTHER_CAUSES.items() if re.search(words, text, re.I)}


def _misnamed(text: str, truth: Truth, services: Sequence[str], aliases: Aliases) -> bool:
    """True when a sentence about the culprit gives it another mechanism and not its own."""
    for sentence in sentences(text):
        if truth.culprit in names_in(sentence, services, aliases):
            claims = _claims(sentence)
            if claims - {truth.mechanism} and truth.mechanism not in claims:
                return True
    return False


def _incident(case: Case, reading: Reading, services: Sequence[str], aliases: Aliases) -> Verdict:
    expect, text = case.expect, reading.conclusion
    named = names_in(text, services, aliases)
    healthy, generic = _healthy_about(reading, services, aliases)
    culprits = {t.culprit for t in expect.truths}
    if culprits & healthy or expect.service in healthy or (generic and not culprits & named):
        return Verdict(False, "false healthy: says the culprit or the asked service is fine", True)
    missing = [t.culprit for t in expect.truths if t.culprit not in named]
    if missing:
        return Verdict(False, f"culprit not named: {', '.join(missing)}")
    claimed = _claims(text)
    wrong = [
        t.mechanism
        for t in expect.truths
        if t.mechanism not in claimed or _misnamed(text, t, services, aliases)
    ]
    if wrong:
        return Verdict(False, f"mechanism not named: {', '.join(wrong)}")
    extra_services = named - set(expect.allowed)
    extra_causes = claimed - {t.mechanism for t in expect.truths}
    if len(extra_services) > 3 or len(extra_causes) > 2:
        return Verdict(False, f"shotgun: {sorted(extra_services)} {sorted(extra_causes)}")
    complete = all(_onset(reading, t, expect) and _quantity(reading, t) for t in expect.truths)
    return Verdict(True, "right" + ("" if complete else ", incomplete"), complete=complete)


def _onset(reading: Reading, truth: Truth, expect: Expect) -> bool:
    """True when the conclusion states an onset within 5 minutes (UTC or the question's zone)."""
    stated = clock_minutes(reading.conclusion)
    for onset in truth.onsets:
        minute = onset.hour * 60 + onset.minute + onset.second / 60
        for offset in {0, expect.zone_minutes}:
            target = (minute + offset) % 1440
            if any(min(abs(m - target), 1440 - abs(m - target)) <= 5 for m in stated):
                return True
    return False


def _scale(number: Number, unit: str) -> float | None:
    """The factor a value in ``unit`` takes to compare with ``number`` (None: incomparable)."""
    dimension, factor = TRUTH_UNITS.get(unit, ("count", 1.0))
    if number.dimension == dimension:
        return factor
    return 1.0 if number.dimension == "" else None


def _matches(number: Number, quantity: Quantity) -> bool:
    """True when ``number`` is the baseline, the settled level or the peak of ``quantity``."""
    scale = _scale(number, quantity.unit)
    if scale is None:
        return False
    floor = 0.02 * max(abs(quantity.baseline), abs(quantity.peak))
    levels = (quantity.baseline, quantity.plateau, quantity.peak)
    return any(abs(number.value - v * scale) <= (0.25 * abs(v) + floor) * scale for v in levels)


def _quantity(reading: Reading, truth: Truth) -> bool:
    """True when the conclusion states a quantity of the incident."""
    text = reading.conclusion
    pairs = changes(text)
    for quantity in truth.quantities:
        if any(_matches(a, quantity) or _matches(b, quantity) for a, b in pairs):
            return True
        dimension = TRUTH_UNITS.get(quantity.unit, ("count", 1.0))[0]
        if any(n.dimension == dimension and _matches(n, quantity) for n in numbers(text)):
            return True
    return False


def _healthy(case: Case, reading: Reading, services: Sequence[str], aliases: Aliases) -> Verdict:
    service = case.expect.service
    healthy, generic = _healthy_about(reading, services, aliases)
    if service not in healthy and not (
        generic and not names_in(reading.conclusion, services, aliases) - {service}
    ):
        return Verdict(False, f"does not say {service} is fine")
    for sentence in sentences(reading.conclusion):
        about = names_in(sentence, services, aliases)
        if _TROUBLE.search(sentence) and (service in about or not about):
            return Verdict(False, f"claims trouble: {sentence[:80]}")
    return Verdict(True, "right")


def _out_of_range(
    case: Case, reading: Reading, services: Sequence[str], aliases: Aliases
) -> Verdict:
    if not _RANGE.search(f"{reading.conclusion}\n{reading.limits}"):
        return Verdict(False, "does not say the data does not cover that time")
    healthy, generic = _healthy_about(reading, services, aliases)
    if case.expect.service in healthy or generic:
        return Verdict(False, "calls the service fine for a time with no data")
    if any(_TROUBLE.search(s) for s in sentences(reading.conclusion)):
        return Verdict(False, "claims trouble for a time with no data")
    return Verdict(True, "right")


def _value(case: Case, reading: Reading) -> Verdict:
    expect = case.expect
    for number in numbers(reading.conclusion):
        scale = _scale(number, expect.unit)
        if scale is None:
            continue
        written = reading.conclusion[number.start : number.end]
        decimals = len(re.sub(r"[^\d].*", "", written.split(".", 1)[1])) if "." in written else 0
        precision = 0.5 * 10**-decimals * number.factor
        if any(
            abs(number.value - v * scale) <= max(0.02 * abs(v * scale), precision)
            for v in expect.values
        ):
            return Verdict(True, "right")
    return Verdict(False, f"no value of {expect.metric} near {expect.values}")


def score(case: Case, answer: str | None, system: System) -> Verdict:
    """The verdict on ``answer`` to ``case`` about ``system``."""
    if not answer or not answer.strip():
        return Verdict(False, "no answer")
    reading = read(answer, case.turns[-1])
    services = [s.name for s in system.services]
    aliases = {s.name: s.aliases for s in system.services}
    outcome = case.expect.outcome
    if outcome == "incident":
        return _incident(case, reading, services, aliases)
    if outcome == "healthy":
        return _healthy(case, reading, services, aliases)
    if outcome == "out_of_range":
        return _out_of_range(case, reading, services, aliases)
    return _value(case, reading)
