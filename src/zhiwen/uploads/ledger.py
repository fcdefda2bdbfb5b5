"""The document list of a KB: the store's documents merged with the ledger of uploads.

The store is the record of indexed documents; the ledger ``<kb>/documents.json`` keeps what the
store cannot: each uploaded file's last status (「processing」 while its job will still run,
「failed」 with the Chinese reason), so the list shows failed uploads next to indexed documents.
A 「processing」 entry whose job no longer runs is shown as failed (:func:`interrupted_reason`).

Example::

    >>> ledger = DocumentLedger(kb.path)
    >>> ledger.update("通知.pdf", {"doc_id": "通知.pdf", "status": "processing", "job_id": "3f2a"})
    >>> [e.status for e in listing(stored_documents(kb), ledger.read(), live={"3f2a"})]
    ['processing']
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from zhiwen.fsutil import atomic_write_text
from zhiwen.versions import check_document, current

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

LEDGER_NAME = "documents.json"


class DocumentEntry(BaseModel):
    """One row of a KB's document list."""

    doc_id: str
    source: str | None = None
    title: str = ""
    type: str | None = None
    pages: int | None = None
    chunks: int | None = None
    status: Literal["indexed", "failed", "processing"] = "indexed"
    error: str | None = None
    bytes: int | None = None
    updated_at: float | None = None
    job_id: str | None = None


def interrupted_reason(name: str) -> str:
    return f"「{name}」导入中断：处理它的导入任务已不在运行（服务曾重启），请重新上传"


class DocumentLedger:
    """``<kb dir>/documents.json``: the last upload status of each file (failed ones included)."""

    _lock = threading.Lock()  # one per process: every ledger is written under it

    def __init__(self, kb_dir: Path) -> None:
        self.path = kb_dir / LEDGER_NAME

    def read(self) -> dict[str, dict[str, Any]]:
        """The entries by document id; a ledger of an older layout is migrated (zhiwen.versions)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        documents = check_document(data, "upload-ledger", self.path).get("documents")
        return documents if isinstance(documents, dict) else {}

    def update(self, doc_id: str, entry: dict[str, Any] | None, *, create: bool = True) -> None:
        """Set (or with None drop) one entry; ``create=False`` never makes the KB's folder again
        (a job's late write must not resurrect a deleted KB)."""
        with self._lock:
            if not create and not self.path.parent.is_dir():
                return
            data = self.read()
            if entry is None:
                data.pop(doc_id, None)
            else:
                data[doc_id] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write(data)

    def fail_orphans(self, live_jobs: set[str]) -> int:
        """Entries 「processing」 whose job is not live → failed with the reason; how many."""
        with self._lock:
            data = self.read()
            stale = [doc_id for doc_id, raw in data.items() if _orphaned(raw, live_jobs)]
            for doc_id in stale:
                data[doc_id] = _interrupted(doc_id, data[doc_id])
            if stale:
                self._write(data)
            return len(stale)

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        versioned = {"format_version": current("upload-ledger"), "documents": data}
        atomic_write_text(self.path, json.dumps(versioned, ensure_ascii=False, indent=1))


def nest_documents(data: dict[str, Any]) -> dict[str, Any]:
    """Migration to layout 1: the entries, kept at the top level before, under ``documents``."""
    return {"documents": {k: v for k, v in data.items() if k != "format_version"}}


def _orphaned(raw: dict[str, Any], live_jobs: set[str]) -> bool:
    return raw.get("status") == "processing" and raw.get("job_id") not in live_jobs


def _interrupted(doc_id: str, raw: dict[str, Any]) -> dict[str, Any]:
    return {**raw, "status": "failed", "error": interrupted_reason(doc_id)}


def has_processing(ledger: dict[str, dict[str, Any]]) -> bool:
    return any(raw.get("status") == "processing" for raw in ledger.values())


def stored_documents(kb: KnowledgeBase) -> dict[str, DocumentEntry]:
    """The KB's indexed documents, by id, as list entries (type, pages, chunks, bytes)."""
    entries: dict[str, DocumentEntry] = {}
    for doc in kb.get_parents(sorted(kb.store.doc_ids())):
        meta = doc.metadata
        source = meta.get("source")
        entries[doc.id] = DocumentEntry(
            doc_id=doc.id,
            source=source,
            title=doc.title,
            type=meta.get("format") or _extension(source),
            pages=meta.get("pages"),
            chunks=meta.get("chunks"),
            bytes=meta.get("bytes"),
        )
    return entries


def _extension(source: Any) -> str | None:
    text = str(source) if source else ""
    return text.rsplit(".", 1)[-1].lower() if "." in text else None


def listing(
    stored: dict[str, DocumentEntry], ledger: dict[str, dict[str, Any]], live: set[str]
) -> list[DocumentEntry]:
    """Stored documents and ledger entries, sorted by id. A failed re-upload of a stored document
    leaves it 「indexed」 (that version still answers); 「processing」 holds only while its job is
    in ``live``."""
    entries = dict(stored)
    for doc_id, raw in ledger.items():
        if _orphaned(raw, live):
            raw = _interrupted(doc_id, raw)
        if doc_id in entries:
            if raw.get("status") != "failed":
                entries[doc_id].status = raw.get("status", "indexed")
            continue
        entries[doc_id] = DocumentEntry.model_validate(raw)
    return sorted(entries.values(), key=lambda e: e.doc_id)
