"""A step stores only its new messages; the trace rebuilds each step's full model input.

An agent's ReAct loop sends the whole conversation on every call, so storing every step's full
input makes a run's bytes grow with the square of its rounds. Instead a step whose messages
begin with those of the same agent's previous step stores the rest only, and says so::

    {"messages": [<new messages>], "continues": {"step_index": 3, "messages": 5}, ...}

meaning: the first 5 messages of step 3's (rebuilt) input, then these. Stored bytes are then
linear in the number of steps. :func:`rebuild_inputs` restores the full inputs of a run's steps,
in step order; a step without ``continues`` is stored whole. :class:`InputRebuilder` does the
same for steps read as stored JSON text, batch by batch (the streamed trace, trace pages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

CONTINUES = "continues"


def common_prefix(previous: Sequence[Any], messages: Sequence[Any]) -> int:
    """How many leading messages ``messages`` shares with ``previous``."""
    shared = 0
    for old, new in zip(previous, messages, strict=False):
        if old != new:
            break
        shared += 1
    return shared


def stored_input(
    model_input: Mapping[str, Any], previous: tuple[int, Sequence[Any]] | None
) -> dict[str, Any]:
    """What a step stores of ``model_input`` after ``previous`` ``(step index, messages)``."""
    stored = dict(model_input)
    messages = list(model_input.get("messages") or [])
    shared = common_prefix(previous[1], messages) if previous is not None else 0
    if previous is not None and shared:
        stored["messages"] = messages[shared:]
        stored[CONTINUES] = {"step_index": previous[0], "messages": shared}
    return stored


def rebuild_inputs(
    steps: Sequence[dict[str, Any]], key: str = "model_input", index: str = "step_index"
) -> None:
    """Replace, in place, each step's stored ``key`` by its full input (steps in ``index``
    order). Also a client's: the API's steps with ``inputs=stored`` are rebuilt by
    ``rebuild_inputs(steps, "modelInput", "stepIndex")``.

    A step continuing one that is missing (a partial page) keeps its stored form.
    """
    full: dict[int, list[Any]] = {}
    for step in steps:
        stored = step.get(key)
        if not isinstance(stored, dict):
            continue
        link = stored.get(CONTINUES)
        messages = list(stored.get("messages") or [])
        if isinstance(link, Mapping) and link.get("step_index") in full:
            messages = full[int(link["step_index"])][: int(link.get("messages", 0))] + messages
            step[key] = {k: v for k, v in stored.items() if k != CONTINUES} | {"messages": messages}
        elif isinstance(link, Mapping):
            continue  # its base is not here: neither it nor its continuations can be rebuilt
        full[int(step.get(index, -1))] = messages


def continues(stored: str) -> bool:
    """Whether stored JSON text has a ``continues`` link: :func:`stored_input` adds it last, so
    only the text's tail is searched (a step is tens of KB; the link is its last ~60 bytes).
    ``"continues":`` cannot occur inside a JSON string (its quotes would be escaped)."""
    return f'"{CONTINUES}":' in stored[-TAIL_CHARS:]


#: How far from the end of a stored input its ``continues`` link can start.
TAIL_CHARS = 96


class InputRebuilder:
    """Full model inputs of steps stored as JSON text, read in step order in any batches.

    A step continues its own agent's previous step, so holding the last step of each agent
    is enough: memory is one conversation per agent, whatever the run's length. An input that
    continues nothing is returned as stored (and only decoded if a later step continues it).
    """

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, str | list[Any]]] = {}

    def full(self, agent: str, step_index: int, stored: str | None) -> str | None:
        """The full input of ``agent``'s step ``step_index``, stored as ``stored``."""
        if stored is None or not continues(stored):
            if stored is not None:
                self._last[agent] = (step_index, stored)
            return stored
        document = orjson.loads(stored)
        link = document.get(CONTINUES) if isinstance(document, dict) else None
        base = self._last.pop(agent, None)
        if not isinstance(link, Mapping) or base is None or base[0] != link.get("step_index"):
            return stored  # its base was not read: it and its continuations stay as stored
        messages = _messages(base[1])[: int(link.get("messages", 0))]
        messages += list(document.get("messages") or [])
        self._last[agent] = (step_index, messages)
        document = {k: v for k, v in document.items() if k != CONTINUES} | {"messages": messages}
        return orjson.dumps(document).decode()


def _messages(base: str | list[Any]) -> list[Any]:
    if isinstance(base, list):
        return base
    document = orjson.loads(base)
    return list(document.get("messages") or []) if isinstance(document, dict) else []
