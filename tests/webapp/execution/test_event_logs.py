"""Both event logs resume after an event id the same way, whichever form the id has."""

from __future__ import annotations

import secrets

from webapp.execution.events import MemoryEventLog, RedisEventLog


def test_the_memory_log_resumes_after_plain_and_stream_form_ids() -> None:
    log = MemoryEventLog()
    ids = [log.append("run-1", "progress", {"n": n}) for n in range(5)]
    assert ids == ["1", "2", "3", "4", "5"]
    assert [e.id for e in log.read("run-1", None, 0)] == ids
    for after in ("2", "2-0", "2-7"):  # "N-M" reads as "N", as a Redis log orders them
        assert [e.id for e in log.read("run-1", after, 0)] == ["3", "4", "5"]
    assert log.read("run-1", "5", 0) == [] and log.read("run-1", "99-0", 0) == []
    assert [e.id for e in log.read("run-1", "0", 0)] == ids


def test_the_redis_log_resumes_after_an_id_it_handed_out(redis_url: str) -> None:
    log = RedisEventLog(redis_url, key_prefix=f"test:events:{secrets.token_hex(4)}:")
    try:
        ids = [log.append("run-1", "progress", {"n": n}) for n in range(3)]
        assert [e.id for e in log.read("run-1", None, 0.01)] == ids
        assert [e.id for e in log.read("run-1", ids[0], 0.01)] == ids[1:]
        assert log.read("run-1", ids[-1], 0.01) == []
        assert [e.id for e in log.read("run-1", "0", 0.01)] == ids  # before every stream id
    finally:
        log.client.delete(log.prefix + "run-1")
        log.close()
