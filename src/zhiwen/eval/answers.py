"""Evaluate offline (extractive) answers on a labelled set: ``zhiwen eval-answers DATASET``.

The dataset is a BEIR-layout directory with ``answers.jsonl`` (lines ``{query_id, question,
answers: [...], gold_doc_id | gold_doc_ids}``, as in CMRC2018 and RGB-zh). Every sampled question
is retrieved exactly as generic QA retrieves it (the one pipeline, parents, top 5) and answered by
the offline answerer, twice:

* against the full KB → gold-in-first-200-characters, gold-anywhere, answer length, and whether
  the answer was judged answerable;
* against a KB **without the positive passages** of the sampled questions (RGB's negative
  rejection: what is left of the corpus is same-topic passages that lack the answer) → whether it
  was rejected. That KB is built once per sample (``<home>/eval/<dataset>-nopos-<digest>``) and
  reuses the cached vectors; ``negatives_from="hits"`` instead drops each question's own
  positives from its retrieved chunks (other questions' positives stay, and may answer it).

Reported: gold@200, gold anywhere, answer length p50/p90, answerable precision and recall (an
answerable question must be kept, a question without positives rejected), the latency of the
answer stage over retrieval (p50/p95 ms). A gold answer "appears" when one of its alternatives is
a substring of the answer, whitespace and case ignored. Both labels are noisy — retrieval may miss
every passage with the answer, and a "negative" passage may state it after all — so two more
figures count only the clean cases: ``answerable_kept_retrieved`` (questions whose retrieved
passages hold the gold) and ``negatives_rejected_clean`` (negatives whose passages do not).

``half`` splits questions by ``sha1(query id) % 2`` (``a`` = 0, ``b`` = 1), as the retrieval
levers were: tune on one half, report the other.

Example::

    >>> report = evaluate_answers(Path("../shared/data/rgb_zh_retrieval"), n_queries=None)
    >>> report.metrics["gold_first_200"], report.metrics["length_p50"]
    (0.9..., 2...)
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.answer.qa import default_answer_options
from zhiwen.answer.relevance import floor_for
from zhiwen.answer.scoring import preload_idf
from zhiwen.config import Settings, get_settings
from zhiwen.documents import ParentHit, SearchHit
from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.eval.beir import BeirDataset, build_index, default_kb_name
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.retrieve.parents import aggregate_parents
from zhiwen.retrieve.pipeline import RetrievalPipeline

TOP_K = 5  # parents per answer, as generic QA
FIRST = 200


@dataclass(slots=True)
class Outcome:
    """What an answerer produced for one question."""

    text: str
    answerable: bool
    relevance: float = 0.0


# (question, parents best first, KB) → the answer as the user sees it
Answerer = Callable[[str, Sequence[ParentHit], KnowledgeBase], Outcome]


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    qid: str
    question: str
    answers: tuple[str, ...]
    positives: frozenset[str]


@dataclass(slots=True)
class QuestionResult:
    qid: str
    question: str
    answer: str
    answerable: bool
    relevance: float
    gold_first: bool
    gold_anywhere: bool
    negative_answerable: bool | None
    negative_relevance: float | None
    retrieval_s: float
    answer_s: float
    gold_retrieved: bool = True  # the gold is in the retrieved passages
    negative_gold_retrieved: bool | None = None  # … in those retrieved without the positives


@dataclass(slots=True)
class AnswerReport:
    dataset: str
    kb: str
    embedder: str
    mode: str
    n_queries: int
    seed: int
    half: str
    floor: float
    metrics: dict[str, float]
    results: list[QuestionResult] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "kb": self.kb,
            "embedder": self.embedder,
            "mode": self.mode,
            "n_queries": self.n_queries,
            "seed": self.seed,
            "half": self.half,
            "floor": self.floor,
            **{k: round(v, 4) for k, v in self.metrics.items()},
        }


def normalise(text: str) -> str:
    return "".join(text.split()).lower()


def gold_in(text: str, answers: Sequence[str]) -> bool:
    flat = normalise(text)
    return any(a and normalise(a) in flat for a in answers)


def _alternatives(value: Any) -> list[str]:
    """Gold answers as a flat list of alternatives: RGB nests some (``[["463亿", "462.7亿"]]``)."""
    if isinstance(value, list | tuple):
        return [a for item in value for a in _alternatives(item)]
    return [] if value is None else [str(value)]


def load_gold(root: Path, dataset: BeirDataset) -> dict[str, GoldQuestion]:
    path = root / "answers.jsonl"
    if not path.is_file():
        raise IngestError(f"{path}: missing", message=f"评测数据缺少标准答案文件：{path}")
    out: dict[str, GoldQuestion] = {}
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        qid = str(row["query_id"])
        gold_ids = row.get("gold_doc_ids") or [row.get("gold_doc_id")]
        positives = {str(d) for d in gold_ids if d}
        positives |= {d for d, g in dataset.qrels.get(qid, {}).items() if g > 0}
        answers = tuple(a for a in _alternatives(row.get("answers")) if a.strip())
        if answers:
            out[qid] = GoldQuestion(
                qid, str(row.get("question") or dataset.queries.get(qid, "")), answers, frozenset(positives)
            )
    return out


def in_half(qid: str, half: str) -> bool:
    if half == "all":
        return True
    bit = int(hashlib.sha1(qid.encode("utf-8")).hexdigest(), 16) % 2
    return bit == (0 if half == "a" else 1)


def sample_questions(
    gold: dict[str, GoldQuestion], dataset: BeirDataset, n: int | None, seed: int, half: str
) -> list[GoldQuestion]:
    """The retrieval harness's sample (same seed → same questions), then the half."""
    if half not in ("a", "b", "all"):
        raise InvalidParameter(f"half must be a, b or all, got {half!r}", message="half 只能是 a、b 或 all")
    qids = [q for q in dataset.sample(n, seed) if q in gold]
    return [gold[q] for q in qids if in_half(q, half)]


