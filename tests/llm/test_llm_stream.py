"""Streaming through the SDK: typed events, streamed tool calls, usage, pass-through parameters,
and the one deadline that bounds a dripping or stalled server."""

from __future__ import annotations

import json
import threading
import time

import anyio
import pytest
from prometheus_client import REGISTRY

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.errors import LLMError, LLMRateLimited, LLMTimeout
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.base import ContentDelta, StreamEvent, StreamFinished, ToolCallCompleted

MSG = [{"role": "user", "content": "你好"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calc_loan",
            "description": "贷款计算",
            "parameters": {"type": "object", "properties": {"principal": {"type": "number"}}},
        },
    }
]


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _call(name: str, args: dict[str, object], call_id: str) -> dict[str, object]:
    arguments = json.dumps(args, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _deadline_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("zhiwen-deadline")]


def test_stream_events_content_then_finished_with_usage(
    client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply("宫保鸡丁是川菜。", chunk_chars=3, prompt_tokens=5, completion_tokens=4))
    completion_before = metric("zhiwen_llm_tokens_total", kind="completion")
    events = list(client.stream_events(MSG, purpose="unit.stream"))
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "宫保鸡丁是川菜。"
    assert events[-1] == StreamFinished("stop", 5, 4)
    assert sum(isinstance(e, StreamFinished) for e in events) == 1
    assert fake_llm.requests[0]["stream_options"] == {"include_usage": True}
    assert metric("zhiwen_llm_tokens_total", kind="completion") == completion_before + 4


def test_server_ignoring_include_usage_is_tolerated(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("好的。", usage_in_stream=False))
    events = list(client.stream_events(MSG))
    assert events[-1] == StreamFinished("stop", None, None)


