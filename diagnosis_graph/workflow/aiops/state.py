"""The AIOps supervisor graph's state schema, node names and bounds."""

from __future__ import annotations

from ...state import Append, Reducer, Replace

LOAD_ALERTS = "load_alerts"
SELECT_ALERTS = "select_alerts"
INVESTIGATE = "investigate"
REPORT = "report"

NODE_NAMES = (LOAD_ALERTS, SELECT_ALERTS, INVESTIGATE, REPORT)

#: At most this many firing alerts are investigated in one run (most severe first).
MAX_ALERTS = 8
#: At most this many evidence rounds per alert: the first, plus the chat graph's evidence retry.
MAX_ROUNDS = 2
#: Supervisor steps: load + select + one investigation per alert + report, with headroom.
RECURSION_LIMIT = 16
#: Bound of the supervisor's ``orchestration_events`` (more than the recursion limit).
EVENT_LIMIT = 32


def aiops_schema() -> dict[str, Reducer]:
    """The supervisor's state.

    * ``aiops_context``: ``{request, reference_time, max_alerts, scope}`` (``scope``: the alerts
      a run was started for, ``[{alert_name, service}]``; empty for every firing alert);
    * ``alerts_read``: ``{ok, alerts, invocation_id, detail, invocations_seen}`` of the recorded
      alert query (``invocations_seen``: the run's invocation count after it, as on each
      investigation, so an alert's own invocations are known);
    * ``queue``: the selected alerts still to investigate (``{alert_id, alert}``);
    * ``skipped``: firing alerts over the bound, listed in the report but not investigated;
    * ``investigations``: one JSON summary per investigated alert.
    """
    return {
        "aiops_context": Replace(default_factory=dict),
        "alerts_read": Replace(),
        "queue": Replace(default_factory=list),
        "skipped": Replace(default_factory=list),
        "investigations": Append(),
        "final_answer": Replace(),
        "orchestration_events": Append(max_len=EVENT_LIMIT),
        "route_reason": Replace(),
    }
