"""Conversations on the command line: ``zhiwen ask --session`` across runs, ``zhiwen chat``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from zhiwen.documents import Document
from zhiwen.kb import open_kb

Invoke = Callable[..., Result]

DEPARTMENTS = [
    ("law", "北京大学法学院", "北京大学法学院成立于1904年，位于燕园校区，开设法学理论、民商法课程。"),
    ("eco", "北京大学经济学院", "北京大学经济学院成立于1912年，位于燕园校区，开设经济学、金融学课程。"),
    ("phy", "北京大学物理学院", "北京大学物理学院成立于2001年，位于昌平校区，开设理论物理课程。"),
]


def _kb() -> None:
    kb = open_kb("uni", create=True, embedder="hash")
    docs = [Document(id=i, title=t, text=f"# {t}\n\n{body}") for i, t, body in DEPARTMENTS]
    kb.index_documents(docs, progress=False)


def test_ask_with_a_session_remembers_across_runs(zw: Invoke, cli_home: Path) -> None:
    _kb()
    first = zw("ask", "--kb", "uni", "--session", "s1", "北京大学物理学院是哪年成立的？")
    assert first.exit_code == 0, first.output
    assert "2001" in first.output
    follow = zw("ask", "--kb", "uni", "--session", "s1", "它在哪个校区？")
    assert follow.exit_code == 0, follow.output
    assert "理解为：北京大学物理学院在哪个校区？" in follow.output and "昌平" in follow.output
    alone = zw("ask", "--kb", "uni", "--session", "s2", "它在哪个校区？")
    assert "理解为" not in alone.output  # another session knows nothing of the first


def test_chat_holds_a_conversation_and_starts_anew(zw: Invoke, cli_home: Path) -> None:
    _kb()
    lines = ["北京大学物理学院是哪年成立的？", "开设了哪些课程？", "/new", "开设了哪些课程？", "/exit"]
    r = zw("chat", "--kb", "uni", input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    assert r.output.count("理解为：北京大学物理学院开设了哪些课程？") == 1  # not after /new
    assert "理论物理" in r.output and "已开始新对话" in r.output


def test_chat_needs_a_target(zw: Invoke, cli_home: Path) -> None:
    r = zw("chat", input="/exit\n")
    assert r.exit_code != 0 and "请指定应用名或知识库" in r.output
