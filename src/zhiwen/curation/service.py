"""A knowledge base's curation: its chunks in the owners' hands, every change recorded and undoable.

:class:`Curation` is what ``kb.curation`` is. Every change — edit a chunk's text, disable or
enable it, delete it, add one (by hand, or an FAQ entry: a chunk with questions), give it
questions or keywords, undo — runs the same way, under the KB's writer lock:

1. the overlays before and after (:class:`~zhiwen.curation.model.Overlay`);
2. one transaction in ``curation.sqlite``: the overlays and the change log entry (who — the
   caller's key fingerprint —, when, before, after);
3. inside it, one chunk-level store write (:mod:`zhiwen.curation.sync`): the chunk with its
   effective text, re-tokenized and — only when its text is new — re-embedded, its question
   rows, its document's curated parent; a failing store write rolls the log back;
4. one revision bump: answer caches drop what they knew, other processes reopen the KB.

So a change is searchable when the call returns, on every backend. Reads — a document's chunks
in order (disabled ones in their place), a search over them, one chunk — live in
:mod:`zhiwen.curation.reads`; the dictionary and synonyms in :mod:`zhiwen.curation.words`.

Example::

    view = kb.curation.update("manual#3", text="新的段落内容", actor=fingerprint)
    kb.curation.update("manual#3", enabled=False, actor=fingerprint)     # gone from every search
    kb.curation.update("manual#3", questions=["怎么退货", "退货流程"], actor=fingerprint)
    kb.curation.add(NewChunk(doc_id="faq", text="七天内可退货。", questions=["能退货吗"], origin="faq"),
                    actor=fingerprint)
    kb.curation.undo(actor=fingerprint)                                  # the last change, undone
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from zhiwen.curation import checks
from zhiwen.curation.db import CurationDB
from zhiwen.curation.lexicon import Lexicon
from zhiwen.curation.model import Change, ChunkView, NewChunk, Overlay, question_target
from zhiwen.curation.reads import CurationReads
from zhiwen.curation.reimport import CuratedBatch, commit_batch, curate_batch, prune_plan
from zhiwen.curation.sync import CurationHost, Pair, plan_write
from zhiwen.curation.words import CurationWords
from zhiwen.documents import Chunk, Document
from zhiwen.errors import InvalidParameter, NotFound

#: the actions of :meth:`Curation.update`, by the one field changed
_ACTIONS = {"text": "edit", "questions": "questions", "keywords": "keywords"}


class Curation(CurationReads, CurationWords):
    """The curation of one KB (see the module docstring); thread-safe."""

    def __init__(self, host: CurationHost) -> None:
        self.host = host
        self.db = CurationDB(host.path)
        self.has_questions = False
        self._hits: Counter[str] = Counter()
        self._hits_lock = threading.Lock()
        self._hits_at = time.monotonic()
        self._retokenizer: threading.Thread | None = None
        self._retokenize_lock = threading.Lock()
        self._stop = threading.Event()
        self._again = threading.Event()
        self.reload()

    def reload(self) -> None:
        """Take the words, synonyms, keywords and question flag from ``curation.sqlite``."""
        if not self.db.exists():
            return
        self.host.tokenizer.use(Lexicon.build(self.db.words(), self.db.groups(), self.db.keywords()))
        self.has_questions = self.db.has_questions()

    # -- chunk changes ----------------------------------------------------------------------
    def update(
        self,
        chunk_id: str,
        *,
        actor: str,
        text: str | None = None,
        enabled: bool | None = None,
        questions: Sequence[str] | None = None,
        keywords: Sequence[str] | None = None,
    ) -> ChunkView:
        """Change any of a chunk's text, state, questions and keywords, as one recorded change.

        An edit keeps the imported text (a re-import that did not change it keeps the edit) and
        clears 「原文已更新」; editing back to the imported text is no edit.
        """
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = checks.check_text(text)
        if enabled is not None:
            if not isinstance(enabled, bool):
                raise InvalidParameter("enabled must be a boolean", message="enabled 应为 true 或 false")
            changes["enabled"] = enabled
        if questions is not None:
            changes["questions"] = checks.clean_questions(questions)
        if keywords is not None:
            changes["keywords"] = checks.clean_keywords(keywords)
        if not changes:
            raise InvalidParameter(
                "nothing to change", message="没有要修改的内容（text、enabled、questions、keywords）"
            )
        with self.host.writing():
            before = self._current(chunk_id)
            after = before.with_(**changes)
            if "text" in changes:
                after = after.with_(text=None if text == before.source.text else text, stale=False)
            if after != before:
                self._commit(_action(changes), actor, chunk_id, [(before, after)])
        return self.get_chunk(chunk_id)

    def delete(self, chunk_id: str, *, actor: str) -> None:
        """Delete a chunk: one added by hand or as an FAQ entry is gone; an imported one stays
        deleted across re-imports while its source paragraph is unchanged (undo brings it back)."""
        self.delete_many([chunk_id], actor=actor)

    def delete_many(self, chunk_ids: Sequence[str], *, actor: str) -> int:
        """Delete chunks (see :meth:`delete`) as one recorded change; 404 when one is unknown."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return 0
        with self.host.writing():
            befores = [self._current(cid) for cid in ids]
            pairs: list[Pair] = [
                (b, b.with_(deleted=True) if b.origin == "parsed" else None) for b in befores
            ]
            self._commit("delete", actor, ids[0] if len(ids) == 1 else f"{len(ids)} chunks", pairs)
        return len(ids)

    def add(self, new: NewChunk, *, actor: str) -> ChunkView:
        """Add one chunk to a document (see :meth:`add_many`)."""
        return self.add_many([new], actor=actor)[0]

    def add_many(self, items: Sequence[NewChunk], *, actor: str, action: str = "add") -> list[ChunkView]:
        """Add chunks (by hand, or FAQ entries with their questions) as one recorded change.

        A chunk id the KB already has is refused (edit it instead); nothing is added then.
        """
        overlays = [_overlay_of(item) for item in items]
        ids = [o.chunk_id for o in overlays]
        if len(set(ids)) != len(ids):
            raise InvalidParameter("duplicate chunk ids", message="新增段落的 ID 重复")
        with self.host.writing():
            taken = {c.id for c in self.host.store.get_chunks(ids)} | set(self.db.overlays(ids))
            if taken:
                first = sorted(taken)[0]
                raise InvalidParameter(
                    f"chunk {first!r} exists", message=f"段落已存在：{first}", data={"id": first}
                )
            target = ids[0] if len(ids) == 1 else f"{len(ids)} chunks"
            self._commit(action, actor, target, [(None, o) for o in overlays])
        return self.views(ids)

    def undo(self, change_id: int | None = None, *, actor: str) -> Change:
        """Undo change ``change_id`` (default: the latest not yet undone): what it touched goes back
        to how it was before. Refused when a later change touched the same chunk since."""
        with self.host.writing():
            change = self.db.change(change_id)
            if change is None:
                raise NotFound(f"no change {change_id}", message="没有可撤销的修改")
            if change.undone:
                raise InvalidParameter(
                    f"change {change.id} already undone", message=f"修改 #{change.id} 已撤销过"
                )
            if change.action in ("dictionary", "synonyms"):
                return self._undo_words(change, actor)
            pairs = self._undo_pairs(change)
            return self._commit("undo", actor, change.target, pairs, undoes=change.id)

    def _undo_pairs(self, change: Change) -> list[Pair]:
        now = self.db.overlays(list(change.after))
        pairs: list[Pair] = []
        for cid, after_json in change.after.items():
            current = now.get(cid)
            after = Overlay.from_json(after_json) if after_json is not None else None
            if after is not None and current is None and after.plain:
                current = after  # a plain overlay is not stored
            if current != after:
                raise InvalidParameter(
                    f"chunk {cid} changed since change {change.id}",
                    message=f"段落 {cid} 在这次修改之后又被修改过，请先撤销后面的修改",
                )
            before_json = change.before.get(cid)
            pairs.append((current, Overlay.from_json(before_json) if before_json is not None else None))
        return pairs

    def _undo_words(self, change: Change, actor: str) -> Change:
        return self.restore(change, actor)

    # -- the one write path -----------------------------------------------------------------
    def _current(self, chunk_id: str) -> Overlay:
        """The chunk's overlay (a plain one for an imported chunk nobody curated); 404 if none."""
        if isinstance(chunk_id, str) and question_target(chunk_id) is None:
            found = self.db.overlays([chunk_id]).get(chunk_id)
            if found is not None:
                if found.deleted:
                    raise _not_found(chunk_id)
                return found
            chunks = self.host.store.get_chunks([chunk_id])
            if chunks:
                return Overlay.of(chunks[0])
        raise _not_found(chunk_id)

    def _commit(
        self, action: str, actor: str, target: str, pairs: Sequence[Pair], undoes: int | None = None
    ) -> Change:
        """Overlays + log in one curation transaction around one store write, then the revision."""
        write = plan_write(self.host, self.db, pairs)
        before = {_id(b, a): None if b is None else b.to_json() for b, a in pairs}
        after = {_id(b, a): None if a is None else a.to_json() for b, a in pairs}
        with self.host.changing(), self.db.transaction() as tx:
            for b, a in pairs:
                if a is None:
                    tx.drop_overlays([_id(b, a)])
                else:
                    tx.put_overlay(a, vector=write.kept.get(a.chunk_id))
            if write.originals:
                tx.put_parents(write.originals)
            change_id = tx.log(action, actor, target, before, after)
            if undoes is not None:
                tx.mark_undone(undoes)
            write.apply(self.host.store)
        self.host.bump_revision()
        self._after(pairs)
        return self.db.change(change_id) or Change(change_id, 0.0, actor, action, target, before, after)

    def _after(self, pairs: Sequence[Pair]) -> None:
        """This process's tokenizer and search view follow the change."""
        keywords = {_id(b, a): a.keywords if a is not None else () for b, a in pairs}
        self.host.tokenizer.use(self.host.tokenizer.lexicon.with_keywords(keywords))
        if any(a is not None and a.questions for _, a in pairs):
            self.has_questions = True

    # -- imports (the KB's indexing calls these) --------------------------------------------
    @contextlib.contextmanager
    def importing(
        self, docs: list[Document], chunks: list[Chunk], *, wait: bool = True
    ) -> Iterator[CuratedBatch]:
        """An import of ``docs``/``chunks`` as the store must hold it (:mod:`zhiwen.curation.reimport`).

        For a curated KB the whole block holds the KB's writer lock, so no curation change lands
        between reading the overlays and writing the batch; the overlays an import moved or
        marked stale are recorded when the block ends without an error.
        """
        if not self.db.exists():
            yield CuratedBatch(docs, chunks)
            return
        with self.host.writing(wait=wait):
            batch = curate_batch(self.db, docs, chunks)
            self.host.tokenizer.use(self.host.tokenizer.lexicon.with_keywords(batch.keywords))
            yield batch
            commit_batch(self.db, batch)
            if any(o.questions for o in batch.overlays):
                self.has_questions = True

    def rows_outside(self, doc_ids: set[str]) -> int:
        """Store rows of chunks added by hand or as FAQ entries to documents not in ``doc_ids``
        (what a full re-sync of those documents leaves alone)."""
        if not self.db.exists():
            return 0
        return sum(n for doc_id, n in self.db.added_rows().items() if doc_id not in doc_ids)

    def pruning(self, stale_docs: Sequence[str]) -> tuple[list[str], list[str]]:
        """Documents a re-sync no longer has: (delete whole, chunk ids to delete) — documents
        holding hand-made or FAQ chunks lose only their parsed chunks."""
        return prune_plan(self.db, self.host.store, stale_docs)

    def forget(self, *, doc_ids: Sequence[str] = (), chunk_ids: Sequence[str] = ()) -> None:
        """Deleted documents and chunks take their overlays with them."""
        if (doc_ids or chunk_ids) and self.db.exists():
            with self.db.transaction() as tx:
                tx.drop_documents(list(doc_ids))
                tx.drop_overlays(list(chunk_ids))

    def close(self) -> None:
        self.stop()
        self.flush_hits()
        self.db.close()


