"""One uploaded file into its KB: parse it, skip it when unchanged, store it searchable.

A file is parsed on its own (:func:`zhiwen.ingest.files.parse_one`), so a bad file fails alone
and leaves nothing in the KB. An unchanged file (same SHA-256 as the indexed one) is skipped; a
changed one replaces its chunks (the store's per-document upsert). A file is "indexed" once its
text is stored and BM25-searchable: its vectors fill in behind, in the process's background
filler (:mod:`zhiwen.kb.background`), so a big upload never holds the queue. The outcome is
written on the file's :class:`~zhiwen.uploads.model.JobFile` (status, type, pages, chunks, error).

Example::

    >>> entry = JobFile(name="通知.pdf")
    >>> with ocr_provider(settings) as engine:
    ...     index_file(kb, spool / "通知.pdf", entry, settings=settings, ocr="auto", engine=engine)
    >>> entry.status                       # indexed | skipped | failed
    'indexed'
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from zhiwen.config import Settings
from zhiwen.documents import Document
from zhiwen.errors import ZhiwenError
from zhiwen.ingest.files import FileResult, OcrProvider, document_chunks, parse_one, result_document
from zhiwen.ingest.limits import IngestLimits
from zhiwen.uploads.model import JobFile

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase


def index_file(
    kb: KnowledgeBase,
    path: Path,
    entry: JobFile,
    *,
    settings: Settings,
    ocr: str | None,
    engine: OcrProvider | None,
) -> None:
    """Parse ``path`` (the spooled file of ``entry``) and store it in ``kb``; ``entry`` says how
    it went. ``ocr``: the upload's choice, else ``ingest.ocr``."""
    start = time.perf_counter()
    entry.status = "parsing"

    def on_page(_: str, done: int, total: int) -> None:
        entry.pages_done = done  # GET /jobs/{id} shows the OCR's progress while it runs

    result = parse_one(
        path,
        entry.name,
        kind=None,
        limits=IngestLimits.from_settings(settings),
        ocr=ocr or settings.ingest.ocr,
        engine=engine,
        ocr_scale=settings.ingest.ocr_scale,
        on_page=on_page,
    )
    entry.type = result.kind
    if result.status != "ok" or result.parsed is None:
        entry.status, entry.error = "failed", result.error
    else:
        entry.pages, entry.ocr_pages = result.parsed.pages, result.parsed.ocr_pages
        _store(kb, result, entry, settings)
    entry.seconds = round(time.perf_counter() - start, 3)


def _store(kb: KnowledgeBase, result: FileResult, entry: JobFile, settings: Settings) -> None:
    doc = result_document(result, doc_id=entry.name)
    entry.doc_id = doc.id
    existing = kb.get_parents([doc.id])
    if existing and existing[0].metadata.get("file_sha256") == result.sha256:
        entry.status = "skipped"
        entry.chunks = existing[0].metadata.get("chunks")
        entry.error = "内容未变化，已跳过"
        return
    entry.status = "indexing"
    chunks = document_chunks(result, doc, kb.config.chunk_max_chars, settings.retrieval.chunk_overlap_chars)
    doc = Document(doc.id, doc.text, doc.title, {**doc.metadata, "chunks": len(chunks)})
    try:
        # lexical-first: searchable as soon as its text is stored; the process's
        # background filler embeds it behind (kb.info() shows the dense coverage)
        kb.index_documents([doc], chunks=chunks, prune=False, progress=False, dense="background")
    except ZhiwenError as exc:
        entry.status, entry.error = "failed", f"「{entry.name}」导入失败：{exc.message}"
        return
    entry.status, entry.chunks = "indexed", len(chunks)
