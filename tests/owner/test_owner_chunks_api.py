"""The chunk routes and the change log: list, search, read, edit, disable, add, delete, undo —
each needing write access to the KB, each recorded with the caller's key fingerprint."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient

from owner.conftest import ADMIN_H, OTHER, OWNER, READER
from zhiwen.httpkit.deps import get_caller
from zhiwen.kb import KnowledgeBase


def _data(resp: Any, status: int = 200) -> Any:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == 0
    return body["data"]


def _error(resp: Any, status: int, code: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and body["message"], body
    return body


def _chunk(cid: str) -> str:
    return f"/api/v1/kbs/shop/chunks/{quote(cid, safe='')}"


def test_list_search_read(http: TestClient) -> None:
    listed = _data(http.get("/api/v1/kbs/shop/documents/policy/chunks", headers=OWNER))
    assert listed["total"] == len(listed["items"]) >= 2
    first = listed["items"][0]
    assert first["doc_id"] == "policy" and first["state"] == "original" and first["enabled"] is True
    assert first["review"] is False and first["updated_by"] is None
    found = _data(http.get("/api/v1/kbs/shop/chunks", params={"q": "退货"}, headers=OWNER))
    assert any("退货" in c["text"] for c in found["items"])
    one = _data(http.get(_chunk(first["id"]), headers=OWNER))
    assert one["id"] == first["id"] and one["text"] == first["text"]


def test_edit_disable_questions_keywords_are_recorded(http: TestClient, shop: KnowledgeBase) -> None:
    cid = _data(http.get("/api/v1/kbs/shop/documents/policy/chunks", headers=OWNER))["items"][0]["id"]
    edited = _data(http.patch(_chunk(cid), json={"text": "签收后七天内可退货，运费买家出。"}, headers=OWNER))
    assert edited["state"] == "edited" and edited["source_text"]
    assert edited["updated_by"] == get_caller_of("sk-shop")
    off = _data(http.patch(_chunk(cid), json={"enabled": False}, headers=OWNER))
    assert off["enabled"] is False
    assert all(h.chunk.id != cid for h in shop.search("七天内可退货", top_k=10))
    tagged = _data(
        http.patch(
            _chunk(cid), json={"enabled": True, "questions": ["能退吗"], "keywords": ["退货"]}, headers=OWNER
        )
    )
    assert tagged["questions"] == ["能退吗"] and tagged["keywords"] == ["退货"] and tagged["enabled"]
    changes = _data(http.get("/api/v1/kbs/shop/changes", headers=OWNER))["items"]
    assert [c["action"] for c in changes[:3]] == ["update", "disable", "edit"]
    assert changes[0]["label"] and changes[0]["actor"] == get_caller_of("sk-shop")


def test_add_delete_and_undo(http: TestClient, shop: KnowledgeBase) -> None:
    added = _data(
        http.post(
            "/api/v1/kbs/shop/chunks",
            json={"text": "客服电话 400-800-1234，工作日九点到六点。", "questions": ["客服电话多少"]},
            headers=OWNER,
        )
    )
    assert added["state"] == "added" and added["doc_id"] == "manual" and added["origin"] == "manual"
    assert any(h.chunk.id == added["id"] for h in shop.search("客服电话多少", top_k=5))
    _data(http.delete(_chunk(added["id"]), headers=OWNER))
    _error(http.get(_chunk(added["id"]), headers=OWNER), 404, 3004)
    undone = _data(http.post("/api/v1/kbs/shop/changes/undo", json={}, headers=OWNER))
    assert undone["action"] == "undo"
    assert _data(http.get(_chunk(added["id"]), headers=OWNER))["text"].startswith("客服电话")
    # undo a given change: the add itself
    add_change = next(
        c for c in _data(http.get("/api/v1/kbs/shop/changes", headers=OWNER))["items"] if c["action"] == "add"
    )
    undo_add = {"change_id": add_change["id"]}
    assert _data(http.post("/api/v1/kbs/shop/changes/undo", json=undo_add, headers=OWNER))["action"] == "undo"
    _error(http.get(_chunk(added["id"]), headers=OWNER), 404, 3004)
    _error(
        http.post("/api/v1/kbs/shop/changes/undo", json=undo_add, headers=OWNER), 422, 3003
    )  # done already


def test_undo_with_nothing_to_undo_is_404(http: TestClient) -> None:
    _error(http.post("/api/v1/kbs/shop/changes/undo", headers=OWNER), 404, 3004)


def test_errors_and_access(http: TestClient) -> None:
    _error(http.get(_chunk("policy#999"), headers=OWNER), 404, 3004)
    _error(http.patch(_chunk("policy#999"), json={"enabled": False}, headers=OWNER), 404, 3004)
    _error(http.get("/api/v1/kbs/shop/documents/nope/chunks", headers=OWNER), 404, 3004)
    _error(http.get("/api/v1/kbs/ghost/chunks", params={"q": "x"}, headers=ADMIN_H), 404, 3004)
    cid = _data(http.get("/api/v1/kbs/shop/documents/guide/chunks", headers=OWNER))["items"][0]["id"]
    _error(http.patch(_chunk(cid), json={}, headers=OWNER), 422, 3003)
    _error(http.patch(_chunk(cid), json={"text": "  "}, headers=OWNER), 422, 3003)
    _error(http.get(_chunk(cid)), 401, 3006)
    _error(http.get(_chunk(cid), headers=OTHER), 403, 3012)
    _error(http.patch(_chunk(cid), json={"enabled": False}, headers=READER), 403, 3012)
    _error(http.get("/api/v1/kbs/shop/changes", headers=READER), 403, 3012)
    assert http.get(_chunk(cid), headers=ADMIN_H).status_code == 200


def get_caller_of(key: str) -> str:
    from starlette.requests import Request

    scope = {"type": "http", "headers": [(b"authorization", f"Bearer {key}".encode())]}
    return get_caller(Request(scope))
