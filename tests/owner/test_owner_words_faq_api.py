"""Dictionary and synonyms (JSON and CSV), FAQ entries (CRUD, file import all or nothing,
export, threshold) and the upload API's ``format=faq``."""

from __future__ import annotations

import io
import json
from typing import Any

from fastapi.testclient import TestClient
from openpyxl import Workbook

from owner.conftest import OTHER, OWNER, READER
from zhiwen.kb import KnowledgeBase
from zhiwen.kb.faq import faq_entries, faq_matcher


def _data(resp: Any, status: int = 200) -> Any:
    assert resp.status_code == status, resp.text
    assert resp.json()["code"] == 0
    return resp.json()["data"]


def _error(resp: Any, status: int, code: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and body["message"], body
    return body


FAQ_CSV = (
    "问题,答案,相似问题,分类\n"
    '怎么退货？,签收后七天内在订单页申请退货。,"能退货吗\n如何退货",售后\n'
    "发票怎么开？,订单完成后自动发电子发票。,,\n"
)


# -- dictionary and synonyms -------------------------------------------------------------------
def test_synonyms_json_and_csv_roundtrip(http: TestClient) -> None:
    url = "/api/v1/kbs/shop/synonyms"
    put = _data(http.put(url, json={"groups": [["土豆", "马铃薯", "洋芋"]]}, headers=OWNER))
    assert put["groups"] == [["土豆", "马铃薯", "洋芋"]] and put["change_id"]
    assert _data(http.get(url, headers=READER))["groups"] == [["土豆", "马铃薯", "洋芋"]]
    exported = http.get(url + ".csv", headers=OWNER)
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    assert "土豆,马铃薯,洋芋" in exported.text
    csv_body = "标准词,同义词1\n西红柿,番茄\n".encode()
    put = _data(http.put(url, content=csv_body, headers={**OWNER, "Content-Type": "text/csv"}))
    assert put["groups"] == [["西红柿", "番茄"]]
    undone = _data(http.post("/api/v1/kbs/shop/changes/undo", headers=OWNER))
    assert undone["action"] == "undo"
    assert _data(http.get(url, headers=OWNER))["groups"] == [["土豆", "马铃薯", "洋芋"]]


def test_dictionary_json_and_csv(http: TestClient) -> None:
    url = "/api/v1/kbs/shop/dictionary"
    assert _data(http.put(url, json={"words": ["知识库管理员"]}, headers=OWNER))["words"] == ["知识库管理员"]
    again = _data(http.put(url, json={"words": ["知识库管理员"]}, headers=OWNER))
    assert again["change_id"] is None  # nothing changed, nothing recorded
    put = _data(
        http.put(url, content="词条\n七天无理由\n".encode(), headers={**OWNER, "Content-Type": "text/csv"})
    )
    assert put["words"] == ["七天无理由"]
    assert "七天无理由" in http.get(url + ".csv", headers=OWNER).text


def test_bad_word_lists_are_422_naming_the_row(http: TestClient) -> None:
    bad = "土豆 马铃薯\n洋芋\n".encode()  # row 2: a group of one
    body = _error(
        http.put("/api/v1/kbs/shop/synonyms", content=bad, headers={**OWNER, "Content-Type": "text/csv"}),
        422,
        3003,
    )
    assert "第 2 行" in body["message"] and body["data"]["extra"]["row"] == 2
    _error(http.put("/api/v1/kbs/shop/synonyms", json={"groups": "x"}, headers=OWNER), 422, 3003)
    _error(http.put("/api/v1/kbs/shop/dictionary", json={"words": ["a"]}, headers=READER), 403, 3012)
    _error(http.get("/api/v1/kbs/shop/dictionary", headers=OTHER), 403, 3012)
    _error(http.get("/api/v1/kbs/nope/dictionary", headers=READER), 404, 3004)


# -- FAQ ---------------------------------------------------------------------------------------
def test_faq_crud_threshold_and_match(http: TestClient, shop: KnowledgeBase) -> None:
    url = "/api/v1/kbs/shop/faq"
    entry = _data(
        http.post(
            url,
            json={"question": "客服电话是多少？", "answer": "400-800-1234。", "similar": ["怎么联系客服"]},
            headers=OWNER,
        )
    )
    assert entry["question"] == "客服电话是多少？" and entry["similar"] == ["怎么联系客服"]
    listed = _data(http.get(url, headers=READER))
    assert listed["total"] == 1 and 0 < listed["threshold"] <= 1
    assert _data(http.get(url, params={"q": "联系"}, headers=OWNER))["total"] == 1
    assert _data(http.get(url, params={"q": "没有的"}, headers=OWNER))["total"] == 0
    # the same question again is refused, and so is a question another entry asks
    _error(http.post(url, json={"question": "客服电话是多少", "answer": "x"}, headers=OWNER), 422, 3003)
    _error(
        http.post(
            url, json={"question": "退款？", "answer": "x", "similar": ["怎么联系客服"]}, headers=OWNER
        ),
        422,
        3003,
    )
    _error(http.post(url, json={"question": "退款？", "answer": "  "}, headers=OWNER), 422, 3003)
    changed = _data(http.patch(f"{url}/{entry['id']}", json={"answer": "400-800-0000。"}, headers=OWNER))
    assert changed["answer"] == "400-800-0000。" and changed["similar"] == ["怎么联系客服"]
    matcher = faq_matcher(shop)
    assert matcher is not None
    assert _data(http.put(f"{url}/settings", json={"threshold": 0.9}, headers=OWNER))["threshold"] == 0.9
    assert _data(http.get(url, headers=OWNER))["threshold"] == 0.9
    _error(http.put(f"{url}/settings", json={"threshold": 2}, headers=OWNER), 422, 3003)
    _data(http.delete(f"{url}/{entry['id']}", headers=OWNER))
    _error(http.delete(f"{url}/{entry['id']}", headers=OWNER), 404, 3004)
    _error(http.patch(f"{url}/nope", json={"answer": "x"}, headers=OWNER), 404, 3004)
    assert faq_entries(shop) == []


def test_faq_import_csv_xlsx_export_roundtrip(http: TestClient, shop: KnowledgeBase) -> None:
    url = "/api/v1/kbs/shop/faq"
    got = _data(http.post(f"{url}/import", files={"file": ("faq.csv", FAQ_CSV.encode())}, headers=OWNER))
    assert (got["added"], got["updated"], got["files"]) == (2, 0, ["faq.csv"])
    first = next(e for e in faq_entries(shop) if e.question == "怎么退货？")
    assert first.similar == ("能退货吗", "如何退货") and first.category == "售后"
    exported = http.get(f"{url}/export", params={"format": "csv"}, headers=OWNER)
    assert exported.status_code == 200 and "怎么退货？" in exported.text
    again = _data(http.post(f"{url}/import", files={"file": ("back.csv", exported.content)}, headers=OWNER))
    assert again["unchanged"] == 2 and again["added"] == 0
    lines = http.get(f"{url}/export", params={"format": "jsonl"}, headers=OWNER).text.splitlines()
    assert {json.loads(line)["question"] for line in lines} == {"怎么退货？", "发票怎么开？"}
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["问题", "答案"])
    sheet.append(["营业时间？", "每天九点到晚上九点。"])
    data = io.BytesIO()
    book.save(data)
    got = _data(http.post(f"{url}/import", files={"file": ("faq.xlsx", data.getvalue())}, headers=OWNER))
    assert got["added"] == 1


