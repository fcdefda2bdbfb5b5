"""The owners' view of chunks and changes: one JSON shape for the API, the CLI and the web UI.

A chunk's ``state`` says what the owners made of it — ``original`` (as imported), ``edited``,
``added`` (by hand or as an FAQ entry) or ``source_changed`` (「原文已更新」: the source changed
under an edit; ``review`` is then true). ``updated_at``/``updated_by`` come from the chunk's
latest recorded change (None for a chunk nobody changed on its own).

Example::

    >>> chunk_out(kb, kb.curation.get_chunk("guide#1"))["state"]
    'original'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from zhiwen.curation import Change, ChunkView

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

ChunkState = Literal["original", "edited", "added", "source_changed"]

#: what each change action is called where owners read the log
ACTION_LABELS = {
    "edit": "修改文字",
    "enable": "启用",
    "disable": "停用",
    "delete": "删除",
    "add": "新增段落",
    "faq": "新增 FAQ",
    "questions": "设置问题",
    "keywords": "设置关键词",
    "update": "修改",
    "undo": "撤销",
    "dictionary": "修改词典",
    "synonyms": "修改同义词",
}


def chunk_state(view: ChunkView) -> ChunkState:
    if view.stale:
        return "source_changed"
    if view.origin != "parsed":
        return "added"
    return "edited" if view.edited else "original"


def chunk_out(kb: KnowledgeBase, view: ChunkView) -> dict[str, Any]:
    """One chunk as the owners' interfaces show it (the API's ``ChunkOut``)."""
    last = kb.curation.changes(limit=1, chunk_id=view.id)
    return {
        "id": view.id,
        "doc_id": view.doc_id,
        "title": view.title,
        "text": view.text,
        "enabled": view.enabled,
        "questions": list(view.questions),
        "keywords": list(view.keywords),
        "hits": view.hits,
        "state": chunk_state(view),
        "review": view.stale,
        "origin": view.origin,
        "position": view.position,
        "source_text": view.source_text,
        "updated_at": last[0].at if last else None,
        "updated_by": last[0].actor if last else None,
    }


def chunks_out(kb: KnowledgeBase, views: Sequence[ChunkView]) -> list[dict[str, Any]]:
    return [chunk_out(kb, v) for v in views]


def change_out(change: Change) -> dict[str, Any]:
    """One change of the log: who, when, what (``before``/``after`` as recorded)."""
    return {
        "id": change.id,
        "at": change.at,
        "actor": change.actor,
        "action": change.action,
        "label": ACTION_LABELS.get(change.action, change.action),
        "target": change.target,
        "undone": change.undone,
        "before": change.before,
        "after": change.after,
    }
