"""Within one diagnosis, a knowledge chunk already returned is sent again as a short stub naming
its ``doc_id``. Runtime state, bounded: at most ``max_keys`` sessions (least recently used go
first); a session's doc ids are bounded by its tool budget (a few ``top_k`` chunks per call)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

DEFAULT_MAX_KEYS = 1024
STUB_TEMPLATE = "(already retrieved earlier in this diagnosis; see doc_id {doc_id})"


class RetrievedDocTracker:
    """Remembers which chunk ids each session has already been given; thread-safe."""

    def __init__(self, max_keys: int = DEFAULT_MAX_KEYS) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.max_keys = max_keys
        self._seen: OrderedDict[str, dict[str, None]] = OrderedDict()
        self._lock = threading.Lock()

    def filter(self, session_key: str, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Copies of ``documents``, those already seen under ``session_key`` (or earlier in
        this call) as stubs; documents without a string ``doc_id`` are not recorded."""
        result: list[dict[str, Any]] = []
        if not documents:
            return result
        with self._lock:
            seen = self._seen_for(session_key)
            for document in documents:
                doc_id = document.get("doc_id")
                if isinstance(doc_id, str) and doc_id in seen:
                    result.append(_stub(document, doc_id))
                    continue
                if isinstance(doc_id, str):
                    seen[doc_id] = None
                result.append(dict(document))
        return result

    def clear(self, session_key: str) -> bool:
        """Forget everything about ``session_key``; True when it was known."""
        with self._lock:
            return self._seen.pop(session_key, None) is not None

    def _seen_for(self, session_key: str) -> dict[str, None]:
        """The key's doc ids, marked most recently used; evicts the oldest key over the cap."""
        seen = self._seen.get(session_key)
        if seen is None:
            seen = self._seen[session_key] = {}
            while len(self._seen) > self.max_keys:
                self._seen.popitem(last=False)
        else:
            self._seen.move_to_end(session_key)
        return seen


def _stub(document: dict[str, Any], doc_id: str) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "title": document.get("title", ""),
        "source": document.get("source", ""),
        "score": document.get("score", 0.0),
        "content": STUB_TEMPLATE.format(doc_id=doc_id),
        "already_retrieved": True,
    }
