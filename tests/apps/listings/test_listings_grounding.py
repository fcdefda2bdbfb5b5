"""The listings' LLM answer is shown only when it is grounded (#31): every figure from the listings
shown or the question, in Chinese, whole — else the composed answer, with the reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.apps.listings.result import ListingsResult
from zhiwen.apps.listings.service import get_service, reset_services
from zhiwen.config import LLMSettings, Settings
from zhiwen.metrics import EXTRACTIVE_ANSWERS

QUESTION = "徐汇区三房，900万以内"


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def _ask(sh_kb: Any, sh_settings: Settings, fake: FakeOpenAI, reply: Reply) -> ListingsResult:
    fake.default = reply
    llm = LLMSettings(base_url=fake.base_url, api_key="test", model="fake", max_retries=0, timeout_s=5)
    reset_services()
    try:
        return get_service(sh_kb, sh_settings.model_copy(update={"llm": llm})).ask(
            QUESTION, 2, use_cache=False
        )
    finally:
        reset_services()


@pytest.fixture
def first(sh_kb: Any, sh_settings: Settings) -> dict[str, Any]:
    """The first listing shown for QUESTION (no LLM: the same search)."""
    reset_services()
    props = get_service(sh_kb, sh_settings).ask(QUESTION, 2, use_cache=False).retrieved_properties
    reset_services()
    return props[0].model_dump()


def test_figures_from_the_listings_pass(
    sh_kb: Any, sh_settings: Settings, fake_llm: FakeOpenAI, first: dict[str, Any]
) -> None:
    text = f"推荐第1套：总价{first['price']:g}万，面积{first['area']:g}㎡，符合您900万以内的预算。"
    out = _ask(sh_kb, sh_settings, fake_llm, Reply(f"<think>先比较两套</think>\n{text}"))
    assert out.llm_used is True and out.extractive_reason is None
    assert out.answer == text  # the <think> block is not shown


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply("推荐第1套：总价123.45万，月供约1.7万。"), "llm_unsupported_numbers"),
        (Reply("I recommend listing 1: it is a great apartment close to the metro."), "llm_wrong_language"),
        (Reply("推荐第1套，它的优势是", finish_reason="length"), "llm_truncated"),
    ],
)
def test_an_ungrounded_answer_falls_back(
    sh_kb: Any, sh_settings: Settings, fake_llm: FakeOpenAI, reply: Reply, reason: str
) -> None:
    before = EXTRACTIVE_ANSWERS.labels(app="listings", reason=reason)._value.get()
    out = _ask(sh_kb, sh_settings, fake_llm, reply)
    assert out.llm_used is False and out.extractive_reason == reason
    assert "以下回答由系统根据检索到的房源自动整理" in out.answer and reply.content not in out.answer
    assert out.retrieved_properties and out.retrieved_properties[0].title in out.answer
    assert EXTRACTIVE_ANSWERS.labels(app="listings", reason=reason)._value.get() == before + 1


def test_the_app_answer_carries_the_reason(sh_kb: Any, sh_settings: Settings, fake_llm: FakeOpenAI) -> None:
    from zhiwen.appkit.app import AskRequest
    from zhiwen.appkit.context import build_context
    from zhiwen.appkit.registry import load_apps

    fake_llm.default = Reply("推荐第1套：总价123.45万。")
    llm = LLMSettings(base_url=fake_llm.base_url, api_key="test", model="fake", max_retries=0, timeout_s=5)
    settings = sh_settings.model_copy(update={"llm": llm})
    reset_services()
    try:
        answer = load_apps()["listings"].ask(
            AskRequest(question=QUESTION, kb=sh_kb.name), build_context(settings)
        )
    finally:
        reset_services()
    assert not answer.llm_used and answer.extractive_reason == "llm_unsupported_numbers"
