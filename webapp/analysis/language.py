"""The language a question is written in: ``zh`` when it carries Chinese, else ``en``.

Only the two languages the product answers in are told apart. A question counts as Chinese
when at least ``CJK_SHARE`` of its letters are CJK ideographs, or it has at least
``MIN_CJK`` of them: service names, metric names and log phrases pasted into a Chinese
question are Latin, so a plain majority vote would misread most real Chinese questions.
"""

from __future__ import annotations

import re

CJK_SHARE = 0.2
MIN_CJK = 2
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def question_language(text: str) -> str:
    """``zh`` or ``en``."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    if cjk >= MIN_CJK or (cjk and cjk / (cjk + latin) >= CJK_SHARE):
        return "zh"
    return "en"


def has_cjk(text: str) -> bool:
    """True when ``text`` contains a CJK ideograph."""
    return _CJK.search(text) is not None
