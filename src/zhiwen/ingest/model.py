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

from zhiwen.documents import Chunk, Document, chunk_id
from zhiwen.ingest.chunking import chunk_spans, section_at, spans_around
from zhiwen.ingest.normalize import ends_sentence, is_cjk, normalize_text, squeeze_blank_lines
from zhiwen.tables.chunks import ONE_ROW_UP_TO, RowChunk, row_chunks
from zhiwen.tables.model import Table

#: rows of a table the document's text shows (every row is its own chunk anyway)
PREVIEW_ROWS = 30

# a line that starts a new unit (article, item) never continues the previous page's sentence
_NEW_PARAGRAPH = re.compile(
    r"^(?:第[一二三四五六七八九十百千零〇\d]+[条章节款]|[（(][一二三四五六七八九十\d]+[）)])"
)


@dataclass(frozen=True, slots=True)
class TablePlace:
    """Where a table's markdown stands: ``blocks[block][1][start:end]``."""

    block: int
    start: int
    end: int
    table: Table


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
    # the tables, each with the index of the block that shows it (its first rows as markdown)
    tables: list[TablePlace] = field(default_factory=list)
    one_row_up_to: int = ONE_ROW_UP_TO  # tables longer than this pack rows into chunks
    heading: str = ""  # the document's own first heading (a page whose title is its site's)
    site_title: str = ""  # a web page's <title>, which the pages of one site may share

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

    def add_table(self, table: Table, page: int | None = None) -> None:
        """A table on its own (a sheet, a CSV): its rows count against the text budget (rows past
        it are dropped, with a warning), its first :data:`PREVIEW_ROWS` rows go into the text as
        a markdown table, and every row becomes a row chunk (:meth:`chunks`)."""
        if table.page is None:
            table.page = page
        preview = squeeze_blank_lines(normalize_text(table.markdown(PREVIEW_ROWS)))
        if self.text_budget is not None:
            left = self.text_budget - self.text_chars
            kept = _rows_within(table, left)
            if kept < len(table.rows):
                self.note_truncated()
                del table.rows[kept:]
            if not table.rows:
                return
            preview = preview[: max(0, left)]
            self.text_chars += sum(_row_cost(table, r) for r in table.rows)
        self.tables.append(TablePlace(len(self.blocks), 0, len(preview), table))
        self.blocks.append((page, preview))

    def add_with_tables(self, markdown: str, tables: list[Table], page: int | None = None) -> None:
        """Text that shows ``tables`` as markdown (each :meth:`Table.markdown` of
        :data:`PREVIEW_ROWS` rows, in order): added like :meth:`add`, each table found in it
        and kept as a table (a table the text budget cut off stays text)."""
        before = len(self.blocks)
        self.add(markdown, page)
        if len(self.blocks) == before:
            return
        block = len(self.blocks) - 1
        text = self.blocks[block][1]
        pos = 0
        for table in tables:
            snippet = squeeze_blank_lines(normalize_text(table.markdown(PREVIEW_ROWS))).strip()
            at = text.find(snippet, pos) if snippet else -1
            if at < 0:
                continue
            if table.page is None:
                table.page = page
            self.tables.append(TablePlace(block, at, at + len(snippet), table))
            pos = at + len(snippet)

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
        if self.tables:
            meta["tables"] = len(self.tables)
        return Document(id=doc_id, text=text, title=self.title or _stem(self.source), metadata=meta)

    def chunks(self, doc: Document, max_chars: int, overlap: int) -> list[Chunk]:
        """Header chunks of ``doc`` (made by :meth:`to_document`) with page provenance."""
        if self.tables:
            return self._table_chunks(doc, max_chars, overlap)
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
                    id=chunk_id(doc.id, i),
                    doc_id=doc.id,
                    text=doc.text[start:end],
                    title=doc.title,
                    parent_id=doc.id,
                    metadata=meta,
                )
            )
        return chunks

    def _table_chunks(self, doc: Document, max_chars: int, overlap: int) -> list[Chunk]:
        """Header chunks of the text around the tables, and the tables' row chunks in place."""
        _, starts, pages = self.text_and_pages()
        holes = [(starts[t.block] + t.start, starts[t.block] + t.end) for t in self.tables]
        pieces: list[tuple[int, int, Chunk | list[Chunk]]] = []
        for start, end, section in spans_around(doc.text, holes, max_chars, overlap):
            meta: dict[str, Any] = {**doc.metadata, "section": section}
            _set_pages(meta, starts, pages, start, end)
            pieces.append((start, 0, Chunk("", doc.id, doc.text[start:end], doc.title, doc.id, meta)))
        for n, place in enumerate(self.tables):
            table = place.table
            table.context = table.context or doc.title
            at = starts[place.block] + place.start
            base = _table_meta(doc, table, n, section_at(doc.text, at))
            _set_pages(base, starts, pages, at, at + 1)
            if table.page is not None:
                base["page"] = base["page_end"] = table.page
            rows = row_chunks(table, max_chars=max_chars, one_row_up_to=self.one_row_up_to)
            pieces.append((at, 1, [_row_chunk(doc, table, n, rc, base) for rc in rows]))
        chunks: list[Chunk] = []
        for _, _, piece in sorted(pieces, key=lambda p: (p[0], p[1])):
            group = piece if isinstance(piece, list) else [piece]
            first = len(chunks)
            for c in group:
                meta = {**c.metadata, "chunk_index": len(chunks)}
                meta.pop("pages", None)
                if "table" in meta:
                    meta["table_chunks"] = [first, first + len(group) - 1]
                chunks.append(Chunk(chunk_id(doc.id, len(chunks)), doc.id, c.text, doc.title, doc.id, meta))
        return chunks

    def _record_spans(self, starts: list[int], max_chars: int) -> list[tuple[int, int, str]]:
        spans: list[tuple[int, int, str]] = []
        for (_, text), start in zip(self.blocks, starts, strict=True):
            first = text.split("\n", 1)[0]
            section = first.lstrip("#").strip() if first.startswith("#") else ""
            for piece_start in range(0, len(text), max_chars):
                spans.append((start + piece_start, start + min(len(text), piece_start + max_chars), section))
        return spans


