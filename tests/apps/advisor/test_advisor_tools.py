"""Tools and roles: seed Properties 1 (schema), 2 (registry), 3 (validation), 7 (pressure),
9 (every role's tools are registered) and 10 (keywords select roles)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.apps.advisor.plan import plan_execution
from zhiwen.apps.advisor.roles import load_roles, match_keywords, parse_roles
from zhiwen.apps.advisor.tools import TOOL_NAMES, build_registry
from zhiwen.errors import MissingParameter, ToolValidationError, WrongParameterType, ZhiwenError

REGISTRY = build_registry()
VALID_ARGS: dict[str, dict[str, Any]] = {
    "calc_loan": {"price": 3e6, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1},
    "calc_tax": {"price": 3e6, "area": 89, "is_first_home": True, "house_age_years": 3},
    "assess_pressure": {"monthly_payment": 8967.34, "monthly_income": 20000},
    "search_policy": {"query": "契税"},
    "search_faq": {"query": "流程"},
    "query_market": {"city": "上海"},
    "query_trend": {"city": "上海"},
    "compare_districts": {"city": "上海", "districts": ["浦东", "闵行"]},
}


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_property1_openai_schema(name: str) -> None:
    schema = REGISTRY.get(name).to_openai_schema()
    assert schema["type"] == "function"
    fn = schema["function"]
    assert fn["name"] == name and fn["description"]
    params = fn["parameters"]
    assert params["type"] == "object" and params["properties"]
    assert set(params["required"]) <= set(params["properties"])
    assert "$defs" not in params


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_property2_registered_tool_is_the_same_instance(name: str) -> None:
    tool = REGISTRY.get(name)
    assert REGISTRY.get(name) is tool and name in REGISTRY
    assert [s["function"]["name"] for s in REGISTRY.schemas([name])] == [name]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(TOOL_NAMES), st.data())
def test_property3_invalid_arguments_raise_validation_errors(name: str, data: st.DataObject) -> None:
    """A missing required field → 3001; a wrong type → 3002; never a failure inside the tool."""
    valid = VALID_ARGS[name]
    field = data.draw(st.sampled_from(sorted(valid)))
    missing = {k: v for k, v in valid.items() if k != field}
    with pytest.raises(MissingParameter) as exc:
        REGISTRY.call(name, missing)
    assert exc.value.code == 3001 and field in exc.value.message
    wrong = {**valid, field: data.draw(st.sampled_from([{"x": 1}, [[1]], "不是数字"]))}
    if isinstance(valid[field], str) and isinstance(wrong[field], str):
        return  # any string is a valid string
    with pytest.raises((WrongParameterType, ToolValidationError)) as err:
        REGISTRY.call(name, wrong)
    assert err.value.code in (3002, 2001) and field in err.value.message


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"price": -1, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1}, "price"),
        ({"price": 1e6, "down_payment_ratio": 1.5, "years": 30, "rate": 3.1}, "down_payment_ratio"),
        ({"price": 1e6, "down_payment_ratio": 0.3, "years": 31, "rate": 3.1}, "years"),
        ({"price": 1e6, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1, "method": "x"}, "method"),
    ],
)
def test_invalid_values_are_2001(args: dict[str, Any], field: str) -> None:
    with pytest.raises(ToolValidationError) as exc:
        REGISTRY.call("calc_loan", args)
    assert exc.value.code == 2001 and exc.value.message.startswith(f"输入参数有误：{field}（")
    assert exc.value.data["field"] == field and exc.value.data["label"]


def level_of(payment: Decimal, income: Decimal) -> str:
    ratio = payment / income
    return "低" if ratio <= Decimal("0.3") else ("中" if ratio <= Decimal("0.5") else "高")


# amounts in 元 from 100 up (under 100 元 a month is refused as 万元, see calculators/unit_guards.py)
yuan_st = st.integers(min_value=100_00, max_value=10**8).map(lambda c: Decimal(c) / 100)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.just(Decimal(0)), yuan_st), yuan_st)
def test_property7_pressure_levels(payment: Decimal, income: Decimal) -> None:
    r = REGISTRY.call("assess_pressure", {"monthly_payment": float(payment), "monthly_income": float(income)})
    assert r["level"] == level_of(payment, income)


@pytest.mark.parametrize(
    ("payment", "income", "level"),
    [(3000, 10000, "低"), (3000.01, 10000, "中"), (5000, 10000, "中"), (5000.01, 10000, "高")],
)
def test_pressure_bounds_are_inclusive(payment: float, income: float, level: str) -> None:
    assert (
        REGISTRY.call("assess_pressure", {"monthly_payment": payment, "monthly_income": income})["level"]
        == level
    )


def test_done_when_pressure() -> None:
    r = REGISTRY.call("assess_pressure", {"monthly_payment": 8967.34, "monthly_income": 20000})
    assert r["level"] == "中" and r["ratio_percent"] == 44.84


def test_unknown_tool_is_not_found() -> None:
    with pytest.raises(ZhiwenError) as exc:
        REGISTRY.call("no_such_tool", {})
    assert exc.value.code == 3004


# -- roles --------------------------------------------------------------------------------------
ROLES = load_roles()


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.key)
def test_property9_role_tools_are_registered(role: Any) -> None:
    assert role.tools, role.key
    assert all(t in REGISTRY for t in role.tools)
    assert role.name and role.icon and role.prompt and role.keywords


def test_roles_are_the_seeds_four() -> None:
    assert [r.name for r in ROLES] == ["政策专家", "市场分析师", "财务顾问", "购房顾问"]
    assert [r.name for r in ROLES if r.synthesis] == ["购房顾问"]


def test_roles_data_is_validated() -> None:
    with pytest.raises(ValueError, match="synthesis"):
        parse_roles('[[roles]]\nkey = "a"\nname = "A"\n')


filler = st.text(alphabet="的了吗呢我你在想买房子请问一下这个那个，。？", max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([(r, k) for r in ROLES for k in r.keywords]), filler, filler)
def test_property10_a_trigger_keyword_selects_its_role(pair: Any, before: str, after: str) -> None:
    role, keyword = pair
    text = before + keyword + after
    assert role in [r for r, _ in match_keywords(text, ROLES)]
    plan = plan_execution(text, ROLES)
    assert role in plan.roles and plan.roles[-1].synthesis


def test_plan_orders_roles_and_explains() -> None:
    plan = plan_execution("契税多少？月供多少？浦东房价呢？", ROLES)
    assert [r.key for r in plan.roles] == [
        "policy_expert",
        "market_analyst",
        "financial_advisor",
        "home_advisor",
    ]
    assert plan.mode == "sequential" and plan.source == "keywords" and "关键词" in plan.reason
    fallback = plan_execution("你好", ROLES)
    assert [r.key for r in fallback.roles] == ["home_advisor"] and fallback.source == "default"
    deep = plan_execution("你好", ROLES, mode="discussion")
    assert deep.mode == "discussion" and len(deep.roles) == 4
