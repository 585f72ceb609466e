"""Alerts from Alertmanager's webhook: validated, stored by fingerprint, linked to AIOps runs.

Firing alerts join their group's PENDING run, or a RUNNING one they are already linked to;
otherwise a new run is started. Resolved alerts start nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from peewee import Database
from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from ..persistence.db import write_transaction
from ..persistence.listing import Listing, Page
from ..persistence.models import AlertRecord, AlertRun, DiagnosisRun, utcnow
from ..persistence.records import NotFound
from ..persistence.runs import PENDING, RUNNING
from ..telemetry.common import iso
from .reads import Utc, UtcTime

MAX_ALERTS_PER_CALL = 1000
MAX_REQUEST_CHARS = 1000
_ZERO_TIME = datetime(1, 1, 1)
#: The columns an alert's view shows, in this order (camelCased, times as ISO text).
SHOWN = (
    "fingerprint",
    "alert_name",
    "status",
    "severity",
    "service",
    "labels",
    "annotations",
    "starts_at",
    "ends_at",
    "group_key",
    "receiver",
    "received_count",
    "updated_at",
)


class WebhookAlert(BaseModel):
    """One alert of a version-4 webhook payload."""

    model_config = ConfigDict(extra="ignore")
    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: Annotated[datetime, Utc]
    endsAt: UtcTime = None
    generatorURL: str | None = Field(default=None, max_length=4000)
    fingerprint: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")

    @field_validator("labels")
    @classmethod
    def _named(cls, labels: dict[str, str]) -> dict[str, str]:
        if not labels.get("alertname"):
            raise ValueError("labels must include alertname")
        return labels


class WebhookPayload(BaseModel):
    """Alertmanager's webhook body (``version`` "4")."""

    model_config = ConfigDict(extra="ignore")
    version: Literal["4"]
    status: Literal["firing", "resolved"]
    groupKey: str = Field(min_length=1, max_length=255)
    receiver: str = Field(default="", max_length=200)
    alerts: list[WebhookAlert] = Field(min_length=1, max_length=MAX_ALERTS_PER_CALL)


@dataclass(frozen=True)
class Receipt:
    """What one webhook call did."""

    stored: int
    firing: int
    resolved: int
    session_id: str | None
    run_id: str | None
    joined_running_run: bool


#: Creates an AIOps run for a request text (inside the caller's transaction); returns
#: ``(session_id, run_id, launch)``, where ``launch()`` executes it once the rows are committed.
StartRun = Callable[[str], tuple[str, str, Callable[[], None]]]


def _set(moment: datetime | None) -> datetime | None:
    """``moment``, or None for the 0001-01-01 Alertmanager sends for "no end yet"."""
    return None if moment is None or moment <= _ZERO_TIME else moment


def investigation_request(payload: WebhookPayload) -> str:
    """The AIOps request text for a group's firing alerts."""
    names = [
        f"{a.labels['alertname']} ({a.labels.get('service') or a.labels.get('job') or '-'})"
        for a in payload.alerts
        if a.status == "firing"
    ]
    text = "Investigate the Alertmanager alerts " + ", ".join(dict.fromkeys(names))
    return text if len(text) <= MAX_REQUEST_CHARS else text[: MAX_REQUEST_CHARS - 3] + "..."


def alerts_of_run(database: Database, run_id: str) -> list[dict[str, str]]:
    """The alerts a run was started for (``alert_name``, ``service``); empty when none is linked
    (the run then investigates every firing alert)."""
    with database.connection_context():
        rows = (
            AlertRecord.select(AlertRecord.alert_name, AlertRecord.service)
            .join(AlertRun, on=AlertRun.alert == AlertRecord.id)
            .where(AlertRun.run_id == run_id)
        )
        pairs = dict.fromkeys((row.alert_name, row.service or "") for row in rows)
    return [{"alert_name": name, "service": service} for name, service in pairs]


