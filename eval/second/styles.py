"""Log styles: one event rendered as the raw line a real process writes.

Envoy's default access-log format and its application log; nginx's combined access log, its
error log and a JSON ``log_format`` keyed ``time`` (``$time_iso8601``); Log4j2's pattern layout
``%d{ISO8601} %-5level [%t] %c{1.} - %msg%n%throwable`` (stack traces as continuation lines);
zap's production JSON (``ts`` epoch seconds, ``msg``, ``stacktrace``); bunyan; syslog RFC 3164
and RFC 5424; PostgreSQL csvlog; journald's JSON export and ``short-iso`` output. The product
reads them all as raw files through ``LOG_DIR``, each level from the style's own severity where
it has one (Envoy and nginx access lines by status class, syslog by PRI, csvlog by
``error_severity``, bunyan's number, journald's ``PRIORITY``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

_PRIORITY = {"ERROR": 3, "WARN": 4, "INFO": 6}
_BUNYAN = {"ERROR": 50, "WARN": 40, "INFO": 30}
_PG = {"ERROR": "ERROR", "WARN": "WARNING", "INFO": "LOG"}
_ENVOY = {"ERROR": "error", "WARN": "warning", "INFO": "info"}
_NGINX = {"ERROR": "error", "WARN": "warn", "INFO": "notice"}
_IDENT = re.compile(r"^([\w.-]+)\[(\d+)\]: (.*)$", re.S)
_LOGGER = re.compile(r"^([a-z][\w$]*(?:\.[\w$]+)*\.[A-Z][\w$]*) - (.*)$", re.S)
_LEADING_LEVEL = re.compile(r"^\[(\w+)\]")


@dataclass(frozen=True)
class Event:
    """One thing a service logged: an application line or an access-log request."""

    moment: datetime
    service: str
    level: str
    text: str = ""
    host: str = ""
    #: Access requests: method, path, status, bytes, ms, ua, upstream, flags, client.
    request: dict[str, Any] = field(default_factory=dict)
    logger: str = ""  # Java: the default logger when the text names none
    channel: str = "app"  # app | access | host (the machine's own daemons)


def epoch_ms(moment: datetime) -> int:
    """Epoch milliseconds."""
    return round(moment.timestamp() * 1000)


def _first(text: str) -> tuple[str, str]:
    head, _, rest = text.partition("\n")
    return head, rest


def _iso_ms(moment: datetime) -> str:
    return (
        moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{moment.microsecond // 1000:03d}Z"
    )


def log4j2(event: Event) -> str:
    """``2027-03-12T09:41:02,123 ERROR [http-nio-8080-exec-7] c.s.b.Renewal - text`` + stack."""
    found = _LOGGER.match(event.text)
    logger, text = (found.group(1), found.group(2)) if found else (event.logger, event.text)
    stamp = event.moment.strftime("%Y-%m-%dT%H:%M:%S,") + f"{event.moment.microsecond // 1000:03d}"
    thread = f"http-nio-8080-exec-{epoch_ms(event.moment) % 40 + 1}"
    return f"{stamp} {event.level:<5} [{thread}] {logger} - {text}"


def zap(event: Event) -> str:
    """Zap's production JSON encoder."""
    head, rest = _first(event.text)
    record: dict[str, Any] = {
        "level": event.level.lower().replace("warn", "warn"),
        "ts": round(event.moment.timestamp(), 3),
        "caller": "server/handler.go:88",
        "msg": head,
        "service": event.service,
    }
    if event.request:
        record.update(
            {
                k: v
                for k, v in event.request.items()
                if k in ("method", "path", "status", "ms", "ua")
            }
        )
    if rest:
        record["stacktrace"] = rest
    return json.dumps(record, separators=(",", ":"))


def bunyan(event: Event) -> str:
    """A bunyan record (``msg``, numeric ``level``, ``err.stack`` for errors)."""
    head, rest = _first(event.text)
    record: dict[str, Any] = {
        "name": event.service,
        "hostname": event.host,
        "pid": 1,
        "level": _BUNYAN[event.level],
        "msg": head,
        "time": _iso_ms(event.moment),
        "v": 0,
    }
    if event.request:
        record["req"] = {"method": event.request["method"], "url": event.request["path"]}
        record["res"] = {"statusCode": event.request["status"]}
    if event.level == "ERROR":
        record["err"] = {"message": head, "stack": f"{head}\n{rest}".strip()}
    return json.dumps(record, separators=(",", ":"))


def envoy_access(event: Event) -> str:
    """Envoy's default access-log format."""
    r = event.request
    upstream = r.get("upstream") or "-"
    quoted = [r["client"], r["ua"], r.get("id", "-"), r.get("authority", "-"), upstream]
    fields = [
        f"[{_iso_ms(event.moment)}]",
        f'"{r["method"]} {r["path"]} HTTP/2"',
        str(r["status"]),
        r.get("flags", "-"),
        str(r.get("received", 0)),
        str(r["bytes"]),
        str(r["ms"]),
        str(r["ms"]) if upstream != "-" else "-",
        *(f'"{value}"' for value in quoted),
    ]
    return " ".join(fields)


