"""A table as a table: header paths, typed columns, rows, and where it stands in its document.

Every loader that meets a table (HTML, XLSX/CSV, DOCX, PPTX, PDF, Markdown) hands a *grid* —
rows of cell texts, merged cells either repeated over their span (HTML, Word) or empty after
their first cell (Excel, pdfplumber) — to :func:`table_from_grid`, which finds the header rows,
flattens two-level headers into header paths (「文史/历史类」 over 「最低」 → 「文史/历史类 最低」),
drops empty columns and rows, and types every column (int, float, date, text).

Example::

    >>> grid = [["专业名称", "文史/历史类", "", "理工/物理类", ""],
    ...         ["", "最高", "最低", "最高", "最低"],
    ...         ["法学", "640", "631", "650", "644"]]
    >>> t = table_from_grid(grid, caption="2021年甘肃省录取分数线")
    >>> t.columns, t.types[1]
    (['专业名称', '文史/历史类 最高', '文史/历史类 最低', '理工/物理类 最高', '理工/物理类 最低'], 'int')
    >>> t.rows[0][2]
    '631'
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

#: a cell that says "no value" (a dash, 无, N/A): a null in a typed column, not text
_NULLS = frozenset({"", "-", "--", "—", "——", "/", "无", "暂无", "n/a", "N/A", "NA", "null", "None", "nan"})
_INT = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+$|^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?\.\d+$|^[+-]?\d+\.$")
_DATE = re.compile(
    r"^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?$"
)
TYPES = ("int", "float", "date", "text")


def clean_cell(value: Any) -> str:
    """A cell as one line of text (``None`` → ""; floats without a spurious ``.0``)."""
    if value is None:
        return ""
    kind = type(value)
    if kind is str:
        return " ".join(value.split())
    if kind is int:
        return str(value)
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, date):
        return value.isoformat()[:10] if not hasattr(value, "hour") or not _has_time(value) else str(value)
    return re.sub(r"\s+", " ", str(value)).strip()


def _has_time(value: Any) -> bool:
    return bool(getattr(value, "hour", 0) or getattr(value, "minute", 0) or getattr(value, "second", 0))


def typed_value(text: str, kind: str) -> int | float | str | None:
    """The value SQL sees for a cell of a column of ``kind`` (None: null or unreadable)."""
    t = text.strip()
    if t in _NULLS:
        return None
    if kind == "int" and _INT.match(t):
        return int(t.replace(",", ""))
    if kind in ("int", "float") and (_INT.match(t) or _FLOAT.match(t)):
        return float(t.replace(",", ""))
    if kind == "date":
        m = _DATE.match(t)
        return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}" if m else None
    if kind in ("int", "float", "date"):
        return None
    return t


def column_type(values: Sequence[str]) -> str:
    """int, float or date when (almost) every non-null value reads so, else text."""
    seen = [v.strip() for v in values if v.strip() not in _NULLS]
    if not seen:
        return "text"
    allowed = max(0, len(seen) // 20)  # one stray note in twenty does not make a column text
    for kind, test in (("int", _INT.match), ("float", _is_number), ("date", _DATE.match)):
        if sum(1 for v in seen if not test(v)) <= allowed:
            return kind
    return "text"


def _is_number(v: str) -> bool:
    return bool(_INT.match(v) or _FLOAT.match(v))


@dataclass(slots=True)
class Table:
    """One table: its header paths, typed columns and rows (display texts), with provenance.

    ``caption``: the table's caption or the nearest heading above it; ``context``: the
    document's own title (the page heading) when the caption does not already say it;
    ``sheet``: the worksheet's name; ``page``: PDF page, slide or sheet number. ``key``: the
    column that names a row (the first text column whose values are mostly distinct).
    ``total_rows``: rows the source had (more than ``rows`` when they were capped).
    """

    columns: list[str]
    rows: list[list[str]]
    types: list[str] = field(default_factory=list)
    caption: str = ""
    context: str = ""
    sheet: str = ""
    page: int | None = None
    key: int = 0
    header_rows: int = 1
    total_rows: int = 0

    def __post_init__(self) -> None:
        if not self.types:
            self.types = [column_type([r[i] for r in self.rows]) for i in range(len(self.columns))]
        if not self.total_rows:
            self.total_rows = len(self.rows)
        self.key = key_column(self.columns, self.rows, self.types)

    @property
    def title(self) -> str:
        """What the table is called in an answer: its caption, else the context, else its sheet."""
        return self.caption or self.context or self.sheet or "表格"

    @property
    def label(self) -> str:
        """Every name of the table once: 「2021年甘肃省录取分数线」, 「价格表 · 二手房」."""
        parts: list[str] = []
        for part in (self.context, self.caption, self.sheet):
            part = part.strip()
            if part and not any(part in p for p in parts):
                parts = [p for p in parts if p not in part] + [part]
        return " · ".join(parts) or "表格"

    def fingerprint(self) -> str:
        """A hash of the table's content and names: the same table gives the same name in SQL."""
        h = hashlib.blake2b(digest_size=8)
        h.update(json.dumps([self.label, self.columns, self.types], ensure_ascii=False).encode())
        for row in self.rows:
            h.update("\x1f".join(row).encode())
            h.update(b"\x1e")
        return h.hexdigest()

    def markdown(self, max_rows: int | None = None) -> str:
        """The table as a markdown table (its first ``max_rows`` rows, and a line saying how many)."""
        from zhiwen.tables.render import markdown_rows

        shown = self.rows if max_rows is None else self.rows[:max_rows]
        md = markdown_rows([self.columns, *shown])
        if len(shown) < self.total_rows:
            md += f"\n\n（表格共 {self.total_rows} 行，此处列出前 {len(shown)} 行；每一行都可检索）"
        return md


