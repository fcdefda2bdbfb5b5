"""A KB that is not there names the command that builds it (#30): the registry's setup hint, the one
error every raise site uses, and what the CLI prints before any setup. The hint is handed where
it is known (the registry, the interfaces); nothing below the apps holds it (#35)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from zhiwen.appkit import Answer, AppContext, AskRequest, BaseApp, KBSpec, Standalone
from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import AppRegistry, load_apps, setup_command
from zhiwen.config import reset_settings_cache
from zhiwen.errors import KnowledgeBaseNotFound, kb_not_found, setup_hinted, with_setup_hint
from zhiwen.kb import open_kb


class TwoKBApp(BaseApp):
    name = "toy"
    title = "玩具"
    kbs = (KBSpec("toy_a", "甲"), KBSpec("toy_b", "乙"))

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        return Answer(answer="")


@pytest.fixture
def installed_hints() -> AppRegistry:
    """The installed apps (their setup hints)."""
    return load_apps()


def test_registry_names_the_owning_apps_setup() -> None:
    registry = AppRegistry([TwoKBApp()])
    assert setup_command(TwoKBApp()) == "zhiwen toy setup ../shared/data"
    hint = registry.setup_hint("toy_b")
    assert (hint.app, hint.command, hint.app_kbs) == ("toy", "zhiwen toy setup ../shared/data", ())
    named = registry.setup_hint("toy")  # the app's name, not one of its KBs
    assert named.app == "toy" and named.app_kbs == ("toy_a", "toy_b")
    free = registry.setup_hint("notes")
    assert (free.app, free.command) == (None, "zhiwen index --kb notes <目录>")
    assert registry.owner("toy_a") is not None and registry.owner("notes") is None


def test_kb_not_found_messages_and_data() -> None:
    hints = AppRegistry([TwoKBApp()]).setup_hint
    err = kb_not_found("toy_a", hint=hints("toy_a"))
    assert isinstance(err, KnowledgeBaseNotFound) and err.http_status == 404 and err.code == 3004
    assert err.message == "知识库 toy_a 尚未建立：请先运行 zhiwen toy setup ../shared/data"
    assert err.data == {"kb": "toy_a", "app": "toy", "setup_command": "zhiwen toy setup ../shared/data"}
    assert err.unhinted is None
    assert "toy_a、toy_b" in kb_not_found("toy", hint=hints("toy")).message
    notes = kb_not_found("notes", hint=hints("notes"))
    assert notes.message == "知识库不存在：notes（导入文档即可建立：zhiwen index --kb notes <目录>）"
    assert notes.data["app"] is None


def test_below_the_apps_the_error_is_named_where_it_reaches_an_interface() -> None:
    """The engine raises without knowing the apps; the interface's hints name the command."""
    below = kb_not_found("toy_a", "no such directory")
    assert below.unhinted == "toy_a" and below.data["setup_command"] == "zhiwen index --kb toy_a <目录>"
    named = with_setup_hint(below, AppRegistry([TwoKBApp()]).setup_hint)
    assert named.message == "知识库 toy_a 尚未建立：请先运行 zhiwen toy setup ../shared/data"
    assert named.detail == "no such directory" and with_setup_hint(named, AppRegistry([]).setup_hint) is named
    hinted = setup_hinted(AppRegistry([TwoKBApp()]).setup_hint)
    with pytest.raises(KnowledgeBaseNotFound, match="zhiwen toy setup") as caught, hinted:
        raise below
    assert caught.value.__cause__ is below


def test_app_not_set_up_error() -> None:
    registry = AppRegistry([TwoKBApp()])
    err = registry.not_set_up(registry["toy"], ["toy_a", "toy_b"])
    assert (
        err.http_status == 404
        and err.message == "玩具的知识库尚未建立：请先运行 zhiwen toy setup ../shared/data"
    )
    assert (
        err.data["kbs"] == ["toy_a", "toy_b"]
        and err.data["setup_command"] == "zhiwen toy setup ../shared/data"
    )


@pytest.mark.parametrize(
    ("kb", "app"),
    [
        ("policy_visa", "policy"),
        ("policy_general", "policy"),
        ("listings", "listings"),
        ("recipes", "recipes"),
        ("advisor_faq", "advisor"),
    ],
)
def test_every_built_in_apps_kb_is_known(installed_hints: AppRegistry, kb: str, app: str) -> None:
    expected = f"知识库 {kb} 尚未建立：请先运行 zhiwen {app} setup ../shared/data"
    with pytest.raises(KnowledgeBaseNotFound) as caught:
        open_kb(kb)  # the engine alone: it cannot know the apps
    assert caught.value.unhinted == kb
    assert with_setup_hint(caught.value, installed_hints.setup_hint).message == expected
    with pytest.raises(KnowledgeBaseNotFound, match=expected):
        build_context(llm=None).open_kb(kb)  # the KBs an app opens: named by the installed apps


# -- the CLI, before any setup ------------------------------------------------------------------
@pytest.fixture
def zw(
    zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch, installed_hints: AppRegistry
) -> Iterator[Callable[..., Result]]:
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.setenv("COLUMNS", "200")
    reset_settings_cache()
    from zhiwen.cli.main import app

    runner = CliRunner()
    yield lambda *args: runner.invoke(app, list(args))
    from zhiwen.kb import close_all

    close_all()


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (("ask", "--kb", "policy_visa", "法国人去中国免签吗"), "zhiwen policy setup ../shared/data"),
        (("policy", "ask", "法国人去中国免签吗"), "zhiwen policy setup ../shared/data"),
        (("listings", "ask", "浦东两房"), "zhiwen listings setup ../shared/data"),
        (("recipes", "ask", "番茄炒蛋怎么做"), "zhiwen recipes setup ../shared/data"),
        (("search", "--kb", "recipes", "番茄"), "zhiwen recipes setup ../shared/data"),
        (("kb", "info", "advisor_policy"), "zhiwen advisor setup ../shared/data"),
        (("ask", "--kb", "notes", "你好"), "zhiwen index --kb notes <目录>"),
        (("kb", "delete", "notes", "--yes"), "zhiwen index --kb notes <目录>"),
    ],
)
def test_cli_names_the_command(zw: Callable[..., Result], args: tuple[str, ...], command: str) -> None:
    r = zw(*args)
    assert r.exit_code != 0 and "Traceback" not in r.output
    said = f"请先运行 {command}" in r.output or f"即可建立：{command}" in r.output
    assert "3004" in r.output and said, r.output
