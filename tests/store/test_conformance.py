"""The Store contract, run against every backend (``make_store`` is parametrised in conftest.py).

Only the :class:`zhiwen.store.base.Store` protocol is used here: a new backend passes this file
or it is not a backend. Data is small and hand-made; vectors have dim 8.
"""

from __future__ import annotations

import numpy as np
import pytest

from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter
from zhiwen.store._bm25 import K1 as BM25_K1
from zhiwen.store._bm25 import B as BM25_B
from zhiwen.store.base import Store, StoreFeatures
from zhiwen.store.filters import parse_filters

DIM = 8


def unit(i: int, j: int | None = None, w: float = 0.0) -> np.ndarray:
    """Basis vector e_i, optionally tilted towards e_j by weight w, L2-normalised."""
    v = np.zeros(DIM, np.float32)
    v[i] = 1.0
    if j is not None:
        v[j] = w
    return v / np.linalg.norm(v)


def chunk(cid: str, doc: str, text: str, **metadata: object) -> Chunk:
    return Chunk(id=cid, doc_id=doc, text=text, title=doc, parent_id=doc, metadata=dict(metadata))


# A small "recipe" corpus: tokens are given explicitly (the store never tokenises).
CHUNKS = [
    chunk("a#0", "a", "宫保鸡丁 鸡肉 花生", category="meat", difficulty=3, spicy=True, price=25.5),
    chunk("a#1", "a", "宫保鸡丁 做法 辣椒", category="meat", difficulty=3, spicy=True, price=25.5),
    chunk("b#0", "b", "番茄炒蛋 鸡蛋 番茄", category="egg", difficulty=1, spicy=False, price=9),
    chunk("c#0", "c", "西湖牛肉羹 牛肉 汤", category="soup", difficulty=2, spicy=False, price=18.0),
    chunk("d#0", "d", "麻婆豆腐 豆腐 辣椒 花椒", category="veg", difficulty=2, spicy=True, price=12),
    chunk("e#0", "e", "清炒时蔬 青菜", category="veg", difficulty=1, spicy=False),
]
TOKENS = [
    ["宫保", "鸡丁", "宫保鸡丁", "鸡肉", "花生"],
    ["宫保", "鸡丁", "宫保鸡丁", "做法", "辣椒"],
    ["番茄", "炒蛋", "番茄炒蛋", "鸡蛋", "番茄"],
    ["西湖", "牛肉", "牛肉羹", "牛肉", "汤"],
    ["麻婆", "豆腐", "麻婆豆腐", "豆腐", "辣椒", "花椒"],
    ["清炒", "时蔬", "青菜"],
]
VECTORS = np.stack([unit(0), unit(0, 1, 0.5), unit(2), unit(3), unit(4, 0, 0.2), unit(5)])
PARENTS = [Document(id=d, text=f"# {d}\n全文", title=d, metadata={"source": f"{d}.md"}) for d in "abcde"]
ALL_IDS = [c.id for c in CHUNKS]


@pytest.fixture
def store(make_store) -> Store:
    s = make_store(dim=DIM)
    s.upsert(CHUNKS, tokens=TOKENS, vectors=VECTORS, parents=PARENTS)
    return s


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert ids(got) == ids(want)
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-4)


def ids(scored: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in scored]


# -- round trip ---------------------------------------------------------------------------------
def test_protocol_and_dim(store: Store) -> None:
    assert isinstance(store, Store)
    assert store.dim == DIM


def test_features_are_declared_and_kept(store: Store) -> None:
    """A backend honours the search_text keywords its features offer and refuses the others."""
    features = store.features
    assert isinstance(features, StoreFeatures) and features.lexical_first
    tokens = ["辣椒", "鸡丁"]
    plain = store.search_text(tokens, k=5)
    assert plain
    for offered, kwargs in (
        (features.bm25_params, {"k1": BM25_K1, "b": BM25_B}),  # the defaults: the same ranking
        (features.term_weights, {"weights": [1.0, 1.0]}),
    ):
        if offered:
            assert ids(store.search_text(tokens, k=5, **kwargs)) == ids(plain)
        else:
            with pytest.raises(InvalidParameter):
                store.search_text(tokens, k=5, **kwargs)


def test_get_chunks_round_trip_with_metadata_types(store: Store) -> None:
    got = store.get_chunks(ALL_IDS)
    assert got == CHUNKS
    a0 = got[0].metadata
    assert a0 == {"category": "meat", "difficulty": 3, "spicy": True, "price": 25.5}
    assert type(a0["difficulty"]) is int and type(a0["spicy"]) is bool and type(a0["price"]) is float


