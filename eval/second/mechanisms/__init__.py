"""The second generator's fault mechanisms, written from how production systems fail.

Ten that a fixed cause catalogue tends to lack (rotated credentials, DNS failure, a lock held by
a batch job, rate limiting, file-descriptor exhaustion, clock skew, a config push, replica lag,
storage saturated by a batch job, a network partition) and three classics (a connection leak
exhausting the pool, a memory leak ending in OOM kills, a bad deploy). Placeholders in log
templates are filled by ``eval.second.logs``: ``{dep}``/``{dep_host}``/``{dep_addr}``/``{fqdn}``
name the upstream, ``{ext}`` the external API, ``{n}``/``{ms}``/``{hex}`` are random.
"""

from __future__ import annotations

from eval.second.faults import Fault
from eval.second.mechanisms.app import (
    CONFIG,
    CREDENTIALS,
    DEPLOY,
    FDS,
    MEMORY,
    POOL,
    RATE_LIMIT,
)
from eval.second.mechanisms.infra import CLOCK, DNS, LOCK, PARTITION, REPLICA, STORAGE

FAULTS: dict[str, Fault] = {
    f.key: f
    for f in (
        CREDENTIALS,
        DNS,
        LOCK,
        RATE_LIMIT,
        FDS,
        CLOCK,
        CONFIG,
        REPLICA,
        STORAGE,
        PARTITION,
        POOL,
        MEMORY,
        DEPLOY,
    )
}
