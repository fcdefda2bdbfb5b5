"""The FAQ step of a turn: a question an FAQ entry answers gets that entry's answer word for word.

The conversation service runs it once per turn, after the question is made standalone and
before any answerer runs (:mod:`.service`): the KB's matcher (:func:`zhiwen.kb.faq.faq_matcher`,
None for a KB without entries — nothing else is done then) decides.

* **a match** (:class:`~zhiwen.faq.FAQMatch`, over the KB's threshold and margin): the answer is
  :func:`faq_answer` — the entry's answer as it was written, the entry cited (chunk
  ``faq#<id>``), ``answer_type`` ``faq`` and ``faq`` {question, score, entry_id}; no LLM call,
  no retrieval;
* **a near miss** (:class:`~zhiwen.faq.FAQMiss` with suggestions): the answerer answers as usual
  and the answer offers 「您是不是想问：」 the closest entries' questions (:func:`suggested`).

The question's vector is the KB's own query embedding (cached by the retriever), so the search
that follows a miss does not embed it again.

Example::

    >>> check = check_faq(ctx.open_kb, "manual", "怎么导入PDF", settings.faq)
    >>> answer = faq_answer(check) if isinstance(check.decision, FAQMatch) else None
    >>> answer.answer_type, answer.faq.entry_id, answer.citations[0].id
    ('faq', 'faq-3f…', 'faq#faq-3f…')
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zhiwen.answer.model import SNIPPET_MAX_CHARS, Answer, Citation, FAQHit
from zhiwen.config import FAQSettings
from zhiwen.errors import ZhiwenError
from zhiwen.faq import FAQDecision, FAQMatch, FAQMiss

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)

#: the route an FAQ answer reports (``Answer.route``)
FAQ_ROUTE = "faq"


@dataclass(frozen=True, slots=True)
class FAQCheck:
    """What ``kb``'s FAQ said of a turn's question."""

    kb: str
    decision: FAQDecision

    @property
    def match(self) -> FAQMatch | None:
        return self.decision if isinstance(self.decision, FAQMatch) else None

    @property
    def suggestions(self) -> list[str]:
        """The near misses' questions, best first (「您是不是想问：」; [] on a match)."""
        if not isinstance(self.decision, FAQMiss):
            return []
        return list(dict.fromkeys(s.question for s in self.decision.suggestions))


def faq_decision(kb: KnowledgeBase, question: str, settings: FAQSettings | None = None) -> FAQDecision | None:
    """``kb``'s matcher's decision on ``question``; None when the KB has no FAQ entries."""
    from zhiwen.kb.faq import faq_matcher

    matcher = faq_matcher(kb, settings)
    if matcher is None:
        return None
    exact = matcher.exact(question)  # the same question once normalised: nothing to embed
    if exact is not None:
        return exact
    return matcher.match(question, query_vector=kb.embed_query(question))


def check_faq(
    open_kb: Callable[[str], KnowledgeBase],
    kb: str | None,
    question: str,
    settings: FAQSettings | None = None,
) -> FAQCheck | None:
    """The FAQ step for ``question`` in ``kb`` (None: no KB named, no entries, or a KB that
    cannot be opened here — the answerer then says why, as it always has — or an FAQ that failed:
    logged, and the answerer answers)."""
    if not kb:
        return None
    try:
        decision = faq_decision(open_kb(kb), question, settings)
    except ZhiwenError as exc:  # not built, forbidden …: the answerer reports it in its own words
        log.debug("no FAQ step for %s: %s", kb, exc)
        return None
    except Exception:  # a broken FAQ (its store, the embedder) must not cost the asker the answer
        log.warning("FAQ step of %s failed; answering without it", kb, exc_info=True)
        return None
    return None if decision is None else FAQCheck(kb, decision)


def faq_answer(check: FAQCheck) -> Answer | None:
    """The matched entry's answer word for word, citing the entry; None without a match."""
    match = check.match
    if match is None:
        return None
    from zhiwen.kb.faq import chunk_id_of

    entry = match.entry
    cited = Citation(
        kb=check.kb,
        id=chunk_id_of(entry.id),
        title=entry.question,
        text=entry.answer[:SNIPPET_MAX_CHARS],
        score=match.score,
    )
    return Answer(
        answer=entry.answer,
        citations=[cited],
        route=FAQ_ROUTE,
        answerable=True,
        answer_type="faq",
        faq=FAQHit(question=match.question, score=match.score, entry_id=entry.id),
    )


__all__ = ["FAQ_ROUTE", "FAQCheck", "check_faq", "faq_answer", "faq_decision"]
