"""Ingest: turn a path into a :class:`~zhiwen.ingest.base.Corpus`.

| format | input | chunks |
|--------|-------|--------|
| ``markdown`` | a directory of ``.md`` files (recursive) or one file | header chunking by the KB |
| ``beir`` | a BEIR dataset directory (``corpus.jsonl``) | one per passage |
| ``csv`` | ``.csv``/``.tsv`` file or directory, with a field mapping | one per row |
| ``json`` / ``jsonl`` | ``.json`` (list of objects) or ``.jsonl``, with a field mapping | one per record |
| ``documents`` | any folder of PDF/DOCX/PPTX/XLSX/HTML/text/images, typed by content | with pages |
| ``pdf`` ``docx`` ``pptx`` ``xlsx`` ``html`` ``text`` ``image`` | the same, one forced loader | same |

Every failure is a single :class:`~zhiwen.errors.IngestError` with a Chinese message and the
file (and line) in its detail.

Example::

    >>> from zhiwen.ingest import load_corpus, chunk_documents
    >>> corpus = load_corpus(Path("docs"), "markdown")
    >>> chunks = corpus.chunks or chunk_documents(corpus.documents)
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from zhiwen.documents import Chunk
from zhiwen.errors import IngestError
from zhiwen.ingest.base import Corpus
from zhiwen.ingest.beir import load_beir, load_beir_qrels, load_beir_queries
from zhiwen.ingest.chunking import chunk_documents, chunk_markdown, split_text
from zhiwen.ingest.files import FORCED_KINDS, FileResult, file_documents, load_files
from zhiwen.ingest.markdown import ENRICHERS, load_markdown
from zhiwen.ingest.records import load_records

__all__ = [
    "ENRICHERS",
    "FORMATS",
    "Corpus",
    "FileResult",
    "chunk_documents",
    "chunk_markdown",
    "corpus_chunks",
    "load_beir",
    "load_beir_qrels",
    "load_beir_queries",
    "load_corpus",
    "load_documents",
    "load_files",
    "load_markdown",
    "load_records",
    "sample_kb_path",
    "split_text",
]

Loader = Callable[..., Corpus]


def load_documents(path: Path, *, fmt: str = "documents", ocr: str | None = None, **_: Any) -> Corpus:
    """Every document file under ``path`` (see :mod:`zhiwen.ingest.files`); failed files become
    warnings, and only when none could be read does it raise."""
    from zhiwen.config import get_settings
    from zhiwen.ingest._io import empty_corpus

    settings = get_settings()
    results = load_files(path, fmt=fmt, ocr=ocr, settings=settings)
    docs, chunks = file_documents(
        results, max_chars=settings.retrieval.chunk_max_chars, overlap=settings.retrieval.chunk_overlap_chars
    )
    failed = [r.error or r.source for r in results if r.status == "failed"]
    if not docs:
        if failed:
            raise IngestError(f"no readable documents in {path}", message=f"导入失败：{failed[0]}")
        raise empty_corpus(Path(path), "no document files")
    warnings = failed + [w for r in results for w in r.warnings]
    return Corpus(documents=docs, chunks=chunks, warnings=warnings)


FORMATS: dict[str, Loader] = {
    "markdown": load_markdown,
    "md": load_markdown,
    "beir": load_beir,
    "csv": lambda path, **kw: load_records(path, "csv", **kw),
    "json": lambda path, **kw: load_records(path, "json", **kw),
    "jsonl": lambda path, **kw: load_records(path, "json", **kw),
    "documents": load_documents,
    **{kind: (lambda path, _k=kind, **kw: load_documents(path, fmt=_k, **kw)) for kind in FORCED_KINDS},
}
_PUBLIC_FORMATS = ("markdown", "beir", "csv", "json", "jsonl", "documents", *FORCED_KINDS)


def load_corpus(path: Path | str, fmt: str = "markdown", **options: Any) -> Corpus:
    """Load ``path`` with the loader for ``fmt``; ``options`` go to that loader."""
    key = (fmt or "").strip().lower()
    loader = FORMATS.get(key)
    if loader is None:
        raise IngestError(
            f"unknown format {fmt!r}; known formats: {', '.join(_PUBLIC_FORMATS)}",
            message=f"导入失败：未知的格式「{fmt}」，支持：{'、'.join(_PUBLIC_FORMATS)}",
        )
    try:
        return loader(Path(path), **options)
    except TypeError as exc:
        # an option the loader does not take (e.g. id_field for markdown)
        if "unexpected keyword argument" in str(exc):
            raise IngestError(
                f"format {key!r}: {exc}", message=f"导入失败：格式「{key}」不支持该选项：{exc}"
            ) from exc
        raise


def corpus_chunks(corpus: Corpus, max_chars: int | None = None, overlap: int | None = None) -> list[Chunk]:
    """The corpus's own chunks, or header chunks of its documents when it has none."""
    if corpus.chunks is not None:
        return corpus.chunks
    return chunk_documents(corpus.documents, max_chars, overlap)


def sample_kb_path() -> Path:
    """Directory of the packaged sample knowledge base (zhiwen's own Chinese user manual)."""
    return Path(str(resources.files("zhiwen").joinpath("sample_kb")))
