"""Check a SELECT before it runs: one read-only statement over known tables and columns.

A model's SQL (or a rule's) is parsed with ``sqlglot`` (SQLite dialect) and refused, with a
Chinese reason, when it is not exactly one SELECT (a UNION of SELECTs included), names a
table the question may not read or a column that table lacks, or calls a function outside a
short list of aggregates and scalar helpers (nothing that loads an extension, reads a file or
makes blobs). Its LIMIT is set to at most ``limit``. The engine's authorizer
(:mod:`zhiwen.tables.catalog`) refuses writes and other tables again underneath.

Example::

    >>> checked = check_sql('SELECT MAX("最低") FROM t_ab', {"t_ab": ["专业", "最低"]}, limit=200)
    >>> checked.sql
    'SELECT MAX("最低") FROM t_ab LIMIT 200'
    >>> check_sql("DROP TABLE t_ab", {"t_ab": ["专业"]}, limit=200)
    Traceback (most recent call last):
    SQLRejected: 只允许一条 SELECT 查询
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: functions a table question may call (lower case); anything else is refused
ALLOWED_FUNCTIONS = frozenset(
    {
        "count", "sum", "avg", "min", "max", "total", "round", "abs", "lower", "upper", "length",
        "substr", "substring", "coalesce", "ifnull", "nullif", "cast", "trim", "replace", "instr",
        "group_concat", "groupconcat", "strftime", "date", "julianday", "iif", "if", "case",
        "stddev", "median", "distinct", "countif", "avgif", "sumif",
    }
)  # fmt: skip


class SQLRejected(Exception):
    """The SQL failed a check; ``reason`` says which, in Chinese."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CheckedSQL:
    sql: str  # the statement as it will run (LIMIT set)
    tables: tuple[str, ...]  # the tables it reads


def check_sql(sql: str, known: Mapping[str, Sequence[str]], *, limit: int) -> CheckedSQL:
    """``sql`` checked against ``known`` (table → columns); see the module docstring."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    text = sql.strip().rstrip(";").strip()
    if not text:
        raise SQLRejected("没有 SQL")
    try:
        statements = [s for s in sqlglot.parse(text, read="sqlite") if s is not None]
    except ParseError as exc:
        raise SQLRejected(f"SQL 无法解析：{str(exc).splitlines()[0][:120]}") from exc
    if len(statements) != 1 or not isinstance(statements[0], (exp.Select, exp.Union)):
        raise SQLRejected("只允许一条 SELECT 查询")
    tree = statements[0]
    _no_writes(tree)
    tables = _check_tables(tree, known)
    _check_columns(tree, known, tables)
    _check_functions(tree)
    return CheckedSQL(_limited(tree, limit).sql(dialect="sqlite"), tuple(sorted(tables)))


def _no_writes(tree: object) -> None:
    from sqlglot import exp

    forbidden = (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Command, exp.Alter)
    assert isinstance(tree, exp.Expression)
    if any(isinstance(node, forbidden) for node in tree.walk()):
        raise SQLRejected("只允许只读查询")


def _check_tables(tree: object, known: Mapping[str, Sequence[str]]) -> set[str]:
    from sqlglot import exp

    assert isinstance(tree, exp.Expression)
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    used: set[str] = set()
    for table in tree.find_all(exp.Table):
        name = table.name
        if name in ctes:
            continue
        if table.args.get("db") or table.args.get("catalog"):
            raise SQLRejected(f"不允许访问其他数据库：{table.sql()}")
        if name not in known:
            raise SQLRejected(f"未知的表：{name}")
        used.add(name)
    if not used:
        raise SQLRejected("查询没有读取任何表格")
    return used


def _check_columns(tree: object, known: Mapping[str, Sequence[str]], tables: set[str]) -> None:
    from sqlglot import exp

    assert isinstance(tree, exp.Expression)
    columns = {"_row"} | {c for t in tables for c in known[t]}
    aliases = {a.alias for a in tree.find_all(exp.Alias)} | {c.alias_or_name for c in tree.find_all(exp.CTE)}
    for column in tree.find_all(exp.Column):
        name = column.name
        if name in columns or name in aliases or name == "*":
            continue
        raise SQLRejected(f"未知的列：{name}")


def _check_functions(tree: object) -> None:
    from sqlglot import exp

    assert isinstance(tree, exp.Expression)
    operators = (exp.Binary, exp.Connector, exp.Predicate, exp.Unary, exp.Paren)
    for func in tree.find_all(exp.Func):
        if isinstance(func, operators) and not isinstance(func, exp.Anonymous):
            continue  # AND, =, IN, NOT …: operators sqlglot models as functions
        name = (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()
        if name not in ALLOWED_FUNCTIONS:
            raise SQLRejected(f"不允许的函数：{name}")


def _limited(tree: object, limit: int) -> Any:
    from sqlglot import exp

    assert isinstance(tree, (exp.Select, exp.Union))
    current = tree.args.get("limit")
    value = None
    if current is not None:
        try:
            value = int(current.expression.name)
        except (AttributeError, TypeError, ValueError):
            value = None
    if value is None or value > limit:
        return tree.limit(limit, copy=True)
    return tree
