"""Rank fusion: worked examples and Hypothesis properties (order invariance, monotonicity, bounds)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.errors import InvalidParameter
from zhiwen.retrieve.fusion import alpha_weights, fuse, normalise_minmax, rrf, weighted_minmax

Scored = list[tuple[str, float]]

ids = st.sampled_from([f"d{i}" for i in range(30)])


@st.composite
def ranking(draw: st.DrawFn) -> Scored:
    """A best-first list of distinct ids with non-increasing scores."""
    doc_ids = draw(st.lists(ids, unique=True, max_size=15))
    scores = sorted(
        draw(st.lists(st.floats(-50, 50, allow_nan=False), min_size=len(doc_ids), max_size=len(doc_ids))),
        reverse=True,
    )
    return list(zip(doc_ids, scores, strict=True))


rankings = st.lists(ranking(), min_size=1, max_size=4)
weight = st.floats(0.0, 5.0, allow_nan=False)


# -- examples ------------------------------------------------------------------------------------
def test_rrf_example() -> None:
    fused = rrf([[("a", 9.0), ("b", 5.0)], [("b", 0.9), ("c", 0.8)]], k=60)
    assert [i for i, _ in fused] == ["b", "a", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1][1] == pytest.approx(1 / 61)


def test_rrf_weights_and_k() -> None:
    bm25 = [("a", 3.0), ("b", 2.0)]
    dense = [("b", 0.9), ("a", 0.1)]
    assert rrf([bm25, dense], weights=(2.0, 1.0))[0][0] == "a"
    assert rrf([bm25, dense], weights=(1.0, 2.0))[0][0] == "b"
    assert rrf([[("x", 1.0)]], k=1)[0][1] == pytest.approx(0.5)


def test_rrf_duplicate_ids_use_best_rank() -> None:
    fused = rrf([[("a", 3.0), ("b", 2.0), ("a", 1.0)]], k=10)
    assert dict(fused)["a"] == pytest.approx(1 / 11)


def test_minmax_example() -> None:
    bm25 = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
    dense = [("c", 0.9), ("d", 0.5)]
    fused = dict(weighted_minmax([bm25, dense], weights=(0.5, 0.5)))
    assert fused == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 0.0})
    # ties broken by id
    assert [i for i, _ in weighted_minmax([bm25, dense], weights=(0.5, 0.5))] == ["a", "c", "b", "d"]


def test_minmax_weights_are_normalised() -> None:
    a = weighted_minmax([[("x", 3.0), ("y", 1.0)], [("y", 1.0), ("x", 0.0)]], weights=(3, 1))
    b = weighted_minmax([[("x", 3.0), ("y", 1.0)], [("y", 1.0), ("x", 0.0)]], weights=(0.75, 0.25))
    assert dict(a) == pytest.approx(dict(b))
    assert dict(a)["x"] == pytest.approx(0.75)


def test_normalise_constant_and_empty() -> None:
    assert normalise_minmax([]) == {}
    assert normalise_minmax([("a", 2.0), ("b", 2.0)]) == {"a": 1.0, "b": 1.0}
    assert normalise_minmax([("a", 4.0), ("b", 3.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_bad_parameters() -> None:
    with pytest.raises(InvalidParameter):
        rrf([[("a", 1.0)]], k=0)
    with pytest.raises(InvalidParameter):
        rrf([[("a", 1.0)]], weights=(1.0, 1.0))
    with pytest.raises(InvalidParameter):
        weighted_minmax([[("a", 1.0)], []], weights=(0.0, 0.0))
    with pytest.raises(InvalidParameter):
        weighted_minmax([[("a", 1.0)]], weights=(-1.0,))
    with pytest.raises(InvalidParameter):
        fuse([[("a", 1.0)]], "borda")
    with pytest.raises(InvalidParameter):
        alpha_weights(1.5)
    assert alpha_weights(0.7) == pytest.approx((0.3, 0.7))


def test_fuse_dispatch() -> None:
    lists = [[("a", 2.0), ("b", 1.0)], [("b", 1.0)]]
    assert fuse(lists, "rrf", k=5) == rrf(lists, k=5)
    assert fuse(lists, "weighted", weights=(1, 1)) == weighted_minmax(lists, weights=(1, 1))
    assert fuse([], "rrf") == [] and fuse([], "weighted") == []


# -- properties ----------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(rankings, st.randoms(use_true_random=False), st.integers(1, 100))
def test_rrf_order_invariant(lists: list[Scored], rnd: object, k: int) -> None:
    weights = [float(i + 1) for i in range(len(lists))]
    order = list(range(len(lists)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    a = rrf(lists, k=k, weights=weights)
    b = rrf([lists[i] for i in order], k=k, weights=[weights[i] for i in order])
    assert a == b


@settings(max_examples=100, deadline=None)
@given(rankings, st.randoms(use_true_random=False))
def test_minmax_order_invariant(lists: list[Scored], rnd: object) -> None:
    order = list(range(len(lists)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    weights = [float(i + 1) for i in range(len(lists))]
    a = weighted_minmax(lists, weights=weights)
    b = weighted_minmax([lists[i] for i in order], weights=[weights[i] for i in order])
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b])


@settings(max_examples=100, deadline=None)
@given(rankings, st.data(), st.integers(1, 100))
def test_rrf_monotone_in_rank(lists: list[Scored], data: st.DataObject, k: int) -> None:
    """Moving a document up in one list never lowers its fused score."""
    i = data.draw(st.integers(0, len(lists) - 1))
    ranking_i = lists[i]
    if len(ranking_i) < 2:
        return
    pos = data.draw(st.integers(1, len(ranking_i) - 1))
    new_pos = data.draw(st.integers(0, pos - 1))
    doc_id = ranking_i[pos][0]
    ids_i = [d for d, _ in ranking_i]
    ids_i.insert(new_pos, ids_i.pop(pos))
    improved = [(d, s) for d, (_, s) in zip(ids_i, ranking_i, strict=True)]
    before = dict(rrf(lists, k=k))[doc_id]
    after = dict(rrf([*lists[:i], improved, *lists[i + 1 :]], k=k))[doc_id]
    assert after >= before


@settings(max_examples=100, deadline=None)
@given(rankings, st.data())
def test_minmax_monotone_in_score(lists: list[Scored], data: st.DataObject) -> None:
    """Raising a non-top document's score (keeping the list sorted) never lowers its fused score."""
    i = data.draw(st.integers(0, len(lists) - 1))
    ranking_i = lists[i]
    if len(ranking_i) < 3:
        return
    pos = data.draw(st.integers(1, len(ranking_i) - 2))
    doc_id, score = ranking_i[pos]
    new_score = data.draw(st.floats(score, ranking_i[pos - 1][1], allow_nan=False))
    improved = list(ranking_i)
    improved[pos] = (doc_id, new_score)
    before = dict(weighted_minmax(lists))[doc_id]
    after = dict(weighted_minmax([*lists[:i], improved, *lists[i + 1 :]]))[doc_id]
    assert after >= before - 1e-12