def test_server_rejecting_stream_options_is_retried_without(
    client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(
        Reply(status=400, raw_body='{"error": {"message": "unknown field stream_options"}}'), "行。"
    )
    assert "".join(client.stream(MSG)) == "行。"
    assert fake_llm.calls == 2 and "stream_options" not in fake_llm.requests[1]


def test_streamed_tool_calls_are_assembled(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    calls = [
        _call("calc_loan", {"principal": 1000000, "years": 30, "备注": "首套"}, "call_a"),
        _call("calc_loan", {"principal": 5}, "call_b"),
    ]
    fake_llm.script(Reply(content="", tool_calls=calls, chunk_chars=3))
    events = list(client.stream_events(MSG, tools=TOOLS, tool_choice="auto"))
    done = [e.call for e in events if isinstance(e, ToolCallCompleted)]
    assert [(c.id, c.name) for c in done] == [("call_a", "calc_loan"), ("call_b", "calc_loan")]
    assert done[0].arguments == {"principal": 1000000, "years": 30, "备注": "首套"}
    assert done[1].arguments == {"principal": 5}
    assert isinstance(events[-1], StreamFinished) and events[-1].finish_reason == "tool_calls"
    assert fake_llm.requests[0]["tools"] == TOOLS and fake_llm.requests[0]["tool_choice"] == "auto"


def test_streamed_text_and_sloppy_tool_arguments(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    sloppy = {
        "id": "c1",
        "type": "function",
        "function": {"name": "calc_loan", "arguments": "{'principal': 7,}"},
    }
    fake_llm.script(Reply(content="我来算一下。", tool_calls=[sloppy], chunk_chars=2))
    events = list(client.stream_events(MSG, tools=TOOLS))
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "ContentDelta" and kinds[-2:] == ["ToolCallCompleted", "StreamFinished"]
    call = next(e.call for e in events if isinstance(e, ToolCallCompleted))
    assert call.arguments == {"principal": 7}


def test_stream_text_only_view_skips_tool_events(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("一二三", chunk_chars=1))
    assert list(client.stream(MSG)) == ["一", "二", "三"]


def test_stop_temperature_max_tokens_pass_through(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    client.chat(MSG, stop=["。", "\n"])
    list(client.stream(MSG, stop="\n\n", temperature=0.0, max_tokens=9))
    list(client.stream_events(MSG, stop=["END"], temperature=1.2, max_tokens=20))
    first, second, third = fake_llm.requests
    assert first["stop"] == ["。", "\n"] and "stream" not in first
    assert (second["stop"], second["temperature"], second["max_tokens"]) == ("\n\n", 0.0, 9)
    assert (third["stop"], third["temperature"], third["max_tokens"]) == (["END"], 1.2, 20)
    client.chat(MSG)
    assert "stop" not in fake_llm.requests[-1]


def test_server_ignoring_stream_flag_returns_json(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    body = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "整段回答"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 2, "completion_tokens": 3},
    }
    fake_llm.script(Reply(raw_body=json.dumps(body, ensure_ascii=False)))
    events = list(client.stream_events(MSG))
    assert events == [ContentDelta("整段回答"), StreamFinished("stop", 2, 3)]


@pytest.mark.parametrize("streaming", [True, False])
def test_drip_server_is_bounded_by_timeout(fake_llm: FakeOpenAI, streaming: bool) -> None:
    """One byte a second never trips a per-read timeout; the call's deadline still holds."""
    fake_llm.script(Reply.fault("drip"))
    c = OpenAIChatClient(base_url=fake_llm.base_url, model="m", timeout_s=1.0, max_retries=2)
    before = metric("zhiwen_llm_calls_total", purpose="unit.drip", outcome="timeout")
    t0 = time.perf_counter()
    with pytest.raises(LLMTimeout) as info:
        if streaming:
            list(c.stream(MSG, purpose="unit.drip"))
        else:
            c.chat(MSG, purpose="unit.drip")
    elapsed = time.perf_counter() - t0
    assert info.value.code == 1001
    assert elapsed < 1.0 + 4.0, elapsed  # the deadline, not the drip
    assert fake_llm.calls == 1  # a timeout that ate the deadline is not retried
    assert metric("zhiwen_llm_calls_total", purpose="unit.drip", outcome="timeout") == before + 1
    # the abandoned worker stops reading at the next byte instead of draining the drip
    while _deadline_threads() and time.perf_counter() - t0 < 3:
        time.sleep(0.05)
    assert not _deadline_threads()
    c.close()


def test_deadline_passing_mid_stream_raises_timeout(fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("一二三四五六七八九十" * 5, chunk_chars=1, drip_s=0.002))
    c = OpenAIChatClient(base_url=fake_llm.base_url, model="m", timeout_s=1.0)
    got: list[StreamEvent] = []
    t0 = time.perf_counter()
    with pytest.raises(LLMTimeout):
        for event in c.stream_events(MSG):
            got.append(event)
    assert time.perf_counter() - t0 < 5.0
    assert got and all(isinstance(e, ContentDelta) for e in got)  # some text came, then the deadline
    c.close()


def test_consumer_closing_early_releases_the_worker(fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("慢慢说" * 30, chunk_chars=1, drip_s=0.001))
    c = OpenAIChatClient(base_url=fake_llm.base_url, model="m", timeout_s=30.0)
    deltas = c.stream(MSG)
    assert next(deltas)
    deltas.close()  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    while _deadline_threads() and time.perf_counter() - t0 < 3:
        time.sleep(0.02)
    assert not _deadline_threads()
    c.close()


def test_retry_after_is_honoured(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    limited = Reply.fault("429")
    limited.headers = {"Retry-After": "0.3"}
    fake_llm.script(limited, "好了")
    t0 = time.perf_counter()
    assert client.chat(MSG).content == "好了"
    assert time.perf_counter() - t0 >= 0.3 and fake_llm.calls == 2


def test_retry_after_beyond_the_deadline_gives_up_at_once(
    client: OpenAIChatClient, fake_llm: FakeOpenAI
) -> None:
    limited = Reply.fault("429")
    limited.headers = {"Retry-After": "30"}
    fake_llm.script(limited, "太晚了")
    t0 = time.perf_counter()
    with pytest.raises(LLMRateLimited):
        client.chat(MSG)
    assert time.perf_counter() - t0 < 5.0 and fake_llm.calls == 1  # not the 30 s hint


def test_stream_retries_before_first_chunk(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.fault("503"), Reply.fault("drop"), Reply("第三次", chunk_chars=1))
    assert "".join(client.stream(MSG)) == "第三次" and fake_llm.calls == 3


def test_stream_error_after_output_is_1099(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.fault("broken_stream"))
    got: list[str] = []
    with pytest.raises(LLMError) as info:
        for delta in client.stream(MSG):
            got.append(delta)
    assert got and info.value.code == 1099 and fake_llm.calls == 1


def test_astream_events(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.tool_call("calc_loan", {"principal": 1}))

    async def go() -> list[StreamEvent]:
        return [e async for e in client.astream_events(MSG, tools=TOOLS)]

    events = anyio.run(go)
    assert isinstance(events[0], ToolCallCompleted) and events[0].call.arguments == {"principal": 1}
    assert isinstance(events[-1], StreamFinished)
