"""``zhiwen listings setup|ask``: the property search on the command line.

``zhiwen ask --kb listings "…"`` reaches the same app through the KB's ``app`` field. Prints a
table of the listings and the answer, or with ``--json`` exactly the ``data`` of ``POST /ask``.

Example::

    zhiwen listings setup ../shared/data
    zhiwen listings ask "浦东800万以内的两房，要有电梯" --max-results 5
    zhiwen ask --kb listings "徐汇三房" --json
    zhiwen listings ask --session s1 "上海浦东800万以内的两房"   # a conversation across runs:
    zhiwen listings ask --session s1 "预算放宽到700万"            # 理解为：上海浦东新区 700万以内 2室
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zhiwen.appkit import AskRequest
from zhiwen.appkit.app import BaseApp
from zhiwen.appkit.context import build_context
from zhiwen.clikit.console import print_json, run_cli
from zhiwen.clikit.setup_report import WAIT_HELP, print_setup
from zhiwen.clikit.view import fit
from zhiwen.conversation import service as conversation
from zhiwen.validation import question_text


def _fmt(x: Any, suffix: str = "") -> str:
    if x is None or x == "":
        return "—"
    if isinstance(x, bool):
        return "有" if x else "无"
    if isinstance(x, float):
        return f"{x:g}{suffix}"
    return f"{x}{suffix}"


#: the requirement keys a conversation's changes name, as the buyer says them
CHANGE_LABELS = {
    "price_range": "预算", "unit_price": "单价", "location": "区域", "cities": "城市",
    "exclude_locations": "排除区域", "estates": "小区", "property_type": "类型", "area": "面积",
    "rooms": "户型", "halls": "厅", "elevator": "电梯", "decoration": "装修",
    "exclude_decoration": "排除装修", "floor": "楼层", "exclude_floor": "排除楼层",
    "building_type": "楼型", "exclude_building_type": "排除楼型", "build_year_min": "房龄",
    "build_year_max": "房龄", "facing_south": "朝向", "north_south": "朝向",
    "special_requirements": "特殊需求", "negations": "避开",
}  # fmt: skip
_CHANGE_VERBS = (("added", "新增"), ("replaced", "替换"), ("removed", "取消"))


def changes_line(conversation: dict[str, Any]) -> str:
    """「新增 朝向；替换 预算；取消 楼层」: what this turn changed in the conversation's request."""
    parts = []
    for key, verb in _CHANGE_VERBS:
        names = dict.fromkeys(CHANGE_LABELS[k] for k in conversation.get(key) or () if k in CHANGE_LABELS)
        if names:
            parts.append(f"{verb} {'、'.join(names)}")
    return "；".join(parts)


def render_understood(result: dict[str, Any], console: Console) -> None:
    """「理解为：…」 and the merged constraints, when the question followed a conversation."""
    conversation = result.get("conversation") or {}
    if result.get("standalone_question"):
        console.print(f"[bold]理解为：[/]{escape(str(result['standalone_question']))}")
        changed = changes_line(conversation)
        if changed:
            console.print(f"[dim]本轮：{escape(changed)}[/]")
    elif conversation.get("fresh_start"):
        console.print("[dim]（新的搜索：之前的条件已清空）[/]")
    if result.get("total_matches") is not None:
        console.print(f"[dim]符合条件的房源：{result['total_matches']} 套[/]")


def _listing_row(i: int, p: dict[str, Any]) -> list[str]:
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
    return [
        str(i),
        f"{p.get('match_percentage', 0)}%",
        escape(str(p.get("title") or "")),
        escape(f"{where} {p.get('xiaoqu') or ''}".strip()),
        f"{_fmt(p.get('layout'))} {_fmt(p.get('area'), '㎡')}",
        _fmt(p.get("price"), "万"),
        escape(details),
    ]


def listings_table(props: list[dict[str, Any]], console: Console) -> Any:
    """The listings as a table, or one record per listing where the terminal is narrow."""
    table = Table(title="推荐房源")
    for name, width in (("#", None), ("匹配", None), ("标题", 16), ("位置", 12)):
        table.add_column(name, min_width=width)
    for name, width in (("户型", None), ("总价", None), ("详情", 14)):
        table.add_column(name, min_width=width)
    for i, p in enumerate(props, start=1):
        table.add_row(*_listing_row(i, p))
    return fit(table, console)


def render(result: dict[str, Any], console: Console | None = None) -> None:
    """Rich table of the listings + the answer (after what was understood, in a conversation)."""
    console = console or Console()
    render_understood(result, console)
    props = result.get("retrieved_properties") or []
    if props:
        console.print(listings_table(props, console))
        for i, p in enumerate(props, start=1):
            console.print(f"[dim]{i}. " + escape("；".join(p.get("match_reasons") or [])) + "[/]")
    console.print()
    # a composed answer carries its own note that no LLM wrote it
    console.print(escape(str(result.get("answer") or "")))
    if result.get("cached"):
        console.print("[dim]（来自缓存）[/]")


def commands(app: BaseApp) -> typer.Typer:
    group = typer.Typer(help=f"{app.title}：{app.description}", no_args_is_help=True)

    @group.command("setup")
    @run_cli
    def setup(
        data_dir: Path = typer.Argument(
            ..., metavar="数据目录", help="数据目录（含 lianjia_ershoufang/*.csv），例如 ../shared/data"
        ),
        wait: bool = typer.Option(False, "--wait", help=WAIT_HELP),
    ) -> None:
        """从链家 CSV 建立房源知识库 listings（五个城市）：文本索引建好即可提问。"""
        report = app.setup(data_dir, build_context(), progress=True, wait=wait)
        print_setup(report, command="zhiwen listings", data_dir=data_dir, ask='ask "浦东800万以内的两房"')

    @group.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(
            ..., metavar="问题", help="找房问题，例如「浦东800万以内的两房，要有电梯」"
        ),
        kb: str | None = typer.Option(None, "--kb", help="房源知识库（默认 listings）"),
        max_results: int = typer.Option(3, "--max-results", "-n", min=1, max=50, help="最多返回几套"),
        json_output: bool = typer.Option(False, "--json", help="输出 JSON（即 POST /ask 的 data）"),
        session: str | None = typer.Option(
            None, "--session", help="会话 ID：同一会话的追问（如「预算放宽到700万」）合并之前的条件"
        ),
    ) -> None:
        """找房：按预算、区域、户型等条件检索并给出匹配理由。"""
        options = {"max_results": max_results}
        request = AskRequest(question=question_text(question), kb=kb, session_id=session, options=options)
        result = conversation.ask(app, request, build_context()).data
        if json_output:
            print_json(result)
        else:
            render(result)

    return group
