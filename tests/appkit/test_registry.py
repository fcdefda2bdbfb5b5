"""The app registry and the top layers built on it: loud failures naming the broken app,
``ZHIWEN_DISABLED_APPS``, KB → app lookups, the API mounting app routers, ``zhiwen apps``.
"""

from __future__ import annotations

import json
import sys
import types
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi import APIRouter
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from zhiwen.api.app import create_app
from zhiwen.appkit import Answer, AppContext, AskRequest, BaseApp, KBSpec, Standalone
from zhiwen.appkit import registry as registry_mod
from zhiwen.appkit.app import Loader
from zhiwen.appkit.registry import (
    AppLoadError,
    AppRegistry,
    AppSpec,
    build_registry,
    installed_specs,
    load_apps,
)
from zhiwen.config import Settings

TOY_MODULE = "zhiwen_test_toy_app"


def _load_toy(path: Any, **options: Any) -> Any:
    raise NotImplementedError


class ToyApp(BaseApp):
    name = "toy"
    title = "玩具"
    description = "测试用的应用"
    kbs = (KBSpec("toy_kb", "玩具知识库"), KBSpec("toy_extra", "附加库", required=False))

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        return Answer(answer="玩具回答")

    def router(self) -> APIRouter:
        router = APIRouter(tags=["toy"])

        @router.get("/api/v1/toy/ping")
        def ping() -> dict[str, str]:
            return {"pong": "玩具"}

        return router

    def cli(self) -> typer.Typer:
        group = typer.Typer()

        @group.command("hello")
        def hello() -> None:
            typer.echo("你好")

        return group

    def formats(self) -> Mapping[str, Loader]:
        return {"toyfmt": _load_toy}

    def sniff(self, path: Path) -> str | None:
        return "toyfmt" if path.suffix == ".toy" else None

    def serves(self, kb_app: str | None) -> bool:
        return kb_app in ("toy", "toy_legacy")


class PlainApp(BaseApp):
    name = "plain"
    title = "朴素"


@pytest.fixture
def toy_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType(TOY_MODULE)
    module.app = ToyApp()  # type: ignore[attr-defined]
    module.other = PlainApp()  # type: ignore[attr-defined]
    module.not_an_app = object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, TOY_MODULE, module)
    return module


@pytest.fixture
def fresh_load_apps() -> Iterator[None]:
    load_apps.cache_clear()
    yield
    load_apps.cache_clear()


@pytest.fixture
def settings(zhiwen_home: Path) -> Settings:
    return Settings(home=zhiwen_home, embedding={"provider": "hash"})


# -- loading ---------------------------------------------------------------------------------------
def test_a_spec_loads_its_app(toy_module: types.ModuleType) -> None:
    reg = build_registry(
        [AppSpec("toy", f"{TOY_MODULE}:app"), AppSpec("plain", f"{TOY_MODULE}:other")], set()
    )
    assert list(reg) == ["toy", "plain"] and len(reg) == 2
    assert reg["toy"] is toy_module.app


def test_the_attribute_defaults_to_app(toy_module: types.ModuleType) -> None:
    assert build_registry([AppSpec("toy", TOY_MODULE)], set())["toy"] is toy_module.app


@pytest.mark.parametrize(
    ("target", "cause"),
    [
        ("nonexistent.module:app", "ModuleNotFoundError"),
        ("json:no_such_attribute", "AttributeError"),
    ],
)
def test_an_app_that_cannot_be_imported_fails_loudly_by_name(target: str, cause: str) -> None:
    with pytest.raises(AppLoadError) as info:
        build_registry([AppSpec("x", target)], set())
    message = str(info.value)
    assert "「x」" in message and target in message and cause in message
    assert "ZHIWEN_DISABLED_APPS=x" in message


