"""Replay a recorded run: its question through today's model and prompts, on yesterday's data.

Every tool call is answered from the recorded ``tool_invocation`` rows, keyed by ``(tool,
canonical arguments)``; nothing reaches a backend. A call the recording lacks is a *miss*,
told to the model as a tool error and reported. ``export_recording`` writes a recording as one
self-contained JSON document (evaluation fixtures).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from itertools import zip_longest
from pathlib import Path
from typing import Any

from diagnosis_graph.workflow.ports import ERROR, SUCCESS
from diagnosis_graph.workflow.render import LABELS

from .diagnosis import Diagnoser
from .llm.types import ChatModel
from .persistence.memory_audit import MemoryAudit
from .telemetry import TelemetryBackend, TelemetryError
from .tools.registry import REFERENCE, ToolError, ToolOutput, ToolSpec, tool_roles

FORMAT = "recorded-run-v1"
_CITATIONS = re.compile(r"\s*\[E\d+\]")
_NUMBERED = re.compile(r"\s*\d+\. ")
_ESCAPED = re.compile(r"\\(.)")


def canonical_arguments(arguments: Any) -> str:
    """Arguments as a stable key: sorted keys, ``None`` values dropped, compact JSON."""
    arguments = _json(arguments)
    if isinstance(arguments, str):  # not JSON: the text is its own key
        return arguments
    if isinstance(arguments, Mapping):
        arguments = {k: v for k, v in arguments.items() if v is not None}
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


@dataclass(frozen=True)
class Miss:
    """A call the recording has no output for."""

    tool: str
    arguments: str


@dataclass
class Recording:
    """Recorded tool outputs, served by ``(tool, canonical arguments)``."""

    #: Per call, its outputs not served yet (the last one is served again once the rest are).
    outputs: dict[tuple[str, str], list[tuple[str, Any, str | None]]] = field(default_factory=dict)
    misses: list[Miss] = field(default_factory=list)
    hits: int = 0

    @classmethod
    def from_invocations(cls, rows: Iterable[Mapping[str, Any]]) -> Recording:
        """From ``tool_invocation`` rows; BLOCKED calls never ran, so they are not outputs."""
        recording = cls()
        for row in rows:
            if row["status"] not in (SUCCESS, ERROR):
                continue
            key = (str(row["tool_name"]), canonical_arguments(_json(row["arguments"])))
            entry = (str(row["status"]), _json(row["raw_output"]), row.get("error_message"))
            recording.outputs.setdefault(key, []).append(entry)
        return recording

    def serve(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """The recorded output of this call; ToolError for a recorded error or a miss."""
        key = (tool, canonical_arguments(dict(arguments)))
        entries = self.outputs.get(key)
        if not entries:
            self.misses.append(Miss(*key))
            raise ToolError(
                f"replay: the recorded run has no output for {tool} {key[1]}; "
                "the call was not sent to any backend"
            )
        self.hits += 1
        status, output, error = entries.pop(0) if len(entries) > 1 else entries[0]
        if status == ERROR:
            raise ToolError(error or "the recorded call failed")
        return ToolOutput(output)


class RecordedBackend:
    """The backend facts a replay needs (reference time, services, metrics); every query raises."""

    name = "recorded"

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._now = datetime.fromisoformat(str(document["reference_time"]).replace("Z", "+00:00"))
        self._metrics = {k: list(v) for k, v in (document.get("metrics_by_service") or {}).items()}
        self._services = sorted(document.get("services") or self._metrics)
        self._aliases = {k: list(v) for k, v in (document.get("aliases") or {}).items()}

    def reference_time(self) -> datetime:
        """The recorded run's "now"."""
        return self._now

    def services(self) -> list[str]:
        """The recorded backend's services."""
        return list(self._services)

    def metrics_by_service(self) -> dict[str, list[str]]:
        """The recorded metrics per service."""
        return {k: list(v) for k, v in self._metrics.items()}

    def service_aliases(self) -> dict[str, list[str]]:
        """The recorded aliases."""
        return {k: list(v) for k, v in self._aliases.items()}

    def query_logs(self, **_: Any) -> dict[str, Any]:
        """Not available in a replay (nor are metrics and alerts)."""
        raise TelemetryError("replay: telemetry comes from the recording only")

    query_metrics = query_alerts = query_logs

    def runbook_dir(self) -> Path | None:
        """No runbooks: knowledge comes from the recording too."""
        return None


