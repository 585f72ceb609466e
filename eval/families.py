"""Incident families of generated worlds: what moves, what gets logged, what the runbook says.

A family names where its cause lives relative to the service that shows the symptom (the
victim): ``self``, its ``database``, its ``cache``, a ``downstream`` service it calls, or (for
consumer lag) the consumer itself behind a ``queue``. Log phrasings name the culprit only in
some lines (``{dep}`` is the culprit's name in about 40% of them, an address otherwise);
runbooks describe each mechanism in their own words and never quote a log line.
"""

from __future__ import annotations

from eval.families_classic import CACHE, DB_POOL, DEPLOY, DOWNSTREAM
from eval.families_more import CERT, CPU, DISK, LEAK, QUEUE
from eval.incident_types import Family, Shape

__all__ = ["FAMILIES", "GENERIC_RUNBOOKS", "Family", "Shape"]

FAMILIES: dict[str, Family] = {
    family.key: family
    for family in (
        DB_POOL,
        DOWNSTREAM,
        CACHE,
        DEPLOY,
        DISK,
        CERT,
        CPU,
        LEAK,
        QUEUE,
    )
}

# Runbooks every world has that fit no incident: the knowledge base is not an answer key.
GENERIC_RUNBOOKS: dict[str, tuple[str, str]] = {
    "oncall_handover.md": (
        "On-call handover checklist",
        "Write down open incidents, silenced alerts and running changes before you hand over. "
        "Check that paging works for the next person.\n",
    ),
    "replica_scaling.md": (
        "Adding read replicas",
        "Create the replica from the latest snapshot, let it catch up, then add it to the "
        "read pool. Watch replication delay during peak hours.\n",
    ),
    "noisy_alerts.md": (
        "Handling flapping alerts",
        "An alert that fires and resolves repeatedly usually has a threshold too close to "
        "normal variation. Widen the window or raise the threshold; never silence it forever.\n",
    ),
}
