"""``zhiwen policy setup|ask``: seed 001's policy QA on the command line.

Example::

    zhiwen policy setup ../shared/data
    zhiwen policy ask "关于塞尔维亚的机组人员入出境，下列说法正确的有"
    zhiwen policy ask "法国公民免签入境能停留几天？" --as-of 2025-06-01 --json

``--json`` prints exactly the ``data`` of ``POST /api/v1/policy/ask``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from zhiwen.appkit.app import BaseApp
from zhiwen.appkit.console import console, print_json, require_question, run_cli, snippet
from zhiwen.appkit.context import build_context

STRATEGY_ZH = {"dual": "双问题检索", "single": "单问题检索"}


def render(data: dict[str, Any], out: Console | None = None) -> None:
    """Intent and rewrite, a table of sources, then the answer."""
    out = out or console
    strategy = str(data.get("strategy"))
    line = f"意图：{data.get('intent')}　策略：{STRATEGY_ZH.get(strategy, strategy)}"
    if data.get("fallback_reason"):
        line += f"　降级原因：{data['fallback_reason']}"
    out.print(f"[dim]{escape(line)}[/]")
    if data.get("rewritten_question"):
        out.print(f"[dim]改写问题：{escape(str(data['rewritten_question']))}[/]")
    sources = data.get("sources") or []
    if sources:
        table = Table(title="来源", expand=False)
        table.add_column("#", no_wrap=True)
        table.add_column("知识库", no_wrap=True)
        table.add_column("标题", overflow="fold", max_width=30)
        table.add_column("得分", no_wrap=True)
        table.add_column("片段", overflow="fold", max_width=60)
        for i, s in enumerate(sources, 1):
            score = s.get("rerank_score") if s.get("rerank_score") is not None else s.get("score")
            table.add_row(
                str(i),
                escape(str(s.get("kb") or "")),
                escape(str(s.get("title") or s.get("id"))),
                "—" if score is None else f"{float(score):.3f}",
                escape(snippet(str(s.get("text") or ""), 60)),
            )
        out.print(table)
    out.print()
    out.print(escape(str(data.get("answer") or "")), highlight=False)


def commands(app: BaseApp) -> typer.Typer:
    group = typer.Typer(help=f"{app.title}：{app.description}", no_args_is_help=True)

    @group.command("setup")
    @run_cli
    def setup(
        data_dir: Path = typer.Argument(
            ..., help="数据目录（含 chinatripinfo_visa_en、cn_law_subset），例如 ../shared/data"
        ),
    ) -> None:
        """按知识库映射（kbs.toml）建立免签库、航司库和通用库。"""
        report = app.setup(data_dir, build_context(), progress=True)
        for kb, chunks in report.kbs.items():
            console.print(f"知识库 {escape(kb)}：{chunks} 个片段")
        for note in report.notes:
            console.print(f"[dim]{escape(note)}[/]")
        console.print(f"完成，用时 {report.seconds:.1f} 秒")

    @group.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(..., help="问题，例如「中国公民去泰国需要签证吗？」"),
        top_n: int | None = typer.Option(
            None, "--top-n", "-n", help="来源数（默认 20：专业库 10 + 通用库 10）"
        ),
        as_of: str | None = typer.Option(
            None, "--as-of", help="按哪天判断政策是否到期（YYYY-MM-DD，默认今天）"
        ),
        json_output: bool = typer.Option(
            False, "--json", help="输出 JSON（即 POST /api/v1/policy/ask 的 data）"
        ),
    ) -> None:
        """政策问答：免签、机组人员出入境与相关法规。"""
        from .service import ask_policy

        result = ask_policy(require_question(question), build_context(), top_n=top_n, as_of=as_of)
        if json_output:
            print_json(result.data())
        else:
            render(result.data())

    return group
