"""The offline model's simple chat: small talk, and knowledge questions via the runbooks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..types import Message
from .conversation import Catalog, Done, last_user_text, tool_results

_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening)|who are you|"
    r"what can you do|help)\b",
    re.IGNORECASE,
)
HELP = (
    "Hello! I am the offline, rule-based assistant of this incident-diagnosis tool. Ask me *why* "
    'a service misbehaves (for example "Why is <service> slow since 10:00?") and I will '
    "investigate its logs, metrics and runbooks and answer only with verified evidence. I can "
    "also look things up in the runbooks."
)


def question_of(messages: Sequence[Message]) -> str:
    """The question of this turn: the last user message."""
    return last_user_text(messages).strip()


def next_step(messages: Sequence[Message], catalog: Catalog) -> dict[str, Any] | str:
    """A knowledge lookup to make, or the final Markdown answer."""
    question = question_of(messages)
    done = tool_results(messages)
    if _SMALL_TALK.match(question) or not question:
        return HELP
    if not done and catalog.has("lookup_knowledge"):
        return {"tool": "lookup_knowledge", "arguments": {"query": question[:300], "top_k": 3}}
    return _answer(question, done)


def _answer(question: str, done: Sequence[Done]) -> str:
    documents = [
        doc
        for d in done
        if d.tool == "lookup_knowledge" and d.status == "SUCCESS"
        for doc in (d.result or {}).get("documents", [])
    ]
    if not documents:
        return (
            "I found nothing in the runbooks about that. If something is broken, ask it as a "
            "diagnosis question naming the service and the time it started."
        )
    lines = [f'Here is what the runbooks say about "{question}":', ""]
    for doc in documents[:3]:
        body = " ".join(str(doc.get("content", "")).split())
        lines.append(
            f"- **{doc.get('title')}** (`{doc.get('doc_id')}`): {body[:400]}"
            + ("…" if len(body) > 400 else "")
        )
    lines += ["", "_Answered by the offline rule-based model from the knowledge base._"]
    return "\n".join(lines)
