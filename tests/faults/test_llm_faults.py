"""Every LLM fault ends in an answer within the request's deadline that says it degraded.

The LLM is a local fake (:mod:`support.fake_openai`): it drips one byte a second, hangs, answers
500, sends garbage, or cuts its reply short. ``timeout_s`` is 1.5 s and bounds the WHOLE request:
attempts, backoff between retries and streamed reads. Each answer must arrive within the
deadline plus a small margin, be extractive (``llm_used: false``), and say why.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from fault_support import MARGIN_S, elapsed, sse_events

from support.fake_openai import FakeOpenAI, Reply

TIMEOUT_S = 1.5
QUESTION = {"kb": "demo", "question": "怎么安装知问？"}

FAULTS = {
    "drip": (Reply.fault("drip"), {"timeout"}),
    "hang": (Reply.fault("hang", delay_s=30), {"timeout"}),
    "5xx": (Reply.fault("500"), {"http_error"}),
    "garbage": (Reply.fault("malformed"), {"bad_reply"}),
    "truncated": (Reply.fault("truncated"), {"bad_reply", "unreachable"}),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_qa_degrades_within_the_deadline(fault: str, serve: Callable[..., TestClient]) -> None:
    reply, reasons = FAULTS[fault]
    client = serve(reply, timeout_s=TIMEOUT_S)
    response, seconds = elapsed(lambda: client.post("/api/v1/qa", json=QUESTION))
    assert response.status_code == 200, response.text
    assert seconds < TIMEOUT_S + MARGIN_S, f"{fault}: {seconds:.1f}s"
    data = response.json()["data"]
    assert data["llm_used"] is False and data["extractive_reason"] in reasons
    assert data["answer"] and data["sources"]  # the extractive answer, with its sources
    assert "llm=" in response.headers["x-zhiwen-degraded"]


@pytest.mark.parametrize("fault", ["drip", "hang", "truncated"])
def test_streamed_qa_degrades_within_the_deadline(fault: str, serve: Callable[..., TestClient]) -> None:
    reply, _ = FAULTS[fault]
    client = serve(reply, timeout_s=TIMEOUT_S)
    response, seconds = elapsed(lambda: client.post("/api/v1/qa", json={**QUESTION, "stream": True}))
    assert response.status_code == 200
    assert seconds < TIMEOUT_S + MARGIN_S, f"{fault}: {seconds:.1f}s"
    events = sse_events(response.text)
    done = [data for name, data in events if name == "done"]
    assert done and done[0]["llm_used"] is False and done[0]["extractive_reason"]
    text = "".join(data["text"] for name, data in events if name == "delta")
    assert "知识库" in text  # the extractive note says where the answer came from


def test_openai_front_door_degrades_within_the_deadline(serve: Callable[..., TestClient]) -> None:
    client = serve(Reply.fault("drip"), timeout_s=TIMEOUT_S)
    body = {"model": "demo", "messages": [{"role": "user", "content": "怎么安装知问？"}]}
    response, seconds = elapsed(lambda: client.post("/v1/chat/completions", json=body))
    assert response.status_code == 200 and seconds < TIMEOUT_S + MARGIN_S
    info = response.json()["zhiwen"]
    assert info["llm_used"] is False and info["extractive_reason"] == "timeout"
    assert response.headers["x-zhiwen-degraded"] == "llm=timeout"


def test_retries_never_outlive_the_deadline(serve: Callable[..., TestClient], fake_llm: FakeOpenAI) -> None:
    """Each attempt hangs 0.6 s then fails with 503: retries share the one 1.5 s deadline."""
    slow_503 = Reply(status=503, raw_body='{"error": {"message": "busy"}}', delay_s=0.6, kind="503")
    client = serve(slow_503, timeout_s=TIMEOUT_S, max_retries=5)
    response, seconds = elapsed(lambda: client.post("/api/v1/qa", json=QUESTION))
    assert response.status_code == 200 and seconds < TIMEOUT_S + MARGIN_S
    assert fake_llm.calls <= 3  # 5 retries allowed; the deadline left room for at most 3 attempts
    assert response.json()["data"]["llm_used"] is False
