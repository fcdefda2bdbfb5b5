"""Embedded store: vectors filled after the text, other processes seeing them, and the HNSW graph
built in the background (never by a search)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import zhiwen.store._embedded_graph as graph_mod
import zhiwen.store._vectors as vectors_mod
from zhiwen.documents import Chunk
from zhiwen.store.embedded import EmbeddedStore
from zhiwen.store.filters import parse_filters

DIM = 8
WORDS = [f"w{i}" for i in range(40)]
N = 400


def corpus(n: int, seed: int = 0) -> tuple[list[Chunk], list[list[str]], np.ndarray]:
    rng = np.random.default_rng(seed)
    chunks, tokens = [], []
    for i in range(n):
        toks = [WORDS[j] for j in rng.zipf(1.3, rng.integers(1, 12)) % len(WORDS)]
        md = {"cat": f"c{i % 5}", "flag": bool(i % 2)}
        chunks.append(Chunk(id=f"k{i}", doc_id=f"doc{i // 3}", text=" ".join(toks), metadata=md))
        tokens.append(toks)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    return chunks, tokens, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def exact(vecs: np.ndarray, q: np.ndarray, rows: list[int], k: int) -> list[str]:
    sims = vecs[rows] @ (q / np.linalg.norm(q))
    return [f"k{rows[i]}" for i in np.argsort(-sims, kind="stable")[:k]]


def wait_for(predicate, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def small_graph(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A graph from 50 vectors on, exact search for ≤ 20 rows, a 50 ms settle; records which
    threads built graphs."""
    monkeypatch.setattr(vectors_mod, "HNSW_MIN_ROWS", 50)
    monkeypatch.setattr(vectors_mod, "EXACT_MAX_ROWS", 20)
    monkeypatch.setattr(graph_mod, "GRAPH_SETTLE_S", 0.05)
    monkeypatch.setattr(graph_mod, "GROW_STEP", 64)
    builders: list[str] = []
    real = graph_mod.grow_graph

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        builders.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(graph_mod, "grow_graph", spy)
    return builders


# -- cross-process visibility ----------------------------------------------------------------------
def test_another_store_on_the_same_directory_sees_text_then_vectors(tmp_path: Path) -> None:
    chunks, tokens, vecs = corpus(60)
    writer = EmbeddedStore(tmp_path / "kb", dim=DIM)
    reader = EmbeddedStore(tmp_path / "kb", dim=DIM)  # another process: its own index and snapshot
    assert reader.search_text(["w1"], k=5) == []
    writer.upsert(chunks, tokens=tokens, vectors=None)
    hits = reader.search_text(["w1", "w2"], k=100)
    assert hits and {i for i, _ in hits} <= {c.id for c in chunks}
    assert reader.vector_count() == 0 and reader.search_vector(vecs[0], k=3) == []
    writer.set_vectors([c.id for c in chunks[:30]], vecs[:30])
    assert reader.vector_count() == 30
    assert reader.search_vector(vecs[7], k=1)[0][0] == "k7"
    assert {i for i, _ in reader.search_vector(vecs[40], k=100)} == {f"k{i}" for i in range(30)}
    assert reader.missing_vector_ids(limit=3) == ["k30", "k31", "k32"]
    writer.set_vectors([c.id for c in chunks[30:]], vecs[30:])
    assert reader.search_vector(vecs[40], k=1)[0][0] == "k40"
    assert reader.count() == 60 and reader.vector_count() == 60
    writer.close()
    reader.close()


