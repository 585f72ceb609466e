"""``triage``: every service of the catalog checked for a change near a window, ranked.

The raw output of the ``triage`` tool, built on each service's ``detect_anomalies`` output
(``analyse``) and the firing alerts. A service is a *suspect* when a finding's onset, or a
firing alert's ``active_at``, falls in ``[start, end]``; every other service is quiet.

Suspects are linked by **log lines** from just before a suspect's onset that name another (its
name, an alias, its ``instance`` address, a host name built on its name) or say a name could
not be resolved (a link to the suspect serving DNS), turned around when the named one began
more than ``FIRST`` later (``_turn_around``); else by **timing**, to one whose trouble began at
most ``TIMING`` earlier, unless a line shows the later one acted first (``_acted``). Linked
suspects form one *incident*, led by the one whose trouble began first (``_rank``). ``score`` is
the significance of a suspect's three strongest findings, in units of 100, plus one per firing
alert; ``hint`` marks the suspects a business description names (``described``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..telemetry import TelemetryBackend, TelemetryError
from ..telemetry.common import iso
from .logpatterns import named_in, named_services, owners
from .names import described_services
from .series import parse_stamp

#: How far before a suspect's onset its lines are read for the names of others, and after.
LINES_BEFORE = timedelta(minutes=1)
LINES_AFTER = timedelta(minutes=15)
LINES_LIMIT = 100
#: A suspect whose lines name no other suspect is tied to one whose trouble began at most this
#: earlier (onsets are found per bucket: a minute at a two-hour window, three at six hours).
TIMING = timedelta(minutes=3)
#: A suspect whose trouble began more than this before that of one its lines name began first:
#: it logs a client of its own, which follows it.
FIRST = timedelta(minutes=1)
#: A suspect silent this long before a line that starts it began then (a job).
QUIET_BEFORE = timedelta(minutes=5)
#: Suspects reported (the rest count among ``more_suspects``).
MAX_SUSPECTS = 10
#: Findings, templates and alerts listed per suspect; evidence lines cut to this size.
MAX_LISTED = 5
MAX_EVIDENCE = 240
#: Alerts of these severities are not evidence on their own (a heartbeat, an information).
QUIET_SEVERITIES = frozenset({"none", "info"})

Analyse = Callable[[str], Mapping[str, Any]]


@dataclass
class Suspect:
    """One service that changed in the window, with its own evidence and its links."""

    service: str
    onset: datetime
    findings: list[Mapping[str, Any]]
    alerts: list[Mapping[str, Any]]
    links: list[dict[str, str]] = field(default_factory=list)
    incident: int = 0

    @property
    def score(self) -> float:
        strongest = sorted((float(f.get("significance") or 0) for f in self.findings), reverse=True)
        return round(sum(strongest[:3]) / 100 + len(self.alerts), 2)

    def as_dict(self, described: bool) -> dict[str, Any]:
        """The raw-output shape of a suspect."""
        signals = [str(f["signal"]) for f in self.findings if f.get("kind") != "log_pattern"]
        templates = [str(f["signal"]) for f in self.findings if f.get("kind") == "log_pattern"]
        return {
            "service": self.service,
            "onset": iso(self.onset),
            "score": self.score,
            "incident": self.incident,
            "described": described,
            "signals": signals[:MAX_LISTED],
            "new_log_templates": templates[:MAX_LISTED],
            "alerts": [
                {k: a.get(k) for k in ("alert_name", "severity", "active_at")}
                for a in self.alerts[:MAX_LISTED]
            ],
            "links": self.links,
        }


def triage(
    backend: TelemetryBackend,
    window: tuple[datetime, datetime],
    analyse: Analyse,
    *,
    hint: str | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
    descriptions: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The ``triage`` raw output over ``window`` (``analyse(service)``: its detect_anomalies
    output over the analysed range, which reaches back before ``window`` for baselines)."""
    start, end = window
    aliases = aliases or {}
    services = backend.services()
    suspects, unreadable, analysed = _suspects(backend, services, window, analyse)
    _link(backend, suspects, aliases, end)
    ranked = _rank(suspects)
    wanted = _described(backend, services, hint, aliases, descriptions or {})
    return {
        "window": {"start": iso(start), "end": iso(end), "analysed_start": analysed or iso(start)},
        "suspects": [s.as_dict(s.service in wanted) for s in ranked[:MAX_SUSPECTS]],
        "more_suspects": max(0, len(ranked) - MAX_SUSPECTS),
        "described": wanted,
        "quiet_services": len(services) - len(suspects) - len(unreadable),
        "unreadable_services": unreadable,
    }


