"""OpenAIChatClient against the fake OpenAI-compatible server: replies, retries, faults, metrics."""

from __future__ import annotations

import time

import anyio
import pytest
from prometheus_client import REGISTRY

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.config import LLMSettings, Settings
from zhiwen.errors import LLMAuthError, LLMError, LLMRateLimited, LLMTimeout
from zhiwen.llm import OpenAIChatClient, clear_llm_cache, get_llm, llm_purpose

MSG = [{"role": "user", "content": "你好"}]


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_chat_returns_content_usage_and_sends_auth(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("你好，我是助手。", prompt_tokens=5, completion_tokens=3))
    before = metric("zhiwen_llm_calls_total", purpose="unit", outcome="ok")
    tokens_before = metric("zhiwen_llm_tokens_total", kind="prompt")
    result = client.chat(MSG, purpose="unit", temperature=0.1, max_tokens=50)
    assert result.content == "你好，我是助手。"
    assert (result.prompt_tokens, result.completion_tokens) == (5, 3)
    assert result.finish_reason == "stop"
    assert fake_llm.calls == 1
    req = fake_llm.requests[0]
    assert req["model"] == "fake-model" and req["messages"] == MSG
    assert req["temperature"] == 0.1 and req["max_tokens"] == 50
    assert fake_llm.headers[0]["authorization"] == "Bearer sk-test"
    assert metric("zhiwen_llm_calls_total", purpose="unit", outcome="ok") == before + 1
    assert metric("zhiwen_llm_tokens_total", kind="prompt") == tokens_before + 5


def test_base_url_forms(fake_llm: FakeOpenAI) -> None:
    for url in (fake_llm.base_url, fake_llm.base_url + "/", fake_llm.base_url + "/chat/completions"):
        c = OpenAIChatClient(base_url=url, model="m")
        assert c.chat(MSG).content
        c.close()
    assert fake_llm.calls == 3


@pytest.mark.parametrize("fault", ["500", "503", "429", "drop"])
def test_retries_transient_faults(client: OpenAIChatClient, fake_llm: FakeOpenAI, fault: str) -> None:
    fake_llm.script(Reply.fault(fault), Reply("恢复了"))
    assert client.chat(MSG).content == "恢复了"
    assert fake_llm.calls == 2


def test_gives_up_after_max_retries(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(*[Reply.fault("500")] * 5)
    before = metric("zhiwen_llm_errors_total", code="1099")
    with pytest.raises(LLMError) as info:
        client.chat(MSG)
    assert info.value.code == 1099
    assert fake_llm.calls == 3  # 1 + max_retries
    assert metric("zhiwen_llm_errors_total", code="1099") == before + 1


def test_rate_limit_maps_to_1003(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(*[Reply.fault("429")] * 5)
    with pytest.raises(LLMRateLimited) as info:
        client.chat(MSG, purpose="unit")
    assert info.value.code == 1003


@pytest.mark.parametrize("fault", ["401", "404"])
def test_auth_errors_not_retried(client: OpenAIChatClient, fake_llm: FakeOpenAI, fault: str) -> None:
    fake_llm.script(Reply.fault(fault))
    with pytest.raises(LLMAuthError) as info:
        client.chat(MSG)
    assert info.value.code == 1002
    assert fake_llm.calls == 1


def test_timeout_bounds_whole_call(fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.fault("hang", delay_s=10))
    c = OpenAIChatClient(base_url=fake_llm.base_url, model="m", timeout_s=0.5, max_retries=3)
    t0 = time.perf_counter()
    with pytest.raises(LLMTimeout) as info:
        c.chat(MSG)
    elapsed = time.perf_counter() - t0
    assert info.value.code == 1001
    assert elapsed < 5.0  # the timeout, not the 10 s hang
    c.close()


@pytest.mark.parametrize("fault", ["malformed", "empty"])
def test_bad_replies_are_1099(client: OpenAIChatClient, fake_llm: FakeOpenAI, fault: str) -> None:
    fake_llm.script(Reply.fault(fault))
    with pytest.raises(LLMError) as info:
        client.chat(MSG)
    assert type(info.value) is LLMError and info.value.code == 1099
    assert fake_llm.calls == 1


def test_unreachable_server_is_1099() -> None:
    c = OpenAIChatClient(base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, backoff_base_s=0.01)
    with pytest.raises(LLMError) as info:
        c.chat(MSG)
    assert info.value.code == 1099


def test_stream_yields_deltas(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("宫保鸡丁是川菜。", chunk_chars=2))
    deltas = list(client.stream(MSG))
    assert len(deltas) > 2
    assert "".join(deltas) == "宫保鸡丁是川菜。"
    assert fake_llm.requests[0]["stream"] is True


def test_stream_faults(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply.fault("broken_stream"))
    with pytest.raises(LLMError):
        list(client.stream(MSG))
    fake_llm.script(Reply.fault("empty"))
    with pytest.raises(LLMError):
        list(client.stream(MSG))
    fake_llm.script(Reply.fault("401"))
    with pytest.raises(LLMAuthError):
        list(client.stream(MSG))


def test_chat_json_repairs(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("好的：\n```json\n{'route': 'list', 'n': 3,}\n```"))
    assert client.chat_json(MSG) == {"route": "list", "n": 3}
    assert fake_llm.requests[0]["response_format"] == {"type": "json_object"}
    fake_llm.script(Reply.fault("bad_json"))
    with pytest.raises(LLMError) as info:
        client.chat_json(MSG)
    assert info.value.code == 1099


def test_json_mode_rejected_is_retried_without_it(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(
        Reply(status=400, raw_body='{"error": {"message": "response_format"}}'), Reply('{"a": 1}')
    )
    assert client.chat_json(MSG) == {"a": 1}
    assert "response_format" not in fake_llm.requests[1]


def test_tool_calls(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "calc_loan",
                "description": "贷款计算",
                "parameters": {"type": "object", "properties": {"principal": {"type": "number"}}},
            },
        }
    ]
    fake_llm.script(Reply.tool_call("calc_loan", {"principal": 1000000, "years": 30}))
    result = client.chat(MSG, tools=tools, tool_choice="auto")
    assert result.finish_reason == "tool_calls"
    assert result.tool_calls[0].name == "calc_loan"
    assert result.tool_calls[0].arguments == {"principal": 1000000, "years": 30}
    assert fake_llm.requests[0]["tools"] == tools
    # sloppy arguments are repaired
    fake_llm.script(Reply.tool_call("calc_loan", "{'principal': 5,}"))
    assert client.chat(MSG, tools=tools).tool_calls[0].arguments == {"principal": 5}


def test_purpose_context(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    before = metric("zhiwen_llm_calls_total", purpose="ctx.test", outcome="ok")
    with llm_purpose("ctx.test"):
        client.chat(MSG)
    assert metric("zhiwen_llm_calls_total", purpose="ctx.test", outcome="ok") == before + 1


def test_async_wrappers(client: OpenAIChatClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("一"), Reply("二三四五", chunk_chars=1))

    async def go() -> tuple[str, list[str]]:
        r = await client.achat(MSG)
        chunks = [d async for d in client.astream(MSG)]
        return r.content, chunks

    content, chunks = anyio.run(go)
    assert content == "一" and chunks == ["二", "三", "四", "五"]


def test_get_llm(fake_llm: FakeOpenAI) -> None:
    assert get_llm(Settings(llm=LLMSettings())) is None
    settings = Settings(llm=LLMSettings(base_url=fake_llm.base_url, model="x"))
    llm = get_llm(settings)
    assert llm is not None and llm is get_llm(settings)
    assert llm.chat(MSG).content
    clear_llm_cache()
