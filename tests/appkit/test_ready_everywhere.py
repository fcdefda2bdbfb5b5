"""One answer to "who answers this, and is it ready" (#35): an app is ready when every KB it marks
required is built. REST (``/api/v1/qa``, the app's own route), the OpenAI front door and the CLI
give the same answer on a half-set-up app: 404 / 3004 naming its setup and the KBs missing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from zhiwen.api.app import create_app
from zhiwen.appkit.registry import HomeKBs, load_apps
from zhiwen.config import LLMSettings, Settings, reset_settings_cache
from zhiwen.documents import Document
from zhiwen.kb import close_all, open_kb

SETUP = "zhiwen policy setup ../shared/data"
MESSAGE = f"政策问答的知识库尚未建立：请先运行 {SETUP}"
QUESTION = "法国人去中国免签吗？"


def _kb(settings: Settings, name: str) -> None:
    kb = open_kb(name, settings=settings, create=True, embedder="hash", app="policy")
    kb.index_documents(
        [Document(id="d", title="免签", text="# 免签\n\n法国公民免签入境30天。")], progress=False
    )


@pytest.fixture
def half(zhiwen_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """A home where the policy app's setup built one KB of three."""
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    reset_settings_cache()
    settings = Settings(home=zhiwen_home, llm=LLMSettings(base_url=None), embedding={"provider": "hash"})
    _kb(settings, "policy_visa")
    yield settings
    close_all()
    reset_settings_cache()


def test_the_registry_says_who_answers_and_what_is_missing(half: Settings) -> None:
    apps, kbs = load_apps(), HomeKBs(half)
    for name in ("policy", "policy_visa", "policy_airline"):
        who = apps.answering(name, kbs)
        assert who is not None and who.answerer.name == "policy" and not who.ready, name
        assert who.missing == ("policy_airline", "policy_general")
    assert apps.answering("policy", kbs).kind == "app"  # type: ignore[union-attr]
    assert apps.answering("policy_visa", kbs).kind == "kb"  # type: ignore[union-attr]
    assert apps.answering("no_such_kb", kbs) is None


def _refused_rest(resp: object) -> None:
    assert resp.status_code == 404, resp.text  # type: ignore[attr-defined]
    body = resp.json()  # type: ignore[attr-defined]
    assert body["code"] == 3004 and body["message"] == MESSAGE
    assert body["data"]["extra"]["kbs"] == ["policy_airline", "policy_general"]


def test_rest_v1_and_the_cli_agree_on_a_half_set_up_app(half: Settings) -> None:
    with TestClient(create_app(half), raise_server_exceptions=False) as http:
        for kb in ("policy_visa", "policy"):
            _refused_rest(http.post("/api/v1/qa", json={"kb": kb, "question": QUESTION}))
            _refused_rest(http.post("/api/v1/qa", json={"kb": kb, "question": QUESTION, "stream": True}))
        _refused_rest(http.post("/api/v1/policy/ask", json={"question": QUESTION}))
        for model in ("policy", "policy_visa"):
            r = http.post(
                "/v1/chat/completions",
                json={"model": model, "messages": [{"role": "user", "content": QUESTION}]},
            )
            assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_ready"
            assert r.json()["error"]["message"] == MESSAGE
        for model in ("policy", "policy_visa"):
            assert http.get(f"/v1/models/{model}").json()["metadata"]["ready"] is False
    from zhiwen.cli.main import app as cli

    for args in (
        ("ask", "--kb", "policy_visa", QUESTION),
        ("ask", "--kb", "policy", QUESTION),
        ("chat", "policy"),
    ):
        r = CliRunner().invoke(cli, list(args), input="/exit\n")
        assert r.exit_code != 0 and "3004" in r.output and MESSAGE in r.output, r.output


def test_once_set_up_every_door_answers(half: Settings) -> None:
    _kb(half, "policy_airline")
    _kb(half, "policy_general")
    with TestClient(create_app(half)) as http:
        r = http.post("/api/v1/qa", json={"kb": "policy_visa", "question": QUESTION})
        assert r.status_code == 200 and r.json()["data"]["answer"]
        r = http.post(
            "/v1/chat/completions",
            json={"model": "policy", "messages": [{"role": "user", "content": QUESTION}]},
        )
        assert r.status_code == 200 and r.json()["zhiwen"]["app"] == "policy"
        for model in ("policy", "policy_visa"):
            assert http.get(f"/v1/models/{model}").json()["metadata"]["ready"] is True
    from zhiwen.cli.main import app as cli

    r = CliRunner().invoke(cli, ["ask", "--kb", "policy", "--json", QUESTION])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["route"]
