"""Markdown-header parent/child chunking with a size cap.

Every ``#``, ``##`` and ``###`` section becomes a chunk whose parent is the document
(``parent_id == doc_id``). Chunks inherit the document's metadata and add ``section`` (the header
path, e.g. ``创建知识库 > 操作``) and ``chunk_index``; ids are ``f"{doc_id}#{i}"``. A section
with only its header line is merged into the next one, so ``## 操作`` directly followed by
``### 简易版本`` yields one chunk with section ``… > 操作 > 简易版本``. Sections longer than
``max_chars`` are split on paragraph, line, then sentence boundaries (Chinese 。！？ too) with
``overlap`` characters repeated between consecutive pieces; no chunk exceeds ``max_chars``.
Headers inside fenced code blocks are ignored.

Example::

    >>> text = "# 创建知识库\\n简介\\n## 操作\\n### 简易版本\\n- 炒"
    >>> doc = Document(id="d", text=text, title="创建知识库")
    >>> [c.metadata["section"] for c in chunk_markdown(doc, max_chars=800, overlap=80)]
    ['创建知识库', '创建知识库 > 操作 > 简易版本']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from zhiwen.documents import Chunk, Document

_HEADER = re.compile(r"^(#{1,3})[ \t]+(.+?)[ \t]*#*[ \t]*$")
# separators from coarse to fine; the sentence level keeps the end mark with its sentence
_SEPARATORS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n[ \t]*\n"),
    re.compile(r"\n"),
    re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)"),
    re.compile(r"(?<=[，,、：:])|(?<=\s)"),
)
# where an overlap may start, strongest first: after a line or sentence end, then a clause
_BOUNDARIES = (re.compile(r"[\n。！？!?；;]"), re.compile(r"[，,、：:\s]"))


@dataclass(slots=True)
class Section:
    path: list[str]
    text: str  # the header line (if any) and body, exactly as in the document
    start: int  # character offset of ``text`` in the document


def split_sections(text: str) -> list[Section]:
    """Split markdown into header sections (levels 1-3); concatenated ``text`` equals the input."""
    sections: list[Section] = []
    stack: dict[int, str] = {}
    cur_path: list[str] = []
    cur_start = 0
    pos = 0
    in_fence = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence:
            m = _HEADER.match(line.rstrip("\r\n"))
            if m:
                if pos > cur_start:
                    sections.append(Section(cur_path, text[cur_start:pos], cur_start))
                level = len(m.group(1))
                stack = {lv: t for lv, t in stack.items() if lv < level}
                stack[level] = m.group(2).strip()
                cur_path = [stack[lv] for lv in sorted(stack)]
                cur_start = pos
        pos += len(line)
    if pos > cur_start or not sections:
        sections.append(Section(cur_path, text[cur_start:pos], cur_start))
    return sections


def _header_only(section: Section) -> bool:
    lines = section.text.strip().splitlines()
    return bool(section.path) and len(lines) <= 1 and bool(lines) and bool(_HEADER.match(lines[0]))


def merge_header_only(sections: list[Section]) -> list[Section]:
    """Merge sections that hold only their header line into the following section."""
    out: list[Section] = []
    pending: Section | None = None
    for sec in sections:
        if pending is not None:
            sec = Section(sec.path, pending.text + sec.text, pending.start)
            pending = None
        if _header_only(sec) or not sec.text.strip():
            pending = sec
            continue
        out.append(sec)
    if pending is not None:
        if out:
            last = out[-1]
            out[-1] = Section(last.path, last.text + pending.text, last.start)
        else:
            out.append(pending)
    return out


def _pack(parts: list[str], limit: int) -> list[str]:
    """Greedily join consecutive parts into pieces of at most ``limit`` characters."""
    pieces: list[str] = []
    buf = ""
    for part in parts:
        if buf and len(buf) + len(part) > limit:
            pieces.append(buf)
            buf = ""
        buf += part
    if buf:
        pieces.append(buf)
    return pieces


def _split_parts(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split keeping every character: each separator stays at the end of its part."""
    parts: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        end = m.end()
        if end > last and end < len(text):
            parts.append(text[last:end])
            last = end
    parts.append(text[last:])
    return [p for p in parts if p]


def _heading_only(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_HEADER.match(line) for line in lines)


def _glue_headings(parts: list[str]) -> list[str]:
    """Attach parts that are only header lines to the following part (no header-only pieces)."""
    out: list[str] = []
    carry = ""
    for part in parts:
        part = carry + part
        carry = ""
        if _heading_only(part):
            carry = part
            continue
        out.append(part)
    if carry:
        if out:
            out[-1] += carry
        else:
            out.append(carry)
    return out


