"""``zhiwen sync``: re-read a KB's remembered sources; only what changed is parsed and embedded.

A KB remembers the folder ``zhiwen index`` read; ``--add``/``--remove`` change its sources
(folders, page URLs, sitemap URLs) and ``--interval`` how often ``zhiwen serve`` syncs it.

Example::

    zhiwen sync manual
    zhiwen sync manual --add https://example.com/sitemap.xml --interval 3600
    zhiwen sync manual --dry-run --json
"""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.clikit.console import console, err_console, print_json, run_cli
from zhiwen.errors import InvalidParameter

EXIT_PARTIAL = 3  # as `zhiwen index`: some documents or sources failed, the rest was synced


def sync_command(
    kb: str = typer.Argument(..., metavar="知识库", help="知识库名称"),
    dry_run: bool = typer.Option(False, "--dry-run", help="只统计会新增、更新、删除的文档，不改动知识库"),
    add: list[str] = typer.Option([], "--add", help="添加同步来源（文件夹、网址或站点地图网址），可重复"),
    remove: list[str] = typer.Option([], "--remove", help="移除同步来源，可重复"),
    interval: float | None = typer.Option(
        None, "--interval", help="zhiwen serve 中自动同步的间隔（秒）；0 表示不自动同步"
    ),
    config_only: bool = typer.Option(False, "--config-only", help="只修改来源和间隔，不同步"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="不显示进度"),
) -> None:
    """同步知识库记住的来源：只重新解析、嵌入变化的文档，删除来源中已不存在的文档，保留人工整理。"""
    from zhiwen.kb.registry import open_kb
    from zhiwen.sync.run import sync_kb
    from zhiwen.sync.sources import configure

    knowledge = open_kb(kb)
    if add or remove or interval is not None:
        if interval is None:
            configure(knowledge, add=add, remove=remove)
        else:
            configure(knowledge, add=add, remove=remove, interval=interval or None)
    sources = list(knowledge.config.sources)
    if config_only:
        _emit({"kb": kb, "sources": sources, "sync_interval": knowledge.config.sync_interval}, as_json)
        return
    if not sources:
        raise InvalidParameter(
            f"knowledge base {kb!r} has no sources",
            message=f"知识库「{kb}」没有同步来源：先用 zhiwen index 文件夹 --kb {kb} 导入，或用 --add 添加",
        )
    if as_json or quiet:
        result = sync_kb(knowledge, dry_run=dry_run)
    else:
        with console.status("同步中 …") as status:
            result = sync_kb(knowledge, dry_run=dry_run, on_progress=lambda m: status.update(escape(m)))
    summary = {"kb": kb, "sources": sources, **result.as_dict()}
    _emit(summary, as_json)
    if result.errors:
        raise typer.Exit(EXIT_PARTIAL)


def _emit(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(summary)
        return
    if "added" not in summary:
        console.print(f"来源：{escape('、'.join(summary['sources']) or '（无）')}")
        console.print(f"自动同步间隔：{summary['sync_interval'] or '不自动同步'}")
        return
    title = f"同步「{summary['kb']}」" + ("（--dry-run，未改动）" if summary["dry_run"] else "")
    table = Table(title=escape(title))
    for col in ("新增", "更新", "删除", "未变", "解析", "嵌入片段", "错误", "用时"):
        table.add_column(col, justify="right")
    table.add_row(
        *(str(summary[k]) for k in ("added", "changed", "removed", "unchanged", "parsed", "embedded")),
        str(len(summary["errors"])),
        f"{summary['seconds']:.1f} 秒",
    )
    console.print(table)
    for error in summary["errors"]:
        err_console.print(f"[yellow]{escape(error)}[/]")


def register(app: typer.Typer) -> None:
    app.command("sync")(run_cli(sync_command))
