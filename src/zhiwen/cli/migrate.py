"""``zhiwen migrate``: bring every file of a home to this release's formats, with progress.

Files whose migration runs on open are migrated by any command anyway; this one also runs the
steps too big for that (the opener then refuses and names this command), and shows what is
pending with ``--dry-run``. Every file is copied to ``<file>.v<N>.bak`` before its first step.
KBs in PostgreSQL or Qdrant are opened once, which migrates their schema or payload.

Example::

    zhiwen migrate --dry-run
    zhiwen migrate --home /srv/zhiwen --json
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.clikit.console import EXIT_FAILURE, console, print_json, run_cli
from zhiwen.versions import home as home_files


def migrate_command(
    home: Path | None = typer.Option(None, "--home", help="数据目录（默认 ZHIWEN_HOME）"),
    dry_run: bool = typer.Option(False, "--dry-run", help="只列出需要升级的文件，不改动任何文件"),
    as_json: bool = typer.Option(False, "--json", help="输出 JSON"),
) -> None:
    """升级数据目录中所有文件的格式版本（升级前自动备份为 .v<旧版本>.bak）。"""
    from zhiwen.config import get_settings

    settings = get_settings()
    root = Path(home) if home is not None else Path(settings.home)
    if dry_run:
        items = home_files.survey(root)
    else:
        with console.status("升级中 …") as status:

            def on_item(item: home_files.Item) -> None:
                status.update(f"升级中 … {escape(str(item.path))}")

            items = home_files.migrate_home(root, on_item=on_item)
        if home is None:
            items.extend(_open_server_kbs(settings))
    rows = [_row(i, dry_run) for i in items]
    if as_json:
        print_json({"home": str(root), "dry_run": dry_run, "files": rows})
    else:
        _print(rows, root, dry_run)
    if any(r["error"] for r in rows):
        raise typer.Exit(EXIT_FAILURE)


def _open_server_kbs(settings: Any) -> list[home_files.Item]:
    """KBs kept in PostgreSQL or Qdrant: opening one migrates its schema/payload."""
    from zhiwen.errors import ZhiwenError
    from zhiwen.kb.config import load_config
    from zhiwen.kb.registry import list_kbs, open_kb

    out: list[home_files.Item] = []
    for name in list_kbs(settings):
        path = settings.kb_root / name
        try:
            if load_config(path, name).store == "embedded":
                continue
            open_kb(name, settings=settings)
            out.append(home_files.Item("kb-store", path, 0, 0, done=True))
        except ZhiwenError as exc:
            out.append(home_files.Item("kb-store", path, 0, 0, error=exc.message))
    return out


def _row(item: home_files.Item, dry_run: bool) -> dict[str, Any]:
    state = "失败" if item.error else "已升级" if item.done else "待升级" if item.pending else "最新"
    return {
        "format": item.format,
        "path": str(item.path),
        "version": item.found,
        "target": item.target,
        "steps": item.steps,
        "state": state,
        "error": item.error,
    }


def _print(rows: list[dict[str, Any]], root: Path, dry_run: bool) -> None:
    title = f"{'待升级（--dry-run，未改动）' if dry_run else '升级结果'}：{root}"
    table = Table(title=escape(title))
    for col in ("格式", "文件", "版本", "状态", "说明"):
        table.add_column(col)
    for r in rows:
        note = r["error"] or "；".join(r["steps"])
        path = Path(r["path"])
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        versions = f"{r['version']} → {r['target']}"
        table.add_row(r["format"], escape(str(shown)), versions, r["state"], escape(note))
    console.print(table)
    if not rows:
        console.print("数据目录中没有需要检查的文件")


def register(app: typer.Typer) -> None:
    app.command("migrate")(run_cli(migrate_command))
