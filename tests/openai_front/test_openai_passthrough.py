"""``temperature`` / ``max_tokens`` / ``stop`` reach the configured LLM; structured calls keep theirs."""

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
from zhiwen.llm.base import ChatResult
from zhiwen.llm.overrides import OverriddenChatModel, with_overrides

QUESTION = [{"role": "user", "content": "怎么创建知识库？"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(Reply("运行 zhiwen index 即可创建知识库[1]。")) as server:
        yield server
    clear_llm_cache()


@pytest.fixture
def http(tmp_path: Path, fake: FakeOpenAI) -> Iterator[TestClient]:
    llm = LLMSettings(base_url=fake.base_url, api_key="k", model="fake", max_retries=0, timeout_s=5)
    settings = make_settings(tmp_path / "home").model_copy(update={"llm": llm})
    build_demo(settings)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def streamed_text(sse: str) -> str:
    frames = [line[len("data: ") :] for line in sse.splitlines() if line.startswith("data: {")]
    chunks = [json.loads(f) for f in frames]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


@pytest.mark.parametrize("stream", [False, True])
def test_client_values_reach_the_llm(http: TestClient, fake: FakeOpenAI, stream: bool) -> None:
    body = {"model": "demo", "messages": QUESTION, "stream": stream, "temperature": 0.2, "max_tokens": 77}
    r = http.post("/v1/chat/completions", json={**body, "stop": ["。", "\n\n"]})
    assert r.status_code == 200
    assert "运行 zhiwen index 即可创建知识库[1]" in (streamed_text(r.text) if stream else r.text)
    sent = fake.requests[-1]
    assert (sent["temperature"], sent["max_tokens"], sent["stop"]) == (0.2, 77, ["。", "\n\n"])
    assert bool(sent.get("stream")) is stream


def test_server_defaults_without_client_values(http: TestClient, fake: FakeOpenAI) -> None:
    r = http.post("/v1/chat/completions", json={"model": "demo", "messages": QUESTION})
    assert r.json()["zhiwen"]["llm_used"] is True
    sent = fake.requests[-1]
    assert (sent["temperature"], sent["max_tokens"]) == (0.3, 1024) and "stop" not in sent
    r = http.post(
        "/v1/chat/completions",
        json={"model": "demo", "messages": QUESTION, "max_completion_tokens": 55, "stop": "。"},
    )
    assert r.status_code == 200
    assert (fake.requests[-1]["max_tokens"], fake.requests[-1]["stop"]) == (55, ["。"])


class Recorder:
    model = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(("chat", kwargs))
        return ChatResult(content="ok")

    def stream(self, messages: Any, **kwargs: Any) -> Iterator[str]:
        self.calls.append(("stream", kwargs))
        return iter(["ok"])

    def stream_events(self, messages: Any, **kwargs: Any) -> Iterator[Any]:
        self.calls.append(("stream_events", kwargs))
        return iter([])

    def chat_json(self, messages: Any, **kwargs: Any) -> Any:
        self.calls.append(("chat_json", kwargs))
        return {}

    def close(self) -> None:
        self.calls.append(("close", {}))


def test_overrides_fill_only_what_the_app_leaves_open() -> None:
    inner = Recorder()
    llm = with_overrides(inner, temperature=0.9, max_tokens=10, stop="。")  # type: ignore[arg-type]
    assert isinstance(llm, OverriddenChatModel) and llm.model == "recorder"
    llm.chat([])
    llm.chat([], temperature=0.0, max_tokens=500, stop=["!"])  # the app's own values win
    llm.chat([], json_mode=True)  # structured: the client's temperature only
    llm.chat([], tools=[{"type": "function"}])
    llm.stream([])
    llm.stream_events([], tools=[{"type": "function"}])
    llm.chat_json([])
    llm.close()  # outside the protocol: delegated
    seen = [(name, kw.get("temperature"), kw.get("max_tokens"), kw.get("stop")) for name, kw in inner.calls]
    assert seen == [
        ("chat", 0.9, 10, ["。"]),
        ("chat", 0.0, 500, ["!"]),
        ("chat", 0.9, None, None),
        ("chat", 0.9, None, None),
        ("stream", 0.9, 10, ["。"]),
        ("stream_events", 0.9, None, None),
        ("chat_json", 0.9, None, None),
        ("close", None, None, None),
    ]


def test_overrides_are_memoised_and_optional() -> None:
    inner = Recorder()
    assert with_overrides(None, temperature=0.5) is None
    assert with_overrides(inner) is inner  # type: ignore[arg-type]
    first = with_overrides(inner, temperature=0.5, stop=["。"])  # type: ignore[arg-type]
    assert with_overrides(inner, temperature=0.5, stop="。") is first  # type: ignore[arg-type]
    assert with_overrides(inner, temperature=0.6) is not first  # type: ignore[arg-type]
