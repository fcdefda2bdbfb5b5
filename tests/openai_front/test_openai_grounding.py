"""The OpenAI front door never passes an ungrounded reply off as the answer (#31): an uncited or
English reply becomes the offline answer (``zhiwen.extractive_reason``); streamed, what was said
is followed by the note that it was not taken and the offline answer; ``<think>`` is never sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from front_support import build_demo, make_settings

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.api.app import create_app
from zhiwen.config import LLMSettings
from zhiwen.llm import clear_llm_cache

QUESTION = [{"role": "user", "content": "怎么创建知识库？"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
    clear_llm_cache()


@pytest.fixture
def http(tmp_path: Path, fake: FakeOpenAI) -> Iterator[TestClient]:
    llm = LLMSettings(base_url=fake.base_url, api_key="k", model="fake", max_retries=0, timeout_s=5)
    settings = make_settings(tmp_path / "home").model_copy(update={"llm": llm})
    build_demo(settings)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def _stream(http: TestClient) -> tuple[str, dict[str, Any]]:
    r = http.post("/v1/chat/completions", json={"model": "demo", "messages": QUESTION, "stream": True})
    assert r.status_code == 200
    chunks = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    final = next(c for c in reversed(chunks) if c.get("zhiwen"))
    return text, final["zhiwen"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("运行 zhiwen index 即可创建知识库。", "llm_uncited"),
        ("Run zhiwen index to create a knowledge base, it is easy [1].", "llm_wrong_language"),
    ],
)
def test_an_ungrounded_reply_is_not_the_answer(
    http: TestClient, fake: FakeOpenAI, reply: str, reason: str
) -> None:
    fake.default = Reply(reply)
    body = http.post("/v1/chat/completions", json={"model": "demo", "messages": QUESTION}).json()
    content = body["choices"][0]["message"]["content"]
    assert reply not in content and "摘自知识库" in content
    assert body["zhiwen"]["llm_used"] is False and body["zhiwen"]["extractive_reason"] == reason

    text, info = _stream(http)
    assert text.startswith(reply) and "未被采用" in text and "摘自知识库" in text.split("未被采用", 1)[1]
    assert info["llm_used"] is False and info["extractive_reason"] == reason


def test_a_cited_reply_streams_without_its_reasoning(http: TestClient, fake: FakeOpenAI) -> None:
    reply = "<think>用户想创建知识库</think>运行 zhiwen index 即可创建知识库 [1]。"
    fake.default = Reply(reply, chunk_chars=3)
    text, info = _stream(http)
    assert "think" not in text and "用户想" not in text
    assert text.startswith("运行 zhiwen index 即可创建知识库 [1]。") and info["llm_used"] is True
