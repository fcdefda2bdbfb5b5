"""One sync of a KB: list each remembered source, re-read only what changed, drop what went.

For each source the documents are listed with a content hash (:mod:`zhiwen.sync.listing`) and
compared with what the last sync stored (:mod:`zhiwen.sync.state`): an unchanged document is not
read again, a changed or new one is parsed by the same file loaders as ``zhiwen index`` and
goes through :meth:`KnowledgeBase.index_documents` (``prune=False``: the other documents stay),
which keeps the owners' edits (:mod:`zhiwen.curation.reimport`) and embeds only passages whose
text is new; a document gone from its source is deleted. A source that cannot be listed (a
folder gone, a sitemap down) is an error and its documents are kept; so is a page or a file
that fails to fetch or parse.

The first sync of a KB indexed with ``zhiwen index FOLDER`` takes the hashes its documents
were stored with (``file_sha256``), so it re-reads nothing that did not change (a file deleted
between that index and the first sync stays: it cannot be told from an uploaded document).

Example::

    result = sync_kb(open_kb("manual"), on_progress=print)
    result.added, result.changed, result.removed, result.unchanged
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from filelock import FileLock, Timeout

from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError, KnowledgeBaseBusy
from zhiwen.ingest.files import FileResult, OcrProvider, file_documents, iter_files, ocr_provider, parse_one
from zhiwen.ingest.limits import IngestLimits
from zhiwen.kb.indexer import DenseMode
from zhiwen.sync.listing import Entry, http_client, list_source
from zhiwen.sync.sources import source_kind
from zhiwen.sync.state import Seen, SyncResult, SyncState

if TYPE_CHECKING:
    from zhiwen.kb.knowledge_base import KnowledgeBase

OnProgress = Callable[[str], None]
LOCK_FILE = "sync.lock"


@dataclass(slots=True)
class _Plan:
    """What the run found: documents to write, document ids to delete, the next state."""

    docs: list[Document] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Reader:
    """Parses one entry the way ``zhiwen index`` parses a file."""

    kb: KnowledgeBase
    engine: OcrProvider
    limits: IngestLimits
    workdir: Path

    def parse(self, entry: Entry) -> FileResult:
        settings = self.kb.settings
        common = {"limits": self.limits, "ocr": settings.ingest.ocr, "engine": self.engine}
        if entry.path is not None:
            return parse_one(entry.path, entry.name, kind=None, folder=True, **common)  # type: ignore[arg-type]
        page = self.workdir / "page"
        page.write_bytes(entry.content or b"")
        kind = "html" if "html" in entry.content_type.lower() else None
        return parse_one(page, entry.name, kind=kind, **common)  # type: ignore[arg-type]

    def documents(self, result: FileResult) -> tuple[list[Document], list[Chunk]]:
        """As ``zhiwen index`` makes them (the same ids and metadata: either may follow the other
        without rewriting a passage)."""
        return file_documents(
            [result],
            max_chars=self.kb.config.chunk_max_chars,
            overlap=self.kb.settings.retrieval.chunk_overlap_chars,
        )


@contextmanager
def sync_lock(kb: KnowledgeBase) -> Iterator[None]:
    """One sync of a KB at a time, across processes (``zhiwen sync`` beside ``zhiwen serve``)."""
    lock = FileLock(str(Path(kb.path) / LOCK_FILE))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise KnowledgeBaseBusy(
            f"a sync of {kb.name} is running", message=f"知识库「{kb.name}」正在同步，请稍后再试"
        ) from None
    try:
        yield
    finally:
        lock.release()


def sync_kb(
    kb: KnowledgeBase,
    *,
    dry_run: bool = False,
    dense: DenseMode = "foreground",
    on_progress: OnProgress | None = None,
) -> SyncResult:
    """Sync every source of ``kb`` (see the module docstring); ``dry_run`` only counts."""
    say = on_progress or (lambda _message: None)
    start = time.perf_counter()
    result = SyncResult(dry_run=dry_run)
    with sync_lock(kb):
        state = SyncState.load(Path(kb.path))
        _seed_from_store(kb, state)
        plan = _Plan()
        with (
            http_client() as client,
            ocr_provider(kb.settings) as engine,
            tempfile.TemporaryDirectory() as tmp,
        ):
            reader = _Reader(kb, engine, IngestLimits.from_settings(kb.settings), Path(tmp))
            for source in kb.config.sources:
                say(f"读取来源 {source}")
                _sync_source(source, state, plan, result, reader, client, dry_run, say)
        if not dry_run:
            _apply(kb, plan, result, dense, say)
        result.seconds = time.perf_counter() - start
        if not dry_run:
            state.sources = {s: state.sources.get(s, {}) for s in kb.config.sources}
            state.last = result
            state.save(Path(kb.path))
    return result


def _seed_from_store(kb: KnowledgeBase, state: SyncState) -> None:
    """A KB never synced: its first folder source's documents, as ``zhiwen index`` stored them.

    Only the files the folder still holds are taken: a stored document that is not there may
    have come another way (an upload through the web UI), and a first sync must not delete it.
    """
    folders = [s for s in kb.config.sources if source_kind(s) == "folder"]
    if state.sources or not folders or kb.store.count() == 0 or not Path(folders[0]).exists():
        return
    present = {name for _, name in iter_files(Path(folders[0]))}
    seen: dict[str, Seen] = {}
    for parent in kb.get_parents(sorted(kb.store.doc_ids())):
        md = parent.metadata
        name, digest = md.get("source"), md.get("file_sha256")
        if isinstance(name, str) and isinstance(digest, str) and name in present:
            seen[name] = Seen(digest, parent.id)
    state.sources[folders[0]] = seen


def _sync_source(
    source: str,
    state: SyncState,
    plan: _Plan,
    result: SyncResult,
    reader: _Reader,
    client: httpx.Client,
    dry_run: bool,
    say: OnProgress,
) -> None:
    before = state.sources.get(source, {})
    after: dict[str, Seen] = {}
    try:
        for entry in list_source(source, client):
            old = before.get(entry.name)
            if entry.error is not None or (old is not None and old.hash == entry.hash):
                if entry.error is not None:
                    result.errors.append(entry.error)
                else:
                    result.unchanged += 1
                if old is not None:
                    after[entry.name] = old
                continue
            if dry_run:
                _count(result, old)
                after[entry.name] = old or Seen(entry.hash, entry.name)
                continue
            say(f"解析 {entry.name}")
            seen = _read(entry, old, plan, result, reader)
            if seen is not None:
                after[entry.name] = seen
    except IngestError as exc:  # the source itself is gone or unreadable: keep its documents
        result.errors.append(exc.message)
        return
    gone = [seen.doc_id for name, seen in before.items() if name not in after]
    result.removed += len(gone)
    plan.deleted.extend(gone)
    state.sources[source] = after


def _count(result: SyncResult, old: Seen | None) -> None:
    if old is None:
        result.added += 1
    else:
        result.changed += 1


def _read(entry: Entry, old: Seen | None, plan: _Plan, result: SyncResult, reader: _Reader) -> Seen | None:
    """Parse a new or changed entry into the plan; None when it yields nothing (it goes)."""
    parsed = reader.parse(entry)
    result.parsed += 1
    if parsed.status != "ok":
        if parsed.status == "failed":
            result.errors.append(parsed.error or entry.name)
        return old if parsed.status == "failed" else None  # a failed read keeps what the KB has
    docs, chunks = reader.documents(parsed)
    if not docs:
        return None
    _count(result, old)
    if old is not None and old.doc_id != docs[0].id:
        plan.deleted.append(old.doc_id)
    plan.docs.extend(docs)
    plan.chunks.extend(chunks)
    return Seen(entry.hash, docs[0].id)


def _apply(kb: KnowledgeBase, plan: _Plan, result: SyncResult, dense: DenseMode, say: OnProgress) -> None:
    if plan.docs:
        say(f"写入 {len(plan.docs)} 篇文档")
        report = kb.index_documents(plan.docs, chunks=plan.chunks, prune=False, progress=False, dense=dense)
        result.embedded = report.embedded
        result.chunks = report.chunks
    if plan.deleted:
        say(f"删除 {len(plan.deleted)} 篇文档")
        kb.delete_documents(sorted(set(plan.deleted)))
