"""Follow-ups among look-alike pages (#35): hit@5 per condition and per kind of follow-up, and
the standalone check of the topic prior — in one run, offline.

The pool (:mod:`lookalike_pool`, generated with ``--seed`` into ``ZHIWEN_HOME``): sibling
colleges of several universities whose pages share their ten headings, one page per major, and
each university's news. The dialogues are generated from the same facts, each turn with its
gold page, its gold standalone question and its kind (``generic``, ``part``, ``complete`` — the
three kinds of misses — and ``anaphora``, ``subject``, ``switch``). ``--list-dialogues`` more,
drawn with their own seed after those (the pool's own dialogues stay the same), test two kinds
the pool has not: ``ordinal`` — 「第二个专业是哪一年开设的？」「那第三个呢？」「最后一个呢？」 after
「…有哪些本科专业？」 (the item of the list the product's answer enumerated) — and ``sibling`` —
「那外国语学院呢？」「外国语学院的院长是谁？」 after a college of the same university (the university
kept); ``sibling-next`` is the generic follow-up after such a switch (the new topic carried).
Under ``llm``/``llm+prior`` the answers in the history are the fake's (no list in them): an
ordinal there is the LLM's to resolve.

**a — follow-ups' hit@5** (a gold page among the answer's first 5 distinct cited documents),
every dialogue through the product's entry point ``zhiwen.conversation.service.ask`` (generic
QA) with the product's own answers as the history. Conditions:

* ``asked`` — the conversation stage off: every question as typed;
* ``pasted`` — the dialogue's first question pasted in front of every follow-up, no history;
* ``oracle`` — the gold standalone question, no history ("the right topic by hand");
* ``offline`` — the stage's offline rules, the topic prior off (``conversation.topic_prior=0``;
  run with ``PYTHONPATH`` at an older tree, the column is that tree's product);
* ``offline+prior`` — the offline rules and the topic prior (the product's default);
* ``llm+prior`` / ``llm`` — an LLM condense step (a scripted fake OpenAI server answers the
  condense call with the gold standalone), with and without the prior.

``--weights`` adds ``offline+prior`` at other prior weights (and ``first``: focused pages first).

**b — the standalone check**: RGB-zh and a CMRC2018 sample, each query after an unrelated
two-turn chat (``bench_conversation``'s six), through the same call on both sides
(``RetrievalPipeline.search_parents``, ``--beir-mode``, default BM25): the plain query vs the
stage's standalone question with its focus as the prior. With no history at all there is no
focus and the call is the plain one (the third column says so, query by query).

Usage::

    python bench/bench_followups.py                          # a + b, ~10 min on 2 cores
    python bench/bench_followups.py --sections a --dialogues 60
    python bench/bench_followups.py --sections b --cmrc-queries 300
    PYTHONPATH=/tmp/before/src python bench/bench_followups.py --sections a --conditions offline
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import random
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("ZHIWEN_HOME", str(REPO / ".zhiwen-bench"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bench"))

from bench_conversation import UNRELATED, beir_kb, cited_ids, is_hit  # noqa: E402
from lookalike_pool import GENERIC, College, Pool, dialogues  # noqa: E402
from support.fake_openai import FakeOpenAI, Reply  # noqa: E402
from zhiwen.appkit.app import AppContext, AskRequest  # noqa: E402
from zhiwen.appkit.context import build_context  # noqa: E402
from zhiwen.appkit.registry import load_apps  # noqa: E402
from zhiwen.config import ConversationSettings, LLMSettings, Settings  # noqa: E402
from zhiwen.conversation import service as conversation  # noqa: E402
from zhiwen.conversation.condense import SYSTEM as CONDENSE_SYSTEM  # noqa: E402
from zhiwen.conversation.vocabulary import kb_vocabulary  # noqa: E402
from zhiwen.eval.metrics import score_run  # noqa: E402
from zhiwen.kb import open_kb  # noqa: E402
from zhiwen.llm import clear_llm_cache  # noqa: E402

KB = "lookalike"
CONDITIONS = ("asked", "pasted", "oracle", "offline", "offline+prior", "llm", "llm+prior")
KINDS = ("generic", "part", "complete", "anaphora", "subject", "switch", "ordinal", "sibling", "sibling-next")
MISSES = ("generic", "part", "complete")
HAS_PRIOR = "topic_prior" in ConversationSettings.model_fields
log = logging.getLogger("bench_followups")


# ------------------------------------------------------------------------------------------------
# the pool
# ------------------------------------------------------------------------------------------------
def build_pool(settings: Settings, args: argparse.Namespace) -> tuple[Pool, str]:
    pool = Pool.generate(args.seed, universities=args.universities, colleges=args.colleges)
    root = Path(settings.home) / "lookalike-pages"
    shutil.rmtree(root, ignore_errors=True)  # the pages of this run's pool only
    pool.write(root)
    kb = open_kb(KB, settings=settings, create=True, embedder=args.embedder)
    started = time.perf_counter()
    report = kb.index_path(root, fmt="markdown", prune=True, progress=False)
    note = (
        f"{report.documents} pages, {report.chunks} chunks, indexed in {time.perf_counter() - started:.1f} s "
        f"({args.embedder} embedder)"
    )
    return pool, note


# ------------------------------------------------------------------------------------------------
# the dialogues of the kinds the pool's own do not draw: ordinals and sibling part-names
# ------------------------------------------------------------------------------------------------
def _turn(user: str, gold: str, standalone: str, kind: str) -> dict[str, Any]:
    return {"user": user, "gold": [gold], "standalone": standalone, "kind": kind}


def _ordinal_dialogue(rng: random.Random, c: College) -> list[dict[str, Any]]:
    """「…有哪些本科专业？」, then majors by their place in the answer's list."""
    opener = f"{c.full}有哪些本科专业？"
    turns = [_turn(opener, c.page_id("本科生培养"), opener, "opener")]
    n = rng.randrange(len(c.majors))
    asked = f"{c.full}{c.majors[n]}专业是哪一年开设的？"
    user = f"第{'一二三四五'[n]}个专业是哪一年开设的？"
    turns.append(_turn(user, c.major_id(c.majors[n]), asked, "ordinal"))
    k = (n + 1) % len(c.majors)
    for user, m in (("那最后一个呢？", len(c.majors) - 1), (f"那第{'一二三四五'[k]}个呢？", k)):
        turns.append(_turn(user, c.major_id(c.majors[m]), asked.replace(c.majors[n], c.majors[m]), "ordinal"))
    return turns


