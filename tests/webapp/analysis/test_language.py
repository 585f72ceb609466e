"""The question's language: Chinese when it carries Chinese, even with Latin names in it."""

from __future__ import annotations

import pytest

from webapp.analysis.language import has_cjk, question_language


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("why is payment-service slow since 10:00?", "en"),
        ("payment-service 为什么从10点开始变慢?", "zh"),
        ("订单服务报错了,帮我看看", "zh"),
        ("缓存命中率下降的原因是什么?", "zh"),
        ("redis-cache maxmemory 满了", "zh"),
        ("", "en"),
        ("12:00", "en"),
    ],
)
def test_the_language_is_told_apart(question: str, language: str) -> None:
    assert question_language(question) == language


def test_cjk_is_detected() -> None:
    assert has_cjk("看看") and not has_cjk("look")
