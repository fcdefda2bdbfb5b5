"""Pseudo-relevance feedback maths: document weights, RM3 query, Rocchio vector, parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.config import FeedbackSettings
from zhiwen.errors import InvalidParameter
from zhiwen.retrieve.feedback import (
    FeedbackParams,
    doc_weights,
    relevance_model,
    rm3_query,
    rocchio,
)

scores = st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=30)


# -- document weights ----------------------------------------------------------------------------
@given(scores, st.floats(min_value=0.0, max_value=1.0))
def test_doc_weights_are_a_distribution_in_score_order(xs: list[float], floor: float) -> None:
    w = doc_weights(xs, floor)
    assert len(w) == len(xs)
    assert math.isclose(sum(w), 1.0, rel_tol=1e-9)
    assert all(x >= 0 for x in w)
    for i in range(len(xs)):
        for j in range(len(xs)):
            if xs[i] > xs[j]:
                assert w[i] >= w[j]


def test_doc_weights_floor_and_ties() -> None:
    w = doc_weights([1.0, 0.5, 0.0], floor=0.5)
    assert w[0] == pytest.approx(2 * w[2])  # the weakest weighs `floor` of the best
    assert doc_weights([0.3, 0.3]) == [0.5, 0.5]
    assert doc_weights([]) == []
    assert doc_weights([float("nan"), 1.0]) == pytest.approx([1 / 3, 2 / 3])


# -- RM3 -------------------------------------------------------------------------------------------
DOCS = [["国足", "主教练", "李铁", "国足"], ["李铁", "主教练", "任命"], ["足协", "的", "公告"]]


def test_relevance_model_is_weighted_term_frequency() -> None:
    model = relevance_model(DOCS[:2], [0.5, 0.5], min_term_chars=2)
    assert model["国足"] == pytest.approx(0.5 * 2 / 4)
    assert model["李铁"] == pytest.approx(0.5 / 4 + 0.5 / 3)
    assert "的" not in relevance_model(DOCS, [1 / 3] * 3, min_term_chars=2)  # single characters dropped


def test_rm3_interpolates_original_and_expansion_terms() -> None:
    p = FeedbackParams(terms=3, query_weight=0.6)
    out = dict(rm3_query(["国足", "教练"], DOCS, doc_weights([3.0, 2.0, 1.0]), p))
    assert math.isclose(sum(out.values()), 1.0)
    assert out["教练"] == pytest.approx(0.3)  # λ / |q|, not in any feedback passage
    assert out["国足"] > 0.3  # original and expansion weight add up
    assert len(out) == 2 + 2  # 3 expansion terms, one of them (国足) already in the query
    assert "李铁" in out


def test_rm3_degenerate_settings_give_the_original_query() -> None:
    original = [("国足", 0.5), ("教练", 0.5)]
    assert rm3_query(["国足", "教练", "国足"], DOCS, [1 / 3] * 3, FeedbackParams(terms=0)) == original
    assert rm3_query(["国足", "教练"], DOCS, [1 / 3] * 3, FeedbackParams(query_weight=1.0)) == original
    assert rm3_query(["国足", "教练"], [], [], FeedbackParams()) == original
    only_feedback = rm3_query([], DOCS[:1], [1.0], FeedbackParams(terms=2))
    assert [t for t, _ in only_feedback] == ["国足", "主教练"]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["甲乙", "丙丁", "戊己", "庚辛", "壬癸", "子"]), max_size=8), max_size=6
    ),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=0, max_value=5),
)
def test_rm3_weights_sum_to_one(docs: list[list[str]], lam: float, n_terms: int) -> None:
    p = FeedbackParams(terms=n_terms, query_weight=lam)
    out = rm3_query(["甲乙"], docs, doc_weights([1.0] * len(docs)) if docs else [], p)
    assert math.isclose(sum(w for _, w in out), 1.0, rel_tol=1e-9)
    assert len(out) <= 1 + n_terms
    assert dict(out)["甲乙"] >= lam - 1e-12


# -- Rocchio ---------------------------------------------------------------------------------------
unit_vectors = st.lists(st.floats(min_value=-1, max_value=1), min_size=4, max_size=4).filter(
    lambda v: np.linalg.norm(v) > 0.1
)


@settings(max_examples=100, deadline=None)
@given(unit_vectors, st.lists(unit_vectors, min_size=1, max_size=5), st.floats(min_value=0.0, max_value=1.0))
def test_rocchio_is_a_unit_vector_between_query_and_centroid(
    q: list[float], docs: list[list[float]], beta: float
) -> None:
    qv = np.array(q, np.float32)
    mat = np.array(docs, np.float32)
    out = rocchio(qv, mat, doc_weights([1.0] * len(docs)), beta)
    assert out.dtype == np.float32
    assert np.linalg.norm(out) == pytest.approx(1.0, abs=1e-4) or np.linalg.norm(out) == 0
    qn = qv / np.linalg.norm(qv)
    centroid = (mat / np.linalg.norm(mat, axis=1, keepdims=True)).mean(axis=0)
    if np.linalg.norm(centroid) > 1e-3 and np.linalg.norm(out) > 0:
        cn = centroid / np.linalg.norm(centroid)
        # moving towards the centroid never takes the query further from it
        assert float(out @ cn) >= float(qn @ cn) - 1e-4


def test_rocchio_extremes() -> None:
    q = np.array([1, 0, 0, 0], np.float32)
    docs = np.array([[0, 1, 0, 0], [0, 0, 1, 0]], np.float32)
    assert rocchio(q, docs, [0.5, 0.5], 0.0) == pytest.approx(q)
    assert rocchio(q, docs, [0.5, 0.5], 1.0) == pytest.approx(np.array([0, 1, 1, 0]) / math.sqrt(2))
    assert rocchio(q, np.zeros((0, 4), np.float32), [], 0.5) == pytest.approx(q)
    with pytest.raises(ValueError):
        rocchio(q, docs, [1.0], 0.5)


# -- parameters ------------------------------------------------------------------------------------
def test_params_defaults_come_from_the_settings() -> None:
    s = FeedbackSettings()
    p = FeedbackParams()
    assert (p.enabled, p.docs, p.terms, p.query_weight, p.vector_weight) == (
        s.enabled,
        s.docs,
        s.terms,
        s.query_weight,
        s.vector_weight,
    )
    assert FeedbackParams.from_mapping(s.model_dump()) == p


def test_params_from_mapping_and_validation() -> None:
    p = FeedbackParams.from_mapping({"terms": 30, "unknown": 1, "docs": None})
    assert p.terms == 30 and p.docs == FeedbackParams().docs
    assert FeedbackParams.from_mapping({"enabled": False}, base=p) == FeedbackParams(terms=30, enabled=False)
    assert p.to_dict()["terms"] == 30
    for bad in ({"docs": 0}, {"query_weight": 1.5}, {"terms": "many"}, {"enabled": "yes"}):
        with pytest.raises(InvalidParameter) as err:
            FeedbackParams.from_mapping(bad)
        assert "伪相关反馈参数无效" in err.value.message
