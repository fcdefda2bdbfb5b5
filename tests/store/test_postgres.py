"""PostgreSQL-specific tests: schema, SQL ranking parity, faults and recovery, transactions.

The contract itself is checked by ``test_conformance.py`` (parametrised over both backends);
this file covers what only the PG backend has. The shared local server is never stopped: an
outage is simulated with a TCP proxy we stop and restart, with a closed port, and by killing
the pool's backend connections (``pg_terminate_backend``) identified by a unique
``application_name``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid

import numpy as np
import psycopg
import pytest
from prometheus_client import REGISTRY

from zhiwen.config import PostgresSettings
from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, StoreUnavailable
from zhiwen.store._pg_filters import filter_sql
from zhiwen.store.filters import parse_filters

PG_URL = os.environ.get("ZHIWEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
PG_HOST, PG_PORT = "127.0.0.1", 5432

pytestmark = pytest.mark.postgres
DIM = 8


def _pg_reason() -> str | None:
    try:
        with psycopg.connect(PG_URL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:
        first = f"PostgreSQL with pgvector not usable at {PG_URL}: {exc}".splitlines()[0]
        return f"{first} (bash scripts/test.sh --system sets it up)"
    return None


_REASON = _pg_reason()
needs_pg = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


def _url_with_app(url: str, app: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}application_name={app}"


def _errors(kind: str) -> float:
    return (
        REGISTRY.get_sample_value("zhiwen_store_errors_total", {"backend": "postgres", "kind": kind}) or 0.0
    )


def _vec(seed: int, n: int = 1) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def same_scores(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    return [i for i, _ in a] == [i for i, _ in b] and [v for _, v in a] == pytest.approx([v for _, v in b])


def _chunks(n: int, prefix: str = "d") -> list[Chunk]:
    return [
        Chunk(
            id=f"{prefix}{i}#0",
            doc_id=f"{prefix}{i}",
            text=f"文本 {i}",
            metadata={"n": i, "cat": "ab"[i % 2]},
        )
        for i in range(n)
    ]


def _tokens(n: int) -> list[list[str]]:
    return [["上海", "浦东", f"t{i}"] + (["学区"] if i % 3 == 0 else []) for i in range(n)]


# -- pure units (no server) ---------------------------------------------------------------------
def test_schema_name_sanitising() -> None:
    from zhiwen.store.postgres import schema_name

    assert schema_name("recipes") == "zw_recipes"
    odd = schema_name("菜谱 Kb-1")
    assert odd.startswith("zw_") and odd != schema_name("菜谱 kb-1") and len(odd) <= 63
    assert all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in odd)
    assert len(schema_name("x" * 200)) <= 63
    with pytest.raises(InvalidParameter):
        schema_name("")


def test_filter_values_are_parameters_never_sql_text() -> None:
    evil = "x'); DROP TABLE chunks; --"
    where, params = filter_sql(parse_filters({"cat": evil, "n": {"gte": 2}, "k": {"in": [evil, 1]}}))
    text = where.as_string(None)
    assert "DROP" not in text and text.count("%s") == len(params) == 4


# -- schema and migrations ----------------------------------------------------------------------
@needs_pg
def test_schema_layout_vectors_apart_and_indexes(open_pg) -> None:
    s = open_pg()
    s.upsert(_chunks(4), tokens=_tokens(4), vectors=_vec(0, 4))
    with psycopg.connect(PG_URL) as conn:
        columns = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
                "AND table_name = 'chunks'",
                (s.schema,),
            )
        }
        assert "embedding" not in columns and "rid" in columns  # BM25 and chunk reads skip vectors
        idx = dict(
            conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s", (s.schema,))
        )
        assert "USING hnsw (embedding vector_cosine_ops)" in idx["vectors_embedding"]
        assert "m='16'" in idx["vectors_embedding"] and "ef_construction='64'" in idx["vectors_embedding"]
        assert "jsonb_path_ops" in idx["chunks_metadata"] and "jsonb_path_ops" in idx["vectors_metadata"]
        # the numeric field "n" got a range index on the same expression the filters use, twice
        ranged = [name for name, d in idx.items() if "jsonb_typeof" in d and "'n'" in d]
        assert sorted(n.split("_")[0] for n in ranged) == ["chunks", "vectors"]
        version = conn.execute(f'SELECT value FROM "{s.schema}".zw_meta WHERE key = %s', ("schema_version",))
        assert version.fetchone() == (3,)
        # one posting block per term here; "上海" is in all four chunks
        row = conn.execute(f'SELECT n FROM "{s.schema}".postings WHERE term = %s', ("上海",)).fetchone()
        assert row == (4,)


@needs_pg
def test_migrations_safe_to_rerun_and_dim_checks(open_pg) -> None:
    s1 = open_pg(name="tpg_mig")
    s1.upsert(_chunks(3), tokens=_tokens(3), vectors=_vec(1, 3))
    s2 = open_pg(name="tpg_mig")  # re-running every CREATE … IF NOT EXISTS
    assert s2.count() == 3
    s3 = open_pg(dim=None, name="tpg_mig")  # a reader that does not know the dim adopts it
    assert s3.dim == DIM
    with pytest.raises(InvalidParameter, match="维度"):
        open_pg(dim=DIM + 1, name="tpg_mig")


@needs_pg
def test_concurrent_first_open_of_one_kb(open_pg) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_pg(name="tpg_race")
        except BaseException as exc:  # pragma: no cover - the failure we are testing against
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@needs_pg
def test_list_and_drop_kb(open_pg) -> None:
    from zhiwen.store.postgres import drop_kb, list_kbs

    s = open_pg(name="tpg_list 知识库")
    s.close()
    assert "tpg_list 知识库" in list_kbs(PG_URL)
    assert drop_kb(PG_URL, "tpg_list 知识库") is True
    assert drop_kb(PG_URL, "tpg_list 知识库") is False
    assert "tpg_list 知识库" not in list_kbs(PG_URL)


# -- ranking ------------------------------------------------------------------------------------
@needs_pg
def test_bm25_scores_equal_reference_after_churn(open_pg) -> None:
    """True BM25 in SQL: the same scores as the embedded store and bm25s, after updates/deletes."""
    import bm25s

    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(200)]
    docs = [[vocab[j % 200] for j in rng.zipf(1.3, size=rng.integers(3, 40))] for _ in range(300)]
    s = open_pg(dim=None)
    s.upsert([Chunk(id=f"c{i}", doc_id=f"c{i}", text="x") for i in range(300)], tokens=docs)
    s.upsert([Chunk(id=f"c{i}", doc_id=f"c{i}", text="y") for i in range(60)], tokens=docs[60:120])
    s.delete(chunk_ids=[f"c{i}" for i in range(270, 300)])
    final = docs[60:120] + docs[60:270]
    ids = [f"c{i}" for i in range(270)]
    ref = bm25s.BM25(k1=1.5, b=0.75)
    ref.index(final, show_progress=False)
    for i in range(40):
        q = [vocab[j] for j in rng.integers(0, 200, size=rng.integers(1, 5))]
        q += [vocab[1 + i % 3]] if i % 2 else []  # common words: the MaxScore pruning path
        k = (5, 10, 50)[i % 3]
        want = ref.get_scores(list(dict.fromkeys(q))) * 2.5  # bm25s leaves out the k1 + 1 factor
        got = s.search_text(q, k)
        assert [v for _, v in got] == pytest.approx(sorted(want[want > 0], reverse=True)[:k], rel=1e-4)
        for cid, score in got:
            assert score == pytest.approx(float(want[ids.index(cid)]), rel=1e-4)


@needs_pg
def test_special_tokens_are_exact_lexemes(open_pg) -> None:
    s = open_pg(dim=None)
    toks = [["gpt-4", "a'b"], ["c\\d", "x|y", "!"], ["gpt", "4", "ab"], ["长" * 400]]
    s.upsert(_chunks(4), tokens=toks)
    assert [i for i, _ in s.search_text(["gpt-4"], 5)] == ["d0#0"]
    assert [i for i, _ in s.search_text(["a'b"], 5)] == ["d0#0"]
    assert [i for i, _ in s.search_text(["c\\d", "!"], 5)] == ["d1#0"]
    assert [i for i, _ in s.search_text(["x|y"], 5)] == ["d1#0"]
    assert [i for i, _ in s.search_text(["gpt"], 5)] == ["d2#0"]
    assert s.search_text(["长" * 400], 5) == []  # over the lexeme limit: stored, not searchable


@needs_pg
def test_injection_attempt_in_filter_value(open_pg) -> None:
    s = open_pg()
    s.upsert(_chunks(4), tokens=_tokens(4), vectors=_vec(2, 4))
    evil = parse_filters({"cat": "a'); DROP TABLE chunks; --"})
    assert s.search_text(["上海"], 10, evil) == []
    assert s.search_vector(_vec(3)[0], 10, evil) == []
    assert s.count() == 4


@needs_pg
def test_hnsw_serves_the_query_and_filtered_search_is_not_short(open_pg) -> None:
    """The HNSW index answers our exact query shape, and with a selective filter the iterative
    scan keeps walking the graph until k rows pass (plain HNSW would return ~ef_search * 2%).

    At this size the planner prefers a seq scan (exact anyway), so the one-connection pool is
    told ``enable_seqscan = off`` to exercise the index path.
    """
    n, dim = 2000, 32
    s = open_pg(dim=dim, settings=PostgresSettings(pool_min_size=1, pool_max_size=1))
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    chunks = [Chunk(id=f"v{i}", doc_id=f"v{i}", text="v", metadata={"g": i % 50}) for i in range(n)]
    s.upsert(chunks, tokens=[["v"]] * n, vectors=vecs)
    q = vecs[0]
    with s.pool.connection() as conn:
        conn.execute("SELECT set_config('enable_seqscan', 'off', false)")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                f'EXPLAIN SELECT id FROM "{s.schema}".vectors ORDER BY embedding <=> %s LIMIT 10',
                (q,),
            )
        )
    assert "Index Scan using vectors_embedding" in plan, plan
    try:
        got = s.search_vector(q, 10)
        exact = np.argsort(-(vecs @ q))[:10]
        assert len({i for i, _ in got} & {f"v{j}" for j in exact}) >= 9
        # 2% of rows pass the filter
        res = s.search_vector(q, 20, parse_filters({"g": 7}))
        assert len(res) == 20 and all(int(i[1:]) % 50 == 7 for i, _ in res)
        scores = [v for _, v in res]
        assert scores == sorted(scores, reverse=True)
    finally:
        with s.pool.connection() as conn:
            conn.execute("SELECT set_config('enable_seqscan', 'on', false)")


@needs_pg
def test_unchanged_reupsert_does_not_rewrite_rows(open_pg) -> None:
    s = open_pg()
    chunks, toks, vecs = _chunks(5), _tokens(5), _vec(4, 5)
    s.upsert(chunks, tokens=toks, vectors=vecs)
    sql_xmin = f'SELECT id, xmin::text FROM "{s.schema}".chunks ORDER BY id'
    with psycopg.connect(PG_URL) as conn:
        before = conn.execute(sql_xmin).fetchall()
    s.upsert(chunks, tokens=toks, vectors=vecs)
    changed = Chunk(id="d1#0", doc_id="d1", text="改了", metadata={"n": 1})
    s.upsert([changed], tokens=[["改了"]], vectors=vecs[1:2])
    with psycopg.connect(PG_URL) as conn:
        after = dict(conn.execute(sql_xmin).fetchall())
    assert {k: v for k, v in before if k != "d1#0"} == {k: v for k, v in after.items() if k != "d1#0"}
    assert after["d1#0"] != dict(before)["d1#0"]


# -- transactions -------------------------------------------------------------------------------
@needs_pg
def test_failure_after_sql_writes_rolls_everything_back(open_pg, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deletes and inserts already ran inside PostgreSQL when the write fails: nothing lands."""
    from zhiwen.store import _pg_load

    s = open_pg()
    chunks, toks, vecs = _chunks(6), _tokens(6), _vec(5, 6)
    s.upsert(chunks, tokens=toks, vectors=vecs, parents=[Document(id="d0", text="p")])
    text_before = s.search_text(["学区", "上海"], 10)
    vec_before = s.search_vector(vecs[2], 3)

    def boom(*args: object) -> None:
        raise RuntimeError("disk full (simulated)")

    monkeypatch.setattr(_pg_load, "update_stats", boom)
    new = [Chunk(id="d0#0", doc_id="d0", text="新"), Chunk(id="z#0", doc_id="z", text="新文档")]
    with pytest.raises(RuntimeError):
        s.upsert(
            new, tokens=[["新"], ["新文档", "学区"]], vectors=_vec(6, 2), parents=[Document(id="z", text="p")]
        )
    with pytest.raises(RuntimeError):
        s.delete(doc_ids=["d1", "d2"])
    monkeypatch.undo()
    assert s.count() == 6
    assert s.get_chunks([c.id for c in chunks]) == chunks
    assert s.doc_ids() == {f"d{i}" for i in range(6)}
    assert same_scores(s.search_text(["学区", "上海"], 10), text_before)  # df/N/avgdl intact
    assert same_scores(s.search_vector(vecs[2], 3), vec_before)
    assert s.search_text(["新文档"], 5) == []