def test_get_chunks_keeps_order_and_skips_unknown(store: Store) -> None:
    got = store.get_chunks(["c#0", "nope", "a#0"])
    assert [c.id for c in got] == ["c#0", "a#0"]
    assert store.get_chunks([]) == []


def test_nested_metadata_round_trip(make_store) -> None:
    s = make_store(dim=DIM)
    c = chunk("x#0", "x", "文本", tags=["川菜", "辣"], info={"k": [1, 2]}, empty=None, 名称="中文键")
    s.upsert([c], tokens=[["文本"]], vectors=unit(0)[None, :])
    assert s.get_chunks(["x#0"]) == [c]


def test_get_parents(store: Store) -> None:
    got = store.get_parents(["c", "zzz", "a"])
    assert [p.id for p in got] == ["c", "a"]
    assert got[1] == PARENTS[0]


def test_count_and_doc_ids(store: Store) -> None:
    assert store.count() == len(CHUNKS)
    assert store.doc_ids() == {"a", "b", "c", "d", "e"}


def test_stats(store: Store) -> None:
    st = store.stats()
    assert isinstance(st["backend"], str) and st["backend"]
    assert st["chunks"] == len(CHUNKS)
    assert st["documents"] == 5
    assert st["dim"] == DIM


# -- writes -------------------------------------------------------------------------------------
def test_document_level_replace_removes_stale_chunks(store: Store) -> None:
    new_a = chunk("a#0", "a", "宫保鸡丁 新版", category="meat", difficulty=4)
    store.upsert([new_a], tokens=[["宫保鸡丁", "新版"]], vectors=unit(7)[None, :])
    assert store.get_chunks(["a#0", "a#1"]) == [new_a]
    assert store.count() == len(CHUNKS) - 1
    # the stale chunk is gone from both branches, the new content is searchable
    assert "a#1" not in ids(store.search_text(["做法"], k=10))
    assert "a#1" not in ids(store.search_vector(unit(0, 1, 0.5), k=10))
    assert ids(store.search_text(["新版"], k=10)) == ["a#0"]
    assert ids(store.search_vector(unit(7), k=1)) == ["a#0"]
    # the other documents are untouched
    assert store.doc_ids() == {"a", "b", "c", "d", "e"}


def test_upsert_changed_chunk_replaces_content(store: Store) -> None:
    changed = chunk("b#0", "b", "番茄炒蛋 加糖", category="egg", difficulty=2)
    store.upsert([changed], tokens=[["番茄炒蛋", "加糖"]], vectors=unit(6)[None, :])
    assert store.get_chunks(["b#0"]) == [changed]
    assert ids(store.search_text(["加糖"], k=5)) == ["b#0"]
    assert store.search_text(["鸡蛋"], k=5) == []
    assert ids(store.search_vector(unit(6), k=1)) == ["b#0"]
    assert ids(store.search_text(["番茄炒蛋"], k=5, filters=parse_filters({"difficulty": 2}))) == ["b#0"]
    assert store.search_text(["番茄炒蛋"], k=5, filters=parse_filters({"difficulty": 1})) == []


def test_idempotent_reupsert(store: Store) -> None:
    before_text = store.search_text(["辣椒", "宫保"], k=10)
    before_vec = store.search_vector(unit(0), k=10)
    for _ in range(2):
        store.upsert(CHUNKS, tokens=TOKENS, vectors=VECTORS, parents=PARENTS)
    assert store.count() == len(CHUNKS)
    assert store.get_chunks(ALL_IDS) == CHUNKS
    assert_same(store.search_text(["辣椒", "宫保"], k=10), before_text)
    assert_same(store.search_vector(unit(0), k=10), before_vec)


def test_delete_by_chunk_ids(store: Store) -> None:
    assert store.delete(chunk_ids=["a#1", "nope"]) == 1
    assert store.count() == len(CHUNKS) - 1
    assert store.get_chunks(["a#1"]) == []
    assert "a#1" not in ids(store.search_text(["辣椒"], k=10))
    assert "a#1" not in ids(store.search_vector(unit(0, 1, 0.5), k=10))
    assert store.doc_ids() == {"a", "b", "c", "d", "e"}


def test_delete_by_doc_ids(store: Store) -> None:
    assert store.delete(doc_ids=["a", "c"]) == 3
    assert store.doc_ids() == {"b", "d", "e"}
    assert store.get_parents(["a", "c", "b"]) == [PARENTS[1]]
    assert store.search_text(["宫保鸡丁"], k=10) == []
    assert {"a#0", "a#1", "c#0"}.isdisjoint(ids(store.search_vector(unit(0), k=10)))
    assert store.delete(doc_ids=["a"]) == 0