def _sibling_dialogue(rng: random.Random, c: College, pool: Pool) -> list[dict[str, Any]]:
    """A college, then two other colleges of its university by their short names."""
    opener = f"{c.full}是哪一年成立的？"
    turns = [_turn(opener, c.page_id("概况"), opener, "opener")]
    same = [o for o in pool.colleges if o.university == c.university and o is not c]
    first, second = rng.sample(same, 2)
    asked = f"{first.full}是哪一年成立的？"
    turns.append(_turn(f"那{first.name}呢？", first.page_id("概况"), asked, "sibling"))
    heading, user, full = rng.choice(GENERIC[:17])
    turns.append(_turn(user, first.page_id(heading), full.format(t=first.full), "sibling-next"))
    asked = f"{second.full}的院长是谁？"
    turns.append(_turn(f"{second.name}的院长是谁？", second.page_id("概况"), asked, "sibling"))
    return turns


def list_dialogues(pool: Pool, n: int, *, seed: int) -> list[dict[str, Any]]:
    """``n`` dialogues, half of ordinals and half of sibling part-names (their own seed)."""
    rng = random.Random(f"lists-{seed}")
    out = []
    for i in range(n):
        c = rng.choice(pool.colleges)
        turns = _ordinal_dialogue(rng, c) if i % 2 == 0 else _sibling_dialogue(rng, c, pool)
        out.append({"app": "qa", "kb": KB, "turns": turns})
    return out


# ------------------------------------------------------------------------------------------------
# a: the conditions
# ------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class TurnResult:
    dialogue: int
    turn: int
    kind: str
    user: str
    searched: str | None
    focus: list[str]
    cited: list[str]
    hit: bool


class CondenseFake(FakeOpenAI):
    """Answers the condense call with the turn's gold standalone, every other call plainly."""

    def __init__(self) -> None:
        super().__init__()
        self.gold = ""

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        super()._next(body, headers)
        messages = body.get("messages") or [{}]
        if str(messages[0].get("content", "")) == CONDENSE_SYSTEM:
            return Reply(self.gold)
        return Reply("根据知识库中的资料，答案见引用 [1]。")


