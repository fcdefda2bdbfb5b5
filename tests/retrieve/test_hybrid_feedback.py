"""HybridRetriever's feedback pass, BM25 parameters and dense coverage over in-memory stores."""

from __future__ import annotations

import numpy as np
import pytest

from retrieve.fakes import FakeEmbedder, FakeStore, FeedbackFakeStore, SplitTokenizer
from zhiwen.config import RetrievalSettings
from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.hybrid import HybridRetriever

VOCAB = {"chicken": 0, "tofu": 1, "soup": 2, "rice": 3}
DOCS = {
    "a#0": ("chicken kungpao peanuts rice", {"category": "meat"}),
    "b#0": ("kungpao peanuts chili", {"category": "meat"}),
    "c#0": ("tofu soup", {"category": "soup"}),
    "d#0": ("rice bowl", {"category": "staple"}),
    "e#0": ("kungpao peanuts tofu", {"category": "vegetable"}),
}
ON = FeedbackParams(docs=1, terms=5, query_weight=0.5, vector_weight=0.5)
OFF = FeedbackParams(enabled=False)


def fill(store: FakeStore) -> FakeStore:
    emb = FakeEmbedder(VOCAB)
    chunks = [Chunk(id=cid, doc_id=cid.split("#")[0], text=t, metadata=m) for cid, (t, m) in DOCS.items()]
    store.upsert(
        chunks, tokens=[c.text.split() for c in chunks], vectors=emb.embed_passages([c.text for c in chunks])
    )
    return store


@pytest.fixture
def store() -> FeedbackFakeStore:
    st = FeedbackFakeStore(dim=4)
    fill(st)
    return st


def retriever(store: FakeStore, **kwargs: object) -> HybridRetriever:
    return HybridRetriever(store, SplitTokenizer(), FakeEmbedder(VOCAB), kb_name="unit", **kwargs)  # type: ignore[arg-type]


def ids(result: object) -> list[str]:
    return [h.chunk.id for h in result.hits]  # type: ignore[attr-defined]


def text_calls(store: FakeStore) -> list[tuple]:
    return [args for name, args in store.calls if name == "search_text"]


def test_rm3_brings_in_passages_that_share_the_top_passage_words(store: FeedbackFakeStore) -> None:
    plain = retriever(store).run_detailed("chicken", mode="bm25", top_k=5, feedback=OFF)
    assert ids(plain) == ["a#0"] and plain.feedback is None
    store.calls.clear()
    result = retriever(store).run_detailed("chicken", mode="bm25", top_k=5, feedback=ON)
    assert ids(result)[0] == "a#0"
    assert {"b#0", "e#0"} <= set(ids(result))  # kungpao peanuts: learned from a#0
    assert result.feedback is not None and result.feedback["changed"] and result.feedback["docs"] == 1
    assert "kungpao" in result.feedback["terms"] and "chicken" in result.feedback["terms"]
    first, second = text_calls(store)
    assert first[5] is None  # the first pass is the plain query
    tokens, weights = second[0], second[5]
    assert len(tokens) == len(weights) and sum(weights) == pytest.approx(1.0)
    assert dict(zip(tokens, weights, strict=True))["chicken"] > 0.5  # λ plus its own feedback weight
    assert "feedback" in result.timings


def test_feedback_off_is_one_pass(store: FeedbackFakeStore) -> None:
    r = retriever(store, feedback=OFF)
    assert not r.feedback.enabled
    result = r.run_detailed("chicken rice", mode="hybrid", top_k=5)
    assert len(text_calls(store)) == 1 and result.feedback is None and "feedback" not in result.timings


def test_settings_switch_feedback_off() -> None:
    st = fill(FeedbackFakeStore())
    r = HybridRetriever(
        st, SplitTokenizer(), FakeEmbedder(VOCAB), settings=RetrievalSettings(feedback={"enabled": False})
    )  # type: ignore[arg-type]
    assert r.feedback == FeedbackParams(enabled=False)


def test_rocchio_moves_the_dense_query_towards_the_top_passages(store: FeedbackFakeStore) -> None:
    plain = retriever(store).run_detailed("chicken", mode="dense", top_k=5, feedback=OFF)
    result = retriever(store).run_detailed("chicken", mode="dense", top_k=5, feedback=ON)
    # d#0 (rice) is unrelated to "chicken" but close to a#0 (chicken … rice), the top passage
    assert ids(plain).index("d#0") > ids(plain).index("c#0")
    assert ids(result).index("d#0") < ids(result).index("c#0")
    assert result.feedback is not None and result.feedback["vectors"] == 1
    assert ("get_vectors", ["a#0"]) in store.calls


