"""What a model reads of a tool output: a compact projection of the recorded output.

A long list shows a few items under their index in the recorded list (``{"length": N, "shown":
{...}}``), a long string is cut; ``read_output`` reads any part of the recorded output by
invocation id and raw path, so citations resolve whatever the model was shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from diagnosis_graph.workflow.gatekeeper import RawPathError, locate

from ..persistence.audit import Audit
from ..persistence.context import current_run
from ..tools.registry import REFERENCE, ToolError, ToolOutput, ToolSpec

LIST_ITEMS = 12
TEXT_CHARS = 1000
CUT_MARK = " [...]"
READ_OUTPUT = "read_output"
#: Items of a list ``read_output`` returns at most at once.
READ_LIMIT = 50
#: Hex ids (trace ids, hashes) and then numbers are masked to compare shapes; a short number
#: ending a name (``db-01``, ``redis2``) is kept, so two lines naming two hosts stay apart. Each
#: mask begins with a digit or a-f: the leading look-ahead rejects most positions in one test.
_VARIABLE = re.compile(r"(?=[\da-f])(?:\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b|\d{3,}|(?<![\w-])\d+)")


def project(value: Any) -> Any:
    """The model-facing view of a raw tool output: a list over ``LIST_ITEMS`` shows a series'
    largest step and extreme, or one item of each distinct shape; a long string is cut."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {key: project(item) for key, item in value.items()}
    if isinstance(value, list):
        if len(value) <= LIST_ITEMS:
            return [project(item) for item in value]
        numbers = [n for n in map(_numeric, value) if n is not None]
        keep = _series_points(numbers) if len(numbers) == len(value) else _distinct(value)
        return {"length": len(value), "shown": {str(i): project(value[i]) for i in keep}}
    return value


def without_series(projected: Any) -> Any:
    """A projection with no series points left (each series keeps its length)."""
    if isinstance(projected, list):
        return [without_series(item) for item in projected]
    if not isinstance(projected, dict):
        return projected
    if _shortened(projected):
        shown = projected["shown"]
        if shown and all(_numeric(item) is not None for item in shown.values()):
            return {"length": projected["length"], "shown": {}}
    return {key: without_series(item) for key, item in projected.items()}


def shown_items(value: Any) -> list[tuple[int, Any]]:
    """``(index in the recorded list, item)`` of a projected list, shown whole or not."""
    if isinstance(value, list):
        return list(enumerate(value))
    if _shortened(value):
        return sorted((int(k), v) for k, v in value["shown"].items() if str(k).isdigit())
    return []


def _shortened(value: Any) -> bool:
    """A list shown by some of its items: ``{"length": N, "shown": {...}}``."""
    return (
        isinstance(value, dict)
        and set(value) == {"length", "shown"}
        and isinstance(value["shown"], dict)
    )


def _text(text: str) -> str:
    if len(text) <= TEXT_CHARS:
        return text
    cut = text.rfind(" ", 0, TEXT_CHARS)
    return text[: cut if cut > TEXT_CHARS // 2 else TEXT_CHARS] + CUT_MARK


def _numeric(item: Any) -> float | None:
    if isinstance(item, list | tuple) and item:
        item = item[-1]
    elif isinstance(item, dict):
        item = item.get("value")
    if isinstance(item, int | float) and not isinstance(item, bool):
        return float(item)
    return None


def _series_points(values: Sequence[float]) -> list[int]:
    """Both sides of the largest step, and the point farthest from the first."""
    steps = [abs(values[i] - values[i - 1]) for i in range(1, len(values))]
    jump = max(range(len(steps)), key=steps.__getitem__) + 1
    extreme = max(range(len(values)), key=lambda i: abs(values[i] - values[0]))
    return sorted({jump - 1, jump, extreme})


def _distinct(items: Sequence[Any]) -> list[int]:
    """The first index of each distinct shape, at most LIST_ITEMS of them."""
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        shape = _VARIABLE.sub("#", json.dumps(item, ensure_ascii=False, default=str))
        first.setdefault(shape, index)
        if len(first) == LIST_ITEMS:
            break
    return list(first.values())


def summary_message(message: dict[str, Any]) -> dict[str, Any]:
    """A tool message body reduced to its invocation id, tool and the shape of its result."""
    short = {k: v for k, v in message.items() if k != "result"}
    if "result" in message:
        short["result_shape"] = _shape(message["result"])
        short["note"] = f"shortened to save context; {READ_OUTPUT} reads any part by path"
    return short


def _shape(value: Any, depth: int = 0) -> Any:
    if isinstance(value, list) or _shortened(value):
        length = value["length"] if isinstance(value, dict) else len(value)
        return f"{length} items"
    if isinstance(value, dict):
        if depth >= 1:
            return f"{len(value)} fields"
        return {key: _shape(item, depth + 1) for key, item in value.items()}
    if isinstance(value, str) and len(value) > 80:
        return value[:77] + "..."
    return value


def read_output_tool(recorder: Audit) -> ToolSpec:
    """The ``read_output`` tool: any part of an output recorded in this run, by raw path."""

    def handler(arguments: dict[str, Any]) -> ToolOutput:
        wanted = arguments["invocation_id"]
        records = recorder.invocations_for_run(current_run().run_id)
        record = next((r for r in records if r.invocation_id == wanted), None)
        if record is None:
            raise ToolError(f"no invocation {wanted!r} in this run")
        path = arguments["path"]
        try:
            value = locate(record.raw_output, path)[0]
        except RawPathError as exc:
            raise ToolError(f"path {path!r}: {exc}") from None
        except LookupError:
            raise ToolError(f"path {path!r} names nothing in {wanted}") from None
        found: dict[str, Any] = {"invocation_id": wanted, "path": path}
        if isinstance(value, list):
            start = arguments["offset"]
            part = value[start : start + arguments["limit"]]
            found["length"] = len(value)
            found["shown"] = {str(start + i): item for i, item in enumerate(part)}
        else:
            found["value"] = value
        return ToolOutput(found)

    return ToolSpec(
        READ_OUTPUT,
        "Read more of a tool output recorded in this run: the value at a raw path (e.g. "
        "$.findings[0].points), a list `limit` items at a time from `offset`. Cite the "
        "original invocation and path, not this tool's.",
        {
            "type": "object",
            "properties": {
                "invocation_id": {"type": "string", "minLength": 1},
                "path": {"type": "string", "default": "$", "maxLength": 300},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": READ_LIMIT, "default": 20},
            },
            "required": ["invocation_id"],
            "additionalProperties": False,
        },
        handler,
        REFERENCE,
    )