def condition_settings(base: Settings, condition: str, fake: CondenseFake | None, weight: str) -> Settings:
    """The settings a condition runs with (``weight``: the prior's weight, or ``first``)."""
    prior: dict[str, Any] = {}
    if HAS_PRIOR:
        on = condition.endswith("+prior")
        strategy = "first" if weight == "first" else "boost"
        prior = {"topic_prior": (1.0 if weight == "first" else float(weight)) if on else 0.0}
        prior["topic_prior_strategy"] = strategy
    enabled = condition not in ("asked", "pasted", "oracle")
    update: dict[str, Any] = {"conversation": ConversationSettings(enabled=enabled, **prior)}
    if condition.startswith("llm") and fake is not None:
        update["llm"] = LLMSettings(
            base_url=fake.base_url, api_key="x", model="fake", max_retries=0, timeout_s=5.0
        )
    return base.model_copy(update=update)


def asked_as(condition: str, dialogue: Mapping[str, Any], i: int) -> tuple[str, bool]:
    """What a condition asks at turn ``i`` and whether it sends the history."""
    turn = dialogue["turns"][i]
    if condition == "pasted" and i > 0:
        return f"{dialogue['turns'][0]['user']} {turn['user']}", False
    if condition == "oracle":
        return turn["standalone"], False
    return turn["user"], condition != "asked"


def run_dialogue(
    condition: str, index: int, dialogue: Mapping[str, Any], ctx: AppContext, fake: CondenseFake | None
) -> list[TurnResult]:
    answerer = load_apps().answerer(None)
    history: list[dict[str, Any]] = []
    out = []
    for i, turn in enumerate(dialogue["turns"]):
        question, with_history = asked_as(condition, dialogue, i)
        if fake is not None:
            fake.gold = turn["standalone"]
        request = AskRequest(question=question, history=list(history) if with_history else [], kb=KB)
        answer = conversation.ask(answerer, request, ctx)
        focus = ((answer.params or {}).get("focus") or {}).get("names", [])
        cited = cited_ids(answer)
        out.append(
            TurnResult(
                index,
                i,
                turn["kind"],
                turn["user"],
                answer.standalone_question,
                focus,
                cited,
                is_hit(cited, turn["gold"]),
            )
        )
        history += [
            {"role": "user", "content": turn["user"]},
            {"role": "assistant", "content": answer.answer},
        ]
    return out


@contextmanager
def maybe_fake(needed: bool) -> Iterator[CondenseFake | None]:
    if not needed:
        yield None
        return
    fake = CondenseFake().start()
    try:
        yield fake
    finally:
        fake.stop()


def run_condition(
    condition: str, base: Settings, ds: Sequence[Mapping[str, Any]], fake: CondenseFake | None, weight: str
) -> list[TurnResult]:
    settings = condition_settings(base, condition, fake, weight)
    clear_llm_cache()
    ctx = build_context(settings) if condition.startswith("llm") else build_context(settings, llm=None)
    out: list[TurnResult] = []
    for i, d in enumerate(ds):
        out += run_dialogue(condition, i, d, ctx, fake if condition.startswith("llm") else None)
    return out


def fmt(hits: Sequence[bool]) -> str:
    return f"{sum(hits) / len(hits):.2f} ({sum(hits)}/{len(hits)})" if hits else "–"


def hit_table(runs: Mapping[str, list[TurnResult]]) -> str:
    cols = list(runs)
    head = "| follow-ups | n | " + " | ".join(cols) + " |\n|---|---|" + "---|" * len(cols) + "\n"
    groups: list[tuple[str, Any]] = [("**all follow-ups**", lambda r: True)]
    groups.append(("the three kinds of misses", lambda r: r.kind in MISSES))
    groups.append(("the pool's own kinds", lambda r: r.kind in KINDS[:6]))
    groups += [(f"… {k}", lambda r, k=k: r.kind == k) for k in KINDS]
    rows = []
    for label, keep in groups:
        sel = {c: [r.hit for r in rs if r.turn > 0 and keep(r)] for c, rs in runs.items()}
        n = len(next(iter(sel.values())))
        rows.append(f"| {label} | {n} | " + " | ".join(fmt(sel[c]) for c in cols) + " |")
    return head + "\n".join(rows)


