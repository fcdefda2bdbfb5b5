"""``GET/PUT /admin/settings``: bearer token, validation, next-request effect, restart survival."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from zhiwen.config import Settings

URL = "/admin/settings"
SEARCH = "/knowledge-base/search"


def _search(client: TestClient, **payload: Any) -> dict[str, Any]:
    resp = client.post(SEARCH, json={"kb": "demo", "query": "如何安装", "top_k": 5, **payload})
    assert resp.status_code == 200, resp.text
    return resp.json()["data"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "s3cret-token"},
        {"Authorization": "Basic s3cret-token"},
    ],
)
def test_refused_without_valid_token(make_client: Any, headers: dict[str, str]) -> None:
    client = make_client(auth=False)
    for resp in (
        client.get(URL, headers=headers),
        client.put(URL, json={"retrieval": {"rrf_k": 5}}, headers=headers),
    ):
        assert resp.status_code == 401
        body = resp.json()
        assert body["code"] == 3006 and "未授权" in body["message"]
        assert resp.headers["www-authenticate"] == "Bearer"


def test_disabled_without_configured_token(make_client: Any, settings: Settings) -> None:
    no_token = settings.model_copy(update={"api": settings.api.model_copy(update={"admin_token": None})})
    client = make_client(no_token)
    resp = client.get(URL, headers={"Authorization": "Bearer anything"})
    assert resp.status_code == 401 and resp.json()["code"] == 3006
    assert "未启用" in resp.json()["message"]


def test_get_settings(client: TestClient, admin: dict[str, str]) -> None:
    data = client.get(URL, headers=admin).json()["data"]
    assert data["settings"]["retrieval"]["rrf_k"] == 60
    assert data["settings"]["rerank"]["enabled"] is False
    assert data["overrides"] == {}
    assert "api_key" not in data["settings"]["rerank"]


def test_change_applies_to_next_search(client: TestClient, admin: dict[str, str], fake_kb: Any) -> None:
    before = _search(client)
    assert before["params"]["rrf_k"] == 60 and before["params"]["fusion"] == "weighted"
    resp = client.put(URL, json={"retrieval": {"rrf_k": 7, "fusion": "rrf"}}, headers=admin)
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["overrides"] == {"retrieval": {"fusion": "rrf", "rrf_k": 7}}
    after = _search(client)
    assert after["params"]["rrf_k"] == 7 and after["params"]["fusion"] == "rrf"
    assert fake_kb.calls[-1]["rrf_k"] == 7 and fake_kb.calls[-1]["fusion"] == "rrf"
    assert fake_kb.calls[-1]["weights"] == (1.0, 1.0)  # rrf uses bm25/dense weights


def test_rerank_flag_and_threshold_change_results(client: TestClient, admin: dict[str, str]) -> None:
    assert [r["rerank_score"] for r in _search(client)["results"]] == [None] * 5
    client.put(URL, json={"rerank": {"enabled": True}}, headers=admin)
    on = _search(client)
    assert on["diagnostics"]["reranked"] is True
    assert len(on["results"]) == 3  # FixedReranker [0.9, 0.2]: three pass 0.5
    client.put(URL, json={"rerank": {"score_threshold": 0.1}}, headers=admin)
    assert len(_search(client)["results"]) == 5
    client.put(URL, json={"rerank": {"score_threshold": 0.95}}, headers=admin)
    assert "No chunks met rerank threshold" in _search(client)["message"]
    client.put(URL, json={"rerank": {"enabled": None, "score_threshold": None}}, headers=admin)  # reset
    assert _search(client)["diagnostics"].get("reranked") is None


def test_survives_restart(make_client: Any, admin: dict[str, str], settings: Settings) -> None:
    first = make_client()
    first.put(URL, json={"retrieval": {"rrf_k": 11}, "adaptive": {"mmr_enabled": True}}, headers=admin)
    stored = json.loads((settings.home / "dynamic_settings.json").read_text("utf-8"))
    assert stored == {"adaptive": {"mmr_enabled": True}, "format_version": 1, "retrieval": {"rrf_k": 11}}
    second = make_client()  # a fresh app over the same home = a restart
    params = _search(second)["params"]
    assert params["rrf_k"] == 11 and params["mmr_enabled"] is True


@pytest.mark.parametrize(
    ("patch", "status", "code", "part"),
    [
        ({"retrieval": {"rrf_k": "60"}}, 422, 3002, "参数类型错误：retrieval.rrf_k"),
        ({"retrieval": {"rrf_k": 0}}, 422, 3003, "retrieval.rrf_k 必须大于等于 1"),
        ({"retrieval": {"dense_alpha": 1.5}}, 422, 3003, "dense_alpha"),
        ({"retrieval": {"fusion": "borda"}}, 422, 3003, "fusion"),
        ({"rerank": {"enabled": "yes"}}, 422, 3002, "rerank.enabled"),
        ({"rerank": {"nope": 1}}, 422, 3003, "未知参数：rerank.nope"),
        ({"nosection": {"a": 1}}, 422, 3003, "nosection"),
        ({"adaptive": {"keywords_profile": {"weird": ["x"]}}}, 422, 3003, "keywords_profile"),
        ({"retrieval": 5}, 422, 3002, "retrieval"),
    ],
)
def test_validation(
    client: TestClient,
    admin: dict[str, str],
    settings: Settings,
    patch: Any,
    status: int,
    code: int,
    part: str,
) -> None:
    resp = client.put(URL, json=patch, headers=admin)
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and part in body["message"], body
    assert not (settings.home / "dynamic_settings.json").exists()  # nothing written


def test_keywords_profile_override(client: TestClient, admin: dict[str, str]) -> None:
    assert _search(client, query="盘点一下")["intent"] == "broad"
    client.put(URL, json={"adaptive": {"keywords_profile": {"troubleshoot": ["盘点"]}}}, headers=admin)
    assert _search(client, query="盘点一下")["intent"] == "troubleshoot"


def test_delete_resets(client: TestClient, admin: dict[str, str]) -> None:
    client.put(URL, json={"retrieval": {"rrf_k": 3}}, headers=admin)
    resp = client.delete(URL, headers=admin)
    assert resp.json()["data"]["overrides"] == {}
    assert _search(client)["params"]["rrf_k"] == 60
