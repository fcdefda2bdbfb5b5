"""BM25 k1/b per query and weighted query terms: the index maths and the embedded store's search_text."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.documents import Chunk
from zhiwen.store._bm25 import BM25Index, Postings, check_bm25_params, term_weights
from zhiwen.store.embedded import EmbeddedStore

# rows: 0 = "a a b", 1 = "b c", 2 = "c c c d"
ROWS = np.array([0, 0, 1, 1, 2, 2])
TERMS = np.array([0, 1, 1, 2, 2, 3])
TFS = np.array([2, 1, 1, 1, 3, 1])
LENGTHS = np.array([3, 2, 4], np.float32)
ALIVE = np.ones(3, bool)


def index() -> BM25Index:
    return BM25Index((Postings.build(ROWS, TERMS, TFS),), LENGTHS)


def lucene(tf: float, df: int, dl: float, k1: float, b: float, n: int = 3, avgdl: float = 3.0) -> float:
    idf = math.log1p((n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def scores(term_ids: list[int], **kw: object) -> dict[int, float]:
    pos, sc = index().top_k(term_ids, 10, alive=ALIVE, **kw)  # type: ignore[arg-type]
    return dict(zip(pos.tolist(), sc.tolist(), strict=True))


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (0.4, 0.75), (1.2, 0.0), (0.9, 1.0), (0.0, 0.5)])
def test_k1_b_follow_lucene(k1: float, b: float) -> None:
    got = scores([2], k1=k1, b=b)
    assert got[2] == pytest.approx(lucene(3, 2, 4, k1, b), rel=1e-5)
    assert got[1] == pytest.approx(lucene(1, 2, 2, k1, b), rel=1e-5)


def test_weights_scale_each_term() -> None:
    plain = scores([0, 2])
    assert scores([0, 2], weights=[1.0, 1.0]) == pytest.approx(plain)
    doubled = scores([0, 2], weights=[2.0, 1.0])
    assert doubled[0] == pytest.approx(2 * plain[0]) and doubled[2] == pytest.approx(plain[2])
    assert scores([0, 0, 2], weights=[1.0, 1.0, 1.0])[0] == pytest.approx(doubled[0])  # repeats add up
    assert 0 not in scores([0, 2], weights=[0.0, 1.0])  # weight 0 drops the term
    assert scores([0, 0]) == pytest.approx(scores([0]))  # without weights a repeat counts once


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0.01, 5.0)), min_size=1, max_size=6))
def test_weighted_score_is_the_weighted_sum_of_single_terms(query: list[tuple[int, float]]) -> None:
    terms = [t for t, _ in query]
    weights = [w for _, w in query]
    got = scores(terms, weights=weights)
    expected: dict[int, float] = {}
    for t, w in term_weights(terms, weights).items():
        for row, s in scores([t]).items():
            expected[row] = expected.get(row, 0.0) + w * s
    assert got.keys() == expected.keys()
    for row, s in expected.items():
        assert got[row] == pytest.approx(s, rel=1e-4)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError):
        term_weights([1, 2], [1.0])
    with pytest.raises(ValueError):
        check_bm25_params(1.0, 1.5)
    check_bm25_params(0.0, 0.0)


def test_embedded_search_text_takes_k1_b_and_weights(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "store", dim=None)
    try:
        chunks = [
            Chunk(id=f"c{i}", doc_id=f"d{i}", text=t)
            for i, t in enumerate(["甲 甲 乙", "乙 丙", "丙 丙 丙 丁"])
        ]
        store.upsert(chunks, tokens=[c.text.split() for c in chunks])
        default = dict(store.search_text(["丙"], 10))
        assert default["c2"] == pytest.approx(lucene(3, 2, 4, 1.5, 0.75), rel=1e-5)
        tuned = dict(store.search_text(["丙"], 10, k1=0.4, b=0.3))
        assert tuned["c2"] == pytest.approx(lucene(3, 2, 4, 0.4, 0.3), rel=1e-5)
        weighted = dict(store.search_text(["甲", "未知", "丙"], 10, weights=[3.0, 5.0, 1.0]))
        assert weighted["c0"] == pytest.approx(3 * dict(store.search_text(["甲"], 10))["c0"], rel=1e-5)
        assert weighted["c2"] == pytest.approx(default["c2"], rel=1e-5)  # unknown tokens keep alignment
    finally:
        store.close()
