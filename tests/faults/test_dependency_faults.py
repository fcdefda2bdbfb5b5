"""A hung reranker, a missing rerank model and a dripping embedding endpoint never hold a request
past its deadline: search keeps the fused order and says why; embedding fails fast."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fault_support import MARGIN_S, elapsed

from support.fake_openai import FakeOpenAI, Reply
from support.fake_rerank import FakeReranker
from zhiwen.embed.openai_compat import OpenAIEmbedder
from zhiwen.errors import StoreUnavailable
from zhiwen.retrieve.rerank import clear_reranker_cache
from zhiwen.retry import deadline_scope

SEARCH = {"kb": "demo", "query": "怎么安装知问"}


@pytest.fixture
def rerank_client(serve: Callable[..., TestClient]) -> Iterator[Callable[[dict[str, Any]], TestClient]]:
    """A client whose runtime settings enable the given rerank config (reset afterwards: the
    session's home is shared)."""
    made: list[TestClient] = []

    def make(rerank: dict[str, Any]) -> TestClient:
        client = serve(Reply("好的。"), timeout_s=3.0)
        app: Any = client.app
        app.state.dynamic_settings.update({"rerank": {"enabled": True, "score_threshold": -1.0, **rerank}})
        made.append(client)
        return client

    clear_reranker_cache()
    yield make
    for client in made:
        app: Any = client.app
        app.state.dynamic_settings.reset()
    clear_reranker_cache()


def test_hung_reranker_keeps_fused_order_within_its_timeout(
    rerank_client: Callable[[dict[str, Any]], TestClient],
) -> None:
    with FakeReranker(delay_s=30) as fake:
        client = rerank_client({"backend": "remote", "endpoint": fake.url, "timeout_s": 1.0})
        response, seconds = elapsed(lambda: client.post("/knowledge-base/search", json=SEARCH))
    assert response.status_code == 200 and seconds < 1.0 + MARGIN_S, seconds
    data = response.json()["data"]
    assert data["diagnostics"]["rerank"] == "fused_order"
    assert data["diagnostics"]["rerank_reason"] == "timeout"
    assert data["results"] and response.headers["x-zhiwen-degraded"] == "rerank=timeout"


def test_missing_rerank_model_fails_fast_and_is_remembered(
    rerank_client: Callable[[dict[str, Any]], TestClient],
) -> None:
    client = rerank_client({"backend": "cross_encoder", "model": "BAAI/no-such-reranker"})
    for _ in range(2):  # the first search checks the disk once; the second remembers
        response = client.post("/knowledge-base/search", json=SEARCH)
        assert response.status_code == 200
        diagnostics = response.json()["data"]["diagnostics"]
        assert diagnostics["rerank"] == "fused_order" and diagnostics["rerank_reason"] == "unavailable"
        assert "ZHIWEN_RERANK__MODEL=/path/to/model" in diagnostics["rerank_error"]
    health = client.get("/healthz").json()["data"]
    rerank = health["dependencies"]["rerank"]
    assert rerank["state"] == "unavailable" and "ZHIWEN_RERANK__MODEL" in rerank["message"]
    assert health["status"] == "degraded"


def test_dripping_embedding_endpoint_is_bounded_by_the_deadline() -> None:
    with FakeOpenAI(Reply.fault("drip")) as fake:
        embedder = OpenAIEmbedder(base_url=fake.base_url, model="e", dim=8, timeout_s=30)
        started = time.perf_counter()
        with deadline_scope(1.0), pytest.raises(StoreUnavailable):
            embedder.embed_query("安装")
        assert time.perf_counter() - started < 1.0 + MARGIN_S
        embedder.close()
