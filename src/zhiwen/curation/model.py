"""What curation records about a chunk (:class:`Overlay`), shows of it (:class:`ChunkView`), logs
(:class:`Change`) and takes to add one (:class:`NewChunk`); and the ids of question rows.

An overlay is the owner's word over a chunk: its edited text, whether it is enabled, its
questions and keywords, where it came from (``parsed`` by an import, added by hand —
``manual`` — or an FAQ entry — ``faq``), its place in the document, and ``stale`` (「原文已更新」:
the source changed under an edit). The store holds what follows from it: the chunk with the
effective text, and one searchable row per question (``<chunk id>::q<n>``) pointing back to it.

Example::

    >>> o = Overlay.of(chunk).with_(text="改写后的段落", questions=("怎么退货",))
    >>> o.effective.text, o.edited
    ('改写后的段落', True)
    >>> question_id("faq#7", 0), question_target("faq#7::q0")
    ('faq#7::q0', 'faq#7')
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from zhiwen.documents import Chunk, content_hash

Origin = Literal["parsed", "manual", "faq"]
ORIGINS: tuple[str, ...] = ("parsed", "manual", "faq")
#: metadata key of a question row: the chunk it stands for
TARGET_KEY = "_target"
_QUESTION = re.compile(r"^(?P<target>.+)::q(?P<n>\d+)$")


def question_id(chunk_id: str, n: int) -> str:
    """The id of the ``n``-th question row of ``chunk_id``."""
    return f"{chunk_id}::q{n}"


def question_target(row_id: str) -> str | None:
    """The chunk a question row stands for; None for an ordinary chunk id."""
    m = _QUESTION.match(row_id)
    return m.group("target") if m else None


def chunk_position(chunk: Chunk) -> float:
    """Where a parsed chunk sits in its document: ``chunk_index``, else the id's ``#n`` suffix."""
    index = chunk.metadata.get("chunk_index")
    if isinstance(index, int | float) and not isinstance(index, bool):
        return float(index)
    tail = chunk.id.rsplit("#", 1)[-1]
    return float(tail) if tail.isdigit() else 0.0


def question_rows(chunk: Chunk, questions: Sequence[str]) -> list[Chunk]:
    """One searchable row per question: its own text, the chunk's document and metadata (so
    filters apply to it alike), and the chunk's id under :data:`TARGET_KEY`."""
    meta = {**chunk.metadata, TARGET_KEY: chunk.id}
    return [
        Chunk(
            id=question_id(chunk.id, i), doc_id=chunk.doc_id, text=q, parent_id=chunk.parent_id, metadata=meta
        )
        for i, q in enumerate(questions)
    ]


