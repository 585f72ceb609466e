// The pages' own labels in English and Chinese. The page follows the browser's language (zh
// when the first preferred language is Chinese, else en); a turn that answers a Chinese
// question uses zh labels whatever the browser says. Static text of the templates carries
// data-i18n="key" (text), data-i18n-placeholder / data-i18n-title (attributes).
"use strict";

(function () {
  const LABELS = {
    en: {
      nav_chat: "Chat",
      nav_runs: "Runs",
      nav_cases: "Cases",
      nav_alerts: "Alerts",
      nav_api: "API",
      nav_settings: "Settings",
      skip: "Skip to content",
      sessions: "Sessions",
      new_session: "New session",
      sessions_hint: "Sessions started in this browser.",
      sessions_recent: "Recent in this browser",
      aiops: "Investigate firing alerts (AIOps)",
      clear_history: "Clear history",
      examples: "Ask why a service misbehaves, for example:",
      empty_hint: "Every statement of a diagnosis cites evidence, verified against an exact excerpt of a tool output of the same run; hover a citation to read it.",
      question: "Question",
      mode: "Mode",
      ask: "Ask",
      you: "You",
      open_trace: "Open trace",
      useful: "Useful",
      not_useful: "Not useful",
      was_useful: "Was this answer useful?",
      progress: "Progress: ",
      node_executions: " node executions",
      running: "running",
      window: "Time window",
      window_none: "No time given: onsets were looked for over the recent range",
      read_in: "read in",
      evidence_panel: "Evidence",
      charts_none: "No metric series was cited.",
      baseline: "baseline",
      incident: "incident",
      onset: "onset",
      median: "median",
      peak: "peak",
      change: "change",
      cited_point: "cited point",
      windows_analysed: "windows from detect_anomalies of the same run",
      windows_computed: "windows: the change point of these recorded points",
      windows_none: "no significant change in these points",
      finding_only: "from the detect_anomalies finding (no series recorded)",
      finding_points: "the series detect_anomalies analysed",
      finding_downsampled: "{n} of its points kept (LTTB)",
      log_patterns: "Log patterns",
      template: "Template",
      before: "Before",
      after: "After",
      new: "New",
      yes: "yes",
      no: "no",
      source: "Source",
      at: "at",
      open_invocation: "Click to open the trace at this tool call",
      telemetry: "telemetry",
      reference: "reference",
      local_time: "Local time",
      charts: "Charts of the cited evidence",
      cited: "cited",
      trace: "Trace",
      run_summary: "Run summary",
      route_diagnosis: "Route through the diagnosis graph",
      route_aiops: "Route through the AIOps supervisor graph",
      claims_title: "Claims and their evidence",
      steps_title: "Timeline of model steps",
      invocations_title: "Tool invocations",
      evaluation_title: "Self evaluation",
      orchestration_title: "Orchestration trace",
      toc_summary: "Summary",
      toc_route: "Route",
      toc_charts: "Charts",
      toc_claims: "Claims",
      toc_steps: "Steps",
      toc_invocations: "Tool invocations",
      toc_evaluation: "Self evaluation",
      toc_orchestration: "Orchestration",
      f_status: "Status",
      f_flow: "Flow",
      f_degraded: "Degraded",
      f_duration: "Duration",
      f_started: "Started",
      f_finished: "Finished",
      f_steps: "Model steps",
      f_tools: "Tool calls",
      f_feedback: "Feedback",
      f_session: "Session",
      answer: "Answer",
      no_charts: "No metric series or log patterns were cited in this run.",
      loading_session: "Loading the session…",
      investigating: "Investigating the firing alerts…",
      diagnosing: "Diagnosing…",
      done: "Done.",
      run_failed: "The run failed; its partial trace is recorded.",
      interrupted: "Stream interrupted.",
    },
    zh: {
      nav_chat: "对话",
      nav_runs: "运行记录",
      nav_cases: "案例库",
      nav_alerts: "告警",
      nav_api: "API",
      nav_settings: "设置",
      skip: "跳到正文",
      sessions: "会话",
      new_session: "新会话",
      sessions_hint: "在此浏览器中开始的会话。",
      sessions_recent: "此浏览器中的最近会话",
      aiops: "调查正在触发的告警 (AIOps)",
      clear_history: "清除历史",
      examples: "询问某个服务为何异常，例如：",
      empty_hint: "诊断中的每一条陈述都引用了证据，并已对照同一次运行中工具输出的原文摘录验证；将鼠标悬停在引用上即可阅读。",
      question: "问题",
      mode: "模式",
      ask: "提问",
      you: "你",
      open_trace: "打开追踪",
      useful: "有用",
      not_useful: "没用",
      was_useful: "这个回答有用吗？",
      progress: "进度：",
      node_executions: " 次节点执行",
      running: "运行中",
      window: "时间窗口",
      window_none: "未指定时间：已在最近的时间范围内查找异常起点",
      read_in: "时区",
      evidence_panel: "证据",
      charts_none: "没有引用指标序列。",
      baseline: "基线",
      incident: "异常期",
      onset: "起点",
      median: "中位数",
      peak: "峰值",
      change: "变化",
      cited_point: "引用的数据点",
      windows_analysed: "窗口来自本次运行的 detect_anomalies",
      windows_computed: "窗口：这些已记录数据点的变化点",
      windows_none: "这些数据点没有显著变化",
      finding_only: "来自 detect_anomalies 的发现（未记录序列）",
      finding_points: "detect_anomalies 分析的序列",
      finding_downsampled: "保留其中 {n} 个数据点（LTTB）",
      log_patterns: "日志模式",
      template: "模板",
      before: "之前",
      after: "之后",
      new: "新出现",
      yes: "是",
      no: "否",
      source: "来源",
      at: "时间",
      open_invocation: "点击在追踪页面中打开这次工具调用",
      telemetry: "遥测",
      reference: "参考",
      local_time: "本地时间",
      charts: "引用证据的图表",
      cited: "已引用",
      trace: "追踪",
      run_summary: "运行概要",
      route_diagnosis: "诊断图中的路径",
      route_aiops: "AIOps 监督图中的路径",
      claims_title: "论断及其证据",
      steps_title: "模型步骤时间线",
      invocations_title: "工具调用",
      evaluation_title: "自我评估",
      orchestration_title: "编排追踪",
      toc_summary: "概要",
      toc_route: "路径",
      toc_charts: "图表",
      toc_claims: "论断",
      toc_steps: "步骤",
      toc_invocations: "工具调用",
      toc_evaluation: "自我评估",
      toc_orchestration: "编排",
      f_status: "状态",
      f_flow: "流程",
      f_degraded: "降级",
      f_duration: "耗时",
      f_started: "开始",
      f_finished: "结束",
      f_steps: "模型步骤",
      f_tools: "工具调用",
      f_feedback: "反馈",
      f_session: "会话",
      answer: "回答",
      no_charts: "本次运行没有引用指标序列或日志模式。",
      loading_session: "正在加载会话…",
      investigating: "正在调查触发中的告警…",
      diagnosing: "正在诊断…",
      done: "完成。",
      run_failed: "运行失败；其部分追踪已记录。",
      interrupted: "流已中断。",
    },
  };

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

  function t(key, lang) {
    const table = LABELS[lang || page] || LABELS.en;
    return key in table ? table[key] : LABELS.en[key] || key;
  }

  /** Translate the static text marked with data-i18n* under ``root``. */
  function apply(root, lang) {
    const scope = root || document;
    for (const el of scope.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n, lang);
    for (const el of scope.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder, lang);
    for (const el of scope.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle, lang);
  }

  document.documentElement.lang = page === "zh" ? "zh-CN" : "en";
  if (page !== "en") {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => apply(document, page));
    else apply(document, page);
  }

  window.I18n = { apply, languageFor, page, t };
})();
