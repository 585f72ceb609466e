"""The offline executor: analyse each asked service, follow what the data names, bind claims.

Rounds: the plan's queries; then, along each asked service's chain, the end's ERROR/WARN lines
read for names of known services and the most often named one analysed (else its timing
candidates, or triage's route to its incident's leader); the culprit's rare INFO lines and a
runbook lookup; finally the ``executor_evidence_v2`` claims, bound to exact output leaves.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from diagnosis_graph.workflow.render import language_of

from ...analysis.names import stem
from ...analysis.triage import FIRST
from ...telemetry.units import spoken_unit
from ..compact import shown_items
from ..react import Budget
from . import alerts, suspects, values
from . import claims as kinds
from .causes import ELSEWHERE, Item, Match, classify, own_kind
from .claims import ClaimWriter
from .conversation import Catalog, Done, call
from .findings import Reading, Signal, readings
from .question import clock, iso, request_window

#: A service on a chain, with the onset by which it is on it.
Hop = tuple[Reading, datetime]
#: Follow-up rounds after the plan's (the ReAct loop allows six tool rounds in all).
MAX_FOLLOW_UP_ROUNDS = 5
TOOL_CALLS = Budget().max_tool_calls
#: A dependency is on the chain when one of its symptoms began from this before its caller's
#: onset to ``ORIGIN_SLACK`` after it.
ORIGIN_BEFORE = timedelta(minutes=15)
ORIGIN_SLACK = timedelta(minutes=5)
#: The evidence of a cause kind: from this before the culprit's onset (a disk fills for a
#: while) to ``CAUSE_AFTER`` after it.
CAUSE_LOOKBACK = timedelta(minutes=90)
CAUSE_AFTER = timedelta(minutes=30)
#: With a stated time, the asked service's onset is its first at most this before that time.
STATED_SLACK = timedelta(minutes=10)
#: Lines read for names: from just before the onset to the window's end (else this long).
NAMES_BEFORE = timedelta(minutes=1)
NAMES_WINDOW = timedelta(minutes=30)
NAMES_LIMIT = 100
#: INFO lines read for rare events: this long before the onset and after it.
EVENTS_BEFORE = timedelta(minutes=10)
EVENTS_AFTER = timedelta(minutes=3)
MAX_DEPENDENCIES = 2
MAX_TIMING_CANDIDATES = 2
#: A name part shorter than this relates no services (``db``, ``01``).
MIN_SHARED_PART = 4
#: Claims per service and per runbook.
MAX_MOVED = 3
MAX_NEW_LOGS = 2
MAX_EVENTS = 2
MAX_STEPS = 3
_ACTION_SECTION = re.compile(r"mitigat|remediat|fix|action|resolution|recover", re.I)
_ANALYSIS = ("detect_anomalies", "log_patterns")
#: A cause claim's signs when no metric of the culprit matched, by language.
_LOG_MESSAGES = {"en": "its log messages", "zh": "其日志消息"}
#: A cause claim binds at most this many items (the culprit's analysis window first).
MAX_CAUSE_BINDINGS = 8


def first_round(queries: Sequence[dict[str, Any]], catalog: Catalog) -> list[dict[str, Any]]:
    """The plan's queries the model may call, each once, within the tool budget."""
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for query in queries:
        key = (str(query.get("tool", "")), json.dumps(query.get("arguments", {}), sort_keys=True))
        if catalog.has(key[0]):
            kept.setdefault(key, query)
    return list(kept.values())[:TOOL_CALLS]


