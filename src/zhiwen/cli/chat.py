"""``zhiwen chat [TARGET] [--kb NAME]``: a conversation in the terminal.

TARGET is an app (``recipes``, ``policy`` …) or a knowledge base; every question is answered in
the conversation so far, so a follow-up (「它在哪个校区？」「那糖醋排骨呢？」) is understood, and the
understood question is shown (「理解为：…」), and each answer's id (「回答编号：…」, for
``zhiwen feedback``), FAQ badge and 「您是不是想问：」 suggestions, as ``zhiwen ask`` shows
them. ``/new`` starts a new conversation, ``/exit`` (or Ctrl-D) leaves. (``zhiwen ask
--session ID`` keeps a conversation across separate runs.)

Example::

    $ zhiwen chat recipes
    你：红烧肉怎么做？
    …
    你：要炖多久？
    理解为：红烧肉要炖多久？
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import typer

from zhiwen.appkit import AskRequest, BaseApp
from zhiwen.appkit.app import AppContext
from zhiwen.appkit.registry import HomeKBs, load_apps
from zhiwen.cli.ask import logged_context, show_answer
from zhiwen.clikit.console import console, print_understood, run_cli
from zhiwen.conversation import service as conversation
from zhiwen.errors import InvalidParameter, ZhiwenError
from zhiwen.resilience.text import require_clean_text

NEW, EXIT = "/new", "/exit"
HELP = "输入问题开始对话；/new 开始新对话，/exit 或 Ctrl-D 退出。"


@dataclass(slots=True)
class Chat:
    """One terminal conversation with one answerer."""

    answerer: BaseApp
    ctx: AppContext
    kb: str | None
    history: list[dict[str, Any]] = field(default_factory=list)

    def new(self) -> None:
        self.history.clear()

    def turn(self, question: str) -> None:
        request = AskRequest(question=question, kb=self.kb, history=list(self.history))
        answer = conversation.ask(self.answerer, request, self.ctx)
        print_understood(question, answer)
        show_answer(self.answerer, answer)
        self.history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer.answer},
        ]


def _target(target: str | None, kb: str | None, ctx: AppContext) -> tuple[BaseApp, str | None]:
    """Who answers the chat (the registry's one answer, as ``zhiwen ask`` and the API): refused
    with the setup command when it is not ready."""
    name = kb or target
    if not name:
        raise InvalidParameter(
            "no target", message="请指定应用名或知识库，例如 zhiwen chat recipes 或 zhiwen chat --kb demo"
        )
    who = load_apps().ready(name, HomeKBs(ctx.settings))
    return who.answerer, who.kb


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def _loop(chat: Chat) -> None:
    console.print(f"[dim]{HELP}[/]")
    while (line := _read("你：")) is not None:
        text = require_clean_text(line, "question").strip()
        if text == EXIT:
            break
        if text == NEW:
            chat.new()
            console.print("[dim]已开始新对话。[/]")
            continue
        if not text:
            continue
        try:
            chat.turn(text)
        except ZhiwenError as exc:  # one bad question must not end the conversation
            console.print(f"[red]{exc.message}[/]")


def register(app: typer.Typer) -> None:
    @app.command("chat")
    @run_cli
    def chat(
        target: str | None = typer.Argument(
            None, metavar="应用或知识库", help="应用名（如 recipes、policy）或知识库名"
        ),
        kb: str | None = typer.Option(None, "--kb", help="知识库名称（与应用名二选一）"),
    ) -> None:
        """在终端里多轮对话：追问会结合前面的问答理解（/new 新对话，/exit 退出）。"""
        with logged_context() as ctx:  # every answer recorded in the home's question log
            answerer, kb_name = _target(target, kb, ctx)
            _loop(Chat(answerer, ctx, kb_name))
