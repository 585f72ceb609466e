// Evidence you can look at, shared by the chat page and the trace viewer, from
// GET /api/diagnosis/<sessionId>/evidence: each cited metric series as an SVG chart of our own
// (baseline and incident windows shaded, the onset marked, the cited points highlighted), each
// cited log_patterns output as a table, the question's resolved window, and citations as
// compact chips whose hover card shows the excerpt and its source.
"use strict";

(function () {
  const Diag = window.Diag;
  const { api, h, formatTime, timeEl, localTime } = Diag;
  const { t } = window.I18n;
  const SVG = "http://www.w3.org/2000/svg";
  // The plot's geometry in viewBox units; the SVG scales to its container's width.
  const W = 560;
  const H = 190;
  const PAD = { left: 52, right: 14, top: 14, bottom: 30 };
  const X_TICKS = 5;
  const Y_TICKS = 4;

  function load(sessionId, runId) {
    const base = "/api/diagnosis/" + encodeURIComponent(sessionId);
    return api(base + "/evidence?runId=" + encodeURIComponent(runId));
  }

  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (name === "text") el.textContent = value;
      else el.setAttribute(name, String(value));
    }
    for (const child of children) if (child) el.append(child);
    return el;
  }

  const ms = (iso) => (iso ? Date.parse(iso) : NaN);
  const round = (v) => Math.round(v * 100) / 100;

  function number(v) {
    if (v === null || v === undefined || isNaN(v)) return "–";
    const a = Math.abs(v);
    if (a !== 0 && (a < 0.01 || a >= 1e6)) return Number(v).toExponential(2);
    return String(Number(v.toFixed(a < 1 ? 4 : a < 100 ? 2 : 1)));
  }

  /** Linear scale; the domain is widened when empty so a flat series still draws. */
  function scale(d0, d1, r0, r1) {
    const lo = d0 === d1 ? d0 - 1 : d0;
    const hi = d0 === d1 ? d1 + 1 : d1;
    const f = (v) => r0 + ((v - lo) / (hi - lo)) * (r1 - r0);
    f.domain = [lo, hi];
    return f;
  }

  /** The chart's x and y scales over the points and the windows. */
  function scales(chart) {
    const w = chart.windows || {};
    const times = chart.points.map((p) => ms(p[0])).filter((v) => !isNaN(v));
    for (const iso of [w.baselineStart, w.baselineEnd, w.onset, w.incidentEnd, w.peakAt]) if (!isNaN(ms(iso))) times.push(ms(iso));
    const values = chart.points.map((p) => p[1]).filter((v) => typeof v === "number" && isFinite(v));
    if (!chart.points.length) for (const v of [w.baselineMedian, w.incidentMedian, w.peak, 0]) if (typeof v === "number") values.push(v);
    let y0 = Math.min(...values);
    let y1 = Math.max(...values);
    if (!values.length) [y0, y1] = [0, 1];
    if (y0 > 0 && y0 < (y1 - y0) * 0.5) y0 = 0; // start at zero when it costs little height
    const margin = (y1 - y0) * 0.06;
    return {
      x: scale(Math.min(...times), Math.max(...times), PAD.left, W - PAD.right),
      y: scale(y0, y1 + margin, H - PAD.bottom, PAD.top),
    };
  }

  function band(x, from, to, cls, label) {
    const a = ms(from);
    const b = ms(to);
    if (isNaN(a) || isNaN(b)) return null;
    const x0 = x(Math.min(a, b));
    const x1 = x(Math.max(a, b));
    return s(
      "rect",
      { class: "band " + cls, x: round(x0), y: PAD.top, width: round(Math.max(1, x1 - x0)), height: H - PAD.top - PAD.bottom, "data-from": from, "data-to": to },
      s("title", { text: label + ": " + formatTime(from) + " – " + formatTime(to) })
    );
  }

  function axes(sc) {
    const g = s("g", { class: "axes" });
    const [x0, x1] = sc.x.domain;
    const span = x1 - x0;
    for (let i = 0; i <= X_TICKS; i++) {
      const v = x0 + (span * i) / X_TICKS;
      const px = round(sc.x(v));
      const iso = new Date(v).toISOString();
      g.append(s("line", { class: "tick", x1: px, x2: px, y1: H - PAD.bottom, y2: H - PAD.bottom + 4 }));
      const label = formatTime(iso, true).replace(" UTC", "");
      g.append(s("text", { class: "tick-label", x: px, y: H - PAD.bottom + 16, "text-anchor": i === 0 ? "start" : i === X_TICKS ? "end" : "middle", text: label }));
    }
    g.append(s("text", { class: "zone-label", x: W - PAD.right, y: H - 2, "text-anchor": "end", text: "UTC" }));
    const [y0, y1] = sc.y.domain;
    for (let i = 0; i <= Y_TICKS; i++) {
      const v = y0 + ((y1 - y0) * i) / Y_TICKS;
      const py = round(sc.y(v));
      g.append(s("line", { class: "grid", x1: PAD.left, x2: W - PAD.right, y1: py, y2: py }));
      g.append(s("text", { class: "tick-label", x: PAD.left - 6, y: py + 4, "text-anchor": "end", text: number(v) }));
    }
    return g;
  }

  /** The SVG of one chart: a recorded series, or a finding - the points it recorded, or only
   * its own numbers (medians, peak) for an output recorded before findings carried points. */
  function chartSvg(chart, lang) {
    const sc = scales(chart);
    const w = chart.windows || {};
    const svg = s("svg", {
      class: "evidence-chart",
      viewBox: "0 0 " + W + " " + H,
      role: "img",
      "aria-label": chart.metric + " · " + chart.service,
      "data-invocation-id": chart.invocationId,
      "data-metric": chart.metric,
      "data-kind": chart.kind,
      "data-x-domain": sc.x.domain.join(","),
      "data-y-domain": sc.y.domain.join(","),
      "data-plot": [PAD.left, W - PAD.right, H - PAD.bottom, PAD.top].join(","),
    });
    svg.append(axes(sc));
    if (chart.windows) {
      svg.append(
        band(sc.x, w.baselineStart, w.baselineEnd, "baseline", t("baseline", lang)) || "",
        band(sc.x, w.onset, w.incidentEnd, "incident", t("incident", lang)) || ""
      );
    }
    if (chart.points.length) {
      let d = "";
      let pen = "M";
      for (const [stamp, value] of chart.points) {
        if (typeof value !== "number" || !isFinite(value) || isNaN(ms(stamp))) {
          pen = "M";
          continue;
        }
        d += pen + round(sc.x(ms(stamp))) + " " + round(sc.y(value)) + " ";
        pen = "L";
      }
      svg.append(s("path", { class: "series", d: d.trim(), "data-count": chart.points.length, "data-downsampled": chart.finding && chart.finding.downsampled ? "true" : null }));
    } else if (chart.windows) {
      // a finding only: its baseline and incident medians, and its peak
      const seg = (from, to, v, cls) =>
        isNaN(ms(from)) || isNaN(ms(to)) || typeof v !== "number"
          ? null
          : s("line", { class: "median " + cls, x1: round(sc.x(ms(from))), x2: round(sc.x(ms(to))), y1: round(sc.y(v)), y2: round(sc.y(v)) });
      for (const el of [seg(w.baselineStart, w.baselineEnd, w.baselineMedian, "baseline"), seg(w.onset, w.incidentEnd, w.incidentMedian, "incident")]) if (el) svg.append(el);
    }
    // a finding's peak, on its curve (the recorded points keep it) or alone
    if (chart.kind === "finding" && chart.windows && typeof w.peak === "number" && !isNaN(ms(w.peakAt))) {
      svg.append(s("circle", { class: "peak", cx: round(sc.x(ms(w.peakAt))), cy: round(sc.y(w.peak)), r: 3.5, "data-time": w.peakAt, "data-value": w.peak }, s("title", { text: t("peak", lang) + " " + number(w.peak) + " " + t("at", lang) + " " + formatTime(w.peakAt) })));
    }
    if (chart.windows && !isNaN(ms(w.onset))) {
      const px = round(sc.x(ms(w.onset)));
      const citedOnset = chart.cited.some((c) => /\.onset$/.test(c.rawPath || ""));
      svg.append(
        s("line", { class: "onset" + (citedOnset ? " cited-onset" : ""), x1: px, x2: px, y1: PAD.top, y2: H - PAD.bottom, "data-onset": w.onset }, s("title", { text: t("onset", lang) + " " + formatTime(w.onset) })),
        s("text", { class: "onset-label", x: px + 4, y: PAD.top + 10, text: t("onset", lang) + " " + formatTime(w.onset, true) })
      );
    }
    for (const cite of chart.cited) {
      if (!Array.isArray(cite.point) || typeof cite.point[1] !== "number") continue;
      const [stamp, value] = cite.point;
      svg.append(
        s(
          "circle",
          { class: "cited", cx: round(sc.x(ms(stamp))), cy: round(sc.y(value)), r: 4.5, "data-evidence": cite.evidenceId, "data-index": cite.index, "data-time": stamp, "data-value": value },
          s("title", { text: cite.evidenceId + ": " + number(value) + " " + t("at", lang) + " " + formatTime(stamp) })
        )
      );
    }
    return svg;
  }

  /** Where the chart's curve and windows come from. */
  function sourceNote(chart, lang) {
    if (chart.kind !== "finding") return t("windows_analysed", lang);
    if (!chart.points.length) return t("finding_only", lang);
    const thinned = chart.finding && chart.finding.downsampled;
    return t("finding_points", lang) + (thinned ? "; " + t("finding_downsampled", lang).replace("{n}", String(chart.points.length)) : "");
  }

  function legend(chart, lang) {
    const w = chart.windows;
    if (!w) return h("p", { class: "chart-note" }, t("windows_none", lang));
    const source = sourceNote(chart, lang);
    return h(
      "p",
      { class: "chart-note" },
      h("span", { class: "key baseline" }, t("baseline", lang)),
      " " + t("median", lang) + " " + number(w.baselineMedian) + " · ",
      h("span", { class: "key incident" }, t("incident", lang)),
      " " + t("median", lang) + " " + number(w.incidentMedian) + ", " + t("peak", lang) + " " + number(w.peak) + " · ",
      h("span", { class: "key onset" }, t("onset", lang)),
      " ",
      timeEl(w.onset),
      w.change ? " · " + t("change", lang) + " " + w.change : "",
      h("br"),
      h("span", { class: "quiet" }, source)
    );
  }

  /** A chart card: title, SVG, legend; ``chip`` makes the cited ids into chips. */
  function chartCard(chart, lang, chip) {
    const unit = chart.unit ? " (" + chart.unit + ")" : "";
    const cites = chart.cited.map((c) => (chip ? chip(c.evidenceId) : h("span", { class: "cite-chip static" }, c.evidenceId)));
    return h(
      "figure",
      { class: "chart-card", dataset: { invocationId: chart.invocationId, metric: chart.metric } },
      h("figcaption", {}, h("strong", {}, chart.metric), unit, " · ", chart.service, h("span", { class: "chart-cites" }, cites)),
      chartSvg(chart, lang),
      legend(chart, lang)
    );
  }

  /** A cited log_patterns output as a table: template, before, after, new. */
  function logTable(table, lang, chip) {
    return h(
      "figure",
      { class: "log-table", dataset: { invocationId: table.invocationId } },
      h(
        "figcaption",
        {},
        h("strong", {}, t("log_patterns", lang)),
        " · ",
        table.service || "",
        table.level ? " · " + table.level : "",
        table.onset ? [" · " + t("onset", lang) + " ", timeEl(table.onset)] : ""
      ),
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "grid log-patterns" },
          h("thead", {}, h("tr", {}, [t("template", lang), t("before", lang), t("after", lang), t("new", lang), ""].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            table.patterns.map((p) =>
              h(
                "tr",
                { class: p.evidenceIds.length ? "cited" : null, dataset: { index: String(p.index) }, title: p.example || null },
                h("td", { class: "template" }, h("code", {}, p.template || "")),
                h("td", { class: "num" }, String(p.countBefore ?? "–")),
                h("td", { class: "num" }, String(p.countAfter ?? "–")),
                h("td", {}, p.new ? h("span", { class: "badge new" }, t("yes", lang)) : t("no", lang)),
                h("td", { class: "chart-cites" }, p.evidenceIds.map((id) => (chip ? chip(id) : id)))
              )
            )
          )
        )
      )
    );
  }

  /** The question's resolved window, in UTC, with the words it was read from. */
  function windowLine(win, lang) {
    if (!win) return null;
    if (!win.found) return h("p", { class: "question-window none" }, h("span", { class: "label" }, t("window", lang) + ": "), t("window_none", lang));
    return h(
      "p",
      { class: "question-window" },
      h("span", { class: "label" }, t("window", lang) + ": "),
      win.start ? timeEl(win.start) : "…",
      " – ",
      timeEl(win.end),
      win.text ? h("span", { class: "quiet" }, " (“" + win.text + "”, " + t("read_in", lang) + " " + win.zone + ")") : ""
    );
  }

  // One hover card for every chip on the page.
  let card = null;

  function hoverCard() {
    if (card) return card;
    card = h("div", { class: "cite-card", role: "tooltip", id: "cite-card", hidden: true });
    document.body.append(card);
    return card;
  }

  function sourceLine(item, lang) {
    const role = t(item.role === "reference" ? "reference" : "telemetry", lang);
    return [item.tool, item.service, item.signal].filter(Boolean).join(" · ") + " (" + role + ")";
  }

  function showCard(chipEl, item, lang) {
    const box = hoverCard();
    box.replaceChildren(
      h("p", { class: "card-source" }, h("span", { class: "label" }, t("source", lang) + ": "), sourceLine(item, lang)),
      item.timestamp ? h("p", { class: "card-time" }, h("span", { class: "label" }, t("at", lang) + ": "), formatTime(item.timestamp), h("span", { class: "quiet" }, " · " + localTime(item.timestamp))) : null,
      h("blockquote", { class: "card-excerpt" }, item.excerpt),
      h("p", { class: "hint" }, t("open_invocation", lang))
    );
    box.hidden = false;
    const rect = chipEl.getBoundingClientRect();
    const width = Math.min(420, window.innerWidth - 16);
    box.style.maxWidth = width + "px";
    const left = Math.max(8, Math.min(rect.left + window.scrollX, window.scrollX + window.innerWidth - width - 8));
    box.style.left = left + "px";
    box.style.top = rect.bottom + window.scrollY + 6 + "px";
    chipEl.setAttribute("aria-describedby", "cite-card");
  }

  function hideCard(chipEl) {
    if (card) card.hidden = true;
    if (chipEl) chipEl.removeAttribute("aria-describedby");
  }

  /** A compact citation chip: the excerpt and its source on hover, the trace on click. */
  function chip(id, item, href, lang) {
    const el = h("a", { class: "cite-chip", href: href, dataset: { evidence: id } }, id);
    if (item) {
      el.dataset.invocationId = item.invocationId;
      el.addEventListener("mouseenter", () => showCard(el, item, lang));
      el.addEventListener("focus", () => showCard(el, item, lang));
      el.addEventListener("mouseleave", () => hideCard(el));
      el.addEventListener("blur", () => hideCard(el));
    } else {
      el.title = t("open_invocation", lang);
    }
    return el;
  }

  /** A chip factory over one run's evidence: ``make(id)``. */
  function chips(data, href, lang) {
    const items = new Map((data ? data.evidence : []).map((e) => [e.evidenceId, e]));
    const make = (id) => chip(id, items.get(id), href(id), lang);
    make.items = items;
    return make;
  }

  /** Replace the answer's [E1] citation links with chips; returns the chips. */
  function chipCitations(root, make) {
    for (const link of Array.from(root.querySelectorAll("a.cite[data-evidence]"))) link.replaceWith(make(link.dataset.evidence));
  }

  /**
   * The answer's evidence list (one "**E1** (role; tool inv-... $.path): excerpt" line per
   * item, rendered by the product) as readable lines: a chip, the source, the excerpt. Only
   * lines whose id and invocation match a verified item are rewritten.
   */
  function readableEvidenceList(root, make, lang) {
    // An AIOps report scopes ids by alert ([A1-E1]): an item is found by its id without the
    // scope and the invocation its line names.
    const bare = (id) => id.replace(/^[A-Za-z0-9]+-(?=E\d+$)/, "");
    const bySource = new Map();
    for (const item of make.items.values()) bySource.set(bare(item.evidenceId) + " " + item.invocationId, item);
    for (const strong of Array.from(root.querySelectorAll("li > strong:first-child"))) {
      const li = strong.parentElement;
      const named = (li.textContent.match(/\binv-[0-9a-f]+\b/) || [""])[0];
      const item = bySource.get(bare(strong.textContent.trim()) + " " + named);
      if (!item) {
        stripIds(li); // not among the verified items drawn here: keep the line, drop its ids
        continue;
      }
      li.classList.add("evidence-line");
      li.replaceChildren();
      Diag.append(li, [make(item.evidenceId), " ", h("span", { class: "evidence-source" }, sourceLine(item, lang)), item.timestamp ? [" · ", timeEl(item.timestamp)] : "", ": ", h("q", { class: "evidence-excerpt" }, item.excerpt)]);
    }
    // The full list folds under its heading: every citation chip already shows its excerpt.
    for (const list of new Set(Array.from(root.querySelectorAll("li.evidence-line"), (li) => li.parentElement))) {
      const heading = list.previousElementSibling;
      if (!heading || !/^H[2-4]$/.test(heading.tagName) || list.closest("details")) continue;
      const box = h("details", { class: "evidence-list" }, h("summary", {}, heading.textContent + " (" + list.children.length + ")"));
      heading.replaceWith(box);
      box.append(list);
    }
  }

  /** Remove invocation ids and JSON paths from a line's text (they belong in the trace). */
  function stripIds(el) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      node.nodeValue = node.nodeValue.replace(/ ?\binv-[0-9a-f]+\b(?: \$\S*?(?=\)|$))?/g, "");
    }
  }

  /** The panel under an answer: window, charts of the cited series, log-pattern tables. */
  function panel(data, lang, make) {
    const parts = [];
    const win = windowLine(data.window, lang);
    if (win) parts.push(win);
    if (data.charts.length) parts.push(h("div", { class: "charts" }, data.charts.map((c) => chartCard(c, lang, make))));
    for (const table of data.logTables) parts.push(logTable(table, lang, make));
    if (!parts.length) return null;
    return h("section", { class: "evidence-panel", "aria-label": t("evidence_panel", lang) }, parts);
  }

  window.Evidence = { chartCard, chartSvg, chipCitations, chips, load, logTable, panel, readableEvidenceList, windowLine };
})();
