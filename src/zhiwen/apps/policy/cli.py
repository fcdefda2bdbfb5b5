"""``zhiwen policy setup|ask``: the policy QA on the command line.

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

from zhiwen.appkit.app import AskRequest, BaseApp
from zhiwen.appkit.context import build_context
from zhiwen.clikit.console import console, print_json, run_cli, snippet
from zhiwen.clikit.setup_report import WAIT_HELP, print_setup
from zhiwen.clikit.view import fit, where
from zhiwen.validation import question_text

STRATEGY_ZH = {"dual": "双问题检索", "single": "单问题检索"}
#: the classifier's intents (``data["intent"]``) as a reader says them
INTENT_ZH = {
    "visa_free": "免签政策",
    "airline_visa_free": "机组人员免签",
    "both": "免签政策与机组人员",
    "other": "其他法规问题",
}
#: why the dual retrieval fell back to one question (``data["fallback_reason"]``)
FALLBACK_ZH = {
    "classifier_disabled": "未启用意图分类",
    "classifier_timeout": "意图分类超时",
    "classifier_bad_output": "意图分类的模型回复有误",
    "classifier_error": "意图分类失败",
    "kb_missing": "专业知识库尚未建立",
    "kb_error": "知识库检索出错",
    "rewrite_timeout": "问题改写超时",
    "rewrite_bad_output": "问题改写的模型回复有误",
    "rewrite_error": "问题改写失败",
}


def _fallback_text(code: str) -> str:
    if code in FALLBACK_ZH:
        return FALLBACK_ZH[code]
    return "意图分类未完成" if code.startswith("classifier_") else "问题改写未完成"


def _sources_table(sources: list[dict[str, Any]], out: Console) -> Any:
    table = Table(title="来源")
    table.add_column("#")
    table.add_column("知识库", min_width=12)
    table.add_column("标题", min_width=12)
    table.add_column("出处", min_width=16)
    table.add_column("得分")
    table.add_column("片段", min_width=24)
    for i, s in enumerate(sources, 1):
        score = s.get("rerank_score") if s.get("rerank_score") is not None else s.get("score")
        table.add_row(
            str(i),
            escape(str(s.get("kb") or "")),
            escape(str(s.get("title") or s.get("id"))),
            escape(where(s)),
            "—" if score is None else f"{float(score):.3f}",
            escape(snippet(str(s.get("text") or ""), 60)),
        )
    return fit(table, out)


def render(data: dict[str, Any], out: Console | None = None) -> None:
    """Intent and rewrite, a table of sources, then the answer."""
    out = out or console
    strategy = str(data.get("strategy"))
    intent = str(data.get("intent"))
    line = f"意图：{INTENT_ZH.get(intent, intent)}　策略：{STRATEGY_ZH.get(strategy, strategy)}"
    if data.get("fallback_reason"):
        line += f"　降级原因：{_fallback_text(str(data['fallback_reason']))}"
    out.print(f"[dim]{escape(line)}[/]")
    if data.get("rewritten_question"):
        out.print(f"[dim]改写问题：{escape(str(data['rewritten_question']))}[/]")
    sources = data.get("sources") or []
    if sources:
        out.print(_sources_table(sources, out))
    out.print()
    out.print(escape(str(data.get("answer") or "")), highlight=False)


def commands(app: BaseApp) -> typer.Typer:
    group = typer.Typer(help=f"{app.title}：{app.description}", no_args_is_help=True)

    @group.command("setup")
    @run_cli
    def setup(
        data_dir: Path = typer.Argument(
            ...,
            metavar="数据目录",
            help="数据目录（含 chinatripinfo_visa_en、cn_law_subset），例如 ../shared/data",
        ),
        wait: bool = typer.Option(False, "--wait", help=WAIT_HELP),
    ) -> None:
        """按知识库映射（kbs.toml）建立免签库、航司库和通用库：文本索引建好即可提问。"""
        report = app.setup(data_dir, build_context(), progress=True, wait=wait)
        ask = 'ask "法国公民来中国旅游可以免签吗？"'
        print_setup(report, command="zhiwen policy", data_dir=data_dir, ask=ask)

    @group.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(..., metavar="问题", help="问题，例如「中国公民去泰国需要签证吗？」"),
        top_n: int | None = typer.Option(
            None, "--top-n", "-n", help="来源数（默认 20：专业库 10 + 通用库 10）"
        ),
        as_of: str | None = typer.Option(
            None, "--as-of", help="按哪天判断政策是否到期（YYYY-MM-DD，默认今天）"
        ),
        json_output: bool = typer.Option(
            False, "--json", help="输出 JSON（即 POST /api/v1/policy/ask 的 data）"
        ),
        session: str | None = typer.Option(
            None,
            "--session",
            help="会话 ID：同一会话的追问（如「那西班牙呢？」）结合之前的问答理解，跨多次运行保存",
        ),
    ) -> None:
        """政策问答：免签、机组人员出入境与相关法规。"""
        options = {"top_n": top_n, "as_of": as_of}
        request = AskRequest(question=question_text(question), session_id=session, options=options)
        answer = app.ask(request, build_context())
        data = {**answer.data, "session_id": answer.session_id}
        if json_output:
            print_json(data)
        else:
            render(data)

    return group
