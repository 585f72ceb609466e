"""The eight diagnosis nodes: four agent adapters and four deterministic nodes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import RunConfig
from . import contracts as c
from .composition import AnswerRules
from .gatekeeper import EvidenceItem, GatekeeperResult, VerifiedExecutorOutput, run_gatekeeper
from .limits import failed_reads, read_services
from .outcomes import Outcome, StepResult, lower_verdict
from .ports import AgentCall, DiagnosisPorts
from .projection import project_verified
from .render import language_of, render_answer, render_fallback, unknown_services, why_fallback
from .topology import MODE_EVIDENCE_GAP_ONLY, MODE_FULL, NODE_NAMES

State = Mapping[str, Any]


def run_id_of(config: RunConfig) -> str:
    """The run a node works for: ``metadata["run_id"]``, else the thread id."""
    return str(config.metadata.get("run_id") or config.thread_id or "")


class DiagnosisNodes:
    """Node functions bound to their ports; ``nodes()`` hands them to the topology."""

    def __init__(self, ports: DiagnosisPorts) -> None:
        self.ports = ports

    def nodes(self) -> dict[str, Any]:
        """The eight workflow nodes by name."""
        return {name: getattr(self, name) for name in NODE_NAMES}

    def _agent(
        self,
        agent: str,
        schema: str,
        payload: dict[str, Any],
        state: State,
        config: RunConfig,
        *,
        tools: bool = False,
    ) -> tuple[Any, StepResult | None]:
        """Invoke ``agent`` and parse its output, or return the StepResult to report."""
        if (error := rejected_output(state, agent)) is not None:
            payload = {**payload, "previous_output_error": error}
        call = AgentCall(agent, schema, c.json_schema(schema), payload, tools)
        reply = self.ports.invoker.invoke(call, config.child())
        if reply.outcome is not Outcome.COMPLETED:
            return None, StepResult(reply.outcome, detail=reply.detail)
        try:
            return c.parse_agent_output(c.CONTRACTS[schema], reply.content), None
        except c.ContractError as exc:
            return None, StepResult(Outcome.INVALID_OUTPUT, detail=str(exc))

    def planner(self, state: State, config: RunConfig) -> StepResult:
        """Plan the queries (all of them, or only those closing the verifier's gaps)."""
        context = state["diagnosis_context"]
        payload = asked(state)
        mode = payload["mode"]
        payload["history"] = context.get("history", [])
        payload["tools"] = list(self.ports.tool_catalog())
        if mode == MODE_EVIDENCE_GAP_ONLY:
            payload["evidence_gaps"] = context.get("evidence_gaps", [])
            payload["previous_plan"] = state.get("planner_plan")
        plan, failed = self._agent("planner", c.PLANNER_PLAN, payload, state, config)
        if failed:
            return failed
        return StepResult(Outcome.COMPLETED, {"planner_plan": {**plan.model_dump(), "mode": mode}})

    def executor(self, state: State, config: RunConfig) -> StepResult:
        """Run the plan's queries with tools and return the full evidence snapshot."""
        earlier = verified_output(state)["claims"]
        payload = {**asked(state), "plan": state.get("planner_plan")}
        mode = payload["mode"]
        if mode == MODE_EVIDENCE_GAP_ONLY:
            payload["verified_claims"] = earlier
        evidence, failed = self._agent(
            "executor", c.EXECUTOR_EVIDENCE, payload, state, config, tools=True
        )
        if failed:
            return failed
        claims = [claim.model_dump() for claim in evidence.claims]
        ids = [claim["claim_id"] for claim in claims]
        if len(set(ids)) != len(ids):
            detail = "duplicate claim_id in executor output"
            return StepResult(Outcome.INVALID_OUTPUT, detail=detail)
        # The snapshot must be complete: earlier verified claims the model left out come back.
        claims += [
            {k: v for k, v in claim.items() if k != "evidence_ids"}
            for claim in (earlier if mode == MODE_EVIDENCE_GAP_ONLY else [])
            if claim["claim_id"] not in ids
        ]
        output = {"version": c.EXECUTOR_EVIDENCE, "claims": claims, "summary": evidence.summary}
        return StepResult(Outcome.COMPLETED, {"executor_output": output})

    def verifier(self, state: State, config: RunConfig) -> StepResult:
        """Judge the verified projection only - never the raw tool trace."""
        projected = verified_output(state)
        gate: GatekeeperResult | None = state.get("gatekeeper_result")
        ceiling = gate["verifier_verdict_ceiling"] if gate else "LOW_CONFID"
        payload = {
            "question": state["diagnosis_context"].get("question"),
            "claims": [
                {k: claim[k] for k in ("claim_id", "statement", "critical", "evidence_ids")}
                for claim in projected["claims"]
            ],
            "evidence": evidence_for_agents(verified_evidence(state)),
            "verdict_ceiling": ceiling,
        }
        output, failed = self._agent("verifier", c.VERIFIER_OUTPUT, payload, state, config)
        if failed:
            return failed
        known = {claim["claim_id"] for claim in projected["claims"]}
        unknown = [a.claim_id for a in output.claim_assessments if a.claim_id not in known]
        if unknown:
            return StepResult(Outcome.INVALID_OUTPUT, detail=f"assessed unknown claims {unknown}")
        update = {
            **output.model_dump(),
            "verdict_ceiling": ceiling,
            "effective_verdict": lower_verdict(output.verdict, ceiling).value,
        }
        return StepResult(Outcome.COMPLETED, {"verifier_output": update})

    def composer(self, state: State, config: RunConfig) -> StepResult:
        """Compose the answer from verified evidence; the product renders its Markdown."""
        verifier: Mapping[str, Any] | None = state.get("verifier_output")
        assessments = verifier["claim_assessments"] if verifier else []
        supported = {a["claim_id"] for a in assessments if a["supported"]}
        effective = verifier["effective_verdict"] if verifier else None
        evidence = verified_evidence(state)
        claims = verified_output(state)["claims"]
        question = str(state["diagnosis_context"].get("question") or "")
        payload = {
            "question": question,
            "utc_offset_minutes": offset_of(state),
            "claims": [
                {
                    "claim_id": cl["claim_id"],
                    "statement": cl["statement"],
                    "supported": cl["claim_id"] in supported,
                    "evidence_ids": cl["evidence_ids"],
                }
                for cl in claims
            ],
            "evidence": evidence_for_agents(evidence),
            "verifier": {
                "effective_verdict": effective,
                "critical_gaps": verifier["critical_gaps"] if verifier else [],
            },
        }
        output, failed = self._agent("composer", c.COMPOSER_OUTPUT, payload, state, config)
        if failed:
            return failed
        records = self.ports.invocations.invocations_for_run(run_id_of(config))
        rules = AnswerRules(
            evidence,
            records,
            claims,
            catalog=tuple(self.ports.service_catalog()),
            offset_minutes=offset_of(state),
            question=question,
        )
        problem = rules.problem(output, supported, effective)
        if problem:
            return StepResult(Outcome.INVALID_OUTPUT, detail=problem)
        composed = output.model_dump()
        answer = render_answer(
            question,
            composed,
            evidence,
            **self._answer_context(state, records),
            sources=read_services(records),
        )
        return StepResult(Outcome.COMPLETED, {"composer_output": composed, "final_answer": answer})

    def gatekeeper(self, state: State, config: RunConfig) -> StepResult:
        """Verify every binding and ground every claim against this run's invocations."""
        run_id = run_id_of(config)
        records = self.ports.invocations.invocations_for_run(run_id)
        result = run_gatekeeper(
            state.get("executor_output"),
            records,
            run_id,
            roles=self.ports.tool_roles(),
            catalog=tuple(self.ports.service_catalog()),
            offset_minutes=offset_of(state),
        )
        return StepResult(Outcome.COMPLETED, {"gatekeeper_result": result})

    def verified_input(self, state: State, config: RunConfig) -> StepResult:
        """Project only verified claims and bindings for the verifier and composer."""
        projected, evidence = project_verified(
            state.get("executor_output") or {}, state.get("gatekeeper_result") or {}
        )
        return StepResult(
            Outcome.COMPLETED,
            {"verified_executor_output": projected, "verified_evidence": evidence},
        )

    def evidence_retry(self, state: State, config: RunConfig) -> StepResult:
        """Send the planner back for the verifier's critical gaps only."""
        verifier: Mapping[str, Any] | None = state.get("verifier_output")
        context = {
            **state["diagnosis_context"],
            "mode": MODE_EVIDENCE_GAP_ONLY,
            "evidence_gaps": verifier["critical_gaps"] if verifier else [],
        }
        return StepResult(Outcome.COMPLETED, {"diagnosis_context": context})

    def fallback(self, state: State, config: RunConfig) -> StepResult:
        """A deterministic, safe answer when a verified diagnosis could not be completed."""
        records = self.ports.invocations.invocations_for_run(run_id_of(config))
        context = self._answer_context(state, records)
        question = str(state["diagnosis_context"].get("question") or "")
        why = why_fallback(state.get("orchestration_events") or [], language_of(question))
        answer = render_fallback(question, why, verified_evidence(state), **context)
        return StepResult(Outcome.COMPLETED, {"final_answer": answer})

    def _answer_context(self, state: State, records: Sequence[Any]) -> dict[str, Any]:
        """What the rendered answer says besides the composer's output: window, limits."""
        plan = state.get("planner_plan") or {}
        return {
            "window": plan.get("window"),
            "unknown": unknown_services(plan, self.ports.service_catalog()),
            "failed": failed_reads(records, self.ports.unreadable()),
            "ranges": self.ports.data_range(),
        }


def asked(state: State) -> dict[str, Any]:
    """What the planner and the executor are asked: the question, its time, the mode."""
    context = state["diagnosis_context"]
    return {
        "question": context.get("question"),
        "reference_time": context.get("reference_time"),
        "mode": context.get("mode", MODE_FULL),
    }


def rejected_output(state: State, node: str) -> str | None:
    """The contract error of ``node``'s previous attempt when this run is its retry, else None."""
    events = state.get("orchestration_events") or ()
    last = events[-1] if events else None
    if last and last["node"] == node and last["outcome"] == Outcome.INVALID_OUTPUT.value:
        return str(last.get("detail") or "the output did not match its schema")
    return None


def offset_of(state: State) -> int:
    """The question's UTC offset in minutes, as the plan's window recorded it (0 = UTC)."""
    window = (state.get("planner_plan") or {}).get("window") or {}
    return int(window.get("utc_offset_minutes") or 0)


def verified_output(state: State) -> VerifiedExecutorOutput:
    """``verified_executor_output``, or an empty projection before ``verified_input`` ran."""
    projected: VerifiedExecutorOutput | None = state.get("verified_executor_output")
    return projected or {"version": c.EXECUTOR_EVIDENCE, "claims": [], "summary": ""}


def evidence_for_agents(evidence: Sequence[EvidenceItem]) -> list[dict[str, Any]]:
    """Evidence items as the verifier and composer read them (unset fields left out)."""
    return [
        {k: v for k, v in item.items() if k != "claim_id" and v is not None and v is not False}
        for item in evidence
    ]


def verified_evidence(state: State) -> list[EvidenceItem]:
    """``verified_evidence`` (empty before ``verified_input`` ran)."""
    return list(state.get("verified_evidence") or [])
