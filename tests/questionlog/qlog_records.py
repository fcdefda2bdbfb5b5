"""Records for the question log's tests."""

from __future__ import annotations

import itertools
from typing import Any

from zhiwen.questionlog import LoggedQuestion, SourceRef, new_answer_id

_seq = itertools.count()
DAY = 86_400.0
T0 = 1_750_000_000.0  # 2025-06-15 15:06 UTC


def rec(**fields: Any) -> LoggedQuestion:
    """A record with sensible defaults; ``at`` defaults to T0 plus a unique microsecond step."""
    n = next(_seq)
    at = fields.pop("at", T0 + n * 1e-3)
    base: dict[str, Any] = {
        "answer_id": new_answer_id(at),
        "kb": "manual",
        "app": "qa",
        "question": f"怎么创建知识库{n}？",
        "answer_type": "extractive",
        "answerable": True,
        "fallback": "no_llm",
        "sources": (SourceRef("doc-1", "快速开始", 0.71, "manual"),),
        "latency_ms": 12.5,
        "caller": "fp-1",
    }
    base.update(fields)
    return LoggedQuestion(at=at, **base)
