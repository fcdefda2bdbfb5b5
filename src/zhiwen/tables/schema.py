"""The wire schema of a table answer's table (``Answer.data["table"]``): one model for every door.

REST (``data.table``), the SSE ``done`` event, the OpenAI front door's ``zhiwen.table`` and the
CLI read the payload :func:`zhiwen.tables.render.payload` builds (and :mod:`zhiwen.tables.answer`
completes) through :class:`TableData`, so the fields are named and typed once.

Example::

    >>> t = table_data({"title": "2023年四川省录取分数统计", "columns": ["专业", "最低分"],
    ...                 "rows": [["法学", 612]], "kind": "cell", "highlight": [[0, 1]]})
    >>> t.kind, t.rows[0][1]
    ('cell', 612)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

Cell = int | float | str | None


class TableData(BaseModel):
    """The table an answer stands on: the cell's row (``kind`` cell) or the SQL result (sql)."""

    kind: Literal["cell", "sql"] | None = Field(None, description="cell：取自表格的单元格；sql：按 SQL 计算")
    title: str = Field("", description="表格名称（标题或所在页面的标题）")
    source: str = Field("", description="来源文件")
    columns: list[str] = Field(default_factory=list, description="列名（多级表头合并为「上级 下级」）")
    types: list[str] = Field(default_factory=list, description="各列类型：int、float、date、text")
    rows: list[list[Cell]] = Field(default_factory=list, description="行（至多 200 行）")
    total_rows: int = Field(0, description="结果的总行数")
    highlight: list[list[int]] = Field(default_factory=list, description="答案所在的单元格：[行, 列]")
    row: int | None = Field(None, description="单元格答案：表格中的行号（从 1 起）")
    table_id: str | None = None
    sheet: str | None = Field(None, description="工作表名称")
    page: int | None = Field(None, description="页码、幻灯片或工作表序号")
    sql: str | None = Field(None, description="执行的 SQL（只读，已校验）")
    tables: list[str] = Field(default_factory=list, description="SQL 用到的表格")
    fallback_reason: str | None = Field(None, description="未采用 SQL 结果（或未用大模型写的 SQL）的原因")


def table_data(data: Mapping[str, Any] | None) -> TableData | None:
    """``Answer.data["table"]`` as a :class:`TableData` (None: not a table answer, or a payload
    this schema cannot read — an interface then shows the text alone)."""
    if not data:
        return None
    try:
        return TableData.model_validate(dict(data))
    except ValidationError:
        return None


def answer_table(answer_data: Mapping[str, Any]) -> TableData | None:
    """The table of an answer's ``data`` (its ``table`` field)."""
    found = answer_data.get("table")
    return table_data(found) if isinstance(found, Mapping) else None
