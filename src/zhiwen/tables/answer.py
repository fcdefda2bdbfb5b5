"""The answer stage's table hook: a question over retrieved table rows → a table answer, or None.

:func:`answer_from_tables` is called by generic QA (:mod:`zhiwen.answer.qa`) with the KB, the
question, the retrieved parents (best first, as the answer's sources are numbered) and the LLM
(or None). It returns None at once when no retrieved passage is a table row, so a KB without
tables answers as before. Otherwise:

1. a question that asks for arithmetic (count, average, sum, maximum, top N, change across
   years: :func:`~zhiwen.tables.rules.read_shape`) is answered by SQL — the model's when an LLM
   is configured (``tables.llm_sql``), else the rules' — over the KB's catalogue
   (:mod:`~zhiwen.tables.catalog`, synced to the KB's revision first);
2. else, or when the SQL failed any check (the reason is kept and shown), a question naming a
   row and a column is answered by that cell (:mod:`~zhiwen.tables.cells`);
3. else None: the ordinary answer.

Example::

    >>> got = answer_from_tables(kb, "2023年四川省物理类金融学类最低分是多少？", parents, llm=None)
    >>> got.text.splitlines()[0]
    '2023年四川省物理类金融学类最低分是 **612**（《2023年四川省录取分数线》第 5 行：…）[1]'
    >>> got.payload["columns"][:2], got.kind
    (['专业名称', '文史/历史类 最高'], 'cell')
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zhiwen.config import Settings, TablesSettings
from zhiwen.documents import ParentHit
from zhiwen.tables.catalog import TableCatalog, TableKB
from zhiwen.tables.cells import CellFound, find_cell, quoted_row
from zhiwen.tables.lookup import page_rows
from zhiwen.tables.question import RowRef, arabic_years, header_parts, row_label, rows_from_hits
from zhiwen.tables.render import markdown_rows, payload, payload_text
from zhiwen.tables.rules import read_shape
from zhiwen.tables.sql_answer import (
    NoSQLAnswer,
    SQLAnswer,
    SQLLimits,
    distinct_values,
    llm_answer,
    ranked_tables,
    rule_answer,
)

log = logging.getLogger(__name__)

OFFLINE_NOTE = "（未使用大模型：答案直接取自表格数据）"


@dataclass(slots=True)
class TableAnswer:
    """A table's answer: the markdown text (cell or result first), how it was made, the payload
    the web UI draws (``payload``), the SQL that ran and why a SQL attempt fell back."""

    text: str
    kind: str  # cell | sql
    llm_used: bool
    payload: dict[str, Any]
    sql: str | None = None
    fallback_reason: str | None = None  # why the SQL answer was not given (the row answer was)

    def terminal(self, width: int = 80) -> str:
        """The result table drawn for a terminal of ``width`` columns (the CLI's view)."""
        return payload_text(self.payload, width=width)


def answer_from_tables(
    kb: TableKB,
    question: str,
    parents: Sequence[ParentHit],
    llm: Any | None = None,
    settings: Settings | None = None,
) -> TableAnswer | None:
    """See the module docstring."""
    cfg = settings.tables if settings is not None else TablesSettings()
    if not cfg.enabled:
        return None
    rows = rows_from_hits(parents)
    if not rows:
        return None
    cites = {p.document.id: i for i, p in enumerate(parents, 1)}
    asked = arabic_years(question)
    shape = read_shape(asked)
    found = find_cell(asked, rows)
    if found is None:
        found = find_cell(asked, rows + _page_rows(kb, asked, rows))
    reason: str | None = None
    if shape.aggregate and (found is None or read_shape(_unnamed(asked, found)).aggregate):
        try:
            done = _by_sql(kb, asked, rows, llm, cfg, shape)
            return _sql_answer(done, cites)
        except NoSQLAnswer as exc:
            reason = exc.reason
            log.info("table question answered from rows: %s", reason)
    if found is None:
        return None
    return _cell_answer(question, found, cites, reason)


def _page_rows(kb: TableKB, question: str, rows: list[RowRef]) -> list[RowRef]:
    """The retrieved pages' rows retrieval missed (:mod:`~zhiwen.tables.lookup`); none when the
    catalogue cannot be read (a derived cache: the question is answered without them)."""
    catalog = TableCatalog.for_kb(kb)
    try:
        catalog.sync(kb)
        return page_rows(catalog, question, rows, distinct_values)
    except Exception as exc:  # the catalogue is a derived cache: its failure is no 500
        log.warning("table catalogue of %s could not be read: %s", kb.name, exc)
        return []


def _unnamed(question: str, found: CellFound) -> str:
    """The question without the row label and the column names it says: an aggregate word
    left (「平均」 of 「平均分」, 「合计」 of 「收入合计」) was a name, not arithmetic."""
    words = [found.row.key_value, row_label(found.row.key_value)]
    words += [part for column in found.columns for part in header_parts(column)]
    for word in sorted((w for w in words if w), key=len, reverse=True):
        question = question.replace(word, " ")
    return question


def _by_sql(
    kb: TableKB, question: str, rows: list[RowRef], llm: Any, cfg: TablesSettings, shape: Any
) -> SQLAnswer:
    catalog = TableCatalog.for_kb(kb)
    try:
        catalog.sync(kb)
    except Exception as exc:  # the catalogue is a derived cache: its failure is no 500
        log.warning("table catalogue of %s could not be synced: %s", kb.name, exc)
        raise NoSQLAnswer("表格数据暂时无法读取") from exc
    tables = ranked_tables(catalog, question, rows)
    if not tables:
        raise NoSQLAnswer("没有找到对应的表格数据")
    limits = SQLLimits(cfg.sql_row_limit, cfg.sql_timeout_ms)
    if llm is not None and cfg.llm_sql:
        try:
            return llm_answer(catalog, question, tables, llm, limits)
        except NoSQLAnswer as exc:
            log.info("the model's SQL was not used (%s); rules instead", exc.reason)
            done = rule_answer(catalog, question, shape, tables, limits)
            done.note = f"大模型写的 SQL 未采用（{exc.reason}），改用规则计算"
            return done
    return rule_answer(catalog, question, shape, tables, limits)


def _cite(doc_id: str, cites: dict[str, int]) -> str:
    return f"[{cites[doc_id]}]" if doc_id in cites else ""


def _cell_answer(question: str, found: CellFound, cites: dict[str, int], reason: str | None) -> TableAnswer:
    row = found.row
    lines = [found.lead(question, _cite(row.doc_id, cites)), "", f"> {quoted_row(row)}"]
    if reason:
        lines += ["", f"（没有用 SQL 计算：{reason}；以上为检索到的表格行）"]
    lines += ["", OFFLINE_NOTE]
    highlight = [(0, row.columns.index(c)) for c in found.columns]
    data = payload(
        row.columns,
        [list(row.values)],
        title=row.title,
        types=row.types,
        source=row.source,
        highlight=highlight,
    )
    data.update(kind="cell", row=row.row, table_id=row.table_id, sheet=row.sheet, page=row.page,
                sql=None, fallback_reason=reason)  # fmt: skip
    return TableAnswer("\n".join(lines), "cell", False, data, None, reason)


def _sql_answer(done: SQLAnswer, cites: dict[str, int]) -> TableAnswer:
    result = done.result
    shown = [[_cell(v) for v in r] for r in result.rows[:10]]
    marks = "".join(sorted({_cite(t.doc_id, cites) for t in done.tables if t.doc_id in cites}))
    names = "、".join(f"《{t.title}》" for t in done.tables[:4])
    lines = [f"{done.lead}{marks}", "", f"来源：{names}", "", "```sql", done.sql, "```"]
    if shown:
        lines += ["", markdown_rows([result.columns, *shown])]
    if len(result.rows) > 10 or result.truncated:
        lines.append(f"（结果共 {len(result.rows)}{'+' if result.truncated else ''} 行，显示前 10 行）")
    if done.note:
        lines += ["", f"（{done.note}）"]
    if not done.llm_used:
        lines += ["", OFFLINE_NOTE]
    first = done.tables[0]
    data = payload(result.columns, result.rows, title=first.title, source=first.source)
    data.update(kind="sql", sql=done.sql, tables=[t.title for t in done.tables], fallback_reason=done.note)
    return TableAnswer("\n".join(lines), "sql", done.llm_used, data, done.sql, done.note)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")
    return "" if value is None else str(value)