def envoy_app(event: Event) -> str:
    """Envoy's application log: ``[2027-03-12 09:41:02.123][1][info][upstream] ...``."""
    stamp = event.moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{event.moment.microsecond // 1000:03d}"
    text = (
        event.text if event.text.startswith("[") else f"[{_ENVOY[event.level]}][main] {event.text}"
    )
    return f"[{stamp}][1]{text}"


def nginx_access(event: Event) -> str:
    """nginx's combined format with the upstream and timings appended."""
    r = event.request
    stamp = event.moment.strftime("%d/%b/%Y:%H:%M:%S +0000")
    request = f'"{r["method"]} {r["path"]} HTTP/1.1" {r["status"]} {r["bytes"]}'
    timing = f"rt={r['ms'] / 1000:.3f} upstream={r.get('upstream') or '-'}"
    return f'{r["client"]} - - [{stamp}] {request} "-" "{r["ua"]}" {timing}'


def nginx_error(event: Event) -> str:
    """nginx's error log: ``2027/03/12 09:41:02 [error] 31#31: *81234 ...``."""
    stamp = event.moment.strftime("%Y/%m/%d %H:%M:%S")
    if _LEADING_LEVEL.match(event.text):
        return f"{stamp} {event.text}"
    connection = epoch_ms(event.moment) % 90000 + 1000
    return f"{stamp} [{_NGINX[event.level]}] 31#31: *{connection} {event.text}"


def nginx_json(event: Event) -> str:
    """nginx's access log with ``log_format json escape=json`` (``time`` = ``$time_iso8601``)."""
    r = event.request
    record = {
        "time": event.moment.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
        "remote_addr": r["client"],
        "request": f"{r['method']} {r['path']} HTTP/1.1",
        "status": r["status"],
        "body_bytes_sent": r["bytes"],
        "request_time": round(r["ms"] / 1000, 3),
        "upstream_addr": r.get("upstream") or "-",
        "http_user_agent": r["ua"],
    }
    return json.dumps(record, separators=(",", ":"))


def _ident(event: Event, default: str) -> tuple[str, str, str]:
    found = _IDENT.match(event.text)
    if found:
        return found.group(1), found.group(2), found.group(3)
    return default, str(sum(map(ord, event.service)) % 9000 + 400), event.text


def syslog3164(event: Event) -> str:
    """RFC 3164: ``<30>Mar 12 09:41:02 host chronyd[612]: ...`` (facility daemon)."""
    ident, pid, text = _ident(event, event.service)
    stamp = f"{event.moment:%b} {event.moment.day:>2} {event.moment:%H:%M:%S}"
    return f"<{24 + _PRIORITY[event.level]}>{stamp} {event.host} {ident}[{pid}]: {_first(text)[0]}"


def syslog5424(event: Event) -> str:
    """RFC 5424: ``<28>1 2027-03-12T09:41:02.123Z host redis-server 1 - - ...``."""
    ident, pid, text = _ident(event, "redis-server")
    header = f"<{24 + _PRIORITY[event.level]}>1 {_iso_ms(event.moment)} {event.host}"
    return f"{header} {ident} {pid} - - {_first(text)[0]}"


def journald_json(event: Event) -> str:
    """One entry of ``journalctl -o json``."""
    ident, pid, text = _ident(event, event.service)
    micros = epoch_ms(event.moment) * 1000
    return json.dumps(
        {
            "__REALTIME_TIMESTAMP": str(micros),
            "_HOSTNAME": event.host,
            "SYSLOG_IDENTIFIER": ident,
            "_PID": pid,
            "_SYSTEMD_UNIT": f"{event.service}.service",
            "PRIORITY": str(_PRIORITY[event.level]),
            "MESSAGE": _first(text)[0],
        },
        separators=(",", ":"),
    )


def journald_iso(event: Event) -> str:
    """One line of ``journalctl -o short-iso``."""
    ident, pid, text = _ident(event, event.service)
    return f"{event.moment:%Y-%m-%dT%H:%M:%S}+0000 {event.host} {ident}[{pid}]: {_first(text)[0]}"


def csvlog(event: Event, context: dict[str, str]) -> str:
    """A PostgreSQL csvlog row (26 columns); ``|`` in the text separates the DETAIL."""
    message, _, detail = event.text.partition("|")
    stamp = (
        event.moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{event.moment.microsecond // 1000:03d} UTC"
    )
    quoted = [f'"{v}"' if v else "" for v in (context.get("user", ""), context.get("db", ""))]
    pid = epoch_ms(event.moment) % 30000 + 2000
    sqlstate = {"ERROR": "40001", "WARN": "01000"}.get(event.level, "00000")
    cells = [
        stamp,
        *quoted,
        str(pid),
        f'"{context.get("client", "")}"',
        f"65f0{pid:x}.{pid % 97:x}",
        "1",
        '"' + context.get("command", "") + '"',
        stamp,
        "",
        "0",
        _PG[event.level],
        sqlstate,
        '"' + message.replace('"', '""') + '"',
        f'"{detail}"' if detail else "",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        f'"{context.get("app", "")}"',
        '"client backend"',
        "",
        "0",
    ]
    return ",".join(cells)


TEXT_STYLES = {
    "log4j2": log4j2,
    "envoy_access": envoy_access,
    "envoy_app": envoy_app,
    "nginx_access": nginx_access,
    "nginx_error": nginx_error,
    "syslog3164": syslog3164,
    "syslog5424": syslog5424,
    "journald_iso": journald_iso,
}
JSON_STYLES = {
    "zap": zap,
    "bunyan": bunyan,
    "journald_json": journald_json,
    "nginx_json": nginx_json,
}


def render(style: str, event: Event, context: dict[str, str] | None = None) -> str:
    """The raw line(s) ``event`` is written as in ``style``."""
    if style == "csvlog":
        return csvlog(event, context or {})
    if style in TEXT_STYLES:
        return TEXT_STYLES[style](event)
    return JSON_STYLES[style](event)