def _suspects(
    backend: TelemetryBackend,
    services: Sequence[str],
    window: tuple[datetime, datetime],
    analyse: Analyse,
) -> tuple[list[Suspect], list[str], str | None]:
    """The services that changed in ``window``, those that could not be read, and where the
    analysed range began."""
    start, end = window
    firing = _firing(backend, start, end)
    suspects: list[Suspect] = []
    unreadable: list[str] = []
    analysed: str | None = None
    for service in services:
        try:
            report = analyse(service)
        except TelemetryError:  # a service one backend lists and another does not know
            unreadable.append(service)
            continue
        analysed = str((report.get("window") or {}).get("start") or analysed or "") or None
        near = [f for f in report.get("findings") or [] if start <= parse_stamp(f["onset"]) <= end]
        alerts = firing.get(service, [])
        evidence = [parse_stamp(f["onset"]) for f in near]
        evidence += [parse_stamp(a["active_at"]) for a in alerts if a.get("active_at")]
        if near or any(a.get("severity") not in QUIET_SEVERITIES for a in alerts):
            suspects.append(Suspect(service, min(evidence), near, alerts))
    return suspects, unreadable, analysed


def _described(
    backend: TelemetryBackend,
    services: Sequence[str],
    hint: str | None,
    aliases: Mapping[str, Sequence[str]],
    descriptions: Mapping[str, Sequence[str]],
) -> list[str]:
    """The services ``hint`` describes best (ties kept; none without a hint), by everything that
    says what each is: its name, aliases, descriptions, and the ``LABELS`` of its metrics."""
    if not hint:
        return []
    by_service = backend.metrics_by_service()
    words = {}
    for service in services:
        metrics = by_service.get(service) or []
        words[service] = [service, *aliases.get(service, ()), *descriptions.get(service, ())]
        if metrics:
            words[service] += _labels(backend, service, metrics[0])
    ranked = described_services(hint, words)
    best = ranked[0][1] if ranked else 0.0
    return sorted(service for service, score in ranked if score == best and best > 0)


#: Metric labels whose values name what a service is or who runs it.
LABELS = ("job", "team", "app", "component")


def _labels(backend: TelemetryBackend, service: str, metric: str) -> list[str]:
    """The ``LABELS`` values of one of its series (read over the last minute of its data)."""
    end = backend.reference_time()
    found = _answer(
        backend.query_metrics, service=service, metric=metric, start=end - LINES_BEFORE, end=end
    )
    values = {
        str(value)
        for series in found.get("series") or []
        for key, value in (series.get("labels") or {}).items()
        if key in LABELS and value and value != service
    }
    return sorted(values)


def _firing(
    backend: TelemetryBackend, start: datetime, end: datetime
) -> dict[str, list[Mapping[str, Any]]]:
    """Firing alerts that became active in the window, by service ({} without alerts)."""
    alerts = _answer(backend.query_alerts, state="firing").get("alerts") or []
    found: dict[str, list[Mapping[str, Any]]] = {}
    for alert in alerts:
        active = alert.get("active_at")
        if active and start <= parse_stamp(active) <= end:
            found.setdefault(str(alert.get("service")), []).append(alert)
    return found


