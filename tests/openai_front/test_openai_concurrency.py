"""20 concurrent streams over real HTTP: each keeps its order and ends with ``data: [DONE]``."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx

STREAMS = 20
MODELS = ("demo", "recipes", "listings", "advisor", "policy")
QUESTIONS = {
    "demo": "怎么创建知识库？",
    "recipes": "西红柿炒鸡蛋怎么做",
    "listings": "浦东两室，800万以内",
    "advisor": "总价300万，首付三成，贷款30年，利率3.1%，月供多少？",
    "policy": "中国公民去泰国需要签证吗？",
}


def _frames(base_url: str, model: str, i: int) -> list[str]:
    body = {
        "model": model,
        "stream": True,
        "stream_options": {"include_usage": True},
        "session_id": f"concurrent-{i}",
        "messages": [{"role": "user", "content": QUESTIONS[model]}],
    }
    with (
        httpx.Client(base_url=base_url, timeout=120) as http,
        http.stream("POST", "/v1/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return [line for line in response.iter_lines() if line]


def _check_order(frames: list[str]) -> str:
    """The frame grammar: role chunk, content chunks, the stop chunk, the usage chunk, [DONE]."""
    assert all(f.startswith("data: ") for f in frames)
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f[len("data: ") :]) for f in frames[:-1]]
    ids = {c["id"] for c in chunks}
    assert len(ids) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    stop = chunks[-2]
    assert stop["choices"][0]["finish_reason"] == "stop" and "citations" in stop
    body = chunks[1:-2]
    assert body and all(c["choices"][0]["finish_reason"] is None for c in body)
    assert not any("error" in c for c in chunks)
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in body)


def test_twenty_concurrent_streams_keep_order_and_end_with_done(base_url: str) -> None:
    expected = {m: _check_order(_frames(base_url, m, 100 + n)) for n, m in enumerate(MODELS)}
    jobs = [MODELS[i % len(MODELS)] for i in range(STREAMS)]
    with ThreadPoolExecutor(max_workers=STREAMS) as pool:
        results = list(pool.map(lambda job: (job[1], _frames(base_url, job[1], job[0])), enumerate(jobs)))
    assert len(results) == STREAMS
    for model, frames in results:
        assert _check_order(frames) == expected[model], model
