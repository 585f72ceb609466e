"""Session history: the context of the next turn, capped and expiring (not an audit record).

:class:`RedisHistory` (``REDIS_URL`` set) or :class:`.sql_history.SqlHistory` implement
:class:`HistoryStore`. History is best effort: when the backend is unreachable, ``load`` and
``append`` report it as data (``available=False`` / ``ok=False``), so chat still answers without
history and says so; only ``clear``, which a user asked for, raises
(:class:`HistoryUnavailable`, a 503).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import pydantic
import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

log = logging.getLogger(__name__)

Role = Literal["user", "assistant"]
SESSION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
DEFAULT_MAX_MESSAGES = 12
DEFAULT_TTL_SECONDS = 86_400


class HistoryUnavailable(Exception):
    """The history backend could not be reached for an operation a user explicitly asked for."""


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_session_id(session_id: str) -> str:
    """Return ``session_id`` if it matches ``[A-Za-z0-9_.:-]{1,64}``, else raise ValueError."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise ValueError(f"invalid session id: {session_id!r}")
    return session_id


@pydantic.dataclasses.dataclass(frozen=True, config=pydantic.ConfigDict(strict=True))
class HistoryMessage:
    """One turn of a conversation: who said it, what, in which run, and when (ISO-8601 UTC);
    a wrong shape raises ValueError."""

    role: Role
    content: str
    run_id: str | None = None
    at: str = field(default_factory=_utc_now)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HistoryMessage:
        """Build a message from its dict form; raise ValueError when the shape is wrong."""
        if not isinstance(data, Mapping) or not {"role", "content", "at"} <= data.keys():
            raise ValueError(f"not a history message: {data!r}"[:200])
        return cls(data["role"], data["content"], data.get("run_id"), data["at"])


@dataclass(frozen=True)
class HistoryLoad:
    """The result of a load: the messages, oldest first, or why none could be read."""

    messages: list[HistoryMessage] = field(default_factory=list)
    available: bool = True
    error: str | None = None


@dataclass(frozen=True)
class HistoryWrite:
    """The result of an append: whether it was stored, and why not."""

    ok: bool = True
    error: str | None = None


class HistoryStore(Protocol):
    """Where session history lives; load/append never raise for an unreachable backend."""

    def load(self, session_id: str) -> HistoryLoad:
        """Return the session's newest messages, oldest first."""
        ...

    def append(self, session_id: str, messages: Sequence[HistoryMessage]) -> HistoryWrite:
        """Append messages, keep the newest ``max_messages`` and refresh the TTL."""
        ...

    def clear(self, session_id: str) -> int:
        """Forget a session's history and return how many messages were removed."""
        ...

    def ping(self) -> bool:
        """Return True when the backend answers (for readiness)."""
        ...


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class RedisHistory:
    """History in Redis: a capped list of JSON messages per session, with a TTL; each append is one
    MULTI/EXEC (RPUSH, LTRIM, EXPIRE). The client connects on first use (redis-py's pool), with
    ``socket_timeout`` and one retry (at most ~3.2 s per call)."""

    def __init__(
        self,
        url: str,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        key_prefix: str = "diagnosis:history:",
        socket_timeout: float = 1.0,
    ) -> None:
        if max_messages < 1 or ttl_seconds < 1:
            raise ValueError("max_messages and ttl_seconds must be at least 1")
        if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ValueError("REDIS_URL must start with redis://, rediss:// or unix://")
        if socket_timeout <= 0:
            raise ValueError("socket_timeout must be positive")
        self.max_messages = max_messages
        self.ttl_seconds = ttl_seconds
        self.key_prefix = key_prefix
        # One retry of a failed command or connect, sleeping min(0.1, 0.05 * 2**n) s: at most
        # three socket waits of ``socket_timeout`` and 0.2 s of sleep per call. A timed-out
        # append may still have been applied: harmless for capped, expiring context.
        self.client = redis.Redis.from_url(
            url,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
            retry=Retry(ExponentialBackoff(cap=0.1, base=0.05), 1),
        )

    def key(self, session_id: str) -> str:
        return self.key_prefix + check_session_id(session_id)

    def load(self, session_id: str) -> HistoryLoad:
        key = self.key(session_id)
        try:
            raw = self.client.lrange(key, -self.max_messages, -1)
        except (redis.RedisError, OSError) as exc:
            log.warning("history load failed for %s: %s", session_id, _describe(exc))
            return HistoryLoad(available=False, error=_describe(exc))
        return HistoryLoad(messages=self._decode(key, raw))

    def append(self, session_id: str, messages: Sequence[HistoryMessage]) -> HistoryWrite:
        key = self.key(session_id)
        if not messages:
            return HistoryWrite()
        payloads = [json.dumps(m.to_dict(), ensure_ascii=False) for m in messages]
        try:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, *payloads)
                pipe.ltrim(key, -self.max_messages, -1)
                pipe.expire(key, self.ttl_seconds)
                pipe.execute()
        except (redis.RedisError, OSError) as exc:
            log.warning("history append failed for %s: %s", session_id, _describe(exc))
            return HistoryWrite(ok=False, error=_describe(exc))
        return HistoryWrite()

    def clear(self, session_id: str) -> int:
        """Delete the session's list and return its length; raise HistoryUnavailable if down."""
        key = self.key(session_id)
        try:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.llen(key)
                pipe.delete(key)
                length, _ = pipe.execute()
        except (redis.RedisError, OSError) as exc:
            raise HistoryUnavailable(f"session history is unavailable: {_describe(exc)}") from exc
        return int(length)

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except (redis.RedisError, OSError):
            return False

    def close(self) -> None:
        """Close the pooled connections (a later call reconnects)."""
        self.client.close()

    def _decode(self, key: str, raw: Sequence[Any]) -> list[HistoryMessage]:
        messages = []
        for item in raw:
            try:
                messages.append(HistoryMessage.from_dict(json.loads(item)))
            except (ValueError, TypeError) as exc:
                # A corrupt entry costs one message of context, never the whole turn.
                log.warning("skipping corrupt history entry in %s: %s", key, _describe(exc))
        return messages
