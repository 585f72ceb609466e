"""Rows to camelCase response objects (stored JSON documents keep their own keys)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any


def iso(value: datetime | None) -> str | None:
    """``2026-11-30T10:00:00.123Z`` for a naive-UTC datetime."""
    if value is None:
        return None
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def run_summary(run: dict[str, Any]) -> dict[str, Any]:
    """A run without its stored JSON documents."""
    return {
        "runId": run["run_id"],
        "sessionId": run["session_id"],
        "agentFlow": run["agent_flow"],
        "flow": run["flow"],
        "status": run["status"],
        "question": run["question"],
        "answer": run["answer"],
        "degraded": bool(run["degraded"]),
        "errorMessage": run["error_message"],
        "stepCount": run["step_count"],
        "toolCount": run["tool_count"],
        "durationMs": run["duration_ms"],
        "feedback": run["feedback"],
        "feedbackComment": run["feedback_comment"],
        "startedAt": iso(run["started_at"]),
        "finishedAt": iso(run["finished_at"]),
    }


def run_detail(run: dict[str, Any]) -> dict[str, Any]:
    """The trace's run: the summary plus the parsed self evaluation and orchestration trace."""
    return {
        **run_summary(run),
        "selfEvaluation": run["self_evaluation"],
        "orchestrationTrace": run["orchestration_trace"],
    }


def session(row: dict[str, Any]) -> dict[str, Any]:
    """Session metadata."""
    return {
        "sessionId": row["session_id"],
        "title": row["title"],
        "createdAt": iso(row["created_at"]),
        "updatedAt": iso(row["updated_at"]),
        "expiresAt": iso(row["expires_at"]),
    }


def _same(value: Any) -> Any:
    return value


def step(row: dict[str, Any], json_value: Callable[[Any], Any] = _same) -> dict[str, Any]:
    """One ``agent_step``; ``json_value`` wraps the stored JSON documents (e.g. raw text)."""
    return {
        "id": row["id"],
        "runId": row["run_id"],
        "sessionId": row["session_id"],
        "stepIndex": row["step_index"],
        "agentName": row["agent_name"],
        "model": row["model"],
        "modelInput": json_value(row["model_input"]),
        "modelOutput": json_value(row["model_output"]),
        "hasToolCall": bool(row["has_tool_call"]),
        "promptTokens": row["prompt_tokens"],
        "completionTokens": row["completion_tokens"],
        "tokenCount": row["token_count"],
        "attempts": row["attempts"],
        "durationMs": row["duration_ms"],
        "status": row["status"],
        "error": row["error"],
        "createdAt": iso(row["created_at"]),
    }


def invocation(row: dict[str, Any], json_value: Callable[[Any], Any] = _same) -> dict[str, Any]:
    """One ``tool_invocation`` with its raw output; ``json_value`` as for :func:`step`."""
    return {
        "id": row["id"],
        "runId": row["run_id"],
        "sessionId": row["session_id"],
        "invocationId": row["invocation_id"],
        "stepId": row["step"],
        "agentName": row["agent_name"],
        "toolName": row["tool_name"],
        "arguments": json_value(row["arguments"]),
        "rawOutput": json_value(row["raw_output"]),
        "status": row["status"],
        "errorMessage": row["error_message"],
        "durationMs": row["duration_ms"],
        "retrievalDetails": json_value(row["retrieval_details"]),
        "evidenceRefs": json_value(row["evidence_refs"]),
        "createdAt": iso(row["created_at"]),
    }


def case(row: dict[str, Any]) -> dict[str, Any]:
    """One case of the library."""
    return {
        "runId": row["run_id"],
        "sessionId": row["session_id"],
        "question": row["question"],
        "answer": row["answer"],
        "createdAt": iso(row["created_at"]),
    }
