"""User-facing validation messages are Chinese only (#30): pydantic's English ("Input should be
less than 1") never reaches a message, in the REST envelope, the OpenAI front door or a tool; it
stays in ``data`` for whoever debugs. One table words them all (:mod:`zhiwen.validation`)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from zhiwen.api.handlers import install_exception_handlers
from zhiwen.validation import PREDICATES, Day, describe, kind_of, parse_day, predicate, summary

SEARCH = "/knowledge-base/search"
# words of pydantic's own messages; a Chinese message names fields and values, never these
ENGLISH = re.compile(r"\b(Input|should|required|valid|greater|less|than|Field|Value|error|type)\b")


def chinese_only(message: str) -> bool:
    return not ENGLISH.search(message)


@pytest.fixture
def client(make_client: Any) -> TestClient:
    return make_client()


@pytest.mark.parametrize(
    ("payload", "code", "message"),
    [
        ({"kb": "demo", "query": "q", "top_k": 2.5}, 3002, "参数类型错误：top_k（应为整数）"),
        ({"kb": "demo", "query": "q", "top_k": "five"}, 3002, "参数类型错误：top_k（应为整数）"),
        (
            {"kb": "demo", "query": "q", "mode": "magic"},
            3003,
            "mode 取值无效，可选：'bm25'、'dense'、'hybrid'",
        ),
        ({"kb": "demo", "query": "q", "top_k": 0}, 3003, "top_k 必须大于等于 1"),
        ({"kb": "demo"}, 3001, "缺少必需参数：query"),
    ],
)
def test_rest_messages_are_chinese_and_the_raw_text_is_in_data(
    client: TestClient, payload: dict[str, Any], code: int, message: str
) -> None:
    resp = client.post(SEARCH, json=payload)
    body = resp.json()
    assert resp.status_code == 422 and body["code"] == code and body["message"] == message, body
    raw = body["data"]["errors"][0]
    assert raw["field"] and raw["type"] and raw["msg"]  # pydantic's English: here, for debugging


FUZZ_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "kb": FUZZ_VALUES,
            "query": FUZZ_VALUES,
            "top_k": FUZZ_VALUES,
            "mode": FUZZ_VALUES,
            "filters": FUZZ_VALUES,
            "extra_field": FUZZ_VALUES,
        },
    )
)
def test_no_english_in_any_rest_validation_message(client: TestClient, payload: dict[str, Any]) -> None:
    resp = client.post(SEARCH, json=payload)  # one app for every example: the route keeps no state
    assert resp.status_code < 500
    body = resp.json()
    if resp.status_code >= 400:
        assert chinese_only(body["message"]), body


def test_the_openai_front_door_uses_the_same_words(client: TestClient) -> None:
    resp = client.post(
        "/v1/chat/completions",
        json={"model": "demo", "messages": [{"role": "user", "content": "你好"}], "temperature": "hot"},
    )
    err = resp.json()["error"]
    assert resp.status_code == 400 and err["type"] == "invalid_request_error"
    assert err["message"].startswith("参数类型错误：temperature") and chinese_only(err["message"]), err


# -- the table ------------------------------------------------------------------------------------
CTX_VALUES = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False), st.text(max_size=8))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(PREDICATES)),
    st.dictionaries(
        st.sampled_from(
            [
                "gt",
                "ge",
                "lt",
                "le",
                "max_length",
                "min_length",
                "expected",
                "multiple_of",
                "expected_schemes",
            ]
        ),
        CTX_VALUES,
    ),
)
def test_every_known_error_type_reads_in_chinese(etype: str, ctx: dict[str, Any]) -> None:
    text = describe({"type": etype, "loc": ("body", "x"), "ctx": ctx, "msg": "Input should be English"}, "x")
    assert text and "{" not in text and "Input" not in text
    assert re.search(r"[\u4e00-\u9fff]", text)


def test_numbers_read_as_a_person_writes_them() -> None:
    assert predicate({"type": "less_than_equal", "ctx": {"le": 1.0}}) == "必须小于等于 1"
    assert predicate({"type": "less_than_equal", "ctx": {"le": 1e10}}) == "必须小于等于 10000000000"
    assert predicate({"type": "less_than", "ctx": {"lt": 0.5}}) == "必须小于 0.5"
    assert (
        predicate({"type": "literal_error", "ctx": {"expected": "'a', 'b' or 'c'"}})
        == "取值无效，可选：'a'、'b'、'c'"
    )


def test_a_space_only_after_an_ascii_name() -> None:
    err = {"type": "greater_than", "ctx": {"gt": 0}}
    assert describe(err, "price") == "price 必须大于 0"
    assert describe(err, "price（房价）") == "price（房价）必须大于 0"


def test_custom_and_unknown_errors() -> None:
    assert describe({"type": "zhiwen_unit", "msg": "利率请按百分数填写"}, "rate") == "利率请按百分数填写"
    assert kind_of({"type": "zhiwen_unit"}) == "value"
    assert describe({"type": "weird_thing"}, "x") == "参数取值无效：x"
    assert describe({"type": "some_new_type"}, "x") == "参数类型错误：x"
    assert kind_of({"type": "date_from_datetime_inexact"}) == "type"


def test_summary_of_a_config_file_error() -> None:
    class Conf(BaseModel):
        ratio: float = Field(lt=1)
        name: str

    with pytest.raises(ValidationError) as exc:
        Conf.model_validate({"ratio": 2})
    assert summary(exc.value.errors()) == "ratio 必须小于 1；缺少必需参数：name"


def test_a_date_in_another_format_says_which() -> None:
    text = describe({"type": "date_from_datetime_parsing", "loc": ("as_of",)}, "as_of")
    assert text == "as_of 日期格式无效，应为 YYYY-MM-DD，如 2026-01-15"


# -- dates: as people write them, never a number read as a timestamp --------------------------------
class DayBody(BaseModel):
    as_of: Day | None = None


@pytest.fixture
def day_client() -> TestClient:
    app = FastAPI()
    install_exception_handlers(app)

    @app.post("/day")
    def day(body: DayBody) -> dict[str, Any]:
        return {"as_of": body.as_of.isoformat() if body.as_of else None}

    return TestClient(app)


@pytest.mark.parametrize("written", ["2026-01-15", "2026/1/15", "2026.01.15", "20260115", "2026年1月15日"])
def test_a_day_in_any_common_form(day_client: TestClient, written: str) -> None:
    assert day_client.post("/day", json={"as_of": written}).json() == {"as_of": "2026-01-15"}


@pytest.mark.parametrize("bad", [20260115, 1768435200, "2026-02-30", "明天", True])
def test_a_number_or_a_non_day_is_refused_in_chinese(day_client: TestClient, bad: Any) -> None:
    resp = day_client.post("/day", json={"as_of": bad})
    body = resp.json()
    assert resp.status_code == 422 and body["code"] == 3002
    assert body["message"] == "参数类型错误：as_of（日期格式无效，应为 YYYY-MM-DD，如 2026-01-15）", body


@given(st.dates(min_value=date(1900, 1, 1)))
def test_parse_day_round_trips(day: date) -> None:
    for text in (
        day.isoformat(),
        f"{day.year}/{day.month}/{day.day}",
        f"{day.year}年{day.month}月{day.day}日",
    ):
        assert parse_day(text) == day