class Investigation:
    """What the tool results of one executor conversation show, and what to ask next."""

    def __init__(self, request: dict[str, Any], catalog: Catalog, done: Sequence[Done]) -> None:
        self.request = request
        self.catalog = catalog
        self.calls_made = len(done)
        self.made = [(d.tool, d.arguments) for d in done]
        self.done = [d for d in done if d.status == "SUCCESS"]
        self.readings = readings(self.done, catalog.services, catalog.aliases)
        planned = (request.get("plan") or {}).get("queries", [])
        named = dict.fromkeys(str(q.get("arguments", {}).get("service", "")) for q in planned)
        self.asked = (
            [s for s in named if s]
            # "why is <alert> firing?" is about the alert's own service (``window``)
            or ([] if alerts.named(request, self.done) else suspects.picked(self.done, self.stated))
            or list(self.readings)
        )

    def window(self) -> dict[str, str]:
        """The first ``detect_anomalies`` window (if stated), else triage's analysed one."""
        for d in self.done:
            if d.tool == "detect_anomalies":
                return {k: d.arguments[k] for k in ("start", "end") if d.arguments.get(k)}
        return suspects.analysed_window(self.done)

    def dependencies(self, service: str) -> list[str]:
        """Known services named by ``service``'s lines, most often named first."""
        reading = self.readings.get(service)
        if reading is None:
            return []
        ranked = sorted(reading.mentions.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [other for other, _ in ranked if other in self.catalog.services][:MAX_DEPENDENCIES]

    def timing_candidates(self, service: str) -> list[str]:
        """Other, unasked catalog services sharing a distinctive name part with ``service``
        (``pg-notify`` for ``notify_svc``), most parts shared first."""
        own = _name_parts(service)
        ranked = [
            (-len(own & _name_parts(other)), index, other)
            for index, other in enumerate(self.catalog.services)
            if other != service and other not in self.asked and own & _name_parts(other)
        ]
        return [other for _, _, other in sorted(ranked)][:MAX_TIMING_CANDIDATES]

    def follow_ups(self) -> list[dict[str, Any]]:
        """The next round's calls along each asked service's chain (none already made),
        within the tool budget."""
        wanted: list[dict[str, Any]] = []
        for service in self.asked:
            if self.unanalysed(service):
                wanted += self._analyse(service, asked=True)
                continue
            path = self.chain(service, settled=False)
            if not path:
                continue
            end, onset = path[-1]
            if not end.logs_read:
                wanted += self._lines(end, onset)
                continue
            fresh = [d for d in self.dependencies(end.service) if self.unanalysed(d)]
            timed = [o for o in self.timing_candidates(service) if self.unanalysed(o)]
            if fresh:
                wanted += self._analyse(fresh[0])
            elif len(path) == 1 and timed and path[0][0].symptoms:
                wanted += self._analyse(*timed)
            else:
                if not end.events_read:
                    span = {"start": iso(onset - EVENTS_BEFORE), "end": iso(onset + EVENTS_AFTER)}
                    wanted.append(call("log_patterns", service=end.service, level="INFO", **span))
                wanted += self._triage(service, path) if path[0][0].symptoms else []
        if all(w["tool"] == "log_patterns" for w in wanted):
            # only the culprits' events are left: the runbook lookup joins their round
            wanted += self._knowledge()
        room = TOOL_CALLS - self.calls_made
        calls = [
            w
            for w in wanted
            if (w["tool"], w["arguments"]) not in self.made and self.catalog.has(w["tool"])
        ]
        return calls[: max(room, 0)]

    def unanalysed(self, service: str) -> bool:
        """True when ``service`` has no ``detect_anomalies`` result yet."""
        reading = self.readings.get(service)
        return reading is None or reading.detect is None

    def _triage(self, service: str, path: list[Hop]) -> list[dict[str, Any]]:
        """When the chain stops at ``service`` with no cause kind, or at a kind whose cause
        lies elsewhere: ``triage``, then ``detect_anomalies`` of each suspect on its route."""
        match = self.match(service)
        elsewhere = match is not None and match.kind.key in ELSEWHERE
        if not elsewhere and (len(path) != 1 or match is not None):
            return []
        if suspects.triage_output(self.done) is None:
            return [suspects.triage_call(path[0][1], self.window().get("end"))]
        return self._analyse(*[h for h in suspects.route(self.done, service) if self.unanalysed(h)])

    def _analyse(self, *services: str, asked: bool = False) -> list[dict[str, Any]]:
        tools = _ANALYSIS if asked else _ANALYSIS[:1]
        return [call(tool, service=s, **self.window()) for s in services for tool in tools]

    def _lines(self, reading: Reading, onset: datetime) -> list[dict[str, Any]]:
        """ERROR lines from the onset on, and WARN lines when their rate moved."""
        levels = ["ERROR"] + [s.signal for s in reading.symptoms if s.kind == "log_rate"]
        window = (reading.detect.output if reading.detect else {}).get("window") or {}
        end = str(window.get("end") or "") or iso(onset + NAMES_WINDOW)
        span = {"start": iso(onset - NAMES_BEFORE), "end": end, "limit": NAMES_LIMIT}
        return [
            call("query_logs", service=reading.service, level=level, **span)
            for level in sorted(set(levels) & {"ERROR", "WARN"})
        ]

    def _knowledge(self) -> list[dict[str, Any]]:
        if self.request.get("mode") == "EVIDENCE_GAP_ONLY" or self.knowledge():
            return []
        matches = [m for s in self.asked if (m := self.match(s)) is not None]
        if not matches:
            return []
        query = " ".join(dict.fromkeys(m.kind.label for m in matches))
        return [call("lookup_knowledge", query=query[:300], top_k=5)]

    @cached_property
    def stated(self) -> datetime | None:
        """The onset the question states, if it states one (the plan's: a follow-up keeps it)."""
        return request_window(self.request).stated_onset

    def focus(self, reading: Reading) -> datetime | None:
        """An asked service's first onset from the stated time (less ``STATED_SLACK``) on."""
        stated, onsets = self.stated, reading.onsets
        later = [o for o in onsets if stated is None or o >= stated - STATED_SLACK]
        return next(iter(later or onsets), None)

    def chain(self, service: str, *, settled: bool = True) -> list[Hop]:
        """``service`` and the dependencies whose trouble began with their caller's, each with
        its onset: the last is the culprit. A service with only new messages follows named
        dependencies alone and, ``settled``, stands only on reaching a cause of its own."""
        current = self.readings.get(service)
        onset = self.focus(current) if current is not None else None
        if current is None or onset is None:
            return []
        path = [(current, onset)]
        while (hop := self._next(path, quiet=not current.symptoms)) is not None:
            path.append(hop)
        if settled and not current.symptoms and (len(path) == 1 or not _own_cause(*path[-1])):
            return []
        return path

    def _next(self, path: list[Hop], *, quiet: bool) -> Hop | None:
        """The most often named dependency whose trouble began with the end's (with a cause of
        its own when the end has one); else, for a start with symptoms, a timed or routed one."""
        current, onset = path[-1]
        own = _own_cause(current, onset)
        for name in self.dependencies(current.service):
            dep = self.readings.get(name)
            if dep is None or any(name == r.service for r, _ in path):
                continue
            near = _near(dep, onset)
            if near is None:  # a cause of its own may have built up for long (a leak)
                early = _near(dep, onset, CAUSE_LOOKBACK)
                near = early if early is not None and _own_cause(dep, early) else None
            if near is None or (own and not _own_cause(dep, near)):
                continue
            if current.service in self.dependencies(name):
                # they name each other: the later one follows; at the same minute, the one
                # spelling the other's own name more often leads
                ahead = _literal(current, name) > _literal(dep, current.service)
                if near > onset or (near == onset and not ahead):
                    continue
            return dep, near
        if own or quiet:
            return None
        timed = self._timed(current, onset) if len(path) == 1 else None
        return timed or self._routed(path)

    def _routed(self, path: list[Hop]) -> Hop | None:
        """The next suspect on triage's route from the chain's start near the end's onset."""
        end, onset = path[-1][0].service, path[-1][1]
        for name in suspects.route(self.done, path[0][0].service):
            hop = self.readings.get(name)
            if hop is None or any(name == r.service for r, _ in path):
                continue
            near = _near(hop, onset, suspects.NEAR_BEFORE)
            if _client(hop, end, near, onset):
                continue
            return (hop, near) if near is not None else None
        return None

    def _timed(self, caller: Reading, onset: datetime) -> Hop | None:
        """The first timing candidate whose trouble began with the caller's and that shows a
        cause kind, never a client of it."""
        for name in self.timing_candidates(caller.service):
            dep = self.readings.get(name)
            near = _near(dep, onset) if dep is not None else None
            if dep is None or near is None or _client(dep, caller.service, near, onset):
                continue
            items = _signal_items(
                [s for s in dep.signals if s.onset >= near - CAUSE_LOOKBACK], True
            )
            items += [Item("log", t.template, True) for t in dep.new_templates()]
            if classify(items) is not None:
                return dep, near
        return None

    def match(self, service: str) -> Match | None:
        """The cause kind the evidence along ``service``'s chain indicates."""
        return _match(self.chain(service))

    def knowledge(self) -> list[tuple[Done, list[dict[str, Any]]]]:
        """The knowledge lookups that found documents."""
        return [
            (d, [doc for _, doc in shown_items(d.output.get("documents"))])
            for d in self.done
            if d.tool == "lookup_knowledge" and d.output.get("documents")
        ]


#: Name parts that say what a service is built with or its role, not whose it is.
TECHNOLOGY_PARTS = frozenset(
    re.findall(
        r"\w+",
        "mysql maria mariadb postgres postgresql redis valkey memcached kafka nats rabbit"
        " rabbitmq mongo mongodb elastic jobs events consumer queue cache store stream proxy"
        " router edge core",
    )
)


def _near(reading: Reading, onset: datetime, before: timedelta = ORIGIN_BEFORE) -> datetime | None:
    """``reading``'s first onset from ``before`` before ``onset`` to ``ORIGIN_SLACK`` after it."""
    return next((o for o in reading.onsets if onset - before <= o <= onset + ORIGIN_SLACK), None)


def _client(reading: Reading, service: str, near: datetime | None, onset: datetime) -> bool:
    """Whether ``reading``'s lines name ``service`` and its trouble did not begin ``FIRST``
    before ``service``'s (then it is a server logging its client)."""
    return service in reading.mentions and (near is None or near + FIRST >= onset)


def _items(reading: Reading, at: datetime, own: bool) -> list[Item]:
    """The evidence ``reading`` offers for a cause kind around its onset ``at``."""
    since = at - (CAUSE_LOOKBACK if own else ORIGIN_BEFORE)
    until = at + CAUSE_AFTER
    items = _signal_items([s for s in reading.signals if since <= s.onset <= until], own)
    new = [t for t in reading.new_templates() if t.first_seen is None or t.first_seen <= until]
    items += [Item("log", t.template, own) for t in new]
    return items + [Item("event", t.example, own) for t in reading.events]


def _signal_items(signals: list[Signal], own: bool) -> list[Item]:
    """Metric and log-pattern findings as evidence for a cause kind."""
    kind = {"metric": "metric", "log_pattern": "log"}
    return [Item(kind[s.kind], s.signal, own) for s in signals if s.kind in kind]


def _match(path: list[Hop]) -> Match | None:
    """The cause kind the evidence along ``path`` indicates, the culprit's (the last) as its own."""
    return classify([i for r, at in path for i in _items(r, at, r is path[-1][0])])


def _own_cause(reading: Reading, at: datetime) -> bool:
    """Whether ``reading``'s own evidence shows a cause kind that lies in itself."""
    return own_kind(classify(_items(reading, at, True)))


def _name_parts(service: str) -> set[str]:
    """The distinctive parts of a service name (``pg-notify`` -> ``{notify}``)."""
    return {
        p
        for p in stem(service).split("-")
        if len(p) >= MIN_SHARED_PART and p.isalpha() and p not in TECHNOLOGY_PARTS
    }


def _literal(reading: Reading, other: str) -> int:
    """How many of ``reading``'s lines spell ``other``'s own name."""
    return sum(m.literal for m in reading.mentions.get(other, ()))


def _number(value: Any) -> str:
    # the text the gatekeeper renders the value as, so the statement quotes it exactly
    return json.dumps(value)


def _quantity(writer: ClaimWriter, kind: kinds.ClaimKind, signal: Signal) -> None:
    """A ``moved`` or ``traffic`` claim that ``signal`` moved from its baseline, bound to its
    name and the unit the answer writes."""
    raw = signal.raw
    bindings = [signal.leaf]
    if spoken_unit(raw.get("unit")):
        bindings.append((signal.invocation_id, f"$.findings[{signal.index}].unit", raw["unit"]))
    writer.add(
        kind,
        bindings,
        service=signal.service,
        signal=signal.signal,
        direction=kinds.direction(str(raw.get("direction", "")), writer.language),
        onset=clock(signal.onset),
        baseline=_number((raw.get("baseline") or {}).get("median")),
        peak=_number((raw.get("incident") or {}).get("peak")),
        incident=_number((raw.get("incident") or {}).get("median")),
        change=str(raw.get("change", "")),
        z=_number(raw.get("significance")),
    )


def _symptoms(
    writer: ClaimWriter, reading: Reading, since: datetime, moved: int = MAX_MOVED, logs: int = 0
) -> None:
    """The ``moved`` most significant symptoms since ``since``, metrics first (they carry
    magnitudes), and the first ``logs`` new messages."""
    ranked = sorted(
        reading.since(since),
        key=lambda s: (s.kind != "metric", -s.significance, s.onset, s.signal),
    )
    for signal in ranked[:moved]:
        _quantity(writer, kinds.MOVED, signal)
    for template in reading.new_templates()[:logs]:
        writer.add(
            kinds.NEW_LOGS,
            [template.leaf("example"), template.leaf("count_after"), template.leaf("first_seen")],
            service=template.service,
            count=_number(template.raw.get("count_after")),
            first_seen=str(template.raw.get("first_seen", "")),
            example=template.example,
        )


def _steady(writer: ClaimWriter, service: str, detect: Done) -> None:
    result = detect.output
    count = result.get("healthy_signals")
    if not count:
        return  # nothing was examined (no data): no evidence of health
    window = result.get("window") or {}
    leaves = [("healthy_signals", count)] + [
        (f"window.{k}", window.get(k)) for k in ("start", "end")
    ]
    writer.add(
        kinds.STEADY,
        [(detect.invocation_id, f"$.{path}", value) for path, value in leaves],
        service=service,
        count=_number(count),
        start=str(window.get("start", "")),
        end=str(window.get("end", "")),
    )


def _cause(writer: ClaimWriter, culprit: Reading, match: Match, readings_: list[Reading]) -> None:
    """``<culprit> shows the signs of <kind>: <matched metrics>``, bound to every matched item."""
    metrics = {i.text for i in match.items if i.kind == "metric"}
    logs = {i.text for i in match.items if i.kind == "log"}
    lines = logs | {i.text for i in match.items if i.kind == "event"}
    bindings: list[tuple[str, str, Any]] = []
    if culprit.detect is not None:  # first, so the cap keeps it: it grounds the culprit's name
        window = culprit.detect.output.get("window", {})
        bindings.append((culprit.detect.invocation_id, "$.window.start", window.get("start")))
    for r in readings_:
        bindings += [s.leaf for s in r.signals if s.kind == "metric" and s.signal in metrics]
        templates = [*r.new_templates(), *r.events]
        bindings += [t.leaf("example") for t in templates if {t.template, t.example} & lines]
        bindings += [s.leaf for s in r.symptoms if s.kind == "log_pattern" and s.signal in logs]
    names = [s.signal for s in culprit.signals if s.kind == "metric" and s.signal in metrics]
    signs = ", ".join(dict.fromkeys(names)) or _LOG_MESSAGES[writer.language]
    writer.add(
        kinds.CAUSE,
        bindings[:MAX_CAUSE_BINDINGS],
        culprit=culprit.service,
        mechanism=match.kind.says(writer.language),
        signals=signs,
    )


def _origin(writer: ClaimWriter, culprit: Hop, victim: Hop, *, timed: bool = False) -> None:
    """The culprit's earliest relevant symptom against the victim's onset (``timed``: the link
    rests on timing alone)."""
    reading, onset = culprit
    since = onset - CAUSE_LOOKBACK
    first = min(reading.since(since), key=lambda s: (s.onset, -s.significance), default=None)
    signal = victim[0].at(victim[1])
    # the victim's trouble may be only a new message (too few lines to move a rate)
    logged = [t for t in victim[0].new_templates() if t.first_seen == victim[1]]
    theirs = signal.leaf if signal else logged[0].leaf("first_seen") if logged else None
    if first is None or theirs is None:
        return
    writer.add(
        kinds.ORIGIN_TIMING if timed else kinds.ORIGIN,
        [first.leaf, theirs],
        culprit=reading.service,
        signal=first.signal,
        onset=clock(first.onset),
        victim=victim[0].service,
        victim_onset=clock(victim[1]),
    )


def _names(writer: ClaimWriter, path: Sequence[Reading]) -> None:
    """Each hop of the chain: the line by which a service names the next one."""
    for caller, callee in itertools.pairwise(path):
        mentions = caller.mentions.get(callee.service, [])
        line = next((m for m in mentions if callee.service.lower() in m.message.lower()), None)
        if line is not None:
            excerpt = _around(line.message, callee.service)
            named = {"service": caller.service, "dependency": callee.service, "excerpt": excerpt}
            writer.add(kinds.NAMES, [(line.invocation_id, line.path, excerpt)], **named)


def _around(message: str, name: str, width: int = 60) -> str:
    """The text around ``name`` in ``message``, cut at whitespace (a token boundary)."""
    at = message.lower().find(name.lower())
    if at < 0:
        return message
    start, end = max(0, at - width), min(len(message), at + len(name) + width)
    while start > 0 and not message[start - 1].isspace():
        start -= 1
    while end < len(message) and not message[end].isspace():
        end += 1
    return message[start:end].strip()


def write_claims(inv: Investigation, writer: ClaimWriter) -> None:
    """One finding per asked service: its symptoms, the chain to the culprit, the cause kind."""
    for service in inv.asked:
        reading = inv.readings.get(service)
        if reading is None or reading.detect is None:
            continue
        path = inv.chain(service)
        if not path:
            _steady(writer, service, reading.detect)
            for signal in reading.traffic[:MAX_MOVED]:
                _quantity(writer, kinds.TRAFFIC, signal)
            continue
        culprit, match = path[-1][0], _match(path)
        _symptoms(writer, reading, path[0][1] - ORIGIN_BEFORE, logs=MAX_NEW_LOGS)
        if len(path) > 1:
            _names(writer, [r for r, _ in path])
            for hop, at in path[1:-1]:  # every service on the way has its own evidence
                _symptoms(writer, hop, at - ORIGIN_BEFORE, 1)
            _symptoms(writer, culprit, path[-1][1] - CAUSE_LOOKBACK, logs=MAX_NEW_LOGS)
            # a link no line names rests on timing alone
            timed = any(
                b.service not in inv.dependencies(a.service)
                for (a, _), (b, _) in itertools.pairwise(path)
            )
            _origin(writer, path[-1], path[0], timed=timed)
        if match is None:
            continue
        # the rare lines around the onset that are signs of the cause kind
        events = {i.text for i in match.items if i.kind == "event"}
        ranked = sorted(culprit.events, key=lambda t: t.index)
        for template in [t for t in ranked if t.example in events][:MAX_EVENTS]:
            writer.add(
                kinds.EVENT,
                [template.leaf("example"), template.leaf("first_seen")],
                service=template.service,
                time=str(template.raw.get("first_seen", "")),
                message=template.example,
            )
        _cause(writer, culprit, match, [r for r, _ in path])
    _runbook_claims(inv, writer)


def _runbook_claims(inv: Investigation, writer: ClaimWriter) -> None:
    """The first lookup's runbook (its best document's title) and the steps of its first
    action section."""
    for done, documents in inv.knowledge():
        title = str(documents[0].get("title", "")).split(" > ")[0]
        if not title:
            continue
        book = (done.invocation_id, "$.documents[0].title", title)
        writer.add(kinds.RUNBOOK, [book], title=title)
        actions = (
            (index, doc)
            for index, doc in enumerate(documents)
            if str(doc.get("title", "")).split(" > ")[0] == title
            and _ACTION_SECTION.search(str(doc.get("title", "")))
        )
        index, doc = next(actions, (0, {}))
        for step in list_items(str(doc.get("content", "")))[:MAX_STEPS]:
            path = f"$.documents[{index}].content"
            writer.add(kinds.STEP, [(done.invocation_id, path, step)], step=step)
        return


_ITEM = re.compile(r"\s*[-*]\s+(.*)")
_CONTINUED = re.compile(r"\s+\S")  # an indented line: the item above wraps onto it


def list_items(markdown: str) -> list[str]:
    """The bullet items of ``markdown``, each whole: a wrapped item's indented lines joined."""
    items: list[str] = []
    open_item = False
    for line in markdown.splitlines():
        bullet = _ITEM.fullmatch(line)
        if bullet:
            items.append(bullet.group(1).strip())
        elif open_item and _CONTINUED.match(line):
            items[-1] += " " + line.strip()
            continue
        open_item = bool(bullet)
    return items


def final_evidence(
    request: dict[str, Any], catalog: Catalog, done: Sequence[Done]
) -> dict[str, Any]:
    """The ``executor_evidence_v2`` snapshot: earlier verified claims plus new ones."""
    earlier = list(request.get("verified_claims") or [])
    language = language_of(str(request.get("question", "")))
    writer = ClaimWriter(first=kinds.next_number(earlier), language=language)
    writer.written = {str(c.get("statement")) for c in earlier}
    for kind, bindings, fields in values.claims(request, done):
        writer.add(kind, bindings, **fields)
    investigation = Investigation(request, catalog, done)
    write_claims(investigation, writer)
    keep = [{k: c[k] for k in ("claim_id", "statement", "critical", "bindings")} for c in earlier]
    claims = keep + writer.claims
    return {
        "version": "executor_evidence_v2",
        "claims": claims,
        "summary": f"{len(claims)} claims from {len(done)} tool results about "
        f"{', '.join(investigation.asked) or 'no service'}.",
    }
