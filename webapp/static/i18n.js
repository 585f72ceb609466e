// The pages' labels (labels.js) in the page's language. The page follows the browser's language (zh
// when the first preferred language is Chinese, else en); a turn that answers a Chinese
// question uses zh labels whatever the browser says. Static text of the templates carries
// data-i18n="key" (text), data-i18n-placeholder / data-i18n-title / data-i18n-label (attributes:
// aria-label); script-built text calls t(key, lang, vars).
"use strict";

(function () {
  const LABELS = window.I18nLabels;

  const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/;

  /** en or zh, from the browser's preferred languages. */
  function browserLanguage() {
    const first = (navigator.languages && navigator.languages[0]) || navigator.language || "en";
    return /^zh\b/i.test(first) ? "zh" : "en";
  }

  const page = browserLanguage();

  /** The labels of an answer to ``question``: zh for a Chinese question, else the page's. */
  function languageFor(question) {
    return CJK.test(String(question || "")) ? "zh" : page;
  }

  /** The label ``key`` in ``lang`` (default: the page's), its {name} slots filled from ``vars``. */
  function t(key, lang, vars) {
    const table = LABELS[lang || page] || LABELS.en;
    const text = key in table ? table[key] : LABELS.en[key] || key;
    return vars ? text.replace(/\{(\w+)\}/g, (slot, name) => (name in vars ? String(vars[name]) : slot)) : text;
  }

  /** A value's name in ``lang`` (label ``prefix + value``), or the value itself when unnamed:
   * named("state_", "success") is "成功" on a Chinese page. */
  function named(prefix, value, lang) {
    const key = prefix + value;
    const text = t(key, lang);
    return text === key ? String(value) : text;
  }

  /** Translate the static text marked with data-i18n* under ``root``. */
  function apply(root, lang) {
    const scope = root || document;
    for (const el of scope.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n, lang);
    for (const el of scope.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder, lang);
    for (const el of scope.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle, lang);
    for (const el of scope.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel, lang));
  }

  document.documentElement.lang = page === "zh" ? "zh-CN" : "en";
  if (page !== "en") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => apply(document, page));
    else apply(document, page);
  }

  window.I18n = { apply, languageFor, named, page, t };
})();
