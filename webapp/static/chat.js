// The chat page: sessions kept in this browser, streamed answers with live node progress,
// feedback, AIOps reports and clearing a session's history.
"use strict";

(function () {
  const { api, h, renderMarkdown, streamEvents, traceUrl, formatDuration, formatUsage, utcTimes } = window.Diag;
  const { t, languageFor } = window.I18n;
  const { flowLabel, stateLabel } = window.DiagLists;
  const SESSIONS = "diagnosis.sessions";
  const CURRENT = "diagnosis.currentSession";
  const TITLE_CHARS = 80;

  const el = {
    list: document.getElementById("session-list"),
    newSession: document.getElementById("new-session"),
    title: document.getElementById("conversation-title"),
    status: document.getElementById("status"),
    turns: document.getElementById("turns"),
    empty: document.getElementById("empty-state"),
    form: document.getElementById("ask"),
    question: document.getElementById("question"),
    mode: document.getElementById("mode"),
    send: document.getElementById("send"),
    aiops: document.getElementById("aiops"),
    clear: document.getElementById("clear-history"),
  };

  let sessions = loadSessions();
  let current = localStorage.getItem(CURRENT) || null;
  let busy = false;

  function loadSessions() {
    try {
      const parsed = JSON.parse(localStorage.getItem(SESSIONS) || "[]");
      return Array.isArray(parsed) ? parsed.filter((s) => s && typeof s.id === "string") : [];
    } catch (_) {
      return [];
    }
  }

  function saveSessions() {
    localStorage.setItem(SESSIONS, JSON.stringify(sessions));
    if (current) localStorage.setItem(CURRENT, current);
    else localStorage.removeItem(CURRENT);
  }

  function shorten(text) {
    const line = String(text || "").replace(/\s+/g, " ").trim();
    return line.length > TITLE_CHARS ? line.slice(0, TITLE_CHARS - 1) + "…" : line;
  }

  function setStatus(text, kind) {
    el.status.textContent = text || "";
    el.status.className = "status" + (kind ? " " + kind : "");
  }

  function remember(sessionId, title) {
    const found = sessions.find((s) => s.id === sessionId);
    if (found) {
      if (title && !found.title) found.title = shorten(title);
    } else {
      sessions.unshift({ id: sessionId, title: shorten(title) || null });
    }
    current = sessionId;
    saveSessions();
    renderSessions();
  }

  function renderSessions() {
    el.list.replaceChildren(
      ...sessions.map((s) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "session" + (s.missing ? " missing" : ""),
              "aria-current": s.id === current ? "true" : null,
              dataset: { sessionId: s.id },
              onclick: () => selectSession(s.id),
            },
            h("span", { class: "session-title", lang: languageFor(s.title) === "zh" ? "zh" : null }, s.title || t("untitled")),
            h("span", { class: "session-id" }, s.missing ? t("not_on_server") : s.id)
          )
        )
      )
    );
    const session = sessions.find((s) => s.id === current);
    el.title.textContent = session ? session.title || t("untitled") : t("new_session");
    el.clear.disabled = !current || busy;
  }

  async function refreshTitles() {
    await Promise.all(
      sessions.map(async (s) => {
        try {
          const info = await api("/api/chat/session/" + encodeURIComponent(s.id));
          s.title = shorten(info.title) || s.title;
          s.missing = false;
        } catch (error) {
          if (error.status === 404) s.missing = true;
        }
      })
    );
    saveSessions();
    renderSessions();
  }

  function selectSession(sessionId) {
    if (busy) return;
    current = sessionId;
    saveSessions();
    renderSessions();
    loadTurns(sessionId);
  }

  function newSession() {
    if (busy) return;
    current = null;
    saveSessions();
    renderSessions();
    el.turns.replaceChildren(el.empty);
    el.empty.hidden = false;
    setStatus("");
    el.question.focus();
  }

  async function loadTurns(sessionId) {
    el.turns.replaceChildren();
    setStatus(t("loading_session"));
    try {
      const data = await api("/api/diagnosis/" + encodeURIComponent(sessionId) + "/runs?limit=50");
      if (current !== sessionId) return;
      const runs = data.runs.slice().reverse();
      for (const run of runs) el.turns.append(pastTurn(run));
      if (!runs.length) {
        el.turns.append(el.empty);
        el.empty.hidden = false;
      }
      setStatus("");
      scrollToEnd();
    } catch (error) {
      if (error.status === 404) {
        const found = sessions.find((s) => s.id === sessionId);
        if (found) found.missing = true;
        renderSessions();
      }
      setStatus(error.message, "error");
      el.turns.append(el.empty);
    }
  }

  /** The element of one turn: the question, live progress, the answer and its actions. */
  function turnView(questionText, kind) {
    const view = {};
    // An answer to a Chinese question gets Chinese labels, whatever the browser's language.
    const lang = (view.lang = languageFor(questionText));
    view.flow = h("span", { class: "badge flow" }, kind === "aiops" ? flowLabel("aiops") : "…");
    view.state = h("span", { class: "badge state running" }, t("running", lang));
    view.count = h("span", { class: "count" }, "0");
    view.progress = h("ol", { class: "progress-list" });
    view.progressBox = h(
      "details",
      { class: "progress", open: true },
      h("summary", {}, t("progress", lang), view.count, t("node_executions", lang)),
      view.progress
    );
    view.answer = h("div", { class: "answer markdown" });
    view.evidence = h("div", { class: "turn-evidence" });
    view.error = h("div", { class: "notice error turn-error", role: "alert", hidden: true });
    view.traceLink = h("a", { class: "trace-link", hidden: true }, t("open_trace", lang));
    view.feedbackStatus = h("span", { class: "feedback-status", role: "status" });
    view.useful = h("button", { type: "button", class: "secondary small", dataset: { feedback: "useful" }, "aria-pressed": "false" }, t("useful", lang));
    view.notUseful = h("button", { type: "button", class: "secondary small", dataset: { feedback: "not_useful" }, "aria-pressed": "false" }, t("not_useful", lang));
    view.feedback = h(
      "div",
      { class: "feedback", role: "group", "aria-label": t("was_useful", lang), hidden: true },
      view.useful,
      view.notUseful
    );
    view.meta = h("span", { class: "turn-meta" });
    view.root = h(
      "article",
      { class: "turn" + (kind === "aiops" ? " aiops" : ""), lang: lang === "zh" ? "zh-CN" : "en", dataset: { lang: lang } },
      h(
        "div",
        { class: "question" },
        h("span", { class: "who" }, kind === "aiops" ? "AIOps" : t("you", lang)),
        h("p", {}, questionText)
      ),
      h(
        "div",
        { class: "reply" },
        h("div", { class: "reply-head" }, view.flow, view.state, view.meta),
        view.progressBox,
        view.answer,
        view.evidence,
        view.error,
        h("div", { class: "turn-foot" }, view.traceLink, view.feedback, view.feedbackStatus)
      )
    );
    view.useful.addEventListener("click", () => sendFeedback(view, "useful"));
    view.notUseful.addEventListener("click", () => sendFeedback(view, "not_useful"));
    return view;
  }

  function setRun(view, sessionId, runId, flow) {
    view.sessionId = sessionId;
    view.runId = runId;
    view.root.dataset.runId = runId;
    view.root.dataset.sessionId = sessionId;
    if (flow) {
      view.flow.textContent = flowLabel(flow);
      view.flow.dataset.flow = flow;
    }
    view.traceLink.href = traceUrl(sessionId, runId);
    view.traceLink.hidden = false;
  }

  function setState(view, status, degraded) {
    const text = String(status || "").toLowerCase();
    view.state.textContent = stateLabel(status, view.lang) + (degraded ? " · " + t("degraded", view.lang) : "");
    view.state.dataset.state = text;
    const kind = text === "success" ? (degraded ? "degraded" : "ok") : text === "running" ? "running" : "failed";
    view.state.className = "badge state " + kind;
  }

  function showError(view, message) {
    view.error.hidden = false;
    view.error.textContent = message;
  }

  function citationHref(view) {
    return (id) => traceUrl(view.sessionId, view.runId) + "#evidence-" + id;
  }

  function showAnswer(view, text) {
    renderMarkdown(view.answer, text, view.runId ? citationHref(view) : null);
    utcTimes(view.answer);
  }

  /** The finished answer made readable: chips, evidence lines, charts, tables, the window. */
  async function showEvidence(view) {
    if (!view.runId || !view.answer.childElementCount) return;
    let data;
    try {
      data = await window.Evidence.load(view.sessionId, view.runId);
    } catch (_) {
      return; // the answer stays readable as rendered; its citations still open the trace
    }
    const make = window.Evidence.chips(data, citationHref(view), view.lang);
    window.Evidence.readableEvidenceList(view.answer, make, view.lang);
    window.Evidence.chipCitations(view.answer, make);
    const panel = window.Evidence.panel(data, view.lang, make);
    view.evidence.replaceChildren(...(panel ? [panel] : []));
    view.root.dataset.evidence = "ready";
  }

  /** The footer under an answer: duration, steps, tool calls, tokens and cost. */
  function turnMeta(run, lang) {
    const meta = t("turn_meta", lang, { duration: formatDuration(run.durationMs), steps: run.stepCount, tools: run.toolCount });
    const usage = formatUsage(run, lang);
    return usage === "–" ? meta : meta + " · " + usage;
  }

  /** The footer of a turn that just finished, from its run's record. */
  async function finishedMeta(view, sessionId, runId) {
    try {
      const data = await api("/api/diagnosis/" + encodeURIComponent(sessionId) + "/runs");
      const run = data.runs.find((r) => r.runId === runId);
      if (run) view.meta.textContent = turnMeta(run, view.lang);
    } catch (error) {
      // the footer keeps the measured duration
    }
  }

  function pastTurn(run) {
    const view = turnView(run.question || "", run.flow === "aiops" ? "aiops" : "chat");
    setRun(view, run.sessionId, run.runId, run.flow);
    setState(view, run.status, run.degraded);
    view.meta.textContent = turnMeta(run, view.lang);
    view.progressBox.hidden = true;
    if (run.answer) {
      showAnswer(view, run.answer);
      showEvidence(view);
    }
    if (run.errorMessage) showError(view, run.errorMessage);
    view.feedback.hidden = false;
    markFeedback(view, run.feedback);
    return view.root;
  }

  function markFeedback(view, value) {
    view.useful.setAttribute("aria-pressed", String(value === "useful"));
    view.notUseful.setAttribute("aria-pressed", String(value === "not_useful"));
  }

  async function sendFeedback(view, value) {
    const repeat = view.useful.getAttribute("aria-pressed") === "true" ? "useful"
      : view.notUseful.getAttribute("aria-pressed") === "true" ? "not_useful" : null;
    view.feedbackStatus.textContent = t("sending", view.lang);
    view.feedbackStatus.className = "feedback-status";
    try {
      // Idempotent on the server: the same value again is a success that changes nothing.
      await api("/api/feedback", { method: "POST", body: { sessionId: view.sessionId, runId: view.runId, feedback: value } });
      markFeedback(view, value);
      if (repeat === value) {
        view.feedbackStatus.textContent = t("fb_again", view.lang);
        view.feedbackStatus.classList.add("info");
        return;
      }
      view.feedbackStatus.textContent = t(value === "useful" ? "fb_useful" : "fb_not_useful", view.lang);
      view.feedbackStatus.classList.add("ok");
    } catch (error) {
      view.feedbackStatus.textContent = error.message;
      view.feedbackStatus.classList.add(error.status === 409 ? "info" : "error");
    }
  }

  function progressItem(event, lang) {
    const outcome = String(event.outcome || "").toLowerCase();
    const reason = String(event.reason_code || "");
    const alert = event.alert ? (typeof event.alert === "string" ? event.alert : JSON.stringify(event.alert)) : null;
    return h(
      "li",
      {
        class: "progress-item outcome-" + outcome,
        dataset: { node: event.node || "", outcome: outcome, reason: reason, attempt: String(event.attempt || 1) },
        title: [event.node, outcome, reason, t("attempt", lang, { n: event.attempt || 1 }), alert].filter(Boolean).join(" · "),
      },
      h("span", { class: "node" }, event.node || "?"),
      h("span", { class: "outcome" }, outcome),
      reason && reason.toLowerCase() !== outcome ? h("span", { class: "reason" }, reason) : null,
      h("span", { class: "attempt" + ((event.attempt || 1) > 1 ? " retry" : "") }, t("attempt", lang, { n: event.attempt || 1 })),
      alert ? h("span", { class: "alert" }, t("alert_label", lang) + alert) : null
    );
  }

  function scrollToEnd() {
    el.turns.scrollTop = el.turns.scrollHeight;
  }

  function setBusy(value) {
    busy = value;
    el.send.disabled = value;
    el.aiops.disabled = value;
    el.newSession.disabled = value;
    el.clear.disabled = value || !current;
    el.form.setAttribute("aria-busy", String(value));
  }

  /** Stream one run into a new turn; ``path`` is chat_stream or ai_ops. */
  async function run(path, body, questionText, kind) {
    el.empty.hidden = true;
    const view = turnView(questionText, kind);
    el.turns.append(view.root);
    scrollToEnd();
    setBusy(true);
    setStatus(kind === "aiops" ? t("investigating") : t("diagnosing"));
    let text = "";
    let done = null;
    const started = performance.now();
    const onEvent = (type, data) => {
      if (type === "metadata") {
        setRun(view, data.sessionId, data.runId, data.flow);
        remember(data.sessionId, questionText);
      } else if (type === "progress") {
        view.progress.append(progressItem(data, view.lang));
        view.count.textContent = String(view.progress.children.length);
      } else if (type === "content") {
        text += data.text || "";
        showAnswer(view, text);
      } else if (type === "error") {
        showError(view, t("run_failed_msg", view.lang, { message: data.message || t("unknown_error", view.lang) }));
      } else if (type === "done") {
        done = data;
      }
      scrollToEnd();
    };
    try {
      await streamEvents(path, body, onEvent);
      if (done) {
        setState(view, done.status, done.degraded);
        view.feedback.hidden = false;
        view.meta.textContent = formatDuration(Math.round(performance.now() - started));
        await finishedMeta(view, done.sessionId, done.runId);
        setStatus(done.success ? t("done") : t("run_failed"), done.success ? "" : "error");
        await showEvidence(view);
        document.dispatchEvent(new CustomEvent("diagnosis:run-finished"));
      } else {
        setState(view, "interrupted");
        showError(view, t("stream_ended", view.lang));
        setStatus(t("interrupted"), "error");
      }
    } catch (error) {
      setState(view, "failed");
      showError(view, error.message);
      setStatus(error.message, "error");
    } finally {
      setBusy(false);
      renderSessions();
      refreshTitles();
    }
  }

  el.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = el.question.value.trim();
    if (!question || busy) return;
    el.question.value = "";
    const body = { Question: question, mode: el.mode.value };
    if (current) body.Id = current;
    run("/api/chat_stream", body, question, "chat");
  });

  el.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      el.form.requestSubmit();
    }
  });

  el.aiops.addEventListener("click", () => {
    if (busy) return;
    // The request in the page's language: the report is written in the request's.
    const request = t("aiops_request");
    const body = current ? { sessionId: current, userRequest: request } : { userRequest: request };
    run("/api/ai_ops", body, request, "aiops");
  });

  el.clear.addEventListener("click", async () => {
    if (!current || busy) return;
    try {
      const data = await api("/api/chat/clear", { method: "POST", body: { Id: current } });
      setStatus(t("history_cleared", null, { n: data.cleared }), "ok");
    } catch (error) {
      setStatus(error.message, "error");
    }
  });

  el.newSession.addEventListener("click", newSession);
  for (const example of document.querySelectorAll("button.example")) {
    example.addEventListener("click", () => {
      el.question.value = example.textContent;
      el.form.requestSubmit();
    });
  }

  // A session opened from the server's list (sessions.js, the runs page): ?session=<id>.
  const linked = new URLSearchParams(location.search).get("session");
  if (linked) {
    remember(linked, null);
    history.replaceState(null, "", location.pathname);
  }
  renderSessions();
  if (current && sessions.some((s) => s.id === current)) loadTurns(current);
  else current = null;
  refreshTitles();
})();
