"""Lenient JSON parsing of model output."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.generate.jsonrepair import JSONRepairError, extract_first_json, parse_json_lenient


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('好的，结果如下：{"route": "detail"} 希望有帮助', {"route": "detail"}),
        ('{"a": [1, 2,], "b": 2,}', {"a": [1, 2], "b": 2}),
        ("{'a': 'x', 'b': \"y\"}", {"a": "x", "b": "y"}),
        ("{'ok': True, 'v': None}", {"ok": True, "v": None}),
        ('[{"n": "宫保鸡丁"}]', [{"n": "宫保鸡丁"}]),
        ('{\n  "a": 1, // comment\n  "b": 2\n}', {"a": 1, "b": 2}),
        ('{"text": "包含 } 和 { 的字符串"} tail', {"text": "包含 } 和 { 的字符串"}),
        ("{'s': 'it\\'s'}", {"s": "it's"}),
    ],
)
def test_repairs(text: str, expected: object) -> None:
    assert parse_json_lenient(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "没有 JSON", "{unclosed", "```\n```"])
def test_failures(text: str) -> None:
    with pytest.raises(JSONRepairError):
        parse_json_lenient(text)


def test_extract_first_json() -> None:
    assert extract_first_json('x {"a": {"b": 1}} y {"c": 2}') == '{"a": {"b": 1}}'
    assert extract_first_json("no json") is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_valid_json_roundtrips_even_wrapped(value: dict[str, object]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert parse_json_lenient(text) == value
    assert parse_json_lenient(f"```json\n{text}\n```") == value
