"""HybridRetriever over an in-memory store: modes, fusion, filters, branch failures, metrics."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from retrieve.fakes import FakeEmbedder, FakeStore, SplitTokenizer
from zhiwen.cache import LRU
from zhiwen.config import RetrievalSettings
from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter, MissingParameter, StoreUnavailable
from zhiwen.metrics import BRANCH_EMPTY, BRANCH_FAILURES, SEARCHES
from zhiwen.retrieve.hybrid import HybridRetriever

VOCAB = {"chicken": 0, "tofu": 1, "soup": 2, "rice": 3}

DOCS = {
    # id: (text, metadata)
    "kungpao#0": ("kungpao chicken peanuts chicken", {"category": "meat", "difficulty": 3}),
    "kungpao#1": ("fry the chicken with chili", {"category": "meat", "difficulty": 3}),
    "mapo#0": ("mapo tofu spicy", {"category": "vegetable", "difficulty": 2}),
    "tomato#0": ("tomato egg soup", {"category": "soup", "difficulty": 1}),
    "rice#0": ("fried rice with egg", {"category": "staple", "difficulty": 1}),
    "congee#0": ("chicken congee rice porridge", {"category": "staple", "difficulty": 2}),
}


def value(metric: object, **labels: str) -> float:
    return float(metric.labels(**labels)._value.get())  # type: ignore[attr-defined]


@pytest.fixture
def store() -> FakeStore:
    emb = FakeEmbedder(VOCAB)
    st = FakeStore(dim=4)
    chunks = [Chunk(id=cid, doc_id=cid.split("#")[0], text=t, metadata=m) for cid, (t, m) in DOCS.items()]
    st.upsert(
        chunks, tokens=[c.text.split() for c in chunks], vectors=emb.embed_passages([c.text for c in chunks])
    )
    return st


@pytest.fixture
def retriever(store: FakeStore) -> HybridRetriever:
    return HybridRetriever(store, SplitTokenizer(), FakeEmbedder(VOCAB), kb_name="unit")


def ids(hits: list) -> list[str]:
    return [h.chunk.id for h in hits]


def test_bm25_mode(retriever: HybridRetriever) -> None:
    hits = retriever.run("chicken", mode="bm25", top_k=3)
    assert ids(hits)[0] == "kungpao#0"  # tf 2
    assert hits[0].bm25_score == 2.0 and hits[0].bm25_rank == 1
    assert hits[0].vector_score is None and hits[0].fused_score is None
    assert hits[0].score == hits[0].bm25_score
    assert retriever.embedder.queries == []  # type: ignore[union-attr]


def test_dense_mode(retriever: HybridRetriever) -> None:
    hits = retriever.run("tofu please", mode="dense", top_k=2)
    assert ids(hits)[0] == "mapo#0"
    assert hits[0].vector_score == pytest.approx(1.0) and hits[0].vector_rank == 1
    assert hits[0].bm25_score is None


def test_hybrid_fuses_both_branches(retriever: HybridRetriever) -> None:
    hits = retriever.run("chicken rice", mode="hybrid", top_k=6)
    by_id = {h.chunk.id: h for h in hits}
    congee = by_id["congee#0"]
    # congee matches both words: first in BM25 and first in dense
    assert ids(hits)[0] == "congee#0"
    assert congee.bm25_rank == 1 and congee.vector_rank == 1
    assert congee.fused_score == congee.score == pytest.approx(1.0)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_weights_zero_reproduce_single_branch_order(retriever: HybridRetriever, fusion: str) -> None:
    only_bm25 = retriever.run("chicken rice", mode="hybrid", fusion=fusion, weights=(1.0, 0.0), top_k=3)
    assert ids(only_bm25) == ids(retriever.run("chicken rice", mode="bm25", top_k=3))
    only_dense = retriever.run("chicken", mode="hybrid", fusion=fusion, alpha=1.0, top_k=2)
    assert set(ids(only_dense)) <= {"kungpao#0", "kungpao#1", "congee#0"}


def test_alpha_changes_ranking(retriever: HybridRetriever) -> None:
    # "fry" only matches in BM25; "soups" only in dense (the fake embeds substrings)
    bm25_heavy = retriever.run("fry soups", mode="hybrid", alpha=0.1, top_k=2)
    dense_heavy = retriever.run("fry soups", mode="hybrid", alpha=0.9, top_k=2)
    assert ids(bm25_heavy)[0] == "kungpao#1"
    assert ids(dense_heavy)[0] == "tomato#0"


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_filters_apply_in_every_mode(retriever: HybridRetriever, store: FakeStore, mode: str) -> None:
    hits = retriever.run("chicken rice", mode=mode, filters={"category": "staple"}, top_k=10)
    assert hits and all(h.chunk.metadata["category"] == "staple" for h in hits)
    hits = retriever.run("chicken rice tofu", mode=mode, filters={"difficulty": {"lte": 2}}, top_k=10)
    assert hits and all(h.chunk.metadata["difficulty"] <= 2 for h in hits)
    # the filter reached the store (applied inside the branch, not after)
    assert any(kind.startswith("search_") and args[-1] for kind, args in store.calls)


def test_candidates_and_hydration_only_top_k(retriever: HybridRetriever, store: FakeStore) -> None:
    store.calls.clear()
    retriever.run("chicken rice tofu soup", mode="hybrid", top_k=2, candidates=50)
    searches = [args for kind, args in store.calls if kind.startswith("search_")]
    assert all(50 in (a if isinstance(a, tuple) else ()) for a in searches)
    fetched = [args for kind, args in store.calls if kind == "get_chunks"]
    assert len(fetched) == 1 and len(fetched[0]) == 2


def test_bm25_failure_dense_answers(
    retriever: HybridRetriever, store: FakeStore, caplog: pytest.LogCaptureFixture
) -> None:
    before = value(BRANCH_FAILURES, branch="bm25")
    store.fail_text = RuntimeError("index corrupt")
    with caplog.at_level(logging.WARNING, logger="zhiwen.retrieve.hybrid"):
        result = retriever.run_detailed("tofu", mode="hybrid", top_k=2)
    assert ids(result.hits)[0] == "mapo#0"
    assert result.branch_status["bm25"].startswith("failed")
    assert value(BRANCH_FAILURES, branch="bm25") == before + 1
    assert "bm25 branch failed" in caplog.text


def test_dense_failure_bm25_answers(retriever: HybridRetriever, store: FakeStore) -> None:
    before = value(BRANCH_FAILURES, branch="dense")
    store.fail_vector = StoreUnavailable("vector index down")
    hits = retriever.run("kungpao", mode="hybrid", top_k=2)
    assert ids(hits) == ["kungpao#0"]
    assert value(BRANCH_FAILURES, branch="dense") == before + 1


def test_query_embedding_failure_is_a_dense_failure(retriever: HybridRetriever) -> None:
    retriever.embedder.fail = TimeoutError("embedding endpoint timed out")  # type: ignore[union-attr]
    assert ids(retriever.run("kungpao", top_k=1)) == ["kungpao#0"]


def test_both_branches_fail_raises_store_error(retriever: HybridRetriever, store: FakeStore) -> None:
    store.fail_text = RuntimeError("boom")
    store.fail_vector = StoreUnavailable("db down")
    with pytest.raises(StoreUnavailable):
        retriever.run("chicken", mode="hybrid")


def test_single_mode_errors_propagate(retriever: HybridRetriever, store: FakeStore) -> None:
    store.fail_text = StoreUnavailable("db down")
    with pytest.raises(StoreUnavailable):
        retriever.run("chicken", mode="bm25")


def test_empty_branch_counted(retriever: HybridRetriever) -> None:
    before = value(BRANCH_EMPTY, branch="bm25")
    result = retriever.run_detailed("porridge-less broth", mode="hybrid", top_k=3)
    assert result.branch_status.get("bm25") == "empty"
    assert value(BRANCH_EMPTY, branch="bm25") == before + 1
    # the dense branch still answers (all-zero query vector: every doc scores 0, none dropped)
    assert len(result.hits) == 3


def test_metrics_counted(retriever: HybridRetriever) -> None:
    before = value(SEARCHES, kb="unit", mode="bm25")
    retriever.run("chicken", mode="bm25")
    assert value(SEARCHES, kb="unit", mode="bm25") == before + 1


def test_query_vector_bypasses_embedder_and_cache_reuses(retriever: HybridRetriever) -> None:
    emb = retriever.embedder
    vec = np.array([0, 1, 0, 0], dtype=np.float32)
    assert ids(retriever.run("anything", mode="dense", query_vector=vec, top_k=1)) == ["mapo#0"]
    assert emb.queries == []  # type: ignore[union-attr]
    retriever.run("tofu", mode="dense")
    retriever.run("tofu", mode="hybrid")
    assert emb.queries == ["tofu"]  # type: ignore[union-attr]
    with pytest.raises(InvalidParameter):
        retriever.run("x", mode="dense", query_vector=np.ones(7))


def test_timings_reported(retriever: HybridRetriever) -> None:
    result = retriever.run_detailed("chicken", mode="hybrid")
    assert {"embed", "bm25", "dense", "fuse", "hydrate", "total"} <= set(result.timings)
    assert result.candidates >= len(result.hits)


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"query": "  "}, MissingParameter),
        ({"query": "x", "mode": "sparse"}, InvalidParameter),
        ({"query": "x", "top_k": 0}, InvalidParameter),
        ({"query": "x", "candidates": 0}, InvalidParameter),
        ({"query": "x", "fusion": "borda"}, InvalidParameter),
        ({"query": "x", "weights": (-1.0, 1.0)}, InvalidParameter),
        ({"query": "x", "alpha": 2.0}, InvalidParameter),
        ({"query": "x", "filters": {"bad field!": 1}}, InvalidParameter),
    ],
)
def test_bad_parameters(retriever: HybridRetriever, kwargs: dict, exc: type) -> None:
    query = kwargs.pop("query")
    with pytest.raises(exc):
        retriever.run(query, **kwargs)


def test_store_without_vectors() -> None:
    st = FakeStore(dim=None)
    st.upsert([Chunk(id="a#0", doc_id="a", text="chicken")], tokens=[["chicken"]])
    r = HybridRetriever(st, SplitTokenizer(), None)
    result = r.run_detailed("chicken")
    assert ids(result.hits) == ["a#0"] and result.branch_status == {"dense": "skipped"}
    with pytest.raises(InvalidParameter):
        r.run("chicken", mode="dense")


def test_settings_defaults_used(store: FakeStore) -> None:
    r = HybridRetriever(
        store,
        SplitTokenizer(),
        FakeEmbedder(VOCAB),
        settings=RetrievalSettings(default_mode="bm25", top_k=1, candidates=3),
    )
    result = r.run_detailed("chicken rice")
    assert result.mode == "bm25" and len(result.hits) == 1


def test_parallel_mode_same_results(store: FakeStore) -> None:
    seq = HybridRetriever(store, SplitTokenizer(), FakeEmbedder(VOCAB))
    par = HybridRetriever(store, SplitTokenizer(), FakeEmbedder(VOCAB), parallel=True)
    try:
        for q in ["chicken rice", "tofu soup", "fry"]:
            assert ids(seq.run(q, top_k=5)) == ids(par.run(q, top_k=5))
        store.fail_vector = RuntimeError("x")
        assert ids(par.run("kungpao", top_k=1)) == ["kungpao#0"]
    finally:
        par.close()


def test_query_vector_cache_is_bounded() -> None:
    cache = LRU(2, "test_query_vectors")
    for i in range(5):
        cache.put(("m", str(i)), np.zeros(2))
    assert len(cache) == 2 and cache.get(("m", "0")) is None and cache.get(("m", "4")) is not None
