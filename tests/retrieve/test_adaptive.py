"""Seed 004 §4: each adjustment as a pure function (and off when its flag is off), the pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from zhiwen.config import Settings
from zhiwen.documents import Chunk, SearchHit
from zhiwen.retrieve.adaptive import (
    adjust_mmr_lambda,
    adjust_per_doc_limit,
    adjust_thresholds,
    apply_min_similarity,
    apply_per_doc_limit,
)
from zhiwen.retrieve.pipeline import RetrievalPipeline
from zhiwen.understand.profile import QueryIntent as Q


@pytest.mark.parametrize(
    ("base", "intent", "expected"),
    [
        (0.7, Q.BROAD, 0.55),
        (0.4, Q.BROAD, 0.3),  # clamp low
        (1.0, Q.BROAD, 0.85),
        (0.7, Q.FOCUSED, 0.85),
        (0.9, Q.TROUBLESHOOT, 0.95),  # clamp high
        (0.0, Q.FOCUSED, 0.15),
        (0.7, Q.DOC_SPECIFIC, 0.7),
        (0.7, Q.UNKNOWN, 0.7),
    ],
)
def test_adjust_mmr_lambda(base: float, intent: Q, expected: float) -> None:
    assert adjust_mmr_lambda(base, intent, True) == pytest.approx(expected)
    assert adjust_mmr_lambda(base, intent, False) == base


def test_adjust_mmr_lambda_delta() -> None:
    assert adjust_mmr_lambda(0.7, Q.BROAD, True, delta=0.3) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("sim", "rr", "intent", "expected"),
    [
        (0.3, 0.5, Q.BROAD, (0.25, 0.45)),
        (0.02, 0.5, Q.BROAD, (0.0, 0.45)),  # max(0, base − δ)
        (-0.5, 0.5, Q.BROAD, (-0.5, 0.45)),  # a negative base (filter off) stays off
        (0.3, 0.5, Q.FOCUSED, (0.35, 0.55)),
        (0.98, 0.5, Q.TROUBLESHOOT, (1.0, 0.55)),  # min(1, base + δ)
        (0.3, 0.5, Q.DOC_SPECIFIC, (0.3, 0.5)),
        (0.3, 0.5, Q.UNKNOWN, (0.3, 0.5)),
    ],
)
def test_adjust_thresholds(sim: float, rr: float, intent: Q, expected: tuple[float, float]) -> None:
    assert adjust_thresholds(sim, rr, intent, True) == pytest.approx(expected)
    assert adjust_thresholds(sim, rr, intent, False) == (sim, rr)


def test_adjust_thresholds_delta() -> None:
    assert adjust_thresholds(0.5, 0.5, Q.FOCUSED, True, delta=0.2) == pytest.approx((0.7, 0.7))


def test_adjust_per_doc_limit() -> None:
    assert adjust_per_doc_limit(1, Q.DOC_SPECIFIC, True) == 3
    assert adjust_per_doc_limit(5, Q.DOC_SPECIFIC, True) == 5
    assert adjust_per_doc_limit(0, Q.DOC_SPECIFIC, True) == 0  # unlimited stays unlimited
    assert adjust_per_doc_limit(1, Q.BROAD, True) == 1
    assert adjust_per_doc_limit(1, Q.DOC_SPECIFIC, False) == 1


def _hits(spec: list[tuple[str, float | None]]) -> list[SearchHit]:
    return [
        SearchHit(
            chunk=Chunk(id=f"{doc}#{i}", doc_id=doc, text=f"{doc} 文本 {i}"), score=1 - i / 10, vector_score=v
        )
        for i, (doc, v) in enumerate(spec)
    ]


def test_apply_min_similarity_keeps_bm25_only_hits() -> None:
    hits = _hits([("a", 0.9), ("b", 0.2), ("c", None)])
    assert [h.chunk.doc_id for h in apply_min_similarity(hits, 0.5)] == ["a", "c"]


def test_apply_per_doc_limit() -> None:
    hits = _hits([("a", 1), ("a", 1), ("a", 1), ("b", 1), ("c", 1)])
    assert [h.chunk.doc_id for h in apply_per_doc_limit(hits, 1, 10)] == ["a", "b", "c"]
    assert [h.chunk.doc_id for h in apply_per_doc_limit(hits, 2, 3)] == ["a", "a", "b"]
    assert len(apply_per_doc_limit(hits, 0, 4)) == 4


class KB:
    name = "kb"
    path = None

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.calls: list[dict[str, Any]] = []

    def search(self, query: str, **kwargs: Any) -> list[SearchHit]:
        self.calls.append(kwargs)
        return self.hits[: kwargs["top_k"]]


def _settings(**sections: dict[str, Any]) -> Settings:
    return Settings(**sections)  # type: ignore[arg-type]


def test_pipeline_defaults_are_plain_search() -> None:
    kb = KB(_hits([("a", 0.9), ("a", 0.8), ("b", 0.7)]))
    result = RetrievalPipeline(lambda: _settings()).search(kb, "随便看看", top_k=2)
    assert [h.id for h in result.hits] == ["a#0", "a#1"]
    assert result.intent is Q.UNKNOWN and result.message is None
    assert kb.calls[0]["top_k"] == 2 and kb.calls[0]["rrf_k"] == 60


def test_doc_specific_raises_per_doc_limit_in_pipeline() -> None:
    kb = KB(_hits([("a", 0.9)] * 4 + [("b", 0.5)]))
    cfg = _settings(adaptive={"per_doc_limit": 1, "dynamic_threshold_enabled": True})
    searcher = RetrievalPipeline(lambda: cfg)
    plain = searcher.search(kb, "检索模式", top_k=5)
    assert [h.chunk.doc_id for h in plain.hits] == ["a", "b"]
    specific = searcher.search(kb, "这份文档里的检索模式", top_k=5)
    assert specific.intent is Q.DOC_SPECIFIC and specific.params["per_doc_limit"] == 3
    assert [h.chunk.doc_id for h in specific.hits] == ["a", "a", "a", "b"]


def test_config_is_read_per_search() -> None:
    box = {"cfg": _settings()}
    searcher = RetrievalPipeline(lambda: box["cfg"])
    kb = KB(_hits([("a", 0.9)]))
    searcher.search(kb, "q")
    box["cfg"] = _settings(retrieval={"rrf_k": 5, "fusion": "rrf"})
    assert searcher.search(kb, "q").params["rrf_k"] == 5
    assert kb.calls[-1]["fusion"] == "rrf"


def test_dynamic_rerank_threshold_triggers_fallback_logged(caplog: Any) -> None:
    class R:
        name = "r"

        def score(self, query: str, texts: list[str]) -> list[float]:
            return [0.52] * len(texts)

    kb = KB(_hits([("a", 0.9), ("b", 0.8), ("c", 0.7)]))
    cfg = _settings(rerank={"enabled": True}, adaptive={"dynamic_threshold_enabled": True})
    searcher = RetrievalPipeline(lambda: cfg, reranker_factory=lambda c: R())
    assert len(searcher.search(kb, "介绍一下", top_k=3).hits) == 3  # broad: 0.45 → all pass
    focused = searcher.search(kb, "如何安装", top_k=3)  # focused: 0.55 → none pass → fallback 2
    assert focused.diagnostics["fallback"] is True and len(focused.hits) == 2
    assert any(getattr(r, "threshold_adjusted", False) for r in caplog.records)
