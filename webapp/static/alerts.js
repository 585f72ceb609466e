// The alert inbox: alerts received from Alertmanager (GET /api/alerts), grouped by their
// Alertmanager group, each with its investigation runs and an "Investigate now" button
// (POST /api/alerts/<fingerprint>/investigate starts an AIOps run linked to the alert).
"use strict";

(function () {
  const { api, h, traceUrl } = window.Diag;
  const { keysetPager, statusBadge, utcTime } = window.DiagLists;
  const { t } = window.I18n;
  const PAGE = 50;

  const groups = document.getElementById("alert-groups");
  const status = document.getElementById("alerts-status");
  const state = document.getElementById("alert-state");

  function setStatus(content, kind) {
    status.replaceChildren(...(Array.isArray(content) ? content : [content || ""]));
    status.className = "status" + (kind ? " " + kind : "");
  }

  function runItem(run) {
    return h(
      "li",
      { class: "alert-run", dataset: { runId: run.runId } },
      statusBadge(run.status),
      " ",
      h("a", { href: traceUrl(run.sessionId, run.runId) }, run.runId),
      " ",
      utcTime(run.startedAt)
    );
  }

  function alertItem(alert) {
    const button = h(
      "button",
      { type: "button", class: "secondary small investigate", dataset: { fingerprint: alert.fingerprint } },
      t("investigate_now")
    );
    button.addEventListener("click", () => investigate(alert, button));
    const summary = (alert.annotations || {}).summary || (alert.annotations || {}).description || "";
    return h(
      "article",
      { class: "alert-item " + alert.status, dataset: { fingerprint: alert.fingerprint, status: alert.status } },
      h(
        "div",
        { class: "alert-head" },
        h("span", { class: "badge " + (alert.status === "firing" ? "failed" : "ok"), dataset: { state: alert.status } }, t(alert.status)),
        h("strong", { class: "alert-name" }, alert.alertName),
        alert.service ? h("span", { class: "badge flow" }, alert.service) : null,
        alert.severity ? h("span", { class: "badge" }, alert.severity) : null,
        button
      ),
      summary ? h("p", { class: "alert-summary" }, summary) : null,
      h(
        "p",
        { class: "hint" },
        t("notified_since"), utcTime(alert.startsAt),
        alert.endsAt ? [t("resolved_at"), utcTime(alert.endsAt)] : null,
        t("received_n", null, { n: alert.receivedCount }), utcTime(alert.updatedAt)
      ),
      alert.runs.length
        ? h("ul", { class: "alert-runs" }, ...alert.runs.map(runItem))
        : h("p", { class: "hint no-runs" }, t("not_investigated"))
    );
  }

  function render(alerts) {
    const byGroup = new Map();
    for (const alert of alerts) {
      if (!byGroup.has(alert.groupKey)) byGroup.set(alert.groupKey, []);
      byGroup.get(alert.groupKey).push(alert);
    }
    groups.replaceChildren(
      ...[...byGroup].map(([key, members]) => {
        const firing = members.filter((a) => a.status === "firing").length;
        return h(
          "section",
          { class: "alert-group card", dataset: { groupKey: key } },
          h(
            "h2",
            { class: "alert-group-title" },
            h("code", {}, key),
            h("span", { class: "hint" }, t("group_counts", null, { firing: firing, resolved: members.length - firing }))
          ),
          ...members.map(alertItem)
        );
      })
    );
  }

  // One keyset page (GET /api/alerts?cursor=...); resolves to the next page's cursor.
  async function load(cursor) {
    groups.dataset.state = "loading";
    setStatus(t("loading_alerts"));
    const params = new URLSearchParams({ state: state.value, limit: String(PAGE) });
    if (cursor) params.set("cursor", cursor);
    try {
      const data = await api("/api/alerts?" + params);
      render(data.alerts);
      const none =
        state.value === "all" ? t("no_alerts_all") : t("no_alerts_state", null, { state: t(state.value) });
      setStatus(data.alerts.length || cursor ? "" : none);
      groups.dataset.state = "ready";
      return data.nextCursor;
    } catch (error) {
      setStatus(error.message, "error");
      groups.dataset.state = "ready";
      return null;
    }
  }

  async function investigate(alert, button) {
    button.disabled = true;
    try {
      const data = await api("/api/alerts/" + encodeURIComponent(alert.fingerprint) + "/investigate", {
        method: "POST",
      });
      await pager.reload();
      setStatus(
        [
          t("investigation_started", null, { name: alert.alertName }),
          h("a", { href: traceUrl(data.sessionId, data.runId), class: "started-run" }, data.runId),
        ],
        "ok"
      );
    } catch (error) {
      setStatus(error.message, "error");
      button.disabled = false;
    }
  }

  state.value = new URLSearchParams(location.search).get("state") || "all";
  const pager = keysetPager(document.getElementById("alerts-pager"), load);
  state.addEventListener("change", () => {
    history.replaceState(null, "", state.value === "all" ? location.pathname : "?state=" + state.value);
    pager.reset();
  });
  pager.reset();
})();
