"""Every LLM path of zhiwen against a real model (#31): what it made usable, repaired, or fell back.

A real OpenAI-compatible server (``bash scripts/local-llm.sh``: llama.cpp's server with Gemma 3
270M, or any ``--base-url``) answers every call; a recording proxy on loopback sits between zhiwen
and it, so each request's LLM calls, raw replies and latencies are seen from outside — nothing in
``src/`` is changed or patched. Each path runs the product's own entry point on a fixed question
set (``bench/llm_sets/*.jsonl``, ≥ 20 each, written from ``../shared/data`` and the bench's
dialogue and policy sets):

===================  =========================================================================
path                 entry point, and what counts
===================  =========================================================================
qa                   generic QA (``conversation.ask``, statutes KB): ``Answer.llm_used``, citations
recipes              the recipe app (LLM routing when the rules are unsure, then the answer)
policy               the policy app: ``policy.intent`` (``classification.method``), ``policy.rewrite``
                     (``fallback_reason`` rewrite_*), ``policy.answer`` (``llm_used``, citations)
listings             ``listings.extract`` (``quality.llm_extraction``), ``listings.answer``
                     (``llm_used``; numbers not in the listings or the question)
advisor              role messages under the number check (``data.roles[*]``: llm_used /
                     fallback_reason), ``advisor.plan`` (``plan.source == "llm"``)
discussion           the advisor's discussion mode (``data.discussion[*]``)
tools                ``zhiwen.tools.run_tool_loop`` with the advisor's tools (a library path: no
                     app calls it today): tool calls made, invalid arguments, numbers in its text
condense             ``conversation.service.condensed`` on follow-ups (``Standalone.method``)
===================  =========================================================================

Per path/stage it prints: requests, LLM calls, **as is** (strict JSON / a reply used unchanged),
**repaired** (JSON that needed ``json_repair``, a condense reply that needed its lead, quotes or a
``<think>`` stripped), **fell back** (with the reasons zhiwen exposes), and the checks: LLM answers
without a ``[n]`` marker shown with citations anyway, ``[n]`` out of range, ``<think>`` shown,
English answers, replies cut at ``max_tokens``, the advisor's wrong numbers caught by the number
check and any figure shown that the offline template (the same tools, no LLM) does not carry,
latency p50/p95 (the whole request) and LLM calls per request. Raw replies go to
``bench/results/llm_paths-<temperature>.json`` (gitignored), with what the user was shown.

Usage::

    bash scripts/local-llm.sh                                   # the server (first time: a build)
    python bench/bench_llm_paths.py                             # every path, zhiwen's defaults
    python bench/bench_llm_paths.py --temperature 0             # the same at temperature 0
    python bench/bench_llm_paths.py --paths qa advisor --limit 5
    python bench/bench_llm_paths.py --base-url http://127.0.0.1:8000/v1 --model qwen2.5

KBs are built once with the ``hash`` embedder (BM25 carries these questions) in
``ZHIWEN_HOME`` (default ``~/.cache/zhiwen-llm/bench-home``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LLM_HOME = Path(os.environ.get("ZHIWEN_LLM_HOME", Path.home() / ".cache" / "zhiwen-llm"))
os.environ.setdefault("ZHIWEN_HOME", str(LLM_HOME / "bench-home"))
os.environ.setdefault("ZHIWEN_EMBEDDING__PROVIDER", "hash")
sys.path.insert(0, str(REPO / "tests"))

from llm_real.checks import (  # noqa: E402
    answer_flags,
    char_f1,
    condense_counts,
    figures_not_in,
    json_verdict,
    listing_numbers_unsupported,
    pct,
    role_messages,
    text_flags,
)
from llm_real.recording import Call, RecordingProxy  # noqa: E402
from zhiwen.answer.model import Answer  # noqa: E402
from zhiwen.appkit.app import AppContext, AskRequest  # noqa: E402
from zhiwen.appkit.context import build_context  # noqa: E402
from zhiwen.appkit.registry import load_apps  # noqa: E402
from zhiwen.config import LLMSettings, Settings  # noqa: E402
from zhiwen.conversation import service as conversation  # noqa: E402
from zhiwen.kb import open_kb  # noqa: E402
from zhiwen.llm import clear_llm_cache  # noqa: E402

DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
SETS = REPO / "bench" / "llm_sets"
RESULTS = REPO / "bench" / "results"
SAMPLE_KB = REPO / "src" / "zhiwen" / "sample_kb"
PATHS = ("qa", "recipes", "policy", "listings", "advisor", "discussion", "tools", "condense")


# ------------------------------------------------------------------------------------------------
# what one request did
# ------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Outcome:
    """One stage of one request: used as is, repaired, or fell back (with zhiwen's reason)."""

    stage: str
    verdict: str  # as_is | repaired | fallback | skipped
    reason: str | None = None
    flags: list[str] = field(default_factory=list)  # uncited_shown_cited, think_shown, english, …


@dataclass(slots=True)
class Record:
    path: str
    id: str
    question: str
    seconds: float
    outcomes: list[Outcome]
    calls: list[Call]
    shown: str  # what the user was shown (cut)
    notes: dict[str, Any] = field(default_factory=dict)


def load_set(name: str, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (SETS / f"{name}.jsonl").read_text("utf-8").splitlines() if x.strip()]
    return rows[:limit] if limit else rows


def stage_calls(calls: Sequence[Call], stage: str) -> list[Call]:
    return [c for c in calls if c.stage == stage]


def json_outcome(stage: str, calls: Sequence[Call], used: bool, reason: str | None) -> Outcome:
    """A JSON stage: the product says whether it used the reply; the raw reply says how."""
    mine = stage_calls(calls, stage)
    if not mine and used is False and reason is None:
        return Outcome(stage, "skipped", "not called")
    if not used:
        return Outcome(stage, "fallback", reason or (mine[-1].failure() if mine else "no call"))
    return Outcome(stage, json_verdict(mine[-1] if mine else None).replace("bad", "as_is"))


def answer_outcome(stage: str, answer: Answer, calls: Sequence[Call]) -> Outcome:
    mine = stage_calls(calls, stage)
    last = mine[-1] if mine else None
    if answer.llm_used:
        return Outcome(stage, "as_is", None, answer_flags(answer, last))
    if not mine:
        return Outcome(stage, "skipped", answer.extractive_reason)
    return Outcome(stage, "fallback", answer.extractive_reason or last.failure() if last else None)


# ------------------------------------------------------------------------------------------------
# the paths
# ------------------------------------------------------------------------------------------------
Result = tuple[list[Outcome], str, dict[str, Any]]


@dataclass(slots=True)
class Bench:
    ctx: AppContext
    offline: AppContext  # the same settings without an LLM: templates, histories, the before
    proxy: RecordingProxy
    top_k: int | None = None  # sources per answer (AskRequest.top_k); None: the app's default
    records: list[Record] = field(default_factory=list)

    def run(self, path: str, item: Mapping[str, Any], fn: Runner, prep: Prep | None) -> Record:
        """One request, timed; ``prep`` (offline work the check needs) runs outside the timing."""
        prepared = prep(self, item) if prep is not None else None
        self.proxy.take()
        started = time.perf_counter()
        outcomes, shown, notes = fn(self, item, prepared)
        seconds = time.perf_counter() - started
        calls = self.proxy.take()
        record = Record(path, str(item["id"]), item["question"], seconds, outcomes, calls, shown[:1500])
        record.notes = notes
        self.records.append(record)
        said = " ".join(f"{o.stage}={o.verdict}" + (f"({o.reason})" if o.reason else "") for o in outcomes)
        print(f"  {item['id']} {seconds:5.1f}s {len(calls)} calls  {said}", file=sys.stderr, flush=True)
        return record

    def ask(self, app: str | None, item: Mapping[str, Any], **options: Any) -> Answer:
        answerer = load_apps().answerer(app)
        top_k = None if app in ("advisor", "listings") else self.top_k
        request = AskRequest(question=item["question"], kb=item.get("kb"), options=options, top_k=top_k)
        return conversation.ask(answerer, request, self.ctx)


def path_qa(b: Bench, item: Mapping[str, Any], _: Any) -> Result:
    ans = b.ask(None, item)
    return [answer_outcome("answer", ans, b.proxy.peek())], ans.answer, {"citations": len(ans.citations)}


def path_recipes(b: Bench, item: Mapping[str, Any], _: Any) -> Result:
    ans = b.ask("recipes", item)
    calls = b.proxy.peek()
    route_calls = stage_calls(calls, "recipes.route")
    outcomes = [answer_outcome("answer", ans, calls)]
    if route_calls:
        ok = _route_ok(route_calls[-1])
        outcomes.insert(0, json_outcome("recipes.route", calls, ok, None if ok else "bad_output"))
    return outcomes, ans.answer, {"route": ans.route, "citations": len(ans.citations)}


def _route_ok(call: Call) -> bool:
    from zhiwen.apps.recipes.service import ROUTES
    from zhiwen.llm.parse import JSONRepairError, parse_json_lenient

    try:
        data = parse_json_lenient(call.content)
    except JSONRepairError:
        return False
    return isinstance(data, dict) and data.get("route") in ROUTES


def path_policy(b: Bench, item: Mapping[str, Any], offline_intent: str | None) -> Result:
    ans = b.ask("policy", item)
    calls = b.proxy.peek()
    data = ans.data
    cls = data.get("classification") or {}
    fallback = data.get("fallback_reason") or ""
    intent_used = cls.get("method") == "llm"
    outcomes = [json_outcome("policy.intent", calls, intent_used, cls.get("fallback_reason"))]
    if stage_calls(calls, "policy.rewrite") or "rewrite" in fallback:
        used = data.get("rewritten_question") is not None and "rewrite" not in fallback
        outcomes.append(json_outcome("policy.rewrite", calls, used, fallback or None))
    outcomes.append(answer_outcome("answer", ans, calls))
    notes = {
        "gold_intent": item.get("intent"),
        "intent": data.get("intent"),
        "intent_method": cls.get("method"),
        "rule_intent": offline_intent,
        "rewritten": data.get("rewritten_question"),
        "fallback_reason": data.get("fallback_reason"),
        "citations": len(ans.citations),
    }
    return outcomes, ans.answer, notes


def policy_offline_intent(b: Bench, item: Mapping[str, Any]) -> str | None:
    """The intent without an LLM (rules, gazetteer, embedding centroids): the before."""
    from zhiwen.apps.policy.intent import classify
    from zhiwen.apps.policy.settings import policy_settings

    return classify(item["question"], b.offline, policy_settings(b.offline.settings))[0].label


def path_listings(b: Bench, item: Mapping[str, Any], _: Any) -> Result:
    ans = b.ask("listings", item)
    calls = b.proxy.peek()
    quality = ans.data.get("quality") or {}
    outcomes = []
    if stage_calls(calls, "listings.extract"):
        used = bool(quality.get("llm_extraction"))
        outcomes.append(json_outcome("listings.extract", calls, used, None if used else "rules_only"))
    answer = answer_outcome("listings.answer", ans, calls)
    answer.flags = [f for f in answer.flags if not f.startswith("uncited")]  # it cites 第n套, not [n]
    unsupported = listing_numbers_unsupported(ans, item["question"]) if ans.llm_used else []
    if unsupported:
        answer.flags.append("numbers_not_in_listings")
    outcomes.append(answer)
    notes = {"requirements": ans.data.get("requirements"), "unsupported_numbers": unsupported}
    return outcomes, ans.answer, notes


def role_outcomes(
    messages: Iterable[Mapping[str, Any]], offline: Sequence[str], user: str, calls: Sequence[Call] = ()
) -> list[Outcome]:
    """One outcome per role message; a shown LLM figure the template lacks is flagged."""
    out = []
    for i, m in enumerate(messages):
        stage = "advisor.discussion" if "round" in m else "advisor.role"
        if m.get("llm_used"):
            template = offline[i] if i < len(offline) else ""
            extra = figures_not_in(str(m.get("content", "")), [template, user])
            text = str(m.get("content", ""))
            call = next((c for c in calls if c.content.strip() == text), None)
            flags = text_flags(text, call)
            if extra:
                flags.append("figure_not_in_template:" + ",".join(extra[:4]))
            out.append(Outcome(stage, "as_is", None, flags))
        else:
            out.append(Outcome(stage, "fallback", m.get("fallback_reason")))
    return out


def path_advisor(b: Bench, item: Mapping[str, Any], offline: list[str]) -> Result:
    ans = b.ask("advisor", item, mode=item.get("mode", "standard"))
    messages = role_messages(ans)
    outcomes = role_outcomes(messages, offline, item["question"], b.proxy.peek())
    plan = ans.data.get("plan") or {}
    if stage_calls(b.proxy.peek(), "advisor.plan"):
        used = plan.get("source") == "llm"
        plan_outcome = json_outcome("advisor.plan", b.proxy.peek(), used, None if used else "default_role")
        outcomes.insert(0, plan_outcome)
    notes = {
        "plan": plan.get("roles"),
        "caught": [m.get("number_check") for m in messages if m.get("fallback_reason")],
        "templates": offline,
    }
    return outcomes, ans.answer, notes


def advisor_templates(b: Bench, item: Mapping[str, Any]) -> list[str]:
    """The templated messages: the same question with no LLM (the tools are deterministic)."""
    request = AskRequest(question=item["question"], options={"mode": item.get("mode", "standard")})
    answer = conversation.ask(load_apps().answerer("advisor"), request, b.offline)
    return [str(m.get("content", "")) for m in role_messages(answer)]


def path_tools(b: Bench, item: Mapping[str, Any], _: Any) -> Result:
    from zhiwen.apps.advisor.roles import load_roles
    from zhiwen.apps.advisor.tools import build_registry
    from zhiwen.chinese.number_check import allowed_numbers, check_numbers
    from zhiwen.tools import run_tool_loop

    role = next(r for r in load_roles() if r.synthesis)
    messages = [{"role": "system", "content": role.prompt}, {"role": "user", "content": item["question"]}]
    result = run_tool_loop(build_registry(b.ctx), messages, llm=b.ctx.llm, planner=lambda _: [])
    bad_args = [c.to_dict() for c in result.calls if not c.ok]
    names = [c.name for c in result.calls]
    unsupported = check_numbers(
        result.content, allowed_numbers([c.result for c in result.calls if c.ok], [item["question"]])
    ).unsupported
    flags = []
    if not result.calls and result.llm_used:
        flags.append("answered_without_tools")
    if bad_args:
        flags.append("invalid_arguments")
    if item.get("expect_tool") not in names and result.llm_used:
        flags.append("wrong_or_no_tool")
    if unsupported:
        flags.append("numbers_not_from_tools")
    loop_calls = stage_calls(b.proxy.peek(), "tools.loop")
    flags += text_flags(result.content, loop_calls[-1] if loop_calls else None)
    verdict = "as_is" if result.llm_used and result.calls and not bad_args else "fallback"
    reason = result.fallback_reason or (None if verdict == "as_is" else "no_valid_tool_call")
    notes = {"tools": names, "bad_args": bad_args[:3], "unsupported": unsupported, "steps": result.steps}
    return [Outcome("tools.loop", verdict, reason, flags)], result.content, notes


def path_condense(b: Bench, item: Mapping[str, Any], prepared: tuple[list[Any], Any]) -> Result:
    history, vocabulary = prepared
    before = condense_counts()
    found = conversation.condensed(history, item["question"], b.ctx, vocabulary)
    said = {k: v - before.get(k, 0) for k, v in condense_counts().items() if v > before.get(k, 0)}
    mine = stage_calls(b.proxy.peek(), "condense")
    offline = conversation.condensed(history, item["question"], b.offline, vocabulary)
    if found.method == "llm":
        raw = mine[-1].content.strip() if mine else ""
        outcome = Outcome("condense", "as_is" if raw == found.question else "repaired")
    elif said:
        outcome = Outcome("condense", "fallback", next(iter(said)))  # rejected | error (timeouts too)
    else:
        outcome = Outcome("condense", "skipped", "not called")
    if mine:
        outcome.flags = text_flags(mine[-1].content, mine[-1])
    notes = {
        "gold": item.get("gold"),
        "llm": found.question,
        "offline": offline.question,
        "f1_llm": char_f1(found.question, item.get("gold") or ""),
        "f1_offline": char_f1(offline.question, item.get("gold") or ""),
    }
    return [outcome], found.question, notes


def condense_inputs(b: Bench, item: Mapping[str, Any]) -> tuple[list[dict[str, str]], Any]:
    """The history the product would hold (its own offline answers) and the app's vocabulary."""
    app = item.get("app") or "qa"
    answerer = load_apps().answerer(None if app == "qa" else app)
    history: list[dict[str, str]] = []
    for user in item["history"]:
        request = AskRequest(question=user, history=list(history), kb=item.get("kb"))
        answer = conversation.ask(answerer, request, b.offline)
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": answer.answer}]
    return history, _vocabulary(b, app, item.get("kb"))


def _vocabulary(b: Bench, app: str, kb_name: str | None) -> Any:
    from zhiwen.conversation.vocabulary import kb_vocabulary

    if app == "policy":
        from zhiwen.apps.policy.followup import country_vocabulary

        return country_vocabulary()
    kb = b.ctx.open_kb(kb_name or app)
    if app == "recipes":
        from zhiwen.apps.recipes.names import dish_vocabulary

        return dish_vocabulary(kb)
    return kb_vocabulary(kb)


Runner = Callable[[Bench, Mapping[str, Any], Any], Result]
Prep = Callable[[Bench, Mapping[str, Any]], Any]
#: path → (question set, runner, offline preparation)
RUNNERS: dict[str, tuple[str, Runner, Prep | None]] = {
    "qa": ("qa", path_qa, None),
    "recipes": ("recipes", path_recipes, None),
    "policy": ("policy", path_policy, policy_offline_intent),
    "listings": ("listings", path_listings, None),
    "advisor": ("advisor", path_advisor, advisor_templates),
    "discussion": ("discussion", path_advisor, advisor_templates),
    "tools": ("tools", path_tools, None),
    "condense": ("condense", path_condense, condense_inputs),
}


# ------------------------------------------------------------------------------------------------
# KBs, once
# ------------------------------------------------------------------------------------------------
def build_kbs(settings: Settings) -> list[str]:
    """The paths' KBs with the hash embedder (a re-run over unchanged sources writes nothing)."""
    ctx = build_context(settings, llm=None)
    notes = []
    for name, path in (("statutes", DATA / "cn_law_subset"), ("manual", SAMPLE_KB),
                       ("meat_dishes", DATA / "howtocook" / "dishes" / "meat_dish")):
        kb = open_kb(name, settings=settings, create=True, embedder="hash")
        report = kb.index_path(path, fmt="markdown", prune=True, progress=False)
        notes.append(f"{name}: {report.documents} documents")
    for app in ("recipes", "policy", "advisor", "listings"):
        marker = Path(settings.home) / f".llm-bench-{app}.done"
        if not marker.exists():
            report = load_apps()[app].setup(DATA, ctx, progress=False)
            marker.write_text(json.dumps(report.kbs))
        notes.append(f"{app}: {marker.read_text()}")
    return notes


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class Row:
    path: str
    stage: str
    n: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)