def test_an_app_whose_module_raises_on_import_names_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "zhiwen_test_broken_app.py").write_text('raise RuntimeError("数据文件缺失")\n', "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AppLoadError, match=r"「broken」.*RuntimeError: 数据文件缺失"):
        build_registry([AppSpec("broken", "zhiwen_test_broken_app:app")], set())
    sys.modules.pop("zhiwen_test_broken_app", None)


@pytest.mark.parametrize(
    ("spec_name", "attribute"),
    [
        ("toy", "not_an_app"),  # not a BaseApp
        ("cookbook", "app"),  # a BaseApp, but named "toy"
    ],
)
def test_a_wrong_object_is_refused(toy_module: types.ModuleType, spec_name: str, attribute: str) -> None:
    with pytest.raises(AppLoadError, match=f"「{spec_name}」"):
        build_registry([AppSpec(spec_name, f"{TOY_MODULE}:{attribute}")], set())


def test_one_broken_app_stops_the_whole_registry(toy_module: types.ModuleType) -> None:
    specs = [AppSpec("toy", f"{TOY_MODULE}:app"), AppSpec("x", "nonexistent.module:app")]
    with pytest.raises(AppLoadError, match="「x」"):
        build_registry(specs, set())


def test_disabled_apps_are_skipped(toy_module: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    specs = [AppSpec("toy", f"{TOY_MODULE}:app"), AppSpec("x", "nonexistent.module:app")]
    monkeypatch.setenv("ZHIWEN_DISABLED_APPS", " x , other ")
    assert list(build_registry(specs)) == ["toy"]
    monkeypatch.setenv("ZHIWEN_DISABLED_APPS", "x,toy")
    assert list(build_registry(specs)) == []
    monkeypatch.delenv("ZHIWEN_DISABLED_APPS")
    assert list(build_registry(specs, {"x"})) == ["toy"]  # an explicit set wins over the environment


def test_installed_apps_include_recipes_and_listings(fresh_load_apps: None) -> None:
    names = [s.name for s in installed_specs()]
    assert names == sorted(names) and {"recipes", "listings"} <= set(names)
    reg = load_apps()
    assert {"recipes", "listings"} <= set(reg) and load_apps() is reg  # loaded once
    for name, app in reg.items():
        assert isinstance(app, BaseApp) and app.name == name and app.title and app.kbs
        assert reg.for_kb(name) is app
    assert reg.formats()["howtocook"][0] is reg["recipes"]
    assert reg.formats()["lianjia"][0] is reg["listings"]


def test_a_broken_installed_app_stops_load_apps_and_create_app(
    monkeypatch: pytest.MonkeyPatch, fresh_load_apps: None, settings: Settings
) -> None:
    monkeypatch.setattr(registry_mod, "installed_specs", lambda: [AppSpec("x", "nonexistent.module:app")])
    with pytest.raises(AppLoadError, match="「x」"):
        load_apps()
    with pytest.raises(AppLoadError, match="「x」"):
        create_app(settings)
    monkeypatch.setenv("ZHIWEN_DISABLED_APPS", "x")
    load_apps.cache_clear()
    assert len(load_apps()) == 0


# -- lookups ---------------------------------------------------------------------------------------
def test_for_kb_formats_and_sniff(tmp_path: Path) -> None:
    toy, plain = ToyApp(), PlainApp()
    reg = AppRegistry([plain, toy])
    assert reg.for_kb("toy") is toy and reg.for_kb("toy_legacy") is toy and reg.for_kb("plain") is plain
    assert reg.for_kb(None) is None and reg.for_kb("") is None and reg.for_kb("unknown") is None
    assert reg.formats() == {"toyfmt": (toy, _load_toy)}
    assert reg.sniff(tmp_path / "data.toy") == (toy, "toyfmt")
    assert reg.sniff(tmp_path / "data.csv") is None
    with pytest.raises(KeyError):
        reg["missing"]


# -- API -------------------------------------------------------------------------------------------
def test_create_app_mounts_each_apps_router_and_healthz_lists_apps(settings: Settings) -> None:
    api = create_app(settings, apps=AppRegistry([ToyApp(), PlainApp()]))
    assert api.state.app_routers == ["toy"]  # PlainApp has no router
    with TestClient(api) as client:
        assert client.get("/api/v1/toy/ping").json() == {"pong": "玩具"}
        health = client.get("/healthz").json()
    assert health["code"] == 0 and health["data"]["apps"] == ["plain", "toy"]
    assert "/api/v1/toy/ping" in api.openapi()["paths"]


def test_app_routers_can_be_left_out(settings: Settings) -> None:
    api = create_app(settings, apps=AppRegistry([ToyApp()]), app_routers=False)
    with TestClient(api) as client:
        assert client.get("/api/v1/toy/ping").status_code == 404
        assert client.get("/healthz").json()["data"]["apps"] == ["toy"]


def test_installed_app_routes_do_not_collide(settings: Settings, fresh_load_apps: None) -> None:
    api = create_app(settings)
    routes = [(r.path, m) for r in api.routes if isinstance(r, APIRoute) for m in r.methods or ()]
    duplicates = [route for route, n in Counter(routes).items() if n > 1]
    assert duplicates == [], f"routes mounted twice (the later one is unreachable): {duplicates}"
    assert set(api.state.app_routers) <= set(load_apps())


# -- CLI -------------------------------------------------------------------------------------------
def test_zhiwen_apps_json_lists_the_apps_with_their_kbs(zhiwen_home: Path) -> None:
    from zhiwen.cli.main import app as cli

    result = CliRunner().invoke(cli, ["apps", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert {"recipes", "listings"} <= set(rows)
    assert [k["name"] for k in rows["recipes"]["kbs"]] == ["recipes"]
    assert [k["name"] for k in rows["listings"]["kbs"]] == ["listings"]
    for row in rows.values():
        assert set(row) == {"name", "title", "description", "kbs", "formats", "routes", "cli"}
        assert row["title"] and all(k["description"] for k in row["kbs"])
    assert "howtocook" in rows["recipes"]["formats"]


def test_zhiwen_apps_table_and_each_apps_group(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    from zhiwen.cli.main import app as cli

    runner = CliRunner()
    table = runner.invoke(cli, ["apps"])
    assert table.exit_code == 0 and "recipes" in table.stdout and "listings" in table.stdout
    assert "zhiwen recipes --help" in table.stdout
    for name in ("recipes", "listings"):
        group = runner.invoke(cli, [name, "--help"])
        assert group.exit_code == 0, group.output


def test_describe_reports_routes_formats_and_cli() -> None:
    from zhiwen.cli.apps import describe

    (toy, plain) = describe(AppRegistry([ToyApp(), PlainApp()]))
    assert toy == {
        "name": "toy",
        "title": "玩具",
        "description": "测试用的应用",
        "kbs": [
            {"name": "toy_kb", "description": "玩具知识库"},
            {"name": "toy_extra", "description": "附加库"},
        ],
        "formats": ["toyfmt"],
        "routes": ["/api/v1/toy/ping"],
        "cli": True,
    }
    assert plain["routes"] == [] and plain["cli"] is False and plain["kbs"] == []


def test_register_mounts_each_apps_group_as_zhiwen_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from zhiwen.cli import apps as cli_apps

    monkeypatch.setattr(cli_apps, "load_apps", lambda: AppRegistry([ToyApp(), PlainApp()]))
    cli = typer.Typer()
    cli_apps.register(cli)
    runner = CliRunner()
    assert runner.invoke(cli, ["toy", "hello"]).stdout.strip() == "你好"
    assert runner.invoke(cli, ["plain", "--help"]).exit_code != 0  # no group: not mounted
    listed = runner.invoke(cli, ["apps", "--json"])
    assert [row["name"] for row in json.loads(listed.stdout)] == ["toy", "plain"]


def test_register_refuses_to_start_with_a_broken_app(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from zhiwen.cli import apps as cli_apps

    def broken() -> AppRegistry:
        return build_registry([AppSpec("x", "nonexistent.module:app")], set())

    monkeypatch.setattr(cli_apps, "load_apps", broken)
    with pytest.raises(SystemExit) as info:
        cli_apps.register(typer.Typer())
    assert info.value.code != 0
    err = capsys.readouterr().err
    assert "错误" in err and "「x」" in err
