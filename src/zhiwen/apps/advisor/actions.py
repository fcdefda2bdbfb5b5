"""What each role does: which tools it calls, with which arguments, from the user's facts.

Rule-based and deterministic: every number a role reports comes from these tool calls (or the
user's own input); what the user did not say is filled from dated defaults and stated as an
assumption (首付三成, 30年, 5年期以上LPR …). Each ``act_*`` returns the calls it made.

Example::

    >>> state = RoleState("月供多少？我月收入2万", extract_facts("总价300万，首付三成，利率3.1%，月收入2万"),
    ...                   registry=build_registry())
    >>> [c.name for c in act_financial(state)]
    ['calc_loan', 'assess_pressure']
    >>> state.assumptions
    ['未说明贷款年限，按30年计算']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zhiwen.apps.advisor.facts import UserFacts
from zhiwen.apps.advisor.fmt import pct, wan_amount
from zhiwen.apps.advisor.rules import RuleBook, get_rulebook
from zhiwen.tools import ToolCallRecord, ToolRegistry
from zhiwen.tools.loop import execute_call

DEFAULT_RATIO = 0.3
DEFAULT_YEARS = 30
TAX_WORDS = re.compile(r"税|过户费|交易费|中介费|满五唯一|满二")
BOTH_METHODS = re.compile(r"(等额本息.*等额本金|等额本金.*等额本息|哪种还款|还款方式.*(区别|对比|比较|选))")
TREND_WORDS = re.compile(r"走势|趋势|涨|跌|房龄|楼龄|年代|老房|次新")


@dataclass(slots=True)
class RoleState:
    """The input of one role: question, facts, earlier roles' calls, and the tools."""

    question: str
    facts: UserFacts
    registry: ToolRegistry
    previous: list[ToolCallRecord] = field(default_factory=list)  # calls of the roles before
    assumptions: list[str] = field(default_factory=list)
    book: RuleBook = field(default_factory=get_rulebook)
    loan_only: bool = False  # the loan was computed from a stated loan amount alone (no price)

    def call(self, name: str, arguments: dict[str, Any]) -> ToolCallRecord:
        return execute_call(self.registry, name, arguments)

    def earlier(self, name: str) -> dict[str, Any] | None:
        """The latest successful result of tool ``name`` among the earlier roles' calls."""
        for record in reversed(self.previous):
            if record.name == name and record.ok and isinstance(record.result, dict):
                return record.result
        return None


# -- 财务顾问 -------------------------------------------------------------------------------------
def loan_arguments(state: RoleState) -> dict[str, Any] | None:
    """calc_loan arguments from the facts (defaults stated as assumptions); None without a price
    or a loan amount. A stated loan amount is the loan exactly, with or without a price."""
    f = state.facts
    price_ratio = (
        _price_for_loan(state, f.loan_amount) if f.loan_amount is not None else _price_and_ratio(state)
    )
    if price_ratio is None:
        return None
    price, ratio = price_ratio
    years = f.loan_years
    if years is None:
        years = DEFAULT_YEARS
        state.assumptions.append(f"未说明贷款年限，按{DEFAULT_YEARS}年计算")
    years = min(max(years, 1), 30)
    return {
        "price": round(price, 2),
        "down_payment_ratio": round(ratio, 10),
        "years": years,
        "rate": _loan_rate(state, years),
    }


def _price_for_loan(state: RoleState, loan: float) -> tuple[float, float]:
    """(price, ratio) whose loan is ``loan`` to the cent: the stated price (or the loan plus the
    down payment, or the loan over 1 − 首付比例); without any, the loan alone (ratio 0)."""
    f = state.facts
    price = f.effective_price()
    if price is None and f.down_payment_ratio is not None and f.down_payment_ratio < 1:
        price = round(loan / (1 - f.down_payment_ratio), 2)
    if price is None or price <= loan:
        if price is not None:
            state.assumptions.append(f"贷款额{wan_amount(loan / 10_000)}不低于总价，按贷款额直接计算")
        state.loan_only = True
        return loan, 0.0
    ratio = (price - loan) / price
    _check_floor(state, ratio)
    return price, ratio


def _price_and_ratio(state: RoleState) -> tuple[float, float] | None:
    f = state.facts
    price = f.target_price
    if price is None:
        price = _market_price(state)
    if price is None:
        return None
    ratio = f.effective_ratio()
    if ratio is None:
        ratio = DEFAULT_RATIO
        state.assumptions.append("未说明首付，按三成计算")
    _check_floor(state, ratio)
    return price, ratio


def _check_floor(state: RoleState, ratio: float) -> None:
    minimum = state.book.down_payment()
    floor = minimum.first_home_min if state.facts.is_first_home is not False else minimum.second_home_min
    if ratio < floor:
        state.assumptions.append(
            f"注意：首付比例{pct(ratio)}低于全国最低首付比例{pct(floor)}（{minimum.effective_from}起）"
        )


def _loan_rate(state: RoleState, years: int) -> float:
    f, book = state.facts, state.book
    if f.rate is not None:
        return f.rate
    if f.provident_fund:
        fund = book.provident_fund()
        rate = fund.rate(years, first_home=f.is_first_home is not False)
        state.assumptions.append(f"按公积金贷款利率{rate:g}%计算（{fund.date}起执行）")
        return rate
    lpr = book.lpr()
    state.assumptions.append(f"未说明利率，按5年期以上LPR {lpr.five_year:g}%估算（截至{lpr.date}）")
    return lpr.five_year