def stage_answerer(settings: Settings) -> Answerer:
    """The default: the extractive stage with the KB's floor, note and all, as generic QA."""
    from zhiwen.answer.extractive import extractive_footer
    from zhiwen.answer.stage import answer_from_parents

    options = default_answer_options(settings)

    def run(question: str, parents: Sequence[ParentHit], kb: KnowledgeBase) -> Outcome:
        ans = answer_from_parents(
            question, parents, floor=floor_for(kb.config.extra, settings), options=options
        )
        return Outcome(f"{ans.text}\n\n{extractive_footer('no_llm')}", ans.answerable, ans.relevance)

    return run


def _without(hits: Sequence[SearchHit], positives: frozenset[str], k: int) -> list[SearchHit]:
    return [
        h for h in hits if h.chunk.doc_id not in positives and (h.chunk.parent_id or "") not in positives
    ][:k]


def _percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    if not values:
        return [0.0 for _ in qs]
    return [float(v) for v in np.percentile(np.asarray(values, dtype=np.float64), qs)]


def summarise(results: Sequence[QuestionResult]) -> dict[str, float]:
    n = len(results)
    if not n:
        return {}
    lengths = [len(r.answer) for r in results]
    kept = sum(r.answerable for r in results)
    negatives = [r for r in results if r.negative_answerable is not None]
    false_keep = sum(bool(r.negative_answerable) for r in negatives)
    p50, p90 = _percentiles(lengths, (50, 90))
    a50, a95 = _percentiles([r.answer_s * 1000 for r in results], (50, 95))
    r50, _ = _percentiles([r.retrieval_s * 1000 for r in results], (50, 95))
    metrics = {
        "gold_first_200": sum(r.gold_first for r in results) / n,
        "gold_anywhere": sum(r.gold_anywhere for r in results) / n,
        "length_p50": p50,
        "length_p90": p90,
        "answerable_kept": kept / n,
        "answer_ms_p50": a50,
        "answer_ms_p95": a95,
        "retrieval_ms_p50": r50,
    }
    retrieved = [r for r in results if r.gold_retrieved]
    if retrieved:
        metrics["answerable_kept_retrieved"] = sum(r.answerable for r in retrieved) / len(retrieved)
    if negatives:
        metrics["negatives_rejected"] = 1 - false_keep / len(negatives)
        metrics["answerable_precision"] = kept / (kept + false_keep) if kept + false_keep else 0.0
        metrics["answerable_recall"] = kept / n
        clean = [r for r in negatives if not r.negative_gold_retrieved]
        if clean:
            metrics["negatives_rejected_clean"] = 1 - sum(bool(r.negative_answerable) for r in clean) / len(
                clean
            )
    return metrics


