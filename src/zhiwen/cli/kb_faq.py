"""``zhiwen kb faq KB list|add|import FILE|export FILE|threshold X``: a KB's FAQ entries.

Entries answer their questions word for word (:mod:`zhiwen.kb.faq`). ``import`` takes CSV, XLSX
or JSONL (columns 问题、答案, optionally 相似问题 — one per line in the cell — and 分类): all or
nothing, every bad row listed. ``zhiwen index --format faq FILE --kb KB`` imports the same way.

Example::

    zhiwen kb faq shop import faq.xlsx
    zhiwen kb faq shop list --q 退货
    zhiwen kb faq shop add --question 客服电话是多少？ --answer 400-800-1234 --similar 怎么联系客服
    zhiwen kb faq shop export faq.csv
    zhiwen kb faq shop threshold 0.95
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.cli.kb_curation import CLI_ACTOR, JSON_OPT, KB_ARG
from zhiwen.cli.kb_group import kb_app
from zhiwen.clikit.console import console, print_json, run_cli, snippet
from zhiwen.clikit.view import fit
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.kb.faq import FAQPut

ACTIONS = ("list", "add", "import", "export", "threshold")


def print_put(put: FAQPut, source: str, as_json: bool) -> None:
    """What an import did (also ``zhiwen index --format faq``)."""
    if as_json:
        print_json({"added": put.added, "updated": put.updated, "unchanged": put.unchanged, "file": source})
        return
    console.print(
        f"FAQ 导入完成（{escape(source)}）：新增 {put.added}，更新 {put.updated}，未变 {put.unchanged}"
    )


def import_faq_file(kb: KnowledgeBase, path: Path) -> FAQPut:
    from zhiwen.owner.faq import import_files

    if not path.is_file():
        raise InvalidParameter(f"not a file: {path}", message=f"文件不存在：{path}")
    return import_files(kb, [(path.name, path)], actor=CLI_ACTOR)


def _list(kb: KnowledgeBase, q: str | None, as_json: bool) -> None:
    from zhiwen.owner.faq import entry_out, list_entries, threshold

    entries, total = list_entries(kb, q, limit=10_000)
    if as_json:
        print_json({"items": [entry_out(e) for e in entries], "total": total, "threshold": threshold(kb)})
        return
    if not entries:
        console.print(f"[dim]没有 FAQ 条目（阈值 {threshold(kb):.2f}）[/]")
        return
    table = Table(title=f"知识库「{kb.name}」的 FAQ（{total} 条，阈值 {threshold(kb):.2f}）")
    for col in ("编号", "问题", "相似问题", "答案", "分类", "启用"):
        table.add_column(col)
    for e in entries:
        table.add_row(
            escape(e.id),
            escape(e.question),
            escape(snippet("、".join(e.similar), 30)),
            escape(snippet(e.answer, 50)),
            escape(e.category),
            "是" if e.enabled else "[red]否[/]",
        )
    console.print(fit(table, console))


def _needs(arg: str | None, action: str, what: str) -> str:
    if not arg:
        raise InvalidParameter(f"{action} needs {what}", message=f"faq {action} 需要{what}")
    return arg


def kb_faq(
    name: str = KB_ARG,
    action: str = typer.Argument(
        "list", metavar="操作", help="list | add | import 文件 | export 文件 | threshold 数值"
    ),
    arg: str | None = typer.Argument(
        None, metavar="[文件|数值]", help="import/export 的文件，threshold 的数值"
    ),
    question: str | None = typer.Option(None, "--question", help="add：问题"),
    answer: str | None = typer.Option(None, "--answer", help="add：答案"),
    similar: list[str] = typer.Option([], "--similar", help="add：相似问题（可重复）"),
    category: str = typer.Option("", "--category", help="add：分类"),
    q: str | None = typer.Option(None, "--q", "-q", help="list：只列出含这些文字的条目"),
    as_json: bool = JSON_OPT,
) -> None:
    """FAQ 条目：列出、新增、导入（CSV/XLSX/JSONL，全部成功或全部不导入）、导出、设置阈值。"""
    from zhiwen.kb import open_kb

    handlers: dict[str, Callable[[KnowledgeBase], None]] = {
        "list": lambda kb: _list(kb, q, as_json),
        "add": lambda kb: _add(kb, question, answer, similar, category, as_json),
        "import": lambda kb: print_put(
            import_faq_file(kb, Path(_needs(arg, "import", "文件"))), str(arg), as_json
        ),
        "export": lambda kb: _export(kb, Path(_needs(arg, "export", "文件")), as_json),
        "threshold": lambda kb: _threshold(kb, _needs(arg, "threshold", "数值（0–1）"), as_json),
    }
    handler = handlers.get(action)
    if handler is None:
        raise InvalidParameter(
            f"unknown action {action!r}", message=f"未知操作：{action}（可选 {'、'.join(ACTIONS)}）"
        )
    handler(open_kb(name))


def _add(
    kb: KnowledgeBase,
    question: str | None,
    answer: str | None,
    similar: list[str],
    category: str,
    as_json: bool,
) -> None:
    from zhiwen.owner.faq import EntryFields, add_entry, entry_out

    fields = EntryFields(question=question or "", answer=answer or "", similar=similar, category=category)
    entry = add_entry(kb, fields, actor=CLI_ACTOR)
    if as_json:
        print_json(entry_out(entry))
        return
    console.print(f"已新增 FAQ「{escape(entry.question)}」（{escape(entry.id)}）")


def _export(kb: KnowledgeBase, path: Path, as_json: bool) -> None:
    from zhiwen.kb.faq import faq_entries
    from zhiwen.owner.faq import ExportFormat, export_entries

    fmt: ExportFormat = "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "csv"
    entries = faq_entries(kb)
    path.write_text("".join(export_entries(entries, fmt)), encoding="utf-8")
    if as_json:
        print_json({"file": str(path), "format": fmt, "count": len(entries)})
        return
    console.print(f"已导出 {len(entries)} 条 FAQ 到 {escape(str(path))}")


def _threshold(kb: KnowledgeBase, raw: str, as_json: bool) -> None:
    from zhiwen.owner.faq import set_threshold

    try:
        value = float(raw)
    except ValueError as exc:
        raise InvalidParameter(
            f"bad threshold {raw!r}", message=f"阈值应在 0 到 1 之间，收到：{raw}"
        ) from exc
    done: Any = set_threshold(kb, value)
    if as_json:
        print_json({"threshold": done})
        return
    console.print(f"FAQ 阈值已设为 {done:.2f}")


def register(app: typer.Typer) -> None:
    kb_app.command("faq")(run_cli(kb_faq))
