"""Qdrant-specific tests: filter semantics on the real engine, BM25 weights, avgdl drift, URLs.

The contract itself runs in ``test_conformance.py`` on Qdrant Edge (``qdrant``) and on the
server code path through qdrant-client's in-memory mode (``qdrant-client``). Here the filter
translation is checked property-style against :meth:`Filter.matches` (the embedded store's
reference semantics) on a real Qdrant Edge shard.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# the imports below load qdrant_edge: without the [qdrant] extra the whole module is skipped
pytest.importorskip("qdrant_edge", reason="the [qdrant] extra (qdrant-edge-py) is not installed")

from zhiwen.documents import Chunk
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store import open_store
from zhiwen.store._qdrant_codec import (
    PointData,
    bm25_values,
    chunk_payload,
    counts_from_values,
    filter_ir,
    index_kinds,
    payload_key,
    point_id,
    term_counts,
    term_index,
)
from zhiwen.store._qdrant_edge import EdgeEngine, kb_dir_name
from zhiwen.store.factory import drop_store
from zhiwen.store.filters import parse_filters
from zhiwen.store.qdrant import QdrantStore, _redact

# -- filters on the real engine ------------------------------------------------------------------
FIELD_VALUES: dict[str, list[Any]] = {
    "cat": ["soup", "meat", "汤", None],
    "n": [2, 3, 5, 2.5, 3.0],
    "flag": [True, False],
    "mixed": [3, "3", True, None, 2.5],
    "a.b": ["x", "y"],
    "tags": [["x", "y"], {"k": 1}],
}
RNG = np.random.default_rng(5)
METAS: list[dict[str, Any]] = []
for _ in range(60):
    meta: dict[str, Any] = {}
    for name, pool in FIELD_VALUES.items():
        if RNG.random() < 0.75:  # sometimes missing
            meta[name] = pool[int(RNG.integers(0, len(pool)))]
    METAS.append(meta)


@pytest.fixture(scope="module")
def filter_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EdgeEngine]:
    engine = EdgeEngine(tmp_path_factory.mktemp("qdrant"), "filters")
    engine.open_chunks(None)
    chunks = [Chunk(id=f"c{i}", doc_id=f"c{i}", text="t", metadata=m) for i, m in enumerate(METAS)]
    # the payload indexes the store creates (a mixed field gets a keyword index): answers must not change
    for name, kind in index_kinds(chunks).items():
        engine.index_field(payload_key(name), kind)
    engine.upsert("chunks", [PointData(point_id(c.id), chunk_payload(c, 1)) for c in chunks])
    yield engine
    engine.close()


scalar = st.sampled_from(["soup", "meat", "汤", "x", "3", 2, 3, 5, 2.5, 3.0, True, False, None])
number = st.sampled_from([2, 2.5, 3, 4.0, 5])


@st.composite
def filter_specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(sorted(FIELD_VALUES)), min_size=1, max_size=3, unique=True)):
        op = draw(st.sampled_from(["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"]))
        if op in ("in", "nin"):
            spec[name] = {op: draw(st.lists(scalar, min_size=1, max_size=3))}
        elif op in ("eq", "ne"):
            spec[name] = {op: draw(scalar)}
        else:
            spec[name] = {op: draw(number)}
    return spec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=filter_specs())
def test_filters_match_reference_semantics_on_the_engine(
    filter_engine: EdgeEngine, spec: dict[str, Any]
) -> None:
    flt = parse_filters(spec)
    got = {r.payload["id"] for r in filter_engine.scroll("chunks", filter_ir(flt), ["id"])}
    want = {f"c{i}" for i, m in enumerate(METAS) if flt.matches(m)}
    assert got == want, spec


def test_payload_key_quotes_dots_and_quotes() -> None:
    assert payload_key("a.b") == 'm."a.b"'
    assert payload_key('x"y') == 'm."x\\"y"'


# -- BM25 weights --------------------------------------------------------------------------------
def test_bm25_weights_round_trip_for_a_new_avgdl() -> None:
    counts = term_counts(["宫保", "鸡丁", "宫保", "", "花生"])
    assert sorted(counts.values()) == [1, 1, 2]
    idx, vals = bm25_values(counts, dl=5, avgdl=7.5)
    assert counts_from_values(idx, vals, dl=5, avgdl=7.5) == counts
    # the tf / (tf + k1 (1 - b + b dl / avgdl)) weight, no (k1 + 1): the embedded store's scale
    norm = 1.5 * (1 - 0.75 + 0.75 * 5 / 7.5)
    assert vals[idx.index(term_index("宫保"))] == pytest.approx(2 / (2 + norm))


def _reference(live: dict[str, list[str]], query: list[str], avgdl: float) -> dict[str, float]:
    n = len(live)
    tfs = {cid: Counter(t) for cid, t in live.items()}
    out: dict[str, float] = {}
    for term in dict.fromkeys(query):
        df = sum(1 for tf in tfs.values() if term in tf)
        idf = math.log1p((n - df + 0.5) / (df + 0.5))
        for cid, tf in tfs.items():
            if term in tf:
                norm = 1.5 * (1 - 0.75 + 0.75 * len(live[cid]) / avgdl)
                out[cid] = out.get(cid, 0.0) + idf * tf[term] / (tf[term] + norm)
    return out


@pytest.fixture
def edge_store(tmp_path: Path) -> Iterator[QdrantStore]:
    store = QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=None)
    yield store
    store.close()


def test_bm25_scores_after_churn_and_avgdl_drift(edge_store: QdrantStore) -> None:
    """N and df are exact after deletes (vacuumed), and weights follow the avgdl they were written for."""
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(40)]
    live: dict[str, list[str]] = {}

    def put(ids: range, lo: int, hi: int) -> None:
        toks = [[vocab[j] for j in rng.integers(0, 40, size=rng.integers(lo, hi))] for _ in ids]
        edge_store.upsert([Chunk(id=f"c{i}", doc_id=f"c{i}", text="t") for i in ids], tokens=toks)
        live.update({f"c{i}": t for i, t in zip(ids, toks, strict=True)})

    put(range(50), 2, 6)
    first_avgdl = edge_store.stats()["bm25_avgdl"]
    edge_store.delete(chunk_ids=[f"c{i}" for i in range(0, 50, 5)])
    for i in range(0, 50, 5):
        del live[f"c{i}"]
    put(range(50, 60), 3, 7)  # a small change of avgdl: weights keep the written avgdl
    put(range(60, 100), 20, 30)  # long chunks: avgdl moves > 10 %, every weight is rewritten
    avgdl = edge_store.stats()["bm25_avgdl"]
    assert avgdl != first_avgdl
    assert avgdl == pytest.approx(sum(len(t) for t in live.values()) / len(live))
    for q in (["w1"], ["w2", "w3", "w2"], [vocab[j] for j in rng.integers(0, 40, size=5)]):
        want = _reference(live, q, avgdl)
        got = edge_store.search_text(q, 200)
        assert {i for i, _ in got} == set(want)
        for cid, score in got:
            assert score == pytest.approx(want[cid], rel=1e-5)


def test_dim_mismatch_on_reopen(tmp_path: Path) -> None:
    QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=8).close()
    with pytest.raises(InvalidParameter, match="维度"):
        QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=16)
    reader = QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=None)  # adopts the stored dim
    assert reader.dim == 8
    reader.close()


def test_a_second_opener_of_a_local_store_is_refused(tmp_path: Path) -> None:
    first = QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=None)
    with pytest.raises(StoreUnavailable, match="another process"):
        QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=None)
    first.close()
    QdrantStore(EdgeEngine(tmp_path, "kb"), kb="kb", dim=None).close()  # free again once closed


# -- URLs ----------------------------------------------------------------------------------------
def test_local_url_through_the_factory_and_drop(tmp_path: Path) -> None:
    url = f"qdrant+local://{tmp_path / 'q'}"
    store = open_store(url, path=tmp_path / "unused", name="知识库 1", dim=4)
    assert isinstance(store, QdrantStore)
    store.upsert(
        [Chunk(id="a", doc_id="a", text="t")], tokens=[["宫保"]], vectors=np.ones((1, 4), np.float32)
    )
    assert store.stats()["backend"] == "qdrant" and store.count() == 1
    store.close()
    assert (tmp_path / "q" / kb_dir_name("知识库 1")).is_dir()
    assert drop_store(url, "知识库 1") is True
    assert not (tmp_path / "q" / kb_dir_name("知识库 1")).exists()


def test_server_url_options_are_parsed_without_connecting() -> None:
    pytest.importorskip("qdrant_client")
    from zhiwen.store._qdrant_server import ServerEngine

    with pytest.warns(UserWarning, match="insecure"):  # an API key over plain http
        engine = ServerEngine.from_url("qdrant://qdrant-0:6333?shards=3&replicas=2&api_key=s3cret", "manual")
    assert engine.names == {"chunks": "zw_manual", "parents": "zw_manual__parents"}
    assert (engine.shards, engine.replicas) == (3, 2)
    engine.close()
    with pytest.raises(InvalidParameter):
        ServerEngine.from_url("qdrant://", "manual")


def test_urls_are_redacted() -> None:
    assert _redact("qdrant://h:6333?api_key=s3cret&shards=3") == "qdrant://h:6333?api_key=***&shards=3"
    assert "pw" not in _redact("qdrant://user:pw@h:6333")
