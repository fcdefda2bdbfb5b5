"""Discussion mode (深度分析): the specialists negotiate a plan in at most three rounds.

The shape of a discussion: 政策专家 states the down-payment rule; 财务顾问 computes the
plan the user asked about (200万 → 月供, 压力高); when the pressure is above 中 it works out
the highest price that brings it to 中 and asks 市场分析师, who proposes districts at that
price from the listings; 财务顾问 re-computes (150万 → 月供降到…, 压力中), 政策专家 checks
the down payment, and they agree. Every message is a ``discussion`` event ``{from, to,
content}``; 购房顾问 then states the consensus. Numbers come from tools; an LLM, when
configured, only rewords each message under the number check.

Example::

    >>> run = ChatRun("预算200万，首付40万，月收入1万，深度分析一下", facts, registry)
    >>> [e.data["from"] for e in run_discussion(plan, run) if e.type == "discussion"]
    ['policy_expert', 'financial_advisor', 'market_analyst', 'financial_advisor', 'policy_expert']
    >>> run.consensus["final"]["price"], run.consensus["final"]["level"]
    (1500000.0, '中')
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from zhiwen.answer.events import AppEvent
from zhiwen.apps.advisor.actions import RoleState, loan_arguments
from zhiwen.apps.advisor.calculators.loan import max_principal, to_decimal
from zhiwen.apps.advisor.fmt import join_md, pct, wan, wan_amount, yuan
from zhiwen.apps.advisor.plan import ExecutionPlan
from zhiwen.apps.advisor.roles import Role
from zhiwen.apps.advisor.standard import ChatRun, RoleResult, role_start
from zhiwen.tools import ToolCallRecord

MAX_ROUNDS = 3
ACCEPTABLE = ("低", "中")
PRICE_STEP = 100_000  # proposals are whole 10万


class Discussion:
    """The negotiation state: who said what, the current proposal, the calls made."""

    def __init__(self, plan: ExecutionPlan, run: ChatRun) -> None:
        self.run = run
        self.roles = {r.key: r for r in plan.roles}
        self.state = RoleState(run.question, run.facts, run.registry)
        self.calls: list[ToolCallRecord] = []
        self.round = 1

    def role(self, key: str) -> Role:
        return self.roles[key]

    def call(self, name: str, args: dict[str, Any]) -> ToolCallRecord:
        record = self.state.call(name, args)
        self.calls.append(record)
        return record

    def say(self, sender: str, to: str | None, template: str, calls: list[ToolCallRecord]) -> AppEvent:
        role = self.role(sender)
        results = [c.result for c in calls if c.ok]
        target = "全体" if to is None else self.role(to).name
        written = self.run.write(
            role,
            template,
            results,
            instruction=f"这是第{self.round}轮讨论中对{target}说的话。",
            purpose="advisor.discussion",
        )
        message = {
            "round": self.round,
            "from": sender,
            "to": to or "all",
            "from_name": role.name,
            "from_icon": role.icon,
            "to_name": target,
            "content": written.text,
            "tool_calls": [c.to_dict() for c in calls],
            **written.meta(),
        }
        self.run.discussion.append(message)
        return AppEvent("discussion", message)

    # -- finance ------------------------------------------------------------------------------
    def evaluate(
        self, args: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[ToolCallRecord]]:
        loan_call = self.call("calc_loan", args)
        calls = [loan_call]
        if not loan_call.ok:
            return None, None, calls
        loan = loan_call.result
        pressure = None
        if self.run.facts.monthly_income:
            p_call = self.call(
                "assess_pressure",
                {"monthly_payment": loan["monthly_payment"], "monthly_income": self.run.facts.monthly_income},
            )
            calls.append(p_call)
            pressure = p_call.result if p_call.ok else None
        return loan, pressure, calls

    def affordable_price(self, args: dict[str, Any], pressure: dict[str, Any]) -> float:
        """The highest whole-10万 price whose payment stays within 中 (月供 ≤ 收入 × 50 %)."""
        months = args["years"] * 12
        monthly_rate = to_decimal(args["rate"]) / 100 / 12
        loan_max = float(max_principal(to_decimal(pressure["max_payment_for_medium"]), monthly_rate, months))
        cash = self.run.facts.down_payment
        if cash is not None and self.run.facts.down_payment_ratio is None:
            # the user's cash is fixed: the loan shrinks with the price, and the down payment
            # must stay at or above the minimum ratio
            price = min(cash + loan_max, cash / self.floor())
        else:
            price = loan_max / (1 - args["down_payment_ratio"])
        return float(math.floor(price / PRICE_STEP) * PRICE_STEP)

    def floor(self) -> float:
        """The minimum down-payment ratio for this buyer (首套 / 二套) in force today."""
        dp = self.state.book.down_payment()
        return dp.first_home_min if self.run.facts.is_first_home is not False else dp.second_home_min

    def args_at(self, args: dict[str, Any], price: float) -> dict[str, Any]:
        cash = self.run.facts.down_payment
        if cash is not None and self.run.facts.down_payment_ratio is None:
            ratio = min(cash / price, 0.99)
        else:
            ratio = args["down_payment_ratio"]
        # 10 decimals: the down payment the tool computes rounds back to the user's cash exactly
        return {**args, "price": price, "down_payment_ratio": round(ratio, 10)}


def _basis(amounts: dict[str, Any]) -> str:
    """What the negotiation moves: the total price, or the loan when only a loan amount was given."""
    return "贷款额" if amounts["down_payment"] == 0 else "总价"


def _loan_sentence(loan: dict[str, Any], pressure: dict[str, Any] | None) -> str:
    price = ""
    if _basis(loan) == "总价":
        down = f"{wan(loan['down_payment'])}（{pct(loan['down_payment_ratio'])}）"
        price = f"总价{wan(loan['price'])}、首付{down}，"
    text = (
        f"{price}贷款{wan(loan['loan_amount'])}、{loan['years']}年、年利率{loan['rate']:g}%，"
        f"月供{yuan(loan['monthly_payment'])}"
    )
    if pressure:
        text += f"，占月收入{pct(pressure['ratio'])}，压力{pressure['level']}"
    return text


def _policy_opening(d: Discussion, ratio: float | None) -> str:
    book = d.state.book
    dp, rule = book.down_payment(), book.deed_tax()
    city = d.run.facts.city
    parts = [f"{dp.summary}（{dp.effective_from}起）"]
    if ratio is not None:
        floor = d.floor()
        ok = "符合" if ratio >= floor else "低于"
        parts.append(f"当前方案首付{pct(ratio)}，{ok}最低{pct(floor)}的要求")
    parts.append(f"契税按{rule.source.split('《')[0]}：{rule.summary.split('。')[0]}")
    if city:
        parts.append(f"{city}的限购、认房认贷等政策请以当地最新规定为准")
    return "；".join(parts) + "。"


def _fitting(groups: list[dict[str, Any]], price: float, min_count: int) -> list[dict[str, Any]]:
    """Groups whose median listing total price is within ``price`` (元), dearest first."""
    fits = [g for g in groups if g["count"] >= min_count and g["median_total_price"] <= price / 10_000]
    return sorted(fits, key=lambda g: -g["median_total_price"])


def _market_proposal(d: Discussion, price: float) -> tuple[str, list[ToolCallRecord], list[dict[str, Any]]]:
    """Districts (else 板块) of the user's city whose median listing price fits ``price``."""
    facts = d.run.facts
    city = facts.city or "上海"
    if facts.city is None:
        d.state.assumptions.append("未说明城市，市场数据以上海为例")
    rooms = {"rooms": facts.rooms} if facts.rooms else {}
    record = d.call("query_market", {"city": city, "group_by": "district", "limit": 100, **rooms})
    if not record.ok:
        text = (
            f"暂无{city}的挂牌数据可供比较。建议把总价控制在{wan(price)}左右，"
            "优先考虑外围区域、次新或小户型房源。"
        )
        return text, [record], []
    calls = [record]
    example = "" if facts.city else "（未说明城市，以上海为例）"
    picks = _fitting(record.result["groups"], price, 5)[:2]
    level = "区"
    if not picks:
        by_bankuai = d.call("query_market", {"city": city, "group_by": "bankuai", "limit": 100, **rooms})
        calls.append(by_bankuai)
        picks = _fitting(by_bankuai.result["groups"], price, 3)[:3] if by_bankuai.ok else []
        level = "板块"
    if not picks:
        text = (
            f"{example}{city}各区和板块的挂牌总价中位数都高于{wan(price)}，只能看面积较小或楼龄较老的房源。"
        )
        return text, calls, []
    names = "、".join(f"{g['name']}（挂牌总价中位数{wan_amount(g['median_total_price'])}）" for g in picks)
    text = f"{example}按2019年6月链家挂牌快照，{city}在{wan(price)}左右可以重点看{names}这些{level}。"
    return text, calls, picks


