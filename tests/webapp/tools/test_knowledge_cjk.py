"""Knowledge search finds Chinese text (CJK bigrams beside the stemmed English columns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from webapp.tools.knowledge import KnowledgeIndex, build_match_query, cjk_bigrams

CACHE_ZH = """# 缓存命中率下降

当 Redis 内存达到 maxmemory 时开始驱逐键，缓存命中率下降，数据库负载随之升高。

## 处理

扩容 Redis，或把 maxmemory-policy 调整为 allkeys-lru，并预热热点数据。
"""

POOL_ZH = """# 数据库连接池耗尽

订单服务和支付服务报错 connection pool exhausted，请求排队等待连接直到超时。

## 处理

逐个重启实例，找出长时间持有连接的慢查询。
"""

POOL_EN = """# Database connection pool exhaustion

Requests fail with connection pool exhausted; threads wait for a free connection.
"""


@pytest.fixture
def index(tmp_path: Path) -> KnowledgeIndex:
    built = KnowledgeIndex(tmp_path / "knowledge.db")
    built.add_document("cache-zh.md", CACHE_ZH)
    built.add_document("pool-zh.md", POOL_ZH)
    built.add_document("pool-en.md", POOL_EN)
    return built


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("缓存命中率下降的原因是什么?", "缓存命中率下降"),
        ("驱逐", "缓存命中率下降"),
        ("连接池耗尽怎么处理", "数据库连接池耗尽"),
        ("订单服务报错了,帮我看看", "数据库连接池耗尽"),
        ("慢查询", "数据库连接池耗尽"),
        ("connection pool exhausted", "Database connection pool exhaustion"),
    ],
)
def test_chinese_and_english_queries_find_their_documents(
    index: KnowledgeIndex, query: str, title: str
) -> None:
    found = index.search(query, 3)
    assert found and found[0]["title"] == title, found


def test_results_return_the_original_text_not_the_bigrams(index: KnowledgeIndex) -> None:
    top = index.search("缓存命中率", 1)[0]
    assert "缓存命中率下降，数据库负载随之升高" in top["content"]
    assert set(top) == {"doc_id", "title", "source", "score", "content", "origin"}


def test_unrelated_chinese_finds_nothing(index: KnowledgeIndex) -> None:
    assert index.search("天气很好", 3) == []


def test_bigrams_and_the_match_query() -> None:
    assert cjk_bigrams("缓存命中率 and 下") == ["缓存", "存命", "命中", "中率", "下"]
    query = build_match_query("缓存的命中率")
    assert '"缓存"' in query and '"命中"' in query and "的" not in query
