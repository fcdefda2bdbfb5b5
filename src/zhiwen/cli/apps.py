"""``zhiwen apps``: the installed apps, their knowledge bases and commands; and each app's group.

Every app's own command group is mounted as ``zhiwen <app> …`` (e.g. ``zhiwen policy ask``).

Example::

    $ zhiwen apps
    $ zhiwen apps --json
"""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.appkit import BaseApp
from zhiwen.appkit.registry import AppLoadError, AppRegistry, load_apps
from zhiwen.clikit.console import EXIT_FAILURE, console, err_console, print_json, run_cli
from zhiwen.clikit.view import fit


def _routes(app: BaseApp) -> list[str]:
    router = app.router()
    return sorted(str(getattr(r, "path", "")) for r in router.routes) if router is not None else []


def describe(registry: AppRegistry) -> list[dict[str, object]]:
    return [
        {
            "name": a.name,
            "title": a.title,
            "description": a.description,
            "kbs": [{"name": k.name, "description": k.description} for k in a.kbs],
            "formats": sorted(a.formats()),
            "routes": _routes(a),
            "cli": a.cli() is not None,
        }
        for a in registry.values()
    ]


def register(app: typer.Typer) -> None:
    try:
        registry = load_apps()
    except AppLoadError as exc:  # loud, one line, non-zero: never a silently missing app
        err_console.print(f"[red]错误：{escape(str(exc))}[/]")
        raise SystemExit(EXIT_FAILURE) from None

    @app.command("apps")
    @run_cli
    def apps(json_output: bool = typer.Option(False, "--json", help="输出 JSON")) -> None:
        """列出已安装的应用：名称、知识库、导入格式、接口与命令。"""
        rows = describe(registry)
        if json_output:
            print_json(rows)
            return
        table = Table(title="已安装的应用", title_justify="left")
        for col in ("应用", "名称", "知识库", "导入格式", "命令"):
            table.add_column(col)
        for r in rows:
            # one KB a line: 「advisor_policy、adv…」 was all 80 columns left of the list
            kbs = "\n".join(str(k["name"]) for k in r["kbs"])  # type: ignore[attr-defined]
            table.add_row(
                str(r["name"]),
                escape(str(r["title"])),
                escape(kbs),
                "\n".join(r["formats"]) or "—",  # type: ignore[arg-type]
                f"zhiwen {r['name']} --help" if r["cli"] else "—",
            )
        console.print(fit(table, console))

    for a in registry.values():
        group = a.cli()
        if group is not None:
            app.add_typer(group, name=a.name, help=f"{a.title}：{a.description}")
