"""Parent aggregation: count of matched children first, then best score, then retrieval order."""

from __future__ import annotations

from retrieve.fakes import FakeStore
from zhiwen.documents import Chunk, Document, SearchHit
from zhiwen.retrieve.parents import aggregate_parents, group_by_parent, rank_parents


def hit(chunk_id: str, score: float, parent: str | None = None, text: str = "") -> SearchHit:
    doc_id = chunk_id.split("#")[0]
    chunk = Chunk(id=chunk_id, doc_id=doc_id, text=text or chunk_id, parent_id=parent, title=doc_id)
    return SearchHit(chunk=chunk, score=score)


def store_with(*doc_ids: str) -> FakeStore:
    st = FakeStore()
    st.parents = {d: Document(id=d, text=f"全文 {d}", title=d) for d in doc_ids}
    return st


def test_more_matched_children_rank_first() -> None:
    hits = [hit("a#0", 0.9, "a"), hit("b#0", 0.8, "b"), hit("b#1", 0.7, "b"), hit("c#0", 0.6, "c")]
    parents = aggregate_parents(hits, store_with("a", "b", "c"), top_k=3)
    assert [p.id for p in parents] == ["b", "a", "c"]
    assert parents[0].score == 0.8 and [h.id for h in parents[0].matched_chunks] == ["b#0", "b#1"]
    assert parents[0].document.text == "全文 b"


def test_ties_on_count_broken_by_best_score_then_order() -> None:
    hits = [hit("a#0", 0.5, "a"), hit("b#0", 0.9, "b"), hit("c#0", 0.9, "c")]
    assert [p.id for p in aggregate_parents(hits, store_with("a", "b", "c"), top_k=5)] == ["b", "c", "a"]


def test_top_k_and_empty() -> None:
    hits = [hit(f"d{i}#0", 1.0 - i / 10, f"d{i}") for i in range(5)]
    assert len(aggregate_parents(hits, store_with(*[f"d{i}" for i in range(5)]), top_k=2)) == 2
    assert aggregate_parents([], store_with(), top_k=3) == []
    assert aggregate_parents(hits, store_with(), top_k=0) == []


def test_missing_parent_uses_children_and_doc_id_fallback() -> None:
    hits = [hit("x#1", 0.4, None, "第二段"), hit("x#0", 0.6, None, "第一段")]
    (parent,) = aggregate_parents(hits, store_with(), top_k=1)
    assert parent.id == "x" and parent.document.text == "第一段\n\n第二段"
    assert parent.score == 0.6


def test_group_and_rank_helpers() -> None:
    hits = [hit("a#0", 0.1, "a"), hit("b#0", 0.2, "b"), hit("a#1", 0.05, "a")]
    groups = group_by_parent(hits)
    assert list(groups) == ["a", "b"] and len(groups["a"]) == 2
    assert rank_parents(groups) == ["a", "b"]
