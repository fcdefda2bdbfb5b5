"""Rows retrieval missed, looked up in the retrieved pages' other tables by the row the question names.

A page holds several tables (the batch lines, the majors' scores, the plan) and retrieval finds
the page by its names (2022年, 河南省) but not always the row asked for: a row chunk written
「理工 最低：541」 has no word of a question asking 「物理类…最低分」. So when no retrieved row
answers, the catalogue (:mod:`~zhiwen.tables.catalog`) is asked for the rows of the tables of
the first retrieved documents whose key cell the question names (「建筑学」, a year 「2022年」),
and those rows are weighed like retrieved ones, after them.

Example::

    >>> more = page_rows(catalog, "2022年河南省物理类建筑学最低分是多少", rows)
    >>> [(r.key_value, r.title) for r in more]
    [('建筑学', '2022年河南省录取分数统计 · 二、各专业录取分数（单位：分）'), …]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zhiwen.tables.catalog import QueryFailed, TableCatalog, TableInfo, quote
from zhiwen.tables.question import RowRef, value_match, year_match

#: the retrieved documents whose tables are searched
MAX_DOCS = 3
#: the rows taken from one table
MAX_ROWS = 5


def _text(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return "" if value is None else str(value)


def _named_keys(catalog: TableCatalog, table: TableInfo, question: str, distinct: Any) -> list[str]:
    keys = distinct(catalog, table, table.key_column)
    return [k for k in keys if value_match(k, question) or year_match(k, question)][:MAX_ROWS]


def _rows(catalog: TableCatalog, table: TableInfo, keys: list[str], rank: int) -> list[RowRef]:
    if not keys:
        return []
    wanted = ", ".join("'" + k.replace("'", "''") + "'" for k in keys)
    columns = ", ".join(quote(c) for c in table.columns)
    sql = f"SELECT _row, {columns} FROM {quote(table.name)} WHERE {quote(table.key_column)} IN ({wanted})"
    try:
        result = catalog.query(sql, limit=MAX_ROWS, timeout_ms=500, allowed={table.name})
    except QueryFailed:
        return []
    return [
        RowRef(
            table_id=table.table_id,
            table_hash=table.name.removeprefix("t_"),
            title=table.title,
            doc_id=table.doc_id,
            row=int(found[0]),
            columns=table.columns,
            types=table.types,
            values=tuple(_text(v) for v in found[1:]),
            key_column=table.key_column,
            rank=rank,
            score=0.0,
            source=table.source,
            page=table.page,
            sheet=table.sheet,
            table_rows=table.rows,
        )
        for found in result.rows
    ]


def page_rows(catalog: TableCatalog, question: str, rows: Sequence[RowRef], distinct: Any) -> list[RowRef]:
    """Rows of the first retrieved documents' tables that no retrieved row is from, whose key
    cell ``question`` names (see the module docstring). ``distinct``: the (cached) distinct
    values of a column, ``distinct(catalog, table, column)``."""
    docs: list[str] = []
    for row in rows:
        if row.doc_id not in docs:
            docs.append(row.doc_id)
    docs = docs[:MAX_DOCS]
    seen = {row.table_hash for row in rows}
    rank = max((row.rank for row in rows), default=0) + 1
    out: list[RowRef] = []
    for table in catalog.tables():
        if table.doc_id in docs and table.name.removeprefix("t_") not in seen:
            out += _rows(catalog, table, _named_keys(catalog, table, question, distinct), rank)
    return out
