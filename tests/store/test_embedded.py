"""EmbeddedStore internals: BM25 against a reference, filter masks, HNSW path, cache, threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zhiwen.store._vectors as vectors_mod
import zhiwen.store.embedded as embedded_mod
from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._columns import MetadataColumns
from zhiwen.store.embedded import EmbeddedStore
from zhiwen.store.filters import OPS, Condition, Filter, parse_filters

DIM = 8
WORDS = [f"w{i}" for i in range(40)]


def corpus(n: int, seed: int = 0) -> tuple[list[Chunk], list[list[str]], np.ndarray]:
    rng = np.random.default_rng(seed)
    chunks, tokens = [], []
    for i in range(n):
        toks = [WORDS[j] for j in rng.zipf(1.3, rng.integers(1, 12)) % len(WORDS)]
        md = {"cat": f"c{i % 5}", "n": int(i % 7), "flag": bool(i % 2), "score": float(i) / 3}
        chunks.append(Chunk(id=f"k{i}", doc_id=f"doc{i // 3}", text=" ".join(toks), metadata=md))
        tokens.append(toks)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    return chunks, tokens, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


@pytest.fixture
def filled(tmp_path: Path) -> EmbeddedStore:
    chunks, tokens, vecs = corpus(120)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    yield s
    s.close()


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [x for _, x in got] == pytest.approx([x for _, x in want], rel=1e-5)


def exact(vecs: np.ndarray, q: np.ndarray, allowed: list[int], k: int) -> list[str]:
    q = q / np.linalg.norm(q)
    sims = vecs[allowed] @ q
    order = np.argsort(-sims, kind="stable")[:k]
    return [f"k{allowed[i]}" for i in order]


# -- BM25 correctness ---------------------------------------------------------------------------
def test_bm25_scores_match_bm25s_lucene(filled: EmbeddedStore) -> None:
    import bm25s

    _, tokens, _ = corpus(120)
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index(tokens, show_progress=False)
    for query in (["w1"], ["w2", "w7"], ["w0", "w3", "w11", "w30"]):
        want = ref.get_scores(query)
        got = dict(filled.search_text(query, k=1000))
        expected = {f"k{i}": float(s) for i, s in enumerate(want) if s > 0}
        assert got.keys() == expected.keys()
        for cid, score in expected.items():
            assert got[cid] == pytest.approx(score, rel=1e-4)


def test_bm25_stats_ignore_deleted_rows(tmp_path: Path) -> None:
    """After deletes, scores equal those of a store that never had the deleted chunks."""
    chunks, tokens, vecs = corpus(60)
    a = EmbeddedStore(tmp_path / "a", dim=DIM)
    a.upsert(chunks, tokens=tokens, vectors=vecs)
    a.search_text(["w1"], k=5)  # build the index, so the delete becomes a tombstone
    a.delete(chunk_ids=[f"k{i}" for i in range(0, 60, 4)])
    keep = [i for i in range(60) if i % 4]
    b = EmbeddedStore(tmp_path / "b", dim=DIM)
    b.upsert([chunks[i] for i in keep], tokens=[tokens[i] for i in keep], vectors=vecs[keep])
    for q in (["w1"], ["w2", "w5"]):
        ga, gb = a.search_text(q, k=100), b.search_text(q, k=100)
        assert [i for i, _ in ga] == [i for i, _ in gb]
        assert [s for _, s in ga] == pytest.approx([s for _, s in gb], rel=1e-5)
    a.close()
    b.close()


def test_many_small_upserts_equal_one_bulk_upsert(tmp_path: Path) -> None:
    """Delta segments + merges give the same scores as one build."""
    chunks, tokens, vecs = corpus(90, seed=3)
    inc = EmbeddedStore(tmp_path / "inc", dim=DIM)
    for i in range(0, 90, 9):
        inc.upsert(chunks[i : i + 9], tokens=tokens[i : i + 9], vectors=vecs[i : i + 9])
        inc.search_text(["w1"], k=1)  # sync after every batch
    bulk = EmbeddedStore(tmp_path / "bulk", dim=DIM)
    bulk.upsert(chunks, tokens=tokens, vectors=vecs)
    for q in (["w1", "w4"], ["w9"]):
        assert_same(inc.search_text(q, k=50), bulk.search_text(q, k=50))
    q = vecs[5] + 0.1
    assert [i for i, _ in inc.search_vector(q, k=10)] == [i for i, _ in bulk.search_vector(q, k=10)]
    inc.close()
    bulk.close()


# -- filter masks == Filter.matches ---------------------------------------------------------------
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    st.sampled_from(["x", "y"]),
)
values = st.one_of(scalars, st.lists(st.integers(0, 2), max_size=2))  # lists: stored, never equal


@st.composite
def conditions(draw: st.DrawFn) -> Condition:
    field = draw(st.sampled_from(["a", "b", "never"]))
    op = draw(st.sampled_from(OPS))
    if op in ("in", "nin"):
        value: Any = tuple(draw(st.lists(scalars, min_size=1, max_size=3)))
    elif op in ("gt", "gte", "lt", "lte"):
        value = draw(st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False)))
    else:
        value = draw(scalars)
    return Condition(field, op, value)


@given(
    st.lists(st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=2), min_size=1, max_size=12),
    st.lists(conditions(), min_size=1, max_size=3),
    st.integers(0, 12),
)
def test_column_mask_equals_filter_matches(
    mds: list[dict[str, Any]], conds: list[Condition], split: int
) -> None:
    f = Filter(tuple(conds))
    # built in two appends, as the store does with delta rows
    cols = MetadataColumns.build(mds[:split]).append(mds[split:])
    assert cols.mask(f).tolist() == [f.matches(md) for md in mds]
    assert cols.mask(None) is None


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conds=st.lists(conditions(), min_size=1, max_size=2))
def test_column_mask_survives_cache_round_trip(conds: list[Condition]) -> None:
    mds = [{"a": 1, "b": "x"}, {"a": True}, {"b": 2.5}, {}, {"a": None, "b": [1]}]
    cols = MetadataColumns.build(mds)
    again = MetadataColumns.from_arrays(cols.to_arrays())
    f = Filter(tuple(conds))
    assert again.mask(f).tolist() == cols.mask(f).tolist() == [f.matches(m) for m in mds]


def test_store_filters_match_python_semantics(filled: EmbeddedStore) -> None:
    chunks, _, _ = corpus(120)
    for spec in ({"cat": "c1"}, {"n": {"gte": 5}}, {"flag": True, "n": {"lt": 3}}, {"score": {"gt": 30.5}}):
        f = parse_filters(spec)
        expected = {c.id for c in chunks if f.matches(c.metadata)}
        got = {i for i, _ in filled.search_vector(np.ones(DIM, np.float32), k=1000, filters=f)}
        assert got == expected


# -- HNSW path ----------------------------------------------------------------------------------
@pytest.fixture
def small_hnsw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_mod, "HNSW_MIN_ROWS", 50)
    monkeypatch.setattr(vectors_mod, "EXACT_MAX_ROWS", 20)


def test_hnsw_search_and_filters(tmp_path: Path, small_hnsw: None) -> None:
    chunks, tokens, vecs = corpus(400, seed=1)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    s.build_index(background=False)
    rng = np.random.default_rng(9)
    recall = []
    for _ in range(20):
        q = rng.standard_normal(DIM).astype(np.float32)
        got = [i for i, _ in s.search_vector(q, k=10)]
        recall.append(len(set(got) & set(exact(vecs, q, list(range(400)), 10))) / 10)
        # a broad filter goes through HNSW + post-filter, a narrow one exact: both only allowed rows
        for spec, allowed in (
            ({"flag": True}, [i for i in range(400) if i % 2]),
            ({"n": 3, "cat": "c2"}, None),
        ):
            f = parse_filters(spec)
            res = s.search_vector(q, k=10, filters=f)
            assert len(res) == 10 or allowed is None
            assert all(f.matches(chunks[int(i[1:])].metadata) for i, _ in res)
        narrow = [i for i in range(400) if i % 7 == 3 and i % 5 == 2]
        assert [i for i, _ in s.search_vector(q, k=5, filters=parse_filters({"n": 3, "cat": "c2"}))] == exact(
            vecs, q, narrow, 5
        )
    assert np.mean(recall) >= 0.9
    assert s.stats()["hnsw"] is True
    # HNSW scores are recomputed exactly: the best hit of a stored vector is itself, cosine 1
    top = s.search_vector(vecs[17], k=1)
    assert top[0][0] == "k17" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    s.close()
    # reopening loads the saved graph instead of rebuilding it
    s2 = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert s2.search_vector(vecs[17], k=1)[0][0] == "k17"
    assert list((tmp_path / "kb" / "index").glob("hnsw-*.faiss"))
    # new rows after the cache are added to the loaded graph
    extra = Chunk(id="new", doc_id="new", text="x")
    s2.upsert([extra], tokens=[["w1"]], vectors=np.eye(DIM, dtype=np.float32)[:1] * -1)
    assert s2.search_vector(-np.eye(DIM, dtype=np.float32)[0], k=1)[0][0] == "new"
    s2.close()


def test_old_snapshot_searches_safely_after_the_graph_grew(small_hnsw: None) -> None:
    """A reader's snapshot may be older than the shared HNSW graph: rows past it never come back."""
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((400, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    hnsw = vectors_mod.HNSW.create(DIM)
    hnsw.add(matrix, 100)
    old = vectors_mod.VectorIndex(matrix[:100], np.ones(100, bool), hnsw)
    hnsw.add(matrix, 400)  # a writer synced meanwhile
    for i in range(20):
        q = matrix[100 + i]  # its nearest row is one the old snapshot must not see
        assert (hnsw.search(q, 10, np.ones(100, bool), ef=64) < 100).all()
        pos, _ = old.top_k(q, 10, allowed=np.ones(100, bool))
        assert len(pos) == 10 and (pos < 100).all()


# -- persistence and the index cache -------------------------------------------------------------
def test_cache_written_on_close_and_used_on_reopen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks, tokens, vecs = corpus(50)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    s.search_text(["w1", "w2"], k=20)
    s.close()
    assert (tmp_path / "kb" / "index" / "cache.npz").exists()
    # a second process deletes and adds behind the cache: the reopened store syncs from the db
    other = EmbeddedStore(tmp_path / "kb", dim=DIM)
    other._save_cache = lambda snap: None  # type: ignore[method-assign]  # leave the cache stale
    other.delete(doc_ids=["doc0"])
    other.upsert([Chunk(id="z", doc_id="z", text="独有 w1")], tokens=[["独有", "w1"]], vectors=vecs[:1])
    other.close()
    calls: list[int] = []
    real = EmbeddedStore._append
    monkeypatch.setattr(
        EmbeddedStore,
        "_append",
        lambda self, snap, alive, gen: calls.append(snap.n) or real(self, snap, alive, gen),
    )
    s2 = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert [i for i, _ in s2.search_text(["独有"], k=20)] == ["z"]
    assert calls == [50]  # started from the 50 cached rows, not from scratch
    got = {i for i, _ in s2.search_text(WORDS, k=100)}
    assert len(got) == 48 and not {"k0", "k1", "k2"} & got
    s2.close()


def test_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    chunks, tokens, vecs = corpus(30)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    want = s.search_text(["w3"], k=10)
    s.close()
    (tmp_path / "kb" / "index" / "cache.npz").write_bytes(b"not a zip file")
    s2 = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert_same(s2.search_text(["w3"], k=10), want)
    s2.close()


def test_two_instances_see_each_others_writes(tmp_path: Path) -> None:
    a = EmbeddedStore(tmp_path / "kb", dim=DIM)
    b = EmbeddedStore(tmp_path / "kb", dim=DIM)
    v = np.eye(DIM, dtype=np.float32)
    a.upsert([Chunk(id="x", doc_id="x", text="t")], tokens=[["苹果"]], vectors=v[:1])
    assert b.search_text(["苹果"], k=3)[0][0] == "x"
    b.upsert([Chunk(id="y", doc_id="y", text="t")], tokens=[["苹果", "香蕉"]], vectors=v[1:2])
    assert a.search_text(["香蕉"], k=3)[0][0] == "y"  # b's new vocabulary is visible to a
    a.delete(chunk_ids=["x"])
    assert [i for i, _ in b.search_text(["苹果"], k=3)] == ["y"]
    a.close()
    b.close()


def test_compaction_drops_dead_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_mod, "_COMPACT_MIN_DEAD", 10)
    chunks, tokens, vecs = corpus(60)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    s.search_text(["w1"], k=1)
    s.delete(chunk_ids=[c.id for c in chunks[:40]])
    res = s.search_text(["w1", "w2", "w3"], k=100)
    assert s.stats()["index_rows"] == 20
    assert {i for i, _ in res} <= {c.id for c in chunks[40:]}
    assert len(s.search_vector(vecs[0], k=100)) == 20
    s.close()


def test_idempotent_upsert_does_not_touch_the_index(filled: EmbeddedStore) -> None:
    chunks, tokens, vecs = corpus(120)
    filled.search_text(["w1"], k=1)
    gen = filled._db.generation()
    filled.upsert(chunks, tokens=tokens, vectors=vecs)
    assert filled._db.generation() == gen


# -- concurrency --------------------------------------------------------------------------------
def test_searches_from_threads_while_writing(tmp_path: Path) -> None:
    chunks, tokens, vecs = corpus(200, seed=5)
    chunks = [Chunk(id=c.id, doc_id=c.id, text=c.text, metadata=c.metadata) for c in chunks]
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks[:100], tokens=tokens[:100], vectors=vecs[:100])
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        rng = np.random.default_rng(threading.get_ident() % 1000)
        try:
            while not stop.is_set():
                f = parse_filters({"flag": True}) if rng.random() < 0.5 else None
                for cid, score in s.search_text(["w1", "w2"], k=10, filters=f):
                    assert score > 0 and cid.startswith("k")
                s.search_vector(rng.standard_normal(DIM).astype(np.float32), k=10, filters=f)
                s.get_chunks(["k1", "k150"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(100, 200, 10):
        s.upsert(chunks[i : i + 10], tokens=tokens[i : i + 10], vectors=vecs[i : i + 10])
        s.delete(chunk_ids=[f"k{i - 100}"])
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert s.count() == 190
    s.close()


# -- validation and lifecycle ----------------------------------------------------------------------
def test_dim_is_remembered(tmp_path: Path) -> None:
    EmbeddedStore(tmp_path / "kb", dim=DIM).close()
    assert EmbeddedStore(tmp_path / "kb", dim=None).dim == DIM
    with pytest.raises(InvalidParameter, match="384"):
        EmbeddedStore(tmp_path / "kb", dim=384)
    with pytest.raises(InvalidParameter):
        EmbeddedStore(tmp_path / "other", dim=0)


def test_vectors_without_dim_and_chunks_without_vectors(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "novec", dim=None)
    with pytest.raises(InvalidParameter):
        s.upsert([Chunk(id="a", doc_id="a", text="t")], tokens=[["t"]], vectors=np.ones((1, 4)))
    assert s.search_vector(np.ones(4), k=3) == []
    s.close()
    m = EmbeddedStore(tmp_path / "mixed", dim=DIM)
    m.upsert([Chunk(id="a", doc_id="a", text="t")], tokens=[["t"]], vectors=np.ones((1, DIM)))
    m.upsert([Chunk(id="b", doc_id="b", text="t")], tokens=[["t"]])  # no vector: text-only chunk
    assert [i for i, _ in m.search_vector(np.ones(DIM), k=5)] == ["a"]
    assert {i for i, _ in m.search_text(["t"], k=5)} == {"a", "b"}
    m.close()


def test_bad_input(filled: EmbeddedStore) -> None:
    c = Chunk(id="z", doc_id="z", text="t")
    with pytest.raises(InvalidParameter):
        filled.upsert([c, c], tokens=[["t"], ["t"]])
    with pytest.raises(InvalidParameter):
        filled.upsert([Chunk(id="", doc_id="z", text="t")], tokens=[["t"]])
    with pytest.raises(InvalidParameter):
        filled.upsert([c], tokens=["t"])  # a string, not a token list
    with pytest.raises(InvalidParameter):
        filled.upsert([Chunk(id="s", doc_id="s", text="t", metadata={"bad": {1, 2}})], tokens=[["t"]])
    with pytest.raises(InvalidParameter):
        filled.upsert([c], tokens=[["t"]], parents=[Document(id="p", text="x", metadata={"v": float("nan")})])
    with pytest.raises(InvalidParameter):
        filled.search_text(["w1"], k=-1)
    with pytest.raises(InvalidParameter):
        filled.search_vector(np.full(DIM, np.nan), k=3)
    assert filled.count() == 120


def test_stats_and_closed_store(tmp_path: Path) -> None:
    chunks, tokens, vecs = corpus(12)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs, parents=[Document(id="doc0", text="全文")])
    st_ = s.stats()
    assert st_["backend"] == "embedded"
    assert (st_["chunks"], st_["documents"], st_["parents"], st_["dim"]) == (12, 4, 1, DIM)
    assert st_["path"] == str(tmp_path / "kb") and st_["bytes"] > 0
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreUnavailable):
        s.search_text(["w1"], k=1)
    with pytest.raises(StoreUnavailable):
        s.upsert(chunks, tokens=tokens, vectors=vecs)


def test_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StoreUnavailable):
        EmbeddedStore(f / "kb", dim=DIM)


def test_database_is_plain_sqlite(filled: EmbeddedStore) -> None:
    with sqlite3.connect(filled.path / "store.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 120
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
