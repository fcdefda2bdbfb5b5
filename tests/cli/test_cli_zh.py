"""typer's and click's own words in Chinese: help screens, usage lines, usage errors, defaults."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from typer.testing import Result

from zhiwen.cli.zh import setting, translate_error, type_label, usage_args

Invoke = Callable[..., Result]

#: what typer and click print on their own, in English, that must not reach a user
BOILERPLATE = (
    "Usage",
    "Options",
    "Arguments",
    "Commands",
    "Show this message",
    "[required]",
    "[default",
    "Try ",
    "for help",
    "Error",
    "Missing",
    "Invalid value",
    "No such",
    "requires an argument",
    "[OPTIONS]",
    "COMMAND",
    "[ARGS]",
    "<str>",
    "<int",
    "<float>",
    "<bool>",
    "<path>",
    "list[",
    "Aborted",
    "seed 00",
)

HELP_SCREENS = [
    (),
    ("ask",),
    ("index",),
    ("search",),
    ("serve",),
    ("demo",),
    ("eval",),
    ("tune",),
    ("chat",),
    ("apps",),
    ("kb",),
    ("kb", "info"),
    ("recipes",),
    ("recipes", "ask"),
    ("listings", "ask"),
    ("policy", "ask"),
    ("advisor", "calc", "loan"),
]


def english_left(text: str) -> list[str]:
    return [word for word in BOILERPLATE if word in text]


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


@pytest.mark.parametrize("args", HELP_SCREENS, ids=lambda a: " ".join(a) or "zhiwen")
def test_help_screens_are_chinese(zw: Invoke, narrow: None, args: tuple[str, ...]) -> None:
    r = zw(*args, "--help")
    assert r.exit_code == 0, r.output
    assert english_left(r.output) == [], r.output
    assert "用法：zhiwen" in r.output and "显示帮助并退出。" in r.output
    # long Chinese help folds at 80 columns; it is never cut with "…"
    assert "…" not in r.output, r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80


def test_help_names_arguments_and_types_in_chinese(zw: Invoke, narrow: None) -> None:
    out = zw("ask", "--help").output
    assert "用法：zhiwen ask [选项] {问题}" in out
    assert "参数" in out and "选项" in out and "[必填]" in out
    assert "<文本>" in out and "<整数> [1<=x<=50]" in out
    out = zw("--help").output
    assert "用法：zhiwen [选项] 命令 [参数]..." in out and "命令" in out


def test_help_shows_the_real_defaults(zw: Invoke, narrow: None, monkeypatch: pytest.MonkeyPatch) -> None:
    out = zw("serve", "--help").output
    assert f"默认 {setting('api.host')}" in out and f"默认 {setting('api.port')}" in out
    assert "settings." not in out
    out = zw("search", "--help").output
    assert f"默认 {setting('retrieval.default_mode')}" in out and "默认取配置" not in out
    assert "[默认：10]" in out  # typer's own default marker, in Chinese


def test_setting_reads_the_environment(monkeypatch: pytest.MonkeyPatch, cli_home: object) -> None:
    from zhiwen.config import reset_settings_cache

    monkeypatch.setenv("ZHIWEN_API__PORT", "8765")
    reset_settings_cache()
    assert setting("api.port") == 8765
    monkeypatch.setenv("ZHIWEN_API__PORT", "not a port")  # a bad tree: the declared default
    reset_settings_cache()
    assert setting("api.port") == 8000


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("ask",), "缺少参数「问题」。"),
        (("ask", "--kb", "demo", "--top-k", "0", "q"), "--top-k 的取值无效：应大于或等于 1"),
        (("ask", "--kb", "demo", "--top-k", "abc", "q"), "--top-k 的取值无效：应为整数"),
        (("search", "--kb"), "选项 --kb 需要一个值。"),
        (("search", "--bogus", "q"), "没有这个选项：--bogus"),
        (("nope",), "没有这个命令：nope。"),
        (("ask", "q"), "缺少选项「--kb」。"),
        (("kb", "info", "a", "b"), "多余的参数：b"),
    ],
)
def test_usage_errors_are_chinese(zw: Invoke, narrow: None, args: tuple[str, ...], expected: str) -> None:
    r = zw(*args)
    assert r.exit_code == 2, r.output
    assert expected in r.output, r.output
    assert "错误" in r.output and ("用法" not in r.output or "查看帮助" in r.output)
    assert english_left(r.output) == [], r.output


def test_confirm_abort_is_chinese(zw: Invoke, cli_home: object) -> None:
    from zhiwen.kb import open_kb

    open_kb("gone", create=True, embedder="hash")
    r = zw("kb", "delete", "gone", input="n\n")
    assert r.exit_code == 1 and "已取消" in r.output and english_left(r.output) == []


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("Missing argument 'QUESTION'.", "缺少参数「QUESTION」。"),
        ("Missing option '--kb' / '-k'.", "缺少选项「--kb / -k」。"),
        ("Missing parameter: name", "缺少参数「name」。"),
        ("Missing command.", "缺少子命令。"),
        ("No such command 'x'.", "没有这个命令：x。"),
        ("No such option: --jsn (Possible options: --json)", "没有这个选项：--jsn（您是不是想用：--json）"),
        ("No such option: --x", "没有这个选项：--x。"),
        ("Option '--kb' requires an argument.", "选项 --kb 需要一个值。"),
        ("Option '--json' does not take a value.", "选项 --json 不接受取值。"),
        ("Got unexpected extra argument(s) (a b)", "多余的参数：a b"),
        ("Got unexpected extra arguments (a b)", "多余的参数：a b"),
        # click itself (older typer) and pydantic (typer ≥ 0.2x) say a bad value differently
        (
            "Invalid value for '--top-k': 0 is not in the range 1<=x<=50.",
            "--top-k 的取值无效：0 不在范围 1<=x<=50 内",
        ),
        ("Invalid value for '--n': 'x' is not a valid integer.", "--n 的取值无效：'x' 不是有效的整数"),
        (
            "Invalid value for '--n': Input should be less than or equal to 50",
            "--n 的取值无效：应小于或等于 50",
        ),
        (
            "Invalid value for '--r': Input should be a valid number, unable to parse",
            "--r 的取值无效：应为数字",
        ),
        (
            "Invalid value for '--m': Input should be 'a', 'b' or 'c'",
            "--m 的取值无效：应为以下之一：'a'、'b'、'c'",
        ),
        ("Invalid value: Value 'x' is not a valid float.", "取值无效：'x' 不是有效的数值"),
        ("Path 'nope' does not exist.", "nope 不存在"),
        ("知识库不存在：x", "知识库不存在：x"),  # ours: as it was
    ],
)
def test_translate_error(english: str, chinese: str) -> None:
    assert translate_error(english) == chinese


def test_type_labels_and_usage() -> None:
    assert type_label("<int range>") == "<整数>" and type_label("<list[str]>") == "<文本>"
    assert type_label("<a|b>") == "<a|b>" and type_label(None) is None
    assert usage_args("[OPTIONS] COMMAND [ARGS]...") == "[选项] 命令 [参数]..."


def test_every_rule_answers_in_chinese() -> None:
    """No rule leaves an English word of its own in what it returns."""
    from zhiwen.cli.zh import CATALOGUE, RICH_CONSTANTS

    for text in [*CATALOGUE.values(), *RICH_CONSTANTS.values()]:
        words = re.sub(r"\{[^}]*\}|\[/?\w*\]", "", text)
        assert not re.search(r"[A-Za-z]{3,}", words), text