def pool_table(pool: Pool, ds: Sequence[Mapping[str, Any]]) -> str:
    kinds: dict[str, int] = {}
    for d in ds:
        for t in d["turns"][1:]:
            kinds[t["kind"]] = kinds.get(t["kind"], 0) + 1
    universities = len({c.university for c in pool.colleges})
    return (
        "| pages | sibling colleges | universities | dialogues | follow-ups | "
        + " | ".join(KINDS)
        + " |\n|---|---|---|---|---|"
        + "---|" * len(KINDS)
        + f"\n| {len(pool.pages)} | {len(pool.colleges)} | {universities} | {len(ds)} "
        + f"| {sum(kinds.values())} | "
        + " | ".join(str(kinds.get(k, 0)) for k in KINDS)
        + " |"
    )


def examples(runs: Mapping[str, list[TurnResult]], condition: str, limit: int = 8) -> list[str]:
    """Follow-ups the condition missed (what it searched, its focus)."""
    missed = [r for r in runs.get(condition, []) if r.turn > 0 and not r.hit][:limit]
    return [f"- {r.kind}: `{r.user}` → `{r.searched}` focus {r.focus or '–'}" for r in missed]


def section_followups(
    args: argparse.Namespace, settings: Settings, out: dict[str, Any], text: list[str]
) -> None:
    pool, note = build_pool(settings, args)
    ds = dialogues(pool, args.dialogues, seed=args.seed, kb=KB)
    ds += list_dialogues(pool, args.list_dialogues, seed=args.seed)
    conditions = [c for c in args.conditions if HAS_PRIOR or not c.endswith("+prior")]
    runs: dict[str, list[TurnResult]] = {}
    notes = [note]
    with maybe_fake(any(c.startswith("llm") for c in conditions)) as fake:
        for c in conditions:
            started = time.perf_counter()
            runs[c] = run_condition(c, settings, ds, fake, args.weight)
            notes.append(f"{c}: {time.perf_counter() - started:.1f} s")
        if HAS_PRIOR:
            for w in args.weights:
                runs[f"offline+prior {w}"] = run_condition("offline+prior", settings, ds, fake, w)
    out["followups"] = {c: [asdict(r) for r in rs] for c, rs in runs.items()}
    shown = "offline+prior" if "offline+prior" in runs else conditions[-1]
    text += [
        "### a — follow-ups among look-alike pages: hit@5 (answer citations, first 5 distinct documents)",
        "",
        pool_table(pool, ds),
        "",
        hit_table(runs),
        "",
        f"Prior weight {args.weight} (``conversation.topic_prior``); "
        + ("this tree has the topic prior." if HAS_PRIOR else "**this tree has no topic prior**."),
        "",
        f"Missed by `{shown}` (first few):",
        "",
        *examples(runs, shown),
        "",
        *[f"- {n}" for n in notes],
        "",
    ]


# ------------------------------------------------------------------------------------------------
# b: the standalone check
# ------------------------------------------------------------------------------------------------
def search_docs(ctx: AppContext, kb: Any, query: str, mode: str, focus: Any = None) -> list[str]:
    if focus is None:
        found = ctx.pipeline.search_parents(kb, query, top_k=10, mode=mode)
    else:
        found = ctx.pipeline.search_parents(kb, query, top_k=10, mode=mode, focus=focus)
    return [p.document.id for p in found.parents]


def _focus(names: Sequence[str], settings: Settings) -> Any:
    if not HAS_PRIOR:
        return None
    from zhiwen.answer.qa import focus_for

    return focus_for(names, settings)


