"""Tables out of the formats that hold them: HTML ``<table>``, markdown pipe tables, CSV/TSV files.

Each reader returns grids for :func:`zhiwen.tables.model.table_from_grid`: rows of cell texts
with merged cells repeated over their span (``rowspan``/``colspan``), so two-level headers
flatten into header paths. HTML tables are cut out of the page before its main content is
extracted (trafilatura would flatten the spans) and put back where they stood.

Example::

    >>> tree = lxml.html.fromstring("<table><tr><th>专业</th><th>最低</th></tr>"
    ...                             "<tr><td>法学</td><td>612</td></tr></table>")
    >>> [grid for _, grid, _ in html_tables(tree)]
    [[['专业', '最低'], ['法学', '612']]]
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: a span this large is a broken attribute, not a table (and would blow the grid up)
_MAX_SPAN = 1000
_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_PIPE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


# -- HTML ------------------------------------------------------------------------------------------
def _text(el: Any) -> str:
    return re.sub(r"\s+", " ", el.text_content() or "").strip()


def _span(el: Any, name: str) -> int:
    try:
        return max(1, min(int(str(el.get(name, "1")).strip() or 1), _MAX_SPAN))
    except ValueError:
        return 1


def html_grid(table: Any, max_cells: int) -> tuple[list[list[str]], int]:
    """The table's cells with ``rowspan``/``colspan`` repeated, and how many rows head it
    (rows of ``<th>`` only, or ``<thead>``); stops adding rows past ``max_cells``."""
    grid: list[list[str]] = []
    pending: dict[tuple[int, int], str] = {}  # (row, col) → text spanning into it from above
    header_rows = 0
    cells = 0
    for r, tr in enumerate(_rows(table)):
        row: list[str] = []
        col = 0
        for cell in tr:
            if not isinstance(cell.tag, str) or cell.tag.lower() not in ("td", "th"):
                continue
            while (r, col) in pending:
                row.append(pending.pop((r, col)))
                col += 1
            text = _text(cell)
            rs, cs = _span(cell, "rowspan"), _span(cell, "colspan")
            for c in range(cs):
                row.append(text)
                for dr in range(1, rs):
                    pending[(r + dr, col + c)] = text
            col += cs
        while (r, col) in pending:
            row.append(pending.pop((r, col)))
            col += 1
        if _is_header_row(tr) and header_rows == r:
            header_rows += 1
        grid.append(row)
        cells += len(row)
        if cells > max_cells:
            break
    return grid, header_rows


def _rows(table: Any) -> Iterator[Any]:
    """The table's own rows (not those of a table nested in it), in order."""
    for el in table.iter("tr"):
        parent = el.getparent()
        while parent is not None and parent.tag not in ("table",):
            parent = parent.getparent()
        if parent is table:
            yield el


def _is_header_row(tr: Any) -> bool:
    cells = [c for c in tr if isinstance(c.tag, str) and c.tag.lower() in ("td", "th")]
    in_head = tr.getparent() is not None and tr.getparent().tag == "thead"
    return bool(cells) and (in_head or all(c.tag.lower() == "th" for c in cells))


def is_data_table(table: Any) -> bool:
    """A table of data, not of layout: no table inside it, two rows and two columns at least."""
    if table.find(".//table") is not None:
        return False
    rows = list(_rows(table))
    return (
        len(rows) >= 2 and max((len([c for c in tr if c.tag in ("td", "th")]) for tr in rows), default=0) >= 2
    )


def table_caption(table: Any) -> str:
    """The table's ``<caption>``, else the nearest heading (or title-like line) before it."""
    cap = table.find("caption")
    if cap is not None and _text(cap):
        return _text(cap)
    for seen, el in enumerate(table.itersiblings(preceding=True)):
        found = _heading_in(el)
        if found or seen >= 8:
            return found if found else ""
    parent = table.getparent()
    return table_caption(parent) if parent is not None and parent.tag not in ("body", "html") else ""


def _heading_in(el: Any) -> str:
    """The last heading in ``el`` (or ``el`` itself), or a short title-like line of its own."""
    if not isinstance(el.tag, str):
        return ""
    if el.tag in _HEADINGS:
        return _text(el)
    inner = [h for h in el.iter(*_HEADINGS)]
    if inner:
        return _text(inner[-1])
    text = _text(el)
    klass = f"{el.get('class', '')} {el.get('id', '')}".lower()
    if text and len(text) <= 40 and ("title" in klass or "caption" in klass or el.tag in ("strong", "b")):
        return text
    return ""


def first_h1(tree: Any, levels: tuple[str, ...] = ("h1",)) -> str:
    """The page's main heading: its first ``<h1>`` (or heading of ``levels``) outside
    navigation and headers."""
    for h in tree.iter(*levels):
        if any(a.tag in ("nav", "header", "footer") for a in h.iterancestors()):
            continue
        text = _text(h)
        if text:
            return text
    return ""


# -- markdown pipe tables --------------------------------------------------------------------------
def pipe_tables(text: str) -> Iterator[tuple[int, int, list[list[str]]]]:
    """``(start, end, grid)`` of every pipe table (a header row, a ``---`` rule, rows) in ``text``."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    i = 0
    while i < len(lines) - 1:
        if _PIPE_ROW.match(lines[i]) and _PIPE_RULE.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and _PIPE_ROW.match(lines[j]):
                j += 1
            grid = [_pipe_cells(lines[k]) for k in range(i, j) if k != i + 1]
            yield offsets[i], offsets[j] if j <= len(lines) else len(text), grid
            i = j
        else:
            i += 1


def _pipe_cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", inner)]


# -- CSV / TSV -------------------------------------------------------------------------------------
def csv_rows(text: str, suffix: str, max_rows: int) -> tuple[list[list[str]], bool]:
    """The rows of a CSV/TSV text (delimiter from the suffix, else sniffed), at most
    ``max_rows`` + 1 (the header); True when rows were left out."""
    delimiter = "\t" if suffix == ".tsv" else _sniff(text[:8192])
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    rows: list[list[str]] = []
    for row in reader:
        if len(rows) > max_rows:
            return rows, True
        rows.append(row)
    return rows, False


def _sniff(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","
