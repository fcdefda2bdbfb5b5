"""Policy questions in a conversation: the country and the intent carry over, 「那西班牙呢？」 re-runs
the lookup for Spain with the same intent (issue #28)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.appkit.app import AppContext
from zhiwen.apps.policy.service import ask_policy
from zhiwen.config import Settings

FIRST = "中国公民去泰国需要签证吗？"


def _history(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in pairs:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


def test_a_new_country_keeps_the_question(shared_ctx: AppContext) -> None:
    d = ask_policy("那西班牙呢？", shared_ctx, history=_history((FIRST, "泰国免签 [1]"))).data()
    assert d["standalone_question"] == "中国公民去西班牙需要签证吗？"
    assert d["intent"] == "visa_free" and [c["iso2"] for c in d["countries"]] == ["ES"]
    assert any(s["id"].startswith("country/ES") for s in d["sources"])


def test_a_follow_up_keeps_the_country_and_the_intent(shared_ctx: AppContext) -> None:
    d = ask_policy("需要什么材料？", shared_ctx, history=_history((FIRST, "泰国免签 [1]"))).data()
    assert "泰国" in d["standalone_question"] and d["intent"] == "visa_free"
    assert d["classification"]["method"] in ("conversation", "rules", "embedding")
    assert [c["iso2"] for c in d["countries"]] == ["TH"]


def test_a_standalone_question_is_left_alone(shared_ctx: AppContext) -> None:
    question = "边检证件过期后流程是什么？"
    d = ask_policy(question, shared_ctx, history=_history((FIRST, "泰国免签 [1]"))).data()
    assert d["standalone_question"] == question and not d["countries"]


def test_the_route_takes_history_and_sessions(mini_settings: Settings) -> None:
    with TestClient(create_app(mini_settings)) as client:
        first = client.post("/api/v1/policy/ask", json={"question": FIRST, "session_id": "trip"})
        assert first.status_code == 200, first.text
        follow = client.post("/api/v1/policy/ask", json={"question": "那塞尔维亚呢？", "session_id": "trip"})
        data = follow.json()["data"]
        assert data["standalone_question"] == "中国公民去塞尔维亚需要签证吗？"
        sent = client.post(
            "/api/v1/policy/ask",
            json={"question": "那塞尔维亚呢？", "history": _history((FIRST, "…"))},
        )
        assert sent.json()["data"]["standalone_question"] == data["standalone_question"]
        other = client.post(
            "/api/v1/policy/ask",
            json={"question": "那塞尔维亚呢？", "session_id": "trip"},
            headers={"Authorization": "Bearer another-caller"},
        )
        assert other.json()["data"]["standalone_question"] == "那塞尔维亚呢？"  # not their session
