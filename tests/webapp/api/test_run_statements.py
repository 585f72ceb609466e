"""A chat run's SQL statements, counted with peewee's query hooks, stay within their budget:
at most 12 per run plus one per model step, plus one checkpoint per node that called
a model, on every backend."""

from __future__ import annotations

from flask.testing import FlaskClient

from tests.statements import count_statements
from webapp.persistence.models import AgentStep, DiagnosisRun, ToolInvocation

#: Statements a run may issue besides one per model step.
PER_RUN = 12
QUESTION = "Why is payment-service slow since 10:00?"


def test_a_complex_chat_run_stays_within_its_statement_budget(client: FlaskClient) -> None:
    services = client.application.extensions["diagnosis"]
    database = services.database
    client.post("/api/chat", json={"Question": QUESTION})  # the session exists from now on
    with count_statements(database) as statements:
        response = client.post("/api/chat", json={"Question": QUESTION})
    data = response.json["data"]
    assert response.status_code == 200 and data["status"] == "SUCCESS", data
    with database.connection_context():
        run = DiagnosisRun.get(DiagnosisRun.run_id == data["runId"])
        steps = AgentStep.select().where(AgentStep.run_id == run.run_id).count()
        tools = ToolInvocation.select().where(ToolInvocation.run_id == run.run_id).count()
    assert steps == run.step_count > 3 and tools == run.tool_count > 3
    checkpoints = [s for s in statements.sql if "run_checkpoint" in s]
    nodes = len(run.orchestration_trace["transitions"]) + 1  # node executions
    assert 0 < len(checkpoints) < nodes and len(checkpoints) <= steps  # not the call-free ones
    assert len(statements) - len(checkpoints) <= PER_RUN + steps, statements.sql
    # nothing of the run's own audit rows is read back while it runs
    reads = [s for s in statements.sql if s.lstrip().upper().startswith("SELECT")]
    assert not [s for s in reads if "tool_invocation" in s or "agent_step" in s], reads
