"""Row chunks that carry their context: the table's names, then each row as 「表头：值；…」.

A question names the table's subject (a province and a year, a product line), a row (a major,
a model) and a column (最低分); a row chunk holds all three, so BM25 and the dense branch find
the row itself::

    2023年四川省录取分数线

    专业名称：金融学类；文史/历史类 最高：630；文史/历史类 最低：618；理工/物理类 最低：612

Up to ``one_row_up_to`` rows a table gives one chunk per row. A bigger table packs consecutive
rows into chunks of at most ``max_chars`` (each still opening with the table's names), so a
100,000-row sheet gives ~1/5 as many chunks and stays searchable row by row. A row too wide
for one chunk is split into column groups, the key column repeated in each.

Example::

    >>> t = Table(columns=["地区", "税率"], rows=[["北京", "0.03"]], caption="税率表")
    >>> [c.text for c in row_chunks(t, max_chars=800)]
    ['税率表\\n\\n地区：北京；税率：0.03']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from zhiwen.tables.model import Table

#: tables up to this many rows give one chunk per row; longer ones pack rows up to max_chars
ONE_ROW_UP_TO = 300
#: the most rows one packed chunk holds (a cell answer reads them all)
MAX_ROWS_PER_CHUNK = 12


@dataclass(frozen=True, slots=True)
class RowChunk:
    """The text of one chunk and which rows (1-based, inclusive) and columns it holds."""

    text: str
    first: int
    last: int
    cols: tuple[int, ...]
    cells: tuple[tuple[str, ...], ...]  # the rows' values of ``cols``


def pairs(columns: Sequence[str], row: Sequence[str], cols: Sequence[int]) -> str:
    """「表头：值；表头：值」 of the non-empty cells of ``cols``."""
    return "；".join(f"{columns[i]}：{row[i]}" for i in cols if i < len(row) and row[i])


def row_chunks(
    table: Table,
    *,
    max_chars: int,
    one_row_up_to: int = ONE_ROW_UP_TO,
    max_rows_per_chunk: int = MAX_ROWS_PER_CHUNK,
) -> list[RowChunk]:
    """The chunks of ``table`` (see the module docstring)."""
    head = table.label + "\n\n"
    room = max(80, max_chars - len(head))
    groups = list(_column_groups(table, room))
    if len(groups) > 1:
        return [
            c for number, row in enumerate(table.rows, 1) for c in _wide_row(table, head, number, row, groups)
        ]
    cols = groups[0]
    per_chunk = 1 if len(table.rows) <= one_row_up_to else max_rows_per_chunk
    out: list[RowChunk] = []
    lines: list[str] = []
    first = 1
    used = 0
    for number, row in enumerate(table.rows, 1):
        line = pairs(table.columns, row, cols) or "（空行）"
        if lines and (len(lines) >= per_chunk or used + len(line) + 1 > room):
            out.append(_chunk(table, head, lines, first, number - 1, cols))
            lines, first, used = [], number, 0
        lines.append(line)
        used += len(line) + 1
    if lines:
        out.append(_chunk(table, head, lines, first, len(table.rows), cols))
    return out


def _chunk(
    table: Table, head: str, lines: list[str], first: int, last: int, cols: tuple[int, ...]
) -> RowChunk:
    cells = tuple(tuple(table.rows[n - 1][i] for i in cols) for n in range(first, last + 1))
    return RowChunk(head + "\n".join(lines), first, last, cols, cells)


def _column_groups(table: Table, room: int) -> Iterator[tuple[int, ...]]:
    """Every column at once when the widest row fits ``room``; else groups that do, each with
    the key column first."""
    everything = tuple(range(len(table.columns)))
    widest = max((len(pairs(table.columns, r, everything)) for r in table.rows), default=0)
    if widest <= room:
        yield everything
        return
    key = table.key
    # each column's widest "name：value；" across the rows decides what fits
    sizes = {
        i: max((len(table.columns[i]) + len(r[i]) + 2 for r in table.rows if i < len(r)), default=0)
        for i in everything
    }
    budget = max(1, room - sizes[key])
    group: list[int] = []
    used = 0
    for i in everything:
        if i == key:
            continue
        if group and used + sizes[i] > budget:
            yield (key, *group)
            group, used = [], 0
        group.append(i)
        used += sizes[i]
    if group:
        yield (key, *group)


def _wide_row(
    table: Table, head: str, number: int, row: list[str], groups: list[tuple[int, ...]]
) -> Iterator[RowChunk]:
    for cols in groups:
        text = pairs(table.columns, row, cols)
        if text:
            yield RowChunk(head + text, number, number, cols, (tuple(row[i] for i in cols),))
