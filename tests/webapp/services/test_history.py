"""Session history: messages, Redis for real, and Redis going away mid-run."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.environment import unavailable
from webapp.persistence.history import (
    HistoryMessage,
    HistoryUnavailable,
    RedisHistory,
    Role,
)

T = TypeVar("T")


def msg(content: str, role: Role = "user", run_id: str | None = None) -> HistoryMessage:
    return HistoryMessage(role=role, content=content, run_id=run_id)


def contents(store: RedisHistory, session_id: str) -> list[str]:
    return [m.content for m in store.load(session_id).messages]


# --- messages -------------------------------------------------------------


def test_message_round_trips_through_its_dict_form() -> None:
    message = HistoryMessage(role="assistant", content="héllo 🚀", run_id="run-1")
    assert HistoryMessage.from_dict(message.to_dict()) == message
    assert message.at.endswith("Z")


@pytest.mark.parametrize(
    "data",
    [
        {"role": "robot", "content": "x", "at": "t"},
        {"role": "user", "content": 3, "at": "t"},
        {"role": "user", "content": "x", "run_id": 7, "at": "t"},
        {"role": "user", "content": "x"},
        ["user", "x"],
    ],
)
def test_message_from_dict_rejects_wrong_shapes_with_value_error(data: object) -> None:
    with pytest.raises(ValueError):
        HistoryMessage.from_dict(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("session_id", ["", "a b", "x" * 65, "a/b", "ключ", "a\nb", "*"])
def test_stores_reject_session_ids_outside_the_allowed_alphabet(session_id: str) -> None:
    store = RedisHistory("redis://127.0.0.1:1/0")
    with pytest.raises(ValueError):
        store.load(session_id)
    with pytest.raises(ValueError):
        store.append(session_id, [msg("x")])
    with pytest.raises(ValueError):
        store.clear(session_id)


# --- RedisHistory against the real server from TEST_REDIS_URL ------------------------------


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("TEST_REDIS_URL")
    if not url:
        pytest.skip("TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0)")
    try:
        probe = redis.Redis.from_url(url, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        with probe:
            probe.ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "1":
            pytest.fail(f"CI=1 but Redis at TEST_REDIS_URL={url} is unreachable: {exc}")
        pytest.skip(f"Redis at TEST_REDIS_URL={url} is unreachable: {exc}")
    return url


@pytest.fixture
def store(redis_url: str) -> Iterator[RedisHistory]:
    prefix = f"test:history:{uuid.uuid4().hex}:"
    history = RedisHistory(redis_url, max_messages=4, ttl_seconds=120, key_prefix=prefix)
    yield history
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)
    history.close()


@pytest.fixture
def raw(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url)


def test_redis_round_trip_preserves_every_field(store: RedisHistory) -> None:
    sent = [msg("question", run_id=None), msg("answer", role="assistant", run_id="run-9")]
    assert store.append("s1", sent).ok
    loaded = store.load("s1")
    assert loaded.available and loaded.error is None
    assert loaded.messages == sent
    assert store.ping() is True


def test_redis_cap_keeps_the_newest_messages_in_order(
    store: RedisHistory, raw: redis.Redis
) -> None:
    store.append("s1", [msg("1"), msg("2"), msg("3")])
    store.append("s1", [msg("4"), msg("5"), msg("6")])
    assert contents(store, "s1") == ["3", "4", "5", "6"]
    assert raw.llen(store.key("s1")) == 4


def test_redis_ttl_is_set_and_refreshed_on_write(store: RedisHistory, raw: redis.Redis) -> None:
    key = store.key("s1")
    store.append("s1", [msg("a")])
    assert 115 <= raw.ttl(key) <= 120
    raw.expire(key, 5)
    store.load("s1")
    assert raw.ttl(key) <= 5
    store.append("s1", [msg("b")])
    assert 115 <= raw.ttl(key) <= 120


def test_redis_clear_returns_the_number_removed(store: RedisHistory, raw: redis.Redis) -> None:
    store.append("s1", [msg("a"), msg("b")])
    assert store.clear("s1") == 2
    assert raw.exists(store.key("s1")) == 0
    assert store.clear("s1") == 0
    assert store.load("s1").messages == []


def test_redis_skips_corrupt_entries(store: RedisHistory, raw: redis.Redis) -> None:
    store.append("s1", [msg("first")])
    key = store.key("s1")
    raw.rpush(key, b"not json", b'{"role": "robot", "content": "x", "at": "t"}', b"[1, 2]")
    raw.rpush(key, b"\xff\xfe", b'"just a string"')
    store.append("s1", [msg("last")])
    loaded = store.load("s1")
    assert loaded.available
    assert [m.content for m in loaded.messages] == ["last"]
    raw.rpush(key, b"{broken")
    assert contents(store, "s1") == ["last"]


def test_redis_keeps_unicode_and_emoji_content(store: RedisHistory, raw: redis.Redis) -> None:
    text = "Ошибка 500 在 checkout 🔥🚒 — naïve “quotes”\n\ttab"
    store.append("s1", [msg(text)])
    assert contents(store, "s1") == [text]
    # Stored as UTF-8, not \u escapes, so the list stays readable in redis-cli.
    assert "Ошибка 500 在 checkout 🔥🚒".encode() in raw.lrange(store.key("s1"), 0, -1)[0]


def test_redis_wrong_type_key_degrades_instead_of_raising(
    store: RedisHistory, raw: redis.Redis
) -> None:
    raw.set(store.key("s1"), "a string, not a list")
    loaded = store.load("s1")
    assert not loaded.available and loaded.error and "WRONGTYPE" in loaded.error
    assert not store.append("s1", [msg("a")]).ok


# --- Redis going away mid-run: a throwaway server of our own --------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(port: int) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server is not on PATH: cannot run the outage test")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(
        [*args, "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    probe = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=0.2)
    deadline = time.monotonic() + 5
    while True:
        try:
            probe.ping()
            return proc
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"throwaway redis-server on port {port} did not start")
            time.sleep(0.02)
        finally:
            probe.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait(timeout=5)


@pytest.fixture
def throwaway() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            stop(proc)


def timed(call: Callable[[], T]) -> tuple[T, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def test_redis_outage_degrades_and_recovers_without_a_new_store(
    throwaway: list[subprocess.Popen[bytes]],
) -> None:
    port = free_port()
    throwaway.append(start_redis(port))
    store = RedisHistory(f"redis://127.0.0.1:{port}/0", max_messages=5, ttl_seconds=60)
    assert store.append("s1", [msg("before")]).ok
    assert contents(store, "s1") == ["before"]

    stop(throwaway[0])

    loaded, took = timed(lambda: store.load("s1"))
    assert not loaded.available and loaded.messages == [] and loaded.error
    assert took < 3
    written, took = timed(lambda: store.append("s1", [msg("during")]))
    assert not written.ok and written.error
    assert took < 3
    started = time.monotonic()
    with pytest.raises(HistoryUnavailable, match="unavailable"):
        store.clear("s1")
    assert time.monotonic() - started < 3
    assert store.ping() is False

    throwaway.append(start_redis(port))  # a fresh, empty server on the same port

    assert store.ping() is True
    loaded = store.load("s1")
    assert loaded.available and loaded.messages == []
    assert store.append("s1", [msg("after")]).ok
    assert contents(store, "s1") == ["after"]
    assert store.clear("s1") == 1
    store.close()


def test_redis_store_never_connects_before_first_use() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        store = RedisHistory(f"redis://127.0.0.1:{port}/0", socket_timeout=0.5)
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody knocked: building the store did not connect
    loaded, took = timed(lambda: store.load("s1"))
    assert not loaded.available and "Connection" in (loaded.error or "")
    assert took < 2


def test_redis_store_rejects_a_url_that_is_not_redis() -> None:
    with pytest.raises(ValueError, match="REDIS_URL"):
        RedisHistory("http://127.0.0.1:6379")
