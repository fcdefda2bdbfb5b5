"""``zhiwen ask --kb listings "…"``: seed 000's property search on the command line.

``zhiwen ask`` dispatches here for KBs whose ``app`` is ``listings``. Prints a table of the
listings and the answer, or with ``--json`` exactly the object ``POST /ask`` returns.
Options: ``max_results`` (or ``top_k``), default 3.

Example::

    zhiwen ask --kb listings "浦东800万以内的两房，要有电梯" --option max_results=5
    zhiwen ask --kb listings "徐汇三房" --json
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zhiwen.apps.listings.service import get_service
from zhiwen.appkit.console import print_json, snippet


def _fmt(x: Any, suffix: str = "") -> str:
    if x is None or x == "":
        return "—"
    if isinstance(x, bool):
        return "有" if x else "无"
    if isinstance(x, float):
        return f"{x:g}{suffix}"
    return f"{x}{suffix}"


def render(result: dict[str, Any], console: Console | None = None) -> None:
    """Rich table of the listings + the answer."""
    console = console or Console()
    props = result.get("retrieved_properties") or []
    table = Table(title="推荐房源", show_lines=False, expand=False)
    table.add_column("#", no_wrap=True)
    table.add_column("匹配", no_wrap=True)
    table.add_column("标题", overflow="fold", max_width=26)
    table.add_column("位置", overflow="fold")
    table.add_column("户型", no_wrap=True)
    table.add_column("总价", no_wrap=True)
    table.add_column("详情", overflow="fold")
    for i, p in enumerate(props, start=1):
        where = "·".join(str(x) for x in (p.get("district"), p.get("bankuai")) if x)
        details = "，".join(
            x
            for x in (
                p.get("floor") or "",
                f"{p['build_year']}年" if p.get("build_year") else "",
                p.get("decoration") or "",
                "" if p.get("elevator") is None else ("有电梯" if p["elevator"] else "无电梯"),
            )
            if x
        )
        table.add_row(
            str(i),
            f"{p.get('match_percentage', 0)}%",
            escape(snippet(str(p.get("title") or ""), 26)),
            escape(f"{where} {p.get('xiaoqu') or ''}".strip()),
            f"{_fmt(p.get('layout'))} {_fmt(p.get('area'), '㎡')}",
            _fmt(p.get("price"), "万"),
            escape(details),
        )
    if props:
        console.print(table)
        for i, p in enumerate(props, start=1):
            console.print(f"[dim]{i}. " + escape("；".join(p.get("match_reasons") or [])) + "[/]")
    console.print()
    # a composed answer carries its own note that no LLM wrote it
    console.print(escape(str(result.get("answer") or "")))
    if result.get("cached"):
        console.print("[dim]（来自缓存）[/]")


def cli_ask(kb: Any, question: str, *, json_output: bool = False, **options: Any) -> dict[str, Any]:
    """Answer ``question`` over listings KB ``kb``; print it; return the result object."""
    n = options.get("max_results", options.get("top_k", 3))
    result = get_service(kb).ask(question, n)
    if json_output:
        print_json(result)
    else:
        render(result)
    return result
