"""``zhiwen ask --kb NAME [--json] [--top-k N] QUESTION``: answer from a knowledge base.

The KB's ``app`` (``kb.json``) picks the answering module from
:data:`zhiwen.apps.registry.APPS` (its ``cli_ask(kb, question, *, json_output, **options)``);
KBs without an app, or whose app module is missing, get the generic QA of
:mod:`zhiwen.generate.qa`. Without an LLM (``ZHIWEN_LLM__BASE_URL`` unset) answers are extractive
and say so.

Example::

    $ zhiwen ask --kb recipes "宫保鸡丁怎么做"
    $ zhiwen ask --kb demo --json "怎么创建知识库？"
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from zhiwen.apps.registry import APPS
from zhiwen.appkit.console import console, format_metadata, parse_options, print_json, run_cli
from zhiwen.errors import InvalidParameter
from zhiwen.generate.qa import Answer, answer_question
from zhiwen.kb import open_kb

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)


def print_answer(answer: Answer, *, json_output: bool = False) -> None:
    """The answer, a note on how it was made, and a table of sources (or all of it as JSON)."""
    if json_output:
        print_json(answer.to_dict())
        return
    console.print(escape(answer.answer), highlight=False)
    console.print()
    how = "大模型生成" if answer.llm_used else f"摘录（{answer.extractive_reason or 'no_llm'}）"
    console.print(f"[dim]路由：{answer.route} · 回答方式：{escape(how)}[/]")
    if not answer.sources:
        return
    table = Table(title="来源", show_lines=False, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("标题")
    table.add_column("分数", justify="right")
    table.add_column("元数据")
    for i, s in enumerate(answer.sources, 1):
        meta = format_metadata({k: v for k, v in s.metadata.items() if k != "source"}, limit=3)
        table.add_row(str(i), escape(s.title), f"{s.score:.3f}", escape(meta))
    console.print(table)


def generic_ask(kb: KnowledgeBase, question: str, *, json_output: bool, **options: Any) -> None:
    answer = answer_question(kb, question, top_k=int(options.get("top_k") or 5))
    print_answer(answer, json_output=json_output)


def _app_module(app_name: str | None) -> Any:
    if not app_name or app_name not in APPS:
        return None
    try:
        return importlib.import_module(APPS[app_name])
    except ModuleNotFoundError as exc:
        log.warning("app %s not available (%s); using generic QA", app_name, exc)
        return None


def register(app: typer.Typer) -> None:
    @app.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(..., help="问题，例如「宫保鸡丁怎么做」"),
        kb: str = typer.Option(..., "--kb", help="知识库名称"),
        json_output: bool = typer.Option(False, "--json", help="输出 JSON"),
        top_k: int | None = typer.Option(None, "--top-k", min=1, max=50, help="来源数量"),
        option: list[str] = typer.Option(None, "--option", "-o", help="应用参数 key=value，可重复"),
    ) -> None:
        """向知识库提问：按知识库的应用（如 recipes）回答，并列出来源。"""
        if not question.strip():
            raise InvalidParameter("empty question", message="问题不能为空")
        options = parse_options(option)
        if top_k is not None:
            options["top_k"] = top_k
        handle = open_kb(kb)
        module = _app_module(handle.config.app)
        ask_fn = getattr(module, "cli_ask", None) if module is not None else None
        if ask_fn is None:
            generic_ask(handle, question.strip(), json_output=json_output, **options)
        else:
            ask_fn(handle, question.strip(), json_output=json_output, **options)
