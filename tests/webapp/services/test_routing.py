"""``mode=auto`` routing, for English and Chinese questions alike."""

from __future__ import annotations

import pytest

from webapp.services.routing import COMPLEX, SIMPLE, FlowRouter

SERVICES = ["order-service", "payment-service", "redis-cache", "mysql-primary"]
ALIASES = {"order-service": ["订单服务"], "redis-cache": ["缓存"]}


@pytest.fixture
def router() -> FlowRouter:
    return FlowRouter(lambda: SERVICES, lambda: ["HighLatencyPayments"], lambda: ALIASES)


@pytest.mark.parametrize(
    ("question", "flow"),
    [
        ("Why is payment-service slow since 10:00?", COMPLEX),
        ("payment-service", COMPLEX),
        ("paymnt-service", COMPLEX),
        ("payment checkout is sluggish", COMPLEX),
        ("What alerts are firing right now?", COMPLEX),
        ("is HighLatencyPayments serious", COMPLEX),
        ("hello", SIMPLE),
        ("What does the runbook say about connection pools?", SIMPLE),
        ("how do I rotate a certificate?", SIMPLE),
        # Chinese
        ("订单服务报错了,帮我看看", COMPLEX),
        ("缓存命中率下降的原因是什么?", COMPLEX),
        ("payment-service 为什么从10点开始变慢?", COMPLEX),
        ("支付接口延迟很高", COMPLEX),
        ("有哪些告警在触发?", COMPLEX),
        ("网关超时了", COMPLEX),
        ("订单服务", COMPLEX),
        ("你好", SIMPLE),
        ("运行手册里怎么处理证书过期?", SIMPLE),
        ("什么是连接池?", SIMPLE),
        # A service's state, or what to do about it now: its telemetry answers.
        ("What is eating the CPU on payment-service?", COMPLEX),
        ("what is eating its CPU?", COMPLEX),
        ("Should we roll it back?", COMPLEX),
        ("is it a memory leak?", COMPLEX),
        ("Is order-service ok since 9:25?", COMPLEX),
        # No service named: what broke, a business function in plain words.
        ("What broke around 8:20?", COMPLEX),
        ("couriers can't log in since about 9:40", COMPLEX),
        ("Continue-watching positions stopped saving since about 1:12pm", COMPLEX),
        ("9点25分左右出了什么问题?", COMPLEX),
        ("骑手登录不了,从10点50分开始的,帮忙看看", COMPLEX),
        ("北京时间18点45分开始包裹轨迹不更新了", COMPLEX),
        # ... but a definition or a procedure is still a knowledge question.
        ("what is a memory leak?", SIMPLE),
        ("how do I roll back a deploy?", SIMPLE),
        ("what does the runbook say about high CPU?", SIMPLE),
        # Follow-ups: about the previous turn's service, so a diagnosis like it.
        ("and what about its database?", COMPLEX),
        ("那它的数据库呢?", COMPLEX),
        ("what is causing it?", COMPLEX),
        ("why is it slow?", COMPLEX),
        ("它为什么报错?", COMPLEX),
        ("any alerts?", COMPLEX),
        ("路径规划服务正常吗?", COMPLEX),
        ("what causes connection pool exhaustion in general?", SIMPLE),
    ],
)
def test_questions_are_routed_by_what_they_ask(
    router: FlowRouter, question: str, flow: str
) -> None:
    assert router.route(question) == flow


def test_an_explicit_mode_wins(router: FlowRouter) -> None:
    assert router.route("你好", "complex") == COMPLEX
    assert router.route("为什么订单服务报错", "simple") == SIMPLE


def test_aliases_are_optional() -> None:
    plain = FlowRouter(lambda: SERVICES)
    assert plain.route("订单服务") == SIMPLE
    assert plain.route("order-service") == COMPLEX
