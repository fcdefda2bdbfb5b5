"""``zhiwen tune``'s search: a KB's fusion weight, BM25 k1/b and feedback knobs on a dev half.

Labelled queries are split by ``int(sha1(query id), 16) % 2`` into halves ``a`` and ``b``. Every
parameter is chosen on the dev half only; the other (held-out) half is scored twice — with the
global defaults and with the tuned values — and only those two numbers are reported as the
result. A number tuned on its own test queries is never shown as a result.

The search is coordinate ascent from the global defaults: one parameter at a time, every value of
its grid is scored on the dev half (nDCG@10 by default) and the best is kept when it beats the
current value by more than ``min_gain`` (noise on ~150 queries; ties keep the simpler current
value); rounds repeat until nothing moves (at most ``rounds``). Query vectors are embedded once;
each trial is one search per dev query (~5 ms), so RGB-zh's dev half tunes in about a minute.

Example::

    >>> result = tune_kb(kb, queries, qrels, dev_half="a")
    >>> result.heldout_before, result.heldout_after
    (0.80..., 0.84...)
    >>> save_tuning(kb.path, result.tuning)
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from zhiwen.errors import IngestError, InvalidParameter
from zhiwen.eval.beir import in_half, other_half
from zhiwen.eval.metrics import score_run
from zhiwen.eval.run_params import RunSpec, resolve_params
from zhiwen.kb import KnowledgeBase
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.tuning import KBTuning

#: grids of the coordinate ascent, in the order they are visited
GRID: dict[str, tuple[Any, ...]] = {
    "dense_alpha": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    "feedback.enabled": (True, False),
    "feedback.docs": (5, 10, 15),
    "feedback.terms": (20, 30, 50),
    "feedback.query_weight": (0.3, 0.5, 0.7),
    "feedback.vector_weight": (0.3, 0.5, 0.7),
    "bm25_k1": (0.4, 0.6, 0.9, 1.2, 1.5),
    "bm25_b": (0.5, 0.75, 0.9),
}
METRICS = ("ndcg@10", "recall@10", "mrr@10")
_MIN_QUERIES = 4  # per half; fewer cannot tell anything apart


@dataclass(slots=True)
class Trial:
    values: dict[str, Any]
    score: float


@dataclass(slots=True)
class TuneResult:
    tuning: KBTuning
    start: dict[str, Any]  # the global defaults the search started from
    best: dict[str, Any]
    dev_before: float
    dev_after: float
    heldout_before: float
    heldout_after: float
    heldout_metrics_before: dict[str, float]
    heldout_metrics_after: dict[str, float]
    dev_queries: int
    heldout_queries: int
    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tuning": self.tuning.model_dump(mode="json", exclude_none=True),
            "start": self.start,
            "best": self.best,
            "dev": {"queries": self.dev_queries, "before": self.dev_before, "after": self.dev_after},
            "heldout": {
                "queries": self.heldout_queries,
                "before": self.heldout_metrics_before,
                "after": self.heldout_metrics_after,
            },
            "trials": len(self.trials),
            "seconds": round(self.seconds, 2),
        }


def start_values(kb: KnowledgeBase) -> dict[str, Any]:
    """The global defaults of every tunable parameter for ``kb`` (what an untuned KB runs with)."""
    s = kb.retriever.settings
    fb = kb.retriever.feedback
    return {
        "dense_alpha": s.dense_alpha,
        **{
            f"feedback.{k}": getattr(fb, k)
            for k in ("enabled", "docs", "terms", "query_weight", "vector_weight")
        },
        "bm25_k1": s.bm25_k1 if s.bm25_k1 is not None else 1.5,
        "bm25_b": s.bm25_b if s.bm25_b is not None else 0.75,
    }


def spec_for(values: Mapping[str, Any], base_feedback: FeedbackParams, mode: str) -> RunSpec:
    fb = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("feedback.")}
    alpha = float(values["dense_alpha"])
    return RunSpec(
        label="tune",
        mode=mode,
        fusion="weighted" if mode == "hybrid" else None,
        weights=(1.0 - alpha, alpha) if mode == "hybrid" else None,
        feedback=FeedbackParams.from_mapping(fb, base=base_feedback),
        bm25=(float(values["bm25_k1"]), float(values["bm25_b"])),
    )


class _Scorer:
    """Scores a parameter set on a fixed list of queries (vectors embedded once, results memoised)."""

    def __init__(
        self,
        kb: KnowledgeBase,
        queries: Mapping[str, str],
        qrels: Mapping[str, Mapping[str, int]],
        vectors: Mapping[str, np.ndarray],
        *,
        k: int,
        fetch: int,
        mode: str,
    ) -> None:
        self.kb, self.queries, self.qrels, self.vectors = kb, queries, qrels, vectors
        self.k, self.fetch, self.mode = k, fetch, mode
        self._memo: dict[tuple[tuple[str, ...], tuple[tuple[str, Any], ...]], dict[str, float]] = {}

    def metrics(self, values: Mapping[str, Any], qids: Sequence[str]) -> dict[str, float]:
        key = (tuple(qids), tuple(sorted(values.items())))
        if key in self._memo:
            return self._memo[key]
        spec = spec_for(values, self.kb.retriever.feedback, self.mode)
        resolved = resolve_params(self.kb, spec, None)
        run: dict[str, list[str]] = {}
        for qid in qids:
            hits = self.kb.search_detailed(
                self.queries[qid],
                mode=self.mode,
                top_k=self.fetch,
                fusion=spec.fusion,
                weights=resolved.weights,
                query_vector=self.vectors.get(qid),
                feedback=resolved.feedback,
                bm25_params=resolved.bm25,
            ).hits
            run[qid] = _passages(hits, self.k)
        out = score_run(run, self.qrels, k=self.k).means()
        self._memo[key] = out
        return out


def _passages(hits: Sequence[Any], k: int) -> list[str]:
    out: list[str] = []
    for h in hits:
        if h.chunk.doc_id not in out:
            out.append(h.chunk.doc_id)
            if len(out) == k:
                break
    return out


def split_halves(qids: Sequence[str], dev_half: str) -> tuple[list[str], list[str]]:
    """(dev, held-out) query ids; ``dev_half`` is ``a`` or ``b``."""
    if dev_half not in ("a", "b"):
        raise InvalidParameter(f"dev half must be a or b, got {dev_half!r}", message="调参半区只能是 a 或 b")
    dev = [q for q in qids if in_half(q, dev_half)]
    held = [q for q in qids if in_half(q, other_half(dev_half))]
    if len(dev) < _MIN_QUERIES or len(held) < _MIN_QUERIES:
        raise IngestError(
            f"too few labelled queries to split: dev {len(dev)}, held-out {len(held)}",
            message=(
                f"带标注的查询太少，无法对半调参（调参 {len(dev)} 条，留出 {len(held)} 条，"
                f"每半至少 {_MIN_QUERIES} 条）"
            ),
        )
    return dev, held


def tune_kb(
    kb: KnowledgeBase,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    qids: Sequence[str] | None = None,
    dev_half: str = "a",
    metric: str = "ndcg@10",
    k: int = 10,
    rounds: int = 2,
    min_gain: float = 0.002,
    grid: Mapping[str, Sequence[Any]] | None = None,
    dataset: str | None = None,
    on_trial: Callable[[str, Any, float, float], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> TuneResult:
    """Tune ``kb`` on the ``dev_half`` of ``qids`` (default: every labelled query); see module doc.

    ``on_trial(parameter, value, score, best)`` is called after every scored trial.
    """
    if metric not in METRICS:
        raise InvalidParameter(
            f"unknown metric {metric!r}", message=f"未知的指标「{metric}」，可选：{'、'.join(METRICS)}"
        )
    started = time.perf_counter()
    stage = on_stage or (lambda _msg: None)
    labelled = [
        q
        for q in (qids if qids is not None else sorted(qrels))
        if q in queries and any(g > 0 for g in qrels.get(q, {}).values())
    ]
    dev, held = split_halves(labelled, dev_half)
    mode = "hybrid" if kb.retriever.has_vectors else "bm25"
    grid = _grid_for(mode, grid)

    vectors: dict[str, np.ndarray] = {}
    if mode == "hybrid":
        stage(f"向量化 {len(dev) + len(held)} 个查询")
        vectors = {q: kb.embed_query(queries[q]) for q in (*dev, *held)}
    info = kb.info()
    n_chunks, n_docs = int(info.get("chunks") or 0), int(info.get("documents") or 0)
    fetch = k if n_chunks <= n_docs else 3 * k
    scorer = _Scorer(kb, queries, qrels, vectors, k=k, fetch=fetch, mode=mode)

    start = start_values(kb)
    current = dict(start)
    stage(f"在 {dev_half} 半区（{len(dev)} 个查询）上调参")
    best_score = scorer.metrics(current, dev)[metric]
    dev_before = best_score
    trials = [Trial(dict(current), best_score)]
    search = _CoordinateSearch(scorer, dev, metric, min_gain, trials, on_trial)
    for _ in range(max(1, rounds)):
        best_score, moved = search.one_round(grid, current, best_score)
        if not moved:
            break

    stage(f"在留出的 {other_half(dev_half)} 半区（{len(held)} 个查询）上评分")
    held_before = scorer.metrics(start, held)
    held_after = scorer.metrics(current, held)
    tuning = KBTuning(
        dense_alpha=current.get("dense_alpha") if mode == "hybrid" else None,
        bm25_k1=current["bm25_k1"],
        bm25_b=current["bm25_b"],
        feedback={k.split(".", 1)[1]: v for k, v in current.items() if k.startswith("feedback.")},
        dataset=dataset,
        metric=metric,
        dev_half=dev_half,
        dev_queries=len(dev),
        dev_score=round(best_score, 6),
        heldout_half=other_half(dev_half),
        heldout_queries=len(held),
        heldout_score=round(held_after[metric], 6),
        baseline_heldout_score=round(held_before[metric], 6),
        tuned_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    return TuneResult(
        tuning=tuning,
        start=start,
        best=current,
        dev_before=dev_before,
        dev_after=best_score,
        heldout_before=held_before[metric],
        heldout_after=held_after[metric],
        heldout_metrics_before=held_before,
        heldout_metrics_after=held_after,
        dev_queries=len(dev),
        heldout_queries=len(held),
        trials=trials,
        seconds=time.perf_counter() - started,
    )


def _grid_for(mode: str, grid: Mapping[str, Sequence[Any]] | None) -> dict[str, Sequence[Any]]:
    """The values to try; without vectors, no dense knob."""
    out = dict(grid or GRID)
    if mode == "bm25":
        out.pop("dense_alpha", None)
        out.pop("feedback.vector_weight", None)
    return out


@dataclass
class _CoordinateSearch:
    """One parameter at a time, each value of the grid scored on the dev half; a value is
    taken when it beats the best so far by more than ``min_gain``."""

    scorer: _Scorer
    dev: list[str]
    metric: str
    min_gain: float
    trials: list[Trial]
    on_trial: Callable[[str, Any, float, float], None] | None

    def one_round(
        self, grid: Mapping[str, Sequence[Any]], current: dict[str, Any], best_score: float
    ) -> tuple[float, bool]:
        """Every parameter once (``current`` updated in place): the best score, and whether
        anything moved."""
        moved = False
        for name, values in grid.items():
            if (
                name.startswith("feedback.")
                and name != "feedback.enabled"
                and not current["feedback.enabled"]
            ):
                continue  # knobs of a switched-off feedback change nothing
            choice, choice_score = self._best_value(name, values, current, best_score)
            if choice != current[name]:
                current[name], best_score, moved = choice, choice_score, True
        return best_score, moved

    def _best_value(
        self, name: str, values: Sequence[Any], current: dict[str, Any], best_score: float
    ) -> tuple[Any, float]:
        choice, choice_score = current[name], best_score
        for value in values:
            if value == current[name]:
                continue
            candidate = {**current, name: value}
            score = self.scorer.metrics(candidate, self.dev)[self.metric]
            self.trials.append(Trial(candidate, score))
            if score > choice_score and score > best_score + self.min_gain:
                choice, choice_score = value, score
            if self.on_trial is not None:
                self.on_trial(name, value, score, max(best_score, choice_score))
        return choice, choice_score


def read_queries(path: Path) -> dict[str, str]:
    """``queries.jsonl`` (or a BEIR directory holding it) as ``{query id: text}``."""
    from zhiwen.ingest import load_beir_queries

    return load_beir_queries(Path(path))


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """A qrels TSV file ``query-id corpus-id score`` (or a BEIR directory: ``qrels/test.tsv``)."""
    from zhiwen.ingest import load_beir_qrels

    p = Path(path)
    if p.is_file():  # the loader wants <dir>/qrels/<split>.tsv: point it at this very file
        if p.parent.name == "qrels":
            return load_beir_qrels(p.parent.parent, split=p.stem)
        return _read_qrels_file(p)
    return load_beir_qrels(p)


def _read_qrels_file(path: Path) -> dict[str, dict[str, int]]:
    from zhiwen.ingest._io import read_utf8

    out: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(read_utf8(path).splitlines(), start=1):
        parts = line.strip().split("\t") if "\t" in line else line.split()
        if not parts or (lineno == 1 and parts[0] in ("query-id", "query_id", "qid")):
            continue
        try:
            out.setdefault(parts[0], {})[parts[1]] = int(float(parts[2]))
        except (IndexError, ValueError) as exc:
            raise IngestError(
                f"{path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score'",
                message=f"qrels 行格式错误：{path} 第 {lineno} 行（应为 查询编号、段落编号、相关度）",
            ) from exc
    return out