@dataclass(frozen=True)
class AlertInbox:
    """Stores webhook alerts and links them to the runs that investigate them."""

    database: Database
    start_run: StartRun

    def receive(self, payload: WebhookPayload) -> Receipt:
        """Upsert every alert; join or start the group's investigation when any fires."""
        launch: Callable[[], None] | None = None
        with self.database.connection_context(), write_transaction(self.database):
            rows = [self._upsert(payload, alert) for alert in payload.alerts]
            firing = [row for row in rows if row.status == "firing"]
            session_id = run_id = None
            joined = False
            if firing:
                running = self._joinable_run(payload.groupKey, [row.id for row in firing])
                joined = running is not None
                if running is None:
                    session_id, run_id, launch = self.start_run(investigation_request(payload))
                else:
                    session_id, run_id = running
                for row in firing:
                    AlertRun.insert(
                        alert=row.id, run_id=run_id, session_id=session_id
                    ).on_conflict_ignore().execute()
        if launch is not None:
            launch()  # after the commit: the worker must see the run and its links
        return Receipt(len(rows), len(firing), len(rows) - len(firing), session_id, run_id, joined)

    def _upsert(self, payload: WebhookPayload, alert: WebhookAlert) -> AlertRecord:
        labels = alert.labels
        values = {
            "alert_name": labels["alertname"][:200],
            "status": alert.status,
            "severity": labels.get("severity", "")[:32],
            "service": (labels.get("service") or labels.get("job") or "")[:200],
            "labels": labels,
            "annotations": alert.annotations,
            "starts_at": _set(alert.startsAt),
            "ends_at": _set(alert.endsAt) if alert.status == "resolved" else None,
            "group_key": payload.groupKey,
            "receiver": payload.receiver,
            "generator_url": alert.generatorURL,
            "updated_at": utcnow(),
        }
        found = AlertRecord.get_or_none(AlertRecord.fingerprint == alert.fingerprint)
        if found is None:
            return AlertRecord.create(fingerprint=alert.fingerprint, **values)
        AlertRecord.update(received_count=AlertRecord.received_count + 1, **values).where(
            AlertRecord.id == found.id
        ).execute()
        return AlertRecord.get_by_id(found.id)

    def _joinable_run(self, group_key: str, alert_ids: list[int]) -> tuple[str, str] | None:
        row = (
            DiagnosisRun.select(DiagnosisRun.session_id, DiagnosisRun.run_id, DiagnosisRun.status)
            .join(AlertRun, on=AlertRun.run_id == DiagnosisRun.run_id)
            .join(AlertRecord, on=AlertRecord.id == AlertRun.alert)
            .where(AlertRecord.group_key == group_key, DiagnosisRun.status.in_([PENDING, RUNNING]))
            .order_by(DiagnosisRun.started_at.desc())
            .first()
        )
        if row is not None and row.status == RUNNING:
            linked = AlertRun.select().where(
                AlertRun.run_id == row.run_id, AlertRun.alert.in_(alert_ids)
            )
            if linked.count() < len(set(alert_ids)):
                return None  # it read its alerts before these fired
        return (row.session_id, row.run_id) if row else None

    def investigate(self, fingerprint: str) -> tuple[str, str]:
        """Start a new AIOps run for one stored alert, linked to it; ``(session_id, run_id)``."""
        with self.database.connection_context(), write_transaction(self.database):
            alert = AlertRecord.get_or_none(AlertRecord.fingerprint == fingerprint)
            if alert is None or alert.fingerprint != fingerprint:
                raise NotFound(f"alert {fingerprint} not found")
            name = f"{alert.alert_name} ({alert.service or '-'})"
            session_id, run_id, launch = self.start_run(
                f"Investigate the Alertmanager alert {name}"[:MAX_REQUEST_CHARS]
            )
            AlertRun.insert(alert=alert.id, run_id=run_id, session_id=session_id).execute()
        launch()
        return session_id, run_id

    def page(self, state: str, limit: int, cursor: str | None = None) -> Page:
        """Alerts in ``state`` (firing, resolved, all), most recently updated first, each with
        its investigation runs: a keyset page after ``cursor`` (CursorError for one this list
        did not hand out). Nothing is counted."""
        only = None if state == "all" else state
        found = Listing(self.database).alerts(only, limit, cursor)
        with self.database.connection_context():
            runs = self._runs_of([row["id"] for row in found.rows])
        views = [
            {**_camel({name: row[name] for name in SHOWN}), "runs": runs.get(row["id"], [])}
            for row in found.rows
        ]
        return Page(views, found.next_cursor)

    @staticmethod
    def _runs_of(ids: list[int]) -> dict[int, list[dict[str, Any]]]:
        if not ids:
            return {}
        found: dict[int, list[dict[str, Any]]] = {}
        query = (
            AlertRun.select(
                AlertRun.alert.alias("alert_id"),
                AlertRun.run_id,
                AlertRun.session_id,
                DiagnosisRun.status,
                DiagnosisRun.started_at,
            )
            .join(DiagnosisRun, on=DiagnosisRun.run_id == AlertRun.run_id)
            .where(AlertRun.alert.in_(ids))
            .order_by(AlertRun.id.desc())
            .dicts()
        )
        for link in cast(Iterable[dict[str, Any]], query):
            found.setdefault(link.pop("alert_id"), []).append(_camel(link))
        return found


def _camel(row: dict[str, Any]) -> dict[str, Any]:
    """A row's columns by their camelCase names, times as ISO text."""
    return {
        to_camel(name): iso(value, millis=True) if name.endswith("_at") and value else value
        for name, value in row.items()
    }
