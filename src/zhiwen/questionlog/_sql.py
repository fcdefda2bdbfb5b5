"""The SQL both question stores run: written once with ``?`` placeholders; the PostgreSQL
store turns them into ``%s``. Each backend brings its DDL and its connections
(:meth:`SQLQuestionStore._cursor`); everything else — the rows, the keyset pages, the filters —
is here, so SQLite and PostgreSQL answer the same questions the same way.

Tables: ``questions`` (one row per answer; ``normal`` is the normal form of what was answered,
for the most asked; ``unanswered`` is decided when the record is written) and ``feedback`` (one
row per answer and caller). Indexes: ``(kb, at, answer_id)`` for every owner's read (a window
is a time range), ``(kb, at)`` of the unanswered alone (partial: their list does not read the
answered), ``(at)`` for the retention purge, ``feedback (kb, rating)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from zhiwen.faq.normalize import normalise_question
from zhiwen.questionlog.base import Phrasing, Span, StatRow
from zhiwen.questionlog.model import (
    Feedback,
    ListedQuestion,
    LoggedQuestion,
    QuestionPage,
    SourceRef,
    Status,
)

COLUMNS = (
    "answer_id",
    "at",
    "kb",
    "app",
    "caller",
    "session_id",
    "question",
    "standalone",
    "normal",
    "answer_type",
    "answerable",
    "unanswered",
    "fallback",
    "faq_id",
    "faq_score",
    "sources",
    "latency_ms",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
)
FEEDBACK_COLUMNS = ("answer_id", "kb", "caller", "rating", "reason", "comment", "at")
_IN_CHUNK = 500  # ids per IN (…) list


def _text(value: str | None) -> str | None:
    # PostgreSQL refuses NUL in text and jsonb: one such question must not cost its whole batch
    return value.replace("\x00", "") if value and "\x00" in value else value


def _sources_json(sources: Sequence[SourceRef]) -> str:
    text = json.dumps([s.to_json() for s in sources], ensure_ascii=False)
    if "\\u0000" not in text:
        return text
    clean = [{k: _text(v) if isinstance(v, str) else v for k, v in s.to_json().items()} for s in sources]
    return json.dumps(clean, ensure_ascii=False)


def to_row(q: LoggedQuestion) -> tuple[Any, ...]:
    """A record as the row ``COLUMNS`` names (the normal form computed here, off the request)."""
    answerable = None if q.answerable is None else int(q.answerable)
    return (
        q.answer_id, q.at, q.kb, q.app, q.caller, _text(q.session_id), _text(q.question), _text(q.standalone),
        normalise_question(q.asked), q.answer_type, answerable, int(q.unanswered), q.fallback,
        q.faq_id, q.faq_score, _sources_json(q.sources), q.latency_ms, q.llm_calls, q.prompt_tokens,
        q.completion_tokens,
    )  # fmt: skip


def from_row(row: Sequence[Any]) -> LoggedQuestion:
    r = dict(zip(COLUMNS, row, strict=True))
    sources = r["sources"]
    sources = json.loads(sources) if isinstance(sources, str) else sources  # PostgreSQL: jsonb
    return LoggedQuestion(
        answer_id=r["answer_id"], kb=r["kb"], app=r["app"], question=r["question"],
        answer_type=r["answer_type"],
        answerable=None if r["answerable"] is None else bool(r["answerable"]),
        standalone=r["standalone"], fallback=r["fallback"], faq_id=r["faq_id"],
        faq_score=r["faq_score"], sources=tuple(SourceRef.from_json(s) for s in sources or ()),
        latency_ms=float(r["latency_ms"]), llm_calls=int(r["llm_calls"]),
        prompt_tokens=int(r["prompt_tokens"]), completion_tokens=int(r["completion_tokens"]),
        caller=r["caller"], session_id=r["session_id"], at=float(r["at"]),
    )  # fmt: skip


def feedback_row(f: Feedback) -> tuple[Any, ...]:
    return (f.answer_id, f.kb, f.caller, f.rating, f.reason, _text(f.comment), f.at)


def feedback_from_row(row: Sequence[Any]) -> Feedback:
    answer_id, kb, caller, rating, reason, comment, at = row
    return Feedback(answer_id, kb, rating, caller, reason, comment, float(at))


def _chunks(items: Sequence[str], size: int = _IN_CHUNK) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class SQLQuestionStore:
    """The :class:`~zhiwen.questionlog.base.QuestionStore` over a DB-API connection; a backend
    gives ``_cursor`` (a cursor in a transaction, committed on success) and its table names."""

    questions_table = "questions"
    feedback_table = "feedback"
    placeholder = "?"

    def _cursor(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _sql(self, text: str) -> str:
        text = text.replace("{q}", self.questions_table).replace("{f}", self.feedback_table)
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)

    # -- writes --------------------------------------------------------------------------------
    def add(self, records: Sequence[LoggedQuestion]) -> None:
        if not records:
            return
        marks = ", ".join("?" * len(COLUMNS))
        insert = self._sql(
            f"INSERT INTO {{q}} ({', '.join(COLUMNS)}) VALUES ({marks}) ON CONFLICT (answer_id) DO NOTHING"
        )
        rows = [to_row(q) for q in records]
        with self._cursor() as cur:
            cur.executemany(insert, rows)

    def set_feedback(self, feedback: Feedback) -> None:
        marks = ", ".join("?" * len(FEEDBACK_COLUMNS))
        upsert = self._sql(
            f"INSERT INTO {{f}} ({', '.join(FEEDBACK_COLUMNS)}) VALUES ({marks}) "
            "ON CONFLICT (answer_id, caller) DO UPDATE SET rating = excluded.rating, "
            "reason = excluded.reason, comment = excluded.comment, at = excluded.at"
        )
        with self._cursor() as cur:
            cur.execute(upsert, feedback_row(feedback))

    def purge(self, before: float, *, limit: int) -> int:
        oldest = "SELECT answer_id FROM {q} WHERE at < ? ORDER BY at, answer_id LIMIT ?"
        with self._cursor() as cur:
            cur.execute(self._sql(f"DELETE FROM {{f}} WHERE answer_id IN ({oldest})"), (before, limit))
            cur.execute(self._sql(f"DELETE FROM {{q}} WHERE answer_id IN ({oldest})"), (before, limit))
            return max(0, int(cur.rowcount))

    def delete_kb(self, kb: str) -> int:
        with self._cursor() as cur:
            cur.execute(self._sql("DELETE FROM {f} WHERE kb = ?"), (kb,))
            cur.execute(self._sql("DELETE FROM {q} WHERE kb = ?"), (kb,))
            return max(0, int(cur.rowcount))

    # -- reads ---------------------------------------------------------------------------------
    def find(self, answer_id: str) -> LoggedQuestion | None:
        with self._cursor() as cur:
            query = f"SELECT {', '.join(COLUMNS)} FROM {{q}} WHERE answer_id = ?"
            cur.execute(self._sql(query), (answer_id,))
            row = cur.fetchone()
        return None if row is None else from_row(row)

    def feedback_of(self, answer_ids: Sequence[str]) -> list[Feedback]:
        found: list[Feedback] = []
        with self._cursor() as cur:
            for ids in _chunks(list(answer_ids)):
                marks = ", ".join("?" * len(ids))
                query = f"SELECT {', '.join(FEEDBACK_COLUMNS)} FROM {{f}} WHERE answer_id IN ({marks})"
                cur.execute(self._sql(query), tuple(ids))
                found.extend(feedback_from_row(r) for r in cur.fetchall())
        return sorted(found, key=lambda f: (f.at, f.caller))

    def _where(self, kb: str, span: Span, status: Status = "all") -> tuple[str, list[Any]]:
        parts: list[str] = ["q.kb = ?"]
        params: list[Any] = [kb]
        for clause, value in (("q.at >= ?", span.start), ("q.at < ?", span.end), ("q.app = ?", span.app)):
            if value is not None:
                parts.append(clause)
                params.append(value)
        if status == "unanswered":
            parts.append("q.unanswered = 1")
        elif status == "disliked":  # from the few 👎 of the KB, not a probe per question
            parts.append("q.answer_id IN (SELECT answer_id FROM {f} WHERE kb = ? AND rating = 'down')")
            params.append(kb)
        return " AND ".join(parts), params

    def questions(self, kb: str, span: Span, status: Status, *, limit: int, offset: int) -> QuestionPage:
        where, params = self._where(kb, span, status)
        columns = ", ".join(f"q.{c}" for c in COLUMNS)
        with self._cursor() as cur:
            cur.execute(self._sql(f"SELECT COUNT(*) FROM {{q}} q WHERE {where}"), params)
            total = int(cur.fetchone()[0])
            cur.execute(
                self._sql(
                    f"SELECT {columns} FROM {{q}} q WHERE {where} "
                    "ORDER BY q.at DESC, q.answer_id DESC LIMIT ? OFFSET ?"
                ),
                [*params, limit, offset],
            )
            records = [from_row(r) for r in cur.fetchall()]
        ratings: dict[str, list[Feedback]] = {}
        for f in self.feedback_of([q.answer_id for q in records]):
            ratings.setdefault(f.answer_id, []).append(f)
        items = tuple(ListedQuestion(q, tuple(ratings.get(q.answer_id, ()))) for q in records)
        return QuestionPage(total=total, items=items)

    def _pages(self, select: str, kb: str, span: Span, page: int) -> Iterator[Sequence[Any]]:
        """Rows of ``select`` (its first two columns ``q.at, q.answer_id``) in (at, id) order,
        ``page`` at a time: no cursor or transaction stays open between pages."""
        where, params = self._where(kb, span)
        query = self._sql(
            f"{select} FROM {{q}} q WHERE {where} AND (q.at, q.answer_id) > (?, ?) "
            "ORDER BY q.at, q.answer_id LIMIT ?"
        )
        after: tuple[float, str] = (float("-inf"), "")
        while True:
            with self._cursor() as cur:
                cur.execute(query, [*params, *after, page])
                rows = cur.fetchall()
            yield from rows
            if len(rows) < page:
                return
            after = (rows[-1][0], rows[-1][1])

    def records(self, kb: str, span: Span, *, page: int = 1000) -> Iterator[LoggedQuestion]:
        # COLUMNS starts with answer_id, at: select at, answer_id first for the keyset
        columns = ", ".join(f"q.{c}" for c in COLUMNS)
        for row in self._pages(f"SELECT q.at, q.answer_id, {columns}", kb, span, page):
            yield from_row(row[2:])

    def _ratings(self, kb: str) -> dict[str, tuple[int, int]]:
        """Answer id → (👍, 👎) of every rated answer of ``kb`` (ratings are few beside questions)."""
        query = self._sql(
            "SELECT answer_id, SUM(CASE WHEN rating = 'up' THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN rating = 'down' THEN 1 ELSE 0 END) FROM {f} WHERE kb = ? GROUP BY answer_id"
        )
        with self._cursor() as cur:
            cur.execute(query, (kb,))
            return {answer_id: (int(up), int(down)) for answer_id, up, down in cur.fetchall()}

    def stat_rows(self, kb: str, span: Span, *, page: int = 5000) -> Iterator[StatRow]:
        ratings = self._ratings(kb)
        select = (
            "SELECT q.at, q.answer_id, q.answer_type, q.unanswered, q.latency_ms, q.llm_calls, "
            "q.prompt_tokens, q.completion_tokens"
        )
        for at, answer_id, answer_type, unanswered, latency, calls, prompt, completion in self._pages(
            select, kb, span, page
        ):
            up, down = ratings.get(answer_id, (0, 0))
            yield StatRow(
                float(at), answer_type, bool(unanswered), float(latency), int(calls), int(prompt),
                int(completion), up, down,
            )  # fmt: skip

    def phrasings(self, kb: str, span: Span, *, limit: int) -> list[Phrasing]:
        where, params = self._where(kb, span)
        query = self._sql(
            "SELECT q.normal, MIN(COALESCE(q.standalone, q.question)), COUNT(*), SUM(q.unanswered), "
            f"MAX(q.at) FROM {{q}} q WHERE {where} GROUP BY q.normal "
            "ORDER BY COUNT(*) DESC, MAX(q.at) DESC LIMIT ?"
        )
        with self._cursor() as cur:
            cur.execute(query, [*params, limit])
            rows = cur.fetchall()
        return [Phrasing(n, text, int(c), int(u or 0), float(at)) for n, text, c, u, at in rows]

    def close(self) -> None:
        raise NotImplementedError
