"""A small text classifier for routing questions: rules → embedding centroids → optional LLM.

Stages, each tried only when the previous one did not decide:

1. **rules** — per label, keywords (case-insensitive substrings) and regexes; custom
   ``rule_fns`` (``text -> label | None``) run first for rules that combine conditions. A label
   wins when it has strictly the most hits.
2. **embedding** — the cosine similarity of the text to each label's centroid (the mean of its
   example embeddings); the best label wins when its similarity reaches ``threshold`` and beats
   the runner-up by ``margin`` (embedders like e5 put every similarity in a narrow band, where
   the threshold alone cannot tell a near-tie from a decision).
3. **LLM** (when one is given) — one JSON call ``{"label": …, "confidence": …}`` bounded by
   ``llm_timeout_s``; any failure (timeout, error status, garbage, an unknown label) is recorded
   in ``fallback_reason`` and the classifier goes on without it.
4. **default** — ``default_label``.

``llm_first=True`` asks the LLM before the offline stages (which then serve as the fallback).
``enabled=False`` switches the whole classifier off: every text gets ``default_label`` with
``fallback_reason="disabled"``. The model's confidence is clamped to [0, 1] and never trusted
beyond that.

Example::

    >>> clf = Classifier(
    ...     labels=("weather", "sports", "other"),
    ...     rules={"weather": ["下雨", r"re:气温\\d+"], "sports": ["足球", "比赛"]},
    ...     examples={"weather": ["明天天气怎么样", "会不会下雪"], "sports": ["昨晚球赛谁赢了"]},
    ...     embedder=get_embedder("hash"),
    ...     threshold=0.3,
    ...     default_label="other",
    ... )
    >>> clf.classify("明天会下雨吗").method
    'rules'
    >>> result = clf.classify("后天天气怎么样")
    >>> result.label, result.method
    ('weather', 'embedding')
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from zhiwen.llm.bounded import bounded_call

if TYPE_CHECKING:
    from zhiwen.embed.base import Embedder
    from zhiwen.embed.cache import EmbeddingCache
    from zhiwen.llm.base import ChatModel, Message

log = logging.getLogger(__name__)

Method = Literal["rules", "embedding", "llm", "default", "conversation"]  # conversation: carried over
RuleFn = Callable[[str], "str | None"]
REGEX_PREFIX = "re:"  # a rule string starting with this is a regular expression


@dataclass(frozen=True, slots=True)
class Classification:
    label: str
    confidence: float
    method: Method
    scores: dict[str, float] = field(default_factory=dict)
    fallback_reason: str | None = None  # why a stage that should have decided did not
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "confidence": round(self.confidence, 4),
            "method": self.method,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "fallback_reason": self.fallback_reason,
        }


def _compile_rules(rules: Mapping[str, Sequence[str | re.Pattern[str]]]) -> dict[str, list[re.Pattern[str]]]:
    out: dict[str, list[re.Pattern[str]]] = {}
    for label, patterns in rules.items():
        compiled = []
        for p in patterns:
            if isinstance(p, re.Pattern):
                compiled.append(p)
            elif p.startswith(REGEX_PREFIX):
                compiled.append(re.compile(p[len(REGEX_PREFIX) :], re.IGNORECASE))
            else:
                compiled.append(re.compile(re.escape(p), re.IGNORECASE))
        out[label] = compiled
    return out


class Classifier:
    """Rules → embedding centroids → optional LLM → default (see the module docstring)."""

    def __init__(
        self,
        labels: Sequence[str],
        rules: Mapping[str, Sequence[str | re.Pattern[str]]] | None = None,
        examples: Mapping[str, Sequence[str]] | None = None,
        embedder: Embedder | None = None,
        threshold: float = 0.5,
        llm: ChatModel | None = None,
        llm_timeout_s: float = 5.0,
        default_label: str | None = None,
        *,
        enabled: bool = True,
        rule_fns: Sequence[RuleFn] = (),
        descriptions: Mapping[str, str] | None = None,
        margin: float = 0.0,
        llm_first: bool = False,
        llm_instructions: str = "",
        llm_purpose: str = "classify",
        embedding_cache: EmbeddingCache | None = None,
    ) -> None:
        if not labels:
            raise ValueError("a classifier needs at least one label")
        self.labels = tuple(labels)
        self.default_label = default_label if default_label is not None else self.labels[-1]
        unknown = {*(rules or {}), *(examples or {}), self.default_label} - set(self.labels)
        if unknown:
            raise ValueError(f"unknown labels: {sorted(unknown)}")
        self.rules = _compile_rules(rules or {})
        self.rule_fns = tuple(rule_fns)
        self.examples = {k: list(v) for k, v in (examples or {}).items() if v}
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.llm = llm
        self.llm_timeout_s = llm_timeout_s
        self.enabled = enabled
        self.descriptions = dict(descriptions or {})
        self.llm_first = llm_first
        self.llm_instructions = llm_instructions
        self.llm_purpose = llm_purpose
        self.embedding_cache = embedding_cache
        self._centroids: dict[str, np.ndarray] | None = None
        self._centroid_lock = threading.Lock()

    # -- stages ----------------------------------------------------------------------------
    def by_rules(self, text: str) -> Classification | None:
        for fn in self.rule_fns:
            label = fn(text)
            if label is not None:
                if label not in self.labels:
                    raise ValueError(f"rule function returned unknown label {label!r}")
                return Classification(label, 1.0, "rules", {label: 1.0})
        hits = {label: sum(len(p.findall(text)) for p in pats) for label, pats in self.rules.items()}
        hits = {k: v for k, v in hits.items() if v}
        if not hits:
            return None
        ranked = sorted(hits.items(), key=lambda kv: -kv[1])
        total = float(sum(hits.values()))
        scores = {k: v / total for k, v in ranked}
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            return None  # a tie: let the next stage decide
        return Classification(ranked[0][0], scores[ranked[0][0]], "rules", scores)

    def centroids(self) -> dict[str, np.ndarray]:
        """Label → unit-length mean of its example embeddings (computed once, thread-safe)."""
        if self.embedder is None or not self.examples:
            return {}
        with self._centroid_lock:
            if self._centroids is None:
                self._centroids = self._compute_centroids()
            return self._centroids

    def _compute_centroids(self) -> dict[str, np.ndarray]:
        texts = [t for label in self.examples for t in self.examples[label]]
        vectors = self._embed_examples(texts)
        out: dict[str, np.ndarray] = {}
        i = 0
        for label, items in self.examples.items():
            mean = vectors[i : i + len(items)].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            out[label] = mean / norm if norm > 0 else mean
            i += len(items)
        return out

    def _embed_examples(self, texts: list[str]) -> np.ndarray:
        """Examples are embedded as queries, like the texts they are compared with (e5 is asymmetric)."""
        from zhiwen.documents import content_hash

        assert self.embedder is not None
        namespace = f"{self.embedder.name}:query"
        hashes = [content_hash(t) for t in texts]
        known = self.embedding_cache.get_many(hashes, model=namespace) if self.embedding_cache else {}
        fresh: dict[str, np.ndarray] = {}
        rows = []
        for text, h in zip(texts, hashes, strict=True):
            vec = known.get(h)
            if vec is None or vec.shape[0] != self.embedder.dim:
                vec = fresh.get(h)
                if vec is None:
                    vec = fresh[h] = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
            rows.append(vec)
        if fresh and self.embedding_cache is not None:
            self.embedding_cache.put_many(fresh, model=namespace)
        return np.vstack(rows).astype(np.float32)

    def by_embedding(self, text: str) -> tuple[Classification | None, dict[str, float]]:
        centroids = self.centroids()
        if not centroids:
            return None, {}
        assert self.embedder is not None
        query = np.asarray(self.embedder.embed_query(text), dtype=np.float32)
        scores = {label: float(np.dot(query, c)) for label, c in centroids.items()}
        ranked = sorted(scores.values(), reverse=True)
        best = max(scores, key=lambda k: scores[k])
        if scores[best] < self.threshold or (len(ranked) > 1 and ranked[0] - ranked[1] < self.margin):
            return None, scores
        return Classification(best, max(0.0, min(1.0, scores[best])), "embedding", scores), scores

    def llm_messages(self, text: str) -> list[Message]:
        lines = [f"- {label}: {self.descriptions.get(label, '')}".rstrip(": ") for label in self.labels]
        system = (
            "你是问题分类器。把用户问题归入下列类别之一，只输出 JSON："
            '{"label": "<类别>", "confidence": <0到1之间的数>}。\n类别：\n' + "\n".join(lines)
        )
        if self.llm_instructions:
            system += "\n" + self.llm_instructions
        return [{"role": "system", "content": system}, {"role": "user", "content": text.strip()}]

    def by_llm(self, text: str) -> tuple[Classification | None, str | None]:
        """The LLM's label, or ``(None, reason)``: ``llm_timeout``, ``llm_error``, ``llm_bad_output``."""
        if self.llm is None:
            return None, None
        llm = self.llm
        messages = self.llm_messages(text)

        def call() -> Any:
            from zhiwen.llm import llm_purpose

            with llm_purpose(self.llm_purpose):
                return llm.chat_json(messages, temperature=0.0, timeout_s=self.llm_timeout_s)

        try:
            # the client's own deadline should fire first; this bounds adapters that ignore it
            reply = bounded_call(call, timeout_s=self.llm_timeout_s)
        except TimeoutError:
            return None, "llm_timeout"
        except Exception as exc:
            return None, _llm_failure(exc)
        label, confidence = _parse_reply(reply, self.labels)
        if label is None:
            log.warning("classifier: LLM reply has no known label: %.200r", reply)
            return None, "llm_bad_output"
        return Classification(label, confidence, "llm", {label: confidence}), None

    # -- the cascade -------------------------------------------------------------------------
    def classify(self, text: str) -> Classification:
        start = time.perf_counter()
        result = self._classify(text)
        return dataclasses.replace(result, seconds=time.perf_counter() - start)

    def _classify(self, text: str) -> Classification:
        if not self.enabled:
            return Classification(self.default_label, 0.0, "default", {}, "disabled")
        reason: str | None = None
        if self.llm_first and self.llm is not None:
            result, reason = self.by_llm(text)
            if result is not None:
                return result
        offline = self._offline(text)
        if offline[0] is not None:
            return _with_reason(offline[0], reason)
        scores = offline[1]
        if not self.llm_first and self.llm is not None:
            result, reason = self.by_llm(text)
            if result is not None:
                return result
        return Classification(self.default_label, 0.0, "default", scores, reason)

    def _offline(self, text: str) -> tuple[Classification | None, dict[str, float]]:
        ruled = self.by_rules(text)
        if ruled is not None:
            return ruled, ruled.scores
        return self.by_embedding(text)


