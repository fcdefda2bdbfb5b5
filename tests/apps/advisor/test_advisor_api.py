"""HTTP: the SSE chat, the seed's calculators (Properties 11 and 12), and direct tool calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from advisor_questions import DISCUSSION_QUESTION, DISTRICT_QUESTION, LOAN_QUESTION, TAX_QUESTION
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zhiwen.api.app import create_app
from zhiwen.appkit.app import AppContext
from zhiwen.appkit.registry import AppRegistry
from zhiwen.apps.advisor.app import AdvisorApp

LOAN_BODY = {"price": 3_000_000, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1}
TAX_BODY = {"price": 3_000_000, "area": 89, "is_first_home": True, "house_age_years": 3}


@pytest.fixture(scope="module")
def client(advisor_ctx: AppContext) -> Iterator[TestClient]:
    app = create_app(advisor_ctx.settings, apps=AppRegistry([AdvisorApp()]))
    with TestClient(app) as c:
        yield c


def sse_events(client: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    with client.stream("POST", "/api/v1/chat", json=body) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        return [json.loads(line[5:]) for line in resp.iter_lines() if line.startswith("data:")]


def role_result(events: list[dict[str, Any]], role: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "role_result" and e["role"] == role)


def tool_result(event: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c["result"] for c in event["tool_calls"] if c["name"] == name)


def test_chat_loan_question_over_sse(client: TestClient) -> None:
    events = sse_events(client, {"session_id": "http-1", "message": LOAN_QUESTION, "mode": "standard"})
    # the facts used come first (#28), then the seed's events
    types = [e["type"] for e in events]
    assert types == ["facts", "role_start", "role_result", "role_start", "role_result", "done"]
    assert (
        events[0]["text"]
        == "按总价300万元、首付三成（90万元）、贷款30年、利率3.1%、等额本息、月收入2万元计算："
    )
    assert events[1] == {"type": "role_start", "role": "financial_advisor", "name": "财务顾问", "icon": "💰"}
    fin = role_result(events, "financial_advisor")
    assert tool_result(fin, "calc_loan")["monthly_payment"] == 8967.34
    assert tool_result(fin, "assess_pressure")["level"] == "中"
    assert "8,967.34元" in fin["content"]
    follow = sse_events(client, {"session_id": "http-1", "message": "那如果首付150万呢？"})
    assert tool_result(role_result(follow, "financial_advisor"), "calc_loan")["down_payment"] == 1_500_000


def test_chat_tax_and_district_questions(client: TestClient) -> None:
    tax = role_result(sse_events(client, {"session_id": "http-2", "message": TAX_QUESTION}), "policy_expert")
    assert tool_result(tax, "calc_tax")["deed_tax"] == 30_000.0 and "2024-12-01" in tax["content"]
    market = role_result(
        sse_events(client, {"session_id": "http-3", "message": DISTRICT_QUESTION}), "market_analyst"
    )
    compared = tool_result(market, "compare_districts")
    assert compared["highest"] == "浦东" and [d["district"] for d in compared["districts"]] == [
        "浦东",
        "闵行",
    ]


def test_chat_discussion_events(client: TestClient) -> None:
    events = sse_events(
        client, {"session_id": "http-4", "message": DISCUSSION_QUESTION, "mode": "discussion"}
    )
    talk = [e for e in events if e["type"] == "discussion"]
    assert talk and all({"from", "to", "content"} <= set(e) for e in talk)
    final = role_result(events, "home_advisor")
    assert final["consensus"]["final"]["price"] == 1_500_000 and events[-1]["type"] == "done"


@pytest.mark.parametrize(
    ("body", "code"),
    [({"message": "你好"}, 3001), ({"session_id": "x", "message": "你好", "mode": "deep"}, 3003)],
)
def test_chat_request_validation(client: TestClient, body: dict[str, Any], code: int) -> None:
    resp = client.post("/api/v1/chat", json=body)
    assert resp.status_code == 422 and resp.json()["code"] == code


def test_calc_loan_and_tax(client: TestClient) -> None:
    loan = client.post("/api/v1/calc/loan", json=LOAN_BODY).json()
    assert loan["code"] == 0 and loan["message"] == "success"
    data = loan["data"]
    assert (data["monthly_payment"], data["down_payment"], data["loan_amount"]) == (
        8967.34,
        900_000,
        2_100_000,
    )
    assert data["total_payment"] == 3_228_243.98 and data["total_interest"] == 1_128_243.98
    principal = client.post("/api/v1/calc/loan", json={**LOAN_BODY, "method": "equal_principal"}).json()[
        "data"
    ]
    assert principal["first_month_payment"] > principal["last_month_payment"]
    tax = client.post("/api/v1/calc/tax", json=TAX_BODY).json()["data"]
    assert {"deed_tax", "vat", "income_tax", "agent_fee", "total"} <= set(tax)
    assert tax["total"] == tax["deed_tax"] + tax["vat"] + tax["income_tax"] + tax["agent_fee"]
    assert tax["rule"]["id"] == "2024-16" and tax["checked_on"]


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"down_payment_ratio": 0.3, "years": 30, "rate": 3.1}, 422, 3001, "price"),
        ({**LOAN_BODY, "price": "三百万"}, 422, 3002, "price"),
        ({**LOAN_BODY, "years": 50}, 422, 2001, "years"),
        ({**LOAN_BODY, "method": "balloon"}, 422, 2001, "method"),
        ({**LOAN_BODY, "down_payment_ratio": -0.1}, 422, 2001, "down_payment_ratio"),
    ],
)
def test_calc_loan_errors(
    client: TestClient, body: dict[str, Any], status: int, code: int, field: str
) -> None:
    resp = client.post("/api/v1/calc/loan", json=body)
    out = resp.json()
    assert resp.status_code == status and out["code"] == code and field in out["message"]
    assert set(out) == {"code", "message", "data"}


def test_calc_malformed_bodies(client: TestClient) -> None:
    bad = client.post("/api/v1/calc/tax", content=b"{not json", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and bad.json()["code"] == 3002
    empty = client.post("/api/v1/calc/tax", content=b"")
    assert empty.status_code == 422 and empty.json()["code"] == 3001
    array = client.post("/api/v1/calc/tax", json=[1, 2])
    assert array.status_code == 422 and array.json()["code"] == 3002


fields = st.sets(st.sampled_from(sorted(TAX_BODY)))
junk = st.one_of(st.just("abc"), st.just([1]), st.just({"a": 1}), st.just(None))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields, st.sampled_from(["loan", "tax"]), st.one_of(st.none(), junk))
def test_property11_and_12_envelope_and_missing_fields(
    client: TestClient, dropped: set[str], which: str, value: Any
) -> None:
    """Every calculator response is {code, message, data}; a missing field names itself (3001)."""
    base = TAX_BODY if which == "tax" else LOAN_BODY
    dropped = {f for f in dropped if f in base}
    body = {k: v for k, v in base.items() if k not in dropped}
    if value is not None and body:
        body[sorted(body)[0]] = value
    resp = client.post(f"/api/v1/calc/{which}", json=body)
    out = resp.json()
    assert set(out) == {"code", "message", "data"}
    if dropped:
        assert resp.status_code == 422 and out["code"] == 3001
        assert any(f in out["message"] for f in dropped) and out["message"].startswith("缺少必需参数")
    elif value is not None:
        assert resp.status_code == 422 and out["code"] in (3002, 2001)
    else:
        assert out["code"] == 0


def test_tools_listing_and_calls(client: TestClient) -> None:
    listed = client.get("/api/v1/tools").json()
    names = [t["function"]["name"] for t in listed["data"]]
    assert listed["code"] == 0 and len(names) == 8 and "compare_districts" in names
    compared = client.post(
        "/api/v1/tools/compare_districts", json={"city": "上海", "districts": ["浦东", "闵行"]}
    )
    assert compared.json()["data"]["highest"] == "浦东"
    faq = client.post("/api/v1/tools/search_faq", json={"query": "满五唯一"}).json()
    assert faq["code"] == 0 and faq["data"]["hits"]
    assert client.post("/api/v1/tools/nope", json={}).json()["code"] == 3004
    invalid = client.post("/api/v1/tools/assess_pressure", json={"monthly_payment": 1, "monthly_income": 0})
    assert invalid.status_code == 422 and invalid.json()["code"] == 2001
