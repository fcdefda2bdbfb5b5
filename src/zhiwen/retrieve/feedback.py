"""Pseudo-relevance feedback: a second retrieval pass steered by the first pass's best passages.

The first pass (the fused hybrid ranking, or the one branch that ran) names ``docs`` passages
that are probably relevant. From them:

* the **BM25 branch** gets an RM3 query (Lavrenko & Croft's relevance model, as in Anserini):
  ``P(t|R) = Σ_d P(t|d) · P(d|q)`` over those passages' tokens, the ``terms`` most likely terms
  kept, then interpolated with the original query:
  ``w(t) = λ · [t ∈ q] / |q| + (1 − λ) · P(t|R)``, λ = ``query_weight``;
* the **dense branch** gets a Rocchio query vector:
  ``q' = normalise((1 − β) · q + β · Σ_d P(d|q) · v_d)``, β = ``vector_weight``, ``v_d`` the
  passages' stored vectors (``Store.get_vectors``).

Each branch searches again with its new query and the two lists are fused as usual. Feeding both
branches from the *fused* first pass beat each branch's own feedback on RGB-zh, and moderate
weights keep CMRC2018 (where the first pass is already right) where it was
(``../shared/BASELINES.md``; ``bench/bench_retrieval.py`` measures the defaults).

``P(d|q)`` is the first-pass score of each feedback passage, shifted so the weakest of them
weighs ``floor`` of the best (a softened rank prior: min-max fused scores put the last one at
~0, which would throw it away), then normalised to sum to 1.

Example::

    >>> params = FeedbackParams()
    >>> weights = doc_weights([0.9, 0.7, 0.4])
    >>> rm3_query(["国足", "教练"], [["国足", "主教练", "李铁"], ["李铁", "教练"]], weights[:2], params)
    [('国足', ...), ('教练', ...), ('李铁', ...), ...]
    >>> rocchio(q, vectors, weights, params.vector_weight)   # unit vector
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from zhiwen.config import FeedbackSettings
from zhiwen.errors import InvalidParameter

WeightedTerms = list[tuple[str, float]]
_DEFAULTS = FeedbackSettings()  # one source of the default values: the settings


@dataclass(frozen=True, slots=True)
class FeedbackParams:
    """The knobs of pseudo-relevance feedback (defaults: ``FeedbackSettings``, the measured safe setting)."""

    enabled: bool = _DEFAULTS.enabled
    #: first-pass passages taken as relevant
    docs: int = _DEFAULTS.docs
    #: RM3 expansion terms added to the BM25 query
    terms: int = _DEFAULTS.terms
    #: RM3 λ: the original query's share of the BM25 query weight
    query_weight: float = _DEFAULTS.query_weight
    #: Rocchio β: the feedback centroid's share of the dense query vector
    vector_weight: float = _DEFAULTS.vector_weight
    #: the weakest feedback passage's weight relative to the strongest (see module docstring)
    floor: float = _DEFAULTS.floor
    #: expansion terms must be at least this many characters (single Chinese characters are noise)
    min_term_chars: int = _DEFAULTS.min_term_chars

    def __post_init__(self) -> None:
        check_params(self)

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any] | None, base: FeedbackParams | None = None
    ) -> FeedbackParams:
        """``base`` (default: the defaults) with the known keys of ``values`` replaced."""
        base = base or cls()
        if not values:
            return base
        names = {f.name for f in fields(cls)}
        known = {k: v for k, v in values.items() if k in names and v is not None}
        return replace(base, **known) if known else base

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_params(p: FeedbackParams) -> None:
    """Raise :class:`InvalidParameter` (Chinese message) for an out-of-range knob."""
    problems = []
    if not isinstance(p.enabled, bool):
        problems.append("enabled 必须是 true 或 false")
    for name, lo, hi in (("docs", 1, 100), ("terms", 0, 200), ("min_term_chars", 1, 10)):
        value = getattr(p, name)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            problems.append(f"{name} 必须是 {lo} 到 {hi} 之间的整数")
    for name in ("query_weight", "vector_weight", "floor"):
        value = getattr(p, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            problems.append(f"{name} 必须在 0 到 1 之间")
    if problems:
        raise InvalidParameter(
            f"bad feedback parameters: {p!r}", message="伪相关反馈参数无效：" + "；".join(problems)
        )


def doc_weights(scores: Sequence[float], floor: float = 0.5) -> list[float]:
    """``P(d|q)`` for the feedback passages from their first-pass scores (best first), sum 1.

    Scores are min-max scaled to ``[floor, 1]``; equal (or non-finite) scores give equal weights.
    """
    if not scores:
        return []
    xs = [float(s) if math.isfinite(s) else 0.0 for s in scores]
    lo, hi = min(xs), max(xs)
    span = hi - lo
    raw = [floor + (1.0 - floor) * (x - lo) / span for x in xs] if span > 0 else [1.0] * len(xs)
    total = math.fsum(raw)
    if total <= 0:  # floor 0 and a single distinct best: fall back to uniform
        return [1.0 / len(xs)] * len(xs)
    return [r / total for r in raw]


def relevance_model(
    docs: Sequence[Sequence[str]], weights: Sequence[float], *, min_term_chars: int = 2
) -> dict[str, float]:
    """RM1: ``P(t|R) = Σ_d P(t|d) · P(d|q)`` with ``P(t|d) = tf / |d|`` (unnormalised over t)."""
    model: dict[str, float] = {}
    for tokens, w in zip(docs, weights, strict=True):
        if not tokens or w <= 0:
            continue
        inv = w / len(tokens)
        for term, tf in Counter(tokens).items():
            if len(term) >= min_term_chars:
                model[term] = model.get(term, 0.0) + tf * inv
    return model


def rm3_query(
    query_tokens: Sequence[str],
    docs: Sequence[Sequence[str]],
    weights: Sequence[float],
    params: FeedbackParams,
) -> WeightedTerms:
    """The RM3 query: original terms (λ) + the ``terms`` best relevance-model terms (1 − λ).

    Returns ``(term, weight)`` best first, weights summing to 1 (0 terms → the original query).
    """
    original = list(dict.fromkeys(query_tokens))
    model = relevance_model(docs, weights, min_term_chars=params.min_term_chars)
    top = sorted(model.items(), key=lambda kv: (-kv[1], kv[0]))[: params.terms]
    mass = math.fsum(w for _, w in top)
    lam = params.query_weight if (top and mass > 0) else 1.0
    if not original:
        lam = 0.0
    out: dict[str, float] = {}
    for t in original:
        out[t] = lam / len(original)
    if lam < 1.0:
        for t, w in top:
            out[t] = out.get(t, 0.0) + (1.0 - lam) * w / mass
    return sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))


def rocchio(
    query: np.ndarray, vectors: np.ndarray, weights: Sequence[float], vector_weight: float
) -> np.ndarray:
    """``normalise((1 − β) · q̂ + β · Σ w_d v̂_d)`` as float32; ``q`` unchanged without vectors."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    q = _unit(q)
    mat = np.asarray(vectors, dtype=np.float32)
    if mat.size == 0 or vector_weight <= 0:
        return q
    w = np.asarray(weights, dtype=np.float32).reshape(-1)
    if mat.ndim != 2 or mat.shape != (len(w), q.shape[0]):
        raise ValueError(f"vectors {mat.shape} do not match {len(w)} weights of dim {q.shape[0]}")
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    centroid = _unit((w[:, None] * (mat / norms)).sum(axis=0))
    return _unit((1.0 - vector_weight) * q + vector_weight * centroid)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return (v / n).astype(np.float32) if n > 0 and math.isfinite(n) else v.astype(np.float32)
