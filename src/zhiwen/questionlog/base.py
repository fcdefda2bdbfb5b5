"""The contract of a question store, and the rows its reads return.

Two implementations share it: :class:`~zhiwen.questionlog.sqlite.SQLiteQuestionStore` (one file
for the home, ``<home>/questions.sqlite``) and
:class:`~zhiwen.questionlog.postgres.PostgresQuestionStore` (schema ``zhiwen_questions`` of the
store's database when ``ZHIWEN_STORE=postgresql://…``); ``tests/questionlog`` runs the same cases
on both. Reads take a KB and the time range ``[start, end)`` in Unix seconds (None: open) plus an
optional app; a day window becomes a range in :class:`~zhiwen.questionlog.model.LogWindow`.

Example::

    store.add([record])                               # the writer thread, in batches
    store.find(record.answer_id)                      # → LoggedQuestion | None
    store.questions("manual", Span(app="qa"), "unanswered", limit=20, offset=0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from zhiwen.questionlog.model import Feedback, LoggedQuestion, QuestionPage, Status


@dataclass(frozen=True, slots=True)
class Span:
    """A time range ``[start, end)`` in Unix seconds (None: open) and an optional app."""

    start: float | None = None
    end: float | None = None
    app: str | None = None


@dataclass(frozen=True, slots=True)
class StatRow:
    """What the numbers need of one question: when, how it was answered, what it cost, and the
    ratings its answer got."""

    at: float
    answer_type: str
    unanswered: bool
    latency_ms: float
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    up: int = 0
    down: int = 0


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One normal form of a question (:func:`zhiwen.faq.normalize.normalise_question`) in a
    span: how often it was asked, how often left unanswered, one wording of it, when last."""

    normal: str
    question: str
    count: int
    unanswered: int
    last_at: float


class QuestionStore(Protocol):
    """Where the question log keeps its records and their feedback."""

    def add(self, records: Sequence[LoggedQuestion]) -> None:
        """Insert records in one transaction (an id already there is left as it is)."""
        ...

    def find(self, answer_id: str) -> LoggedQuestion | None: ...

    def set_feedback(self, feedback: Feedback) -> None:
        """Keep ``feedback``, replacing the same caller's earlier one for that answer."""
        ...

    def questions(self, kb: str, span: Span, status: Status, *, limit: int, offset: int) -> QuestionPage:
        """A page of ``kb``'s questions, newest first, with their feedback."""
        ...

    def records(self, kb: str, span: Span, *, page: int = 1000) -> Iterator[LoggedQuestion]:
        """Every record of ``kb`` in ``span``, oldest first, read ``page`` rows at a time."""
        ...

    def feedback_of(self, answer_ids: Sequence[str]) -> list[Feedback]: ...

    def stat_rows(self, kb: str, span: Span, *, page: int = 5000) -> Iterator[StatRow]: ...

    def phrasings(self, kb: str, span: Span, *, limit: int) -> list[Phrasing]:
        """The ``limit`` most asked normal forms, most asked first."""
        ...

    def purge(self, before: float, *, limit: int) -> int:
        """Delete up to ``limit`` records older than ``before`` and their feedback; how many."""
        ...

    def delete_kb(self, kb: str) -> int:
        """Delete every record and rating of ``kb``; how many records."""
        ...

    def close(self) -> None: ...
