"""Every bad request gets a 4xx ``{code, message, data}`` with a clear Chinese message; no 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import APIRouter, Depends
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

from zhiwen.api.app import create_app
from zhiwen.api.handlers import classify_validation_error, field_name
from zhiwen.config import Settings
from zhiwen.errors import LLMTimeout
from zhiwen.httpkit.deps import get_kb
from zhiwen.httpkit.envelope import ok
from zhiwen.httpkit.fields import KBName, Question
from zhiwen.validation import QuestionRefused, question_text

SEARCH = "/knowledge-base/search"


def check_envelope(resp: Any, status: int, code: int, message_part: str = "") -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"code", "message", "data"}
    assert body["code"] == code, body
    assert message_part in body["message"], body
    assert resp.headers.get("x-request-id")
    return body


def test_malformed_json(client: TestClient) -> None:
    resp = client.post(
        SEARCH, content=b'{"kb": "demo", "query": ', headers={"content-type": "application/json"}
    )
    check_envelope(resp, 400, 3002, "JSON")


def test_invalid_utf8_body(client: TestClient) -> None:
    resp = client.post(SEARCH, content=b"\xff\xfe\x00", headers={"content-type": "application/json"})
    assert resp.status_code == 400
    assert resp.json()["code"] == 3002


def test_body_not_an_object(client: TestClient) -> None:
    check_envelope(client.post(SEARCH, json=[1, 2]), 422, 3002, "请求体应为 JSON 对象")
    check_envelope(client.post(SEARCH, json="query"), 422, 3002)


def test_missing_body_and_field(client: TestClient) -> None:
    check_envelope(client.post(SEARCH), 422, 3001, "缺少必需参数")
    body = check_envelope(client.post(SEARCH, json={"kb": "demo"}), 422, 3001, "缺少必需参数：query")
    assert body["data"]["errors"][0]["field"] == "query"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"kb": "demo", "query": "安装", "top_k": "five"}, "top_k"),
        ({"kb": "demo", "query": "安装", "top_k": "5"}, "top_k"),  # strict: a string is not an int
        ({"kb": "demo", "query": 123}, "query"),
        ({"kb": ["demo"], "query": "安装"}, "kb"),
        ({"kb": "demo", "query": "安装", "filters": "category=soup"}, "filters"),
    ],
)
def test_wrong_types(client: TestClient, payload: dict[str, Any], field: str) -> None:
    check_envelope(client.post(SEARCH, json=payload), 422, 3002, f"参数类型错误：{field}")


@pytest.mark.parametrize(
    ("top_k", "part"), [(-1, "top_k 必须大于等于 1"), (0, "top_k"), (101, "不能超过 100")]
)
def test_top_k_out_of_range(client: TestClient, top_k: int, part: str) -> None:
    check_envelope(client.post(SEARCH, json={"kb": "demo", "query": "安装", "top_k": top_k}), 422, 3003, part)


def test_bad_mode_and_filters(client: TestClient) -> None:
    check_envelope(client.post(SEARCH, json={"kb": "demo", "query": "q", "mode": "magic"}), 422, 3003, "mode")
    bad_op = {"kb": "demo", "query": "q", "filters": {"price": {"between": [1, 2]}}}
    check_envelope(client.post(SEARCH, json=bad_op), 422, 3003, "未知的过滤运算符")
    bad_field = {"kb": "demo", "query": "q", "filters": {"a b;drop": 1}}
    check_envelope(client.post(SEARCH, json=bad_field), 422, 3003, "过滤字段无效")


def test_empty_and_too_long_question(client: TestClient) -> None:
    check_envelope(client.post(SEARCH, json={"kb": "demo", "query": "   "}), 422, 3003, "问题不能为空")
    body = check_envelope(
        client.post(SEARCH, json={"kb": "demo", "query": "问" * 2001}), 422, 3003, "问题过长"
    )
    assert body["data"]["errors"][0]["field"] == "query"
    assert client.post(SEARCH, json={"kb": "demo", "query": "问" * 2000}).status_code == 200


def test_100kb_query_is_refused_before_parsing(client: TestClient) -> None:
    body = check_envelope(
        client.post(SEARCH, json={"kb": "demo", "query": "x" * 100_000}), 413, 3005, "请求内容过大"
    )
    assert body["data"]["max_bytes"] == 64 * 1024


def test_streamed_body_over_limit(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer
        yield b'{"kb": "demo", "query": "'
        for _ in range(20):
            yield b"y" * 8192
        yield b'"}'

    check_envelope(
        client.post(SEARCH, content=chunks(), headers={"content-type": "application/json"}), 413, 3005
    )


def test_body_limit_follows_settings(make_client: Any, settings: Settings) -> None:
    small = settings.model_copy(update={"api": settings.api.model_copy(update={"max_body_bytes": 1024})})
    client = make_client(small)
    check_envelope(client.post(SEARCH, json={"kb": "demo", "query": "x" * 1500}), 413, 3005, "1 KB")
    assert client.post(SEARCH, json={"kb": "demo", "query": "x" * 500}).status_code == 200


def test_unknown_kb_real_registry(make_client: Any) -> None:
    client = make_client(fake=False)  # real registry over an empty home
    body = check_envelope(
        client.post(SEARCH, json={"kb": "nokb", "query": "安装"}), 404, 3004, "知识库不存在"
    )
    extra = body["data"]["extra"]
    assert extra == {"kb": "nokb", "app": None, "setup_command": "zhiwen index --kb nokb <目录>"}
    check_envelope(client.get("/api/v1/kbs/nokb"), 404, 3004)
    check_envelope(client.post(SEARCH, json={"kb": "../etc", "query": "安装"}), 422, 3003, "kb 格式无效")


def test_unknown_kb_fake_registry(client: TestClient) -> None:
    check_envelope(client.post(SEARCH, json={"kb": "other", "query": "安装"}), 404, 3004, "知识库不存在")


def test_unknown_route_and_method(client: TestClient) -> None:
    check_envelope(client.get("/no/such/path"), 404, 3004, "资源不存在")
    check_envelope(client.get(SEARCH), 405, 3003, "不支持的请求方法")


def test_request_id_roundtrip(client: TestClient) -> None:
    resp = client.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert resp.headers["x-request-id"] == "abc-123"
    bad = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces\t"})
    assert bad.headers["x-request-id"] != "bad id with spaces"
    assert len(bad.headers["x-request-id"]) == 16


def _app_with_failing_routes(settings: Settings) -> TestClient:
    app = create_app(settings, app_routers=False)
    router = APIRouter()

    @router.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret internal detail")

    @router.get("/llm")
    def llm() -> None:
        raise LLMTimeout("upstream took 31s")

    @router.get("/kb-info/{kb}")
    async def kb_route(kb: Any = Depends(get_kb)) -> dict[str, Any]:
        return ok({"name": kb.name})

    app.include_router(router)
    return TestClient(app, raise_server_exceptions=False)


def test_unexpected_error_is_enveloped_without_detail(settings: Settings, caplog: Any) -> None:
    client = _app_with_failing_routes(settings)
    resp = client.get("/boom", headers={"X-Request-ID": "rid-500"})
    body = check_envelope(resp, 500, 1099, "服务暂时不可用")
    assert "secret" not in resp.text
    assert body["data"] == {"request_id": "rid-500"} or body["data"] is None
    assert any("boom" in r.getMessage() or r.exc_info for r in caplog.records)


def test_zhiwen_error_status_and_code(settings: Settings) -> None:
    client = _app_with_failing_routes(settings)
    body = check_envelope(client.get("/llm"), 504, 1001, "服务响应超时")
    assert body["data"]["detail"] == "upstream took 31s"
    check_envelope(client.get("/kb-info/missing"), 404, 3004)


class AskIn(BaseModel):
    kb: KBName = "demo"
    question: Question


def test_question_type_for_app_routers(settings: Settings) -> None:
    app = create_app(settings, app_routers=False)

    @app.post("/echo")
    def echo(body: AskIn) -> dict[str, Any]:
        return ok({"q": body.question})

    client = TestClient(app)
    assert client.post("/echo", json={"question": "  你好  "}).json()["data"] == {"q": "你好"}
    check_envelope(client.post("/echo", json={"question": "长" * 2001}), 422, 3003, "问题过长")
    check_envelope(client.post("/echo", json={}), 422, 3001, "缺少必需参数：question")


def test_classifier_units() -> None:
    assert field_name(("body", "filters", "price")) == "filters.price"
    assert field_name(("body",)) == "body"
    assert field_name(("query", "kb")) == "kb"
    assert classify_validation_error({"type": "missing", "loc": ("body", "query")})[1:] == (
        3001,
        "缺少必需参数：query",
    )
    assert classify_validation_error({"type": "int_parsing", "loc": ("body", "top_k")})[1] == 3002
    assert classify_validation_error({"type": "weird_thing", "loc": ("body", "x")})[1:] == (
        3003,
        "参数取值无效：x",
    )
    assert (
        classify_validation_error({"type": "greater_than_equal", "loc": ("body", "k"), "ctx": {}})[1] == 3003
    )


def test_no_500_on_fuzzed_bodies(client: TestClient) -> None:
    payloads: list[Any] = [
        None, 0, 1.5, True, "", [], {}, {"kb": None, "query": None}, {"kb": "demo", "query": ""},
        {"kb": "demo", "query": "q", "top_k": True},
        {"kb": "demo", "query": "q", "filters": {"x": {}}},
        {"kb": "demo", "query": "q", "filters": {"x": [[1]]}},
        {"kb": "", "query": "q"}, {"kb": "demo" * 100, "query": "q"}, {"kb": "demo", "query": "\x00"},
    ]  # fmt: skip
    for p in payloads:
        resp = client.post(SEARCH, json=p)
        assert 200 <= resp.status_code < 500, (p, resp.text)
        assert set(resp.json()) == {"code", "message", "data"}
    raw = [
        b'{"kb":"demo","query":"q","top_k":1e309}',
        b'{"kb":"demo","query":"q","top_k":NaN}',
        b"[[[[[[[[]]]]]]]]",
    ]
    for content in raw:
        resp = client.post(SEARCH, content=content, headers={"content-type": "application/json"})
        assert 400 <= resp.status_code < 500, (content, resp.text)


def test_one_check_of_a_question_everywhere() -> None:
    """Every interface and app refuses an empty or too long question with the same words: the one
    check (:func:`zhiwen.validation.question_text`), inside a request model or called directly."""
    class Body(BaseModel):
        question: Question

    for text, problem in (("  ", "empty"), ("长" * 2001, "too_long")):
        with pytest.raises(QuestionRefused) as direct:
            question_text(text, 2000)
        with pytest.raises(ValidationError) as modelled:
            Body(question=text)
        err = modelled.value.errors()[0]
        assert direct.value.problem == problem and err["type"] == f"zhiwen_{problem}"
        assert err["msg"] == direct.value.message and direct.value.code == 3003
    assert question_text(" 问 ") == "问"
