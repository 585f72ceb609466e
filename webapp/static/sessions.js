// The chat page's sidebar: every session on the server (GET /api/sessions), newest activity
// first, searchable by title and paged by cursor; the list above it is this browser's recent.
"use strict";

(function () {
  const { api, h } = window.Diag;
  const { shorten, utcTime } = window.DiagLists;
  const { t } = window.I18n;
  const PAGE = 20;

  const list = document.getElementById("server-sessions");
  const more = document.getElementById("server-sessions-more");
  const status = document.getElementById("server-sessions-status");
  const search = document.getElementById("server-session-search");
  const text = document.getElementById("server-session-text");
  let cursor = null;

  function item(session) {
    const href = "/?session=" + encodeURIComponent(session.sessionId);
    return h(
      "li",
      {},
      h(
        "a",
        { class: "server-session", href, dataset: { sessionId: session.sessionId } },
        h("span", { class: "session-title" }, shorten(session.title, 80) || t("untitled")),
        h(
          "span",
          { class: "session-id" },
          t("runs_n", null, { n: session.runCount }),
          utcTime(session.updatedAt)
        )
      )
    );
  }

  async function load(append) {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (text.value.trim()) params.set("text", text.value.trim());
    if (append && cursor) params.set("cursor", cursor);
    status.textContent = t("loading");
    try {
      const data = await api("/api/sessions?" + params);
      const items = data.sessions.map(item);
      if (append) list.append(...items);
      else list.replaceChildren(...items);
      cursor = data.nextCursor;
      more.hidden = !cursor;
      status.textContent = list.children.length ? "" : t("no_sessions");
    } catch (error) {
      status.textContent = error.message;
    }
  }

  more.addEventListener("click", () => load(true));
  search.addEventListener("submit", (event) => {
    event.preventDefault();
    load(false);
  });
  text.addEventListener("search", () => load(false));
  // A finished turn may have created or touched a session: refresh after each run's end.
  document.addEventListener("diagnosis:run-finished", () => load(false));
  load(false);
})();
