"""``zhiwen recipes setup DATA_DIR`` and ``zhiwen recipes ask QUESTION``.

``zhiwen ask --kb recipes "…"`` reaches the same app through the KB's ``app`` field.

Example::

    $ zhiwen recipes setup ../shared/data
    $ zhiwen recipes ask "推荐几个简单的素菜" --top-k 3
"""

from __future__ import annotations

from pathlib import Path

import typer

from zhiwen.appkit import AskRequest
from zhiwen.appkit.app import BaseApp
from zhiwen.appkit.context import build_context
from zhiwen.clikit.console import print_app_answer, run_cli
from zhiwen.clikit.setup_report import WAIT_HELP, print_setup


def commands(app: BaseApp) -> typer.Typer:
    group = typer.Typer(help=f"{app.title}：{app.description}", no_args_is_help=True)

    @group.command("setup")
    @run_cli
    def setup(
        data_dir: Path = typer.Argument(
            ..., metavar="数据目录", help="数据目录（含 howtocook/dishes），例如 ../shared/data"
        ),
        wait: bool = typer.Option(False, "--wait", help=WAIT_HELP),
    ) -> None:
        """从 HowToCook 数据建立菜谱知识库 recipes：文本索引建好即可提问，向量随后补全。"""
        report = app.setup(data_dir, build_context(), progress=True, wait=wait)
        print_setup(report, command="zhiwen recipes", data_dir=data_dir, ask='ask "番茄炒蛋怎么做"')

    @group.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(..., metavar="问题", help="问题，例如「宫保鸡丁怎么做」"),
        kb: str | None = typer.Option(None, "--kb", help="菜谱知识库（默认 recipes）"),
        top_k: int | None = typer.Option(None, "--top-k", min=1, max=50, help="来源数量（推荐类为菜品数量）"),
        json_output: bool = typer.Option(False, "--json", help="输出 JSON"),
        session: str | None = typer.Option(
            None,
            "--session",
            help="会话 ID：同一会话的追问（如「要炖多久？」）结合之前的问答理解，跨多次运行保存",
        ),
    ) -> None:
        """向菜谱知识库提问。"""
        request = AskRequest(question=question.strip(), kb=kb, top_k=top_k, session_id=session)
        answer = app.ask(request, build_context())
        print_app_answer(answer, json_output=json_output)

    return group
