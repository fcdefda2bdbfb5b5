"""The cell a question asks for, from the retrieved rows: the number first, the row quoted, the table cited.

A question that names a row (a cell of it, the key column's first) and a column (a part of its
header path) is answered by that cell::

    2023年四川省物理类金融学类最低分是 **612**（《2023年四川省录取分数线》第 5 行：
    专业名称 金融学类；理工/物理类 最低 612）[1]

The row is the retrieved row the question names best, its table's names (year, province)
weighing in; the column the one whose header parts the question says most of. Two columns
that fit equally (「最低分」 with 文史 and 理工 columns) are both given.

Example::

    >>> found = find_cell(question, rows_from_hits(parents))
    >>> found.values, found.row.row
    (['612'], 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zhiwen.tables.question import (
    RowRef,
    column_score,
    context_score,
    header_words,
    names_other_table,
    subject_of,
    value_match,
    year_match,
)

#: at most this many equally fitting columns are given
MAX_COLUMNS = 4


@dataclass(frozen=True, slots=True)
class CellFound:
    row: RowRef
    columns: list[str]  # the columns asked for (best first)
    values: list[str]

    def lead(self, question: str, cite: str = "") -> str:
        """「…是 **612**（《表》第 5 行：专业 金融学类；理工/物理类 最低 612）[1]」"""
        subject = subject_of(question)
        shown = "、".join(f"**{v}**" for v in self.values)
        if len(self.values) > 1:
            shown = "；".join(f"{c} **{v}**" for c, v in zip(self.columns, self.values, strict=True))
        row = self.row
        quoted = [f"{row.key_column} {row.key_value}"] if row.key_value else []
        quoted += [f"{c} {v}" for c, v in zip(self.columns, self.values, strict=True)]
        where = f"《{row.title}》第 {row.row} 行" if row.title else f"第 {row.row} 行"
        return f"{subject}是 {shown}（{where}：{'；'.join(quoted)}）{cite}"


def row_score(row: RowRef, question: str) -> tuple[float, float]:
    """(how the question names the row, how its table's names fit): the key cell counts most."""
    named = 0.0
    for column, value in zip(row.columns, row.values, strict=False):
        is_key = column == row.key_column
        hit = value_match(value, question) or (year_match(value, question) if is_key else 0.0)
        named += hit * (2.0 if is_key else 0.6)
    return named, context_score(row.title, question)


def _columns(row: RowRef, question: str) -> tuple[float, list[int]]:
    """The columns of ``row`` the question names best (not the key, not a cell it names)."""
    scored = [
        (column_score(c, question), i)
        for i, c in enumerate(row.columns)
        if c != row.key_column and row.values[i] and not value_match(row.values[i], question)
    ]
    top = max((s for s, _ in scored), default=0.0)
    return top, [i for s, i in scored if s == top and top > 0][:MAX_COLUMNS]


def find_cell(question: str, rows: Sequence[RowRef]) -> CellFound | None:
    """The asked cell (see the module docstring), or None when no row or no column is named.
    Row and column are chosen together: a row whose table has no column the question names
    (the plan table beside the scores, both listing the major) is not the answer."""
    titles = {r.title for r in rows}
    other = {
        (t, c)
        for t, c in {(r.title, r.columns) for r in rows}
        if names_other_table(t, question, titles, header_words(c))
    }
    best: tuple[float, RowRef, list[int]] | None = None
    for row in rows:
        named, fit = row_score(row, question)
        # a row of a table the question does not name (another province or year) is no answer,
        # even when the table it names lacks that row
        if named <= 0 or (row.title, row.columns) in other:
            continue
        column_fit, picked = _columns(row, question)
        if not picked:
            continue
        total = named + fit + 0.5 * column_fit + 1.0 / (1 + row.rank)
        if best is None or total > best[0]:
            best = (total, row, picked)
    if best is None:
        return None
    _, row, picked = best
    return CellFound(row, [row.columns[i] for i in picked], [row.values[i] for i in picked])


def quoted_row(row: RowRef) -> str:
    """The whole row as 「表头：值；…」 (what the answer quotes under its lead)."""
    return "；".join(f"{c}：{v}" for c, v in zip(row.columns, row.values, strict=False) if v)
