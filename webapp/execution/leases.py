"""Leases of runs in flight, and the reaper of runs whose holder died.

Every process holding runs renews their lease every third of ``RUN_LEASE_SECONDS``; every
process also reaps (:meth:`webapp.persistence.runs.RunStore.reap`) on the same tick: an expired
PENDING run is enqueued again, an expired RUNNING one put back PENDING to resume from its
checkpoint; past ``RUN_QUEUE_TIMEOUT_SECONDS`` or ``RUN_MAX_RESUMES`` it is failed, and its
event log gets ``error`` + ``done``.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable

from ..persistence.db import is_bound
from ..persistence.runs import FAILED, Reaped, RunStore
from ..services.chat import ChatOutcome
from .events import EventLog
from .streams import ending_events

log = logging.getLogger(__name__)


class LeaseKeeper:
    """Renews the leases of the runs this process holds; reaps expired runs of anyone."""

    def __init__(self, runs: RunStore, events: EventLog | None, lease_seconds: float) -> None:
        self.runs = runs
        self.events = events
        self.interval = max(0.2, lease_seconds / 3)
        # run id -> how many holds: a run delivered twice to this process is held by both
        # deliveries, and the one that finds it claimed must not end the other's hold.
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Enqueues a run put back PENDING; without it, expired runs are failed, not retried.
        self.requeue: Callable[[Reaped], None] | None = None

    def hold(self, run_id: str) -> None:
        """Renew ``run_id``'s lease from now on, until as many :meth:`release` calls."""
        with self._lock:
            self._held[run_id] += 1

    def release(self, run_id: str) -> None:
        """Drop one hold of ``run_id``; its lease is no longer renewed once none is left."""
        with self._lock:
            self._held[run_id] -= 1
            if self._held[run_id] <= 0:
                del self._held[run_id]

    def held(self) -> list[str]:
        """The runs whose lease this process renews."""
        with self._lock:
            return sorted(self._held)

    def tick(self) -> list[Reaped]:
        """One heartbeat and one reaper pass; returns the runs reaped."""
        self.runs.renew(self.held())
        requeue = self.requeue
        reaped = self.runs.reap(requeue=requeue is not None)
        for run in reaped:
            if not run.requeued:
                self._announce(run)
            elif requeue is not None:
                try:
                    requeue(run)
                except Exception as exc:  # still PENDING: the next lease expiry tries again
                    log.warning("could not enqueue run %s again: %s", run.run_id, exc)
        return reaped

    def _announce(self, run: Reaped) -> None:
        if self.events is None:
            return
        failed = ChatOutcome(
            success=False,
            answer=None,
            error_message=run.error_message,
            session_id=run.session_id,
            run_id=run.run_id,
            flow=run.flow,
            status=FAILED,
            degraded=False,
        )
        try:
            for kind, data in ending_events(failed):
                self.events.append(run.run_id, kind, data)
        except Exception as exc:
            log.warning("could not publish the end of reaped run %s: %s", run.run_id, exc)

    def start(self) -> None:
        """Tick now (in the caller), then every ``interval`` s on a daemon thread (idempotent)."""
        if self._thread is not None:
            return
        try:
            self.tick()
        except Exception as exc:  # the database may not be up yet; the thread tries again
            log.warning("lease keeper start-up tick failed: %s", exc)
        self._thread = threading.Thread(target=self._loop, name="lease-keeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            if not is_bound(self.runs.database):
                # The models were bound to another database (a newer app in this process, as
                # in tests): this keeper's queries would land there, so it retires.
                return
            try:
                self.tick()
            except Exception as exc:  # the database is unreachable: the next tick tries again
                log.warning("lease keeper tick failed: %s", exc)