def test_delete_everything_then_search(store: Store) -> None:
    assert store.delete(chunk_ids=ALL_IDS) == len(CHUNKS)
    assert store.count() == 0
    assert store.search_text(["宫保"], k=10) == []
    assert store.search_vector(unit(0), k=10) == []


def test_upsert_after_delete(store: Store) -> None:
    store.delete(doc_ids=["b"])
    store.upsert([CHUNKS[2]], tokens=[TOKENS[2]], vectors=VECTORS[2:3])
    assert ids(store.search_text(["鸡蛋"], k=5)) == ["b#0"]
    assert ids(store.search_vector(unit(2), k=1)) == ["b#0"]


def test_dim_mismatch_is_a_clear_error(store: Store) -> None:
    extra = chunk("z#0", "z", "新")
    with pytest.raises(InvalidParameter):
        store.upsert([extra], tokens=[["新"]], vectors=np.ones((1, DIM + 1), np.float32))
    with pytest.raises(InvalidParameter):
        store.search_vector(np.ones(DIM + 1, np.float32), k=3)
    assert store.count() == len(CHUNKS)


def test_tokens_length_mismatch(store: Store) -> None:
    with pytest.raises(InvalidParameter):
        store.upsert([chunk("z#0", "z", "新")], tokens=[["新"], ["多"]], vectors=unit(0)[None, :])


# -- atomicity ----------------------------------------------------------------------------------
def test_failed_upsert_wrong_row_count_leaves_state_intact(store: Store) -> None:
    batch = [chunk("a#0", "a", "改写"), chunk("z#0", "z", "新文档")]
    with pytest.raises(InvalidParameter):
        store.upsert(batch, tokens=[["改写"], ["新文档"]], vectors=VECTORS[:1])
    assert store.get_chunks(ALL_IDS) == CHUNKS
    assert store.count() == len(CHUNKS)
    assert ids(store.search_text(["做法"], k=5)) == ["a#1"]
    assert store.search_text(["新文档"], k=5) == []


def test_failed_upsert_midway_leaves_state_intact(store: Store) -> None:
    """The last chunk's vector is invalid (NaN): nothing of the batch may land."""
    batch = [
        chunk("a#0", "a", "改写 宫保"),  # would also drop a#1 (document-level replace)
        chunk("z#0", "z", "新文档"),
        chunk("y#0", "y", "坏向量"),
    ]
    vectors = VECTORS[:3].copy()
    vectors[2, 0] = np.nan
    with pytest.raises(Exception):  # noqa: B017 - any error, as long as nothing lands
        store.upsert(batch, tokens=[["改写"], ["新文档"], ["坏"]], vectors=vectors)
    assert store.get_chunks(ALL_IDS) == CHUNKS
    assert store.doc_ids() == {"a", "b", "c", "d", "e"}
    assert store.search_text(["新文档"], k=5) == []
    assert store.search_text(["改写"], k=5) == []
    assert ids(store.search_text(["做法"], k=5)) == ["a#1"]


# -- persistence --------------------------------------------------------------------------------
def test_persistence_across_reopen(make_store) -> None:
    s1 = make_store(dim=DIM, name="persist_kb")
    s1.upsert(CHUNKS, tokens=TOKENS, vectors=VECTORS, parents=PARENTS)
    s1.delete(chunk_ids=["e#0"])
    text_before = s1.search_text(["辣椒", "豆腐"], k=10)
    vec_before = s1.search_vector(unit(0), k=10)
    s1.close()
    s2 = make_store(dim=DIM, name="persist_kb")
    assert s2.count() == len(CHUNKS) - 1
    assert s2.get_chunks(ALL_IDS) == CHUNKS[:-1]
    assert s2.get_parents(["a"]) == PARENTS[:1]
    assert_same(s2.search_text(["辣椒", "豆腐"], k=10), text_before)
    assert_same(s2.search_vector(unit(0), k=10), vec_before)
    # and it is still writable after reopening
    s2.upsert([CHUNKS[-1]], tokens=[TOKENS[-1]], vectors=VECTORS[-1:])
    assert ids(s2.search_text(["青菜"], k=3)) == ["e#0"]


# -- BM25 ---------------------------------------------------------------------------------------
def test_bm25_term_match_ranks_above_non_match(store: Store) -> None:
    res = store.search_text(["辣椒"], k=10)
    assert set(ids(res)) == {"a#1", "d#0"}
    assert all(score > 0 for _, score in res)