def run_discussion(plan: ExecutionPlan, run: ChatRun) -> Iterator[AppEvent]:
    """``discussion`` events of up to three rounds, then the 购房顾问's consensus."""
    d = Discussion(plan, run)
    facts = run.facts
    args = loan_arguments(d.state)
    ratio = args["down_payment_ratio"] if args else facts.effective_ratio()
    if d.state.loan_only:  # a loan amount alone: no down payment to check
        ratio = None
    yield d.say("policy_expert", None, _policy_opening(d, ratio), [])
    consensus: dict[str, Any] = {"agreed": False, "rounds": 1, "districts": []}
    if args is None:
        yield d.say(
            "financial_advisor",
            None,
            "没有总价或预算，无法测算月供。请告诉我预算、首付和月收入，我们再一起讨论方案。",
            [],
        )
        consensus["summary"] = "缺少预算信息，未形成方案：请补充总价或预算、首付和月收入。"
        yield from _finish(d, consensus)
        return
    loan, pressure, calls = d.evaluate(args)
    if loan is None:
        yield d.say(
            "financial_advisor", None, "按给出的条件无法完成贷款测算，请检查总价、首付比例和年限。", calls
        )
        consensus["summary"] = "贷款测算未完成，请检查输入。"
        yield from _finish(d, consensus)
        return
    consensus["original"] = _snapshot(loan, pressure)
    if pressure is None or pressure["level"] in ACCEPTABLE:
        verdict = (
            "没有月收入信息，暂无法评估还款压力" if pressure is None else "还款压力可以接受，这个方案可行"
        )
        yield d.say("financial_advisor", None, f"{_loan_sentence(loan, pressure)}。{verdict}。", calls)
        text, m_calls, picks = _market_proposal(d, loan["price"])
        yield d.say("market_analyst", "financial_advisor", text, m_calls)
        consensus.update(agreed=pressure is not None, final=_snapshot(loan, pressure), districts=picks)
        yield from _finish(d, consensus)
        return
    best = (loan, pressure)
    current = args
    for round_no in range(1, MAX_ROUNDS + 1):
        d.round = round_no
        target = d.affordable_price(current, pressure)
        if target <= 0 or target >= loan["price"]:
            break
        cap = pressure["max_payment_for_medium"]
        yield d.say(
            "financial_advisor",
            "market_analyst",
            f"{_loan_sentence(loan, pressure)}。要把压力降到中等，月供需不超过{yuan(cap)}，"
            f"对应{_basis(loan)}约{wan(target)}以内。能否找到这个价位的区域？",
            calls,
        )
        text, m_calls, picks = _market_proposal(d, target)
        yield d.say("market_analyst", "financial_advisor", text, m_calls)
        d.round = min(round_no + 1, MAX_ROUNDS)
        current = d.args_at(args, target)
        loan, pressure, calls = d.evaluate(current)
        if loan is None or pressure is None:
            break
        best = (loan, pressure)
        if pressure["level"] in ACCEPTABLE:
            yield d.say(
                "financial_advisor",
                None,
                f"{_basis(loan).replace('总价', '')}{wan(loan['price'])}的话"
                f"月供降到{yuan(loan['monthly_payment'])}，占月收入{pct(pressure['ratio'])}，"
                f"压力{pressure['level']}，我同意这个方案。",
                calls,
            )
            text, agreed = _policy_agreement(d, loan)
            yield d.say("policy_expert", None, text, [])
            consensus.update(agreed=agreed, districts=picks)
            break
    consensus["rounds"] = d.round
    consensus["final"] = _snapshot(*best)
    yield from _finish(d, consensus)


