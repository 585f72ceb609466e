// A JSON viewer that can show exactly what the gatekeeper verified: documents are parsed without
// losing number spellings (Python writes 50.0, JSON.parse would give 50) or key order, rendered
// as an indented tree whose every value knows its raw_path, and an evidence excerpt is
// highlighted inside the value at its raw_path, matched the way the gatekeeper matches it
// (strings as they are, anything else as compact JSON, runs of whitespace collapsed).
"use strict";

(function () {
  // Tree nodes: {t: "o", e: [[key, node], ...]} | {t: "a", items: [node]} | {t: "s", v: string}
  // | {t: "n", raw: "50.0"} | {t: "b", v: true} | {t: "z"}.
  const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  /** Parse JSON text into the tree above; throws SyntaxError like JSON.parse. */
  function parse(text) {
    let i = 0;
    const fail = (what) => {
      throw new SyntaxError("JSON: expected " + what + " at " + i);
    };
    const space = () => {
      while (i < text.length && " \t\n\r".includes(text[i])) i++;
    };
    const token = (re, what) => {
      re.lastIndex = i;
      const match = re.exec(text);
      if (!match) fail(what);
      i = re.lastIndex;
      return match[0];
    };
    const literal = (word, node) => {
      if (text.startsWith(word, i)) {
        i += word.length;
        return node;
      }
      return fail("a value");
    };
    const value = () => {
      space();
      const c = text[i];
      if (c === "{") {
        i++;
        const entries = [];
        space();
        if (text[i] === "}") {
          i++;
          return { t: "o", e: entries };
        }
        for (;;) {
          space();
          const key = JSON.parse(token(STRING, "a key"));
          space();
          if (text[i++] !== ":") fail("':'");
          entries.push([key, value()]);
          space();
          const next = text[i++];
          if (next === "}") return { t: "o", e: entries };
          if (next !== ",") fail("',' or '}'");
        }
      }
      if (c === "[") {
        i++;
        const items = [];
        space();
        if (text[i] === "]") {
          i++;
          return { t: "a", items: items };
        }
        for (;;) {
          items.push(value());
          space();
          const next = text[i++];
          if (next === "]") return { t: "a", items: items };
          if (next !== ",") fail("',' or ']'");
        }
      }
      if (c === '"') return { t: "s", v: JSON.parse(token(STRING, "a string")) };
      if (c === "t") return literal("true", { t: "b", v: true });
      if (c === "f") return literal("false", { t: "b", v: false });
      if (c === "n") return literal("null", { t: "z" });
      return { t: "n", raw: token(NUMBER, "a value") };
    };
    const root = value();
    space();
    if (i !== text.length) fail("the end");
    return root;
  }

  /** The node for a plain JS value (for documents that did not come from text). */
  function fromValue(v) {
    if (v === null || v === undefined) return { t: "z" };
    if (Array.isArray(v)) return { t: "a", items: v.map(fromValue) };
    if (typeof v === "object") return { t: "o", e: Object.entries(v).map(([k, x]) => [k, fromValue(x)]) };
    if (typeof v === "string") return { t: "s", v: v };
    if (typeof v === "number") return { t: "n", raw: String(v) };
    return { t: "b", v: Boolean(v) };
  }

  /** Follow ``path`` (list of keys and indexes) from ``node``; undefined when absent. */
  function at(node, path) {
    let here = node;
    for (const step of path) {
      if (!here) return undefined;
      if (typeof step === "number") here = here.t === "a" ? here.items[step] : undefined;
      else here = here.t === "o" ? (here.e.find(([k]) => k === step) || [])[1] : undefined;
    }
    return here;
  }

  /** Compact JSON like Python's json.dumps(separators=(",", ":"), ensure_ascii=False). */
  function compact(node) {
    switch (node.t) {
      case "o":
        return "{" + node.e.map(([k, v]) => JSON.stringify(k) + ":" + compact(v)).join(",") + "}";
      case "a":
        return "[" + node.items.map(compact).join(",") + "]";
      case "s":
        return JSON.stringify(node.v);
      case "n":
        return node.raw;
      case "b":
        return node.v ? "true" : "false";
      default:
        return "null";
    }
  }

  /** The text an excerpt is matched against (gatekeeper.render). */
  function matchText(node) {
    return node.t === "s" ? node.v : compact(node);
  }

  const NAME = /^\.([A-Za-z_][A-Za-z0-9_]*)/;
  const INDEX = /^\[(\d+)\]/;
  const KEY = /^\[("(?:[^"\\]|\\.)*")\]/;

  /** ``$.a["b"][0]`` -> ["a", "b", 0]; null when the path does not follow the grammar. */
  function parsePath(path) {
    if (typeof path !== "string" || !path.startsWith("$")) return null;
    const steps = [];
    let rest = path.slice(1);
    while (rest) {
      let match;
      if ((match = NAME.exec(rest))) steps.push(match[1]);
      else if ((match = INDEX.exec(rest))) steps.push(Number(match[1]));
      else if ((match = KEY.exec(rest))) {
        try {
          steps.push(JSON.parse(match[1]));
        } catch (_) {
          return null;
        }
      } else return null;
      rest = rest.slice(match[0].length);
    }
    return steps;
  }

  function displayPath(steps) {
    return (
      "$" +
      steps
        .map((s) => (typeof s === "number" ? "[" + s + "]" : /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? "." + s : "[" + JSON.stringify(s) + "]"))
        .join("")
    );
  }

  const INLINE_CHARS = 72;

  function span(cls, text) {
    const el = document.createElement("span");
    el.className = cls;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function isScalar(node) {
    return node.t !== "o" && node.t !== "a";
  }

  /**
   * Render ``root`` into a <pre> as indented JSON; every value is a span with data-path, kept in
   * the returned view's ``byPath`` map (key: JSON of the path steps) for highlighting.
   */
  function render(root) {
    const pre = document.createElement("pre");
    pre.className = "json";
    const byPath = new Map();
    const build = (node, steps, indent) => {
      const el = span("j-value j-" + node.t);
      el.dataset.path = displayPath(steps);
      byPath.set(JSON.stringify(steps), { el: el, node: node });
      if (node.t === "s") {
        el.append(span("j-quote", '"'), span("j-text", node.v), span("j-quote", '"'));
        return el;
      }
      if (isScalar(node)) {
        el.textContent = compact(node);
        return el;
      }
      const children = node.t === "o" ? node.e : node.items.map((v, i) => [i, v]);
      const [open, close] = node.t === "o" ? ["{", "}"] : ["[", "]"];
      if (!children.length) {
        el.textContent = open + close;
        return el;
      }
      const inline = node.t === "a" && node.items.every(isScalar) && compact(node).length <= INLINE_CHARS;
      el.append(open);
      children.forEach(([key, child], index) => {
        if (!inline) el.append("\n" + "  ".repeat(indent + 1));
        if (node.t === "o") el.append(span("j-key", JSON.stringify(key)), ": ");
        el.append(build(child, steps.concat([key]), indent + 1));
        if (index < children.length - 1) el.append(",");
      });
      if (!inline) el.append("\n" + "  ".repeat(indent));
      el.append(close);
      return el;
    };
    pre.append(build(root, [], 0));
    return { pre: pre, byPath: byPath, root: root };
  }

  /**
   * ``[start, end)`` of ``excerpt`` in ``text``: an exact match, else one with every run of
   * whitespace collapsed on both sides (what the gatekeeper accepts); null when absent.
   */
  function locate(text, excerpt) {
    const exact = text.indexOf(excerpt);
    if (exact >= 0 && excerpt) return [exact, exact + excerpt.length];
    const wanted = excerpt.split(/\s+/).filter(Boolean).join(" ");
    if (!wanted) return null;
    let collapsed = "";
    const origin = [];
    let pendingSpace = false;
    for (let i = 0; i < text.length; i++) {
      if (/\s/.test(text[i])) {
        pendingSpace = collapsed.length > 0;
        continue;
      }
      if (pendingSpace) {
        collapsed += " ";
        origin.push(i - 1);
        pendingSpace = false;
      }
      collapsed += text[i];
      origin.push(i);
    }
    const found = collapsed.indexOf(wanted);
    if (found < 0) return null;
    return [origin[found], origin[found + wanted.length - 1] + 1];
  }

  /**
   * Highlight ``excerpt`` inside the value at ``rawPath`` of a rendered view; returns
   * {mark, path} or {error}. Non-string values are shown as the compact JSON that was matched.
   */
  function highlight(view, rawPath, excerpt, attrs) {
    const steps = parsePath(rawPath);
    if (!steps) return { error: "the raw_path " + rawPath + " is not a valid path" };
    const entry = view.byPath.get(JSON.stringify(steps));
    if (!entry) return { error: "nothing at " + rawPath + " in this output" };
    const { el, node } = entry;
    if (el.querySelector("mark")) {
      const existing = el.querySelector("mark");
      return { mark: existing, path: displayPath(steps), shared: true };
    }
    const target = node.t === "s" ? el.querySelector(".j-text") : el;
    const text = matchText(node);
    const range = locate(text, String(excerpt || ""));
    if (!range) return { error: "the excerpt does not occur at " + rawPath };
    if (!target.dataset.highlighted) {
      target.dataset.highlighted = "true";
      target._original = Array.from(target.childNodes);
    }
    const mark = document.createElement("mark");
    mark.className = "excerpt";
    for (const [k, v] of Object.entries(attrs || {})) mark.dataset[k] = v;
    mark.textContent = text.slice(range[0], range[1]);
    target.replaceChildren(text.slice(0, range[0]), mark, text.slice(range[1]));
    if (node.t !== "s") target.classList.add("j-compact");
    return { mark: mark, path: displayPath(steps) };
  }

  /** Undo every highlight of a view (restores the indented rendering). */
  function clearHighlights(view) {
    for (const target of view.pre.querySelectorAll("[data-highlighted]")) {
      target.replaceChildren(...target._original);
      delete target.dataset.highlighted;
      target.classList.remove("j-compact");
    }
  }

  window.JsonView = { at, clearHighlights, compact, fromValue, highlight, locate, parse, parsePath, render };
})();