def test_bm25_more_matching_terms_rank_higher(store: Store) -> None:
    res = store.search_text(["宫保鸡丁", "花生"], k=10)
    assert ids(res)[:2] == ["a#0", "a#1"]
    assert res[0][1] > res[1][1] > 0


def test_bm25_scores_sorted_and_positive(store: Store) -> None:
    res = store.search_text(["辣椒", "番茄", "牛肉", "宫保"], k=10)
    scores = [s for _, s in res]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    assert set(ids(res)) == {"a#0", "a#1", "b#0", "c#0", "d#0"}


def test_bm25_term_frequency_and_length_normalisation(make_store) -> None:
    s = make_store(dim=DIM)
    docs = [chunk("tf2", "p", "x x y"), chunk("tf1", "q", "x y z"), chunk("long", "r", "x y z w v u")]
    s.upsert(docs, tokens=[["x", "x", "y"], ["x", "y", "z"], ["x", "y", "z", "w", "v", "u"]])
    assert ids(s.search_text(["x"], k=3)) == ["tf2", "tf1", "long"]


def test_bm25_unknown_terms_and_empty_query(store: Store) -> None:
    assert store.search_text(["不存在的词"], k=10) == []
    assert store.search_text([], k=10) == []


def test_bm25_k_limits_and_k_larger_than_size(store: Store) -> None:
    assert len(store.search_text(["宫保", "辣椒", "番茄"], k=1)) == 1
    assert len(store.search_text(["宫保", "辣椒", "番茄"], k=1000)) == 4


# -- vectors ------------------------------------------------------------------------------------
def test_vector_exact_order(store: Store) -> None:
    res = store.search_vector(unit(0), k=6)
    # cos(e0, a#0)=1, a#1 = 1/sqrt(1.25), d#0 = 0.2/sqrt(1.04), the rest 0
    assert ids(res)[:3] == ["a#0", "a#1", "d#0"]
    assert res[0][1] == pytest.approx(1.0, abs=1e-3)
    assert res[1][1] == pytest.approx(1 / np.sqrt(1.25), abs=1e-3)
    assert res[2][1] == pytest.approx(0.2 / np.sqrt(1.04), abs=1e-3)
    scores = [s for _, s in res]
    assert scores == sorted(scores, reverse=True)


def test_vector_query_is_normalised_for_cosine(store: Store) -> None:
    assert ids(store.search_vector(unit(3) * 7.0, k=1)) == ["c#0"]
    assert store.search_vector(unit(3) * 7.0, k=1)[0][1] == pytest.approx(1.0, abs=1e-3)


def test_vector_k_larger_than_size(store: Store) -> None:
    res = store.search_vector(unit(2), k=100)
    assert len(res) == len(CHUNKS)
    assert ids(res)[0] == "b#0"


def test_k_zero(store: Store) -> None:
    assert store.search_vector(unit(2), k=0) == []
    assert store.search_text(["宫保"], k=0) == []


# -- filters in both branches -------------------------------------------------------------------
# query terms / vector that reach every chunk, so the filter alone decides the result set
ALL_TERMS = ["宫保", "番茄", "牛肉", "豆腐", "青菜"]
FILTER_CASES: list[tuple[dict[str, object], set[str]]] = [
    ({"category": "veg"}, {"d#0", "e#0"}),
    ({"category": {"eq": "meat"}}, {"a#0", "a#1"}),
    ({"category": {"ne": "veg"}}, {"a#0", "a#1", "b#0", "c#0"}),
    ({"category": {"in": ["soup", "egg"]}}, {"b#0", "c#0"}),
    ({"category": ["soup", "egg"]}, {"b#0", "c#0"}),
    ({"category": {"nin": ["meat", "veg"]}}, {"b#0", "c#0"}),
    ({"difficulty": {"gt": 2}}, {"a#0", "a#1"}),
    ({"difficulty": {"gte": 2}}, {"a#0", "a#1", "c#0", "d#0"}),
    ({"difficulty": {"lt": 2}}, {"b#0", "e#0"}),
    ({"difficulty": {"lte": 2}}, {"b#0", "c#0", "d#0", "e#0"}),
    ({"difficulty": {"gte": 2, "lt": 3}}, {"c#0", "d#0"}),
    ({"price": {"lt": 15.5}}, {"b#0", "d#0"}),  # missing field never matches a range
    ({"price": 25.5}, {"a#0", "a#1"}),
    ({"price": {"ne": 25.5}}, {"b#0", "c#0", "d#0", "e#0"}),  # missing field is "not equal"
    ({"spicy": True}, {"a#0", "a#1", "d#0"}),
    ({"spicy": {"ne": True}}, {"b#0", "c#0", "e#0"}),
    ({"spicy": False, "category": "veg"}, {"e#0"}),
    ({"category": "veg", "difficulty": {"gte": 2}, "spicy": True}, {"d#0"}),
]