def test_a_real_second_process_sees_lexical_rows_at_once(tmp_path: Path) -> None:
    reader = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert reader.count() == 0
    script = (
        "import sys; from zhiwen.documents import Chunk; from zhiwen.store.embedded import EmbeddedStore\n"
        "s = EmbeddedStore(sys.argv[1], dim=8)\n"
        "s.upsert([Chunk(id='p0', doc_id='p', text='独有')], tokens=[['独有', 'w1']], vectors=None)\n"
        "s.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "kb")], check=True, timeout=60)
    assert [i for i, _ in reader.search_text(["独有"], k=5)] == ["p0"]
    assert reader.missing_vector_ids() == ["p0"]
    reader.close()


# -- the graph, in the background ------------------------------------------------------------------
def test_first_search_is_exact_and_the_graph_comes_later_in_a_thread(
    tmp_path: Path, small_graph: list[str]
) -> None:
    chunks, tokens, vecs = corpus(N, seed=1)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    q = vecs[5] + 0.1
    got = [i for i, _ in s.search_vector(q, k=10)]
    assert got == exact(vecs, q, list(range(N)), 10)  # exact: the graph is not there yet
    assert threading.current_thread().name not in small_graph
    assert wait_for(lambda: s.stats()["vector_index"] == "ready")
    assert small_graph and set(small_graph) == {"zhiwen-hnsw"}
    assert s.stats()["hnsw"] is True
    top = s.search_vector(vecs[17], k=1)
    assert top[0][0] == "k17" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    s.close()
    assert list((tmp_path / "kb" / "index").glob("hnsw-*.faiss"))  # persisted with the cache


def test_build_index_in_the_callers_thread(tmp_path: Path, small_graph: list[str]) -> None:
    chunks, tokens, vecs = corpus(N, seed=2)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    assert s.stats()["vector_index"] == "pending"
    s.build_index(background=False)
    assert threading.current_thread().name in small_graph
    assert s.stats()["vector_index"] == "ready"
    assert s._hnsw is not None and s._hnsw.size == N
    s.close()


def test_small_store_needs_no_graph(tmp_path: Path, small_graph: list[str]) -> None:
    chunks, tokens, vecs = corpus(30)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    s.search_vector(vecs[0], k=3)
    s.build_index(background=False)
    assert s.stats()["vector_index"] == "not_needed" and not small_graph
    s.close()


def test_lexical_first_fill_then_graph_and_late_rows(tmp_path: Path, small_graph: list[str]) -> None:
    chunks, tokens, vecs = corpus(N, seed=3)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=None)
    assert s.search_text(["w1"], k=3)
    assert s.stats()["vector_index"] == "not_needed"  # no vectors yet
    for start in range(0, N, 100):
        s.set_vectors([c.id for c in chunks[start : start + 100]], vecs[start : start + 100])
        q = vecs[start]
        assert s.search_vector(q, k=5)[0][0] == f"k{start}"
    s.build_index(background=False)
    assert s._hnsw is not None and s._hnsw.covered.all()
    # rows appended and filled after the graph: searched exactly beside it
    extra = [Chunk(id=f"x{i}", doc_id=f"x{i}", text="x") for i in range(5)]
    s.upsert(extra, tokens=[["w1"]] * 5, vectors=None)
    xv = -vecs[:5]
    s.set_vectors([c.id for c in extra], xv)
    for i in range(5):
        assert s.search_vector(xv[i], k=1)[0][0] == f"x{i}"
    # a replaced vector is not trusted in the graph any more
    s.set_vectors(["k17"], -vecs[300:301])
    assert s.search_vector(-vecs[300], k=1)[0][0] in {"k17", "k300"}
    assert "k17" not in [i for i, _ in s.search_vector(vecs[17], k=3)]
    f = parse_filters({"flag": True})
    res = s.search_vector(vecs[0], k=10, filters=f)
    assert len(res) == 10 and all(int(i[1:]) % 2 for i, _ in res if i.startswith("k"))
    s.close()
    # reopening keeps the graph and what it does not cover
    s2 = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert s2.search_vector(xv[3], k=1)[0][0] == "x3"
    assert "k17" not in [i for i, _ in s2.search_vector(vecs[17], k=3)]
    s2.close()


def test_many_late_fills_trigger_a_rebuild(tmp_path: Path, small_graph: list[str]) -> None:
    chunks, tokens, vecs = corpus(N, seed=4)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks[:201], tokens=tokens[:201], vectors=vecs[:201])  # whole documents (3 chunks)
    s.upsert(chunks[201:], tokens=tokens[201:], vectors=None)
    s.build_index(background=False)  # grows over 400 rows, 199 of them empty
    first = s._hnsw
    assert first is not None and int(first.covered.sum()) == 201
    s.set_vectors([c.id for c in chunks[201:]], vecs[201:])
    assert s.search_vector(vecs[250], k=3)[0][0] == "k250"  # exact meanwhile
    assert graph_mod.plan_graph(s._snapshot(), s._hnsw) == "rebuild"
    s.build_index(background=False)
    assert s._hnsw is not first and s._hnsw is not None and s._hnsw.covered.all()
    assert s.stats()["vector_index"] == "ready"
    s.close()


def test_close_stops_a_background_build(
    tmp_path: Path, small_graph: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_mod, "GROW_STEP", 8)
    chunks, tokens, vecs = corpus(N, seed=5)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=vecs)
    others = set(threading.enumerate())  # another test's KB in this process may still be building
    s.build_index(background=True)
    ours = [t for t in threading.enumerate() if t.name == "zhiwen-hnsw" and t not in others]
    t0 = time.monotonic()
    s.close()
    assert time.monotonic() - t0 < 10
    assert not [t for t in ours if t.is_alive()]
    assert not [p for p in (tmp_path / "kb" / "index").iterdir() if ".tmp" in p.name]
    s2 = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert s2.search_vector(vecs[9], k=1)[0][0] == "k9"
    s2.close()


def test_vector_count_is_served_by_the_synced_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks, tokens, vecs = corpus(50)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=None)
    assert s.vector_count() == 0  # before any search: two indexed SQL counts
    s.set_vectors(["k1", "k2"], vecs[1:3])
    s.search_text(["w1"], k=1)
    calls: list[int] = []
    monkeypatch.setattr(s._db, "missing_vector_count", lambda: calls.append(1) or 0)
    monkeypatch.setattr(s._db, "count", lambda: calls.append(1) or 0)
    for _ in range(3):
        assert s.vector_count() == 2 and s.count() == 50
    assert calls == []
    s.close()


def test_stale_cache_plus_fills_by_another_process(tmp_path: Path) -> None:
    """A cache saved before another process filled vectors: reopening reads just the fills."""
    chunks, tokens, vecs = corpus(60)
    s = EmbeddedStore(tmp_path / "kb", dim=DIM)
    s.upsert(chunks, tokens=tokens, vectors=None)
    text_before = s.search_text(["w1", "w2"], k=10)
    s.close()  # cache saved: no vectors
    other = EmbeddedStore(tmp_path / "kb", dim=DIM)
    other._save_cache = lambda snap: None  # type: ignore[method-assign]  # leave the cache stale
    other.set_vectors([c.id for c in chunks[:20]], vecs[:20])
    other.close()
    again = EmbeddedStore(tmp_path / "kb", dim=DIM)
    assert again.search_text(["w1", "w2"], k=10) == text_before  # BM25 statistics intact
    assert again.vector_count() == 20
    assert again.search_vector(vecs[4], k=1)[0][0] == "k4"
    again.close()
