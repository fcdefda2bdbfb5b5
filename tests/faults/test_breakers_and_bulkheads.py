"""Circuit breakers fail fast and probe; full queues answer 503 with Retry-After; healthz and
metrics show it all without waiting."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient
from fault_support import MARGIN_S, elapsed

from support.fake_openai import FakeOpenAI, Reply

QUESTION = {"kb": "demo", "question": "怎么安装知问？"}


def test_breaker_opens_fails_fast_then_probes(serve: Callable[..., TestClient], fake_llm: FakeOpenAI) -> None:
    client = serve(Reply.fault("500"), timeout_s=1.5, max_retries=0, breaker_failures=2, breaker_reset_s=1.0)
    for _ in range(2):
        assert client.post("/api/v1/qa", json=QUESTION).json()["data"]["extractive_reason"] == "http_error"
    calls = fake_llm.calls
    response = client.post("/api/v1/qa", json=QUESTION)
    assert response.json()["data"]["extractive_reason"] == "breaker_open"
    assert fake_llm.calls == calls  # no network: failed fast

    health = client.get("/healthz").json()["data"]
    assert health["status"] == "degraded"
    breaker = health["dependencies"]["llm"]["breaker"]
    assert breaker["state"] == "open" and breaker["failures"] == 2
    assert 'zhiwen_breaker_state{endpoint="' in client.get("/metrics").text

    fake_llm.default = Reply("好的，这是大模型的回答。[1]")  # cited, so the grounding check shows it
    time.sleep(1.1)  # the recovery time: one probe goes out, succeeds, the breaker closes
    data = client.post("/api/v1/qa", json=QUESTION).json()["data"]
    assert data["llm_used"] is True and fake_llm.calls == calls + 1
    breaker = client.get("/healthz").json()["data"]["dependencies"]["llm"]["breaker"]
    assert breaker["state"] == "closed"


def test_full_queue_answers_503_with_retry_after(serve: Callable[..., TestClient]) -> None:
    client = serve(Reply.fault("hang", delay_s=30), timeout_s=2.0, answer_concurrency=1, answer_queue=0)
    with ThreadPoolExecutor(1) as pool:
        hanging = pool.submit(client.post, "/api/v1/qa", json=QUESTION)
        time.sleep(0.5)
        busy = client.post("/api/v1/qa", json=QUESTION)
        assert busy.status_code == 503 and not hanging.done()  # refused while the slot is held
        assert busy.headers["retry-after"] == "2"
        body = busy.json()
        assert body["code"] == 1099 and "排队已满" in body["message"] and body["data"]["work"] == "answer"
        chat = {"model": "demo", "messages": [{"role": "user", "content": "你好"}]}
        openai_busy = client.post("/v1/chat/completions", json=chat)
        assert openai_busy.status_code == 503 and openai_busy.json()["error"]["type"] == "server_error"
        # other kinds of work are not queued behind the answers
        assert client.post("/knowledge-base/search", json={"kb": "demo", "query": "安装"}).status_code == 200
        assert hanging.result().status_code == 200


def test_no_llm_slot_in_time_degrades_to_busy(serve: Callable[..., TestClient]) -> None:
    client = serve(Reply.fault("hang", delay_s=30), timeout_s=1.5, llm_concurrency=1, dependency_wait_s=0.2)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, "/api/v1/qa", json=QUESTION)
        time.sleep(0.4)
        second, seconds = elapsed(lambda: client.post("/api/v1/qa", json=QUESTION))
        assert second.json()["data"]["extractive_reason"] == "busy" and seconds < 1.5 + MARGIN_S
        assert second.headers["x-zhiwen-degraded"] == "llm=busy"
        assert first.result().json()["data"]["extractive_reason"] == "timeout"


def test_healthz_never_waits_on_hung_calls(serve: Callable[..., TestClient]) -> None:
    client = serve(Reply.fault("hang", delay_s=30), timeout_s=2.0)
    with ThreadPoolExecutor(8) as pool:
        answers = [pool.submit(client.post, "/api/v1/qa", json=QUESTION) for _ in range(8)]
        time.sleep(0.5)
        health = client.get("/healthz")
        assert health.status_code == 200  # answered while the calls below are in use
        gates = health.json()["data"]["bulkheads"]
        assert gates["llm"]["in_use"] >= 1 and gates["answer"]["in_use"] >= 1
        metrics = client.get("/metrics").text
        assert 'zhiwen_bulkhead_in_use{bulkhead="answer"}' in metrics
        assert all(a.result().status_code == 200 for a in answers)
