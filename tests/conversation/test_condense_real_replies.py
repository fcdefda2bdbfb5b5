"""The condense call against what a small real model writes (#31): a wrapped rewrite is cleaned
and used; an unusable one is rejected with its reason and the offline rewrite stands."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.conversation.condense import clean_reply, condense
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.llm import OpenAIChatClient

HISTORY = [
    {"role": "user", "content": "中国公民去泰国需要签证吗？"},
    {"role": "assistant", "content": "持普通护照的中国公民赴泰国旅游可免签入境，停留不超过30天。"},
]
VOCABULARY = Vocabulary({"泰国": "country", "西班牙": "country"})
QUESTION = "那西班牙呢？"
GOOD = "中国公民去西班牙需要签证吗？"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm(fake: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    client = OpenAIChatClient(base_url=fake.base_url, model="fake", timeout_s=3.0, max_retries=0)
    yield client
    client.close()


@pytest.mark.parametrize(
    "reply",
    [
        GOOD,
        f"改写后的问题：{GOOD}",
        f"改写后的问题：\n{GOOD}",
        f"「{GOOD}」",
        f"**改写后的问题**：{GOOD}",
        f"<think>指代的是上一轮的泰国，换成西班牙。</think>\n{GOOD}",
        f"{GOOD}<end_of_turn>",
        f"问题是：“{GOOD}”\n这样改写保留了原问题。",
    ],
)
def test_a_wrapped_rewrite_is_cleaned_and_used(fake: FakeOpenAI, llm: OpenAIChatClient, reply: str) -> None:
    fake.script(Reply(reply))
    found = condense(HISTORY, QUESTION, vocabulary=VOCABULARY, llm=llm)
    assert found.method == "llm" and found.question == GOOD and found.llm_fallback is None


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("<think>西班牙是申根国家，需要……", "unusable_reply"),  # never closed
        ("持普通护照的中国公民去西班牙需要办理申根签证。", "not_the_question"),  # an answer
        ("今天北京的天气怎么样？", "not_the_question"),  # another question
        ("", "empty"),  # the client's own reason for an empty reply
    ],
)
def test_an_unusable_rewrite_is_rejected_visibly(
    fake: FakeOpenAI, llm: OpenAIChatClient, reply: str, reason: str
) -> None:
    fake.script(Reply(reply))
    found = condense(HISTORY, QUESTION, vocabulary=VOCABULARY, llm=llm)
    assert found.method == "substitution" and found.question == GOOD  # the rules' rewrite
    assert found.llm_fallback == reason and found.to_dict()["llm_fallback"] == reason


def test_an_llm_error_is_named_too(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    fake.script(Reply.fault("500"))
    found = condense(HISTORY, QUESTION, vocabulary=VOCABULARY, llm=llm)
    assert found.question == GOOD and found.llm_fallback == "http_error"


def test_clean_reply_keeps_nothing_of_an_empty_wrapping() -> None:
    assert clean_reply("改写后的问题：") is None
    assert clean_reply("<think>…</think>") is None