@needs_pg
def test_failed_bulk_load_restores_indexes(open_pg, monkeypatch: pytest.MonkeyPatch) -> None:
    """A load that doubles the KB drops and rebuilds the indexes inside its transaction."""
    from zhiwen.store import _pg_load

    s = open_pg()
    s.upsert(_chunks(3), tokens=_tokens(3), vectors=_vec(20, 3))
    big = _chunks(1200, "b")

    def boom(*args: object) -> None:
        raise RuntimeError("killed mid-load (simulated)")

    monkeypatch.setattr(_pg_load, "update_stats", boom)
    with pytest.raises(RuntimeError):
        s.upsert(big, tokens=_tokens(1200), vectors=_vec(21, 1200))
    monkeypatch.undo()
    idx_sql = "SELECT indexname FROM pg_indexes WHERE schemaname = %s"
    with psycopg.connect(PG_URL) as conn:
        names = {r[0] for r in conn.execute(idx_sql, (s.schema,))}
    assert {"vectors_embedding", "vectors_metadata", "chunks_metadata"} <= names
    assert s.count() == 3
    s.upsert(big, tokens=_tokens(1200), vectors=_vec(21, 1200))  # now for real
    with psycopg.connect(PG_URL) as conn:
        assert {r[0] for r in conn.execute(idx_sql, (s.schema,))} == names
    assert s.count() == 1203
    assert len(s.search_text(["学区"], 1000)) == 1 + 400


