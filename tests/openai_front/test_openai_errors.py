"""Errors under ``/v1/`` are OpenAI-shaped; every other route keeps ``{code, message, data}``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from fastapi.testclient import TestClient
from front_support import Server, build_demo, make_settings

from zhiwen.answer.events import AppEvent
from zhiwen.api.app import create_app
from zhiwen.appkit.app import Answer, AppContext, AskRequest, BaseApp, Standalone
from zhiwen.appkit.registry import AppRegistry, load_apps
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter, LLMTimeout

USER = [{"role": "user", "content": "你好"}]


class TroubleApp(BaseApp):
    """Fails in the ways a real app might: bad input, a crash, a failure mid-stream."""

    name = "trouble"
    title = "故障应用"
    description = "测试用"

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        if "崩溃" in request.question:
            raise RuntimeError("boom")
        raise InvalidParameter("bad", message="参数取值无效：问题不合适")

    def answer_stream(
        self, request: AskRequest, question: Standalone, ctx: AppContext
    ) -> Iterator[AppEvent]:
        yield AppEvent("delta", {"text": "前半段"})
        raise LLMTimeout("slow", message="服务响应超时，请稍后重试")


@pytest.fixture
def demo_settings(tmp_path: Path) -> Settings:
    settings = make_settings(tmp_path / "home")
    build_demo(settings)
    return settings


@pytest.fixture
def http(demo_settings: Settings) -> Iterator[TestClient]:
    apps = AppRegistry([*load_apps().values(), TroubleApp()])
    with TestClient(create_app(demo_settings, apps=apps), raise_server_exceptions=False) as client:
        yield client


def _error(response: Any) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return dict(body["error"])


def test_validation_errors_are_400_invalid_request(http: TestClient) -> None:
    r = http.post("/v1/chat/completions", json={"model": "demo"})
    assert r.status_code == 400
    err = _error(r)
    assert err["type"] == "invalid_request_error" and err["param"] == "messages"
    assert err["code"] == "missing_required_parameter" and "messages" in err["message"]
    r = http.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and _error(r)["code"] == "invalid_json"
    r = http.post("/v1/chat/completions", json={"model": "demo", "messages": USER, "max_tokens": "many"})
    assert r.status_code == 400 and _error(r)["param"] == "max_tokens"
    # the envelope elsewhere
    r = http.post("/api/v1/qa", json={"kb": "demo"})
    assert r.status_code == 422 and r.json()["code"] == 3001


def test_unknown_route_and_model(http: TestClient) -> None:
    r = http.get("/v1/no-such-route")
    assert r.status_code == 404 and _error(r)["code"] == "unknown_url"
    r = http.post("/v1/chat/completions", json={"model": "nope", "messages": USER})
    assert r.status_code == 404 and _error(r)["code"] == "model_not_found"
    r = http.post("/v1/embeddings", json={"model": "nope", "input": "x"})
    assert r.status_code == 404 and _error(r)["code"] == "model_not_found"
    assert http.get("/api/v1/no-such-route").json()["code"] == 3004


def test_app_without_built_kbs_is_model_not_ready(http: TestClient) -> None:
    for stream in (False, True):
        r = http.post("/v1/chat/completions", json={"model": "advisor", "messages": USER, "stream": stream})
        assert r.status_code == 404
        err = _error(r)
        assert err["code"] == "model_not_ready" and "zhiwen advisor setup" in err["message"]
    card = http.get("/v1/models/advisor").json()
    assert card["metadata"]["ready"] is False and "zhiwen advisor setup" in card["metadata"]["description"]


def test_app_errors_map_to_openai_types(http: TestClient) -> None:
    r = http.post("/v1/chat/completions", json={"model": "trouble", "messages": USER})
    assert r.status_code == 400 and _error(r) == {
        "message": "参数取值无效：问题不合适",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_value",
    }
    crash = [{"role": "user", "content": "崩溃"}]
    r = http.post("/v1/chat/completions", json={"model": "trouble", "messages": crash})
    assert r.status_code == 500 and _error(r)["type"] == "server_error"


def test_failure_mid_stream_is_an_error_frame_then_done(http: TestClient) -> None:
    r = http.post("/v1/chat/completions", json={"model": "trouble", "messages": USER, "stream": True})
    assert r.status_code == 200
    frames = [line for line in r.text.splitlines() if line]
    assert frames[-1] == "data: [DONE]"
    error = json.loads(frames[-2][len("data: ") :])["error"]
    assert error["type"] == "server_error" and error["code"] == "llm_timeout"
    assert "前半段" in r.text


def test_sdk_raises_on_an_in_stream_error(demo_settings: Settings) -> None:
    apps = AppRegistry([TroubleApp()])
    with (
        Server(create_app(demo_settings, apps=apps)) as base,
        openai.OpenAI(base_url=f"{base}/v1", api_key="none", max_retries=0) as client,
    ):
        stream = client.chat.completions.create(model="trouble", messages=USER, stream=True)  # type: ignore[arg-type]
        with pytest.raises(openai.APIError, match="超时"):
            list(stream)


def test_bearer_keys(demo_settings: Settings) -> None:
    api = demo_settings.api.model_copy(update={"keys": ["sk-a", "sk-b"]})
    keyed = demo_settings.model_copy(update={"api": api})
    with TestClient(create_app(keyed), raise_server_exceptions=False) as http:
        for headers in ({}, {"Authorization": "Bearer sk-wrong"}, {"Authorization": "Basic sk-a"}):
            r = http.get("/v1/models", headers=headers)
            assert r.status_code == 401 and _error(r)["code"] == "invalid_api_key"
            assert r.headers["www-authenticate"] == "Bearer"
        # a wrong key wins over a bad body: nothing about the request is looked at first
        r = http.post("/v1/chat/completions", json={}, headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401
        assert http.get("/v1/models", headers={"Authorization": "Bearer sk-b"}).status_code == 200
        # the envelope API is behind the same keys (#29)
        assert http.get("/api/v1/kbs").status_code == 401
        assert http.get("/api/v1/kbs", headers={"Authorization": "Bearer sk-a"}).status_code == 200
    with Server(create_app(keyed)) as base:
        wrong = openai.OpenAI(base_url=f"{base}/v1", api_key="sk-wrong", max_retries=0)
        with wrong, pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        with openai.OpenAI(base_url=f"{base}/v1", api_key="sk-a", max_retries=0) as client:
            reply = client.chat.completions.create(model="demo", messages=USER)  # type: ignore[arg-type]
            assert reply.choices[0].message.content
