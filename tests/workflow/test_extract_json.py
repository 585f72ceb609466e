"""Reading a model's JSON reply: plain JSON or exactly one fenced block, nothing else."""

from __future__ import annotations

import pytest

from diagnosis_graph.workflow.contracts import extract_json


def test_extract_json_accepts_plain_json_and_one_fenced_block() -> None:
    assert extract_json('  {"steps": [1]}\n') == {"steps": [1]}
    assert extract_json('```json\n{"steps": [1]}\n```') == {"steps": [1]}
    assert extract_json('\n```\n{"steps": []}\n```\n') == {"steps": []}
    assert extract_json('```JSON {"steps": [2]}```') == {"steps": [2]}


@pytest.mark.parametrize(
    "content",
    [
        'Here is the result:\n```json\n{"steps": [3]}\n```',
        '```json\n{"steps": [3]}\n```\nHope this helps!',
        'Sure.\n\n```\n{"steps": [3]}\n```\n\nLet me know if you need more.',
    ],
    ids=["prose-before-fence", "prose-after-fence", "prose-around-untagged-fence"],
)
def test_extract_json_accepts_exactly_one_fenced_block_with_prose_around_it(
    content: str,
) -> None:
    assert extract_json(content) == {"steps": [3]}


def test_a_json_string_holding_backticks_is_plain_json_not_a_fence() -> None:
    assert extract_json('{"quote": "run ```ls```"}') == {"quote": "run ```ls```"}


@pytest.mark.parametrize(
    "content",
    [
        'Here is the plan: {"steps": []}',
        '{"steps": []} Hope this helps!',
        '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```',
        'Option A:\n```json\n{"a": 1}\n```\nor B:\n```\n{"b": 2}\n```',
        '```json\n{"steps": []}',
        'Here:\n```json\n{"steps": []}\n```\nand a stray ```',
        '```python\n{"steps": []}\n```',
        '```json\n{"steps": [}\n```',
        "   ",
    ],
    ids=[
        "prose-before",
        "prose-after",
        "two-fences",
        "two-fences-with-prose",
        "unclosed-fence",
        "stray-fence",
        "other-language",
        "fenced-body-not-json",
        "blank",
    ],
)
def test_extract_json_rejects_anything_else(content: str) -> None:
    with pytest.raises(ValueError):
        extract_json(content)
