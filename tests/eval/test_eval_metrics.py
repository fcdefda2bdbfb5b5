"""nDCG / Recall / MRR: hand-computed examples and hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.eval.metrics import mrr_at_k, ndcg_at_k, recall_at_k, score_run

DOCS = [f"d{i}" for i in range(12)]


def test_hand_computed_binary() -> None:
    ranking = ["d3", "d1", "d9", "d2"]
    judged = {"d1": 1, "d2": 1}
    # DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(ranking, judged, 10) == pytest.approx(expected)
    assert recall_at_k(ranking, judged, 10) == 1.0
    assert recall_at_k(ranking, judged, 2) == 0.5
    assert mrr_at_k(ranking, judged, 10) == 0.5
    assert mrr_at_k(ranking, judged, 1) == 0.0


def test_hand_computed_graded() -> None:
    ranking = ["a", "b", "c"]
    judged = {"a": 1, "b": 0, "c": 2, "z": 3}
    dcg = 1 / math.log2(2) + 0 + 2 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(ranking, judged, 3) == pytest.approx(dcg / idcg)
    # grade 0 is "judged non-relevant": not counted in recall's denominator
    assert recall_at_k(ranking, judged, 3) == pytest.approx(2 / 3)
    assert mrr_at_k(ranking, judged, 3) == 1.0


def test_duplicates_count_once() -> None:
    # two chunks of the same relevant passage must not inflate the score
    judged = {"d1": 1}
    assert ndcg_at_k(["d1", "d1", "d2"], judged, 10) == 1.0
    assert recall_at_k(["d1", "d1"], judged, 10) == 1.0
    # a duplicate does not take a rank: d2 is at rank 2 after dedup
    assert mrr_at_k(["d0", "d0", "d2"], {"d2": 1}, 10) == 0.5


def test_no_relevant_scores_zero() -> None:
    assert ndcg_at_k(["d1"], {}, 10) == 0.0
    assert recall_at_k(["d1"], {"d1": 0}, 10) == 0.0
    assert mrr_at_k([], {"d1": 1}, 10) == 0.0


def test_score_run_vectorised_matches_single() -> None:
    run = {"q1": ["d3", "d1", "d9"], "q2": ["d2"], "q3": []}
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d2": 2}, "q3": {"d5": 1}}
    s = score_run(run, qrels, k=10)
    assert s.query_ids == ("q1", "q2", "q3")
    for i, q in enumerate(s.query_ids):
        assert s.ndcg[i] == pytest.approx(ndcg_at_k(run[q], qrels[q], 10))
        assert s.recall[i] == pytest.approx(recall_at_k(run[q], qrels[q], 10))
        assert s.mrr[i] == pytest.approx(mrr_at_k(run[q], qrels[q], 10))
    m = s.means()
    assert set(m) == {"ndcg@10", "recall@10", "mrr@10"}
    assert m["mrr@10"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def test_bad_k() -> None:
    with pytest.raises(ValueError):
        score_run({"q": ["a"]}, {"q": {"a": 1}}, k=0)


rankings = st.lists(st.sampled_from(DOCS), max_size=15)
judgements = st.dictionaries(st.sampled_from(DOCS), st.integers(min_value=0, max_value=3), max_size=8)
ks = st.integers(min_value=1, max_value=12)


@settings(max_examples=200, deadline=None)
@given(rankings, judgements, ks)
def test_bounds(ranking: list[str], judged: dict[str, int], k: int) -> None:
    for value in (
        ndcg_at_k(ranking, judged, k),
        recall_at_k(ranking, judged, k),
        mrr_at_k(ranking, judged, k),
    ):
        assert 0.0 <= value <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(judgements, ks)
def test_perfect_ranking_is_one(judged: dict[str, int], k: int) -> None:
    ideal = sorted((d for d, g in judged.items() if g > 0), key=lambda d: -judged[d])
    if not ideal:
        return
    assert ndcg_at_k(ideal, judged, k) == pytest.approx(1.0)
    assert mrr_at_k(ideal, judged, k) == 1.0
    n_rel = len(ideal)
    assert recall_at_k(ideal, judged, k) == pytest.approx(min(k, n_rel) / n_rel)


@settings(max_examples=200, deadline=None)
@given(rankings, judgements, ks)
def test_irrelevant_only_is_zero(ranking: list[str], judged: dict[str, int], k: int) -> None:
    ranking = [d for d in ranking if judged.get(d, 0) <= 0]
    assert ndcg_at_k(ranking, judged, k) == 0.0
    assert recall_at_k(ranking, judged, k) == 0.0
    assert mrr_at_k(ranking, judged, k) == 0.0


@settings(max_examples=200, deadline=None)
@given(rankings, judgements, ks)
def test_monotone_in_k(ranking: list[str], judged: dict[str, int], k: int) -> None:
    # recall and MRR can only grow when more of the list is looked at
    assert recall_at_k(ranking, judged, k + 1) >= recall_at_k(ranking, judged, k) - 1e-12
    assert mrr_at_k(ranking, judged, k + 1) >= mrr_at_k(ranking, judged, k) - 1e-12


@settings(max_examples=200, deadline=None)
@given(rankings, judgements, ks, st.data())
def test_promoting_a_relevant_doc_never_hurts(
    ranking: list[str], judged: dict[str, int], k: int, data: st.DataObject
) -> None:
    ranking = list(dict.fromkeys(ranking))
    relevant_positions = [i for i, d in enumerate(ranking) if judged.get(d, 0) > 0]
    if not relevant_positions:
        return
    i = data.draw(st.sampled_from(relevant_positions))
    # with graded qrels a lower grade jumping a higher one can lower nDCG; jump only lower grades
    if any(judged.get(d, 0) > judged[ranking[i]] for d in ranking[:i]):
        return
    promoted = [ranking[i], *ranking[:i], *ranking[i + 1 :]]
    assert ndcg_at_k(promoted, judged, k) >= ndcg_at_k(ranking, judged, k) - 1e-12
    assert mrr_at_k(promoted, judged, k) >= mrr_at_k(ranking, judged, k) - 1e-12


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(rankings, judgements), min_size=1, max_size=6), ks)
def test_mean_of_vectorised_equals_mean_of_singles(
    pairs: list[tuple[list[str], dict[str, int]]], k: int
) -> None:
    run = {f"q{i}": r for i, (r, _) in enumerate(pairs)}
    qrels = {f"q{i}": j for i, (_, j) in enumerate(pairs)}
    s = score_run(run, qrels, k)
    singles = np.array([ndcg_at_k(r, j, k) for r, j in pairs])
    assert s.ndcg == pytest.approx(singles)
