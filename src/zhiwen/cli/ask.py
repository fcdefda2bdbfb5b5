"""``zhiwen ask --kb NAME [--json] [--top-k N] QUESTION``: answer from a knowledge base.

The registry says who answers and whether it is ready
(:meth:`zhiwen.appkit.registry.AppRegistry.ready`, as REST and ``/v1``): the KB's ``app``
(``kb.json``), generic QA for KBs no app claims, an app by its own name; an app whose required
KBs are not all built is refused with its setup command. The turn runs through the conversation
service, so ``--session`` continues a conversation across runs. Every answer goes through the
same retrieval pipeline as the server, with the runtime settings stored under ``ZHIWEN_HOME``.
Without an LLM (``ZHIWEN_LLM__BASE_URL`` unset) answers are extractive and say so.

Every answer is recorded in the home's question log (as the server's are; this process opens it
and writes it before it exits) and printed with 「回答编号：…」 — rate it with ``zhiwen feedback``
— an 「FAQ」 badge when an FAQ entry answered word for word, and 「您是不是想问：」 the FAQ
questions close to it; ``--json`` carries ``answer_id``, ``answer_type``, ``faq`` and
``suggestions``.

Example::

    $ zhiwen ask --kb recipes "怎么创建知识库"
    $ zhiwen ask --kb demo --json "怎么创建知识库？"
    $ zhiwen ask --kb listings -o max_results=5 "浦东800万以内的两房"
    $ zhiwen ask --kb recipes --session s1 "红烧肉怎么做"; zhiwen ask --kb recipes --session s1 "要炖多久"
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import typer

from zhiwen.appkit import Answer, AskRequest
from zhiwen.appkit.app import AppContext, BaseApp
from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import HomeKBs, load_apps
from zhiwen.clikit.console import (
    console,
    parse_options,
    print_app_answer,
    print_understood,
    run_cli,
)
from zhiwen.clikit.view import answer_notes
from zhiwen.conversation import service as conversation
from zhiwen.questionlog import open_question_log
from zhiwen.resilience.text import require_clean_text
from zhiwen.validation import question_text


def register(app: typer.Typer) -> None:
    @app.command("ask")
    @run_cli
    def ask(
        question: str = typer.Argument(..., metavar="问题", help="问题，例如「怎么创建知识库」"),
        kb: str = typer.Option(..., "--kb", help="知识库名称"),
        json_output: bool = typer.Option(False, "--json", help="输出 JSON"),
        top_k: int | None = typer.Option(None, "--top-k", min=1, max=50, help="来源数量"),
        option: list[str] = typer.Option(None, "--option", "-o", help="应用参数 key=value，可重复"),
        session: str | None = typer.Option(
            None,
            "--session",
            help="会话 ID：同一会话里的追问（如「它要炖多久」）结合前面的问答理解，跨多次运行保存",
        ),
    ) -> None:
        """向知识库提问：由知识库所属的应用（如 recipes、listings）回答，并列出来源。"""
        # bytes that are not UTF-8 arrive as lone surrogates: refuse them (3002) before any work
        question = require_clean_text(question, "question")
        with logged_context() as ctx:
            who = load_apps().ready(kb, HomeKBs(ctx.settings))
            answerer = who.answerer
            request = AskRequest(
                question=question_text(question),
                kb=who.kb,
                top_k=top_k,
                options=parse_options(option),
                session_id=session,
            )
            answer = conversation.ask(answerer, request, ctx)
        if json_output:
            print_app_answer(answer, json_output=True)
            return
        print_understood(question, answer)
        show_answer(answerer, answer)


@contextlib.contextmanager
def logged_context() -> Iterator[AppContext]:
    """The CLI's context, recording its answers in the home's question log; the log is written
    when the block ends."""
    ctx = build_context()
    question_log = open_question_log(ctx.settings)
    ctx.question_log = question_log
    try:
        yield ctx
    finally:
        question_log.close()


def show_answer(answerer: BaseApp, answer: Answer) -> None:
    """The answer in its app's view (or the generic one), then the FAQ badge, 「您是不是想问：」
    and 「回答编号：…」."""
    if not answerer.render(answer):
        print_app_answer(answer)
    for line in answer_notes(answer):
        console.print(line)
