"""``zhiwen kb questions KB`` and ``zhiwen kb stats KB``: what people ask a KB, from the shell.

The home's question log (:mod:`zhiwen.questionlog`, the one the server writes), read here
directly: on the command line whoever can read the home is its owner.

Example::

    zhiwen kb questions shop --status unanswered --days 7
    zhiwen kb questions shop --status disliked
    zhiwen kb questions shop --export questions.csv
    zhiwen kb stats shop --days 30
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, cast, get_args

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.cli.kb_curation import JSON_OPT, KB_ARG
from zhiwen.cli.kb_group import kb_app
from zhiwen.clikit.console import console, print_json, run_cli, snippet
from zhiwen.clikit.view import fit
from zhiwen.errors import InvalidParameter
from zhiwen.questionlog import ExportFormat, QuestionLog
from zhiwen.questionlog.model import Status

TYPE_LABELS = {
    "faq": "FAQ",
    "generated": "生成",
    "extractive": "摘录",
    "refused": "拒答",
    "table": "表格",
    "tool": "工具",
}


@contextmanager
def _question_log() -> Iterator[QuestionLog]:
    from zhiwen.config import get_settings
    from zhiwen.questionlog import open_question_log

    with open_question_log(get_settings()) as log:
        yield log


def _check_kb(name: str) -> None:
    from zhiwen.errors import kb_not_found
    from zhiwen.kb import list_kbs

    if name not in list_kbs():
        raise kb_not_found(name)


def _rating(q: dict[str, Any]) -> str:
    marks = ("👍" * q["up"]) + ("👎" * q["down"])
    reasons = "、".join(f["reason_label"] or "" for f in q["feedback"] if f.get("reason_label"))
    return f"{marks} {reasons}".strip()


def _print_questions(name: str, status: str, items: list[dict[str, Any]], total: int) -> None:
    titles = {"all": "全部提问", "unanswered": "未答出的提问", "disliked": "被点踩的回答"}
    if not items:
        console.print(f"[dim]知识库「{escape(name)}」没有{titles[status]}[/]")
        return
    table = Table(title=f"知识库「{name}」的{titles[status]}（共 {total} 条）")
    for col in ("时间", "应用", "提问", "方式", "未答原因", "评价", "回答编号"):
        table.add_column(col)
    for q in items:
        table.add_row(
            datetime.fromtimestamp(q["at"]).strftime("%m-%d %H:%M"),
            escape(q["app"]),
            escape(snippet(q["question"], 40)),
            TYPE_LABELS.get(q["answer_type"], q["answer_type"]),
            escape(q["unanswered_label"] or ""),
            escape(_rating(q)),
            q["answer_id"],
        )
    console.print(fit(table, console))


def kb_questions(
    name: str = KB_ARG,
    status: str = typer.Option(
        "all", "--status", "-s", help="all（全部）| unanswered（未答出）| disliked（被点踩）"
    ),
    days: int | None = typer.Option(None, "--days", "-d", min=1, help="最近几天（含今天；默认全部）"),
    app: str | None = typer.Option(None, "--app", help="只看这个应用的提问"),
    limit: int = typer.Option(50, "--limit", "-n", min=1, max=500, help="最多显示几条"),
    export: Path | None = typer.Option(None, "--export", help="导出到文件（.csv 或 .jsonl）"),
    as_json: bool = JSON_OPT,
) -> None:
    """提问记录：全部、未答出、被点踩的提问；可导出为 CSV/JSONL。"""
    from zhiwen.owner.questions import log_window, question_out

    _check_kb(name)
    with _question_log() as log:
        window = log_window(log, days=days, app=app)
        if export is not None:
            _export(log, name, window, export, as_json)
            return
        page = log.questions(name, window, _status(status), limit=limit)
        items = [question_out(q) for q in page.items]
    if as_json:
        print_json({"items": items, "total": page.total})
        return
    _print_questions(name, status, items, page.total)


def _status(value: str) -> Status:
    for status in get_args(Status):
        if value == status:
            return cast(Status, status)
    raise InvalidParameter(
        f"bad --status {value!r}", message=f"--status 取值无效：{value}（可选 all、unanswered、disliked）"
    )


def _export(log: QuestionLog, name: str, window: Any, path: Path, as_json: bool) -> None:
    fmt: ExportFormat = "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        for chunk in log.export(name, window, fmt):
            out.write(chunk)
    if as_json:
        print_json({"file": str(path), "format": fmt})
        return
    console.print(f"已导出知识库「{escape(name)}」的提问记录到 {escape(str(path))}")


def _rate(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f}"


def kb_stats(
    name: str = KB_ARG,
    days: int = typer.Option(7, "--days", "-d", min=1, help="最近几天（含今天）"),
    app: str | None = typer.Option(None, "--app", help="只看这个应用"),
    as_json: bool = JSON_OPT,
) -> None:
    """使用统计：每天的提问数、答出率、FAQ 命中率、👍/👎、大模型调用与 token、延迟 p50/p95。"""
    from zhiwen.owner.questions import log_window

    _check_kb(name)
    with _question_log() as log:
        window = log_window(log, days=days, app=app)
        stats = log.stats(name, window).to_json()
    if as_json:
        print_json(stats)
        return
    table = Table(title=f"知识库「{name}」最近 {days} 天")
    for col in (
        "日期",
        "提问",
        "答出率",
        "FAQ 命中率",
        "👍",
        "👎",
        "大模型调用",
        "tokens",
        "p50 ms",
        "p95 ms",
    ):
        table.add_column(col)
    for d in stats["days"]:
        table.add_row(*_stat_cells(d["day"], d))
    table.add_row(*_stat_cells("合计", stats["overall"]), style="bold")
    console.print(fit(table, console))


def _stat_cells(label: str, d: dict[str, Any]) -> list[str]:
    return [
        label,
        str(d["questions"]),
        _rate(d["answered_rate"]),
        _rate(d["faq_hit_rate"]),
        str(d["up"]),
        str(d["down"]),
        str(d["llm_calls"]),
        str(d["prompt_tokens"] + d["completion_tokens"]),
        _ms(d["latency_p50_ms"]),
        _ms(d["latency_p95_ms"]),
    ]


def register(app: typer.Typer) -> None:
    kb_app.command("questions")(run_cli(kb_questions))
    kb_app.command("stats")(run_cli(kb_stats))