def evaluate_answers(
    dataset_dir: Path | str,
    *,
    n_queries: int | None = None,
    seed: int = 0,
    half: str = "all",
    kb: KnowledgeBase | str | None = None,
    embedder: str | None = None,
    mode: str | None = None,
    negatives: bool = True,
    negatives_from: str = "kb",
    answerer: Answerer | None = None,
    settings: Settings | None = None,
    progress: bool = False,
    on_stage: Callable[[str], None] | None = None,
) -> AnswerReport:
    """Answer the sampled questions of ``dataset_dir`` offline and score them (module docstring)."""
    settings = settings or get_settings()
    stage = on_stage or (lambda _msg: None)
    if negatives_from not in ("kb", "hits"):
        raise InvalidParameter(
            f"negatives_from must be kb or hits, got {negatives_from!r}",
            message="negatives_from 只能是 kb 或 hits",
        )
    root = Path(dataset_dir)
    dataset = BeirDataset.load(root)
    gold = load_gold(root, dataset)
    questions = sample_questions(gold, dataset, n_queries, seed, half)
    own = not isinstance(kb, KnowledgeBase)
    provider = embedder or settings.embedding.provider
    if isinstance(kb, KnowledgeBase):
        base = kb
    else:
        name = kb or default_kb_name(root, provider)
        stage(f"打开知识库 {name}")
        base = open_kb(name, settings=settings, create=True, embedder=provider)
    negative_kb: KnowledgeBase | None = None
    try:
        if own:
            stage("建立索引（未变化的段落直接取向量缓存）")
            build_index(base, root, settings=settings, progress=progress)
        if negatives and negatives_from == "kb":
            stage("建立去掉正例段落的知识库（向量取自缓存）")
            negative_kb = without_positives_kb(
                root, questions, settings=settings, embedder=base.config.embedder, progress=progress
            )
        pipeline = RetrievalPipeline.static(settings)
        answer = answerer or stage_answerer(settings)
        preload_idf()  # a one-time load (~0.3 s) that a server pays at start, not per answer
        stage(f"回答 {len(questions)} 个问题")
        against: KnowledgeBase | bool = negative_kb if negative_kb is not None else negatives
        results = [judge(retrieve(base, pipeline, g, mode, against), answer, base) for g in questions]
        return AnswerReport(
            dataset=dataset.name,
            kb=base.name,
            embedder=base.config.embedder,
            mode=mode or settings.retrieval.default_mode,
            n_queries=len(questions),
            seed=seed,
            half=half,
            floor=floor_for(base.config.extra, settings),
            metrics=summarise(results),
            results=results,
        )
    finally:
        if negative_kb is not None:
            negative_kb.close()
        if own:
            base.close()


