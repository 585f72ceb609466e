// The case library page: runs marked useful (GET /api/cases), searchable, keyset pages.
"use strict";

(function () {
  const { api, h, traceUrl } = window.Diag;
  const { filteredList, formParams, shorten, utcTime } = window.DiagLists;
  const PAGE = 20;

  const form = document.getElementById("case-filters");
  const list = document.getElementById("case-list");
  const status = document.getElementById("cases-status");

  function item(entry) {
    return h(
      "li",
      { class: "case card", dataset: { runId: entry.runId } },
      h(
        "div",
        { class: "case-head" },
        h("a", { class: "case-question", href: traceUrl(entry.sessionId, entry.runId) }, entry.question),
        utcTime(entry.createdAt)
      ),
      h("p", { class: "case-answer" }, shorten(entry.answer, 400))
    );
  }

  async function load(cursor) {
    const params = formParams(form);
    params.set("limit", String(PAGE));
    if (cursor) params.set("cursor", cursor);
    list.dataset.state = "loading";
    status.textContent = "Loading cases…";
    status.className = "status";
    try {
      const data = await api("/api/cases?" + params);
      list.replaceChildren(...data.cases.map(item));
      status.textContent = data.cases.length
        ? ""
        : "No case yet: mark an answer useful on the chat page to keep it here.";
      list.dataset.state = "ready";
      return data.nextCursor;
    } catch (error) {
      status.textContent = error.message;
      status.className = "status error";
      list.dataset.state = "ready";
      return null;
    }
  }

  filteredList(form, document.getElementById("cases-pager"), load);
})();
