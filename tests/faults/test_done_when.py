"""Issue #17's bar: with an LLM dripping one byte a second and ``timeout_s`` 5, eight concurrent
answers — ``POST /api/v1/qa``, the OpenAI front door and the listings app's ``POST /ask`` — all
return 200 within 8 s; while they hang, ``/healthz`` answers within 1 s and search within 3 s."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from fault_support import MARGIN_S, elapsed, has_listings

from support.fake_openai import Reply


def test_eight_answers_on_a_dripping_llm(serve: Callable[..., TestClient], fault_home: Path) -> None:
    # breakers and LLM slots out of the way: all eight must really wait on the drip
    client = serve(Reply.fault("drip"), timeout_s=5.0, breaker_failures=100)
    chat = {"model": "demo", "messages": [{"role": "user", "content": "怎么安装知问？"}]}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("/api/v1/qa", {"kb": "demo", "question": "怎么安装知问？"}),
        ("/api/v1/qa", {"kb": "demo", "question": "怎么配置大模型？", "stream": True}),
        ("/v1/chat/completions", chat),
        ("/v1/chat/completions", {**chat, "stream": True}),
    ]
    ask = ("/ask", {"question": "成都300万以内的两房"}) if has_listings(fault_home) else calls[0]
    calls = [*calls, *calls[:2], ask, ask]

    def post(call: tuple[str, dict[str, Any]]) -> tuple[int, float]:
        response, seconds = elapsed(lambda: client.post(call[0], json=call[1]))
        return response.status_code, seconds

    with ThreadPoolExecutor(len(calls) + 2) as pool:
        answers = [pool.submit(post, call) for call in calls]
        time.sleep(1.0)  # the eight are waiting on the drip
        health = client.get("/healthz")
        search = client.post("/knowledge-base/search", json={"kb": "demo", "query": "安装"})
        waiting = sum(not a.done() for a in answers)  # search was not queued behind them
        results = [a.result() for a in answers]

    assert len(results) == 8
    assert all(status == 200 for status, _ in results), results
    assert max(seconds for _, seconds in results) < 5.0 + MARGIN_S, results
    assert health.status_code == 200
    assert health.json()["data"]["bulkheads"]["answer"]["in_use"] >= 1
    assert search.status_code == 200 and waiting, waiting
