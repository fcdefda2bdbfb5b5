"""Arithmetic over a KB's tables: SQL by the model or by rules, checked, run, and said with its result.

With an LLM the model writes one SQLite SELECT for the question over the schemas of the tables
retrieval found (their header paths and a few rows); offline the rules of
:mod:`zhiwen.tables.rules` write it. Either way the SQL passes :func:`~.guard.check_sql`
before it runs read-only in the KB's catalogue with a row limit and a deadline
(:meth:`~.catalog.TableCatalog.query`), and the answer shows the SQL and its result. A query
that fails any step raises :class:`NoSQLAnswer` with the reason, and the caller answers from
the row instead, saying why.

Example::

    >>> done = sql_answer(catalog, question, rows, llm=None, limits=SQLLimits())
    >>> done.lead
    '2023年四川省物理类最低分最高的专业是 **法学**（理工/物理类 最低 650）'
    >>> done.sql
    'SELECT _row, "专业名称", "理工/物理类 最低" FROM "t_…" WHERE … LIMIT 200'
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zhiwen.tables.catalog import QueryFailed, QueryResult, TableCatalog, TableInfo, quote, sql_name
from zhiwen.tables.guard import SQLRejected, check_sql
from zhiwen.tables.question import RowRef, column_score, context_score, norm, subject_of, years
from zhiwen.tables.rules import RuleSQL, Shape, named_values, shape_sql

log = logging.getLogger(__name__)

_UNIT = re.compile(r"(?:几|多少)(套|个|款|家|所|种|条|项|位|国|部)")
_SQL_BLOCK = re.compile(r"```(?:sql|sqlite)?\s*(.+?)```", re.S | re.I)
_DISTINCT_CACHE: dict[tuple[str, str, str], list[str]] = {}


class NoSQLAnswer(Exception):
    """No SQL answer: ``reason`` (Chinese) says which step failed."""

    def __init__(self, reason: str, sql: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sql = sql


@dataclass(frozen=True, slots=True)
class SQLLimits:
    row_limit: int = 200
    timeout_ms: int = 2000


@dataclass(slots=True)
class SQLAnswer:
    lead: str
    sql: str
    result: QueryResult
    tables: list[TableInfo]
    llm_used: bool = False
    note: str | None = None  # why the model's SQL was not the one that ran


# -- choosing the tables -------------------------------------------------------------------------
#: the first retrieved documents whose other tables are candidates too
SIBLING_DOCS = 3


def ranked_tables(catalog: TableCatalog, question: str, rows: Sequence[RowRef]) -> list[TableInfo]:
    """The retrieved rows' tables and the other tables of their first documents (a page's
    table retrieval found no row of: 「理工 最低」 for a question of 物理类), the best fit for the
    question first."""
    order: dict[str, int] = {}
    docs: list[str] = []
    for row in rows:
        order.setdefault(sql_name(row.table_hash), row.rank)
        if row.doc_id not in docs:
            docs.append(row.doc_id)
    after = max(order.values(), default=0) + 1
    for table in catalog.tables():
        if table.doc_id in docs[:SIBLING_DOCS]:
            order.setdefault(table.name, after)
    infos = catalog.tables(order)

    def fit(t: TableInfo) -> float:
        columns = max((column_score(c, question) for c in t.columns), default=0.0)
        return context_score(t.title, question) + 0.5 * columns + 1.0 / (1 + order[t.name])

    return sorted(infos, key=fit, reverse=True)


def distinct_values(catalog: TableCatalog, table: TableInfo, column: str) -> list[str]:
    """The distinct texts of one column, cached by table content (the table's SQL name)."""
    key = (str(catalog.path), table.name, column)
    if key not in _DISTINCT_CACHE:
        if len(_DISTINCT_CACHE) > 2000:
            _DISTINCT_CACHE.clear()
        _DISTINCT_CACHE[key] = catalog.distinct_values(table, column)
    return _DISTINCT_CACHE[key]


def _text_values(catalog: TableCatalog, table: TableInfo) -> dict[str, list[str]]:
    return {
        c: distinct_values(catalog, table, c)
        for c, t in zip(table.columns, table.types, strict=True)
        if t in ("text", "date")
    }


def _run(
    catalog: TableCatalog, sql: str, tables: Sequence[TableInfo], limits: SQLLimits
) -> tuple[str, QueryResult]:
    known = {t.name: list(t.columns) for t in tables}
    try:
        checked = check_sql(sql, known, limit=limits.row_limit)
        result = catalog.query(
            checked.sql, limit=limits.row_limit, timeout_ms=limits.timeout_ms, allowed=set(known)
        )
    except SQLRejected as exc:
        raise NoSQLAnswer(f"SQL 未通过检查：{exc.reason}", sql) from exc
    except QueryFailed as exc:
        raise NoSQLAnswer(exc.reason, sql) from exc
    return checked.sql, result


# -- rules ---------------------------------------------------------------------------------------
def rule_answer(
    catalog: TableCatalog, question: str, shape: Shape, tables: Sequence[TableInfo], limits: SQLLimits
) -> SQLAnswer:
    """The offline answer of an aggregate ``shape`` over the best table."""
    if shape.op == "change":
        return change_answer(catalog, question, tables, limits)
    for table in tables[:2]:
        skip = {table.key_column} if shape.which else set()
        named = named_values(_text_values(catalog, table), question, skip)
        rule = shape_sql(table, question, shape, named)
        if rule is None:
            continue
        sql, result = _run(catalog, rule.sql, [table], limits)
        return SQLAnswer(_rule_lead(question, rule, result), sql, result, [table])
    raise NoSQLAnswer("问题里没有可计算的列（规则无法确定要统计哪一列）")


def _number(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def _rule_lead(question: str, rule: RuleSQL, result: QueryResult) -> str:
    subject = subject_of(question)
    if not result.rows:
        return f"{subject}：没有符合条件的行"
    if rule.op == "count":
        unit = _UNIT.search(question)
        return f"{subject}：共 **{_number(result.rows[0][0])}** {unit.group(1) if unit else '行'}"
    if rule.op in ("avg", "sum"):
        return f"{subject}：**{_number(result.rows[0][0])}**（{rule.column}）"
    picks = [f"**{r[1]}**（{rule.column} {_number(r[2])}）" for r in result.rows]
    if rule.op == "top":
        return f"{subject}：\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(picks, 1))
    return f"{subject}：{'、'.join(picks[:10])}"


def change_answer(
    catalog: TableCatalog, question: str, tables: Sequence[TableInfo], limits: SQLLimits
) -> SQLAnswer:
    """One cell across the tables of a family (the same table for several years)."""
    if not tables:
        raise NoSQLAnswer("没有找到对应的表格")
    top = tables[0]
    family = _family(catalog, top, question)
    if len(family) < 2:
        raise NoSQLAnswer("没有找到不同年份的同类表格")
    named = named_values({top.key_column: _distinct_keys(catalog, top)}, question, set())
    if not named:
        raise NoSQLAnswer("问题里没有说明是哪一行")
    value = named[0][1]
    scored = sorted(((column_score(c, question), c) for c in top.numeric()), reverse=True)
    if not scored or scored[0][0] <= 0:
        raise NoSQLAnswer("问题里没有说明是哪一列")
    column = scored[0][1]
    parts = [
        f"SELECT '{year}' AS \"年份\", {quote(column)} AS {quote(column)} FROM {quote(t.name)} "
        f"WHERE {quote(t.key_column)} = '{value}'"
        for year, t in family
        if column in t.columns
    ]
    sql, result = _run(catalog, " UNION ALL ".join(parts), [t for _, t in family], limits)
    if not result.rows:
        raise NoSQLAnswer("各年份的表格中都没有这一行", sql)
    steps = " → ".join(
        f"{r[0]}年 **{_number(r[1])}**" if r[1] is not None else f"{r[0]}年 无" for r in result.rows
    )
    numbers = [r[1] for r in result.rows if isinstance(r[1], (int, float))]
    delta = ""
    if len(numbers) >= 2:
        d = numbers[-1] - numbers[0]
        delta = f"（{result.rows[0][0]}到{result.rows[-1][0]}年{'+' if d >= 0 else ''}{_number(d)}）"
    lead = f"{subject_of(question)}：{steps}{delta}（{top.key_column} {value}；{column}）"
    return SQLAnswer(lead, sql, result, [t for _, t in family])


def _distinct_keys(catalog: TableCatalog, table: TableInfo) -> list[str]:
    return distinct_values(catalog, table, table.key_column)


def _family(catalog: TableCatalog, top: TableInfo, question: str) -> list[tuple[str, TableInfo]]:
    """(year, table) of the tables named like ``top`` but for another year, in the asked range."""
    from zhiwen.tables.rules import _YEAR_RANGE

    stem = norm(re.sub(r"(?:19|20)\d{2}", "", top.title))
    m = _YEAR_RANGE.search(question)
    wanted = range(int(m.group(1)), int(m.group(2)) + 1) if m else None
    out: dict[str, TableInfo] = {}
    for t in catalog.tables():
        if norm(re.sub(r"(?:19|20)\d{2}", "", t.title)) != stem:
            continue
        for year in years(t.title):
            if wanted is None or int(year) in wanted:
                out.setdefault(year, t)
    return sorted(out.items())


# -- the model writes the SQL ---------------------------------------------------------------------
def schema_text(catalog: TableCatalog, tables: Sequence[TableInfo], sample_rows: int = 3) -> str:
    """The tables as the model sees them: name, title, columns with types, a few rows."""
    blocks = []
    for t in tables:
        cols = ", ".join(f"{quote(c)} {k}" for c, k in zip(t.columns, t.types, strict=True))
        sample = catalog.query(
            f"SELECT * FROM {quote(t.name)} LIMIT {sample_rows}",
            limit=sample_rows,
            timeout_ms=500,
            allowed={t.name},
        )
        rows = "\n".join("  " + " | ".join(str(v) for v in r) for r in sample.rows)
        blocks.append(
            f'表 {t.name}（《{t.title}》，{t.rows} 行）列："_row" INTEGER, {cols}\n示例行：\n{rows}'
        )
    return "\n\n".join(blocks)


def llm_answer(
    catalog: TableCatalog, question: str, tables: Sequence[TableInfo], llm: Any, limits: SQLLimits
) -> SQLAnswer:
    """The model's SQL for ``question`` over ``tables`` (at most three), checked and run."""
    from zhiwen.errors import LLMError
    from zhiwen.llm import llm_purpose

    shown = list(tables[:3])
    messages = [
        {
            "role": "system",
            "content": "你把关于表格的问题写成一条 SQLite 的 SELECT 查询。只能使用给出的表和列，"
            "列名和表名用双引号，字符串用单引号。只输出 SQL，放在 ```sql 代码块中。",
        },
        {"role": "user", "content": f"{schema_text(catalog, shown)}\n\n问题：{question}"},
    ]
    try:
        with llm_purpose("tables.sql"):
            reply = llm.chat(messages, timeout_s=limits.timeout_ms / 1000 + 20)
    except LLMError as exc:
        raise NoSQLAnswer(f"大模型没有写出 SQL（{type(exc).__name__}）") from exc
    text = reply.content or ""
    m = _SQL_BLOCK.search(text)
    sql = (m.group(1) if m else text).strip()
    sql, result = _run(catalog, sql, shown, limits)
    return SQLAnswer(_result_lead(question, result), sql, result, shown, llm_used=True)


def _result_lead(question: str, result: QueryResult) -> str:
    subject = subject_of(question)
    if not result.rows:
        return f"{subject}：没有符合条件的行"
    first = result.rows[0]
    if len(first) == 1 and len(result.rows) == 1:
        return f"{subject}：**{_number(first[0])}**"
    shown = [v for c, v in zip(result.columns, first, strict=True) if c != "_row"]
    lead = f"{subject}：**{_number(shown[0])}**" if shown else subject
    rest = [f"{c} {_number(v)}" for c, v in zip(result.columns, first, strict=True) if c != "_row"][1:]
    return lead + (f"（{'；'.join(rest)}）" if rest else "") + ("等" if len(result.rows) > 1 else "")
