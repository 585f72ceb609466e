"""Knowledge uploads: time per document shape and size, and searches during big uploads.

Uploads must be linear in their size (1 MiB well under half a second) and must not hold up
chats: a search issued while four 1 MiB uploads are being indexed in other threads should
answer in milliseconds. Prints medians (the machine is shared: compare runs side by side).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from webapp.tools.knowledge import KnowledgeIndex

MIB = 1024 * 1024
SHAPES: dict[str, Callable[[int], str]] = {
    "empty headings": lambda size: "# h\n" * (size // 4),
    "sections": lambda size: ("## Section\n\n" + "text " * 60 + "\n\n") * (size // 314),
    "paragraphs": lambda size: ("word " * 40 + "\n\n") * (size // 202),
    "one long line": lambda size: "x" * size,
}


def timed_upload(text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        index = KnowledgeIndex(":memory:")
        started = time.perf_counter()
        index.add_document("bench.md", text)
        times.append(time.perf_counter() - started)
        index.close()
    return statistics.median(times)


def searches_during_uploads(uploads: int, size: int, folder: Path) -> tuple[float, float]:
    """Median and worst search latency (ms) while ``uploads`` big uploads run in threads.

    On an index file, as deployed: searches read through their own WAL connections.
    """
    index = KnowledgeIndex(folder / "knowledge.db")
    index.add_document("seed.md", "# Failover\n\nPromote the replica when the primary dies.\n")
    text = SHAPES["empty headings"](size)
    workers = [
        threading.Thread(target=index.add_document, args=(f"big{n}.md", text))
        for n in range(uploads)
    ]
    for worker in workers:
        worker.start()
    latencies = []
    while any(worker.is_alive() for worker in workers):
        started = time.perf_counter()
        index.search("replica primary failover")
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.005)
    for worker in workers:
        worker.join()
    return statistics.median(latencies), max(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'shape':<16}{'256 KiB':>10}{'512 KiB':>10}{'1 MiB':>10}   (median seconds)")
    uploads: dict[str, list[float]] = {}
    for name, make in SHAPES.items():
        cells = [timed_upload(make(size), args.repeats) for size in (MIB // 4, MIB // 2, MIB)]
        uploads[name] = cells
        print(f"{name:<16}" + "".join(f"{cell:>10.3f}" for cell in cells))
    with tempfile.TemporaryDirectory(prefix="bench-uploads-") as tmp:
        median, worst = searches_during_uploads(4, MIB, Path(tmp))
    print(f"\nsearch while 4 x 1 MiB uploads index: median {median:.1f} ms, worst {worst:.1f} ms")
    print(
        json.dumps(
            {
                "upload_s_256k_512k_1m": uploads,
                "search_during_uploads_ms": {"median": median, "worst": worst},
            }
        )
    )


if __name__ == "__main__":
    main()
