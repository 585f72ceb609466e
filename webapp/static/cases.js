// The case library page: runs marked useful (GET /api/cases), searchable, keyset pages. Each
// case shows its question, its answer's headline and the answer itself rendered as Markdown
// with the chat's rules (no raw HTML, nothing fetched from elsewhere; citations open the trace).
"use strict";

(function () {
  const { api, h, renderMarkdown, traceUrl, utcTimes } = window.Diag;
  const { filteredList, formParams, utcTime } = window.DiagLists;
  const { t, languageFor } = window.I18n;
  const PAGE = 20;

  const form = document.getElementById("case-filters");
  const list = document.getElementById("case-list");
  const status = document.getElementById("cases-status");

  function answer(entry) {
    const trace = traceUrl(entry.sessionId, entry.runId);
    const body = h("div", { class: "answer markdown", lang: languageFor(entry.question) === "zh" ? "zh-CN" : null });
    renderMarkdown(body, entry.answer || "", (id) => trace + "#evidence-" + id);
    utcTimes(body);
    return h("details", { class: "case-answer" }, h("summary", {}, t("full_answer")), body);
  }

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
      entry.headline ? h("p", { class: "case-headline" }, entry.headline) : null,
      entry.answer ? answer(entry) : null
    );
  }

  async function load(cursor) {
    const params = formParams(form);
    params.set("limit", String(PAGE));
    if (cursor) params.set("cursor", cursor);
    list.dataset.state = "loading";
    status.textContent = t("loading_cases");
    status.className = "status";
    try {
      const data = await api("/api/cases?" + params);
      list.replaceChildren(...data.cases.map(item));
      status.textContent = data.cases.length ? "" : t("no_cases");
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
