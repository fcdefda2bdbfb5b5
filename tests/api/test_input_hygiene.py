"""No input gives a 5xx: a lone surrogate or a NUL anywhere — body field, key, path, query — on
every route of the spec (engine and apps) is refused with 3002 (OpenAI's 400 under ``/v1/``)
before any handler sees it. A valid surrogate pair (an emoji) is ordinary text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import APISettings, LLMSettings, Settings

BAD = {"surrogate": "\\udcff", "nul": "\\u0000"}
JSON = {"content-type": "application/json", "authorization": "Bearer t"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    home = tmp_path_factory.mktemp("hygiene")
    cfg = Settings(
        home=home,
        llm=LLMSettings(base_url=None),
        api=APISettings(admin_token="t"),
        _env_file=None,
    )
    return TestClient(create_app(cfg), raise_server_exceptions=False)


def _json_routes(client: TestClient) -> list[tuple[str, str, list[str]]]:
    spec = client.app.openapi()  # type: ignore[attr-defined]
    schemas = spec["components"]["schemas"]
    out = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            content = op.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = content["application/json"].get("schema", {})
            ref = schema.get("$ref", "").rsplit("/", 1)[-1]
            fields = list(schemas.get(ref, {}).get("properties", {})) or ["rerank"]
            out.append((method.upper(), path, fields))
    return out


def _check(response: Any, path: str) -> None:
    assert response.status_code < 500, response.text
    if path.startswith("/v1/"):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_type"
    else:
        assert response.status_code == 422
        body = response.json()
        assert body["code"] == 3002 and "参数类型错误" in body["message"]


@pytest.mark.parametrize("kind", sorted(BAD))
def test_every_json_route_refuses_unencodable_text(client: TestClient, kind: str) -> None:
    routes = _json_routes(client)
    assert len(routes) >= 8  # search, qa, settings, chat, embeddings, the apps' routes
    for method, path, fields in routes:
        url = path.replace("{name}", "calc_loan").replace("{kb}", "demo")
        for field in fields:
            raw = json.dumps({field: "@BAD@"}).replace("@BAD@", "问" + BAD[kind]).encode()
            response = client.request(
                method,
                url,
                content=raw,
                headers={"content-type": "application/json", "authorization": "Bearer t"},
            )
            _check(response, path)
        key = json.dumps({"k@BAD@": 1}).replace("@BAD@", BAD[kind]).encode()  # in a key, too
        response = client.request(method, url, content=key, headers={"authorization": "Bearer t"})
        _check(response, path)
        assert "\\u" in response.json().get("message", "\\u")  # the key is named by its escape


def test_nested_values_and_messages(client: TestClient) -> None:
    raw = b'{"model": "demo", "messages": [{"role": "user", "content": "\\u4f60\\udcff"}]}'
    response = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["param"] == "messages.0.content"


@pytest.mark.parametrize(
    "url", ["/api/v1/kbs/a%00b", "/api/v1/jobs/%00", "/api/v1/kbs/demo/documents?x=%00", "/v1/models/a%00"]
)
def test_nul_in_path_or_query(client: TestClient, url: str) -> None:
    _check(client.get(url), url)


def test_emoji_is_ordinary_text(client: TestClient) -> None:
    raw = b'{"kb": "nope", "query": "\\ud83d\\ude00 \xe5\xae\x89\xe8\xa3\x85"}'
    response = client.post("/knowledge-base/search", content=raw, headers=JSON)
    assert response.status_code == 404  # past the hygiene check: the KB does not exist


def test_cli_refuses_bytes_that_are_not_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from zhiwen.cli.main import app

    monkeypatch.setenv("ZHIWEN_HOME", str(tmp_path))
    runner = CliRunner()
    for command in (["search", "--kb", "demo", "安装\udcff"], ["ask", "--kb", "demo", "安装\udcff"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2, result.output
        assert "3002" in result.output and "U+DCFF" in result.output