@pytest.mark.parametrize(("spec", "expected"), FILTER_CASES, ids=[str(c[0]) for c in FILTER_CASES])
def test_filter_in_bm25_branch(store: Store, spec: dict[str, object], expected: set[str]) -> None:
    res = store.search_text(ALL_TERMS, k=100, filters=parse_filters(spec))
    assert set(ids(res)) == expected
    assert all(s > 0 for _, s in res)


@pytest.mark.parametrize(("spec", "expected"), FILTER_CASES, ids=[str(c[0]) for c in FILTER_CASES])
def test_filter_in_vector_branch(store: Store, spec: dict[str, object], expected: set[str]) -> None:
    q = np.ones(DIM, np.float32) / np.sqrt(DIM)
    res = store.search_vector(q, k=100, filters=parse_filters(spec))
    assert set(ids(res)) == expected


def test_filter_applied_before_top_k(store: Store) -> None:
    """The best allowed chunk is found even when k unfiltered hits would all be filtered out."""
    f = parse_filters({"category": "soup"})
    assert ids(store.search_vector(unit(0), k=1, filters=f)) == ["c#0"]
    assert ids(store.search_text(["宫保", "牛肉"], k=1, filters=f)) == ["c#0"]


def test_filter_matching_nothing(store: Store) -> None:
    for spec in ({"category": "dessert"}, {"difficulty": {"gt": 99}}, {"unknown_field": "x"}):
        f = parse_filters(spec)
        assert store.search_text(ALL_TERMS, k=10, filters=f) == []
        assert store.search_vector(unit(0), k=10, filters=f) == []


def test_empty_filter_is_no_filter(store: Store) -> None:
    assert len(store.search_text(ALL_TERMS, k=100, filters=parse_filters({}))) == len(CHUNKS)
    assert len(store.search_vector(unit(0), k=100, filters=parse_filters(None))) == len(CHUNKS)


# -- empty store --------------------------------------------------------------------------------
def test_empty_store(make_store) -> None:
    s = make_store(dim=DIM)
    assert s.count() == 0
    assert s.doc_ids() == set()
    assert s.get_chunks(["a"]) == []
    assert s.get_parents(["a"]) == []
    assert s.search_text(["宫保"], k=10) == []
    assert s.search_vector(unit(0), k=10) == []
    assert s.search_text(["宫保"], k=10, filters=parse_filters({"category": "veg"})) == []
    assert s.delete(chunk_ids=["x"], doc_ids=["y"]) == 0


def test_store_without_vectors(make_store) -> None:
    s = make_store(dim=None)
    assert s.dim is None
    s.upsert(CHUNKS, tokens=TOKENS, parents=PARENTS)
    assert s.count() == len(CHUNKS)
    assert ids(s.search_text(["豆腐"], k=3)) == ["d#0"]


