// The Runs page: every run on the server (GET /api/runs) with filters in the query string and
// keyset pages; each row shows the question and its answer's headline, and links to its trace
// and its session. Below 640 px each row is a card (lists.css), its cells labelled.
"use strict";

(function () {
  const { api, h, traceUrl, formatDuration, formatUsage } = window.Diag;
  const { filteredList, flowLabel, formParams, shorten, statusBadge, utcTime } = window.DiagLists;
  const { t } = window.I18n;
  const PAGE = 25;

  const form = document.getElementById("run-filters");
  const body = document.getElementById("runs-body");
  const status = document.getElementById("runs-status");
  const table = document.getElementById("runs-table");
  const labels = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent);

  /** The headline under the question: the answer's first line, else the error's. */
  function headline(run) {
    const text = run.headline || (run.errorMessage || "").split("\n")[0];
    if (!text) return h("span", { class: "run-headline quiet" }, t("no_answer_yet"));
    const kind = run.headline ? "run-headline" : "run-headline error-text";
    return h("span", { class: kind, title: text }, shorten(text, 220));
  }

  function row(run) {
    const cells = [
      utcTime(run.startedAt),
      statusBadge(run.status, run.degraded),
      h("span", { class: "badge flow" }, flowLabel(run.flow)),
      [h("a", { href: traceUrl(run.sessionId, run.runId), title: run.question }, shorten(run.question, 120)), headline(run)],
      h("a", { class: "mono", href: "/?session=" + encodeURIComponent(run.sessionId) }, run.sessionId),
      formatDuration(run.durationMs),
      formatUsage(run),
      run.feedback ? t(run.feedback) : "–",
    ];
    const classes = ["", "", "", "question-cell", "", "num", "num", ""];
    return h(
      "tr",
      { dataset: { runId: run.runId, sessionId: run.sessionId } },
      cells.map((cell, i) => h("td", { class: classes[i] || null, dataset: { label: labels[i] } }, cell))
    );
  }

  async function load(cursor) {
    const params = formParams(form);
    params.set("limit", String(PAGE));
    if (cursor) params.set("cursor", cursor);
    table.dataset.state = "loading";
    status.textContent = t("loading_runs");
    status.className = "status";
    try {
      const data = await api("/api/runs?" + params);
      body.replaceChildren(...data.runs.map(row));
      status.textContent = data.runs.length ? "" : t("no_runs");
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
