"""The question log of a home: what the interfaces call.

* **record** (:meth:`QuestionLog.record`): once per answer, by whoever answered; counts the
  ``/metrics`` counters and queues the record for the writer thread (never blocks, never
  raises; ``ZHIWEN_LOG__QUESTIONS=false``: counted, not kept).
* **feedback** (:meth:`QuestionLog.rate`): 👍/👎 by answer id, one per caller, changeable.
* **the owner's reads**, per KB and :class:`~zhiwen.questionlog.model.LogWindow`:
  :meth:`~QuestionLog.questions` (all, unanswered, disliked), :meth:`~QuestionLog.most_asked`,
  :meth:`~QuestionLog.stats`, :meth:`~QuestionLog.export`. Who may read them:
  :func:`zhiwen.questionlog.access.require_log_reader`.
* **delete_kb** when a KB is deleted; **close** at shutdown (flushes the queue).

Where it is kept: :func:`open_question_log` picks PostgreSQL (schema ``zhiwen_questions``) when
the home's store is ``postgresql://…``, else ``<home>/questions.sqlite``; the store is opened on
first use, so a server that is never asked opens nothing.

Example::

    >>> log = open_question_log(settings)
    >>> answer_id = new_answer_id()                      # put on the Answer
    >>> log.record(LoggedQuestion(answer_id=answer_id, kb="manual", app="qa", question="怎么建库？",
    ...                           answer_type="extractive", answerable=True, latency_ms=42.0))
    >>> log.rate(answer_id, "down", reason="outdated", caller=caller).reason_label
    '内容过时'
    >>> log.stats("manual", LogWindow.last_days(7, today=log.today())).overall.questions
    1
    >>> log.close()
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
import weakref
from collections.abc import Callable, Iterator
from datetime import date, datetime
from typing import Any

from zhiwen.config import LogSettings, Settings
from zhiwen.metrics import (
    FEEDBACK,
    QUESTION_LATENCY,
    QUESTION_LLM_CALLS,
    QUESTION_TOKENS,
    QUESTIONS,
    QUESTIONS_FAQ,
    QUESTIONS_UNANSWERED,
)
from zhiwen.questionlog.access import LogCaller, may_rate
from zhiwen.questionlog.base import QuestionStore, Span
from zhiwen.questionlog.errors import AnswerNotFound, bad_feedback
from zhiwen.questionlog.export import ExportFormat, export_lines
from zhiwen.questionlog.grouping import AskedGroup, Vectors, group_phrasings
from zhiwen.questionlog.model import (
    FEEDBACK_REASONS,
    MAX_COMMENT_CHARS,
    Feedback,
    LoggedQuestion,
    LogWindow,
    QuestionPage,
    Rating,
    Status,
    day_zone,
)
from zhiwen.questionlog.stats import LogStats, summarise
from zhiwen.questionlog.writer import RecordWriter, Retention

_POSTGRES = ("postgresql://", "postgres://")
_LABEL_TO_CODE = {label: code for code, label in FEEDBACK_REASONS.items()}
#: the most asked: how many normal forms are read and grouped
MOST_ASKED_PHRASINGS = 500
#: the longest page of the owner's list
MAX_PAGE = 500


def check_feedback(
    rating: str, reason: str | None, comment: str | None
) -> tuple[Rating, str | None, str | None]:
    """A rating, reason and comment as they are kept, or 422 / 3003 with a Chinese message.

    The reason may be its code or its label (「内容过时」 → ``outdated``); only a 👎 has one.
    """
    if rating not in ("up", "down"):
        raise bad_feedback(f"评价只能是 up（有用）或 down（没用），收到：{rating}")
    code = None
    if reason:
        code = reason if reason in FEEDBACK_REASONS else _LABEL_TO_CODE.get(reason.strip())
        if code is None:
            known = "、".join(f"{c}（{label}）" for c, label in FEEDBACK_REASONS.items())
            raise bad_feedback(f"未知的原因：{reason}；可选：{known}")
        if rating == "up":
            raise bad_feedback("只有「没用」（down）的评价可以选择原因")
    text = (comment or "").strip() or None
    if text is not None and len(text) > MAX_COMMENT_CHARS:
        raise bad_feedback(f"补充说明过长：{len(text)} 个字符，最多 {MAX_COMMENT_CHARS} 个")
    return ("up" if rating == "up" else "down"), code, text


class _Counters:
    """The ``/metrics`` children of one (kb, app), looked up once."""

    __slots__ = ("completion", "faq", "latency", "llm_calls", "prompt", "questions", "unanswered")

    def __init__(self, kb: str, app: str) -> None:
        self.questions = QUESTIONS.labels(kb=kb, app=app)
        self.unanswered = QUESTIONS_UNANSWERED.labels(kb=kb, app=app)
        self.faq = QUESTIONS_FAQ.labels(kb=kb, app=app)
        self.llm_calls = QUESTION_LLM_CALLS.labels(kb=kb, app=app)
        self.prompt = QUESTION_TOKENS.labels(kb=kb, app=app, kind="prompt")
        self.completion = QUESTION_TOKENS.labels(kb=kb, app=app, kind="completion")
        self.latency = QUESTION_LATENCY.labels(kb=kb, app=app)

    def count(self, q: LoggedQuestion) -> None:
        self.questions.inc()
        if q.unanswered:
            self.unanswered.inc()
        if q.answer_type == "faq":
            self.faq.inc()
        if q.llm_calls:
            self.llm_calls.inc(q.llm_calls)
        if q.prompt_tokens:
            self.prompt.inc(q.prompt_tokens)
        if q.completion_tokens:
            self.completion.inc(q.completion_tokens)
        self.latency.observe(q.latency_ms / 1000.0)


class QuestionLog:
    """The log over one :class:`~zhiwen.questionlog.base.QuestionStore` (opened by ``open_store``
    on first use)."""

    def __init__(self, open_store: Callable[[], QuestionStore], settings: LogSettings | None = None) -> None:
        self.settings = settings or LogSettings()
        self.zone = day_zone(self.settings.timezone)
        self._open_store = open_store
        self._store: QuestionStore | None = None
        self._writer: RecordWriter | None = None
        self._lock = threading.RLock()  # the writer is made under it, and opens the store
        self._counters: dict[tuple[str, str], _Counters] = {}
        self._closed = False
        _OPEN_LOGS.add(self)

    @property
    def enabled(self) -> bool:
        return self.settings.questions

    @property
    def store(self) -> QuestionStore:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = self._open_store()
        return self._store

    def _writer_for(self) -> RecordWriter:
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    s = self.settings
                    retention = Retention(days=s.retention_days, every_s=s.purge_every_s, batch=s.purge_batch)
                    self._writer = RecordWriter(
                        self.store, queue_size=s.queue_size, batch_size=s.batch_size,
                        idle_s=s.flush_interval_s, retention=retention,
                    )  # fmt: skip
        return self._writer

    # -- per answer ----------------------------------------------------------------------------
    def record(self, q: LoggedQuestion) -> bool:
        """Count ``q`` and queue it for writing; False when it is not kept (log off, queue full,
        closed). Never blocks, never raises."""
        key = (q.kb, q.app)
        counters = self._counters.get(key)
        if counters is None:
            counters = self._counters.setdefault(key, _Counters(*key))
        counters.count(q)
        if not self.enabled or self._closed:
            return False
        if len(q.question) > self.settings.max_text_chars:
            q = dataclasses.replace(q, question=q.question[: self.settings.max_text_chars])
        return self._writer_for().put(q)

    def find(self, answer_id: str, caller: LogCaller | None = None) -> LoggedQuestion:
        """The record of ``answer_id`` (written or still queued); 404 when the log does not hold
        it or ``caller`` may not read its KB (an id of another KB is not told apart)."""
        writer = self._writer
        if writer is not None and writer.pending(answer_id):
            writer.flush()
        found = self.store.find(answer_id)
        if found is None or (caller is not None and not may_rate(caller, found.kb)):
            raise AnswerNotFound.of(answer_id, log_off=found is None and not self.enabled)
        return found

    def rate(
        self,
        answer_id: str,
        rating: str,
        *,
        reason: str | None = None,
        comment: str | None = None,
        caller: str = "",
        access: LogCaller | None = None,
    ) -> Feedback:
        """Keep a 👍/👎 for ``answer_id`` by ``caller`` (the key's fingerprint), replacing its
        earlier one; 422 for a bad rating/reason/comment, 404 for an unknown answer."""
        checked_rating, code, text = check_feedback(rating, reason, comment)
        record = self.find(answer_id, access)
        feedback = Feedback(answer_id, record.kb, checked_rating, caller, code, text)
        self.store.set_feedback(feedback)
        FEEDBACK.labels(kb=record.kb, rating=checked_rating).inc()
        return feedback

    # -- the owner's reads ---------------------------------------------------------------------
    def today(self) -> date:
        """Today in the log's time zone (``LogWindow.last_days(7, today=log.today())``)."""
        return datetime.now(self.zone).date()

    def span(self, window: LogWindow) -> Span:
        start, end = window.bounds(self.zone)
        return Span(start, end, window.app)

    def questions(
        self, kb: str, window: LogWindow, status: Status = "all", *, limit: int = 50, offset: int = 0
    ) -> QuestionPage:
        """A page of ``kb``'s questions in ``window``, newest first, with their ratings (at most
        ``MAX_PAGE`` a page)."""
        limit, offset = max(1, min(limit, MAX_PAGE)), max(0, offset)
        return self.store.questions(kb, self.span(window), status, limit=limit, offset=offset)

    def most_asked(
        self, kb: str, window: LogWindow, *, limit: int = 20, vectors: Vectors | None = None
    ) -> list[AskedGroup]:
        """The ``limit`` most asked questions, same questions grouped (``vectors``: the KB's
        embedder's ``embed_passages`` also joins near duplicates)."""
        phrasings = self.store.phrasings(kb, self.span(window), limit=MOST_ASKED_PHRASINGS)
        groups = group_phrasings(phrasings, vectors=vectors, threshold=self.settings.group_threshold)
        return groups[:limit]

    def stats(self, kb: str, window: LogWindow) -> LogStats:
        """Per day and overall numbers of ``kb`` in ``window``."""
        return summarise(self.store.stat_rows(kb, self.span(window)), self.zone)

    def export(self, kb: str, window: LogWindow, fmt: ExportFormat = "jsonl") -> Iterator[str]:
        """``kb``'s log in ``window`` as text chunks (a streamed response's body)."""
        store = self.store
        return export_lines(store.records(kb, self.span(window)), store.feedback_of, fmt)

    # -- lifetime ------------------------------------------------------------------------------
    def delete_kb(self, kb: str) -> int:
        """Forget ``kb``'s questions and ratings (the KB is being deleted); how many questions."""
        self.flush()
        return self.store.delete_kb(kb)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until what was recorded so far is written."""
        return True if self._writer is None else self._writer.flush(timeout_s)

    def close(self) -> None:
        """Write what is queued and close the store; later records are counted, not kept."""
        self._closed = True
        with self._lock:
            writer, store = self._writer, self._store
            self._writer = self._store = None
        if writer is not None:
            writer.close()
        if store is not None:
            store.close()
        _OPEN_LOGS.discard(self)

    def __enter__(self) -> QuestionLog:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def store_opener(settings: Settings) -> Callable[[], QuestionStore]:
    """How the home's log is opened: PostgreSQL when the home's store is, else SQLite."""
    if settings.store.startswith(_POSTGRES):
        url, pg = settings.store, settings.postgres

        def postgres() -> QuestionStore:
            from zhiwen.questionlog.postgres import PostgresQuestionStore

            return PostgresQuestionStore(url, settings=pg)

        return postgres
    path = settings.home / "questions.sqlite"

    def sqlite() -> QuestionStore:
        from zhiwen.questionlog.sqlite import SQLiteQuestionStore

        return SQLiteQuestionStore(path)

    return sqlite


def open_question_log(settings: Settings) -> QuestionLog:
    """The home's question log under ``settings`` (``settings.log``); nothing is opened yet."""
    return QuestionLog(store_opener(settings), settings.log)


# a process that ends without close() (a script, the CLI) still writes what it queued
_OPEN_LOGS: weakref.WeakSet[QuestionLog] = weakref.WeakSet()


@atexit.register
def _close_open_logs() -> None:
    for question_log in list(_OPEN_LOGS):
        question_log.close()
