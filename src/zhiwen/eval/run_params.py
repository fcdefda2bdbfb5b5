"""One evaluation run: what it searches with (:class:`RunSpec`) and the parameters it resolves
to — the run's own, else the KB's ``tuning.json``, else the KB's settings — with where each came
from (split from :mod:`.beir`, which builds the index and scores the runs).

Example::

    >>> spec = RunSpec.for_mode("hybrid", fusion="rrf")
    >>> resolve_params(kb, spec, tuning=None).report["fusion"]
    'rrf'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zhiwen.config import RetrievalSettings
from zhiwen.errors import InvalidParameter
from zhiwen.kb import KnowledgeBase
from zhiwen.retrieve.feedback import FeedbackParams
from zhiwen.retrieve.tuning import KBTuning

MODES = ("bm25", "dense", "hybrid")
_BM25_DEFAULTS = (1.5, 0.75)  # the stores' k1, b when nothing sets them


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One retrieval configuration to evaluate; ``None`` fields take the KB's defaults."""

    label: str
    mode: str = "hybrid"
    fusion: str | None = None
    rrf_k: int | None = None
    weights: tuple[float, float] | None = None  # (bm25, dense)
    candidates: int | None = None
    feedback: FeedbackParams | None = None  # None: the KB's tuning, else the settings'
    bm25: tuple[float, float] | None = None  # (k1, b); None: the KB's tuning, else the settings'

    @property
    def needs_vector(self) -> bool:
        return self.mode in ("dense", "hybrid")

    @classmethod
    def for_mode(cls, mode: str, fusion: str | None = None) -> RunSpec:
        if mode not in MODES:
            raise InvalidParameter(
                f"unknown mode {mode!r}; use {', '.join(MODES)} or all",
                message=f"未知的检索模式「{mode}」，可选：bm25、dense、hybrid、all",
            )
        label = f"hybrid ({fusion})" if mode == "hybrid" and fusion else mode
        return cls(label=label, mode=mode, fusion=fusion if mode == "hybrid" else None)


@dataclass(frozen=True, slots=True)
class ResolvedParams:
    """What one run passes to the search, and the same in words for the report."""

    weights: tuple[float, float] | None
    bm25: tuple[float, float] | None
    feedback: FeedbackParams
    report: dict[str, Any]


def resolve_params(kb: KnowledgeBase, spec: RunSpec, tuning: KBTuning | None) -> ResolvedParams:
    """The run's parameters: the spec's, else the KB's tuning, else the KB's settings."""
    settings = kb.retriever.settings
    sources: dict[str, str] = {}
    fusion = spec.fusion or settings.fusion
    weights = _run_weights(spec, tuning, fusion, sources)
    bm25 = _run_bm25(spec, tuning, settings, sources)
    feedback = _run_feedback(kb, spec, tuning, sources)
    report = _params_report(spec, settings, fusion, weights, bm25)
    report["feedback"] = feedback.to_dict()
    report["sources"] = sources
    return ResolvedParams(weights=weights, bm25=bm25, feedback=feedback, report=report)


def _run_weights(
    spec: RunSpec, tuning: KBTuning | None, fusion: str, sources: dict[str, str]
) -> tuple[float, float] | None:
    """The fusion weights a run passes (None: the KB's own); ``sources`` says where from."""
    if spec.weights is not None:
        sources["fusion"] = "run"
        return spec.weights
    if tuning is not None and tuning.dense_alpha is not None and fusion != "rrf":
        sources["fusion"] = "tuning.json"
        return (1.0 - tuning.dense_alpha, tuning.dense_alpha)
    return None


def _run_bm25(
    spec: RunSpec, tuning: KBTuning | None, settings: RetrievalSettings, sources: dict[str, str]
) -> tuple[float, float] | None:
    """BM25's ``(k1, b)`` a run passes (None: the KB's own); ``sources`` says where from."""
    if spec.bm25 is not None:
        sources["bm25"] = "run"
        return spec.bm25
    if tuning is not None and (tuning.bm25_k1 is not None or tuning.bm25_b is not None):
        sources["bm25"] = "tuning.json"
        return (
            tuning.bm25_k1 if tuning.bm25_k1 is not None else settings.bm25_k1 or _BM25_DEFAULTS[0],
            tuning.bm25_b if tuning.bm25_b is not None else settings.bm25_b or _BM25_DEFAULTS[1],
        )
    return None


def _run_feedback(
    kb: KnowledgeBase, spec: RunSpec, tuning: KBTuning | None, sources: dict[str, str]
) -> FeedbackParams:
    """The run's feedback: the spec's, else the tuning's over the KB's, else the KB's."""
    if spec.feedback is not None:
        sources["feedback"] = "run"
        return spec.feedback
    if tuning is not None and tuning.feedback:
        sources["feedback"] = "tuning.json"
        return FeedbackParams.from_mapping(tuning.feedback, base=kb.retriever.feedback)
    return kb.retriever.feedback


def _params_report(
    spec: RunSpec,
    settings: RetrievalSettings,
    fusion: str,
    weights: tuple[float, float] | None,
    bm25: tuple[float, float] | None,
) -> dict[str, Any]:
    """BM25's and (hybrid runs) the fusion's effective values, in words for the report."""
    if weights is not None:
        w = weights
    elif fusion == "rrf":
        w = (settings.bm25_weight, settings.dense_weight)
    else:
        w = (1.0 - settings.dense_alpha, settings.dense_alpha)
    k1 = bm25[0] if bm25 else (settings.bm25_k1 if settings.bm25_k1 is not None else _BM25_DEFAULTS[0])
    b = bm25[1] if bm25 else (settings.bm25_b if settings.bm25_b is not None else _BM25_DEFAULTS[1])
    report: dict[str, Any] = {"bm25": {"k1": k1, "b": b}}
    if spec.mode == "hybrid":
        report["fusion"] = fusion
        report["weights"] = [round(float(x), 4) for x in w]
        if fusion != "rrf":
            report["dense_alpha"] = round(float(w[1]) / float(sum(w)), 4) if sum(w) > 0 else None
    return report
