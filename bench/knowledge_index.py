"""Knowledge index at scale: initial sync of 1k and 10k documents, re-sync, search latency.

A seeded corpus of runbook-like Markdown (bench/knowledge_corpus.py) is written to a temporary
folder and synced into a fresh index file; then the same folder is synced again with nothing
changed, and seeded incident questions are searched at 10k documents, from 1 and from 4
threads at once: a first pass right after a start (a new index object, its start-up re-sync,
then every question once: the postings that webapp/tools/term_scores.py keeps are being read
meanwhile), warm passes, and searches right after an upload (of this index object, and
of another one on the same file: another process).
Targets (issue 12): 10k documents indexed in < 10 s, search p95 < 20 ms.

``--baseline REV`` loads ``webapp/tools/knowledge.py`` and its modules as they were at ``REV`` and
measures it in the same run, so before and after share the machine and its load (the machine
is shared: compare only figures of one run). Figures are medians over ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from knowledge_corpus import Corpus  # bench/ is the script folder: on sys.path

from webapp.tools.knowledge import KnowledgeIndex

ROOT = Path(__file__).resolve().parent.parent
THREADS = 4
COLD_QUERIES = 40


class Index(Protocol):
    def sync_directory(self, path: Path) -> Any: ...
    def search(self, query: str, top_k: int = 3) -> list[dict[str, Any]]: ...
    def add_document(self, name: str, text: str) -> Any: ...
    def close(self) -> None: ...


Factory = Callable[[Path], Index]


def baseline_class(revision: str, workdir: Path) -> Factory:
    """``KnowledgeIndex`` from ``webapp/tools/`` at git ``revision`` (a package of its own)."""
    package = workdir / "knowledge_baseline"
    package.mkdir()
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{revision}:webapp/tools/"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in listed:
        if name.endswith(".py"):
            source = subprocess.run(
                ["git", "show", f"{revision}:webapp/tools/{name}"],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            (package / name).write_text(source, encoding="utf-8")
    # Inside webapp so that the modules' relative imports resolve to the revision's siblings.
    name = "webapp._knowledge_baseline"
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[name])
    module = importlib.import_module(f"{name}.knowledge")
    cls: Factory = module.KnowledgeIndex
    return cls


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def record(figures: dict[str, float], label: str, runs: list[list[float]]) -> None:
    """The medians over ``runs`` of their p50 and p95 latency."""
    for name, fraction in (("p50", 0.5), ("p95", 0.95)):
        figures[f"search {name} {label} (ms)"] = statistics.median(
            percentile(run, fraction) for run in runs
        )


def timed_sync(cls: Factory, folder: Path, db: Path) -> float:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    index = cls(db)
    started = time.perf_counter()
    index.sync_directory(folder)
    elapsed = time.perf_counter() - started
    index.close()
    return elapsed


def search_latencies(index: Index, queries: list[str], threads: int) -> list[float]:
    """Per-search latency (ms) with ``threads`` threads each running every query."""
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def run(offset: int) -> None:
        mine = []
        start.wait()
        for n in range(len(queries)):
            query = queries[(n + offset * 7) % len(queries)]
            began = time.perf_counter()
            index.search(query, 5)
            mine.append((time.perf_counter() - began) * 1000)
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return latencies


def measure(
    cls: Factory, label: str, dirs: tuple[Path, Path, Path], queries: list[str], repeats: int
) -> dict[str, float]:
    """Sync, re-sync and search figures of one implementation (``dirs``: 1k, 10k, work)."""
    small, large, work = dirs
    db = work / f"{label}.db"
    figures: dict[str, float] = {}
    figures["sync 1k (s)"] = statistics.median(timed_sync(cls, small, db) for _ in range(repeats))
    figures["sync 10k (s)"] = statistics.median(timed_sync(cls, large, db) for _ in range(repeats))
    index = cls(db)
    resync = []
    for _ in range(repeats):
        started = time.perf_counter()
        index.sync_directory(large)
        resync.append(time.perf_counter() - started)
    figures["re-sync 10k unchanged (s)"] = statistics.median(resync)
    index.close()
    shapes = {threads: f"{threads} thread{'s' if threads > 1 else ''}" for threads in (1, THREADS)}
    saved = Path(
        f"{db}-postings.npz"
    )  # what the index saves on close (webapp/tools/term_scores.py)
    starts = {"after a start": False, "after a start, nothing saved": True}
    for start, forget in starts.items():
        if forget and not saved.exists():
            continue  # an implementation that saves nothing: the first shape says it all
        for threads, shape in shapes.items():
            # A start: a new index object, its start-up sync (nothing changed), then every
            # question once (what the index keeps in memory may still be being read).
            runs = []
            for _ in range(repeats):
                if forget:
                    saved.unlink(missing_ok=True)
                index = cls(db)
                index.sync_directory(large)
                runs.append(search_latencies(index, queries, threads))
                index.close()
            record(figures, f"10k, first pass {start}, {shape}", runs)
        if saved.exists():
            ready = []
            for _ in range(repeats):
                if forget:
                    saved.unlink(missing_ok=True)
                started = time.perf_counter()
                index = cls(db)
                index.wait_until_loaded()  # type: ignore[attr-defined]
                ready.append(time.perf_counter() - started)
                index.close()
            figures[f"postings in memory {start} (s)"] = statistics.median(ready)
    index = cls(db)
    wait = getattr(index, "wait_until_loaded", None)
    if wait is not None:
        wait()
    for threads, shape in shapes.items():
        runs = [search_latencies(index, queries, threads) for _ in range(repeats)]
        record(figures, f"10k, warm, {shape}", runs)
    # Every search right after an upload: a new index generation each time.
    for threads, shape in shapes.items():
        cold: list[float] = []
        for n, query in enumerate(queries[:COLD_QUERIES]):
            index.add_document(f"note-{n}.md", f"# Note {n}\n\nRevision {n} of a short note.\n")
            cold += search_latencies(index, [query], threads)
        record(figures, f"10k, after an upload, {shape}", [cold])
    # Every search right after another index object's upload (another process, same file).
    other = cls(db)
    wait = getattr(other, "wait_until_loaded", None)
    if wait is not None:
        wait()
    for threads, shape in shapes.items():
        cold = []
        for n, query in enumerate(queries[:COLD_QUERIES]):
            other.add_document(f"other-{n}.md", f"# Other {n}\n\nRevision {n} of a note.\n")
            cold += search_latencies(index, [query], threads)
        record(figures, f"10k, after another process's upload, {shape}", [cold])
    other.close()
    index.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--baseline", metavar="REV", help="also measure knowledge.py at REV")
    parser.add_argument("--baseline-repeats", type=int, default=1)
    args = parser.parse_args()
    corpus = Corpus(args.seed)
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
        columns: dict[str, dict[str, float]] = {}
        if args.baseline:
            old = baseline_class(args.baseline, work)
            columns[f"before ({args.baseline[:8]})"] = measure(
                old, "before", (small, large, work), queries, args.baseline_repeats
            )
        columns["after"] = measure(
            KnowledgeIndex, "after", (small, large, work), queries, args.repeats
        )
    names = list(dict.fromkeys(name for col in columns.values() for name in col))
    print(f"\n{'(medians)':<48}" + "".join(f"{name:>18}" for name in columns))
    for name in names:
        cells = "".join(
            f"{col[name]:>18.3f}" if name in col else f"{'-':>18}" for col in columns.values()
        )
        print(f"{name:<48}{cells}")
    print(json.dumps(columns))


if __name__ == "__main__":
    main()