def key_column(columns: Sequence[str], rows: Sequence[Sequence[str]], types: Sequence[str]) -> int:
    """The column that names a row: the first text column whose values are mostly distinct."""
    best = 0
    for i, kind in enumerate(types):
        if kind != "text":
            continue
        values = [r[i] for r in rows if i < len(r) and r[i]]
        if values and len(set(values)) >= 0.6 * len(values):
            return i
        if best == 0 and values and types[0] != "text":
            best = i
    return best


# -- grids → tables --------------------------------------------------------------------------------
def table_from_grid(
    grid: Sequence[Sequence[Any]],
    *,
    caption: str = "",
    context: str = "",
    sheet: str = "",
    page: int | None = None,
    header_rows: int | None = None,
    max_rows: int | None = None,
) -> Table | None:
    """A :class:`Table` from rows of cells, or None when the grid holds no table (under two
    columns or no data row). ``header_rows``: how many rows head the table when the source says
    (HTML ``<th>``/``<thead>``); else found by :func:`count_header_rows`."""
    rows = [[clean_cell(c) for c in r] for r in grid]
    rows = [r for r in rows if any(r)]
    if len(rows) < 2:
        return None
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    # a title row above the header (one cell merged across: empty after it, or its text
    # repeated over the span): the caption, not a header
    while len(rows) > 2 and width >= 3 and len({c for c in rows[0] if c}) == 1 and len(set(rows[1])) > 1:
        caption = _title_row_caption(next(c for c in rows[0] if c), caption)
        rows = rows[1:]
        header_rows = max(0, header_rows - 1) if header_rows else header_rows
    keep = [i for i in range(width) if any(r[i] for r in rows)]
    if len(keep) < 2:
        return None
    rows = [[r[i] for i in keep] for r in rows]
    n_head = header_rows if header_rows else count_header_rows(rows)
    n_head = max(1, min(n_head, len(rows) - 1, 3))
    columns = header_paths(rows[:n_head])
    body = rows[n_head:]
    total = len(body)
    if max_rows is not None and total > max_rows:
        body = body[:max_rows]
    return Table(
        columns=columns,
        rows=body,
        caption=caption.strip(),
        context=context.strip(),
        sheet=sheet.strip(),
        page=page,
        header_rows=n_head,
        total_rows=total,
    )


def _title_row_caption(title: str, caption: str) -> str:
    """The caption once a title row is read: a unit note (「单位：分」) is added to the caption
    the page gave; another title names the table better than the nearest heading."""
    if caption and title in caption:
        return caption
    if caption and re.match(r"^[（(]?(?:单位|注)[：:]", title):
        return f"{caption}（{title.strip('（）()')}）"
    return title


def _numeric(cell: str) -> bool:
    return bool(_INT.match(cell) or _FLOAT.match(cell))


def count_header_rows(rows: Sequence[Sequence[str]]) -> int:
    """1, or 2 when the first row spans columns (empty or repeated cells over numbers) and the
    second holds labels only while the data below has numbers (a two-level header)."""
    if len(rows) < 3:
        return 1
    first, second = rows[0], rows[1]
    spans = any(not c for c in first[1:]) or any(a and a == b for a, b in itertools.pairwise(first))
    labels_only = all(not _numeric(c) for c in second) and any(second)
    data_numbers = any(_numeric(c) for r in rows[2:5] for c in r)
    second_is_new = any(c and c != first[i] for i, c in enumerate(second))
    return 2 if spans and labels_only and data_numbers and second_is_new else 1


def header_paths(head: Sequence[Sequence[str]]) -> list[str]:
    """Header rows → one name per column: a merged cell's text spans the columns to its right
    (top rows only), parts repeated by a vertical merge are said once, an empty header is
    「第n列」, and a name given twice gets 「（2）」."""
    width = len(head[0])
    filled: list[list[str]] = []
    for level, row in enumerate(head):
        out: list[str] = []
        for i, cell in enumerate(row):
            # a horizontal merge leaves the cells after its first one empty (Excel, pdfplumber)
            inherit = level < len(head) - 1 and i > 0 and not cell and _parent_spans(filled, level, i)
            out.append(out[i - 1] if inherit else cell)
        filled.append(out)
    names: list[str] = []
    seen: dict[str, int] = {}
    for i in range(width):
        parts: list[str] = []
        for row in filled:
            part = row[i].strip()
            if part and (not parts or parts[-1] != part):
                parts.append(part)
        name = " ".join(parts) or f"第{i + 1}列"
        seen[name] = seen.get(name, 0) + 1
        names.append(name if seen[name] == 1 else f"{name}（{seen[name]}）")
    return names


def _parent_spans(filled: list[list[str]], level: int, i: int) -> bool:
    """Whether the cell above (if any) is one merged cell across columns i-1 and i."""
    if level == 0:
        return True
    above = filled[level - 1]
    return above[i] == above[i - 1] and bool(above[i])