@settings(max_examples=100, deadline=None)
@given(rankings, st.integers(1, 100))
def test_zero_weight_drops_branch(lists: list[Scored], k: int) -> None:
    extra = [(f"x{i}", 100.0 - i) for i in range(5)]
    weights = [1.0] * len(lists)
    assert rrf([*lists, extra], k=k, weights=[*weights, 0.0]) == rrf(lists, k=k, weights=weights)
    if any(lists):
        got = weighted_minmax([*lists, extra], weights=[*weights, 0.0])
        want = weighted_minmax(lists, weights=weights)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want])


@settings(max_examples=100, deadline=None)
@given(rankings, st.lists(weight, min_size=4, max_size=4))
def test_minmax_bounded_and_sorted(lists: list[Scored], ws: list[float]) -> None:
    w = ws[: len(lists)]
    if sum(w) == 0:
        w[0] = 1.0
    fused = weighted_minmax(lists, weights=w)
    assert all(0.0 <= s <= 1.0 for _, s in fused)
    keys = [(-s, i) for i, s in fused]
    assert keys == sorted(keys)  # best first, ties by id
    union = {d for r, x in zip(lists, w, strict=False) if x > 0 for d, _ in r}
    assert {i for i, _ in fused} == union


@settings(max_examples=100, deadline=None)
@given(rankings, st.integers(1, 100))
def test_rrf_deterministic_ties_and_union(lists: list[Scored], k: int) -> None:
    fused = rrf(lists, k=k)
    keys = [(-s, i) for i, s in fused]
    assert keys == sorted(keys)
    assert len({i for i, _ in fused}) == len(fused)
    assert {i for i, _ in fused} == {d for r in lists for d, _ in r}
    assert all(0 < s <= len(lists) / (k + 1) + 1e-12 for _, s in fused)