@dataclass(frozen=True, slots=True)
class Overlay:
    """The owner's word over one chunk (see the module docstring)."""

    source: Chunk  # as parsed (origin parsed) or as created (manual, faq)
    origin: str = "parsed"
    text: str | None = None  # the edited text; None: the source's
    enabled: bool = True
    questions: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    stale: bool = False  # 「原文已更新」: the source changed under this overlay
    deleted: bool = False  # a parsed chunk the owner deleted: a re-import does not bring it back
    position: float | None = None  # None: the source's own place
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. an FAQ entry's category

    @classmethod
    def of(cls, chunk: Chunk, origin: str = "parsed") -> Overlay:
        return cls(source=chunk, origin=origin)

    def with_(self, **changes: Any) -> Overlay:
        return dataclasses.replace(self, **changes)

    @property
    def chunk_id(self) -> str:
        return self.source.id

    @property
    def doc_id(self) -> str:
        return self.source.doc_id

    @property
    def edited(self) -> bool:
        return self.text is not None and self.text != self.source.text

    @property
    def effective(self) -> Chunk:
        """The chunk as search sees it."""
        if self.text is None or self.text == self.source.text:
            return self.source
        return dataclasses.replace(self.source, text=self.text)

    @property
    def source_hash(self) -> str:
        return content_hash(self.source.text)

    @property
    def place(self) -> float:
        return self.position if self.position is not None else chunk_position(self.source)

    @property
    def plain(self) -> bool:
        """Nothing the owner said: a parsed chunk exactly as imported (no overlay needed)."""
        return self == Overlay.of(self.source)

    def rows(self) -> list[Chunk]:
        """What the store holds for it: the chunk and its question rows (nothing when disabled)."""
        if not self.enabled or self.deleted:
            return []
        chunk = self.effective
        return [chunk, *question_rows(chunk, self.questions)]

    def row_ids(self) -> list[str]:
        return [self.chunk_id, *(question_id(self.chunk_id, i) for i in range(len(self.questions)))]

    def to_json(self) -> dict[str, Any]:
        s = self.source
        return {
            "source": {
                "id": s.id,
                "doc_id": s.doc_id,
                "text": s.text,
                "title": s.title,
                "parent_id": s.parent_id,
                "metadata": s.metadata,
            },
            "origin": self.origin,
            "text": self.text,
            "enabled": self.enabled,
            "questions": list(self.questions),
            "keywords": list(self.keywords),
            "stale": self.stale,
            "deleted": self.deleted,
            "position": self.position,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Overlay:
        return cls(
            source=Chunk(**data["source"]),
            origin=data.get("origin", "parsed"),
            text=data.get("text"),
            enabled=bool(data.get("enabled", True)),
            questions=tuple(data.get("questions") or ()),
            keywords=tuple(data.get("keywords") or ()),
            stale=bool(data.get("stale", False)),
            deleted=bool(data.get("deleted", False)),
            position=data.get("position"),
            extra=dict(data.get("extra") or {}),
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True, slots=True)
class ChunkView:
    """One chunk as its owners see it: the effective text and everything curation knows."""

    id: str
    doc_id: str
    text: str
    title: str
    origin: str
    enabled: bool
    questions: tuple[str, ...]
    keywords: tuple[str, ...]
    stale: bool
    edited: bool
    position: float
    hits: int
    source_text: str | None  # the imported text, when the owner edited it
    metadata: Mapping[str, Any]
    extra: Mapping[str, Any]  # what its adder kept with it (an FAQ entry's category)

    @classmethod
    def of(cls, chunk: Chunk, overlay: Overlay | None, hits: int = 0) -> ChunkView:
        o = overlay or Overlay.of(chunk)
        eff = o.effective
        return cls(
            id=eff.id,
            doc_id=eff.doc_id,
            text=eff.text,
            title=eff.title,
            origin=o.origin,
            enabled=o.enabled,
            questions=o.questions,
            keywords=o.keywords,
            stale=o.stale,
            edited=o.edited,
            position=o.place,
            hits=hits,
            source_text=o.source.text if o.edited else None,
            metadata=dict(eff.metadata),
            extra=dict(o.extra),
        )

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["questions"], out["keywords"] = list(self.questions), list(self.keywords)
        out["metadata"], out["extra"] = dict(self.metadata), dict(self.extra)
        return out


@dataclass(frozen=True, slots=True)
class Change:
    """One recorded change: who (the caller's key fingerprint), when, what, before and after.

    ``before``/``after`` map each chunk id the change touched to its overlay as JSON (None:
    no such chunk), or hold the word list / synonym groups of a dictionary or synonym change.
    """

    id: int
    at: float
    actor: str
    action: str
    target: str
    before: Any
    after: Any
    undone: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk to add by hand (``manual``) or as an FAQ entry (``faq``: its answer as text, its
    questions as question rows). ``chunk_id`` None: one is made (``<doc_id>#m<hex>``). No parent
    document is written for it: a parent search shows the chunks it matched in its place."""

    doc_id: str
    text: str
    questions: Sequence[str] = ()
    keywords: Sequence[str] = ()
    origin: str = "manual"
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    chunk_id: str | None = None
    parent_id: str | None = None  # None: the document (an FAQ entry may be its own parent)
    position: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
