"""Numbers that cannot be misread (#30): a rate as a fraction, a ratio as a percent, a price in
万元, months for years … are refused with a Chinese hint by the argument models themselves, so
the tools (LLM calls, chat), the REST calculators and the CLI all refuse them alike."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.api.handlers import install_exception_handlers
from zhiwen.apps.advisor.calculators import unit_guards
from zhiwen.apps.advisor.calculators.loan import compute_loan
from zhiwen.apps.advisor.tools import LoanArgs, TaxArgs, build_registry
from zhiwen.errors import ToolValidationError, WrongParameterType

REGISTRY = build_registry()
LOAN = {"price": 3_000_000, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1}
TAX = {"price": 3_000_000, "area": 89, "is_first_home": True, "house_age_years": 3}
PRESSURE = {"monthly_payment": 8967.34, "monthly_income": 20000}

finite = {"allow_nan": False, "allow_infinity": False}


def refused(tool: str, args: dict[str, Any]) -> ToolValidationError:
    with pytest.raises(ToolValidationError) as exc:
        REGISTRY.call(tool, args)
    err = exc.value
    assert err.code == 2001 and err.detail == ""  # nothing English for the CLI to print
    assert "Input should" not in err.message and err.data["errors"][0]["msg"]  # pydantic's text: data only
    return err


# -- rate: a percent ----------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0, max_value=0.5, exclude_min=True, exclude_max=True, **finite))
def test_a_rate_given_as_a_fraction_is_refused(rate: float) -> None:
    err = refused("calc_loan", {**LOAN, "rate": rate})
    assert err.message == f"输入参数有误：rate（{unit_guards.RATE_HINT}）"
    assert err.data["field"] == "rate"


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.just(0.0), st.floats(min_value=0.5, max_value=24, **finite)))
def test_a_rate_in_percent_is_computed_as_before(rate: float) -> None:
    out = REGISTRY.call("calc_loan", {**LOAN, "rate": rate})
    assert out["monthly_payment"] == compute_loan(**{**LOAN, "rate": rate}).monthly_payment


def test_the_issue_example() -> None:
    """`--rate 0.031` once gave 月供 5,860.58 for a 3.1 % loan."""
    assert "利率请按百分数填写，如 3.1 表示 3.1%" in refused("calc_loan", {**LOAN, "rate": 0.031}).message
    assert REGISTRY.call("calc_loan", LOAN)["monthly_payment"] == 8967.34


# -- ratios: fractions --------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=1, max_value=100, **finite))
def test_a_down_payment_ratio_given_as_a_percent_is_refused(ratio: float) -> None:
    err = refused("calc_loan", {**LOAN, "down_payment_ratio": ratio})
    assert unit_guards.DOWN_PAYMENT_HINT in err.message


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0, max_value=1, exclude_max=True, **finite))
def test_a_fractional_down_payment_ratio_passes(ratio: float) -> None:
    assert LoanArgs.model_validate({**LOAN, "down_payment_ratio": ratio}).down_payment_ratio == ratio


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=0.1, max_value=100, exclude_min=True, **finite))
def test_an_agent_fee_rate_given_as_a_percent_is_refused(rate: float) -> None:
    assert unit_guards.AGENT_FEE_HINT in refused("calc_tax", {**TAX, "agent_fee_rate": rate}).message


def test_a_ratio_beyond_any_percent_keeps_the_bound() -> None:
    err = refused("calc_loan", {**LOAN, "down_payment_ratio": 300})
    assert err.message == "输入参数有误：down_payment_ratio（首付比例，必须小于 1）"


# -- amounts: 元 ---------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0, max_value=10_000, exclude_min=True, exclude_max=True, **finite))
def test_a_price_in_wan_is_refused(price: float) -> None:
    assert "房价请按元填写" in refused("calc_loan", {**LOAN, "price": price}).message
    assert "成交价请按元填写" in refused("calc_tax", {**TAX, "price": price}).message
    assert "原购入价请按元填写" in refused("calc_tax", {**TAX, "original_price": price}).message


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=10_000, max_value=1e10, **finite))
def test_a_price_in_yuan_passes(price: float) -> None:
    assert LoanArgs.model_validate({**LOAN, "price": price}).price == price
    assert TaxArgs.model_validate({**TAX, "price": price, "original_price": price}).price == price


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=0, max_value=100, exclude_min=True, exclude_max=True, **finite))
def test_monthly_amounts_in_wan_are_refused(amount: float) -> None:
    assert "月收入请按元填写" in refused("assess_pressure", {**PRESSURE, "monthly_income": amount}).message
    assert "月供请按元填写" in refused("assess_pressure", {**PRESSURE, "monthly_payment": amount}).message


def test_no_monthly_payment_is_allowed() -> None:
    assert REGISTRY.call("assess_pressure", {**PRESSURE, "monthly_payment": 0})["level"] == "低"


# -- years, not months --------------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=31, max_value=10_000))
def test_years_over_thirty_are_refused_and_months_are_named(years: int) -> None:
    err = refused("calc_loan", {**LOAN, "years": years})
    assert "贷款年限请按年填写，最长 30 年" in err.message
    if years % 12 == 0 and years <= 360:
        assert f"{years} 个月请填 {years // 12}" in err.message


@pytest.mark.parametrize("years", [1, 15, 30])
def test_years_in_range_pass(years: int) -> None:
    assert REGISTRY.call("calc_loan", {**LOAN, "years": years})["months"] == years * 12


# -- the guards keep types and schemas as they were --------------------------------------------
def test_a_wrong_type_is_still_a_type_error() -> None:
    with pytest.raises(WrongParameterType) as exc:
        REGISTRY.call("calc_loan", {**LOAN, "rate": "三点一"})
    assert exc.value.message == "参数类型错误：rate（年利率，应为数字）"


def test_schemas_still_state_the_bounds_and_units_for_an_llm() -> None:
    props = REGISTRY.get("calc_loan").parameters_schema()["properties"]
    assert props["rate"]["maximum"] == 24 and "百分数" in props["rate"]["description"]
    assert (
        props["down_payment_ratio"]["exclusiveMaximum"] == 1
        and "小数" in props["down_payment_ratio"]["description"]
    )
    assert props["years"]["maximum"] == 30 and props["price"]["exclusiveMinimum"] == 0


# -- REST: the seed's envelope, the hint as the message, pydantic's text under data -----------------
@pytest.fixture()
def api() -> TestClient:
    from zhiwen.apps.advisor.api import build_router

    app = FastAPI()
    install_exception_handlers(app)
    app.include_router(build_router(None))  # type: ignore[arg-type]  # the calculators need no service
    return TestClient(app)


@pytest.mark.parametrize(
    ("path", "body", "hint"),
    [
        ("/api/v1/calc/loan", {**LOAN, "rate": 0.031}, "利率请按百分数填写，如 3.1 表示 3.1%"),
        ("/api/v1/calc/loan", {**LOAN, "down_payment_ratio": 30}, "首付比例请按小数填写，如 0.3 表示三成"),
        ("/api/v1/calc/loan", {**LOAN, "price": 300}, "房价请按元填写，如 300 万元填 3000000"),
        ("/api/v1/calc/tax", {**TAX, "agent_fee_rate": 2}, "中介费率请按小数填写，如 0.02 表示 2%"),
    ],
)
def test_rest_calculators_refuse_with_the_hint(
    api: TestClient, path: str, body: dict[str, Any], hint: str
) -> None:
    resp = api.post(path, json=body)
    out = resp.json()
    assert resp.status_code == 422 and set(out) == {"code", "message", "data"}
    assert out["code"] == 2001 and hint in out["message"] and "Input" not in out["message"]
    assert out["data"]["extra"]["errors"][0]["type"] == "zhiwen_unit"