def _set_pages(
    meta: dict[str, Any], starts: list[int], pages: list[int | None], start: int, end: int
) -> None:
    first = _page_at(starts, pages, start)
    last = _page_at(starts, pages, max(start, end - 1))
    if first is not None:
        meta["page"] = first
        meta["page_end"] = last if last is not None and last >= first else first


def _row_cost(table: Table, row: list[str]) -> int:
    return sum(len(table.columns[i]) + len(v) + 2 for i, v in enumerate(row) if v and i < len(table.columns))


def _rows_within(table: Table, left: int) -> int:
    """How many of the table's rows fit in ``left`` characters."""
    used = 0
    for n, row in enumerate(table.rows):
        used += _row_cost(table, row)
        if used > left:
            return n
    return len(table.rows)


def _table_meta(doc: Document, table: Table, n: int, section: str) -> dict[str, Any]:
    """What every row chunk of a table says about the table (its id, names, size and key)."""
    meta: dict[str, Any] = {
        **doc.metadata,
        "section": section,
        "table": f"{doc.id}#t{n}",
        "table_title": table.label,
        "table_hash": table.fingerprint(),
        "table_rows": len(table.rows),
        "key_column": table.columns[table.key],
    }
    if table.sheet:
        meta["sheet"] = table.sheet
    return meta


def _row_chunk(doc: Document, table: Table, n: int, rc: RowChunk, base: dict[str, Any]) -> Chunk:
    """One row chunk with what a cell answer and the tables' catalogue read back from it."""
    meta: dict[str, Any] = {
        **base,
        "row": rc.first,
        "row_end": rc.last,
        "columns": [table.columns[i] for i in rc.cols],
        "types": [table.types[i] for i in rc.cols],
        "col_index": list(rc.cols),
        "cells": [list(r) for r in rc.cells],
    }
    return Chunk("", doc.id, rc.text, doc.title, doc.id, meta)


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
