"""What the question log keeps: one :class:`LoggedQuestion` per answer, the :class:`Feedback`
given to it, and the window an owner looks through (:class:`LogWindow`).

A record is built by whoever answered (the conversation service), with the ``answer_id`` the
answer carries to the client (:func:`new_answer_id`: 16 characters, sortable by time), and handed
to :meth:`zhiwen.questionlog.QuestionLog.record`. Whether an answer failed the asker is decided
here once (:func:`unanswered_reason`): refused, judged not answerable, or answered by a fallback
after the LLM failed (an offline server's extractive answers, ``no_llm``, are answers).

Example::

    >>> q = LoggedQuestion(answer_id=new_answer_id(), kb="manual", app="qa", question="怎么建库？",
    ...                    answer_type="extractive", answerable=False)
    >>> q.unanswered_reason
    'not_answerable'
    >>> FEEDBACK_REASONS["off_topic"]
    '答非所问'
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, Literal, Protocol
from zoneinfo import ZoneInfo

#: how an answer was made; the answer stage names it (``Answer.answer_type``), the log keeps it
ANSWER_TYPES = ("faq", "generated", "extractive", "refused", "table", "tool")
#: the reasons a 👎 may give: stored as the code, shown as the label
FEEDBACK_REASONS: Mapping[str, str] = {
    "off_topic": "答非所问",
    "outdated": "内容过时",
    "no_citation": "没有引用",
    "other": "其他",
}
MAX_COMMENT_CHARS = 1000
#: an extractive answer for this reason is an answer: the server runs without an LLM
ANSWERED_OFFLINE = "no_llm"

Rating = Literal["up", "down"]
Status = Literal["all", "unanswered", "disliked"]

# Crockford's base32, lower case: no i, l, o, u; sorts like the number it spells
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_RANDOM_BITS = 35


def new_answer_id(now: float | None = None) -> str:
    """A new answer id: 45 bits of milliseconds and 35 random bits in 16 base32 characters, so
    ids sort by the time they were made (until the year 3084).

    Example::

        >>> len(new_answer_id()), new_answer_id(1.0) < new_answer_id(2.0)
        (16, True)
    """
    ms = int((time.time() if now is None else now) * 1000)
    n = (ms << _RANDOM_BITS) | secrets.randbits(_RANDOM_BITS)
    return "".join(_ALPHABET[(n >> shift) & 31] for shift in range(75, -1, -5))


def unanswered_reason(answer_type: str, answerable: bool | None, fallback: str | None) -> str | None:
    """Why an answer failed its asker, or None when it did not: ``refused``, ``not_answerable``
    (the sources missed the KB's relevance floor) or the fallback's reason (``timeout``,
    ``llm_uncited`` …: the LLM was asked and its reply was not shown)."""
    if answer_type == "refused":
        return "refused"
    if answerable is False:
        return "not_answerable"
    if fallback is not None and fallback != ANSWERED_OFFLINE:
        return fallback
    return None


@dataclass(frozen=True, slots=True)
class SourceRef:
    """One source an answer stood on: the document or chunk id, its title and score."""

    id: str
    title: str = ""
    score: float | None = None
    kb: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "score": self.score, "kb": self.kb}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> SourceRef:
        score = value.get("score")
        return cls(
            id=str(value.get("id", "")),
            title=str(value.get("title") or ""),
            score=None if score is None else float(score),
            kb=value.get("kb"),
        )


class Cited(Protocol):
    """What the log reads of a citation (:class:`zhiwen.answer.model.Citation` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def score(self) -> float | None: ...

    @property
    def kb(self) -> str | None: ...


def sources_of(citations: Iterable[Cited], limit: int = 5) -> tuple[SourceRef, ...]:
    """The first ``limit`` citations of an answer as :class:`SourceRef` (the answer's order).

    Example::

        >>> sources_of([SourceRef(id="d1", title="快速开始", score=0.8)])   # or Answer.citations
        (SourceRef(id='d1', title='快速开始', score=0.8, kb=None),)
    """
    found: list[SourceRef] = []
    for c in citations:
        if len(found) >= limit:
            break
        found.append(SourceRef(id=c.id, title=c.title, score=c.score, kb=c.kb))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class LoggedQuestion:
    """One answered question, as the owner of its KB sees it.

    ``question`` is what was asked; ``standalone`` what was answered when it followed a
    conversation (None: the question as asked). ``caller`` is the API key's fingerprint, never
    the key. ``fallback`` is the answer's ``extractive_reason`` (None: the answer path ran as
    planned). ``at`` is Unix seconds.
    """

    answer_id: str
    kb: str
    app: str
    question: str
    answer_type: str
    answerable: bool | None = None
    standalone: str | None = None
    fallback: str | None = None
    faq_id: str | None = None
    faq_score: float | None = None
    sources: tuple[SourceRef, ...] = ()
    latency_ms: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    caller: str = ""
    session_id: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def unanswered_reason(self) -> str | None:
        return unanswered_reason(self.answer_type, self.answerable, self.fallback)

    @property
    def unanswered(self) -> bool:
        return self.unanswered_reason is not None

    @property
    def asked(self) -> str:
        """The question that was answered: the standalone one, else the one asked."""
        return self.standalone or self.question

    def to_json(self) -> dict[str, Any]:
        """A JSON object of every field (``sources`` as a list of objects)."""
        out = {name: getattr(self, name) for name in RECORD_FIELDS}
        out["sources"] = [s.to_json() for s in self.sources]
        return out

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> LoggedQuestion:
        fields = {name: value[name] for name in RECORD_FIELDS if name in value}
        fields["sources"] = tuple(SourceRef.from_json(s) for s in value.get("sources") or ())
        return cls(**fields)


#: the record's fields in their stored order
RECORD_FIELDS = tuple(LoggedQuestion.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class Feedback:
    """A 👍 or 👎 given to one answer by one caller (a later one replaces it)."""

    answer_id: str
    kb: str
    rating: Rating
    caller: str = ""
    reason: str | None = None
    comment: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def reason_label(self) -> str | None:
        return FEEDBACK_REASONS.get(self.reason) if self.reason else None

    def to_json(self) -> dict[str, Any]:
        return {
            "rating": self.rating,
            "reason": self.reason,
            "reason_label": self.reason_label,
            "comment": self.comment,
            "caller": self.caller,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True)
class ListedQuestion:
    """A question in the owner's list, with the ratings its answer got."""

    record: LoggedQuestion
    feedback: tuple[Feedback, ...] = ()

    @property
    def up(self) -> int:
        return sum(1 for f in self.feedback if f.rating == "up")

    @property
    def down(self) -> int:
        return sum(1 for f in self.feedback if f.rating == "down")


@dataclass(frozen=True, slots=True)
class QuestionPage:
    """One page of the owner's list and how many questions the whole list has."""

    total: int
    items: tuple[ListedQuestion, ...]


def day_zone(name: str | None) -> tzinfo | None:
    """The time zone days are drawn in: ``name`` (IANA), or None for the server's own."""
    return ZoneInfo(name) if name else None


def day_of(at: float, zone: tzinfo | None = None) -> date:
    """The calendar day of Unix time ``at`` in ``zone`` (None: the server's)."""
    return datetime.fromtimestamp(at, zone).date()


def day_start(day: date, zone: tzinfo | None = None) -> float:
    """Unix time of the first instant of ``day`` in ``zone`` (None: the server's)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone).timestamp()


@dataclass(frozen=True, slots=True)
class LogWindow:
    """The days (inclusive; None: open) and the app an owner looks at.

    Example::

        >>> LogWindow.last_days(7, today=date(2025, 3, 10)).since
        datetime.date(2025, 3, 4)
    """

    since: date | None = None
    until: date | None = None
    app: str | None = None

    @classmethod
    def last_days(cls, days: int, *, today: date | None = None, app: str | None = None) -> LogWindow:
        today = today or date.today()
        return cls(since=today - timedelta(days=max(1, days) - 1), until=today, app=app)

    def bounds(self, zone: tzinfo | None = None) -> tuple[float | None, float | None]:
        """``[start, end)`` in Unix seconds (None: open)."""
        start = day_start(self.since, zone) if self.since else None
        end = day_start(self.until + timedelta(days=1), zone) if self.until else None
        return start, end
