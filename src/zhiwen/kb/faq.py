"""A knowledge base's FAQ entries: kept as curated chunks, matched by one matcher per revision.

An FAQ entry (:class:`~zhiwen.faq.FAQEntry`) is a chunk of the KB's document :data:`FAQ_DOC`
whose text is the answer, whose title is the main question and whose questions — the main one
and the similar ones — are question rows (:mod:`zhiwen.curation`): so an entry is found by
ordinary retrieval too, cited like any passage, listed, edited, disabled and undone like any
chunk, and exported with the KB. The matcher that answers an entry word for word
(:class:`~zhiwen.faq.matcher.FAQMatcher`) is built from the enabled entries once per KB
revision; a rebuild after a change embeds only the questions it has not seen.

Example::

    >>> report = put_faq_entries(kb, read_faq(Path("faq.xlsx")).entries, actor="")
    >>> report.added, report.updated
    (42, 0)
    >>> decision = faq_matcher(kb).match("怎么导入 PDF？")
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zhiwen.cache import LRU
from zhiwen.config import FAQSettings, get_settings
from zhiwen.curation import ChunkView, NewChunk
from zhiwen.faq import FAQEntry
from zhiwen.faq.matcher import FAQMatcher

if TYPE_CHECKING:
    from zhiwen.kb.knowledge_base import KnowledgeBase

#: the document of a KB that holds its FAQ entries
FAQ_DOC = "faq"
#: ``kb.json`` ``extra`` key: the KB's own threshold for a word-for-word answer
THRESHOLD_KEY = "faq_threshold"
_CATEGORY = "category"


def chunk_id_of(entry_id: str) -> str:
    """The chunk id of an entry (``faq#<entry id>``): stable, so a re-import updates it."""
    return f"{FAQ_DOC}#{entry_id}"


def entry_id_of(chunk_id: str) -> str:
    return chunk_id.removeprefix(f"{FAQ_DOC}#")


def entry_of(view: ChunkView) -> FAQEntry:
    """The entry a curated FAQ chunk holds (its first question is the main one)."""
    questions = tuple(view.questions) or ((view.title,) if view.title else ())
    return FAQEntry(
        id=entry_id_of(view.id),
        question=questions[0] if questions else "",
        answer=view.text,
        similar=questions[1:],
        category=str(view.extra.get(_CATEGORY, "")),
        enabled=view.enabled,
    )


def new_chunk_of(entry: FAQEntry) -> NewChunk:
    return NewChunk(
        doc_id=FAQ_DOC,
        chunk_id=chunk_id_of(entry.id),
        text=entry.answer,
        title=entry.question,
        questions=(entry.question, *entry.similar),
        origin="faq",
        metadata={"faq_category": entry.category} if entry.category else {},
        extra={_CATEGORY: entry.category} if entry.category else {},
    )


def faq_entries(kb: KnowledgeBase) -> list[FAQEntry]:
    """The KB's entries, disabled ones too, in the order they were added."""
    return [entry_of(v) for v in kb.curation.chunks_of_origin("faq")]


@dataclass(frozen=True, slots=True)
class FAQPut:
    """What :func:`put_faq_entries` did: entries added, updated, and left as they were."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0


def put_faq_entries(kb: KnowledgeBase, entries: Sequence[FAQEntry], *, actor: str) -> FAQPut:
    """Add new entries and update the ones the KB has (same id): one recorded change for the
    new ones, one per updated entry. An entry whose category changed is replaced."""
    known = {e.id: e for e in faq_entries(kb)}
    fresh = [e for e in entries if e.id not in known]
    changed = [e for e in entries if e.id in known and e != known[e.id]]
    replaced = [e for e in changed if e.category != known[e.id].category]
    if replaced:
        kb.curation.delete_many([chunk_id_of(e.id) for e in replaced], actor=actor)
    if fresh or replaced:
        kb.curation.add_many([new_chunk_of(e) for e in (*fresh, *replaced)], actor=actor, action="faq")
    for entry in changed:
        if entry.category == known[entry.id].category:
            _update(kb, entry, actor)
    return FAQPut(added=len(fresh), updated=len(changed), unchanged=len(entries) - len(fresh) - len(changed))


def _update(kb: KnowledgeBase, entry: FAQEntry, actor: str) -> None:
    kb.curation.update(
        chunk_id_of(entry.id),
        actor=actor,
        text=entry.answer,
        questions=(entry.question, *entry.similar),
        enabled=entry.enabled,
    )


def faq_settings(kb: KnowledgeBase, base: FAQSettings | None = None) -> FAQSettings:
    """The FAQ settings with the KB's own threshold, when it set one."""
    base = base or get_settings().faq
    own = kb.config.extra.get(THRESHOLD_KEY)
    if isinstance(own, int | float) and 0.0 <= float(own) <= 1.0:
        return base.model_copy(update={"threshold": float(own)})
    return base


_MATCHERS: LRU[FAQMatcher] = LRU(32, "faq_matchers")
#: the KB revisions known to have no enabled entry (their questions skip the FAQ step at once)
_WITHOUT: LRU[bool] = LRU(1024, "faq_without")
_BUILDING = threading.Lock()  # one build at a time: two requests after a change embed once


def faq_matcher(kb: KnowledgeBase, base: FAQSettings | None = None) -> FAQMatcher | None:
    """The matcher of the KB's enabled entries at its current revision, or None without any.

    Built on first use after a change (only questions it has not embedded are embedded); a KB
    without vectors (text-only) has no matcher: its entries are still found by retrieval.
    """
    if kb.embedder is None:
        return None
    settings = faq_settings(kb, base)
    key = (str(kb.path), kb.revision, settings.threshold)
    matcher = _MATCHERS.get(key)
    if matcher is not None:
        return matcher
    if _WITHOUT.get(key):
        return None
    with _BUILDING:
        matcher = _MATCHERS.get(key)
        if matcher is None:
            entries = [e for e in faq_entries(kb) if e.enabled]
            if not entries:  # every question of a KB without FAQ asks here: no model, no build
                _WITHOUT.put(key, True)
                return None
            matcher = _build(kb, settings, _previous(kb), entries)
            _MATCHERS.put(key, matcher)
    return matcher if len(matcher) else None


def _previous(kb: KnowledgeBase) -> FAQMatcher | None:
    """The last matcher built for this KB (any revision): its vectors are reused."""
    return _LAST.get(str(kb.path))


_LAST: dict[str, FAQMatcher] = {}


def _build(
    kb: KnowledgeBase, settings: FAQSettings, previous: FAQMatcher | None, entries: Sequence[FAQEntry]
) -> FAQMatcher:
    matcher = FAQMatcher(
        entries,
        kb.real_embedder(),
        settings=settings,
        tokenizer=kb.tokenizer,
        cache=kb.embedding_cache(),
        previous=previous,
    )
    _LAST[str(kb.path)] = matcher
    return matcher


def forget(paths: Iterable[str]) -> None:
    """Drop the matchers of deleted KBs (their folders)."""
    for path in paths:
        _LAST.pop(path, None)


__all__ = [
    "FAQ_DOC",
    "THRESHOLD_KEY",
    "FAQPut",
    "chunk_id_of",
    "entry_id_of",
    "entry_of",
    "faq_entries",
    "faq_matcher",
    "faq_settings",
    "forget",
    "new_chunk_of",
    "put_faq_entries",
]