def _link(
    backend: TelemetryBackend,
    suspects: list[Suspect],
    aliases: Mapping[str, Sequence[str]],
    end: datetime,
) -> None:
    """Each suspect's links: lines naming another suspect, else timing (module docstring)."""
    instances = {s.service: _instances(backend, s) for s in suspects}
    names = {s: [*aliases.get(s, ()), *_hosts(found)] for s, found in instances.items()}
    resolvers = [s for s, found in instances.items() if any(i.endswith(":53") for i in found)]
    others = [s.service for s in suspects]
    read: dict[str, list[str]] = {}
    for suspect in suspects:
        records = _lines(backend, suspect, end)
        lines = read[suspect.service] = [str(r.get("message", "")) for r in records]
        table = owners(others, names, suspect.service)
        for other in named_services(records, others, suspect.service, names):
            line = next((m for m in lines if other in named_in(m.lower(), table)), "")
            suspect.links.append({"to": other, "how": "log", "evidence": line[:MAX_EVIDENCE]})
    _turn_around(suspects)
    for suspect in suspects if resolvers else []:
        failed = next((m for m in read[suspect.service] if _RESOLUTION.search(m)), "")
        link = {"how": "log", "evidence": failed[:MAX_EVIDENCE]}
        for resolver in resolvers if failed else []:
            if resolver != suspect.service and all(k["to"] != resolver for k in suspect.links):
                suspect.links.append({"to": resolver, **link})
    for suspect in suspects:
        if suspect.links:
            continue
        earlier = [
            o
            for o in suspects
            if o is not suspect
            and o.onset < suspect.onset <= o.onset + TIMING
            and not any(link["to"] == suspect.service for link in o.links)
        ]
        for first in sorted(earlier, key=lambda o: (o.onset, -o.score))[:1]:
            acted = _acted(backend, suspect, first)
            if acted:  # it acted in the other's first minute on what the other measures
                first.links.append({"to": suspect.service, "how": "log", "evidence": acted})
                continue
            gap = int((suspect.onset - first.onset).total_seconds() // 60)
            evidence = f"began {gap} min after {first.service} (no line names it)"
            suspect.links.append({"to": first.service, "how": "timing", "evidence": evidence})


def _turn_around(suspects: Sequence[Suspect]) -> None:
    """A suspect whose lines name one other (not several: a proxy), whose trouble began more
    than ``FIRST`` after its own and whose lines do not name it back, logs a client: the link is
    turned around."""
    by_name = {s.service: s for s in suspects}
    for suspect in suspects:
        if len(suspect.links) != 1:  # in front of several (a proxy), or naming none
            continue
        link = suspect.links[0]
        other = by_name[link["to"]]
        if suspect.onset + FIRST < other.onset and not any(
            k["to"] == suspect.service for k in other.links
        ):
            suspect.links.remove(link)
            other.links.append({**link, "to": suspect.service})


#: Words of metric names too general to tie a line to a signal (units, aggregations, protocols).
_GENERAL = frozenset(
    {
        *("total", "count", "counts", "seconds", "second", "bytes", "rate", "ratio", "mean"),
        *("bucket", "http", "https", "server", "client", "requests", "request", "errors"),
        *("error", "duration", "time", "status", "state", "value", "size"),
    }
)


def _acted(backend: TelemetryBackend, suspect: Suspect, earlier: Suspect) -> str:
    """A line ``suspect`` logged (at any level) from the minute before ``earlier``'s onset to the
    end of that minute that names what ``earlier``'s metrics measure (``LOCK TABLE ...`` and a
    lock count), or that starts it after ``QUIET_BEFORE`` of silence (a job's ``Starting
    ...``), or ""."""
    words = {
        w.lower().rstrip("s")
        for f in earlier.findings
        if f.get("kind") == "metric"
        for w in re.split(r"[^A-Za-z]+", str(f["signal"]))
        if len(w) >= 4 and w.lower() not in _GENERAL
    }
    found = _answer(
        backend.query_logs,
        service=suspect.service,
        start=earlier.onset - QUIET_BEFORE,
        end=earlier.onset + timedelta(minutes=1),
        limit=LINES_LIMIT,
    )
    records = sorted(found.get("records") or [], key=lambda r: parse_stamp(r["timestamp"]))
    recent = [r for r in records if parse_stamp(r["timestamp"]) >= earlier.onset - LINES_BEFORE]
    if recent and recent[0] is records[0] and _STARTING.search(str(records[0].get("message"))):
        return str(records[0].get("message"))[:MAX_EVIDENCE]
    for record in recent:
        message = str(record.get("message", ""))
        if words & {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]{4,}", message)}:
            return message[:MAX_EVIDENCE]
    return ""


#: A line saying a process or job is starting (systemd's ``Starting <unit>``, "job started").
_STARTING = re.compile(r"\bstart(ing|ed)\b", re.IGNORECASE)


def _lines(backend: TelemetryBackend, suspect: Suspect, end: datetime) -> list[Mapping[str, Any]]:
    records: list[Mapping[str, Any]] = []
    for level in ("ERROR", "WARN"):
        found = _answer(
            backend.query_logs,
            service=suspect.service,
            start=suspect.onset - LINES_BEFORE,
            end=min(end, suspect.onset + LINES_AFTER),
            level=level,
            limit=LINES_LIMIT,
        )
        records += found.get("records") or []
    return records


_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}")
#: A line saying a name could not be resolved (nginx, glibc, Go, Java, Node.js wordings): the
#: suspect that serves DNS (an ``instance`` on port 53) is where it points.
_RESOLUTION = re.compile(
    r"could not be resolved|name resolution|no such host|NXDOMAIN|SERVFAIL|EAI_AGAIN|"
    r"Name or service not known|UnknownHostException|lookup \S+ on \S+:53\b",
    re.IGNORECASE,
)