def _market_price(state: RoleState) -> float | None:
    """A price from the market analyst's figures (median listing total price) when none was given."""
    compared = state.earlier("compare_districts")
    if compared and compared.get("districts"):
        first = compared["districts"][0]
        if first.get("median_total_price"):
            state.assumptions.append(
                f"未给出总价，按{compared['city']}{first['district']}挂牌总价中位数{wan_amount(first['median_total_price'])}估算"
            )
            return float(first["median_total_price"]) * 10_000
    market = state.earlier("query_market")
    if market and market.get("overall", {}).get("median_total_price"):
        where = (
            market["city"]
            + (market["filters"].get("district") or "")
            + (market["filters"].get("bankuai") or "")
        )
        value = market["overall"]["median_total_price"]
        state.assumptions.append(f"未给出总价，按{where}挂牌总价中位数{wan_amount(value)}估算")
        return float(value) * 10_000
    return None


def act_financial(state: RoleState) -> list[ToolCallRecord]:
    calls: list[ToolCallRecord] = []
    args = loan_arguments(state)
    monthly = None
    if args is not None:
        methods = ["equal_payment", "equal_principal"] if BOTH_METHODS.search(state.question) else None
        for method in methods or [state.facts.method or "equal_payment"]:
            calls.append(state.call("calc_loan", {**args, "method": method}))
        first = calls[0]
        if first.ok:
            monthly = first.result["monthly_payment"]
    elif state.facts.monthly_payment is not None:
        monthly = state.facts.monthly_payment
    if monthly is not None and state.facts.monthly_income:
        calls.append(
            state.call(
                "assess_pressure", {"monthly_payment": monthly, "monthly_income": state.facts.monthly_income}
            )
        )
    return calls


# -- 政策专家 -------------------------------------------------------------------------------------
def tax_arguments(state: RoleState) -> dict[str, Any] | None:
    f = state.facts
    price = f.effective_price()
    if price is None:
        return None
    rule = state.book.deed_tax()
    area = f.area
    if area is None:
        area = rule.area_threshold
        state.assumptions.append(f"未说明面积，按{rule.area_threshold:g}㎡及以下计算")
    if f.is_first_home is None and f.home_number is None:
        state.assumptions.append("未说明是否首套，按首套（家庭唯一住房）计算")
    age = f.house_age_years
    if age is None:
        age = 2
        state.assumptions.append("未说明房产持有年限，按满2年（免增值税）计算")
    args: dict[str, Any] = {
        "price": round(price, 2),
        "area": area,
        "is_first_home": f.is_first_home is not False,
        "house_age_years": age,
        "is_only_home": bool(f.is_only_home),
    }
    if f.home_number:
        args["home_number"] = f.home_number
    if f.city:
        args["city"] = f.city
    return args


def policy_query(question: str, facts: UserFacts, taxes: bool) -> str:
    """The statute search query: the question without the city (the filter handles it), plus the
    tax names when taxes were computed, so the articles behind the figures come up."""
    query = question
    if facts.city:
        query = query.replace(facts.city + "市", "").replace(facts.city, "")
    if taxes:
        query += " 契税 税率 增值税 个人所得税"
    return query.strip() or question


def act_policy(state: RoleState) -> list[ToolCallRecord]:
    calls: list[ToolCallRecord] = []
    wants_tax = TAX_WORDS.search(state.question) or (state.facts.area is not None and state.facts.price)
    if wants_tax and (args := tax_arguments(state)) is not None:
        calls.append(state.call("calc_tax", args))
    policy_args: dict[str, Any] = {
        "query": policy_query(state.question, state.facts, bool(calls)),
        "top_k": 3,
    }
    if state.facts.city:
        policy_args["city"] = state.facts.city
    calls.append(state.call("search_policy", policy_args))
    calls.append(state.call("search_faq", {"query": state.question, "top_k": 2}))
    return calls


# -- 市场分析师 ----------------------------------------------------------------------------------
def act_market(state: RoleState) -> list[ToolCallRecord]:
    f = state.facts
    city = f.city
    if city is None:
        state.assumptions.append("未说明城市，展示上海的数据（可选：上海、深圳、广州、杭州、成都）")
        city = "上海"
    calls: list[ToolCallRecord] = []
    rooms = {"rooms": f.rooms} if f.rooms else {}
    if len(f.districts) >= 2:
        calls.append(state.call("compare_districts", {"city": city, "districts": f.districts, **rooms}))
    elif f.bankuai:
        calls.append(
            state.call("query_market", {"city": city, "bankuai": f.bankuai[0], "group_by": "rooms", **rooms})
        )
    elif f.districts:
        calls.append(
            state.call(
                "query_market",
                {"city": city, "district": f.districts[0], "group_by": "bankuai", "limit": 8, **rooms},
            )
        )
    else:
        calls.append(state.call("query_market", {"city": city, "group_by": "district", **rooms}))
    if TREND_WORDS.search(state.question):
        district = {"district": f.districts[0]} if len(f.districts) == 1 else {}
        calls.append(state.call("query_trend", {"city": city, **district, **rooms}))
    return calls


# -- 购房顾问 -------------------------------------------------------------------------------------
def act_synthesis(state: RoleState) -> list[ToolCallRecord]:
    calls = [state.call("search_faq", {"query": state.question, "top_k": 1 if state.previous else 3})]
    loan = state.earlier("calc_loan")
    if loan and state.facts.monthly_income and state.earlier("assess_pressure") is None:
        calls.append(
            state.call(
                "assess_pressure",
                {"monthly_payment": loan["monthly_payment"], "monthly_income": state.facts.monthly_income},
            )
        )
    return calls


ACTIONS: dict[str, Callable[[RoleState], list[ToolCallRecord]]] = {
    "financial_advisor": act_financial,
    "policy_expert": act_policy,
    "market_analyst": act_market,
    "home_advisor": act_synthesis,
}
