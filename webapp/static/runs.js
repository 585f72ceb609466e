// The Runs page: every run on the server (GET /api/runs) with filters in the query string and
// keyset pages; each row links to its trace and its session.
"use strict";

(function () {
  const { api, h, traceUrl, formatDuration } = window.Diag;
  const { filteredList, formParams, shorten, statusBadge, utcTime } = window.DiagLists;
  const PAGE = 25;

  const form = document.getElementById("run-filters");
  const body = document.getElementById("runs-body");
  const status = document.getElementById("runs-status");
  const table = document.getElementById("runs-table");

  function row(run) {
    return h(
      "tr",
      { dataset: { runId: run.runId, sessionId: run.sessionId } },
      h("td", {}, utcTime(run.startedAt)),
      h("td", {}, statusBadge(run.status, run.degraded)),
      h("td", {}, h("span", { class: "badge flow" }, run.flow)),
      h(
        "td",
        { class: "question-cell" },
        h("a", { href: traceUrl(run.sessionId, run.runId), title: run.question }, shorten(run.question, 120))
      ),
      h("td", {}, h("a", { class: "mono", href: "/?session=" + encodeURIComponent(run.sessionId) }, run.sessionId)),
      h("td", { class: "num" }, formatDuration(run.durationMs)),
      h("td", {}, run.feedback ? run.feedback.replace("_", " ") : "–")
    );
  }

  async function load(cursor) {
    const params = formParams(form);
    params.set("limit", String(PAGE));
    if (cursor) params.set("cursor", cursor);
    table.dataset.state = "loading";
    status.textContent = "Loading runs…";
    status.className = "status";
    try {
      const data = await api("/api/runs?" + params);
      body.replaceChildren(...data.runs.map(row));
      status.textContent = data.runs.length ? "" : "No run matches these filters.";
      table.dataset.state = "ready";
      return data.nextCursor;
    } catch (error) {
      body.replaceChildren();
      status.textContent = error.message;
      status.className = "status error";
      table.dataset.state = "ready";
      return null;
    }
  }

  filteredList(form, document.getElementById("runs-pager"), load);
})();
