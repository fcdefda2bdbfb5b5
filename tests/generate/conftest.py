"""Fixtures for the LLM layer: a running fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fake_openai import FakeOpenAI
from zhiwen.generate.llm import OpenAIChatClient


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def client(fake_llm: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    c = OpenAIChatClient(
        base_url=fake_llm.base_url,
        model="fake-model",
        api_key="sk-test",
        timeout_s=2.0,
        max_retries=2,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    yield c
    c.close()
