"""The knowledge a real team has written down: a service catalog page and a few runbooks.

The catalog page carries every service's description (English and Chinese), team, callers and
dependencies, as a Backstage export would. Runbooks exist for the user-facing services and for
four pieces of infrastructure (replica lag, DNS, the Redis cluster, the object store); like in
most teams, most failure mechanisms have none.
"""

from __future__ import annotations

from eval.second.catalog import System
from eval.second.world import World

_INFRA = {
    "replica": (
        "PostgreSQL read replica",
        "Read replicas replay the primary's WAL. When replay falls behind, readers see old rows; "
        "long queries on the replica can be cancelled by recovery conflicts, or hold replay back "
        "when hot_standby_feedback is on.\n\n## What to check\n\n- Replication lag on the "
        "replica's dashboard and the longest running transaction.\n- Cancel the long query or "
        "move analytical reads elsewhere.\n- Send latency-sensitive reads to the primary until "
        "the replica catches up.\n",
    ),
    "dns": (
        "Cluster DNS",
        "Every service resolves its databases, caches and partners through the cluster DNS. "
        "When it answers slowly or fails, clients report resolution errors and retry.\n\n## What "
        "to check\n\n- SERVFAIL rate and request duration of the DNS pods.\n- CPU throttling and "
        "restarts of the DNS pods, and the health of their upstream resolvers.\n- Scale the DNS "
        "deployment or enable node-local caching.\n",
    ),
    "cache": (
        "Redis cluster",
        "The Redis cluster keeps hot state. Clients fail fast when the cluster reports a failed "
        "state or nodes cannot be reached.\n\n## What to check\n\n- Cluster state and failed "
        "slots.\n- Connectivity between availability zones.\n- Client errors and the number of "
        "connected clients.\n",
    ),
    "store": (
        "Object storage (MinIO)",
        "The object store serves uploads and downloads for several services and jobs.\n\n## What "
        "to check\n\n- Time to first byte, waiting requests and 5xx responses.\n- Which clients "
        "send the most requests; large jobs should be throttled or scheduled off-peak.\n- Drive "
        "latency on the storage nodes.\n",
    ),
}


def _catalog(system: System) -> str:
    lines = [f"# Service catalog: {system.title} ({system.key})", ""]
    for service in system.services:
        callers = ", ".join(s.name for s in system.callers(service.name)) or "none"
        lines += [
            f"## {service.name}",
            "",
            f"{service.describe[0]}. {service.describe[1]}。",
            "",
            f"- Team: {service.team}",
            f"- Depends on: {', '.join(service.deps) or 'none'}",
            f"- Called by: {callers}",
        ]
        if service.external:
            lines.append(f"- External API: {service.external}")
        if service.aliases:
            lines.append(f"- Also known as: {', '.join(service.aliases)}")
        lines.append("")
    return "\n".join(lines)


def _service_runbook(system: System, name: str) -> str:
    service = system.service(name)
    deps = "\n".join(f"- {d}: {system.service(d).describe[0]}" for d in service.deps) or "- none"
    return (
        f"# {service.describe[0]} ({name}) / {service.describe[1]}\n\n"
        f"Owner: {service.team}. Route: `{service.path}`.\n\n## Dependencies\n\n{deps}\n\n"
        "## First steps\n\n- Look at the error ratio and p99 latency of this service and of "
        "each dependency above.\n- Compare with the last deploy and the last configuration "
        "change.\n- Page the owning team of the first dependency that changed before this "
        "service did.\n"
    )


def runbooks(world: World) -> dict[str, str]:
    """``{file name: Markdown}`` for the world's knowledge base."""
    system = world.system
    found = {"service-catalog.md": _catalog(system)}
    for service in system.services:
        if service.user_facing:
            found[f"{service.name}.md"] = _service_runbook(system, service.name)
        if service.kind in _INFRA:
            title, body = _INFRA[service.kind]
            found[f"{service.name}.md"] = f"# {title} ({service.name})\n\n{body}"
    return found