class _NoKnowledge:
    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]:
        raise ToolError("replay: knowledge comes from the recording only")


def replay_diagnoser(
    model: ChatModel,
    backend: TelemetryBackend,
    recording: Recording,
    definitions: Sequence[Mapping[str, Any]] | None = None,
) -> Diagnoser:
    """A diagnoser whose tools (``definitions``, default: the backend's own) answer from
    ``recording``; each keeps the role of the product's tool of that name (reference for a tool
    the product lacks)."""
    diagnoser = Diagnoser(
        model=model, backend=backend, knowledge=_NoKnowledge(), audit=MemoryAudit()
    )
    roles = tool_roles(diagnoser.tools)
    tools = []
    for definition in definitions or [spec.definition() for spec in diagnoser.tools]:
        function = definition["function"]
        name = str(function["name"])
        tools.append(
            ToolSpec(
                name,
                str(function.get("description", "")),
                dict(function.get("parameters") or {"type": "object", "properties": {}}),
                partial(recording.serve, name),
                roles.get(name, REFERENCE),
            )
        )
    diagnoser.tools = tools
    return diagnoser


def export_recording(
    run: Mapping[str, Any],
    invocations: Sequence[Mapping[str, Any]],
    backend: TelemetryBackend,
    definitions: Sequence[Mapping[str, Any]],
    history: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """One self-contained JSON document of a recorded run (see the module docstring)."""
    return {
        "format": FORMAT,
        "session_id": run["session_id"],
        "run_id": run["run_id"],
        "question": run["question"],
        "answer": run.get("answer"),
        "history": [dict(m) for m in history],
        "reference_time": backend.reference_time().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "services": backend.services(),
        "metrics_by_service": backend.metrics_by_service(),
        "aliases": backend.service_aliases(),
        "tool_definitions": [dict(d) for d in definitions],
        "invocations": [
            {
                "tool_name": row["tool_name"],
                "arguments": _json(row["arguments"]),
                "raw_output": _json(row["raw_output"]),
                "status": row["status"],
                "error_message": row.get("error_message"),
            }
            for row in invocations
        ],
    }


def conclusion_lines(answer: str | None) -> list[str]:
    """What an answer concludes, without markup: the numbered items of its conclusions section,
    else the lines between the question and the first section."""
    if not answer:
        return ["(no answer)"]
    head, *sections = answer.split("\n### ")
    skip = ("#", *(f"**{w['question']}:**" for w in LABELS.values()))
    lines = [
        _plain(text)
        for text in (line.strip() for line in head.splitlines())
        if text and not text.startswith(skip)
    ]
    titles = {w["conclusions"] for w in LABELS.values()}
    concluded = [
        _plain(line.split(". ", 1)[-1])
        for title, _, body in (section.partition("\n") for section in sections)
        if title.strip() in titles
        for line in body.splitlines()
        if _NUMBERED.match(line)
    ]
    return concluded or lines or [answer.strip().splitlines()[0]]


def _plain(text: str) -> str:
    text = _CITATIONS.sub("", text.lstrip("# ").replace("**", ""))
    return _ESCAPED.sub(r"\1", text).strip()


def side_by_side(old: Sequence[str], new: Sequence[str], width: int = 58) -> list[str]:
    """Two columns, ``old`` left and ``new`` right, each wrapped to ``width``."""

    def wrap(lines: Sequence[str]) -> list[str]:
        return [part for line in lines for part in textwrap.wrap(line, width) or [""]]

    left, right = wrap(old), wrap(new)
    rows = [f"{'recorded':<{width}} | replayed", f"{'-' * width}-+-{'-' * width}"]
    rows += [f"{a:<{width}} | {b}" for a, b in zip_longest(left, right, fillvalue="")]
    return rows
