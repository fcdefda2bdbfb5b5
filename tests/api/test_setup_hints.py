"""Before any setup, every door of the API says which command builds what is missing (#30): 404 /
3004 with the command in the Chinese message and ``data.extra`` ``{kb, app, setup_command}``; the
OpenAI front door's ``model_not_ready`` names it too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.config import Settings

POLICY = "zhiwen policy setup ../shared/data"


@pytest.fixture
def http(settings: Settings, admin: dict[str, str]) -> Iterator[TestClient]:
    """The real server (every app's routes) over an empty home."""
    app = create_app(
        settings.model_copy(update={"embedding": settings.embedding.model_copy(update={"provider": "hash"})})
    )
    with TestClient(app, raise_server_exceptions=False, headers=admin) as client:
        yield client


def missing(resp: Any, command: str, app: str | None) -> dict[str, Any]:
    assert resp.status_code == 404, resp.text
    body = resp.json()
    assert body["code"] == 3004 and command in body["message"], body
    extra = body["data"]["extra"]
    assert extra["setup_command"] == command and extra["app"] == app, extra
    return body


@pytest.mark.parametrize(
    ("path", "body", "command", "app"),
    [
        ("/api/v1/qa", {"kb": "policy_visa", "question": "法国人去中国免签吗"}, POLICY, "policy"),
        (
            "/api/v1/qa",
            {"kb": "recipes", "question": "番茄炒蛋怎么做"},
            "zhiwen recipes setup ../shared/data",
            "recipes",
        ),
        ("/api/v1/qa", {"kb": "policy", "question": "免签吗"}, POLICY, "policy"),
        ("/api/v1/qa", {"kb": "notes", "question": "你好"}, "zhiwen index --kb notes <目录>", None),
        (
            "/api/v1/qa",
            {"kb": "recipes", "question": "番茄", "stream": True},
            "zhiwen recipes setup ../shared/data",
            "recipes",
        ),
        (
            "/knowledge-base/search",
            {"kb": "listings", "query": "两房"},
            "zhiwen listings setup ../shared/data",
            "listings",
        ),
        ("/ask", {"question": "浦东 500万以内两房"}, "zhiwen listings setup ../shared/data", "listings"),
        ("/api/v1/policy/ask", {"question": "法国人去中国免签吗"}, POLICY, "policy"),
        ("/api/v1/policy/ask", {"question": "法国人去中国免签吗", "stream": True}, POLICY, "policy"),
    ],
)
def test_routes_name_the_setup(
    http: TestClient, path: str, body: dict[str, Any], command: str, app: str | None
) -> None:
    missing(http.post(path, json=body), command, app)


def test_policy_message_is_short_and_lists_the_kbs(http: TestClient) -> None:
    body = missing(http.post("/api/v1/policy/ask", json={"question": "法国人去中国免签吗"}), POLICY, "policy")
    assert body["message"] == f"政策问答的知识库尚未建立：请先运行 {POLICY}"
    assert body["data"]["extra"]["kbs"] == ["policy_visa", "policy_airline", "policy_general"]


def test_kb_routes_name_the_setup(http: TestClient) -> None:
    body = missing(http.get("/api/v1/kbs/recipes"), "zhiwen recipes setup ../shared/data", "recipes")
    assert body["message"] == "知识库 recipes 尚未建立：请先运行 zhiwen recipes setup ../shared/data"


@pytest.mark.parametrize("model", ["policy", "policy_visa", "advisor"])
def test_openai_front_door_names_the_setup(http: TestClient, model: str) -> None:
    resp = http.post(
        "/v1/chat/completions", json={"model": model, "messages": [{"role": "user", "content": "你好"}]}
    )
    assert resp.status_code == 404, resp.text
    err = resp.json()["error"]
    app = model.split("_")[0]
    assert (
        err["code"] == "model_not_ready" and f"请先运行 zhiwen {app} setup ../shared/data" in err["message"]
    )


def test_advisor_chat_names_the_setup_where_its_search_failed(http: TestClient) -> None:
    resp = http.post("/api/v1/chat", json={"session_id": "s1", "message": "总价300万，契税多少？"})
    assert resp.status_code == 200
    assert "请先运行 zhiwen advisor setup ../shared/data" in resp.text  # the calculation still answers
