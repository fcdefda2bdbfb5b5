"""Prometheus metrics of the policy app (exposed by ``GET /metrics`` with the engine's).

Example::

    POLICY_FALLBACKS.labels(reason="classifier_timeout").inc()
"""

from __future__ import annotations

from prometheus_client import Counter

POLICY_FALLBACKS = Counter(
    "zhiwen_policy_fallbacks_total",
    "Policy questions that fell back to single-question retrieval, by reason",
    ["reason"],
)
POLICY_QUESTIONS = Counter(
    "zhiwen_policy_questions_total",
    "Policy questions answered, by intent and strategy",
    ["intent", "strategy"],
)
