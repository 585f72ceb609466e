"""The answer's own words, in English and Chinese (the question's language)."""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "question": "Question",
        "conclusions": "Conclusions",
        "none": "Not enough evidence: the verified evidence does not support a conclusion.",
        "outside": "Not enough evidence: the window asked about lies outside the data.",
        "evidence": "Evidence",
        "recommendations": "Recommended next steps",
        "unsourced": "general advice, no cited evidence",
        "limitations": "Limitations",
        "failed": "Could not be read",
        "telemetry": "telemetry",
        "reference": "reference",
        "upload": "uploaded document",
        "footer": "Every conclusion above cites evidence verified against this run's tool "
        "outputs; the text is rendered by the product, not written by the model.",
        "incomplete": "Diagnosis incomplete: not enough verified evidence to name a cause.",
        "incomplete_reads": "Diagnosis incomplete: part of the telemetry could not be read, "
        "and what was read is not enough verified evidence to name a cause.",
        "because": "A verified diagnosis could not be completed because {why}.",
        "no_claim": "This answer makes no claim that is not backed by verified evidence.",
        "did_verify": "Evidence that did verify",
        "nothing": "No evidence was verified in this run.",
        "next": "Next steps",
        "window": "Window",
        "window_range": "{start} to {end}",
        "window_until": "until {end}",
        "window_from": ' (read from "{text}", in {zone})',
        "window_none": "no time given: looked over the recent range up to {end}",
        "unknown": "Unknown service",
        "unknown_line": "{name} is not a known service: this system has no telemetry for it.",
        "suggest": " Did you mean {names}?",
        "or": " or ",
        "comma": ", ",
    },
    "zh": {
        "question": "问题",
        "conclusions": "结论",
        "none": "证据不足：已验证的证据不足以支持任何结论。",
        "outside": "证据不足：所问的时间窗口不在数据范围之内。",
        "evidence": "证据",
        "recommendations": "建议的后续步骤",
        "unsourced": "一般性建议，未引用证据",
        "limitations": "局限",
        "failed": "未能读取",
        "telemetry": "遥测",
        "reference": "参考",
        "upload": "上传的文档",
        "footer": "以上每条结论都引用了已对照本次运行的工具输出验证过的证据；"
        "文本由产品渲染，而非模型撰写。",
        "incomplete": "诊断未完成：经过验证的证据不足以指出原因。",
        "incomplete_reads": "诊断未完成：部分遥测数据无法读取，"
        "已读取的经过验证的证据不足以指出原因。",
        "because": "无法完成经过验证的诊断，原因：{why}。",
        "no_claim": "本回答不包含任何未经验证证据支持的论断。",
        "did_verify": "已通过验证的证据",
        "nothing": "本次运行没有通过验证的证据。",
        "next": "后续步骤",
        "window": "时间范围",
        "window_range": "{start} 至 {end}",
        "window_until": "截至 {end}",
        "window_from": "（依据“{text}”，按 {zone} 解读）",
        "window_none": "问题未给出时间：查看了截至 {end} 的近期范围",
        "unknown": "未知服务",
        "unknown_line": "{name} 不是已知的服务：本系统没有它的遥测数据。",
        "suggest": "您是否指的是 {names}？",
        "or": " 或 ",
        "comma": "、",
    },
}

NEXT_STEPS: dict[str, tuple[str, ...]] = {
    "en": (
        "Open this run's trace to see which step failed and the tool outputs recorded so far.",
        "Check the affected service's error logs and latency/error-rate dashboards for the "
        "time window in the question.",
        "Retry the question; if the model or a telemetry source was unavailable, it may "
        "succeed now.",
    ),
    "zh": (
        "打开本次运行的追踪页面，查看失败的步骤以及已记录的工具输出。",
        "检查受影响服务在问题时间窗口内的错误日志和延迟/错误率仪表盘。",
        "重试该问题；如果模型或遥测数据源当时不可用，现在可能会成功。",
    ),
}