def test_faq_import_bad_rows_imports_nothing(http: TestClient, shop: KnowledgeBase) -> None:
    bad = "问题,答案\n怎么退货？,\n怎么退货？,七天内。\n" + "长" * 5000 + ",答案\n"
    body = _error(
        http.post("/api/v1/kbs/shop/faq/import", files={"file": ("bad.csv", bad.encode())}, headers=OWNER),
        422,
        3007,
    )
    rows = {(e["row"], e["column"]) for e in body["data"]["errors"]}
    assert {(2, "答案"), (3, "问题"), (4, "问题")} <= rows
    assert "第 2 行" in body["message"]
    wrong = "标题,内容说明\nx,y\n".encode()
    body = _error(
        http.post("/api/v1/kbs/shop/faq/import", files={"file": ("w.csv", wrong)}, headers=OWNER), 422, 3007
    )
    assert "缺少列" in body["message"]
    assert faq_entries(shop) == []
    _error(
        http.post("/api/v1/kbs/shop/faq/import", files={"file": ("f.csv", FAQ_CSV.encode())}, headers=READER),
        403,
        3012,
    )


def test_upload_format_faq(http: TestClient, shop: KnowledgeBase) -> None:
    resp = http.post(
        "/api/v1/kbs/shop/documents",
        files={"files": ("faq.csv", FAQ_CSV.encode())},
        data={"format": "faq"},
        headers=OWNER,
    )
    job = _data(resp, 202)
    assert job["status"] == "done" and job["files"][0]["type"] == "faq"
    assert _data(http.get(f"/api/v1/jobs/{job['id']}", headers=OWNER))["status"] == "done"
    assert len(faq_entries(shop)) == 2
    # a new KB made for a refused file is removed again
    bad = http.post(
        "/api/v1/kbs/fresh/documents",
        files={"files": ("bad.csv", "问题,答案\nx,\n".encode())},
        data={"format": "faq"},
        headers={"Authorization": "Bearer adm1n-token"},
    )
    _error(bad, 422, 3007)
    assert "fresh" not in [k["name"] for k in _data(http.get("/api/v1/kbs", headers=READER))["kbs"]]
    _error(
        http.post(
            "/api/v1/kbs/shop/documents",
            files={"files": ("a.csv", b"x")},
            data={"format": "zip"},
            headers=OWNER,
        ),
        422,
        3003,
    )