def _action(changes: Mapping[str, Any]) -> str:
    if len(changes) > 1:
        return "update"
    (field,) = changes
    if field == "enabled":
        return "enable" if changes[field] else "disable"
    return _ACTIONS[field]


def _id(before: Overlay | None, after: Overlay | None) -> str:
    either = after if after is not None else before
    assert either is not None
    return either.chunk_id


def _not_found(chunk_id: object) -> NotFound:
    return NotFound(f"no chunk {chunk_id!r}", message=f"段落不存在：{chunk_id}", data={"id": str(chunk_id)})


def _overlay_of(item: NewChunk) -> Overlay:
    if not isinstance(item, NewChunk):
        raise InvalidParameter("not a NewChunk", message="新增段落格式错误")
    if not isinstance(item.doc_id, str) or not item.doc_id.strip():
        raise InvalidParameter("empty doc_id", message="请指定段落所属的文档（doc_id）")
    cid = item.chunk_id or f"{item.doc_id}#m{uuid.uuid4().hex[:12]}"
    if question_target(cid) is not None:
        raise InvalidParameter(f"reserved chunk id {cid!r}", message=f"段落 ID 不能以 ::q<数字> 结尾：{cid}")
    chunk = Chunk(
        id=cid,
        doc_id=item.doc_id,
        text=checks.check_text(item.text),
        title=item.title,
        parent_id=item.parent_id or item.doc_id,
        metadata=dict(item.metadata),
    )
    return Overlay(
        source=chunk,
        origin=checks.check_origin(item.origin),
        questions=checks.clean_questions(item.questions),
        keywords=checks.clean_keywords(item.keywords),
        position=item.position,
        extra=dict(item.extra),
    )