# -- vectors filled after the text (lexical-first indexing) -------------------------------------
def normed(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.fixture
def lexical(make_store) -> Store:
    """The recipe corpus stored without vectors, as the first phase of an index run leaves it."""
    s = make_store(dim=DIM)
    s.upsert(CHUNKS, tokens=TOKENS, vectors=None, parents=PARENTS)
    return s


def test_get_vectors_returns_stored_normalised_vectors(store: Store) -> None:
    got = store.get_vectors(["c#0", "nope", "a#1"])
    assert set(got) == {"c#0", "a#1"}
    for cid, row in (("c#0", 3), ("a#1", 1)):
        assert got[cid].dtype == np.float32 and got[cid].shape == (DIM,)
        np.testing.assert_allclose(got[cid], normed(VECTORS[row]), atol=1e-5)
    assert store.get_vectors([]) == {}


def test_metadata_fields(store: Store, make_store) -> None:
    assert store.metadata_fields() == {"category", "difficulty", "spicy", "price"}
    store.upsert([chunk("z#0", "z", "新", 口味="辣", empty=None)], tokens=[["新"]], vectors=unit(1)[None, :])
    assert store.metadata_fields() == {"category", "difficulty", "spicy", "price", "口味"}  # null: absent
    assert make_store(dim=DIM).metadata_fields() == set()


def test_lexical_first_rows_are_searchable_by_bm25_only(lexical: Store) -> None:
    assert lexical.count() == len(CHUNKS)
    assert lexical.vector_count() == 0
    assert ids(lexical.search_text(["辣椒"], k=10)) == ids(lexical.search_text(["辣椒"], k=10))
    assert set(ids(lexical.search_text(["辣椒"], k=10))) == {"a#1", "d#0"}
    assert lexical.search_vector(unit(0), k=10) == []
    assert lexical.get_vectors(ALL_IDS) == {}
    assert lexical.missing_vector_ids() == ALL_IDS  # insertion order
    assert lexical.missing_vector_ids(limit=2) == ALL_IDS[:2]
    assert lexical.missing_vector_ids(limit=0) == []


def test_set_vectors_fills_and_search_vector_sees_only_filled_rows(lexical: Store) -> None:
    assert lexical.set_vectors(["c#0", "a#0", "nope"], VECTORS[[3, 0, 0]]) == 2
    assert lexical.vector_count() == 2
    assert ids(lexical.search_vector(unit(0), k=10)) == ["a#0", "c#0"]
    assert lexical.missing_vector_ids() == ["a#1", "b#0", "d#0", "e#0"]
    assert set(lexical.get_vectors(ALL_IDS)) == {"a#0", "c#0"}
    # filters apply to the filled rows only
    veg_or_soup = parse_filters({"category": {"in": ["veg", "soup"]}})
    assert ids(lexical.search_vector(unit(0), k=10, filters=veg_or_soup)) == ["c#0"]
    # the rest, in two calls: the same results as a store written with vectors at once
    rest = lexical.missing_vector_ids()
    rows = [ALL_IDS.index(i) for i in rest]
    assert lexical.set_vectors(rest[:2], VECTORS[rows[:2]]) == 2
    assert lexical.set_vectors(rest[2:], VECTORS[rows[2:]]) == 2
    assert lexical.vector_count() == len(CHUNKS) and lexical.missing_vector_ids() == []
    res = lexical.search_vector(unit(0), k=6)
    assert ids(res)[:3] == ["a#0", "a#1", "d#0"]
    assert res[0][1] == pytest.approx(1.0, abs=1e-3)
    assert res[2][1] == pytest.approx(0.2 / np.sqrt(1.04), abs=1e-3)
    assert set(ids(res)) == set(ALL_IDS)


def test_set_vectors_replaces_a_vector(store: Store) -> None:
    assert store.set_vectors(["a#0"], unit(7)[None, :] * 3) == 1
    assert ids(store.search_vector(unit(7), k=1)) == ["a#0"]
    assert ids(store.search_vector(unit(0), k=1)) == ["a#1"]
    np.testing.assert_allclose(store.get_vectors(["a#0"])["a#0"], unit(7), atol=1e-5)
    assert store.vector_count() == len(CHUNKS)


def test_lexical_reupsert_keeps_vectors_of_unchanged_chunks(store: Store) -> None:
    before = store.search_vector(unit(0), k=10)
    store.upsert(CHUNKS, tokens=TOKENS, vectors=None, parents=PARENTS)
    assert store.vector_count() == len(CHUNKS)
    assert store.missing_vector_ids() == []
    assert_same(store.search_vector(unit(0), k=10), before)
    # a changed chunk loses its (stale) vector until it gets a new one
    changed = chunk("b#0", "b", "番茄炒蛋 加糖", category="egg", difficulty=2)
    store.upsert([changed], tokens=[["番茄炒蛋", "加糖"]], vectors=None)
    assert store.vector_count() == len(CHUNKS) - 1
    assert store.missing_vector_ids() == ["b#0"]
    assert "b#0" not in ids(store.search_vector(unit(2), k=10))
    assert ids(store.search_text(["加糖"], k=5)) == ["b#0"]
    # upserting it again with a vector works as before
    store.upsert([changed], tokens=[["番茄炒蛋", "加糖"]], vectors=unit(6)[None, :])
    assert ids(store.search_vector(unit(6), k=1)) == ["b#0"]
    assert store.vector_count() == len(CHUNKS)


def test_vector_count_follows_deletes(store: Store) -> None:
    store.delete(doc_ids=["a"])
    assert store.vector_count() == len(CHUNKS) - 2
    store.upsert([chunk("z#0", "z", "新")], tokens=[["新"]], vectors=None)
    assert store.vector_count() == len(CHUNKS) - 2
    assert store.count() == len(CHUNKS) - 1
    assert store.missing_vector_ids() == ["z#0"]


def test_set_vectors_rejects_bad_input_and_writes_nothing(lexical: Store, make_store) -> None:
    with pytest.raises(InvalidParameter):
        lexical.set_vectors(["a#0", "b#0"], VECTORS[:1])
    with pytest.raises(InvalidParameter):
        lexical.set_vectors(["a#0"], np.full((1, DIM), np.nan, np.float32))
    with pytest.raises(InvalidParameter):
        lexical.set_vectors(["a#0"], np.ones((1, DIM + 1), np.float32))
    assert lexical.vector_count() == 0
    assert lexical.set_vectors([], np.zeros((0, DIM), np.float32)) == 0
    plain = make_store(dim=None)
    plain.upsert(CHUNKS, tokens=TOKENS)
    with pytest.raises(InvalidParameter):
        plain.set_vectors(["a#0"], VECTORS[:1])
    assert plain.vector_count() == 0 and plain.missing_vector_ids() == [] and plain.get_vectors(ALL_IDS) == {}


def test_filled_vectors_persist_across_reopen(make_store) -> None:
    s1 = make_store(dim=DIM, name="fill_kb")
    s1.upsert(CHUNKS, tokens=TOKENS, vectors=None, parents=PARENTS)
    s1.search_text(["辣椒"], k=3)  # the index exists before the fill
    s1.set_vectors(ALL_IDS[:3], VECTORS[:3])
    s1.close()
    s2 = make_store(dim=DIM, name="fill_kb")
    assert s2.vector_count() == 3
    assert s2.missing_vector_ids() == ALL_IDS[3:]
    assert ids(s2.search_vector(unit(2), k=1)) == ["b#0"]
    s2.set_vectors(ALL_IDS[3:], VECTORS[3:])
    assert ids(s2.search_vector(unit(5), k=1)) == ["e#0"]


def test_build_index_and_stats_report_vectors(store: Store) -> None:
    store.build_index(background=False)
    store.build_index(background=True)
    st = store.stats()
    assert st["vectors"] == len(CHUNKS)
    assert st["vector_index"] in {"ready", "building", "pending", "not_needed"}
    assert ids(store.search_vector(unit(3), k=1)) == ["c#0"]


# -- chunk-level writes (curation) ---------------------------------------------------------------
def test_put_chunks_keeps_the_other_chunks_of_the_document(store: Store) -> None:
    edited = chunk("a#0", "a", "宫保鸡丁 改写", category="meat", difficulty=3)
    store.put_chunks([edited], tokens=[["宫保鸡丁", "改写"]], vectors=unit(7)[None, :])
    assert store.get_chunks(["a#0", "a#1"]) == [edited, CHUNKS[1]]
    assert store.count() == len(CHUNKS)
    assert ids(store.search_text(["改写"], k=5)) == ["a#0"]
    assert ids(store.search_text(["做法"], k=5)) == ["a#1"]
    assert ids(store.search_vector(unit(7), k=1)) == ["a#0"]
    assert "a#0" not in ids(store.search_text(["花生"], k=5))


def test_put_chunks_adds_rows_and_documents_and_removes_in_one_write(store: Store) -> None:
    question = chunk("a#1::q0", "a", "宫保鸡丁怎么做", category="meat", _target="a#1")
    manual = chunk("m#0", "m", "手工添加 段落", category="note")
    store.put_chunks(
        [question, manual],
        tokens=[["宫保鸡丁", "怎么", "做"], ["手工", "添加", "段落"]],
        vectors=np.stack([unit(6), unit(5, 6, 0.3)]),
        parents=[Document(id="m", text="手工", title="手工")],
        remove=["e#0", "nope"],
    )
    assert store.count() == len(CHUNKS) + 1
    assert store.get_chunks(["a#1::q0", "m#0", "e#0"]) == [question, manual]
    assert store.get_parents(["m"]) == [Document(id="m", text="手工", title="手工")]
    assert {"a", "b", "c", "d", "m"} <= store.doc_ids()  # "e" may stay listed by its parent
    assert ids(store.search_text(["怎么"], k=5)) == ["a#1::q0"]
    assert store.search_text(["青菜"], k=5) == []
    assert ids(store.search_vector(unit(6), k=1)) == ["a#1::q0"]
    assert ids(store.search_text(["段落"], k=5, filters=parse_filters({"category": "note"}))) == ["m#0"]
    assert store.vector_count() == len(CHUNKS) + 1


def test_put_chunks_remove_only_and_put_wins_over_remove(store: Store) -> None:
    store.put_chunks([], tokens=[], remove=["a#1", "b#0"])
    assert store.count() == len(CHUNKS) - 2
    assert store.search_text(["做法"], k=5) == [] and store.search_text(["鸡蛋"], k=5) == []
    assert "b#0" not in ids(store.search_vector(unit(2), k=10))
    store.put_chunks([CHUNKS[2]], tokens=[TOKENS[2]], vectors=VECTORS[2:3], remove=["b#0"])
    assert ids(store.search_text(["鸡蛋"], k=5)) == ["b#0"]
    assert ids(store.search_vector(unit(2), k=1)) == ["b#0"]


def test_put_chunks_without_vectors_keeps_the_vector_of_unchanged_content(store: Store) -> None:
    store.put_chunks([CHUNKS[3]], tokens=[TOKENS[3]], vectors=None)
    assert store.vector_count() == len(CHUNKS)
    assert ids(store.search_vector(unit(3), k=1)) == ["c#0"]
    changed = chunk("c#0", "c", "牛肉羹 改", category="soup")
    store.put_chunks([changed], tokens=[["牛肉羹", "改"]], vectors=None)
    assert store.missing_vector_ids() == ["c#0"]
    assert ids(store.search_text(["改"], k=3)) == ["c#0"]


def test_failed_put_chunks_leaves_state_intact(store: Store) -> None:
    bad = np.full((1, DIM), np.nan, np.float32)
    with pytest.raises(InvalidParameter):
        store.put_chunks([chunk("a#0", "a", "坏")], tokens=[["坏"]], vectors=bad, remove=["b#0"])
    with pytest.raises(InvalidParameter):
        store.put_chunks([chunk("a#0", "a", "坏")], tokens=[["坏"], ["多"]], remove=["b#0"])
    assert store.get_chunks(ALL_IDS) == CHUNKS
    assert store.search_text(["坏"], k=5) == []


def test_set_tokens_changes_bm25_and_keeps_text_and_vectors(store: Store, make_store) -> None:
    new_tokens = {"a#0": ["宫保鸡丁", "招牌", "招牌"], "d#0": ["麻婆豆腐", "招牌"]}
    assert store.set_tokens(["a#0", "d#0", "nope"], [*new_tokens.values(), ["x"]]) == 2
    assert store.get_chunks(ALL_IDS) == CHUNKS
    assert store.count() == len(CHUNKS) and store.vector_count() == len(CHUNKS)
    np.testing.assert_allclose(store.get_vectors(["a#0"])["a#0"], normed(VECTORS[0]), atol=1e-5)
    assert ids(store.search_vector(unit(0), k=1)) == ["a#0"]
    assert "a#0" not in ids(store.search_text(["花生"], k=5))
    # the same BM25 as a store written with these tokens from the start
    fresh = make_store(dim=DIM)
    tokens = [new_tokens.get(c.id, t) for c, t in zip(CHUNKS, TOKENS, strict=True)]
    fresh.upsert(CHUNKS, tokens=tokens, vectors=VECTORS, parents=PARENTS)
    for query in (["招牌"], ["宫保鸡丁", "辣椒"], ["豆腐", "招牌"]):
        assert_same(store.search_text(query, k=10), fresh.search_text(query, k=10))
    assert store.set_tokens([], []) == 0
    with pytest.raises(InvalidParameter):
        store.set_tokens(["a#0"], [["x"], ["y"]])


def test_set_tokens_persists_across_reopen(make_store) -> None:
    s1 = make_store(dim=DIM, name="tokens_kb")
    s1.upsert(CHUNKS, tokens=TOKENS, vectors=VECTORS, parents=PARENTS)
    s1.search_text(["辣椒"], k=3)
    s1.set_tokens(["e#0"], [["清炒", "时蔬", "青菜", "素菜"]])
    s1.close()
    s2 = make_store(dim=DIM, name="tokens_kb")
    assert ids(s2.search_text(["素菜"], k=3)) == ["e#0"]
    assert ids(s2.search_vector(unit(5), k=1)) == ["e#0"]


def test_list_chunk_ids(store: Store) -> None:
    assert sorted(store.list_chunk_ids(["a", "c", "zzz"])) == ["a#0", "a#1", "c#0"]
    assert sorted(store.list_chunk_ids()) == sorted(ALL_IDS)
    assert store.list_chunk_ids([]) == []
    store.put_chunks([chunk("a#2", "a", "新段")], tokens=[["新段"]], vectors=unit(1)[None, :])
    assert sorted(store.list_chunk_ids(["a"])) == ["a#0", "a#1", "a#2"]
