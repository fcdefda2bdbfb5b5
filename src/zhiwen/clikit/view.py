"""Terminal views shared by the CLI and the apps: tables that stay readable at 80 columns, the
sources of an answer (file and page), and how an answer was made, in Chinese.

Rich cuts a cell that does not fit with "…" (a column's default overflow), and a run of Chinese
has no space to wrap at, so in an 80-column terminal a table of Chinese cells lost most of its
text (「OCR… 新 … 已恢…」). Every table the CLI prints goes through :func:`fit`: its cells fold
(break anywhere) instead of being cut, and a table whose columns cannot each get a readable width
is printed as one key/value record per row instead.

Example::

    table = Table(title="来源")
    for name in ("#", "标题", "出处"):
        table.add_column(name)
    table.add_row("1", "建立知识库与导入格式", "02_建立知识库.md · 第 3 页")
    console.print(fit(table, console))            # a table when it fits, records when not
    console.print(sources_table(answer.citations))  # file, page and section of each source
    how_answered(answer)                          # '回答方式：摘录（未配置大模型）'
    for line in answer_notes(answer):             # FAQ badge, 您是不是想问：, 回答编号：…
        console.print(line)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from zhiwen.answer.grounding import GROUNDING_REASONS
from zhiwen.answer.model import Answer, Citation

#: the width (in cells: 5 Chinese characters) a wrapping column needs to stay readable
MIN_READABLE = 10

#: why an answer was written without the LLM (``Answer.extractive_reason``), as a reader says it
EXTRACTIVE_REASONS = {
    "no_llm": "未配置大模型",
    "no_results": "没有检索到相关内容",
    "empty": "大模型返回了空内容",
    "error": "大模型调用出错",
    "llm_error": "大模型调用失败",
    "timeout": "大模型响应超时",
    "auth": "大模型鉴权失败",
    "rate_limited": "大模型请求受限",
    "http_error": "大模型服务返回错误",
    "unreachable": "无法连接大模型服务",
    "bad_json": "大模型回复格式有误",
    "bad_reply": "大模型回复格式有误",
    "breaker_open": "大模型连续失败，暂停调用",
    "busy": "大模型繁忙",
    "missing_key_numbers": "大模型回答缺少关键数字",
    "number_mismatch": "大模型回答的数字与计算结果不符",
    "too_short": "大模型回答过短",
    # the model answered, but not so that it could be shown as grounded (#31)
    **GROUNDING_REASONS,
}
#: the answer's route (``Answer.route``) as a reader says it; other routes are not shown
ROUTES = {"general": "通用问答", "list": "推荐列表", "detail": "做法详情"}


def reason_text(code: str | None) -> str:
    """``"no_llm"`` → ``"未配置大模型"``; a code not listed still reads as Chinese."""
    return EXTRACTIVE_REASONS.get(code or "no_llm", "未使用大模型")


def how_answered(answer: Answer) -> str:
    """「路由：通用问答 · 回答方式：摘录（未配置大模型）」 (plain text, no markup)."""
    if answer.kind == "faq":
        return "回答方式：FAQ 标准答案（逐字给出，未使用大模型）"
    how = "大模型生成" if answer.llm_used else f"摘录（{reason_text(answer.extractive_reason)}）"
    route = ROUTES.get(answer.route or "")
    return (f"路由：{route} · " if route else "") + f"回答方式：{how}"


def answer_notes(answer: Answer) -> list[str]:
    """Rich markup lines under an answer, in every app's view: the 「FAQ」 badge with the entry's
    question, 「您是不是想问：」 with the near-miss FAQ questions, and 「回答编号：…」 (what
    ``zhiwen feedback`` rates)."""
    lines: list[str] = []
    if answer.faq is not None:
        lines.append(
            f"[bold black on green] FAQ [/] [green]{escape(answer.faq.question)}[/]"
            f" [dim]（匹配度 {answer.faq.score:.2f}）[/]"
        )
    if answer.suggestions:
        lines.append("[bold]您是不是想问：[/]")
        lines.extend(f"  · {escape(q)}" for q in answer.suggestions)
    if answer.answer_id:
        lines.append(
            f"[dim]回答编号：{answer.answer_id}（评价：zhiwen feedback {answer.answer_id} up|down）[/]"
        )
    return lines


# -- tables ------------------------------------------------------------------------------------
def fold(table: Table) -> Table:
    """Every column of ``table`` wraps and folds long runs instead of cutting them with "…"."""
    for column in table.columns:
        column.overflow = "fold"
        column.no_wrap = False
    return table


def _width(console: Console, renderable: RenderableType) -> int:
    """The widest line ``renderable`` takes when nothing constrains it."""
    if renderable is None or renderable == "":
        return 0
    options = console.options.update_width(10_000)
    return Measurement.get(console, options, renderable).maximum


def _frame(table: Table, columns: int) -> int:
    """Cells a table spends on padding and borders around ``columns`` columns."""
    _, right, _, left = table.padding
    lines = (columns + 1 if table.show_edge else columns - 1) if table.box else 0
    return columns * (left + right) + max(lines, 0)


def _needs(table: Table, console: Console) -> tuple[int, int]:
    """(natural width, narrowest readable width) of ``table``."""
    natural = readable = 0
    for column in table.columns:
        head = _width(console, column.header) if table.show_header else 0
        widest = max((_width(console, cell) for cell in column.cells), default=0)
        natural += max(head, widest)
        readable += max(head, min(widest, column.min_width or MIN_READABLE))
    frame = _frame(table, len(table.columns))
    return natural + frame, readable + frame


def fit(table: Table, console: Console, width: int | None = None) -> RenderableType:
    """``table`` with folding cells when its columns fit ``width`` (default: the console's),
    else the same rows as key/value records (:func:`records`). A column's ``min_width`` is the
    width it needs to be read (default :data:`MIN_READABLE`)."""
    width = width or console.width
    _, readable = _needs(table, console)
    if readable <= width:
        return fold(table)
    return records(table)


def _blank(cell: RenderableType) -> bool:
    return cell is None or (isinstance(cell, str | Text) and not str(cell).strip())


def records(table: Table) -> Table:
    """The rows of ``table`` one below the other, each as ``header: value`` lines."""
    out = Table(
        title=table.title,
        caption=table.caption,
        show_header=False,
        box=box.SIMPLE_HEAD if table.box else None,
        title_justify=table.title_justify,
        expand=False,
        # as wide as its title, which would otherwise wrap inside two narrow columns
        min_width=cell_len(Text.from_markup(table.title).plain) if isinstance(table.title, str) else None,
    )
    out.add_column(style="bold", no_wrap=True)
    out.add_column(overflow="fold")
    headers = [column.header for column in table.columns]
    rows = list(zip(*(list(column.cells) for column in table.columns), strict=True))
    for i, row in enumerate(rows):
        if i:
            out.add_section()
        for header, cell in zip(headers, row, strict=True):
            if not _blank(cell):
                out.add_row(header, cell)
    return out


def kv_table(title: str | None, rows: Iterable[tuple[str, Any]]) -> Table:
    """A two-column key/value table whose values fold (``None`` shows as 「—」)."""
    table = Table(title=title, show_header=False)
    table.add_column("项", style="bold", no_wrap=True)
    table.add_column("值", overflow="fold")
    for key, value in rows:
        table.add_row(escape(key), "—" if value is None else escape(str(value)))
    return table


# -- sources -----------------------------------------------------------------------------------
def page_text(page: int | None, page_end: int | None, fmt: str = "") -> str:
    """``第3页``, ``第3–5页``, ``第2张幻灯片`` (pptx), ``第1个工作表`` (xlsx); "" without a page."""
    if page is None:
        return ""
    if fmt == "pptx":
        return f"第{page}张幻灯片"
    if fmt == "xlsx":
        return f"第{page}个工作表"
    if page_end is not None and page_end != page:
        return f"第{page}–{page_end}页"
    return f"第{page}页"


def where(citation: Citation | Mapping[str, Any]) -> str:
    """Where a source is: its file, page and section, e.g. ``手册.pdf · 第3页 · 第二章 > 导入``
    (a citation, or one as an app's ``data`` carries it)."""
    if not isinstance(citation, Citation):
        citation = Citation.model_validate({"id": "", **citation})
    fmt = str(citation.metadata.get("format") or "")
    parts = (citation.source, page_text(citation.page, citation.page_end, fmt), citation.section)
    return " · ".join(p for p in parts if p) or "—"


def sources_table(citations: Sequence[Citation], console: Console) -> RenderableType:
    """The answer's sources: number, title, file · page · section, score (never hashes/bytes)."""
    table = Table(title="来源", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("标题")
    table.add_column("出处")
    table.add_column("分数", justify="right")
    for i, c in enumerate(citations, 1):
        score = "—" if c.score is None else f"{c.score:.3f}"
        table.add_row(str(i), escape(c.title or c.id), escape(where(c)), score)
    return fit(table, console)