def without_positives_kb(
    root: Path,
    questions: Sequence[GoldQuestion],
    *,
    settings: Settings,
    embedder: str,
    progress: bool = False,
) -> KnowledgeBase:
    """The KB of ``root``'s corpus without the positive passages of ``questions``; built once.

    The corpus goes to ``<home>/eval/<dataset>-nopos-<digest of the removed ids>/`` (same passages,
    same chunks: every vector comes from the embedding cache); the KB is named after that folder.
    """
    drop = sorted(frozenset().union(*(g.positives for g in questions)))
    digest = hashlib.sha1("\n".join(drop).encode("utf-8")).hexdigest()[:8]
    folder = settings.home / "eval" / f"{root.resolve().name[:32]}-nopos-{digest}"
    corpus = folder / "corpus.jsonl"
    if not corpus.is_file():
        removed = set(drop)
        (folder / "qrels").mkdir(parents=True, exist_ok=True)
        kept = [
            line
            for line in (root / "corpus.jsonl").read_text("utf-8").splitlines()
            if line.strip() and str(json.loads(line).get("_id")) not in removed
        ]
        for name in ("queries.jsonl", "qrels/test.tsv"):
            if (root / name).is_file():
                (folder / name).write_bytes((root / name).read_bytes())
        tmp = corpus.with_suffix(".tmp")
        tmp.write_text("\n".join(kept) + "\n", "utf-8")
        tmp.replace(corpus)  # last: a half-written folder is never taken for a finished one
    kb = open_kb(default_kb_name(folder, embedder), settings=settings, create=True, embedder=embedder)
    build_index(kb, folder, settings=settings, progress=progress)
    return kb


@dataclass(slots=True)
class Retrieved:
    """One question's parents as generic QA sees them, and without its positive passages."""

    gold: GoldQuestion
    parents: list[ParentHit]
    without_positives: list[ParentHit] | None
    seconds: float


def retrieve(
    kb: KnowledgeBase,
    pipeline: RetrievalPipeline,
    g: GoldQuestion,
    mode: str | None,
    negatives: KnowledgeBase | bool,
) -> Retrieved:
    """Chunks through the pipeline → top parents (as ``search_parents``), and the same without positives.

    ``negatives``: a KB without the positives (:func:`without_positives_kb`) to ask as well, or
    True to drop the question's own positives from its retrieved chunks, or False.
    """
    chunk_k = max(3 * TOP_K, 10)
    extra = 4 * len(g.positives) if negatives is True else 0
    t0 = time.perf_counter()
    found = pipeline.search(kb, g.question, top_k=chunk_k + extra, mode=mode)
    parents = aggregate_parents(found.hits[:chunk_k], kb, TOP_K)
    seconds = time.perf_counter() - t0
    rest: list[ParentHit] | None = None
    if isinstance(negatives, KnowledgeBase):
        hits = pipeline.search(negatives, g.question, top_k=chunk_k, mode=mode).hits
        rest = aggregate_parents(hits[:chunk_k], negatives, TOP_K)
    elif negatives:
        rest = aggregate_parents(_without(found.hits, g.positives, chunk_k), kb, TOP_K)
    return Retrieved(g, parents, rest, seconds)


def _holds_gold(parents: Sequence[ParentHit], answers: Sequence[str]) -> bool:
    return gold_in(" ".join(p.document.text for p in parents), answers)


def judge(item: Retrieved, answer: Answerer, kb: KnowledgeBase) -> QuestionResult:
    """Answer one retrieved question (and its negative) and score the answer against the gold."""
    g = item.gold
    t0 = time.perf_counter()
    out = answer(g.question, item.parents, kb)
    seconds = time.perf_counter() - t0
    neg = answer(g.question, item.without_positives, kb) if item.without_positives is not None else None
    return QuestionResult(
        qid=g.qid,
        question=g.question,
        answer=out.text,
        answerable=out.answerable,
        relevance=out.relevance,
        gold_first=gold_in(out.text[:FIRST], g.answers),
        gold_anywhere=gold_in(out.text, g.answers),
        negative_answerable=None if neg is None else neg.answerable,
        negative_relevance=None if neg is None else neg.relevance,
        retrieval_s=item.seconds,
        answer_s=seconds,
        gold_retrieved=_holds_gold(item.parents, g.answers),
        negative_gold_retrieved=(
            None if item.without_positives is None else _holds_gold(item.without_positives, g.answers)
        ),
    )
