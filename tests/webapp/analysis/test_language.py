"""The question's language: Chinese when it carries Chinese, even with Latin names in it."""

from __future__ import annotations

import pytest

from diagnosis_graph.workflow.render import language_of
from webapp.analysis.language import asks_dependency, refers_back


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
    assert language_of(question) == language


@pytest.mark.parametrize(
    ("text", "back", "dependency"),
    [
        ("why is it slow?", True, False),
        ("and what about its database?", True, True),
        ("那它的数据库呢?", True, True),
        ("它为什么报错?", True, False),
        ("is the same service still failing?", True, False),
        ("why is billing-api slow?", False, False),
        ("what is a connection pool?", False, False),
    ],
)
def test_follow_ups_are_told_by_how_they_refer_back(
    text: str, back: bool, dependency: bool
) -> None:
    assert refers_back(text) is back
    assert asks_dependency(text) is dependency


def test_a_stated_failure_is_told_from_a_question_whether_it_fails() -> None:
    from webapp.analysis.language import states_failure

    for stated in (
        "Why is playback-api failing since 11:15?",
        "couriers can't log in since about 9:40",
        "checkout is broken",
        "Why is pay-api slow in the last 30 minutes?",
        "支付服务挂了",
    ):
        assert states_failure(stated), stated
    for asked in (
        "Is pay-api slow?",
        "progress-svc has been logging warnings all morning - is it broken?",
        "Is user-service healthy since 10:30?",
        "支付服务挂了吗?",
    ):
        assert not states_failure(asked), asked
