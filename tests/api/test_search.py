"""``POST /knowledge-base/search`` over a fake KB: results, params, rerank threshold / fallback."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from zhiwen.config import Settings

SEARCH = "/knowledge-base/search"


def search(client: TestClient, **payload: Any) -> dict[str, Any]:
    resp = client.post(SEARCH, json={"kb": "demo", "query": "如何安装", **payload})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["code"] == 0
    return body


def test_plain_search_results_and_params(client: TestClient, fake_kb: Any) -> None:
    body = search(client, top_k=3)
    data = body["data"]
    assert body["message"] == "success"
    assert [r["chunk_id"] for r in data["results"]] == [
        "manual/install#0",
        "manual/install#1",
        "manual/search#2",
    ]
    first = data["results"][0]
    assert set(first) >= {"chunk_id", "doc_id", "text", "title", "metadata", "vector_score", "bm25_score"}
    assert first["fused_score"] == 1.0 and first["rerank_score"] is None
    assert first["metadata"] == {"n": 0}
    assert data["intent"] == "focused"
    params = data["params"]
    assert params["rrf_k"] == 60 and params["fusion"] == "weighted" and params["top_k"] == 3
    assert params["mmr_lambda"] == 0.7 and params["thresholds"] == {"similarity": 0.0, "rerank": 0.5}
    assert params["rerank"]["enabled"] is False
    call = fake_kb.calls[-1]
    assert call["top_k"] == 3 and call["fusion"] == "weighted" and call["weights"] == (0.5, 0.5)
    assert call["mode"] == "hybrid"


def test_default_top_k_mode_and_filters(client: TestClient, fake_kb: Any) -> None:
    data = search(client, mode="bm25", filters={"n": {"lte": 3}})["data"]
    assert len(data["results"]) == 6  # default top_k 10, the fake has 6
    call = fake_kb.calls[-1]
    assert call["mode"] == "bm25"
    assert call["filters"].to_dict() == {"n": {"lte": 3}}


def _rerank_on(settings: Settings, **rerank: Any) -> Settings:
    return settings.model_copy(
        update={"rerank": settings.rerank.model_copy(update={"enabled": True, **rerank})}
    )


def test_rerank_threshold_filters(make_client: Any, settings: Settings, reranker: Any) -> None:
    client = make_client(_rerank_on(settings))
    data = search(client, top_k=5)["data"]
    # FixedReranker cycles [0.9, 0.2]: chunks 0, 2, 4 pass the 0.5 threshold
    assert [r["chunk_id"] for r in data["results"]] == [
        "manual/install#0",
        "manual/search#2",
        "manual/admin#4",
    ]
    assert all(r["rerank_score"] == 0.9 for r in data["results"])
    assert data["diagnostics"]["reranked"] is True
    assert data["diagnostics"]["passed_rerank"] == 3
    assert data["message"] is None
    assert len(reranker.calls[-1][1]) == 6  # every candidate (cap 50) was scored


def test_rerank_candidates_cap(make_client: Any, settings: Settings, reranker: Any, fake_kb: Any) -> None:
    client = make_client(_rerank_on(settings, candidates=2))
    data = search(client, top_k=5)["data"]
    assert len(reranker.calls[-1][1]) == 2
    assert fake_kb.calls[-1]["top_k"] == 5  # fetch max(top_k, candidates)
    assert [r["chunk_id"] for r in data["results"]] == ["manual/install#0"]


def test_all_below_threshold_falls_back(make_client: Any, settings: Settings) -> None:
    client = make_client(_rerank_on(settings, score_threshold=0.95))
    body = search(client, top_k=5)
    data = body["data"]
    assert "No chunks met rerank threshold" in data["message"]
    assert body["message"] == data["message"]
    # min(fallback=2, top_k) in the original (fused) order
    assert [r["chunk_id"] for r in data["results"]] == ["manual/install#0", "manual/install#1"]
    assert data["diagnostics"]["fallback"] is True
    assert data["warnings"]


def test_fallback_bounded_by_top_k_and_zero(make_client: Any, settings: Settings) -> None:
    client = make_client(_rerank_on(settings, score_threshold=0.95))
    assert len(search(client, top_k=1)["data"]["results"]) == 1
    client = make_client(_rerank_on(settings, score_threshold=0.95, fallback=0))
    data = search(client, top_k=5)["data"]
    assert data["results"] == []
    assert data["message"].startswith("No chunks met rerank threshold")


def test_reranker_failure_keeps_fused_order(make_client: Any, settings: Settings, reranker: Any) -> None:
    reranker.error = RuntimeError("model exploded")
    client = make_client(_rerank_on(settings))
    data = search(client, top_k=3)["data"]
    assert [r["chunk_id"] for r in data["results"]] == [
        "manual/install#0",
        "manual/install#1",
        "manual/search#2",
    ]
    assert all(r["rerank_score"] is None for r in data["results"])
    assert data["diagnostics"]["reranked"] is False
    assert "model exploded" in data["diagnostics"]["rerank_error"]


def test_unavailable_cross_encoder_falls_back(make_client: Any, settings: Settings, fake_kb: Any) -> None:
    """The real factory with a model that does not exist: fused order, no error to the user."""
    from zhiwen.httpkit.deps import get_pipeline

    s = _rerank_on(settings, model=str(settings.home / "no-such-model"))
    client = make_client(s)
    client.app.dependency_overrides.pop(get_pipeline)  # type: ignore[attr-defined]
    data = search(client, top_k=2)["data"]
    assert len(data["results"]) == 2
    assert data["diagnostics"]["reranked"] is False
    assert data["diagnostics"]["rerank_error"]


def test_similarity_threshold(make_client: Any, settings: Settings) -> None:
    s = settings.model_copy(update={"adaptive": settings.adaptive.model_copy(update={"min_similarity": 0.8})})
    data = search(make_client(s), top_k=10)["data"]
    assert [r["vector_score"] for r in data["results"]] == [0.9, 0.85, 0.8]
    s = settings.model_copy(
        update={"adaptive": settings.adaptive.model_copy(update={"min_similarity": 0.99})}
    )
    data = search(make_client(s), top_k=10)["data"]
    assert data["results"] == [] and "similarity threshold" in data["message"]


def test_mmr_and_per_doc_limit(make_client: Any, settings: Settings) -> None:
    s = settings.model_copy(
        update={"adaptive": settings.adaptive.model_copy(update={"mmr_enabled": True, "per_doc_limit": 1})}
    )
    data = search(make_client(s), top_k=4)["data"]
    docs = [r["doc_id"] for r in data["results"]]
    assert len(docs) == len(set(docs)) == 4
    assert data["params"]["mmr_enabled"] is True and data["params"]["per_doc_limit"] == 1


def test_intent_adjusts_params_when_enabled(make_client: Any, settings: Settings) -> None:
    s = settings.model_copy(
        update={
            "adaptive": settings.adaptive.model_copy(
                update={
                    "dynamic_lambda_enabled": True,
                    "dynamic_threshold_enabled": True,
                    "min_similarity": 0.5,
                }
            )
        }
    )
    client = make_client(s)
    broad = search(client, query="总结一下检索的几种模式")["data"]
    assert broad["intent"] == "broad"
    assert broad["params"]["mmr_lambda"] == 0.55
    assert broad["params"]["thresholds"] == {"similarity": 0.45, "rerank": 0.45}
    focused = search(client, query="如何安装")["data"]
    assert focused["params"]["mmr_lambda"] == 0.85
    assert focused["params"]["thresholds"] == {"similarity": 0.55, "rerank": 0.55}


def test_list_kbs_and_info(client: TestClient) -> None:
    data = client.get("/api/v1/kbs").json()["data"]
    assert data["count"] == 1
    assert data["kbs"][0]["name"] == "demo" and data["kbs"][0]["info"]["chunks"] == 6
    info = client.get("/api/v1/kbs/demo").json()
    assert info["code"] == 0 and info["data"]["name"] == "demo"


def test_healthz_and_docs(client: TestClient) -> None:
    assert client.get("/healthz").json()["data"]["status"] == "ok"
    spec = client.get("/openapi.json").json()
    assert "/knowledge-base/search" in spec["paths"]
    assert client.get("/docs").status_code == 200


def test_relevance_verdict_marks_off_topic_queries(client: TestClient) -> None:
    on_topic = search(client, query="如何安装 zhiwen")["data"]
    assert on_topic["relevance"]["relevant"] is True and on_topic["relevance"]["reason"] == "relevant"
    assert on_topic["message"] is None
    body = search(client, query="紫色的大象会打篮球吗")
    data = body["data"]
    assert data["results"], "the hits themselves are never removed"
    assert data["relevance"]["relevant"] is False and data["relevance"]["reason"] == "below_floor"
    assert "没有与查询明显相关的内容" in data["message"] and body["message"] == data["message"]
