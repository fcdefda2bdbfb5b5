"""An answer's LLM tally (zhiwen.llm.usage): every call of the client inside it counts once —
failed ones too — with the tokens the server reported, also from a stream and from a call run
on the bounded pool; outside a tally nothing is counted."""

from __future__ import annotations

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.errors import LLMError
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.bounded import bounded_call
from zhiwen.llm.usage import LLMUsage, current_usage, tallying

HELLO = [{"role": "user", "content": "你好"}]


def test_chat_and_stream_calls_and_tokens_are_tallied(fake_llm: FakeOpenAI, client: OpenAIChatClient) -> None:
    fake_llm.script(Reply("好的。", prompt_tokens=20, completion_tokens=5), Reply("流式。", prompt_tokens=3))
    usage = LLMUsage()
    with tallying(usage):
        client.chat(HELLO)
        "".join(client.stream(HELLO))
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 23, 12)
    assert current_usage() is None


def test_a_failed_call_counts_as_a_call(fake_llm: FakeOpenAI, client: OpenAIChatClient) -> None:
    fake_llm.script(Reply.fault("401"))
    usage = LLMUsage()
    with tallying(usage), pytest.raises(LLMError):
        client.chat(HELLO)
    assert (usage.calls, usage.prompt_tokens) == (1, 0)


def test_a_bounded_call_counts_for_the_answer_that_made_it(client: OpenAIChatClient) -> None:
    usage = LLMUsage()
    with tallying(usage):
        bounded_call(lambda: client.chat(HELLO), timeout_s=5.0)
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 11, 7)


def test_outside_a_tally_nothing_is_counted(client: OpenAIChatClient) -> None:
    usage = LLMUsage()
    client.chat(HELLO)
    with tallying(None):
        client.chat(HELLO)
    assert usage.calls == 0
