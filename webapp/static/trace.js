// The trace viewer: one run's summary, the route it took through the diagnosis graph (Mermaid),
// its model steps and tool invocations, and every claim of the answer linked to the exact
// excerpt of the tool output it was verified against.
"use strict";

(function () {
  const { api, h, renderMarkdown, formatCost, formatDuration, formatUsage, timeEl, utcTimes } = window.Diag;
  const JV = window.JsonView;
  const EV = window.Evidence;
  let lang = window.I18n.page; // the question's language once the run is loaded
  const T = (key, vars) => window.I18n.t(key, lang, vars);

  const root = document.getElementById("trace");
  const status = document.getElementById("trace-status");
  const body = document.getElementById("trace-body");
  const sessionId = root.dataset.sessionId;
  const runId = root.dataset.runId;

  const invocations = []; // {data, el, rawNode, rawBox, view, caption, charts}
  let evidenceData = null; // GET .../evidence: charts, log tables, window, evidence sources
  let chipMaker = null;
  const evidence = new Map(); // evidence id -> [{ref, inv}]
  const claims = new Map(); // claim id -> {statement, refs: [{ref, inv}], cited}

  /** A card that folds away: its heading is the summary of a <details> open by default. */
  function section(id, title, ...children) {
    return h(
      "section",
      { class: "card", id: id, "aria-labelledby": id + "-title" },
      h("details", { class: "card-details", open: true }, h("summary", {}, h("h2", { id: id + "-title" }, title)), ...children)
    );
  }

  function unfold(el) {
    for (let box = el.closest("details"); box; box = box.parentElement.closest("details")) box.open = true;
  }

  function badge(text, kind) {
    return h("span", { class: "badge " + (kind || "") }, text);
  }

  function statusBadge(value, degraded) {
    const text = String(value || "").toLowerCase();
    const kind = text === "success" ? (degraded ? "degraded" : "ok") : text === "failed" || text === "error" ? "failed" : "running";
    return badge(window.I18n.named("state_", String(value || "").toLowerCase(), lang) + (degraded ? " · " + T("degraded") : ""), "state " + kind);
  }

  function pretty(value) {
    if (value === null || value === undefined) return "null";
    if (typeof value === "string") {
      try {
        return JSON.stringify(JSON.parse(value), null, 2);
      } catch (_) {
        return value;
      }
    }
    return JSON.stringify(value, null, 2);
  }

  /** A <details> whose JSON body is rendered the first time it is opened. */
  function lazyJson(label, value, extraClass) {
    const box = h("details", { class: "lazy-json " + (extraClass || "") }, h("summary", {}, label));
    box.addEventListener("toggle", () => {
      if (box.open && box.children.length === 1) box.append(h("pre", { class: "json" }, pretty(value)));
    });
    return box;
  }

  function kvTable(obj) {
    if (obj === null || obj === undefined) return h("p", { class: "hint" }, T("not_recorded"));
    const rows = Object.entries(obj).map(([key, value]) => h("tr", {}, h("th", { scope: "row" }, key), h("td", {}, kvValue(value))));
    return h("table", { class: "kv" }, h("tbody", {}, rows));
  }

  function kvValue(value) {
    if (value === null || value === undefined) return h("span", { class: "quiet" }, "null");
    if (Array.isArray(value)) {
      if (!value.length) return h("span", { class: "quiet" }, "none");
      if (value.every((v) => v === null || typeof v !== "object")) return h("span", { class: "list" }, value.map(String).join(", "));
      if (value.every((v) => v && typeof v === "object" && !Array.isArray(v))) return rowsTable(value);
      return h("pre", { class: "json small" }, JSON.stringify(value, null, 2));
    }
    if (typeof value === "object") {
      return Object.keys(value).length ? kvTable(value) : h("span", { class: "quiet" }, "{}");
    }
    if (typeof value === "boolean") return badge(value ? "true" : "false", value ? "ok" : "failed");
    return String(value);
  }

  /** A list of records as a table: one column per key, nested values as compact text. */
  function rowsTable(rows) {
    const columns = Array.from(new Set(rows.flatMap((row) => Object.keys(row))));
    const cell = (v) => (v === null || v === undefined ? "–" : Array.isArray(v) ? v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v));
    return h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "grid" },
        h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows.map((row) => h("tr", {}, columns.map((c) => h("td", {}, cell(row[c]))))))
      )
    );
  }

  function summarySection(trace) {
    const run = trace.run;
    const answer = h("div", { class: "answer markdown" });
    if (run.answer) {
      renderMarkdown(answer, run.answer, (id) => "#evidence-" + id);
      utcTimes(answer);
      if (chipMaker) {
        // The evidence list as on the chat page: a chip per item (the chips after each
        // sentence are at most three; every cited item keeps one here).
        EV.readableEvidenceList(answer, chipMaker, lang);
        EV.chipCitations(answer, chipMaker);
      }
    }
    else answer.append(h("p", { class: "hint" }, T("no_answer")));
    const facts = [
      [T("f_status"), statusBadge(run.status, run.degraded)],
      [T("f_flow"), window.I18n.named("flow_", run.flow, lang) + " (" + run.agentFlow + ")"],
      [T("f_degraded"), run.degraded ? T("yes_fallback") : T("no")],
      [T("f_duration"), formatDuration(run.durationMs)],
      [T("f_started"), timeEl(run.startedAt)],
      [T("f_finished"), timeEl(run.finishedAt)],
      [T("f_steps"), String(run.stepCount)],
      [T("f_tools"), String(run.toolCount)],
      [T("f_tokens"), formatUsage({ ...run, costUsd: null }, lang)],
      [T("f_cost"), run.costUsd === null || run.costUsd === undefined ? "–" : formatCost(run.costUsd)],
      [T("f_feedback"), run.feedback ? T(run.feedback) + (run.feedbackComment ? ": " + run.feedbackComment : "") : T("none_yet")],
      [T("f_session"), trace.session ? trace.session.title || trace.session.sessionId : sessionId],
    ];
    return section(
      "summary",
      T("run_summary"),
      h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
      h("h3", {}, T("question")),
      h("p", { class: "question-text" }, run.question),
      evidenceData ? EV.windowLine(evidenceData.window, lang) : null,
      run.errorMessage ? h("div", { class: "notice error", role: "alert" }, run.errorMessage) : null,
      h("details", { class: "answer-box", open: true }, h("summary", {}, h("h3", {}, T("answer"))), answer)
    );
  }

  function routeSection(run, graph) {
    const diagram = h("div", { id: "route-diagram", class: "diagram" });
    const aiops = graph && Array.isArray(graph.alerts);
    const box = section("route", aiops ? T("route_aiops") : T("route_diagnosis"), diagram);
    if (!graph || !graph.mermaid) {
      diagram.replaceWith(
        h(
          "p",
          { class: "notice info", id: "route-none" },
          graph ? T("route_none", { flow: graph.flow || run.flow }) : T("route_unloaded")
        )
      );
      return box;
    }
    diagram.setAttribute("role", "img");
    diagram.setAttribute("aria-label", T("route_aria") + graph.route.join(", "));
    box.append(
      h("p", { class: "hint" }, T("route_hint", { n: graph.route.length })),
      h("ol", { class: "route-list" }, graph.route.map((node) => h("li", {}, node)))
    );
    if (aiops) {
      // Each alert was investigated by the diagnosis graph, nested: its route, node by node.
      box.append(
        h("h3", {}, T("per_alert_route")),
        h("ul", { class: "alert-routes" }, graph.alerts.map((a) => h("li", {}, h("strong", {}, (a.alertId || "") + " " + (a.alertName || "")), ": " + a.route.join(" → "))))
      );
    }
    drawMermaid(diagram, graph.mermaid);
    return box;
  }

  async function drawMermaid(container, text) {
    if (!window.mermaid) {
      container.replaceChildren(h("pre", { class: "json" }, text));
      return;
    }
    try {
      window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral", logLevel: "fatal", flowchart: { useMaxWidth: true } });
      const { svg } = await window.mermaid.render("route-graph", text);
      container.innerHTML = svg; // mermaid's own output in strict mode (labels sanitised)
      container.dataset.rendered = "true";
    } catch (error) {
      container.replaceChildren(h("p", { class: "notice error" }, T("diagram_failed") + error.message), h("pre", { class: "json" }, text));
    }
  }

  function claimsSection() {
    const ordered = Array.from(claims.entries()).sort((a, b) => a[0].localeCompare(b[0], "en", { numeric: true }));
    const list = h(
      "ol",
      { class: "claims" },
      ordered.map(([claimId, claim]) =>
        h(
          "li",
          { class: "claim" + (claim.cited ? " cited" : ""), id: "claim-" + claimId, dataset: { claimId: claimId } },
          h(
            "button",
            { type: "button", class: "claim-statement", onclick: () => select(claim.refs.map((r) => r.ref.evidence_id), "claim-" + claimId) },
            h("span", { class: "claim-id" }, claimId),
            " ",
            claim.statement
          ),
          h(
            "div",
            { class: "claim-evidence" },
            claim.cited ? badge(T("cited_in_answer"), "ok") : badge(T("not_cited"), "quiet"),
            claim.refs.map(({ ref, inv }) =>
              h(
                "a",
                {
                  class: "evidence-chip",
                  id: chipId(ref.evidence_id),
                  href: "#evidence-" + ref.evidence_id,
                  dataset: { evidence: ref.evidence_id },
                  title: inv.data.toolName + " " + inv.data.invocationId + " at " + ref.raw_path,
                },
                ref.evidence_id,
                h("span", { class: "chip-path" }, inv.data.toolName + " " + ref.raw_path)
              )
            )
          )
        )
      )
    );
    const intro = h("p", { class: "hint" }, T("claims_intro"));
    return section("claims", T("claims_title"), intro, ordered.length ? list : h("p", { class: "hint" }, T("no_evidence")));
  }

  const chipIds = new Set();

  /** The anchor id of an evidence chip: only the first chip of an evidence id carries it. */
  function chipId(evidenceId) {
    if (chipIds.has(evidenceId)) return null;
    chipIds.add(evidenceId);
    return "evidence-" + evidenceId;
  }

  /**
   * The trace is loaded without the steps' model inputs (`inputs=none`: most of a long run's
   * bytes); a step's input is fetched, whole, the first time its box is opened.
   */
  function lazyInput(step) {
    const summary = h("summary", {}, T("model_input"));
    const box = h("details", { class: "lazy-json model-input" }, summary);
    const url = "/api/diagnosis/" + encodeURIComponent(sessionId) + "/runs/" + encodeURIComponent(runId) + "/steps/" + step.stepIndex;
    let state = "idle"; // then "loading", and "done" once shown; a failure goes back to "idle"
    box.addEventListener("toggle", async () => {
      if (!box.open || state !== "idle") return;
      state = "loading";
      const note = h("p", { class: "hint", role: "status" }, T("loading_input"));
      box.replaceChildren(summary, note);
      try {
        const loaded = await api(url);
        note.replaceWith(h("pre", { class: "json" }, pretty(loaded.modelInput)));
        state = "done";
      } catch (error) {
        note.replaceWith(h("p", { class: "notice error" }, T("input_failed", { error: error.message })));
        state = "idle";
      }
    });
    return box;
  }

  function stepsSection(steps) {
    const longest = Math.max(1, ...steps.map((s) => s.durationMs || 0));
    const head = h(
      "div",
      { class: "step-row step-head", "aria-hidden": "true" },
      ["#", T("col_agent"), T("col_model"), T("f_status"), T("f_duration"), T("col_prompt"), T("col_completion"), T("col_tool_call")].map((t) => h("span", {}, t))
    );
    const rows = steps.map((step) => {
      const calls = invocations.filter((inv) => inv.data.stepId === step.id);
      const bar = h("span", { class: "bar" });
      bar.style.width = Math.max(2, Math.round(((step.durationMs || 0) / longest) * 100)) + "%";
      return h(
        "details",
        { class: "step", id: "step-" + step.id, dataset: { stepIndex: step.stepIndex } },
        h(
          "summary",
          { class: "step-row" },
          h("span", { class: "num" }, String(step.stepIndex)),
          h("span", { class: "agent" }, step.agentName),
          h("span", { class: "model" }, step.model || "–"),
          h("span", {}, statusBadge(step.status)),
          h("span", { class: "duration" }, formatDuration(step.durationMs), h("span", { class: "bar-track" }, bar)),
          h("span", { class: "num" }, step.promptTokens === null ? "–" : String(step.promptTokens)),
          h("span", { class: "num" }, step.completionTokens === null ? "–" : String(step.completionTokens)),
          h("span", {}, step.hasToolCall ? T("yes") : T("no"))
        ),
        h(
          "div",
          { class: "step-body" },
          step.error ? h("p", { class: "notice error" }, step.error) : null,
          h("p", { class: "hint" }, T("attempts_started", { n: step.attempts }), timeEl(step.createdAt)),
          calls.length
            ? h("p", {}, T("tool_calls_label"), calls.map((inv, i) => [i ? ", " : "", h("a", { href: "#invocation-" + inv.data.invocationId }, "#" + inv.data.id + " " + inv.data.toolName)]))
            : null,
          lazyInput(step),
          lazyJson(T("model_output"), step.modelOutput)
        )
      );
    });
    const hint = h("p", { class: "hint" }, T("steps_hint"));
    return section("steps", T("steps_title"), steps.length ? [hint, h("div", { class: "steps" }, head, rows)] : h("p", { class: "hint" }, T("no_steps")));
  }

  function invocationView(inv, index) {
    const data = inv.data;
    const refs = data.evidenceRefs || [];
    const size = inv.rawSize > 1024 ? Math.round(inv.rawSize / 1024) + " KB" : T("n_bytes", { n: inv.rawSize });
    inv.rawBox = h("details", { class: "raw", dataset: { role: "raw-output" } }, h("summary", {}, T("raw_output", { size: size })));
    inv.rawBox.addEventListener("toggle", () => {
      if (inv.rawBox.open) ensureRendered(inv);
    });
    inv.caption = h("div", { class: "highlight-caption", role: "status" });
    inv.charts = h("div", { class: "invocation-charts" });
    const step = data.stepId ? h("a", { href: "#step-" + data.stepId }, T("model_step", { n: data.stepId })) : T("no_model_step");
    inv.el = h(
      "details",
      { class: "invocation", id: "invocation-" + data.invocationId, dataset: { invocationId: data.invocationId, index: String(index) } },
      h(
        "summary",
        {},
        h("span", { class: "num" }, "#" + data.id),
        h("span", { class: "tool" }, data.toolName),
        statusBadge(data.status),
        h("span", { class: "duration" }, formatDuration(data.durationMs)),
        refs.length ? badge(T("n_evidence", { n: refs.length }), "evidence") : null,
        h("span", { class: "args-preview" }, argsPreview(data.arguments)),
        h("code", { class: "inv-id" }, data.invocationId)
      ),
      h(
        "div",
        { class: "invocation-body" },
        h("p", { class: "hint" }, T("called_by"), h("code", {}, data.agentName || "?"), T("called_from"), step, " · ", timeEl(data.createdAt)),
        data.errorMessage ? h("p", { class: "notice error" }, data.errorMessage) : null,
        h("h4", {}, T("arguments")),
        h("pre", { class: "json" }, pretty(data.arguments)),
        data.retrievalDetails ? lazyJson(T("retrieval"), data.retrievalDetails) : null,
        refs.length
          ? h(
              "p",
              { class: "inv-evidence" },
              T("evidence_from"),
              refs.map((ref) => h("a", { href: "#evidence-" + ref.evidence_id, class: "evidence-link", dataset: { evidence: ref.evidence_id } }, ref.evidence_id))
            )
          : null,
        inv.charts,
        inv.caption,
        inv.rawBox
      )
    );
    return inv.el;
  }

  function argsPreview(args) {
    if (!args || typeof args !== "object") return args ? String(args) : "";
    return Object.entries(args)
      .map(([k, v]) => k + "=" + (typeof v === "string" ? v : JSON.stringify(v)))
      .join(" ");
  }

  function ensureRendered(inv) {
    if (inv.view) return inv.view;
    inv.view = JV.render(inv.rawNode);
    inv.rawBox.append(inv.view.pre);
    return inv.view;
  }

  /** The cited series as charts and the cited log patterns as tables (also in their invocation). */
  function chartsSection() {
    const data = evidenceData;
    const parts = [];
    if (data) {
      for (const chart of data.charts) {
        parts.push(EV.chartCard(chart, lang, chipMaker));
        const inv = invocations.find((i) => i.data.invocationId === chart.invocationId);
        if (inv) inv.charts.append(EV.chartCard(chart, lang, chipMaker));
      }
      for (const table of data.logTables) {
        parts.push(EV.logTable(table, lang, chipMaker));
        const inv = invocations.find((i) => i.data.invocationId === table.invocationId);
        if (inv) inv.charts.append(EV.logTable(table, lang, chipMaker));
      }
    }
    const body = parts.length ? h("div", { class: "charts" }, parts) : h("p", { class: "hint" }, T("no_charts"));
    return section("charts", T("charts"), body);
  }

  function invocationsSection() {
    return section(
      "invocations",
      T("invocations_title"),
      invocations.length ? h("div", { class: "invocations" }, invocations.map(invocationView)) : h("p", { class: "hint" }, T("no_tools"))
    );
  }

  function evaluationSection(evaluation) {
    const parts = evaluation && typeof evaluation === "object" ? Object.entries(evaluation) : [];
    if (!parts.length || !parts.every(([, v]) => v && typeof v === "object" && !Array.isArray(v))) {
      return section("evaluation", T("evaluation_title"), kvTable(evaluation));
    }
    return section("evaluation", T("evaluation_title"), parts.map(([name, value]) => [h("h3", {}, name.replace(/_/g, " ")), kvTable(value)]));
  }

  function orchestrationSection(trace) {
    if (!trace) return section("orchestration", T("orchestration_title"), h("p", { class: "hint" }, T("not_through_graph")));
    const rest = Object.assign({}, trace);
    delete rest.transitions;
    // AIOps runs: one child trace per alert (the nested diagnosis graph), drawn the same way.
    const alerts = Array.isArray(trace.alerts) ? trace.alerts : [];
    delete rest.alerts;
    const children = alerts.map((a) => {
      const child = a.trace || {};
      const title = (a.alert_id || "") + " · " + (a.alert_name || "") + " - " + T("rounds", { n: a.rounds }) + ", " + (child.termination_reason || "?");
      return [h("h3", {}, title), transitionTable(child.transitions)];
    });
    return section("orchestration", T("orchestration_title"), transitionTable(trace.transitions), kvTable(rest), children, lazyJson(T("raw_json"), trace));
  }

  function transitionTable(transitions) {
    if (!Array.isArray(transitions)) return null;
    return h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "grid" },
        h("thead", {}, h("tr", {}, ["#", T("col_from"), T("col_to"), T("col_reason"), T("col_attempt")].map((t) => h("th", { scope: "col" }, t)))),
        h(
          "tbody",
          {},
          transitions.map((t, i) => h("tr", {}, h("td", {}, String(i + 1)), h("td", {}, t.from), h("td", {}, t.to), h("td", {}, h("code", {}, t.reason_code)), h("td", {}, String(t.attempt))))
        )
      )
    );
  }

  function indexEvidence() {
    for (const inv of invocations) {
      for (const ref of inv.data.evidenceRefs || []) {
        const entry = { ref: ref, inv: inv };
        if (!evidence.has(ref.evidence_id)) evidence.set(ref.evidence_id, []);
        evidence.get(ref.evidence_id).push(entry);
        const claimId = ref.claim_id || "unbound";
        if (!claims.has(claimId)) claims.set(claimId, { statement: ref.statement || "", refs: [], cited: false });
        const claim = claims.get(claimId);
        claim.refs.push(entry);
        claim.cited = claim.cited || Boolean(ref.cited);
      }
    }
  }

  function clearSelection() {
    for (const inv of invocations) {
      if (inv.view) JV.clearHighlights(inv.view);
      inv.caption.replaceChildren();
      inv.el.classList.remove("selected");
    }
    for (const old of document.querySelectorAll(".claim.selected, .evidence-chip.selected")) old.classList.remove("selected");
  }

  /** Open the invocations of these evidence ids and highlight each excerpt at its raw_path. */
  function select(ids, anchor) {
    clearSelection();
    let first = null;
    const problems = [];
    for (const id of ids) {
      const entries = evidence.get(id);
      if (!entries) {
        problems.push(T("not_in_run", { id: id }));
        continue;
      }
      const { ref, inv } = entries[0];
      unfold(inv.rawBox);
      inv.rawBox.open = true;
      inv.el.classList.add("selected");
      const view = ensureRendered(inv);
      const chip = document.getElementById("evidence-" + id);
      if (chip) {
        chip.classList.add("selected");
        unfold(chip);
      }
      const claimEl = document.getElementById("claim-" + ref.claim_id);
      if (claimEl) claimEl.classList.add("selected");
      const result = JV.highlight(view, ref.raw_path, ref.evidence_excerpt, { evidence: id, claim: ref.claim_id || "" });
      inv.caption.append(
        h(
          "p",
          {},
          h("strong", {}, id),
          T("verified_at", { claim: ref.claim_id || "?" }),
          result.mark
            ? h(
                "button",
                { type: "button", class: "link-button raw-path", title: T("scroll_to"), onclick: () => result.mark.scrollIntoView({ block: "center" }) },
                h("code", {}, ref.raw_path)
              )
            : h("code", { class: "raw-path" }, ref.raw_path),
          result.error ? h("span", { class: "error-text" }, ": " + result.error) : T("highlighted")
        )
      );
      if (!first) first = result.mark || inv.el;
    }
    status.textContent = problems.join(" ") || T("showing", { ids: ids.join(", ") });
    status.className = "status" + (problems.length ? " error" : "");
    if (anchor) history.replaceState(null, "", "#" + anchor);
    if (first) first.scrollIntoView({ block: "center", behavior: "auto" });
  }

  function followHash() {
    const hash = decodeURIComponent(location.hash.slice(1));
    if (hash.startsWith("evidence-")) select([hash.slice(9)], hash);
    else if (hash.startsWith("claim-") && claims.has(hash.slice(6))) {
      select(claims.get(hash.slice(6)).refs.map((r) => r.ref.evidence_id), hash);
    }
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-evidence]");
    if (!link || !root.contains(link)) return;
    event.preventDefault();
    select([link.dataset.evidence], "evidence-" + link.dataset.evidence);
  });
  window.addEventListener("hashchange", followHash);

  function showFailure(error) {
    status.textContent = "";
    const title = T(error.status === 404 ? "run_not_found" : error.status === 400 ? "bad_link" : "trace_failed");
    const text = error.status === 404 ? T("no_such_run", { run: runId, session: sessionId }) : error.message;
    root.append(h("div", { id: "not-found", class: "notice error", role: "alert" }, h("h2", {}, title), h("p", {}, text), h("p", {}, h("a", { href: "/" }, T("back_to_chat")))));
  }

  async function load() {
    const base = "/api/diagnosis/" + encodeURIComponent(sessionId);
    const query = "?runId=" + encodeURIComponent(runId);
    let loaded;
    try {
      loaded = await api(base + "/trace" + query + "&inputs=none", { raw: true });
    } catch (error) {
      showFailure(error);
      return;
    }
    let graph = null;
    try {
      graph = await api(base + "/graph" + query);
    } catch (_) {
      graph = null; // the route is optional; the section says it could not be loaded
    }
    const trace = loaded.data;
    let tree = null;
    try {
      tree = JV.parse(loaded.text);
    } catch (_) {
      tree = null; // fall back to the parsed values (number spellings may differ)
    }
    trace.toolInvocations.forEach((data, i) => {
      const exact = tree && JV.at(tree, ["data", "toolInvocations", i, "rawOutput"]);
      const rawNode = exact || JV.fromValue(data.rawOutput);
      invocations.push({ data: data, rawNode: rawNode, rawSize: JV.compact(rawNode).length });
    });
    indexEvidence();
    lang = window.I18n.languageFor(trace.run.question);
    try {
      evidenceData = await EV.load(sessionId, runId);
    } catch (_) {
      evidenceData = null; // the charts are optional; the section says there are none
    }
    chipMaker = evidenceData ? EV.chips(evidenceData, (id) => "#evidence-" + id, lang) : null;
    document.title = "Trace " + runId + " · " + (trace.run.question || "") + " · Incident diagnosis";
    const calls = invocationsSection(); // before the charts: they also go into their invocation
    const charts = chartsSection();
    body.append(
      h(
        "nav",
        { class: "toc card", "aria-label": T("sections") },
        ["summary", "route", "charts", "claims", "steps", "invocations", "evaluation", "orchestration"].map((id) => h("a", { href: "#" + id }, T("toc_" + id)))
      ),
      summarySection(trace),
      routeSection(trace.run, graph),
      charts,
      claimsSection(),
      stepsSection(trace.steps),
      calls,
      evaluationSection(trace.run.selfEvaluation),
      orchestrationSection(trace.run.orchestrationTrace)
    );
    body.hidden = false;
    status.textContent = "";
    root.dataset.loaded = "true";
    followHash();
  }

  if (root.dataset.valid === "true") load();
})();
