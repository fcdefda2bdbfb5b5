"""FAQ entries and what the matcher says about a question.

An entry is one canned answer with the questions it answers word for word: its ``question``
(the one shown in 「您是不是想问：」) and its ``similar`` questions (other phrasings the owner
typed). Its ``id`` is stable: given in the file, or derived from the normalised question, so a
re-import of the same file updates the entries instead of adding them again.

Example::

    >>> e = FAQEntry.create("外国人入境免签可以停留几天？", "一般为 30 天……", similar=["免签能待多久"])
    >>> e.id == FAQEntry.create("外国人入境免签可以停留几天", "改过的答案").id
    True
    >>> e.questions
    ('外国人入境免签可以停留几天？', '免签能待多久')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from zhiwen.documents import content_hash
from zhiwen.faq.normalize import normalise_question


def entry_id_for(question: str) -> str:
    """The id of an entry whose file gave none: a hash of its normalised question."""
    return "faq-" + content_hash(normalise_question(question))[:16]


@dataclass(frozen=True, slots=True)
class FAQEntry:
    id: str
    question: str
    answer: str
    similar: tuple[str, ...] = ()
    category: str = ""
    enabled: bool = True

    @classmethod
    def create(
        cls,
        question: str,
        answer: str,
        *,
        similar: Iterable[str] = (),
        category: str = "",
        enabled: bool = True,
        id: str | None = None,
    ) -> FAQEntry:
        """An entry with its similar questions de-duplicated (after normalisation, the main
        question first) and its id derived from the question when none is given."""
        return cls(
            id=id or entry_id_for(question),
            question=question.strip(),
            answer=answer.strip(),
            similar=_distinct_similar(question, similar),
            category=category.strip(),
            enabled=enabled,
        )

    @property
    def questions(self) -> tuple[str, ...]:
        """The main question, then the similar ones: every question this entry answers."""
        return (self.question, *self.similar)


def _distinct_similar(question: str, similar: Iterable[str]) -> tuple[str, ...]:
    seen = {normalise_question(question)}
    out: list[str] = []
    for text in similar:
        text = text.strip()
        key = normalise_question(text)
        if key and key not in seen:
            seen.add(key)
            out.append(text)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class FAQMatch:
    """A question answered by ``entry`` word for word: ``question`` is the entry's question it
    matched (the main one or a similar one), ``score`` in [0, 1] (1.0: the same question once
    normalised)."""

    entry: FAQEntry
    question: str
    score: float


@dataclass(frozen=True, slots=True)
class FAQSuggestion:
    """A near miss: an entry close to the question but not close enough to answer it."""

    entry: FAQEntry
    score: float

    @property
    def question(self) -> str:
        return self.entry.question


@dataclass(frozen=True, slots=True)
class FAQMiss:
    """No entry answers the question; ``suggestions`` (best first) feed 「您是不是想问：」."""

    suggestions: tuple[FAQSuggestion, ...] = field(default_factory=tuple)


FAQDecision = FAQMatch | FAQMiss