def _with_reason(result: Classification, reason: str | None) -> Classification:
    return result if reason is None else dataclasses.replace(result, fallback_reason=reason)


def _llm_failure(exc: BaseException) -> str:
    from zhiwen.errors import LLMError, LLMTimeout

    if isinstance(exc, LLMTimeout):
        return "llm_timeout"
    if isinstance(exc, LLMError):
        data = exc.data if isinstance(exc.data, dict) else {}
        return "llm_bad_output" if data.get("outcome") in ("bad_json", "empty", "malformed") else "llm_error"
    log.warning("classifier: LLM adapter raised %s", type(exc).__name__)
    return "llm_error"


def _parse_reply(reply: Any, labels: Sequence[str]) -> tuple[str | None, float]:
    label: Any = None
    confidence: Any = None
    if isinstance(reply, dict):
        label = reply.get("label") or reply.get("intent") or reply.get("category")
        confidence = reply.get("confidence")
    elif isinstance(reply, str):
        label = reply
    if not isinstance(label, str) or label.strip() not in labels:
        return None, 0.0
    try:
        value = float(confidence) if confidence is not None else 0.8
    except (TypeError, ValueError):
        value = 0.8
    if value != value:  # NaN
        value = 0.8
    return label.strip(), max(0.0, min(1.0, value))