def stage_rows(records: Sequence[Record]) -> list[Row]:
    rows: dict[tuple[str, str], Row] = {}
    for r in records:
        for o in r.outcomes:
            if o.verdict == "skipped":
                continue
            row = rows.setdefault((r.path, o.stage), Row(r.path, o.stage))
            row.n += 1
            row.verdicts[o.verdict] += 1
            if o.reason and o.verdict == "fallback":
                row.reasons[o.reason] += 1
            row.flags.update(f.split(":", 1)[0] for f in o.flags)
    return list(rows.values())


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.most_common()) or "–"


def stage_table(records: Sequence[Record]) -> str:
    lines = [
        "| path | stage | n | as is | repaired | fell back | fallback reasons | flags |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for row in stage_rows(records):
        v = row.verdicts
        lines.append(
            f"| {row.path} | {row.stage} | {row.n} | {v['as_is']} | {v['repaired']} | {v['fallback']} "
            f"| {_counts(row.reasons)} | {_counts(row.flags)} |"
        )
    return "\n".join(lines)


def request_table(records: Sequence[Record]) -> str:
    lines = [
        "| path | requests | p50 s | p95 s | LLM calls / request | HTTP errors | cut at max_tokens |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for path in dict.fromkeys(r.path for r in records):
        mine = [r for r in records if r.path == path]
        secs = [r.seconds for r in mine]
        calls = [c for r in mine for c in r.calls]
        errors = sum(1 for c in calls if c.error)
        cut = sum(1 for c in calls if c.finish_reason == "length")
        lines.append(
            f"| {path} | {len(mine)} | {pct(secs, 0.5):.1f} | {pct(secs, 0.95):.1f} "
            f"| {len(calls) / max(1, len(mine)):.2f} | {errors} | {cut} |"
        )
    return "\n".join(lines)


def quality_lines(records: Sequence[Record]) -> list[str]:
    """What the model chose, beside the offline rules: the policy intent and the condense rewrite."""
    out = []
    pol = [r.notes for r in records if r.path == "policy"]
    if pol:
        llm = sum(n["intent"] == n["gold_intent"] for n in pol)
        rules = sum(n["rule_intent"] == n["gold_intent"] for n in pol)
        n = len(pol)
        out.append(f"- policy intent = gold: {llm}/{n} with the LLM (asked first), {rules}/{n} offline")
    con = [r.notes for r in records if r.path == "condense"]
    if con:
        f_llm = statistics.mean(n["f1_llm"] for n in con)
        f_off = statistics.mean(n["f1_offline"] for n in con)
        out.append(f"- condense char-F1 to the gold standalone: LLM {f_llm:.3f}, offline {f_off:.3f}")
    adv = [o for r in records for o in r.outcomes if o.stage.startswith("advisor.") and o.verdict != "skip"]
    shown_bad = [f for o in adv for f in o.flags if f.startswith("figure_not_in_template")]
    caught = sum(1 for o in adv if o.reason == "number_mismatch")
    out.append(f"- advisor: wrong numbers caught by the number check {caught}; LLM figures shown that the "
               f"template does not carry {len(shown_bad)} {shown_bad[:6]}")
    return out


# ------------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------------
def bench_settings(args: argparse.Namespace, base_url: str) -> Settings:
    settings = Settings()
    llm = LLMSettings(
        base_url=base_url,
        model=args.model,
        api_key="local",
        timeout_s=args.timeout,
        max_retries=0,
        **({} if args.temperature is None else {"temperature": args.temperature}),
        **({} if args.max_tokens is None else {"max_tokens": args.max_tokens}),
    )
    return settings.model_copy(update={"llm": llm})


def run_paths(bench: Bench, paths: Sequence[str], limit: int | None, limits: Mapping[str, int]) -> None:
    for path in paths:
        name, fn, prep = RUNNERS[path]
        print(f"== {path}", file=sys.stderr, flush=True)
        for item in load_set(name, limits.get(path, limit)):
            bench.run(path, item, fn, prep)


def report(records: Sequence[Record], args: argparse.Namespace, started: float) -> str:
    label = "zhiwen default (0.3)" if args.temperature is None else str(args.temperature)
    knobs = f"max_tokens {args.max_tokens or 'default'}, top_k {args.top_k or 'default'}"
    head = [
        f"## LLM paths against {args.model} at {args.base_url} — temperature {label}",
        "",
        f"{len(records)} requests in {time.perf_counter() - started:.0f} s; load average "
        f"{os.getloadavg()[0]:.1f} at the end (2 cores); {knobs}.",
        "",
    ]
    return "\n".join([*head, stage_table(records), "", request_table(records), "", *quality_lines(records)])


def save(records: Sequence[Record], text: str, args: argparse.Namespace) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    tag = "default" if args.temperature is None else f"t{args.temperature:g}"
    path = RESULTS / f"llm_paths-{tag}.json"
    rows = [
        {**{k: v for k, v in asdict(r).items() if k != "calls"}, "calls": [c.to_dict() for c in r.calls]}
        for r in records
    ]
    path.write_text(json.dumps({"table": text, "records": rows}, ensure_ascii=False, indent=1), "utf-8")
    (RESULTS / f"llm_paths-{tag}.md").write_text(text + "\n", "utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--base-url", default=os.environ.get("ZHIWEN_LLM__BASE_URL", "http://127.0.0.1:8931/v1"))
    ap.add_argument("--model", default=os.environ.get("ZHIWEN_LLM__MODEL", "gemma-3-270m"))
    ap.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    ap.add_argument("--limit", type=int, default=None, help="questions per path (default: the whole set)")
    ap.add_argument("--limits", nargs="*", default=[], metavar="PATH=N", help="per path, e.g. discussion=5")
    ap.add_argument("--top-k", type=int, default=None, help="sources per answer (shorter prompts)")
    ap.add_argument("--temperature", type=float, default=None, help="default: zhiwen's llm.temperature")
    ap.add_argument("--max-tokens", type=int, default=None, help="default: zhiwen's llm.max_tokens")
    ap.add_argument("--timeout", type=float, default=120.0, help="llm.timeout_s (a CPU model is slow)")
    ap.add_argument("--kbs-only", action="store_true", help="build the KBs and stop")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    offline_settings = Settings()
    for line in build_kbs(offline_settings):
        print(f"kb {line}", file=sys.stderr)
    if args.kbs_only:
        return 0
    with RecordingProxy(args.base_url) as proxy:
        clear_llm_cache()
        ctx = build_context(bench_settings(args, proxy.base_url))
        bench = Bench(ctx, build_context(offline_settings, llm=None), proxy, args.top_k)
        limits = {k: int(v) for k, v in (x.split("=", 1) for x in args.limits)}
        run_paths(bench, args.paths, args.limit, limits)
    text = report(bench.records, args, started)
    print(text)
    print(f"\nraw replies: {save(bench.records, text, args)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