@needs_pg
def test_bad_vector_dims_leave_previous_content(open_pg) -> None:
    s = open_pg()
    s.upsert(_chunks(3), tokens=_tokens(3), vectors=_vec(7, 3))
    with pytest.raises(InvalidParameter):
        s.upsert(_chunks(3, "x"), tokens=_tokens(3), vectors=np.ones((3, DIM + 2), np.float32))
    with pytest.raises(InvalidParameter):
        s.upsert(_chunks(2, "x"), tokens=_tokens(2), vectors=np.full((2, DIM), np.nan, np.float32))
    assert s.count() == 3 and s.doc_ids() == {"d0", "d1", "d2"}


# -- faults and recovery ------------------------------------------------------------------------
def test_closed_port_is_store_unavailable_fast() -> None:
    from zhiwen.store.postgres import PostgresStore

    before = _errors("connect")
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailable) as info:
        PostgresStore("postgresql://postgres@127.0.0.1:1/postgres", kb="down", dim=DIM)
    assert time.monotonic() - t0 < 5  # refused at once, not after the 5 s connect timeout
    assert info.value.code == 2002 and info.value.http_status == 503
    assert "PostgreSQL" in info.value.message and "无法连接" in info.value.message
    assert _errors("connect") == before + 1


@needs_pg
def test_killed_backend_connections_are_replaced(open_pg) -> None:
    app = f"zwtest_{uuid.uuid4().hex[:8]}"
    s = open_pg(url=_url_with_app(PG_URL, app), settings=PostgresSettings(pool_min_size=2, pool_max_size=3))
    s.upsert(_chunks(4), tokens=_tokens(4), vectors=_vec(8, 4))
    assert len(s.search_text(["上海"], 10)) == 4
    for _ in range(2):
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                (app,),
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        # pre-ping finds the dead connections; the next calls work without any restart
        assert len(s.search_text(["上海"], 10)) == 4
        assert len(s.search_vector(_vec(9)[0], 10)) >= 4
        s.upsert(_chunks(1, "k"), tokens=[["别的"]], vectors=_vec(10, 1))


