"""``zhiwen feedback ANSWER_ID up|down [--reason R] [--comment C]``: rate an answer.

The answer id is what ``zhiwen ask`` / ``zhiwen chat`` print (「回答编号：…」), what every API
answer carries (``answer_id``) and what the web UI shows under an answer. The rating goes to the
home's question log, where the KB's owner reads it (``zhiwen kb questions KB --status
disliked``); a later rating of the same answer from the CLI replaces the earlier one. The reason
(only with ``down``) is 答非所问、内容过时、没有引用 or 其他 (or its code: off_topic, outdated,
no_citation, other).

Example::

    $ zhiwen feedback 0k3j9x2m4n5p6q7r down --reason 内容过时 --comment "2025 年已调整"
    已记录评价：没用（内容过时） · 回答编号 0k3j9x2m4n5p6q7r · 知识库 manual
"""

from __future__ import annotations

import typer
from rich.markup import escape

from zhiwen.clikit.console import console, print_json, run_cli
from zhiwen.config import get_settings
from zhiwen.questionlog import FEEDBACK_REASONS, open_question_log

RATINGS = {"up": "有用", "down": "没用"}


def register(app: typer.Typer) -> None:
    @app.command("feedback")
    @run_cli
    def feedback(
        answer_id: str = typer.Argument(
            ..., metavar="回答编号", help="回答编号（zhiwen ask 输出的「回答编号」）"
        ),
        rating: str = typer.Argument(..., metavar="up|down", help="up：有用；down：没用"),
        reason: str | None = typer.Option(
            None, "--reason", help="没用的原因：" + "、".join(FEEDBACK_REASONS.values()) + "（或其代码）"
        ),
        comment: str | None = typer.Option(None, "--comment", help="补充说明（最多 1000 字）"),
        json_output: bool = typer.Option(False, "--json", help="输出 JSON"),
    ) -> None:
        """评价一条回答（有用 / 没用，可附原因），写入本机的问答记录，供知识库维护者查看。"""
        with open_question_log(get_settings()) as question_log:
            rated = question_log.rate(answer_id.strip(), rating, reason=reason, comment=comment)
        if json_output:
            print_json({"answer_id": rated.answer_id, "kb": rated.kb, **rated.to_json()})
            return
        why = f"（{rated.reason_label}）" if rated.reason_label else ""
        console.print(
            f"已记录评价：{RATINGS[rated.rating]}{escape(why)} · 回答编号 {rated.answer_id}"
            f" · 知识库 {escape(rated.kb)}"
        )
