"""The offline model's simple chat: small talk, and knowledge questions via the runbooks.

It answers in the question's language (``diagnosis_graph.workflow.render.language_of``):
Chinese for a Chinese question, English otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from diagnosis_graph.workflow.render import language_of

from ..compact import shown_items
from ..types import Message
from .conversation import Catalog, Done, call, tool_results

_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening)|who are you|"
    r"what can you do|help)\b|^\s*(你好|您好|谢谢|你是谁|你能做什么|帮助)",
    re.IGNORECASE,
)
HELP = (
    "Hello! I am the offline, rule-based assistant of this incident-diagnosis tool. Ask me *why* "
    'a service misbehaves (for example "Why is <service> slow since 10:00?") and I will '
    "investigate its logs, metrics and runbooks and answer only with verified evidence. I can "
    "also look things up in the runbooks."
)
HELP_ZH = (
    "你好！我是这个故障诊断工具的离线规则模型。请问我某个服务*为什么*出问题（例如"
    "“<服务>为什么从10点开始变慢?”），我会查询它的日志、指标和运行手册，只用经过验证的证据作答。"
    "我也可以在运行手册中查找资料。"
)
_TEXTS = {
    "en": {
        "nothing": "I found nothing in the runbooks about that. If something is broken, ask it "
        "as a diagnosis question naming the service and the time it started.",
        "intro": 'Here is what the runbooks say about "{question}":',
        "footer": "_Answered by the offline rule-based model from the knowledge base._",
    },
    "zh": {
        "nothing": "运行手册中没有找到相关内容。如果有服务出了问题，请以诊断问题的方式提问，"
        "写明服务名称和开始的时间。",
        "intro": "运行手册中关于“{question}”的内容：",
        "footer": "_由离线规则模型根据知识库作答。_",
    },
}


def next_step(messages: Sequence[Message], catalog: Catalog) -> dict[str, Any] | str:
    """A knowledge lookup to make, or the final Markdown answer to the last user message."""
    users = [m for m in messages if m.get("role") == "user"]
    question = str(users[-1].get("content") or "").strip() if users else ""
    done = tool_results(messages)
    if _SMALL_TALK.match(question) or not question:
        return HELP_ZH if language_of(question) == "zh" else HELP
    if not done and catalog.has("lookup_knowledge"):
        return call("lookup_knowledge", query=question[:300], top_k=3)
    return _answer(question, done)


def _answer(question: str, done: Sequence[Done]) -> str:
    documents = [
        doc
        for d in done
        if d.tool == "lookup_knowledge" and d.status == "SUCCESS"
        for _, doc in shown_items(d.output.get("documents"))
    ]
    texts = _TEXTS[language_of(question)]
    if not documents:
        return texts["nothing"]
    lines = [texts["intro"].format(question=question), ""]
    for doc in documents[:3]:
        body = " ".join(str(doc.get("content", "")).split())
        more = "…" if len(body) > 400 else ""
        lines.append(f"- **{doc.get('title')}** (`{doc.get('doc_id')}`): {body[:400]}{more}")
    lines += ["", texts["footer"]]
    return "\n".join(lines)