class TcpProxy:
    """A tiny TCP forwarder to the real server: stopping it is a database outage for its clients."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        lst = socket.socket()
        lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lst.bind(("127.0.0.1", self.port))
        lst.listen(16)
        self.port = lst.getsockname()[1]
        self._listener = lst
        threading.Thread(target=self._accept, args=(lst,), daemon=True).start()

    def _accept(self, lst: socket.socket) -> None:
        while True:
            try:
                client, _ = lst.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        if self._listener is not None:
            # shutdown wakes the thread blocked in accept(); close() alone would not, and that
            # accept() would still let one more connection through
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            socks, self._socks = self._socks, []
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@needs_pg
def test_outage_gives_503_error_then_recovers_by_itself(open_pg) -> None:
    proxy = TcpProxy((PG_HOST, PG_PORT))
    proxy.start()
    try:
        url = f"postgresql://postgres@127.0.0.1:{proxy.port}/postgres"
        settings = PostgresSettings(pool_min_size=1, pool_max_size=3, pool_timeout_s=10, connect_timeout_s=2)
        s = open_pg(url=url, settings=settings)
        s.upsert(_chunks(3), tokens=_tokens(3), vectors=_vec(11, 3))
        assert s.count() == 3

        proxy.stop()  # the database goes away
        before = _errors("connect")
        for call in (lambda: s.search_text(["上海"], 5), lambda: s.search_vector(_vec(12)[0], 5), s.count):
            t0 = time.monotonic()
            with pytest.raises(StoreUnavailable) as info:
                call()
            assert time.monotonic() - t0 < 8  # fails fast, not after the 10 s pool timeout
            assert info.value.http_status == 503 and "PostgreSQL" in info.value.message
        with pytest.raises(StoreUnavailable):
            s.upsert(_chunks(1, "n"), tokens=[["新"]], vectors=_vec(13, 1))
        assert _errors("connect") > before

        time.sleep(1.5)  # let the pool's own reconnect attempts fail and back off
        proxy.start()  # the database is back, same address
        assert s.count() == 3  # no restart, no half-written upsert from the outage
        assert len(s.search_text(["上海"], 5)) == 3
        s.upsert(_chunks(1, "n"), tokens=[["新"]], vectors=_vec(13, 1))
        assert s.count() == 4
    finally:
        proxy.stop()


@needs_pg
def test_stores_share_one_pool_per_database(open_pg) -> None:
    a, b = open_pg(), open_pg()
    assert a.pool is b.pool
    a.close()
    b.upsert(_chunks(2), tokens=_tokens(2), vectors=_vec(14, 2))
    assert b.count() == 2
    st = b.stats()
    assert st["backend"] == "postgres" and st["chunks"] == 2 and st["bytes"] > 0 and st["pgvector"]


@needs_pg
def test_api_answers_503_while_database_down_and_recovers(
    zhiwen_home, monkeypatch: pytest.MonkeyPatch, kb_names: list[str]
) -> None:
    """End to end: KnowledgeBase on PG behind the API; outage → HTTP 503 + Chinese message."""
    from fastapi.testclient import TestClient

    from zhiwen.api.app import create_app
    from zhiwen.config import Settings, reset_settings_cache
    from zhiwen.kb import close_all, open_kb

    proxy = TcpProxy((PG_HOST, PG_PORT))
    proxy.start()
    try:
        monkeypatch.setenv("ZHIWEN_STORE", f"postgresql://postgres@127.0.0.1:{proxy.port}/postgres")
        monkeypatch.setenv("ZHIWEN_POSTGRES__POOL_TIMEOUT_S", "10")
        reset_settings_cache()
        settings = Settings()
        name = f"tpg_api_{uuid.uuid4().hex[:6]}"
        kb_names.append(name)
        kb = open_kb(name, settings=settings, create=True, embedder="hash")
        docs = [
            Document(id="gongbao", text="# 宫保鸡丁\n宫保鸡丁的做法：鸡丁、花生、辣椒。", title="宫保鸡丁")
        ]
        kb.index_documents(docs, progress=False)
        client = TestClient(create_app(settings))
        body = {"kb": name, "query": "宫保鸡丁怎么做", "mode": "bm25"}
        ok = client.post("/knowledge-base/search", json=body)
        assert ok.status_code == 200 and ok.json()["data"]["results"]

        proxy.stop()
        down = client.post("/knowledge-base/search", json=body)
        assert down.status_code == 503, down.text
        assert down.json()["code"] == 2002 and "PostgreSQL" in down.json()["message"]

        proxy.start()
        again = client.post("/knowledge-base/search", json=body)
        assert again.status_code == 200 and again.json()["data"]["results"]
    finally:
        proxy.stop()
        close_all()


# -- schema 3: vector count and metadata fields; request deadlines -----------------------------------
@needs_pg
def test_schema_2_kb_is_upgraded_to_3(open_pg) -> None:
    s = open_pg(name=f"tpg_v2_{uuid.uuid4().hex[:8]}")
    s.upsert(_chunks(4), tokens=_tokens(4), vectors=_vec(3, 4))
    s.upsert(_chunks(2, "lex"), tokens=_tokens(2), vectors=None)
    with psycopg.connect(PG_URL, autocommit=True) as conn:  # what schema 2 looked like
        conn.execute(f'ALTER TABLE "{s.schema}".stats DROP COLUMN nv')
        conn.execute(f"DELETE FROM \"{s.schema}\".zw_meta WHERE key = 'metadata_fields'")
        conn.execute(f"UPDATE \"{s.schema}\".zw_meta SET value = '2' WHERE key = 'schema_version'")
    s.close()
    again = open_pg(name=s.kb)
    assert again.vector_count() == 4 and again.count() == 6
    assert again.missing_vector_ids() == ["lex0#0", "lex1#0"]
    assert again.metadata_fields() == {k for c in _chunks(4) for k, v in c.metadata.items() if v is not None}


@needs_pg
def test_a_schema_of_a_newer_release_is_refused_untouched(open_pg) -> None:
    from zhiwen.versions import FormatTooNew

    s = open_pg(name=f"tpg_v9_{uuid.uuid4().hex[:8]}")
    s.upsert(_chunks(2), tokens=_tokens(2), vectors=_vec(3, 2))
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"UPDATE \"{s.schema}\".zw_meta SET value = '99' WHERE key = 'schema_version'")
    s.close()
    with pytest.raises(FormatTooNew) as err:
        open_pg(name=s.kb)
    assert "请升级 zhiwen" in err.value.message
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        q = f"SELECT value FROM \"{s.schema}\".zw_meta WHERE key = 'schema_version'"
        assert conn.execute(q).fetchone()[0] == 99


@needs_pg
def test_deadline_bounds_every_statement(open_pg) -> None:
    from zhiwen.retry import deadline_scope

    s = open_pg()
    s.upsert(_chunks(3), tokens=_tokens(3), vectors=_vec(5, 3))
    before = _errors("deadline")
    for autocommit in (True, False):
        t0 = time.monotonic()
        with (
            deadline_scope(0.3),
            pytest.raises(StoreUnavailable) as err,
            s.pool.connection(autocommit=autocommit) as conn,
        ):
            conn.execute("SELECT pg_sleep(5)")
        assert time.monotonic() - t0 < 4  # the 0.3 s deadline fired, not the 5 s statement
        assert err.value.data == {"reason": "deadline"} and "时限" in err.value.message
    assert _errors("deadline") == before + 2
    # the timeout does not stick to the pooled connections, and searches within time work
    with s.pool.connection(autocommit=True) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
    with deadline_scope(5.0):
        assert len(s.search_vector(_vec(5, 1)[0], k=2)) == 2
    with deadline_scope(0.0), pytest.raises(StoreUnavailable, match="时限"):
        s.search_vector(_vec(5, 1)[0], k=2)
