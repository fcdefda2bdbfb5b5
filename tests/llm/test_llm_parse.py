"""Reading model output: lenient JSON (json_repair), tool calls, streamed chunks → events."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.errors import LLMError
from zhiwen.llm.base import ContentDelta, StreamFinished, ToolCall, ToolCallCompleted
from zhiwen.llm.parse import (
    JSONRepairError,
    StreamAssembler,
    completion_chunk,
    parse_json_lenient,
    parse_tool_calls,
)


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
        ('{"route": "list", "n": 3', {"route": "list", "n": 3}),  # cut off by max_tokens
    ],
)
def test_repairs(text: str, expected: object) -> None:
    assert parse_json_lenient(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "没有 JSON", "```\n```", "这不是 JSON，抱歉。", "结果是 42"])
def test_failures(text: str) -> None:
    with pytest.raises(JSONRepairError):
        parse_json_lenient(text)


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


def test_parse_tool_calls_forms() -> None:
    legacy = {"function_call": {"name": "f", "arguments": '{"x": 1}'}}
    assert parse_tool_calls(legacy) == [ToolCall("call_0", "f", {"x": 1})]
    assert parse_tool_calls({"tool_calls": [{"function": {"name": "g", "arguments": ""}}]}) == [
        ToolCall("call_0", "g", {})
    ]
    with pytest.raises(LLMError) as info:
        parse_tool_calls({"tool_calls": [{"function": {"name": "g", "arguments": "不是参数"}}]})
    assert info.value.data["outcome"] == "bad_json"
    with pytest.raises(LLMError):
        parse_tool_calls({"tool_calls": [{"function": {"arguments": "{}"}}]})


def _delta(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_assembler_joins_fragments_by_index() -> None:
    asm = StreamAssembler()
    chunks = [
        _delta({"content": "算"}),
        _delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "calc", "arguments": '{"p"'}}]}),
        _delta({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "look", "arguments": "{}"}}]}),
        _delta({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
        _delta({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}},
    ]
    events = [e for c in chunks for e in asm.feed(c)] + asm.finish()
    assert events == [
        ContentDelta("算"),
        ToolCallCompleted(ToolCall("a", "calc", {"p": 1})),
        ToolCallCompleted(ToolCall("b", "look", {})),
        StreamFinished("tool_calls", 3, 2),
    ]
    assert not asm.empty


def test_assembler_without_finish_reason_completes_at_end() -> None:
    asm = StreamAssembler()
    asm.feed(_delta({"function_call": {"name": "f", "arguments": '{"q": '}}))
    asm.feed(_delta({"function_call": {"arguments": '"宫保"}'}}))
    assert asm.finish() == [ToolCallCompleted(ToolCall("call_0", "f", {"q": "宫保"})), StreamFinished(None)]


def test_assembler_repeated_name_is_not_doubled() -> None:
    asm = StreamAssembler()
    asm.feed(_delta({"tool_calls": [{"index": 0, "id": "x", "function": {"name": "f", "arguments": "{"}}]}))
    asm.feed(_delta({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "}"}}]}))
    assert asm.finish()[0] == ToolCallCompleted(ToolCall("x", "f", {}))


def test_empty_stream_and_completion_chunk() -> None:
    asm = StreamAssembler()
    asm.feed(_delta({"content": ""}, "stop"))
    assert asm.empty
    body = {
        "choices": [{"message": {"content": None, "tool_calls": [{"id": "t", "function": {"name": "f"}}]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }
    asm = StreamAssembler()
    events = asm.feed(completion_chunk(body)) + asm.finish()
    assert events == [ToolCallCompleted(ToolCall("t", "f", {})), StreamFinished(None, 1, 1)]
