"""PostgreSQL posting blocks under churn, the filtered BM25 fallback, and the schema-1 upgrade.

Split from ``test_postgres.py`` (same helpers, same ``open_pg`` fixture from conftest.py).
"""

from __future__ import annotations

import uuid

import numpy as np
import psycopg
import pytest
from test_postgres import PG_URL, _chunks, _tokens, _vec, needs_pg, same_scores

from zhiwen.documents import Chunk, Document
from zhiwen.store.filters import parse_filters

pytestmark = pytest.mark.postgres


# -- posting blocks and the schema-1 upgrade ----------------------------------------------------
def _reference_bm25(live: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """Lucene BM25 (k1 1.5, b 0.75, times k1 + 1) over ``live`` (chunk id → tokens)."""
    import math
    from collections import Counter

    n = len(live)
    avgdl = sum(len(t) for t in live.values()) / n
    tfs = {cid: Counter(t) for cid, t in live.items()}
    out: dict[str, float] = {}
    for term in dict.fromkeys(query):
        df = sum(1 for tf in tfs.values() if term in tf)
        if not df:
            continue
        idf = math.log1p((n - df + 0.5) / (df + 0.5))
        for cid, tf in tfs.items():
            if term in tf:
                f = tf[term]
                norm = f + 1.5 * (1 - 0.75 + 0.75 * len(live[cid]) / avgdl)
                out[cid] = out.get(cid, 0.0) + idf * 2.5 * f / norm
    return out


def _check_blocks(schema: str, live: dict[str, list[str]], block_size: int) -> None:
    """Every term's blocks: rids ascending across blocks, n ≤ block size, postings = df."""
    from zhiwen.store._pg_postings import unpack

    with psycopg.connect(PG_URL) as conn:
        rows = conn.execute(
            f'SELECT term, block_no, n, first_rid, last_rid, data FROM "{schema}".postings '
            "ORDER BY term, block_no"
        ).fetchall()
    per_term: dict[str, list[int]] = {}
    for term, _, n, first, last, data in rows:
        rids = unpack(data)[0].tolist()
        assert (
            0 < n == len(rids) <= block_size and rids == sorted(rids) and (first, last) == (rids[0], rids[-1])
        )
        prev = per_term.setdefault(term, [])
        assert not prev or prev[-1] < rids[0]
        prev.extend(rids)
    df = {t: sum(1 for toks in live.values() if t in toks) for toks in live.values() for t in toks}
    assert {t: len(r) for t, r in per_term.items()} == df


@needs_pg
def test_posting_blocks_stay_exact_under_churn(open_pg, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny blocks (3 postings) so appends top up, deletes repack and terms span many blocks."""
    from zhiwen.store import _pg_postings

    monkeypatch.setattr(_pg_postings, "BLOCK_SIZE", 3)
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(12)]
    s = open_pg(dim=None)
    live: dict[str, list[str]] = {}
    for step in range(30):
        op = step % 3
        if op < 2 or not live:  # a new document, or a changed version of an existing one
            doc = f"d{rng.integers(0, 10)}"
            n = int(rng.integers(1, 4))
            chunks = [Chunk(id=f"{doc}#{j}", doc_id=doc, text="t") for j in range(n)]
            toks = [[vocab[i] for i in rng.integers(0, 12, size=rng.integers(1, 6))] for _ in range(n)]
            s.upsert(chunks, tokens=toks)
            live = {k: v for k, v in live.items() if not k.startswith(doc + "#")}
            live.update({c.id: t for c, t in zip(chunks, toks, strict=True)})
        else:
            victim = sorted(live)[int(rng.integers(0, len(live)))]
            s.delete(chunk_ids=[victim])
            del live[victim]
        _check_blocks(s.schema, live, 3)
        query = [vocab[i] for i in rng.integers(0, 12, size=3)]
        want = _reference_bm25(live, query)
        got = s.search_text(query, 100)
        assert {i for i, _ in got} == set(want)
        for cid, score in got:
            assert score == pytest.approx(want[cid], rel=1e-6)


@needs_pg
def test_filtered_bm25_looks_past_the_best_candidates(open_pg) -> None:
    """Only low-scoring chunks pass the filter: the first check (8·k best) finds none of them."""
    s = open_pg(dim=None)
    n = 60
    chunks = [
        Chunk(id=f"c{i:02d}", doc_id=f"c{i:02d}", text="t", metadata={"g": int(i >= n - 3)}) for i in range(n)
    ]
    # the filtered ones are the longest, so they score lowest for "x"
    toks = [["x"] + ["pad"] * (i // 10) for i in range(n)]
    s.upsert(chunks, tokens=toks)
    got = s.search_text(["x"], 2, parse_filters({"g": 1}))
    assert [i for i, _ in got] == ["c57", "c58"]
    assert len(s.search_text(["x"], 5, parse_filters({"g": 1}))) == 3


_SCHEMA_1 = """
CREATE SCHEMA {s};
CREATE TABLE {s}.zw_meta (key text PRIMARY KEY, value jsonb);
CREATE TABLE {s}.chunks (id text PRIMARY KEY, doc_id text NOT NULL, parent_id text,
    title text NOT NULL DEFAULT '', text text NOT NULL, metadata jsonb NOT NULL DEFAULT '{{}}',
    tf jsonb NOT NULL DEFAULT '{{}}', dl integer NOT NULL DEFAULT 0,
    search_vector tsvector NOT NULL DEFAULT '', embedding vector(8));
CREATE INDEX chunks_embedding ON {s}.chunks USING hnsw (embedding vector_cosine_ops);
CREATE TABLE {s}.parents (id text PRIMARY KEY, title text NOT NULL DEFAULT '', text text NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{{}}');
CREATE TABLE {s}.terms (term text PRIMARY KEY, df integer NOT NULL);
CREATE TABLE {s}.stats (one boolean PRIMARY KEY DEFAULT true, n bigint NOT NULL DEFAULT 0,
    total_len bigint NOT NULL DEFAULT 0);
INSERT INTO {s}.zw_meta VALUES ('kb', '"{kb}"'), ('dim', '8'), ('schema_version', '1'),
    ('range_fields', '["n"]');
"""


@needs_pg
def test_schema_1_kb_is_upgraded_in_place(open_pg) -> None:
    """A KB written by the previous release (vectors inline) opens, migrated, with the same answers."""
    import json
    from collections import Counter

    from zhiwen.store.postgres import schema_name

    chunks, toks, vecs = _chunks(6), _tokens(6), _vec(30, 6)
    fresh = open_pg()
    fresh.upsert(chunks, tokens=toks, vectors=vecs, parents=[Document(id="d0", text="p")])
    kb = f"tpg_v1_{uuid.uuid4().hex[:8]}"
    schema = schema_name(kb)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(_SCHEMA_1.format(s=schema, kb=kb))
        for c, t, v in zip(chunks, toks, vecs, strict=True):
            conn.execute(
                f"INSERT INTO {schema}.chunks (id, doc_id, text, metadata, tf, dl, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s::vector)",
                (
                    c.id,
                    c.doc_id,
                    c.text,
                    json.dumps(c.metadata),
                    json.dumps(Counter(t)),
                    len(t),
                    str(v.tolist()),
                ),
            )
        conn.execute(f"INSERT INTO {schema}.parents (id, text) VALUES ('d0', 'p')")
        conn.execute(
            f"INSERT INTO {schema}.stats (n, total_len) VALUES (%s, %s)",
            (len(chunks), sum(len(t) for t in toks)),
        )
    old = open_pg(name=kb)  # the upgrade runs here
    assert old.count() == 6 and old.get_chunks([c.id for c in chunks]) == chunks
    assert old.get_parents(["d0"]) == [Document(id="d0", text="p")]
    for q in (["学区"], ["上海", "t3"], ["浦东", "t0", "学区"]):
        assert same_scores(old.search_text(q, 10), fresh.search_text(q, 10))
    assert [i for i, _ in old.search_vector(vecs[2], 3)] == [i for i, _ in fresh.search_vector(vecs[2], 3)]
    assert old.search_text(["学区"], 10, parse_filters({"n": {"gte": 3}})) == fresh.search_text(
        ["学区"], 10, parse_filters({"n": {"gte": 3}})
    )
    with psycopg.connect(PG_URL) as conn:
        assert conn.execute(
            f"SELECT value FROM {schema}.zw_meta WHERE key = 'schema_version'"
        ).fetchone() == (3,)
        assert conn.execute("SELECT to_regclass(%s)", (f"{schema}.terms",)).fetchone() == (None,)
    # schema 3: the vector count and the metadata fields came with the upgrade
    assert old.vector_count() == 6 and old.missing_vector_ids() == []
    assert old.metadata_fields() == fresh.metadata_fields() != set()
    old.upsert(_chunks(1, "new"), tokens=[["学区"]], vectors=_vec(31, 1))  # and it takes writes
    assert len(old.search_text(["学区"], 10)) == 3
