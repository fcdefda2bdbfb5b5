"""``POST /api/v1/qa`` through the real app: envelope, SSE, LLM faults → 200 extractive, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.api.app import create_app
from zhiwen.config import LLMSettings, Settings
from zhiwen.documents import Document
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.llm import clear_llm_cache

pytestmark = pytest.mark.shared_data


def _client(settings: Settings) -> TestClient:
    return TestClient(create_app(settings))


@pytest.fixture
def offline(recipes_kb: KnowledgeBase, recipes_settings: Settings) -> Iterator[TestClient]:
    with _client(recipes_settings) as c:
        yield c


@pytest.fixture
def online(
    recipes_kb: KnowledgeBase, recipes_settings: Settings, fake_llm: FakeOpenAI
) -> Iterator[TestClient]:
    llm = LLMSettings(base_url=fake_llm.base_url, model="fake", timeout_s=1.0, max_retries=1)
    settings = recipes_settings.model_copy(update={"llm": llm})
    with _client(settings) as c:
        yield c
    clear_llm_cache()


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if name:
            events.append((name, json.loads("\n".join(data))))
    return events


def test_qa_envelope_offline(offline: TestClient) -> None:
    r = offline.post("/api/v1/qa", json={"kb": "recipes", "question": "番茄炒蛋怎么做"})
    assert r.status_code == 200
    body = r.json()
    assert body["code"] == 0 and body["message"] == "success"
    data = body["data"]
    assert data["route"] == "detail" and data["llm_used"] is False
    assert "未配置大模型" in data["answer"]
    src = data["sources"][0]
    assert set(src) >= {"kb", "id", "title", "text", "score", "rerank_score", "metadata", "source", "label"}
    assert src["kb"] == "recipes" and src["id"] == src["metadata"]["source"].removesuffix(".md")
    assert src["metadata"]["name"] == "西红柿炒鸡蛋" and src["metadata"]["category"] == "vegetable_dish"
    assert src["metadata"]["difficulty"] == 2


def test_list_with_top_k(offline: TestClient) -> None:
    r = offline.post("/api/v1/qa", json={"kb": "recipes", "question": "推荐几个简单的素菜", "top_k": 3})
    data = r.json()["data"]
    assert data["route"] == "list" and len(data["sources"]) == 3
    assert all(s["metadata"]["difficulty"] <= 2 for s in data["sources"])


def test_detail_one_llm_call(online: TestClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("宫保鸡丁：鸡丁腌制后爆炒 [1]。"))
    r = online.post("/api/v1/qa", json={"kb": "recipes", "question": "宫保鸡丁怎么做"})
    data = r.json()["data"]
    assert data["llm_used"] is True and data["answer"] == "宫保鸡丁：鸡丁腌制后爆炒 [1]。"
    assert fake_llm.calls == 1


@pytest.mark.parametrize("fault", ["hang", "500", "429", "401", "malformed", "empty"])
def test_llm_faults_are_200_extractive(online: TestClient, fake_llm: FakeOpenAI, fault: str) -> None:
    fake_llm.default = Reply.fault(fault, delay_s=10)
    r = online.post("/api/v1/qa", json={"kb": "recipes", "question": "宫保鸡丁怎么做"})
    assert r.status_code == 200
    data = r.json()["data"]
    assert data["llm_used"] is False and data["extractive_reason"]
    assert "摘自知识库" in data["answer"] and "【操作】" in data["answer"]


def test_stream_offline(offline: TestClient) -> None:
    r = offline.post("/api/v1/qa", json={"kb": "recipes", "question": "番茄炒蛋怎么做", "stream": True})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    names = [e for e, _ in events]
    assert names[0] == "sources" and names[-1] == "done" and "delta" in names
    assert events[0][1]["sources"][0]["metadata"]["name"] == "西红柿炒鸡蛋"
    assert all(d["type"] == e for e, d in events)
    assert events[-1][1]["llm_used"] is False
    text = "".join(d["text"] for e, d in events if e == "delta")
    assert text.startswith("（未配置大模型")


def test_stream_online_and_fault(online: TestClient, fake_llm: FakeOpenAI) -> None:
    fake_llm.script(Reply("一二三四[1]", chunk_chars=2), Reply("坏掉的流", kind="broken_stream"))
    events = sse_events(
        online.post("/api/v1/qa", json={"kb": "recipes", "question": "宫保鸡丁怎么做", "stream": True}).text
    )
    assert [d["text"] for e, d in events if e == "delta"] == ["一二", "三四", "[1", "]"]
    assert events[-1][1]["llm_used"] is True
    events = sse_events(
        online.post("/api/v1/qa", json={"kb": "recipes", "question": "宫保鸡丁怎么做", "stream": True}).text
    )
    assert events[-1][0] == "done" and events[-1][1]["llm_used"] is False
    assert "输出中断" in "".join(d["text"] for e, d in events if e == "delta")


def test_errors(offline: TestClient) -> None:
    r = offline.post("/api/v1/qa", json={"kb": "nope", "question": "宫保鸡丁怎么做"})
    assert r.status_code == 404 and r.json()["code"] == 3004
    r = offline.post("/api/v1/qa", json={"kb": "recipes", "question": "   "})
    assert r.status_code == 422 and r.json()["code"] != 0
    r = offline.post("/api/v1/qa", json={"kb": "recipes"})
    assert r.status_code == 422 and r.json()["code"] == 3001
    r = offline.post("/api/v1/qa", json={"kb": "recipes", "question": "x", "top_k": 0})
    assert r.status_code == 422


def test_generic_kb(recipes_settings: Settings, recipes_kb: KnowledgeBase) -> None:
    kb = open_kb("manual", settings=recipes_settings, create=True, embedder="hash")
    kb.index_documents(
        [Document(id="serve", title="服务", text="# 服务\n\n用 zhiwen serve 启动服务，默认端口 8000。")],
        progress=False,
    )
    with _client(recipes_settings) as c:
        data = c.post("/api/v1/qa", json={"kb": "manual", "question": "服务默认端口"}).json()["data"]
    assert data["route"] == "general" and data["sources"][0]["id"] == "serve"
    assert "8000" in data["answer"] and data["llm_used"] is False
