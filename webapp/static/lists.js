// Shared by the list pages (runs, cases, alerts) and the sessions sidebar: UTC time labels,
// status badges, query strings from forms, and a keyset pager with a stack of cursors.
"use strict";

(function () {
  const { h, localTime } = window.Diag;
  const { t } = window.I18n;

  function pad(n) {
    return String(n).padStart(2, "0");
  }

  /** "2026-11-30 10:00:00 UTC" for an ISO time; the local time on hover. */
  function utcTime(iso) {
    if (!iso) return h("span", { class: "time" }, "–");
    const date = new Date(iso);
    if (isNaN(date)) return h("span", { class: "time" }, iso);
    const text =
      date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate()) +
      " " + pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes()) + ":" +
      pad(date.getUTCSeconds()) + " UTC";
    return h("time", { class: "time", datetime: iso, title: localTime(iso) }, text);
  }

  /** A run's state in the page's (or ``lang``'s) words: ``success``, ``failed``, ``running``... */
  function stateLabel(status, lang) {
    return window.I18n.named("state_", String(status || "").toLowerCase(), lang);
  }

  function statusBadge(status, degraded) {
    const kind = { SUCCESS: "ok", FAILED: "failed", RUNNING: "running", PENDING: "running" }[status] || "";
    const badge = h("span", { class: "badge state " + kind, dataset: { state: status } }, stateLabel(status));
    if (!degraded) return badge;
    return h("span", { class: "badges" }, badge, h("span", { class: "badge degraded" }, t("degraded")));
  }

  /** A flow's name in the page's words (``complex``, ``simple``, ``aiops``). */
  function flowLabel(flow) {
    return window.I18n.named("flow_", flow);
  }

  /** The non-empty fields of a form as URLSearchParams. */
  function formParams(form) {
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(form).entries()) {
      if (typeof value === "string" && value.trim()) params.set(name, value.trim());
    }
    return params;
  }

  /** Fill a form from the page's query string (so a filtered list is a shareable link). */
  function fillForm(form, params) {
    for (const element of form.elements) {
      if (element.name && params.has(element.name)) element.value = params.get(element.name);
    }
  }

  function shorten(text, width) {
    const line = String(text || "").replace(/\s+/g, " ").trim();
    return line.length > width ? line.slice(0, width - 1) + "…" : line;
  }

  /**
   * Keyset paging over `load(cursor)` (which resolves to the page's nextCursor): Newest,
   * Previous and Next buttons, with the cursors of the pages seen kept in a stack.
   */
  function keysetPager(root, load) {
    const first = root.querySelector("[data-page='first']");
    const previous = root.querySelector("[data-page='previous']");
    const next = root.querySelector("[data-page='next']");
    const label = root.querySelector("[data-page='label']");
    const stack = [null];
    let nextCursor = null;

    async function show(index) {
      root.dataset.state = "loading";
      next.disabled = true;
      const cursor = stack[index];
      nextCursor = await load(cursor);
      stack.length = index + 1;
      first.disabled = previous.disabled = index === 0;
      next.disabled = !nextCursor;
      label.textContent = t("page_n", null, { n: index + 1 });
      root.dataset.state = "ready"; // the page, its buttons and its label are shown
    }

    first.addEventListener("click", () => show(0));
    previous.addEventListener("click", () => show(Math.max(0, stack.length - 2)));
    next.addEventListener("click", () => {
      if (!nextCursor) return;
      stack.push(nextCursor);
      show(stack.length - 1);
    });
    return { reset: () => show(0), reload: () => show(stack.length - 1) };
  }

  /**
   * A filtered, keyset-paged list: the form's filters come from and go to the address (a
   * shareable link); submitting shows the first page again. Returns the pager.
   */
  function filteredList(form, pagerRoot, load) {
    const pager = keysetPager(pagerRoot, load);
    fillForm(form, new URLSearchParams(location.search));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const params = formParams(form);
      history.replaceState(null, "", params.toString() ? "?" + params : location.pathname);
      pager.reset();
    });
    form.addEventListener("reset", () => setTimeout(() => form.requestSubmit(), 0));
    pager.reset();
    return pager;
  }

  window.DiagLists = { filteredList, fillForm, flowLabel, formParams, keysetPager, shorten, stateLabel, statusBadge, utcTime };
})();
