"""Offline SQL for the common shapes of a question over one table, written by rules.

Shapes: count (「有几套」「多少个」), average, sum, maximum/minimum and which row has it (「哪个专业
最低分最高」), top N (「单价最高的前3套」), each over one column and filtered by named values (a
cell text the question says: 「精装」「Europe」) and by comparisons (「单价低于5万」 → ``< 50000``,
numbers read by :mod:`zhiwen.chinese.numerals`); and the change of one cell across the tables
of one family (「2021到2023年四川省法学最低分的变化」: the same table for several years).

Two extreme words name a column and the operation in that order (「最低分**最高**」: the column
最低, the maximum); one extreme word is the operation.

Example::

    >>> shape = read_shape("单价低于5万的有几套？")
    >>> shape.op, shape.comparisons
    ('count', [('低于', 50000.0, 2)])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from zhiwen.tables.catalog import TableInfo, quote
from zhiwen.tables.question import column_score, norm

_EXTREMES = (
    ("max", "最高|最大|最多|最贵|最长|最晚|最新|最好"),
    ("min", "最低|最小|最少|最便宜|最短|最早|最差"),
)
_COUNT = re.compile(
    r"几个|几套|几款|几家|几所|几种|几条|几项|几位|几国|几部|多少个|多少套|多少款|多少家|多少种|"
    r"多少条|多少项|多少位|多少所|多少国|个数|数量|how many|number of",
    re.I,
)
_AVG = re.compile(r"平均|均值|average|mean", re.I)
_SUM = re.compile(r"总共|合计|总和|一共|加起来|总计|sum of|in total", re.I)
_TOP = re.compile(r"前\s*(\d+|[一二三四五六七八九十]+)\s*(?:名|个|套|款|家|位|项|条|所)?|top\s*(\d+)", re.I)
_WHICH = re.compile(r"哪|什么|谁|which|what", re.I)
_CHANGE = re.compile(r"变化|趋势|涨|降|增长|下降|上升|对比|比较|差多少")
_YEAR_RANGE = re.compile(r"((?:19|20)\d{2})\s*(?:年)?\s*(?:到|至|-|—|~|～)\s*((?:19|20)\d{2})")
_NUMBER = r"(\d+(?:\.\d+)?\s*[万亿千kK]?|[零一二两三四五六七八九十百千万亿点]+)"
_COMPARE = re.compile(
    r"(低于|小于|少于|不到|不足|不超过|不高于|至多|高于|大于|多于|超过|不低于|不少于|至少|等于|在)?\s*"
    + _NUMBER
    + r"\s*(?:元|块|万元|平米|平方米|㎡|天|分|个|岁|%|人)?\s*(以下|以上|以内|之内|及以上|及以下)?"
)
_LESS = {"低于", "小于", "少于", "不到", "不足", "以下"}
_AT_MOST = {"不超过", "不高于", "至多", "以内", "之内", "及以下"}
_MORE = {"高于", "大于", "多于", "超过", "以上"}
_AT_LEAST = {"不低于", "不少于", "至少", "及以上"}


@dataclass(slots=True)
class Shape:
    """What a question asks of a table, before a table is chosen."""

    op: str = ""  # count | avg | sum | max | min | top | change | ""
    which: bool = False  # asks which row (「哪个专业」), not just the value
    column_hint: str = ""  # an extreme word that names the column (「最低」 of 「最低分最高」)
    top_n: int = 0
    descending: bool = True
    comparisons: list[tuple[str, float, int]] = field(default_factory=list)  # (word, number, position)
    year_range: tuple[int, int] | None = None
    op_span: tuple[int, int] = (0, 0)  # where the operation's extreme word stands (not a column's)

    @property
    def aggregate(self) -> bool:
        return bool(self.op)


def _extremes(question: str) -> list[tuple[int, str, str]]:
    found = []
    for kind, pattern in _EXTREMES:
        found += [(m.start(), kind, m.group(0)) for m in re.finditer(pattern, question)]
    return sorted(found)


def _cn_number(text: str) -> float | None:
    from zhiwen.chinese.numerals import read_number

    t = text.strip().replace(",", "")
    if t[-1:] in ("k", "K"):
        t = t[:-1] + "千"
    return read_number(t)


def _comparisons(question: str) -> list[tuple[str, float, int]]:
    out: list[tuple[str, float, int]] = []
    for m in _COMPARE.finditer(question):
        before, number, after = m.group(1), m.group(2), m.group(3)
        word = before or after
        if not word or (word == "在" and not after):
            continue
        tail = question[m.end(2) : m.end(2) + 1]
        if tail == "年":  # a year, not a bound
            continue
        value = _cn_number(number)
        if value is not None:
            out.append((after if before == "在" else word, value, m.start()))
    return out


def _top_n(question: str) -> int:
    from zhiwen.chinese.numerals import cn_to_int

    m = _TOP.search(question)
    if not m:
        return 0
    raw = m.group(1) or m.group(2)
    return int(raw) if raw.isdigit() else (cn_to_int(raw) or 0)


def read_shape(question: str) -> Shape:
    """The shape of ``question`` (``op`` empty: no aggregate asked)."""
    shape = Shape(comparisons=_comparisons(question))
    extremes = _extremes(question)
    years = _YEAR_RANGE.search(question)
    if years and _CHANGE.search(question):
        shape.op, shape.year_range = "change", (int(years.group(1)), int(years.group(2)))
        return shape
    shape.which = bool(_WHICH.search(question))
    if len(extremes) >= 2:
        shape.column_hint = extremes[0][2]
    last = extremes[-1] if extremes else None
    if last is not None:
        shape.op_span = (last[0], last[0] + len(last[2]))
    shape.top_n = _top_n(question)
    if shape.top_n and last is not None:
        shape.op, shape.descending = "top", last[1] == "max"
    elif _COUNT.search(question):
        shape.op = "count"
    elif _AVG.search(question):
        shape.op = "avg"
    elif _SUM.search(question):
        shape.op = "sum"
    elif last is not None and _asks_extreme(question, last):
        shape.op = last[1]
    if shape.op in ("count", "avg", "sum") and last is not None and not _asks_extreme(question, last):
        shape.op_span = (0, 0)  # 「最低分的平均」: the extreme word names the column
    return shape


def _asks_extreme(question: str, last: tuple[int, str, str]) -> bool:
    """「最低分是多少」 names a column (a cell question); 「最贵的手机是哪款」「单价最高的」 and
    any extreme asked with 哪/谁/什么 ask for one."""
    after = question[last[0] + len(last[2]) :]
    return bool(_WHICH.search(question) or after.startswith("的"))


# -- a shape over a table → SQL ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RuleSQL:
    sql: str
    table: TableInfo
    column: str  # the column the answer is about ("" for a count)
    op: str
    filters: tuple[str, ...]  # the filters in words, for the answer


def target_column(table: TableInfo, question: str, shape: Shape) -> str:
    """The numeric column the question is about (the extreme-word hint counts first)."""
    numeric = table.numeric()
    if not numeric:
        return ""
    start, end = shape.op_span
    hinted = question[:start] + " " + question[end:]
    scored = sorted(((column_score(c, hinted), -i, c) for i, c in enumerate(numeric)), reverse=True)
    if scored[0][0] > 0:
        return scored[0][2]
    if re.search(r"贵|便宜|价", question):
        priced = [c for c in numeric if re.search(r"价|price|cost|费", c, re.I)]
        if priced:
            return priced[0]
    return numeric[0] if len(numeric) == 1 else ""


def which_column(table: TableInfo, question: str) -> str:
    """The text column a 「哪个…」 question asks for (「哪个小区」 → xiaoqu), else the key."""
    texts = [c for c, t in zip(table.columns, table.types, strict=True) if t == "text"]
    scored = sorted(((column_score(c, question), c) for c in texts), reverse=True)
    return scored[0][1] if scored and scored[0][0] > 0 else table.key_column


def _comparison_column(table: TableInfo, question: str, position: int, fallback: str) -> str:
    """The numeric column named just before a comparison (else the question's target)."""
    before = question[max(0, position - 12) : position + 2]
    scored = sorted(((column_score(c, before), c) for c in table.numeric()), reverse=True)
    return scored[0][1] if scored and scored[0][0] > 0 else fallback


def _operator(word: str) -> str:
    if word in _LESS:
        return "<"
    if word in _AT_MOST:
        return "<="
    if word in _MORE:
        return ">"
    if word in _AT_LEAST:
        return ">="
    return "="


def where_clause(
    table: TableInfo, question: str, shape: Shape, target: str, named: list[tuple[str, str]]
) -> tuple[list[str], list[str]]:
    """SQL conditions and their words: named cell values (``named``: column, value) and bounds."""
    sql: list[str] = []
    words: list[str] = []
    for column, value in named:
        sql.append(f"{quote(column)} = '{value.replace(chr(39), chr(39) * 2)}'")
        words.append(f"{column} 为「{value}」")
    for word, number, position in shape.comparisons:
        column = _comparison_column(table, question, position, target)
        if not column:
            continue
        op = _operator(word)
        shown = int(number) if float(number).is_integer() else number
        sql.append(f"{quote(column)} {op} {shown}")
        words.append(f"{column} {op} {shown}")
    return sql, words


def named_values(values: dict[str, list[str]], question: str, skip: set[str]) -> list[tuple[str, str]]:
    """(column, value) of the cell texts the question says, longest first, none overlapping."""
    q = norm(question)
    found: list[tuple[int, str, str]] = []
    for column, texts in values.items():
        if column in skip:
            continue
        for text in texts:
            t = norm(text)
            if len(t) >= 2 and not t.isdigit() and t in q:
                found.append((len(t), column, text))
    out: list[tuple[str, str]] = []
    taken: list[str] = []
    for _, column, text in sorted(found, reverse=True):
        t = norm(text)
        if any(t in other for other in taken) or any(c == column for c, _ in out):
            continue
        taken.append(t)
        out.append((column, text))
    return out


def shape_sql(table: TableInfo, question: str, shape: Shape, named: list[tuple[str, str]]) -> RuleSQL | None:
    """The SQL of ``shape`` over ``table`` (None: the shape needs a column the question does
    not name)."""
    target = target_column(table, question, shape)
    where, words = where_clause(table, question, shape, target, named)
    cond = " WHERE " + " AND ".join(where) if where else ""
    t, key = quote(table.name), quote(which_column(table, question) if shape.which else table.key_column)
    if shape.op == "count":
        return RuleSQL(f'SELECT COUNT(*) AS "数量" FROM {t}{cond}', table, "", "count", tuple(words))
    if not target:
        return None
    col = quote(target)
    extra = " AND ".join([*where, f"{col} IS NOT NULL"])
    if shape.op in ("avg", "sum"):
        fn = "ROUND(AVG({}), 2)" if shape.op == "avg" else "SUM({})"
        label = quote(("平均 " if shape.op == "avg" else "合计 ") + target)
        return RuleSQL(
            f"SELECT {fn.format(col)} AS {label} FROM {t}{cond}", table, target, shape.op, tuple(words)
        )
    if shape.op in ("max", "min"):
        agg = "MAX" if shape.op == "max" else "MIN"
        sql = (
            f"SELECT _row, {key}, {col} FROM {t} WHERE {extra} AND {col} = "
            f"(SELECT {agg}({col}) FROM {t} WHERE {extra}) ORDER BY _row"
        )
        return RuleSQL(sql, table, target, shape.op, tuple(words))
    if shape.op == "top":
        order = "DESC" if shape.descending else "ASC"
        limit = max(1, shape.top_n)
        sql = f"SELECT _row, {key}, {col} FROM {t} WHERE {extra} ORDER BY {col} {order} LIMIT {limit}"
        return RuleSQL(sql, table, target, "top", tuple(words))
    return None