def _policy_agreement(d: Discussion, loan: dict[str, Any]) -> tuple[str, bool]:
    """The policy expert's word on the agreed plan, and whether its down payment is allowed."""
    if d.state.loan_only:
        text = f"同意。未给出总价，首付请按不低于总价的{pct(d.floor())}准备，贷款{wan(loan['loan_amount'])}。"
        return text, True
    ratio = loan["down_payment_ratio"]
    text = (
        f"同意。{wan(loan['price'])}的方案首付{wan(loan['down_payment'])}（{pct(ratio)}），"
        f"{_floor_check(d, ratio)}"
    )
    return text, ratio >= d.floor()


def _floor_check(d: Discussion, ratio: float) -> str:
    dp, floor = d.state.book.down_payment(), d.floor()
    if ratio >= floor:
        return f"符合最低首付{pct(floor)}的要求（{dp.effective_from}起）。"
    return f"低于最低首付{pct(floor)}的要求，需要提高首付。"


def _snapshot(loan: dict[str, Any], pressure: dict[str, Any] | None) -> dict[str, Any]:
    keys = (
        "price",
        "down_payment",
        "down_payment_ratio",
        "loan_amount",
        "years",
        "rate",
        "monthly_payment",
        "total_interest",
    )
    out = {k: loan[k] for k in keys}
    out["level"] = pressure["level"] if pressure else None
    out["ratio"] = pressure["ratio"] if pressure else None
    return out


