"""The owner's view of the question log: one row shape for the API and the CLI, and the window.

Example::

    >>> window = log_window(log, days=7, app="qa")
    >>> [question_out(q)["question"] for q in log.questions("shop", window, "unanswered").items]
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from zhiwen.errors import InvalidParameter
from zhiwen.questionlog import ListedQuestion, LogWindow, QuestionLog

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.questionlog.grouping import Vectors

#: the longest window of the owner's numbers and lists, in days
MAX_DAYS = 3660
#: why an answer failed its asker, as owners read it
UNANSWERED_LABELS = {
    "refused": "拒答",
    "not_answerable": "知识库中没有相关内容",
    "timeout": "大模型超时",
    "llm_uncited": "大模型回答没有引用",
}


def log_window(
    log: QuestionLog,
    *,
    since: date | None = None,
    until: date | None = None,
    days: int | None = None,
    app: str | None = None,
) -> LogWindow:
    """The days an owner looks at: ``since``/``until`` (inclusive), else the last ``days`` days
    (in the log's time zone), else everything; ``app`` narrows to one app."""
    if since is not None and until is not None and since > until:
        raise InvalidParameter("since after until", message=f"开始日期 {since} 晚于结束日期 {until}")
    if days is not None and since is None and until is None:
        if not 1 <= days <= MAX_DAYS:
            raise InvalidParameter(f"bad days {days}", message=f"days 应在 1 到 {MAX_DAYS} 之间")
        return LogWindow.last_days(days, today=log.today(), app=app or None)
    return LogWindow(since=since, until=until, app=app or None)


def question_out(listed: ListedQuestion) -> dict[str, Any]:
    """One question of the owner's list: the record, why it went unanswered, its ratings."""
    record = listed.record
    out = record.to_json()
    reason = record.unanswered_reason
    out["unanswered"] = reason is not None
    out["unanswered_reason"] = reason
    out["unanswered_label"] = UNANSWERED_LABELS.get(reason, reason) if reason else None
    out["up"], out["down"] = listed.up, listed.down
    out["feedback"] = [f.to_json() for f in listed.feedback]
    return out


def kb_vectors(kb: KnowledgeBase) -> Vectors | None:
    """The KB's passage embedder, to group differently worded questions (None: text-only KB)."""
    return kb.real_embedder().embed_passages if kb.embedder is not None else None