def test_hybrid_feeds_both_branches_from_the_fused_list(store: FeedbackFakeStore) -> None:
    result = retriever(store).run_detailed("chicken", mode="hybrid", top_k=5, feedback=ON)
    assert len(text_calls(store)) == 2
    assert sum(1 for name, _ in store.calls if name == "search_vector") == 2
    assert result.feedback is not None and {"terms", "vectors"} <= set(result.feedback)
    assert result.hits[0].chunk.id == "a#0" and result.hits[0].fused_score is not None


def test_second_pass_keeps_the_filter(store: FeedbackFakeStore) -> None:
    result = retriever(store).run_detailed(
        "chicken", mode="bm25", top_k=5, feedback=ON, filters={"category": "meat"}
    )
    assert set(ids(result)) == {"a#0", "b#0"}  # e#0 (vegetable) shares the words but is filtered out
    assert all(args[2] is not None for args in text_calls(store))


def test_store_without_term_weights_skips_lexical_feedback() -> None:
    st = fill(FakeStore())
    result = retriever(st).run_detailed("chicken", mode="bm25", top_k=5, feedback=ON)
    assert ids(result) == ["a#0"] and len(text_calls(st)) == 1
    assert result.feedback is not None and result.feedback["bm25"] == "unsupported"
    dense = retriever(st).run_detailed("chicken", mode="dense", top_k=5, feedback=ON)
    assert dense.feedback is not None and "vectors" not in dense.feedback  # it gives none back


def test_a_failing_second_pass_keeps_the_first(store: FeedbackFakeStore) -> None:
    class Flaky(FeedbackFakeStore):
        def search_text(self, tokens, k, filters=None, **kw):  # type: ignore[no-untyped-def,override]
            if kw.get("weights") is not None:
                raise RuntimeError("postings gone")
            return super().search_text(tokens, k, filters, **kw)

    st = fill(Flaky())
    result = retriever(st).run_detailed("chicken", mode="bm25", top_k=5, feedback=ON)
    assert ids(result) == ["a#0"]
    assert result.feedback is not None and result.feedback["bm25"].startswith("failed: RuntimeError")


def test_bm25_params_reach_stores_that_take_them(store: FeedbackFakeStore) -> None:
    retriever(store).run_detailed("chicken", mode="bm25", top_k=3, feedback=OFF, bm25_params=(0.9, 0.4))
    assert text_calls(store)[0][3:5] == (0.9, 0.4)
    store.calls.clear()
    retriever(store).run_detailed("chicken", mode="bm25", top_k=3, feedback=OFF, bm25_params=(None, 0.5))
    assert text_calls(store)[0][3:5] == (1.5, 0.5)  # the missing one is the default
    store.calls.clear()
    retriever(store).run_detailed("chicken", mode="bm25", top_k=3, feedback=OFF)
    assert text_calls(store)[0][3:5] == (None, None)  # nothing set: the store's own
    s = RetrievalSettings(bm25_k1=1.2)
    HybridRetriever(store, SplitTokenizer(), settings=s, feedback=OFF).run_detailed("chicken", mode="bm25")
    assert text_calls(store)[-1][3:5] == (1.2, 0.75)
    with pytest.raises(InvalidParameter):
        retriever(store).run_detailed("chicken", mode="bm25", bm25_params=(1.0, 2.0))
    plain = fill(FakeStore())  # no k1/b keywords: not passed, no error
    assert ids(retriever(plain).run_detailed("chicken", mode="bm25", feedback=OFF, bm25_params=(0.9, 0.4)))


def test_dense_coverage(store: FeedbackFakeStore) -> None:
    r = retriever(store, feedback=OFF)
    assert r.run_detailed("chicken", mode="hybrid").dense_coverage == 1.0
    store.with_vectors = {"a#0", "b#0"}
    r2 = retriever(store, feedback=OFF)
    assert r2.run_detailed("chicken", mode="bm25").dense_coverage == pytest.approx(2 / 5)
    store.with_vectors = set()
    assert retriever(store, feedback=OFF).run_detailed("chicken", mode="bm25").dense_coverage is None
    lexical = fill(FeedbackFakeStore(dim=None))
    no_vectors = HybridRetriever(lexical, SplitTokenizer(), None, feedback=OFF)
    assert no_vectors.run_detailed("chicken", mode="hybrid").dense_coverage is None


def test_coverage_is_cached_briefly(store: FeedbackFakeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    r = retriever(store, feedback=OFF)
    calls = []
    monkeypatch.setattr(store, "vector_count", lambda: calls.append(1) or 5)
    for _ in range(5):
        r.run_detailed("chicken", mode="bm25")
    assert len(calls) == 1


def test_query_vector_given_feedback_still_runs(store: FeedbackFakeStore) -> None:
    emb = FakeEmbedder(VOCAB)
    r = HybridRetriever(store, SplitTokenizer(), emb)
    result = r.run_detailed(
        "chicken", mode="dense", query_vector=np.array([1, 0, 0, 0], np.float32), feedback=ON
    )
    assert emb.queries == [] and result.feedback is not None and result.feedback["vectors"] == 1
