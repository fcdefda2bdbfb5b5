"""Page layout analysis shared by the text layer and OCR: lines → markdown of one page.

Lines come with their position and font size (from PDFium's characters, or OCR boxes). Running
headers and footers are dropped (the same text — digits masked, OCR noise tolerated — in the
top or bottom band of most neighbouring pages, plus page numbers, print date stamps and URLs),
headings come from the PDF outline or from font sizes clearly above the body text, and wrapped
lines are joined into paragraphs (no space between CJK characters).

Example::

    >>> drop_headers_footers(pages)
    >>> mark_outline_headings(pages, [(0, "第一章 总则", 0)]) or mark_size_headings(pages)
    >>> page_markdown(pages[0])
    '## 第一章 总则\n\n第一条 ……'
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass

from zhiwen.ingest.normalize import ends_sentence, join_pair, normalize_text
from zhiwen.ingest.ocr import OcrLine

_BAND = 0.09  # top/bottom share of the page where running headers and footers live
_PAGE_NUMBER = re.compile(
    r"^[\s\-—–·•]*(?:第\s*)?(?:page\s*)?\d{1,4}\s*(?:页)?\s*(?:(?:[/／]|of|共)\s*\d{1,4}\s*页?)?[\s\-—–·•]*$",
    re.IGNORECASE,
)
# a running header's print date/time (Chromium: "11/23/26, 4:56 AM"), dropped even on one page
_DATE_STAMP = re.compile(
    r"^\s*(?:\d{1,4}[/.\-年]\d{1,2}[/.\-月]\d{1,4}日?,?\s*(?:\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?)?)"
)
_NEW_PARAGRAPH = re.compile(
    r"^(?:第[一二三四五六七八九十百千零〇\d]+[条章节款]|[（(][一二三四五六七八九十\d]+[）)]|\d+[.、．]\s*\S|[一二三四五六七八九十]+、|[-•·●]\s)"
)
# OCR reads the dash of a range (3—5%) as the numeral 一; between two digits 一 is never a numeral
_DIGIT_DASH = re.compile(r"(?<=\d)\s*一\s*(?=\d)")
_MEANINGFUL = re.compile(r"[\w\u3400-\u9fff，。、；：？！（）《》“”]")


@dataclass(slots=True)
class Line:
    text: str
    x0: float
    top: float  # distance from the top of the page
    x1: float
    bottom: float
    size: float  # font size (text layer) or box height (OCR)
    heading: int = 0  # markdown level, 0 = body

    @property
    def height(self) -> float:
        return max(1.0, self.bottom - self.top)


@dataclass(slots=True)
class PageLines:
    index: int  # 0-based
    width: float
    height: float
    lines: list[Line]
    ocr: bool = False


def text_layer_usable(lines: list[Line]) -> bool:
    """False for a page with no text layer, or only a garbage one (unmapped glyphs)."""
    text = "".join(line.text for line in lines)
    stripped = re.sub(r"\s", "", text)
    if len(stripped) < 10:
        return False
    meaningful = len(_MEANINGFUL.findall(stripped))
    bad = sum(1 for ch in stripped if ch == "\ufffd" or 0xE000 <= ord(ch) <= 0xF8FF)
    return meaningful / len(stripped) >= 0.6 and bad / len(stripped) < 0.1


def ocr_lines_to_lines(ocr_lines: list[OcrLine], scale: float) -> list[Line]:
    """OCR boxes (pixels) → lines in page points, in reading order (top to bottom, left to right)."""
    boxes = sorted(ocr_lines, key=lambda b: (b.top + b.bottom) / 2)
    rows: list[list[OcrLine]] = []
    for box in boxes:
        mid = (box.top + box.bottom) / 2
        if rows and abs(mid - statistics.mean((b.top + b.bottom) / 2 for b in rows[-1])) < 0.5 * (
            box.bottom - box.top
        ):
            rows[-1].append(box)
        else:
            rows.append([box])
    out: list[Line] = []
    for row in rows:
        row.sort(key=lambda b: b.x0)
        text = ""
        for b in row:
            text = join_pair(text, b.text.strip()) if text else b.text.strip()
        text = _DIGIT_DASH.sub("—", text)
        top = min(b.top for b in row) / scale
        bottom = max(b.bottom for b in row) / scale
        out.append(
            Line(
                text,
                min(b.x0 for b in row) / scale,
                top,
                max(b.x1 for b in row) / scale,
                bottom,
                size=round(bottom - top, 1),
            )
        )
    return out


# -- headers and footers ---------------------------------------------------------------------------
def _band_key(line: Line, page: PageLines) -> str | None:
    if line.top < page.height * _BAND:
        where = "top"
    elif line.bottom > page.height * (1 - _BAND):
        where = "bottom"
    else:
        return None
    return where + ":" + re.sub(r"\d+", "#", re.sub(r"\s+", "", normalize_text(line.text)))


def drop_headers_footers(pages: list[PageLines], window: int = 6) -> None:
    """Remove running headers/footers and page numbers in place.

    A line in the top or bottom band is a running header/footer when a similar line (digits
    masked, fuzzy: OCR reads the same footer a little differently on every page) sits in the same
    band on at least 40 % of the neighbouring pages (``window`` on each side: linear in pages).
    Page numbers, print date stamps and URLs in the bands go on every page count.
    """
    from rapidfuzz import fuzz

    keys = [[(line, _band_key(line, page)) for line in page.lines] for page in pages]
    band = [[k for _, k in page_keys if k] for page_keys in keys]
    for i, page in enumerate(pages):
        neighbours = [j for j in range(max(0, i - window), min(len(pages), i + window + 1)) if j != i]
        kept = []
        for line, key in keys[i]:
            if key is not None:
                text = line.text.strip()
                if _PAGE_NUMBER.match(text) or "://" in text or (len(text) <= 40 and _stamp_only(text)):
                    continue
                where = key.split(":", 1)[0]
                similar = sum(
                    any(k.startswith(where) and fuzz.ratio(k, key) >= 80 for k in band[j]) for j in neighbours
                )
                if neighbours and similar >= max(1, 0.4 * len(neighbours)):
                    continue
            kept.append(line)
        page.lines = kept


def _stamp_only(text: str) -> bool:
    """A date/time stamp followed by at most a short title: a print header, not body text."""
    m = _DATE_STAMP.match(text)
    return bool(m and m.group(0).strip() and (":" in m.group(0) or len(text) - m.end() <= 20))


# -- headings --------------------------------------------------------------------------------------
def _squash(text: str) -> str:
    return re.sub(r"\s+", "", normalize_text(text))


def mark_outline_headings(pages: list[PageLines], outline: list[tuple[int, str, int | None]]) -> bool:
    """Mark lines that are outline (bookmark) titles on their page; True when any matched."""
    wanted: dict[tuple[int | None, str], int] = {}
    for level, title, page_index in outline:
        key = _squash(title)
        if key:
            wanted.setdefault((page_index, key), min(level + 1, 6))
    matched = False
    for page in pages:
        for line in page.lines:
            key = _squash(line.text)
            level = wanted.pop((page.index, key), 0) or wanted.pop((None, key), 0)
            if level:
                line.heading = level
                matched = True
    return matched


def mark_size_headings(pages: list[PageLines]) -> None:
    """Without an outline: short lines set clearly larger than the body text are headings."""
    weights: Counter[float] = Counter()
    for page in pages:
        if page.ocr:
            continue
        for line in page.lines:
            weights[round(line.size * 2) / 2] += len(line.text)
    if not weights:
        return
    body = weights.most_common(1)[0][0]
    big = sorted({s for s in weights if s >= body * 1.15}, reverse=True)[:3]
    if not big:
        return
    level_of = {s: i + 1 for i, s in enumerate(big)}
    candidates = [
        line
        for page in pages
        if not page.ocr
        for line in page.lines
        if round(line.size * 2) / 2 in level_of and len(line.text) <= 40
    ]
    total = sum(len(p.lines) for p in pages if not p.ocr)
    if total and len(candidates) / total > 0.3:  # "headings" everywhere: a layout, not a hierarchy
        return
    for line in candidates:
        line.heading = level_of[round(line.size * 2) / 2]


# -- paragraphs ------------------------------------------------------------------------------------
def page_markdown(page: PageLines, tables: list[tuple[float, float, str]] | None = None) -> str:
    """The page as markdown: headings, paragraphs of joined lines, tables at their position."""
    tables = sorted(tables or [])
    right = max((line.x1 for line in page.lines), default=0.0)
    blocks: list[str] = []
    para = ""
    prev: Line | None = None

    def end_paragraph() -> None:
        nonlocal para
        if para:
            blocks.append(para)
        para = ""

    for line in page.lines:
        while tables and tables[0][0] <= line.top:
            end_paragraph()
            blocks.append(tables.pop(0)[2])
            prev = None
        if any(t_top - 1 <= (line.top + line.bottom) / 2 <= t_bottom + 1 for t_top, t_bottom, _ in tables):
            continue  # inside a table that comes later in the list: its cells are in the table
        text = line.text.strip()
        if line.heading:
            end_paragraph()
            blocks.append(f"{'#' * line.heading} {text}")
            prev = None
            continue
        if prev is not None and para:
            gap = line.top - prev.bottom
            short = prev.x1 < right - 2 * max(prev.size, 1.0)
            if (
                gap > 0.9 * prev.height
                or (short and ends_sentence(prev.text))
                or _NEW_PARAGRAPH.match(text)
                or (line.x0 > prev.x0 + 1.5 * max(line.size, 1.0) and ends_sentence(prev.text))
            ):
                end_paragraph()
        para = join_pair(para, text) if para else text
        prev = line
    end_paragraph()
    for _, _, table in tables:
        blocks.append(table)
    return "\n\n".join(blocks)
