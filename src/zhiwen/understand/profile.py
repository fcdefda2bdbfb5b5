"""Query-intent profiling: which kind of question is this?

| intent | typical words | effect downstream |
|--------|---------------|-------------------|
| ``BROAD`` | 总结 比较 介绍 有哪些 overview compare | lower MMR λ (more diversity), looser thresholds |
| ``FOCUSED`` | 如何 步骤 原因 是什么 how to what is | higher λ (precision), stricter thresholds |
| ``TROUBLESHOOT`` | 报错 失败 无法 error failed | like FOCUSED |
| ``DOC_SPECIFIC`` | 这份 该文档 本文 this document | more chunks from one document |
| ``UNKNOWN`` | nothing matched | defaults |

Matching is substring-based for Chinese; Latin keywords match case-insensitively at a word
start (``error`` matches "errors" but ``fix`` does not match "prefix"). The intent with the
most keyword hits wins; ties go to the more specific intent (doc-specific > troubleshoot >
focused > broad). The keyword lists can be overridden per intent (``adaptive.keywords_profile``,
static or through the admin API).

Example::

    >>> QueryProfiler().classify("总结一下各种面条的做法")
    <QueryIntent.BROAD: 'broad'>
    >>> QueryProfiler({"broad": ["盘点"]}).classify("盘点家常菜")
    <QueryIntent.BROAD: 'broad'>
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from enum import StrEnum


class QueryIntent(StrEnum):
    UNKNOWN = "unknown"
    BROAD = "broad"
    FOCUSED = "focused"
    TROUBLESHOOT = "troubleshoot"
    DOC_SPECIFIC = "doc_specific"


DEFAULT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "broad": (
        "总结", "概述", "概括", "综述", "比较", "对比", "区别", "介绍", "有哪些", "哪些", "盘点", "汇总",
        "推荐", "列举", "overview", "summary", "summarize", "compare", "comparison", "tell me",
        "introduce", "list all", "what are",
    ),
    "focused": (
        "如何", "怎么", "怎样", "步骤", "原因", "是什么", "什么是", "定义", "多少", "多久", "哪个",
        "为什么", "能否", "how to", "how do", "how does", "what is", "why", "steps", "define",
        "definition",
    ),
    "troubleshoot": (
        "报错", "错误", "失败", "异常", "出错", "解决", "无法", "不能用", "不工作", "故障", "排查", "崩溃",
        "error", "failed", "fails", "failure", "exception", "traceback", "not working", "crash",
        "fix", "broken",
    ),
    "doc_specific": (
        "这份", "该文档", "本文档", "这篇", "本文", "文中", "上述", "这个文件", "该文件", "这一节",
        "above file", "this document", "this file", "the document", "this page",
    ),
}  # fmt: skip

# tie-break: the more specific intent wins
_PRIORITY = (QueryIntent.DOC_SPECIFIC, QueryIntent.TROUBLESHOOT, QueryIntent.FOCUSED, QueryIntent.BROAD)


class QueryProfiler:
    """Keyword profile → :class:`QueryIntent`. ``overrides`` replace the default list per intent."""

    def __init__(self, overrides: Mapping[str, Sequence[str]] | None = None) -> None:
        merged: dict[str, tuple[str, ...]] = dict(DEFAULT_KEYWORDS)
        for key, words in (overrides or {}).items():
            intent = QueryIntent(key.lower())  # ValueError for an unknown intent name
            merged[intent.value] = tuple(words)
        self.keywords: dict[QueryIntent, tuple[str, ...]] = {
            intent: tuple(w.strip().lower() for w in merged.get(intent.value, ()) if w and w.strip())
            for intent in _PRIORITY
        }

        self._patterns = {intent: [_pattern(w) for w in words] for intent, words in self.keywords.items()}

    def scores(self, query: str) -> dict[QueryIntent, int]:
        """Keyword hits per intent (for diagnostics)."""
        text = " ".join(query.lower().split())
        return {
            intent: sum(1 for p in patterns if p.search(text)) for intent, patterns in self._patterns.items()
        }

    def classify(self, query: str) -> QueryIntent:
        if not query or not query.strip():
            return QueryIntent.UNKNOWN
        scores = self.scores(query)
        best = max(scores.values())
        if best == 0:
            return QueryIntent.UNKNOWN
        return next(intent for intent in _PRIORITY if scores[intent] == best)


def _pattern(word: str) -> re.Pattern[str]:
    escaped = re.escape(word)
    return re.compile(rf"(?<![a-z0-9]){escaped}" if word[:1].isascii() and word[:1].isalnum() else escaped)