def _split(text: str, limit: int, level: int = 0) -> list[str]:
    if len(text) <= limit:
        return [text]
    if level >= len(_SEPARATORS):
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    parts = _glue_headings(_split_parts(text, _SEPARATORS[level]))
    if len(parts) == 1:
        return _split(text, limit, level + 1)
    out: list[str] = []
    for piece in _pack(parts, limit):
        out.extend(_split(piece, limit, level + 1) if len(piece) > limit else [piece])
    return out


def split_text(text: str, max_chars: int, overlap: int = 0) -> list[tuple[int, str]]:
    """Cut ``text`` into ``(start offset, piece)`` with ``len(piece) <= max_chars``.

    Pieces after the first start up to ``overlap`` characters before the previous piece ended
    (moved forward to a boundary when one is near), so ``text[start:start+len(piece)] == piece``
    and the pieces cover the whole text.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be >= 1")
    overlap = max(0, min(overlap, max_chars // 2))
    if len(text) <= max_chars:
        return [(0, text)]
    core = _split(text, max_chars - overlap)
    out: list[tuple[int, str]] = []
    pos = 0
    for i, piece in enumerate(core):
        start = pos
        if i > 0 and overlap:
            tail = text[max(0, pos - overlap) : pos]
            cut = 0
            for boundary in _BOUNDARIES:
                m = boundary.search(tail)
                if m and m.end() < len(tail):
                    cut = m.end()
                    break
            start = pos - len(tail) + cut
        out.append((start, text[start : pos + len(piece)]))
        pos += len(piece)
    return out


def chunk_spans(text: str, max_chars: int, overlap: int) -> list[tuple[int, int, str]]:
    """``(start, end, section)`` of every chunk: ``text[start:end]`` is the chunk's text."""
    spans: list[tuple[int, int, str]] = []
    for sec in merge_header_only(split_sections(text)):
        section = " > ".join(sec.path)
        for start, piece in split_text(sec.text, max_chars, overlap):
            body = piece.strip()
            if body:
                lead = len(piece) - len(piece.lstrip())
                begin = sec.start + start + lead
                spans.append((begin, begin + len(body), section))
    return spans


def chunk_markdown(doc: Document, max_chars: int | None = None, overlap: int | None = None) -> list[Chunk]:
    """Header chunks of one document (see the module docstring)."""
    max_chars, overlap = _defaults(max_chars, overlap)
    chunks: list[Chunk] = []
    for i, (start, end, section) in enumerate(chunk_spans(doc.text, max_chars, overlap)):
        meta = {**doc.metadata, "section": section, "chunk_index": i}
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


def chunk_documents(
    docs: Iterable[Document], max_chars: int | None = None, overlap: int | None = None
) -> list[Chunk]:
    max_chars, overlap = _defaults(max_chars, overlap)
    return [c for doc in docs for c in chunk_markdown(doc, max_chars, overlap)]


def _defaults(max_chars: int | None, overlap: int | None) -> tuple[int, int]:
    if max_chars is None or overlap is None:
        from zhiwen.config import get_settings

        r = get_settings().retrieval
        max_chars = r.chunk_max_chars if max_chars is None else max_chars
        overlap = r.chunk_overlap_chars if overlap is None else overlap
    return max_chars, overlap


def section_at(text: str, offset: int) -> str:
    """The heading path (``a > b``) that ``offset`` of ``text`` lies under."""
    path: list[str] = []
    for sec in split_sections(text):
        if sec.start > offset:
            break
        path = sec.path
    return " > ".join(path)


def spans_around(
    text: str, holes: list[tuple[int, int]], max_chars: int, overlap: int
) -> list[tuple[int, int, str]]:
    """:func:`chunk_spans` of ``text`` leaving out ``holes`` (``(start, end)``: the tables, which
    are chunked row by row). A heading left alone by a hole stays out too (its table's row
    chunks carry it); a header-only piece is merged into the next one only when they touch."""
    pieces: list[Section] = []
    for sec in split_sections(text):
        end = sec.start + len(sec.text)
        for start, stop in _outside(sec.start, end, holes):
            pieces.append(Section(sec.path, text[start:stop], start))
    spans: list[tuple[int, int, str]] = []
    pending: Section | None = None
    for piece in pieces:
        if pending is not None and pending.start + len(pending.text) == piece.start:
            piece = Section(piece.path, pending.text + piece.text, pending.start)
        pending = None
        if _header_only(piece) or not piece.text.strip():
            pending = piece
            continue
        section = " > ".join(piece.path)
        for start, part in split_text(piece.text, max_chars, overlap):
            body = part.strip()
            if body:
                begin = piece.start + start + len(part) - len(part.lstrip())
                spans.append((begin, begin + len(body), section))
    return spans


def _outside(start: int, end: int, holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` that no hole covers."""
    out: list[tuple[int, int]] = []
    pos = start
    for h_start, h_end in sorted(holes):
        if h_end <= pos or h_start >= end:
            continue
        if h_start > pos:
            out.append((pos, h_start))
        pos = max(pos, h_end)
    if pos < end:
        out.append((pos, end))
    return out