def _instances(backend: TelemetryBackend, suspect: Suspect) -> list[str]:
    """The ``instance`` labels of its metrics (``10.0.0.5:8080``, ``db-1:5432``)."""
    metrics = [f["signal"] for f in suspect.findings if f.get("kind") == "metric"]
    if not metrics:
        return []
    found = _answer(
        backend.query_metrics,
        service=suspect.service,
        metric=metrics[0],
        start=suspect.onset - LINES_BEFORE,
        end=suspect.onset,
    )
    labels = [(s.get("labels") or {}).get("instance") for s in found.get("series") or []]
    return sorted({str(i) for i in labels if i})


def _hosts(instances: Sequence[str]) -> list[str]:
    """The addresses and host names of ``instances`` (an address or a dotted or hyphenated
    name: a bare word would match too much)."""
    hosts = [i.rsplit(":", 1)[0] if i.count(":") == 1 else i for i in instances]
    return sorted({h for h in hosts if h and (_IP.match(h) or "." in h or "-" in h)})


def _answer(query: Callable[..., Mapping[str, Any]], **arguments: Any) -> Mapping[str, Any]:
    """The backend's answer to ``query``, or {} when it cannot answer."""
    try:
        return query(**arguments)
    except TelemetryError:
        return {}


def _rank(suspects: list[Suspect]) -> list[Suspect]:
    """Incidents by their leader's onset; in each, the leader first, then by onset.

    A link points from the suspect whose lines name (or follow) another to that other; where
    two name each other, the one whose trouble began later follows. A suspect that follows
    nobody leads an incident; every other joins the incident of the earliest leader it reaches.
    """
    by_name = {s.service: s for s in suspects}
    follows: dict[str, list[str]] = {s.service: [] for s in suspects}
    for suspect in suspects:
        for link in suspect.links:
            other = by_name.get(link["to"])
            if other is None or link["to"] in follows[suspect.service]:
                continue
            mutual = any(back["to"] == suspect.service for back in other.links)
            if mutual and (suspect.onset, -suspect.score) < (other.onset, -other.score):
                continue  # it began first: the other follows it
            follows[suspect.service].append(link["to"])
    leaders = sorted(
        (s for s in suspects if not follows[s.service]), key=lambda s: (s.onset, -s.score)
    )
    order = {s.service: n for n, s in enumerate(leaders, 1)}
    for suspect in sorted(suspects, key=lambda s: (s.onset, s.service)):
        reached = _reached(suspect.service, follows, order)
        if not reached:  # it follows only others that follow it back: it leads
            leaders.append(suspect)
            order[suspect.service] = len(leaders)
            reached = [suspect.service]
        suspect.incident = min(order[r] for r in reached)
    return sorted(
        suspects, key=lambda s: (s.incident, order.get(s.service) != s.incident, s.onset, s.service)
    )


def _reached(name: str, follows: Mapping[str, list[str]], leaders: Mapping[str, int]) -> list[str]:
    """The leaders ``name`` reaches by following links (itself when it leads)."""
    seen, frontier, found = {name}, [name], []
    while frontier:
        current = frontier.pop()
        if current in leaders:
            found.append(current)
            continue
        for other in follows[current]:
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return found
