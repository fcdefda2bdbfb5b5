"""``POST /api/v1/policy/ask`` (JSON and SSE, bad input, LLM faults), the CLI, and the real data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from policy_fixtures import make_settings
from typer.testing import CliRunner

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.api.handlers import install_exception_handlers
from zhiwen.appkit.app import AppContext
from zhiwen.apps.policy import app
from zhiwen.config import Settings
from zhiwen.llm import clear_llm_cache

URL = "/api/v1/policy/ask"


def client_for(settings: Settings) -> TestClient:
    api = FastAPI()
    install_exception_handlers(api)
    api.state.settings = settings
    router = app.router()
    assert router is not None
    api.include_router(router)
    return TestClient(api, raise_server_exceptions=False)


@pytest.fixture
def client(mini_settings: Settings) -> TestClient:
    return client_for(mini_settings)


def test_ask_json(client: TestClient) -> None:
    r = client.post(URL, json={"question": "关于塞尔维亚的机组人员入出境，下列说法正确的有", "top_n": 10})
    assert r.status_code == 200
    body = r.json()
    assert body["code"] == 0
    data = body["data"]
    assert (data["intent"], data["strategy"], data["fallback_reason"]) == ("airline_visa_free", "dual", None)
    for key in ("answer", "rewritten_question", "sources", "llm_used", "timings_ms"):
        assert key in data
    src = data["sources"][0]
    assert set(src) >= {"kb", "id", "title", "text", "score", "rerank_score"}


def test_ask_as_of(client: TestClient) -> None:
    r = client.post(URL, json={"question": "法国公民免签入境能停留多久", "as_of": "2026-01-15"})
    data = r.json()["data"]
    assert data["as_of"] == "2026-01-15" and "⚠️ 注意：法国（France）" in data["answer"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"question": ""}, 422, 3003),
        ({"question": "   "}, 422, 3003),
        ({}, 422, 3001),
        ({"question": "泰国免签", "top_n": 0}, 422, 3003),
        ({"question": "泰国免签", "top_n": 101}, 422, 3003),  # over max_top_n (100)
        ({"question": "泰国免签", "top_n": "ten"}, 422, 3002),
        ({"question": "泰国免签", "top_n": 2.5}, 422, 3002),
        ({"question": "泰国免签", "as_of": "2025-13-45"}, 422, 3002),
        ({"question": "泰国免签", "as_of": "yesterday"}, 422, 3002),
        ({"question": 42}, 422, 3002),
        ({"question": "泰国免签", "stream": "maybe"}, 422, 3002),
    ],
)
def test_bad_input(client: TestClient, body: dict[str, Any], status: int, code: int) -> None:
    r = client.post(URL, json=body)
    assert r.status_code == status, r.text
    assert r.json()["code"] == code and r.json()["message"]


def sse_events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def test_ask_stream(client: TestClient) -> None:
    with client.stream("POST", URL, json={"question": "中国公民去泰国需要签证吗？", "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.read().decode())
    types = [e["type"] for e in events]
    assert types[0] == "meta" and types[1] == "sources" and types[-1] == "done"
    assert events[0]["intent"] == "visa_free" and events[0]["strategy"] == "dual"
    assert "泰国" in "".join(e["text"] for e in events if e["type"] == "delta")


def test_stream_bad_input_is_still_4xx(client: TestClient) -> None:
    r = client.post(URL, json={"question": "泰国免签", "stream": True, "top_n": 500})
    assert r.status_code == 422 and r.json()["code"] == 3003


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
    clear_llm_cache()


@pytest.mark.parametrize("fault", ["hang", "bad_json", "500"])
def test_llm_faults_never_500(
    mini_settings: Settings, fake: FakeOpenAI, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZHIWEN_POLICY__INTENT_CLASSIFIER_TIMEOUT", "0.5")
    monkeypatch.setenv("ZHIWEN_POLICY__REWRITE_TIMEOUT", "0.5")
    llm = {"base_url": fake.base_url, "model": "fake", "max_retries": 0, "timeout_s": 1.0}
    client = client_for(make_settings(mini_settings.home, llm=llm))
    fake.script(Reply.fault(fault, delay_s=3.0), Reply.fault("500"))  # classifier, then the answer
    r = client.post(URL, json={"question": "关于塞尔维亚的机组人员入出境，下列说法正确的有"})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["strategy"] == "single" and data["fallback_reason"].startswith("classifier_")
    assert data["llm_used"] is False and data["sources"] and "塞尔维亚" in data["answer"]


# -- CLI -----------------------------------------------------------------------------------------
@pytest.fixture
def cli_env(mini_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from zhiwen.config import reset_settings_cache

    monkeypatch.setenv("ZHIWEN_HOME", str(mini_settings.home))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    yield
    reset_settings_cache()


def test_cli_ask_json_and_text(cli_env: None) -> None:
    group = app.cli()
    assert group is not None
    runner = CliRunner()
    r = runner.invoke(group, ["ask", "边检证件过期后流程是什么？", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert (data["intent"], data["strategy"], data["rewritten_question"]) == ("other", "single", None)
    r = runner.invoke(group, ["ask", "中国公民去泰国需要签证吗？", "--as-of", "2026-01-01"])
    assert r.exit_code == 0 and "意图：免签政策" in r.stdout and "泰国" in r.stdout
    bad = runner.invoke(group, ["ask", "泰国", "--as-of", "soon"])
    assert bad.exit_code == 2 and "as_of" in bad.output
    empty = runner.invoke(group, ["ask", "  "])
    assert empty.exit_code == 2


def test_cli_setup(cli_env: None, mini_data: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from zhiwen.config import reset_settings_cache

    monkeypatch.setenv("ZHIWEN_HOME", str(tmp_path / "home"))
    reset_settings_cache()
    group = app.cli()
    assert group is not None
    r = CliRunner().invoke(group, ["setup", str(mini_data)])
    assert r.exit_code == 0, r.output
    assert "policy_visa" in r.stdout and "policy_general" in r.stdout
    missing = CliRunner().invoke(group, ["setup", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2


# -- the real shared data (hash embedder) ---------------------------------------------------------
@pytest.mark.shared_data
def test_seed_cases_on_real_data(shared_ctx: AppContext) -> None:
    from zhiwen.apps.policy.service import ask_policy

    one = ask_policy("关于塞尔维亚的机组人员入出境，下列说法正确的有", shared_ctx).data()
    assert (one["intent"], one["strategy"]) == ("airline_visa_free", "dual")
    ids = [s["id"] for s in one["sources"]]
    assert "country/RS#0" in ids and any(i.startswith("外国人入境出境管理条例#第六条") for i in ids)
    assert any(s["kb"] == "policy_general" for s in one["sources"])
    two = ask_policy("中国公民去泰国需要签证吗？", shared_ctx).data()
    assert (two["intent"], two["strategy"]) == ("visa_free", "dual") and two["sources"][0][
        "id"
    ] == "country/TH#0"
    three = ask_policy("边检证件过期后流程是什么？", shared_ctx).data()
    assert (three["intent"], three["strategy"], three["rewritten_question"]) == ("other", "single", None)
    assert {s["kb"] for s in three["sources"]} == {"policy_general"}


def test_mounted_by_the_server(mini_settings: Settings) -> None:
    from zhiwen.api.app import create_app
    from zhiwen.appkit.registry import AppRegistry

    server = TestClient(create_app(mini_settings, apps=AppRegistry([app])), raise_server_exceptions=False)
    r = server.post(URL, json={"question": "边检证件过期后流程是什么？"})
    assert r.status_code == 200 and r.json()["data"]["strategy"] == "single"
    schema = server.get("/openapi.json").json()
    assert URL in schema["paths"]
    metrics = server.get("/metrics").text
    assert "zhiwen_policy_questions_total" in metrics
