"""MMR (seed 004 §4.2): λ=1 keeps the ranking, smaller λ pushes near-duplicates apart."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.documents import Chunk, SearchHit
from zhiwen.retrieve.mmr import lexical_vectors, mmr_order, mmr_select, normalise


def hit(i: int, text: str, score: float) -> SearchHit:
    return SearchHit(chunk=Chunk(id=f"c{i}", doc_id=f"d{i}", text=text), score=score)


def test_docstring_example() -> None:
    sim = np.array([[1, 0.98, 0], [0.98, 1, 0], [0, 0, 1]])
    assert mmr_order([1.0, 0.99, 0.5], sim, 0.5, 2) == [0, 2]
    assert mmr_order([1.0, 0.99, 0.5], sim, 1.0, 2) == [0, 1]


def test_select_demotes_near_duplicates() -> None:
    hits = [
        hit(0, "宫保鸡丁的做法：鸡胸肉切丁，花生米炸香。", 1.0),
        hit(1, "宫保鸡丁的做法：鸡胸肉切丁，花生米炸香！", 0.95),
        hit(2, "红烧肉需要五花肉、冰糖和生抽。", 0.9),
    ]
    assert [h.id for h in mmr_select(hits, 1.0, 2)] == ["c0", "c1"]
    assert [h.id for h in mmr_select(hits, 0.5, 2)] == ["c0", "c2"]


def test_edge_cases() -> None:
    assert mmr_order([], np.zeros((0, 0)), 0.5, 3) == []
    assert mmr_select([hit(0, "a", 1.0)], 0.5, 5)[0].id == "c0"
    assert mmr_select([hit(0, "a", 1.0), hit(1, "b", 0.5)], 0.5, 0) == []
    assert list(normalise([2.0, 2.0])) == [1.0, 1.0]
    assert list(normalise([1.0, 3.0, 2.0])) == [0.0, 1.0, 0.5]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=30), st.floats(0, 1))
def test_order_is_a_permutation_prefix(scores: list[float], lam: float) -> None:
    rng = np.random.default_rng(len(scores))
    vecs = rng.normal(size=(len(scores), 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    k = max(1, len(scores) // 2)
    order = mmr_order(normalise(scores), vecs @ vecs.T, lam, k)
    assert len(order) == k == len(set(order))
    # the first pick is the most relevant item as MMR sees it (scores within 1e-12 tie)
    assert order[0] == int(np.argmax(normalise(scores)))


def test_lexical_vectors_feed_mmr() -> None:
    """Lexical vectors stand in for embeddings (their cost is bench/'s business, not a test's)."""
    texts = [f"第{i}段：" + "检索增强生成的中文文本片段" * 20 for i in range(50)]
    vecs = lexical_vectors(texts)
    order = mmr_order(np.linspace(1, 0, 50), vecs @ vecs.T, 0.7, 10)
    assert vecs.shape == (50, 1024)
    assert len(order) == 10 == len(set(order))


def test_lexical_vectors() -> None:
    v = lexical_vectors(["宫保鸡丁", "宫保鸡丁", "红烧肉", "", "   "])
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0)
    assert float(v[0] @ v[1]) == pytest.approx(1.0)
    assert float(v[0] @ v[2]) < 0.3
    assert not v[3].any() and not v[4].any()


def test_custom_vectorize() -> None:
    hits = [hit(0, "a", 1.0), hit(1, "b", 0.9), hit(2, "c", 0.8)]
    same = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert [h.id for h in mmr_select(hits, 0.5, 2, vectorize=lambda texts: same)] == ["c0", "c2"]
    with pytest.raises(ValueError):
        mmr_select(hits, 0.5, 2, vectorize=lambda texts: np.zeros((2, 2)))
