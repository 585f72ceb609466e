// Shared by the chat page and the trace viewer: DOM building, the JSON API client (with the
// stored bearer key), the server-sent-events reader, and Markdown rendering (marked + DOMPurify)
// with [E1]-style citations turned into links. Plain ES2020, no build step.
"use strict";

(function () {
  const KEY_STORAGE = "diagnosis.apiKey";
  const t = (key, vars) => window.I18n.t(key, null, vars);

  /** Build an element: h("a", {href: "/", class: "x", onclick: fn}, "text", child, ...). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") el.className = value;
      else if (name === "text") el.textContent = value;
      else if (name === "dataset") Object.assign(el.dataset, value);
      else if (name.startsWith("on") && typeof value === "function") {
        el.addEventListener(name.slice(2), value);
      } else if (value === true) el.setAttribute(name, "");
      else el.setAttribute(name, String(value));
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function apiKey() {
    try {
      return localStorage.getItem(KEY_STORAGE) || "";
    } catch (_) {
      return "";
    }
  }

  function headers(extra) {
    const out = Object.assign({ Accept: "application/json" }, extra || {});
    const key = apiKey();
    if (key) out.Authorization = "Bearer " + key;
    return out;
  }

  /** An error whose message a person can read; status 0 means the server was not reached. */
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.name = "ApiError";
      this.status = status;
    }
  }

  function unreachable(error) {
    return new ApiError(0, t("unreachable", { error: error.message || error }));
  }

  /** The ApiError for a response that is not OK, from its JSON envelope when it has one. */
  async function responseError(response) {
    let message = "";
    try {
      const body = await response.json();
      message = body && typeof body.message === "string" ? body.message : "";
    } catch (_) {
      // not an envelope (a proxy's HTML page, say): fall back to the status line
    }
    message = message || response.statusText || "request failed";
    let text = t("server_answered", { status: response.status, message: message });
    if (response.status === 401) text += t("open_settings");
    if (response.status === 503) text = t("unavailable", { message: message });
    return new ApiError(response.status, text);
  }

  /** Call the JSON API; resolve to the envelope's data, reject with a readable ApiError. */
  async function api(path, options) {
    const opts = options || {};
    const init = { method: opts.method || "GET", headers: headers() };
    if (opts.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(opts.body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      throw unreachable(error);
    }
    if (!response.ok) throw await responseError(response);
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch (_) {
      throw new ApiError(response.status, t("not_json"));
    }
    return opts.raw ? { data: body.data, text: text } : body.data;
  }

  /** Parse one SSE frame into {event, data}; null for comments such as ": keep-alive". */
  function parseFrame(frame) {
    let event = "message";
    const data = [];
    for (const line of frame.split(/\r?\n/)) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    return data.length ? { event: event, data: data.join("\n") } : null;
  }

  /**
   * POST ``body`` to an SSE endpoint and call ``onEvent(type, data)`` for every message as it
   * arrives (fetch + ReadableStream: EventSource cannot POST). Rejects with an ApiError when the
   * request is refused or the connection breaks.
   */
  async function streamEvents(path, body, onEvent, signal) {
    let response;
    try {
      response = await fetch(path, {
        method: "POST",
        headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
        body: JSON.stringify(body),
        signal: signal,
      });
    } catch (error) {
      throw unreachable(error);
    }
    if (!response.ok) throw await responseError(response);
    if (!response.body) throw new ApiError(response.status, t("no_streams"));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const flush = (final) => {
      const parts = buffer.split(/\r?\n\r?\n/);
      buffer = final ? "" : parts.pop();
      for (const frame of parts) {
        const parsed = parseFrame(frame);
        if (!parsed || parsed.event !== "message") continue;
        let message;
        try {
          message = JSON.parse(parsed.data);
        } catch (_) {
          continue; // a frame we cannot read is skipped, not fatal
        }
        onEvent(message.type, message.data || {});
      }
    };
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw new ApiError(0, t("stream_broke", { error: error.message }));
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      flush(false);
    }
    buffer += decoder.decode();
    flush(true);
  }

  let markdown = null;

  function markdownParser() {
    if (markdown) return markdown;
    if (!window.marked || !window.DOMPurify) return null;
    markdown = new window.marked.Marked({ gfm: true, breaks: false });
    // Answers quote log lines: raw HTML in them is shown as text, never interpreted.
    markdown.use({
      // no bare-URL/e-mail autolinks: "user=app@10.0.3.35" in a log line is not an address
      tokenizer: {
        url() {
          return undefined;
        },
      },
      renderer: {
        html(token) {
          return escapeHtml(token.text || token.raw || "");
        },
        // An image from another origin would be fetched when the answer is shown (a tracking
        // pixel, or a leak of what was asked): only same-origin and data: images are drawn,
        // any other is replaced by its alt text.
        image(token) {
          if (sameOriginUrl(token.href)) return false; // marked's own <img> rendering
          const alt = token.text ? "[image: " + token.text + "]" : "[image]";
          return escapeHtml(alt);
        },
      },
    });
    // Belt and braces: whatever reaches DOMPurify, an <img>/<source> pointing elsewhere goes.
    window.DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
      if ((data.attrName === "src" || data.attrName === "srcset") && !sameOriginUrl(data.attrValue)) {
        data.keepAttr = false;
      }
    });
    return markdown;
  }

  /** True for a URL that stays on this page's origin (relative, same-origin or data:image). */
  function sameOriginUrl(value) {
    const text = String(value || "").trim();
    if (/^data:image\/(png|gif|jpeg|webp);/i.test(text)) return true;
    try {
      return new URL(text, window.location.href).origin === window.location.origin;
    } catch (_) {
      return false;
    }
  }

  function escapeHtml(text) {
    return String(text)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }

  // [E1], or [A1-E27] in AIOps reports (evidence ids scoped by alert)
  const CITATION = /\[((?:[A-Za-z0-9]+-)?E\d+)\]/g;

  /**
   * Replace every match of ``pattern`` (a /g regex) in the text nodes of ``root`` - outside
   * elements matching ``skip`` - by the node ``make(match)`` returns.
   */
  function replaceInText(root, pattern, skip, make) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const targets = [];
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (node.parentElement.closest(skip)) continue;
      pattern.lastIndex = 0;
      if (pattern.test(node.nodeValue)) targets.push(node);
    }
    for (const node of targets) {
      const text = node.nodeValue;
      const fragment = document.createDocumentFragment();
      let last = 0;
      for (const match of text.matchAll(pattern)) {
        fragment.append(text.slice(last, match.index), make(match));
        last = match.index + match[0].length;
      }
      fragment.append(text.slice(last));
      node.replaceWith(fragment);
    }
  }

  /** Turn every "[E1]" / "[A1-E1]" in text (outside code and links) into a link made by ``href(id)``. */
  function linkCitations(root, href) {
    replaceInText(root, CITATION, "code, pre, a", (match) =>
      h(
        "a",
        {
          class: "cite",
          href: href(match[1]),
          dataset: { evidence: match[1] },
          title: t("cite_title", { id: match[1] }),
        },
        match[0]
      )
    );
  }

  /** Render Markdown into ``el``, sanitised, with citations linked by ``citationHref``. */
  function renderMarkdown(el, text, citationHref) {
    const parser = markdownParser();
    if (!parser) {
      el.textContent = text; // the vendored scripts did not load: plain text is still readable
      return;
    }
    const html = parser.parse(text || "");
    el.innerHTML = window.DOMPurify.sanitize(html, {
      USE_PROFILES: { html: true },
      FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "video", "audio"],
      FORBID_ATTR: ["style", "srcset"],
    });
    for (const link of el.querySelectorAll("a[href]")) {
      if (/^https?:/i.test(link.getAttribute("href"))) link.setAttribute("rel", "noopener noreferrer");
    }
    if (citationHref) linkCitations(el, citationHref);
  }

  function traceUrl(sessionId, runId) {
    return "/trace/" + encodeURIComponent(sessionId) + "/" + encodeURIComponent(runId);
  }

  /** ``3,116 + 420 tokens · $0.0012`` (no cost without a price table; "–" before tokens). */
  function formatUsage(run, lang) {
    if (run.promptTokens === null || run.promptTokens === undefined) return "–";
    const n = (value) => Number(value || 0).toLocaleString("en-US");
    const text = window.I18n.t("usage", lang, { prompt: n(run.promptTokens), completion: n(run.completionTokens) });
    return run.costUsd === null || run.costUsd === undefined ? text : text + " · " + formatCost(run.costUsd);
  }

  function formatCost(dollars) {
    return "$" + (dollars >= 0.01 ? dollars.toFixed(2) : dollars.toPrecision(2));
  }

  function formatDuration(ms) {
    if (ms === null || ms === undefined) return "–";
    if (ms < 1000) return ms + " ms";
    return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }

  const pad = (n) => String(n).padStart(2, "0");

  /** ``2026-11-30 10:02:00 UTC`` (``short``: ``10:02 UTC``, no date, no seconds). */
  function formatTime(iso, short) {
    if (!iso) return "–";
    const date = new Date(iso);
    if (isNaN(date)) return String(iso);
    const clock = pad(date.getUTCHours()) + ":" + pad(date.getUTCMinutes());
    if (short) return clock + " UTC";
    const day = date.getUTCFullYear() + "-" + pad(date.getUTCMonth() + 1) + "-" + pad(date.getUTCDate());
    return day + " " + clock + ":" + pad(date.getUTCSeconds()) + " UTC";
  }

  /** The browser's local rendering of a time, for the hover text of a UTC time. */
  function localTime(iso) {
    const date = new Date(iso);
    const label = window.I18n ? window.I18n.t("local_time") : "Local time";
    return isNaN(date) ? "" : label + ": " + date.toLocaleString();
  }

  /** A <time> in UTC with its zone shown; the local time on hover. */
  function timeEl(iso, short) {
    if (!iso) return h("span", { class: "quiet" }, "–");
    return h("time", { datetime: iso, class: "utc", title: localTime(iso) }, formatTime(iso, short));
  }

  // 2026-11-30T10:02:00Z, 2026-11-30T10:02:00.123Z (a UTC instant written by a tool or the product)
  const ISO_UTC = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g;

  /** Every ISO UTC timestamp in the text of ``root`` (outside code and quoted excerpts) shown as a UTC <time>. */
  function utcTimes(root) {
    replaceInText(root, ISO_UTC, "code, pre, time, q.evidence-excerpt", (match) => timeEl(match[0]));
  }

  function setupSettings() {
    const dialog = document.getElementById("settings");
    const open = document.getElementById("settings-open");
    if (!dialog || !open) return;
    const input = document.getElementById("settings-key");
    open.addEventListener("click", () => {
      input.value = apiKey();
      dialog.showModal();
      input.focus();
    });
    document.getElementById("settings-forget").addEventListener("click", () => {
      input.value = "";
      localStorage.removeItem(KEY_STORAGE);
      dialog.close("forget");
    });
    dialog.addEventListener("close", () => {
      if (dialog.returnValue !== "save") return;
      const value = input.value.trim();
      if (value) localStorage.setItem(KEY_STORAGE, value);
      else localStorage.removeItem(KEY_STORAGE);
    });
    if (document.body.dataset.authRequired === "true" && !apiKey()) {
      open.classList.add("attention");
      open.title = t("needs_key");
    }
  }

  document.addEventListener("DOMContentLoaded", setupSettings);

  window.Diag = {
    ApiError,
    api,
    append,
    escapeHtml,
    formatCost,
    formatDuration,
    formatTime,
    formatUsage,
    h,
    localTime,
    renderMarkdown,
    streamEvents,
    timeEl,
    traceUrl,
    utcTimes,
  };
})();