def _consensus_text(consensus: dict[str, Any]) -> str:
    if "final" not in consensus:
        return f"**讨论结论**：{consensus.get('summary', '未形成方案')}"
    final, original = consensus["final"], consensus.get("original", consensus["final"])
    head = "讨论共识" if consensus["agreed"] else "讨论结论（未完全达成共识）"
    lines = [f"**{head}**（{consensus['rounds']}轮）："]
    if original["price"] != final["price"]:
        lines.append(
            f"1. {_basis(final)}：由{wan(original['price'])}调整为{wan(final['price'])}"
            f"（原方案月供{yuan(original['monthly_payment'])}，压力{original['level']}）。"
        )
    else:
        lines.append(f"1. {_basis(final)}：维持{wan(final['price'])}。")
    pressure = f"，占月收入{pct(final['ratio'])}，压力{final['level']}" if final["level"] else ""
    lines.append(
        f"2. 贷款：{'' if _basis(final) == '贷款额' else '首付' + wan(final['down_payment']) + '，'}"
        f"贷款{wan(final['loan_amount'])}，{final['years']}年，"
        f"月供{yuan(final['monthly_payment'])}{pressure}。"
    )
    if consensus["districts"]:
        lines.append(
            "3. 区域：建议关注"
            + "、".join(g["name"] for g in consensus["districts"])
            + "（依据2019年6月挂牌快照）。"
        )
    if not consensus["agreed"]:
        lines.append("在现有收入下难以把压力降到中等，建议提高首付、增加家庭收入或暂缓购房。")
    lines.append("以上为测算结果，实际以银行审批和当地政策为准。")
    return join_md(lines)


def _finish(d: Discussion, consensus: dict[str, Any]) -> Iterator[AppEvent]:
    final_role = next(r for r in d.roles.values() if r.synthesis)
    d.run.consensus = consensus
    yield role_start(final_role)
    template = _consensus_text(consensus)
    written = d.run.write(
        final_role,
        template,
        [c.result for c in d.calls if c.ok] + [consensus],
        instruction="总结专家讨论形成的共识方案。",
        purpose="advisor.consensus",
    )
    result = RoleResult(final_role, written.text, list(d.calls), list(d.state.assumptions), written)
    d.run.results.append(result)
    data = result.event_data()
    data["consensus"] = consensus
    yield AppEvent("role_result", data)
