"""``zhiwen kb chunks|chunk|changes|undo|faq|synonyms|dictionary``: a KB's curation from the shell.

The same operations as the owner routes (:mod:`zhiwen.api.routes.chunks`, ``words``, ``faq``),
on the KB in this home; every change is recorded with the actor ``cli`` (no key on the command
line) and is undoable with ``zhiwen kb undo``. ``--json`` prints what the API's ``data`` holds.

Example::

    zhiwen kb chunks shop --doc policy.md
    zhiwen kb chunks shop --q 退货
    zhiwen kb chunk shop 'policy.md#0' --text '签收后七天内可退货。'
    zhiwen kb chunk shop 'policy.md#0' --disable
    zhiwen kb chunk shop 'policy.md#0' --question 能退货吗 --question 怎么退货 --keyword 退货
    zhiwen kb changes shop
    zhiwen kb undo shop
    zhiwen kb faq shop import faq.xlsx
    zhiwen kb faq shop add --question 客服电话？ --answer 400-800-1234
    zhiwen kb faq shop threshold 0.95
    zhiwen kb synonyms shop --import synonyms.csv
    zhiwen kb dictionary shop --export words.csv
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.cli.kb_group import kb_app
from zhiwen.clikit.console import console, print_json, run_cli, snippet
from zhiwen.clikit.view import fit, kv_table
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

#: who made a change from the command line (the API records the key's fingerprint)
CLI_ACTOR = "cli"
STATE_LABELS = {"original": "原文", "edited": "已修改", "added": "新增", "source_changed": "原文已更新"}
KB_ARG = typer.Argument(..., metavar="知识库", help="知识库名称")
JSON_OPT = typer.Option(False, "--json", help="输出 JSON")


def _open(name: str) -> KnowledgeBase:
    from zhiwen.kb import open_kb

    return open_kb(name)


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M") if at else "—"


def _chunk_table(title: str, items: Sequence[dict[str, Any]]) -> None:
    if not items:
        console.print(f"[dim]{escape(title)}：没有段落[/]")
        return
    table = Table(title=title)
    for col in ("ID", "状态", "启用", "命中", "问题/关键词", "内容"):
        table.add_column(col)
    for c in items:
        tags = "、".join([*c["questions"], *(f"#{k}" for k in c["keywords"])])
        table.add_row(
            escape(c["id"]),
            STATE_LABELS.get(c["state"], c["state"]),
            "是" if c["enabled"] else "[red]否[/]",
            str(c["hits"]),
            escape(snippet(tags, 30)),
            escape(snippet(c["text"], 60)),
        )
    console.print(fit(table, console))


def kb_chunks(
    name: str = KB_ARG,
    doc: str | None = typer.Option(None, "--doc", "-d", help="列出这个文档的全部段落（按顺序）"),
    q: str | None = typer.Option(None, "--q", "-q", help="按文字查找段落"),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=500, help="查找时最多显示几条"),
    as_json: bool = JSON_OPT,
) -> None:
    """列出一个文档的段落，或按文字查找段落（含已停用的）。"""
    from zhiwen.owner.views import chunks_out

    if not doc and not q:
        raise InvalidParameter("--doc or --q required", message="请指定 --doc 文档 或 --q 要查找的文字")
    kb = _open(name)
    views = kb.curation.list_chunks(doc) if doc else kb.curation.search_chunks(q or "", limit=limit)
    items = chunks_out(kb, views)
    if as_json:
        print_json({"items": items, "total": len(items)})
        return
    _chunk_table(f"文档「{doc}」的段落" if doc else f"查找「{q}」", items)


def _chunk_rows(c: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("ID", c["id"]),
        ("文档", c["doc_id"]),
        ("状态", STATE_LABELS.get(c["state"], c["state"]) + ("（请复核）" if c["review"] else "")),
        ("启用", "是" if c["enabled"] else "否"),
        ("命中次数", c["hits"]),
        ("问题", "、".join(c["questions"]) or "—"),
        ("关键词", "、".join(c["keywords"]) or "—"),
        ("最后修改", f"{_when(c['updated_at'])} {c['updated_by'] or ''}".strip()),
        ("内容", c["text"]),
    ]


def kb_chunk(
    name: str = KB_ARG,
    chunk_id: str = typer.Argument(..., metavar="段落ID", help="段落 ID（见 zhiwen kb chunks）"),
    text: str | None = typer.Option(None, "--text", help="改写段落文字（立即重新索引）"),
    disable: bool = typer.Option(False, "--disable", help="停用：立即从所有检索中消失"),
    enable: bool = typer.Option(False, "--enable", help="重新启用"),
    question: list[str] = typer.Option([], "--question", help="段落的问题（可重复；替换原有问题）"),
    keyword: list[str] = typer.Option([], "--keyword", help="段落的关键词（可重复；替换原有关键词）"),
    delete: bool = typer.Option(False, "--delete", help="删除段落（可用 zhiwen kb undo 恢复）"),
    as_json: bool = JSON_OPT,
) -> None:
    """查看或修改一个段落：文字、启用/停用、问题、关键词、删除。"""
    from zhiwen.owner.views import chunk_out

    if disable and enable:
        raise InvalidParameter("--disable and --enable", message="--disable 与 --enable 不能同时使用")
    kb = _open(name)
    if delete:
        kb.curation.delete(chunk_id, actor=CLI_ACTOR)
        if as_json:
            print_json({"id": chunk_id, "deleted": True})
        else:
            console.print(f"已删除段落「{escape(chunk_id)}」（zhiwen kb undo {escape(name)} 可恢复）")
        return
    enabled = True if enable else (False if disable else None)
    changes = (text, enabled, question or None, keyword or None)
    if any(v is not None for v in changes):
        view = kb.curation.update(
            chunk_id, actor=CLI_ACTOR, text=text, enabled=enabled, questions=changes[2], keywords=changes[3]
        )
    else:
        view = kb.curation.get_chunk(chunk_id)
    out = chunk_out(kb, view)
    if as_json:
        print_json(out)
        return
    console.print(kv_table(f"段落「{chunk_id}」", _chunk_rows(out)))


def kb_changes(
    name: str = KB_ARG,
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=500, help="显示最近几条"),
    as_json: bool = JSON_OPT,
) -> None:
    """修改记录（最新在前）：谁、何时、改了什么、是否已撤销。"""
    from zhiwen.owner.views import change_out

    items = [change_out(c) for c in _open(name).curation.changes(limit=limit)]
    if as_json:
        print_json({"items": items})
        return
    if not items:
        console.print("[dim]还没有修改记录[/]")
        return
    table = Table(title=f"知识库「{name}」的修改记录")
    for col in ("编号", "时间", "操作者", "操作", "对象", "已撤销"):
        table.add_column(col)
    for c in items:
        table.add_row(
            str(c["id"]),
            _when(c["at"]),
            escape(c["actor"] or "—"),
            c["label"],
            escape(c["target"]),
            "是" if c["undone"] else "",
        )
    console.print(fit(table, console))


def kb_undo(
    name: str = KB_ARG,
    change_id: int | None = typer.Argument(None, metavar="修改编号", help="要撤销的修改（默认最近一次）"),
    as_json: bool = JSON_OPT,
) -> None:
    """撤销最近一次（或指定的）修改。"""
    from zhiwen.owner.views import change_out

    done = change_out(_open(name).curation.undo(change_id, actor=CLI_ACTOR))
    if as_json:
        print_json(done)
        return
    console.print(f"已撤销：{escape(done['target'])}（撤销记录 #{done['id']}）")


# -- dictionary and synonyms -------------------------------------------------------------------
def _words_command(name: str, kind: str, import_: Path | None, export: Path | None, as_json: bool) -> None:
    from zhiwen.curation import export_dictionary, export_synonyms, parse_dictionary, parse_synonyms

    kb = _open(name)
    cur = kb.curation
    if import_ is not None:
        data = _read(import_)
        if kind == "synonyms":
            cur.set_groups(parse_synonyms(data), actor=CLI_ACTOR)
        else:
            cur.set_words(parse_dictionary(data), actor=CLI_ACTOR)
    items: list[Any] = [list(g) for g in cur.groups()] if kind == "synonyms" else list(cur.words())
    if export is not None:
        text = export_synonyms(cur.groups()) if kind == "synonyms" else export_dictionary(cur.words())
        export.write_text("\ufeff" + text, encoding="utf-8")
    if as_json:
        print_json({"groups" if kind == "synonyms" else "words": items})
        return
    what = "同义词组" if kind == "synonyms" else "词条"
    if import_ is not None:
        console.print(f"已导入 {len(items)} 个{what}（来自 {escape(str(import_))}）")
    if export is not None:
        console.print(f"已导出 {len(items)} 个{what}到 {escape(str(export))}")
    if import_ is None and export is None:
        _print_words(name, kind, items)


def _print_words(name: str, kind: str, items: list[Any]) -> None:
    if not items:
        console.print(
            f"[dim]知识库「{escape(name)}」还没有{'同义词' if kind == 'synonyms' else '词典词条'}[/]"
        )
        return
    for item in items:
        console.print(escape(" ".join(item) if kind == "synonyms" else item))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidParameter(f"cannot read {path}: {exc}", message=f"无法读取文件：{path}") from exc


def kb_synonyms(
    name: str = KB_ARG,
    import_: Path | None = typer.Option(None, "--import", help="从 CSV 导入（整体替换）：标准词,同义词1,…"),
    export: Path | None = typer.Option(None, "--export", help="导出为 CSV"),
    as_json: bool = JSON_OPT,
) -> None:
    """查看、导入、导出同义词组（检索时用来扩展问题）。"""
    _words_command(name, "synonyms", import_, export, as_json)


def kb_dictionary(
    name: str = KB_ARG,
    import_: Path | None = typer.Option(None, "--import", help="从 CSV 导入（整体替换）：每行一个词"),
    export: Path | None = typer.Option(None, "--export", help="导出为 CSV"),
    as_json: bool = JSON_OPT,
) -> None:
    """查看、导入、导出词典（分词时保持完整的词）。"""
    _words_command(name, "dictionary", import_, export, as_json)


def register(app: typer.Typer) -> None:
    """Add the commands to the ``zhiwen kb`` group (:data:`zhiwen.cli.kb_group.kb_app`)."""
    for command, fn in (
        ("chunks", kb_chunks),
        ("chunk", kb_chunk),
        ("changes", kb_changes),
        ("undo", kb_undo),
        ("synonyms", kb_synonyms),
        ("dictionary", kb_dictionary),
    ):
        kb_app.command(command)(run_cli(fn))
