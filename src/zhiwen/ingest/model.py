"""The one document model every file loader produces, and its chunks with provenance.

A loader turns a file into a :class:`ParsedFile`: markdown blocks, each tagged with the page (PDF
page, PPTX slide, XLSX sheet index; None for formats without pages). Markdown headings give the
section path, so header chunking, metadata and citations work alike for every format. Chunks
carry ``source`` (file name), ``page``/``page_end`` (where the chunk starts and ends) and
``section`` (the heading path).

Example::

    >>> parsed = ParsedFile(source="政策/通知.pdf", format="pdf", title="通知")
    >>> parsed.add("# 通知\\n\\n第一条 ……", page=1)
    >>> parsed.add("第二条 ……", page=2)
    >>> doc = parsed.to_document("政策/通知.pdf")
    >>> [(c.metadata["page"], c.metadata["page_end"]) for c in parsed.chunks(doc, 800, 80)]
    [(1, 2)]
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from zhiwen.documents import Chunk, Document
from zhiwen.ingest.chunking import chunk_spans
from zhiwen.ingest.normalize import ends_sentence, is_cjk, normalize_text, squeeze_blank_lines

# a line that starts a new unit (article, item) never continues the previous page's sentence
_NEW_PARAGRAPH = re.compile(
    r"^(?:第[一二三四五六七八九十百千零〇\d]+[条章节款]|[（(][一二三四五六七八九十\d]+[）)])"
)


@dataclass(slots=True)
class ParsedFile:
    """A file as markdown blocks with their pages, plus what the loader learned on the way."""

    source: str  # the path relative to the indexed root (the file name for an upload)
    format: str  # pdf | docx | pptx | xlsx | html | markdown | text | image
    title: str = ""
    blocks: list[tuple[int | None, str]] = field(default_factory=list)
    pages: int | None = None  # page / slide count where the format has pages
    ocr_pages: int = 0
    flow: bool = False  # text runs on across pages: a sentence cut by a page break is joined
    records: bool = False  # every block is its own chunk (a spreadsheet row), not header chunking
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # the most characters this file may yield (``ingest.max_text_chars``); None: no cap
    text_budget: int | None = None
    text_chars: int = 0  # characters kept so far
    truncated: bool = False  # text past the budget was dropped (and a warning says so)

    @property
    def full(self) -> bool:
        """The text budget is spent: a loader stops reading, later blocks would be dropped."""
        return self.text_budget is not None and self.text_chars >= self.text_budget

    def add(self, markdown: str, page: int | None = None) -> None:
        if self.text_budget is not None:
            left = self.text_budget - self.text_chars
            if left <= 0 or len(markdown) > left:
                self.note_truncated()
                markdown = markdown[: max(0, left)]  # cut before normalising: it never grows much
        text = squeeze_blank_lines(normalize_text(markdown))
        if self.text_budget is not None:
            text = text[: max(0, self.text_budget - self.text_chars)]
        if text:
            self.blocks.append((page, text))
            self.text_chars += len(text)

    def note_truncated(self) -> None:
        """Say once that text past the budget was dropped (a loader that stops early calls it)."""
        if not self.truncated:
            self.truncated = True
            self.warnings.append(
                f"「{self.source}」文字超过 {self.text_budget} 字符（ingest.max_text_chars），其余部分未导入"
            )

    @property
    def empty(self) -> bool:
        return not any(text.strip() for _, text in self.blocks)

    def text_and_pages(self) -> tuple[str, list[int], list[int | None]]:
        """The document text, the start offset of every block and each block's page."""
        out = ""
        starts: list[int] = []
        pages: list[int | None] = []
        for page, text in self.blocks:
            if out:
                out += self._separator(out, text)
            starts.append(len(out))
            pages.append(page)
            out += text
        return out, starts, pages

    def _separator(self, before: str, after: str) -> str:
        if not self.flow or ends_sentence(before) or after.startswith(("#", "|", "- ")):
            return "\n\n"
        if before.endswith("|") or _NEW_PARAGRAPH.match(after):
            return "\n\n"
        return "" if is_cjk(before[-1]) or is_cjk(after[0]) else " "

    def to_document(self, doc_id: str, extra: dict[str, Any] | None = None) -> Document:
        text, _, _ = self.text_and_pages()
        meta: dict[str, Any] = {
            **(extra or {}),
            **self.metadata,
            "source": self.source,
            "format": self.format,
        }
        if self.pages is not None:
            meta["pages"] = self.pages
        if self.ocr_pages:
            meta["ocr_pages"] = self.ocr_pages
        return Document(id=doc_id, text=text, title=self.title or _stem(self.source), metadata=meta)

    def chunks(self, doc: Document, max_chars: int, overlap: int) -> list[Chunk]:
        """Header chunks of ``doc`` (made by :meth:`to_document`) with page provenance."""
        _, starts, pages = self.text_and_pages()
        chunks: list[Chunk] = []
        spans = (
            self._record_spans(starts, max_chars)
            if self.records
            else chunk_spans(doc.text, max_chars, overlap)
        )
        for i, (start, end, section) in enumerate(spans):
            meta: dict[str, Any] = {**doc.metadata, "section": section, "chunk_index": i}
            meta.pop("pages", None)
            first = _page_at(starts, pages, start)
            last = _page_at(starts, pages, max(start, end - 1))
            if first is not None:
                meta["page"] = first
                meta["page_end"] = last if last is not None and last >= first else first
            chunks.append(
                Chunk(
                    id=f"{doc.id}#{i}",
                    doc_id=doc.id,
                    text=doc.text[start:end],
                    title=doc.title,
                    parent_id=doc.id,
                    metadata=meta,
                )
            )
        return chunks

    def _record_spans(self, starts: list[int], max_chars: int) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int, str]] = []
        for (_, text), start in zip(self.blocks, starts, strict=True):
            first = text.split("\n", 1)[0]
            section = first.lstrip("#").strip() if first.startswith("#") else ""
            for piece_start in range(0, len(text), max_chars):
                spans.append((start + piece_start, start + min(len(text), piece_start + max_chars), section))
        return spans


def _page_at(starts: list[int], pages: list[int | None], offset: int) -> int | None:
    if not starts:
        return None
    i = max(0, bisect.bisect_right(starts, offset) - 1)
    # a block without a page (a heading the loader added) takes the page of the next block
    for j in range(i, len(pages)):
        if pages[j] is not None:
            return pages[j]
    return None


def _stem(source: str) -> str:
    name = source.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name
