"""Knowledge index at 1k and 10k documents: sync, re-sync, search p50/p95, a 1 MiB upload.

A seeded corpus of runbook-like Markdown is written to a temporary folder: a level-1 title,
sections (symptoms, diagnosis, mitigation, ...) with paragraphs, bullet lists and fenced
snippets, sizes log-normal around 3 KB. Words are drawn by Zipf's law (frequency ~ 1/rank)
from function words, an operations vocabulary and a long tail of made-up names, so common
words match many chunks and rare ones a handful. Questions read like the ones the analyser
sends: 4 to 14 words drawn the same way, sometimes a component name. Each size is synced into
a fresh index file, synced again unchanged, then every question is searched once from one
thread (top 5). Figures are medians over ``--repeats`` runs; the machine may be shared, so
compare figures of one run only.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

from webapp.tools.knowledge import KnowledgeIndex

MIB = 1024 * 1024

_OPS_TEXT = """
latency error timeout connection pool database cache queue disk memory cpu thread request
response retry replica primary failover leader election partition broker consumer producer
lag throughput saturation eviction heap garbage collection pause restart deploy rollback
release canary traffic load balancer upstream downstream dns certificate expiry tls handshake
socket port firewall network packet loss jitter bandwidth storage volume snapshot backup
restore index query slow lock deadlock transaction commit isolation schema migration table
row shard cluster node pod container image registry scheduler cron job batch worker process
signal kill oom limit quota throttle rate burst spike alert page oncall escalation incident
postmortem metric log trace span sampling dashboard threshold baseline anomaly regression
capacity autoscaling scale replica set configuration flag feature toggle secret rotation
token authentication authorization session cookie header payload serialization timeout
circuit breaker bulkhead backoff jitter idempotency duplicate ordering offset checkpoint
compaction segment flush fsync journal wal checksum corruption repair quorum consensus
heartbeat probe liveness readiness health endpoint gateway proxy ingress egress route
mesh sidecar tracing exporter collector agent daemon kernel filesystem inode descriptor
handle leak growth exhaustion contention starvation priority preemption eviction drain
cordon taint toleration affinity zone region datacenter outage degradation recovery
"""
_VERBS_TEXT = """
check verify inspect compare restart drain scale raise lower rotate revert roll escalate
page confirm look find measure increase decrease disable enable flush purge rebuild repair
"""
_FILLER_TEXT = """
the a an and of to in for on with when is are be if it this that then from by as at or
"""
_SECTIONS = (
    "Symptoms",
    "Impact",
    "Diagnosis",
    "Mitigation",
    "Root causes",
    "Escalation",
    "Verification",
    "Background",
    "Known issues",
)
_SYLLABLE_TEXT = "ka lo mi ne ru sa ti vo xe za bri dun fel gor hap jin kel mor"
_OPS_WORDS, _VERBS = _OPS_TEXT.split(), _VERBS_TEXT.split()
_FILLER, _SYLLABLES = _FILLER_TEXT.split(), _SYLLABLE_TEXT.split()


#: Distinct made-up words (component, host and table names, rare terms). Heaps' law
#: (V ~ 30 * sqrt(words)) puts a real 50 MB runbook folder at ~90,000 distinct words; a small
#: vocabulary would make every word common and every query match most chunks.
TAIL_WORDS = 40_000


class Corpus:
    """Deterministic documents and queries from ``seed``."""

    def __init__(self, seed: int = 12) -> None:
        self._rng = random.Random(seed)
        rng = self._rng
        self.components = sorted(
            {
                "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
                for _ in range(TAIL_WORDS)
            }
        )
        ops = _OPS_WORDS + _VERBS
        rng.shuffle(ops)
        tail = list(self.components)
        rng.shuffle(tail)
        # Most frequent first: function words, then operations words, then the long tail.
        self._words = _FILLER + ops + tail
        self._weights = list(accumulate(1.0 / (rank + 1) for rank in range(len(self._words))))

    def _pick(self, count: int) -> list[str]:
        return self._rng.choices(self._words, cum_weights=self._weights, k=count)

    def _sentence(self) -> str:
        return " ".join(self._pick(self._rng.randint(6, 18))).capitalize() + "."

    def _paragraph(self) -> str:
        return " ".join(self._sentence() for _ in range(self._rng.randint(2, 6)))

    def _section(self, level: str, name: str) -> str:
        rng = self._rng
        parts = [f"{level} {name}"]
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            if roll < 0.2:
                parts.append("\n".join(f"- {self._sentence()}" for _ in range(rng.randint(2, 6))))
            elif roll < 0.3:
                command = " ".join(self._pick(rng.randint(3, 8)))
                parts.append(f"```\n$ {command}\n```")
            else:
                parts.append(self._paragraph())
        return "\n\n".join(parts)

    def document(self) -> str:
        """One runbook, of log-normally distributed size (median about 3 KB)."""
        rng = self._rng
        target = min(int(rng.lognormvariate(8.0, 0.9)), 60_000)
        title = " ".join(self._pick(rng.randint(3, 6))).title()
        parts = [f"# {title}", self._paragraph()]
        size = sum(map(len, parts))
        while size < target:
            name = rng.choice(_SECTIONS)
            if rng.random() < 0.3:
                name = f"{name}: {self._rng.choice(self.components)}"
            section = self._section(rng.choice(("##", "##", "###")), name)
            parts.append(section)
            size += len(section)
        return "\n\n".join(parts) + "\n"

    def write(self, folder: Path, count: int) -> list[Path]:
        """Write ``count`` documents under ``folder`` (in sub-folders of 100)."""
        paths = []
        for n in range(count):
            path = folder / f"team{n // 100:03d}" / f"runbook-{n:05d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.document(), encoding="utf-8")
            paths.append(path)
        return paths

    def query(self) -> str:
        """An incident question: 4 to 14 words drawn like document text, sometimes a component."""
        words = self._pick(self._rng.randint(4, 14))
        if self._rng.random() < 0.3:
            words.append(self._rng.choice(self.components))
        return " ".join(words) + "?"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def fresh_index(db: Path) -> KnowledgeIndex:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return KnowledgeIndex(db)


def timed(action: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    action(*args)
    return time.perf_counter() - started


def measure(label: str, folder: Path, db: Path, queries: list[str]) -> dict[str, float]:
    """One run at one size: sync, re-sync, every question once from one thread (ms)."""
    index = fresh_index(db)
    figures = {f"sync {label} (s)": timed(index.sync_directory, folder)}
    figures[f"re-sync {label} unchanged (s)"] = timed(index.sync_directory, folder)
    latencies = [timed(index.search, query, 5) * 1000 for query in queries]
    figures[f"search p50 {label} (ms)"] = percentile(latencies, 0.5)
    figures[f"search p95 {label} (ms)"] = percentile(latencies, 0.95)
    index.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    corpus = Corpus(args.seed)
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-knowledge-") as tmp:
        work = Path(tmp)
        large, small = work / "large" / "runbooks", work / "small" / "runbooks"
        paths = corpus.write(large, 10_000)
        size = sum(path.stat().st_size for path in paths)
        for path in paths[:1000]:
            target = small / path.relative_to(large)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
        queries = [corpus.query() for _ in range(args.queries)]
        print(f"corpus: 10,000 documents, {size / 1e6:.1f} MB (seed {args.seed})")
        upload = "".join(corpus.document() for _ in range(400))[:MIB]  # ASCII: 1 MiB
        for _ in range(args.repeats):
            run = measure("1k", small, work / "knowledge.db", queries)
            run |= measure("10k", large, work / "knowledge.db", queries)
            index = KnowledgeIndex(work / "knowledge.db")
            run["upload 1 MiB at 10k (s)"] = timed(index.add_document, "big.md", upload)
            index.close()
            runs.append(run)
    figures = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
    print(f"\n{'(medians of ' + str(args.repeats) + ')':<32}")
    for name, value in figures.items():
        print(f"{name:<32}{value:>10.3f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