def bench_standalone(
    args: argparse.Namespace, settings: Settings, name: str, n: int | None
) -> dict[str, Any]:
    kb, ds = beir_kb(settings, name, args.embedder)
    ctx = build_context(settings, llm=None)
    vocab = kb_vocabulary(kb)
    runs: dict[str, dict[str, list[str]]] = {"plain": {}, "stage": {}, "no history": {}}
    changed = focused = 0
    for i, qid in enumerate(ds.sample(n, seed=0)):
        q = ds.queries[qid].strip()
        history = [
            {"role": r, "content": t}
            for pair in UNRELATED[i % len(UNRELATED)]
            for r, t in zip(("user", "assistant"), pair, strict=True)
        ]
        found = conversation.condensed(history, q, ctx, vocab)
        alone = conversation.condensed([], q, ctx, vocab)
        names = tuple(getattr(found, "focus", ()))
        changed += found.question != q
        focused += bool(names)
        runs["plain"][qid] = search_docs(ctx, kb, q, args.beir_mode)
        runs["stage"][qid] = search_docs(ctx, kb, found.question, args.beir_mode, _focus(names, settings))
        alone_names = tuple(getattr(alone, "focus", ()))
        runs["no history"][qid] = search_docs(
            ctx, kb, alone.question, args.beir_mode, _focus(alone_names, settings)
        )
    nd = {k: score_run(v, ds.qrels, k=10).means()["ndcg@10"] for k, v in runs.items()}
    same = sum(runs["no history"][q] == runs["plain"][q] for q in runs["plain"])
    return {
        "dataset": name,
        "queries": len(runs["plain"]),
        "changed": changed,
        "focused": focused,
        "ndcg_plain": nd["plain"],
        "ndcg_stage": nd["stage"],
        "delta": nd["stage"] - nd["plain"],
        "no_history_identical": same,
        "vocabulary": len(vocab),
    }


def standalone_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = (
        "| dataset | queries | titles + sibling names | rewritten | with a focus | nDCG@10 plain "
        "| nDCG@10 stage + prior | Δ | within 0.005 | no history: lists identical |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
    )
    return head + "\n".join(
        f"| {r['dataset']} | {r['queries']} | {r['vocabulary']} | {r['changed']} | {r['focused']} "
        f"| {r['ndcg_plain']:.4f} | {r['ndcg_stage']:.4f} | {r['delta']:+.4f} "
        f"| {'yes' if abs(r['delta']) <= 0.005 else '**no**'} | {r['no_history_identical']}/{r['queries']} |"
        for r in rows
    )


def section_standalone(
    args: argparse.Namespace, settings: Settings, out: dict[str, Any], text: list[str]
) -> None:
    rows = [
        bench_standalone(args, settings, "rgb_zh_retrieval", args.rgb_queries),
        bench_standalone(args, settings, "cmrc2018_retrieval", args.cmrc_queries),
    ]
    out["standalone_check"] = rows
    text += [
        f"### b — the standalone check ({args.beir_mode} mode, `search_parents` on both sides; "
        "each query after an unrelated two-turn chat)",
        "",
        standalone_table(rows),
        "",
    ]


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------
def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--sections", nargs="+", default=["a", "b"], choices=["a", "b"])
    p.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    p.add_argument("--dialogues", type=int, default=150)
    p.add_argument(
        "--list-dialogues", type=int, default=40, help="dialogues of ordinals and sibling names (0: none)"
    )
    p.add_argument("--universities", type=int, default=8)
    p.add_argument("--colleges", type=int, default=20)
    p.add_argument("--weight", default="0.5", help="the prior's weight for the +prior columns, or 'first'")
    p.add_argument("--weights", nargs="*", default=[], help="more offline+prior columns at these weights")
    p.add_argument("--embedder", default="hash")
    p.add_argument("--beir-mode", default="bm25", choices=["bm25", "dense", "hybrid"])
    p.add_argument("--rgb-queries", type=int, default=None, help="RGB-zh queries (default all 300)")
    p.add_argument("--cmrc-queries", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.ERROR)
    settings = Settings(home=Path(os.environ["ZHIWEN_HOME"]), embedding={"provider": args.embedder})
    started = dt.datetime.now(dt.UTC)
    load = os.getloadavg()[0]
    out: dict[str, Any] = {"embedder": args.embedder, "seed": args.seed}
    text = [
        f"## Follow-ups among look-alike pages — {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores",
        "",
        f"Embedder {args.embedder}, seed {args.seed}, load average {load:.2f} at the start.",
        "",
    ]
    if "a" in args.sections:
        section_followups(args, settings, out, text)
    if "b" in args.sections:
        section_standalone(args, settings, out, text)
    report = "\n".join(text)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M")
    (args.out / f"followups-{stamp}.md").write_text(report, "utf-8")
    (args.out / f"followups-{stamp}.json").write_text(
        json.dumps(out, ensure_ascii=False, indent=1, default=str), "utf-8"
    )
    print(f"\n(written to {args.out}/followups-{stamp}.md/.json)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
