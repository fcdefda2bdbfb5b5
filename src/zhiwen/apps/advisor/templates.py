"""Role messages written from tool results: deterministic, every number from a tool or the user.

These are the offline answers, and the fallback whenever an LLM-written message fails the
number check. Each ``render_*`` takes the role's state and its calls and returns markdown.

Example::

    >>> render("financial_advisor", state, calls)
    '**贷款测算**（等额本息）：总价300万元，首付30%（90万元），贷款210万元…\\n- 月供：**8,967.34元**…'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zhiwen.apps.advisor.actions import RoleState
from zhiwen.apps.advisor.calculators.tax import total_cost
from zhiwen.apps.advisor.fmt import join_md, pct, unit_price, wan, wan_amount, yuan
from zhiwen.tools import ToolCallRecord

MISSING_LOAN = (
    "如需测算月供，请告诉我：房屋总价（或预算）、首付比例或金额、贷款年限和利率"
    "（不说则按三成首付、30年、最新LPR估算）。"
)


def _results(calls: Sequence[ToolCallRecord], name: str) -> list[dict[str, Any]]:
    return [c.result for c in calls if c.name == name and c.ok and isinstance(c.result, dict)]


def _errors(calls: Sequence[ToolCallRecord]) -> list[str]:
    return [f"（{c.name} 未完成：{c.error['message']}）" for c in calls if c.error]


def _assumptions(state: RoleState) -> list[str]:
    return [f"> 假设：{'；'.join(state.assumptions)}"] if state.assumptions else []


def loan_lines(loan: dict[str, Any], *, loan_only: bool = False) -> list[str]:
    """The loan's figures; ``loan_only``: computed from a stated loan amount, no price known."""
    terms = f"贷款{wan(loan['loan_amount'])}，{loan['years']}年，年利率{loan['rate']:g}%"
    if loan_only:
        head = f"**贷款测算**（{loan['method_name']}）：按贷款额直接计算，{terms}"
    else:
        head = (
            f"**贷款测算**（{loan['method_name']}）：总价{wan(loan['price'])}，首付{pct(loan['down_payment_ratio'])}"
            f"（{wan(loan['down_payment'])}），{terms}"
        )
    if loan["method"] == "equal_payment":
        lines = [head, f"- 月供：**{yuan(loan['monthly_payment'])}**（每月相同）"]
    else:
        lines = [
            head,
            f"- 首月月供：**{yuan(loan['first_month_payment'])}**，"
            f"之后每月递减{yuan(loan['monthly_decrease'])}，末月{yuan(loan['last_month_payment'])}",
        ]
    lines.append(
        f"- 还款总额：{yuan(loan['total_payment'])}，"
        f"其中利息{yuan(loan['total_interest'])}（约{wan(loan['total_interest'])}）"
    )
    return lines


def pressure_line(p: dict[str, Any]) -> str:
    return (
        f"**还款压力：{p['level']}**（{p['level_name']}）——月供{yuan(p['monthly_payment'])}占月收入"
        f"{yuan(p['monthly_income'])}的{pct(p['ratio'])}（≤30%低，≤50%中，>50%高）。{p['advice']}"
    )


def render_financial(state: RoleState, calls: Sequence[ToolCallRecord]) -> str:
    lines: list[str] = []
    for loan in _results(calls, "calc_loan"):
        lines += loan_lines(loan, loan_only=state.loan_only)
    for p in _results(calls, "assess_pressure"):
        lines.append(pressure_line(p))
    loans = _results(calls, "calc_loan")
    tax = state.earlier("calc_tax")
    if loans and tax:
        cost = total_cost(
            down_payment=loans[0]["down_payment"],
            total_interest=loans[0]["total_interest"],
            taxes=tax["total"],
        )
        lines.append(
            f"**购房总成本**：首付{yuan(loans[0]['down_payment'])} + "
            f"利息{yuan(loans[0]['total_interest'])} + 税费{yuan(tax['total'])} = {yuan(cost)}"
        )
    if not loans and not _results(calls, "assess_pressure"):
        lines.append(MISSING_LOAN)
    elif loans and not state.facts.monthly_income:
        lines.append("告诉我月收入，我可以评估还款压力。")
    return join_md(lines + _errors(calls) + _assumptions(state))


def tax_lines(tax: dict[str, Any]) -> list[str]:
    kind = "首套（家庭唯一住房）" if tax["is_first_home"] else "非首套"
    rule = tax["rule"]
    return [
        f"**税费测算**（成交价{wan(tax['price'])}，{tax['area']:g}㎡，{kind}，卖方持有{tax['house_age_years']}年）：",
        f"- 契税：{yuan(tax['deed_tax'])}（税率{pct(tax['deed_tax_rate'])}）",
        f"- 增值税：{yuan(tax['vat'])}",
        f"- 个人所得税：{yuan(tax['income_tax'])}",
        f"- 中介费：{yuan(tax['agent_fee'])}（按{pct(tax['agent_fee_rate'])}估算）",
        f"- 合计：**{yuan(tax['total'])}**（约{wan(tax['total'])}）",
        "说明：" + "；".join(tax["notes"][1:3]) + "。",
        f"依据：{rule['source']}（{rule['effective_from']}起执行）；规则截至{tax['checked_on']}。",
    ]


def hit_body(hit: dict[str, Any]) -> str:
    """A hit's text on one line, without a leading repeat of its title (FAQ question, 第X条)."""
    text = " ".join(str(hit.get("text", "")).split())
    title = str(hit.get("title", ""))
    for prefix in (title, title.split(" ")[-1]):
        if prefix and text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def _hit_lines(result: dict[str, Any], label: str, limit: int) -> list[str]:
    lines = []
    for hit in result.get("hits", [])[:limit]:
        text = hit_body(hit)
        lines.append(f"- {label}《{hit.get('title', '')}》：{text[:120]}{'…' if len(text) > 120 else ''}")
    return lines


def render_policy(state: RoleState, calls: Sequence[ToolCallRecord]) -> str:
    lines: list[str] = []
    for tax in _results(calls, "calc_tax"):
        lines += tax_lines(tax)
    dp = state.book.down_payment()
    lines.append(f"**首付政策**：{dp.summary}（{dp.effective_from}起执行）")
    for result in _results(calls, "search_policy"):
        found = _hit_lines(result, "法规", 2)
        if found:
            lines.append("**相关法规**：")
            lines += found
    for result in _results(calls, "search_faq"):
        found = _hit_lines(result, "常见问题", 1)
        lines += found
    lines.append(f"政策因城市而异，请以当地最新规定为准（本地规则数据截至{state.book.checked_on}）。")
    return join_md(lines + _errors(calls) + _assumptions(state))


def compare_lines(r: dict[str, Any]) -> list[str]:
    rooms = f"{r['rooms']}室" if r.get("rooms") else ""
    lines = [
        f"**{r['city']}{'、'.join(d['district'] for d in r['districts'])}{rooms}挂牌价对比**：",
        "| 区 | 挂牌套数 | 平均单价 | 单价中位数 | 平均总价 |",
        "|---|---|---|---|---|",
    ]
    for d in r["districts"]:
        total = "—" if d["avg_total_price"] is None else wan_amount(d["avg_total_price"])
        lines.append(
            f"| {d['district']} | {d['count']} | {unit_price(d['avg_unit_price'])} | "
            f"{unit_price(d['median_unit_price'])} | {total} |"
        )
    priced = sorted((d for d in r["districts"] if d["avg_unit_price"]), key=lambda d: -d["avg_unit_price"])
    if len(priced) >= 2 and r.get("gap_percent") is not None:
        hi, lo = priced[0], priced[-1]
        lines.append(
            f"结论：{hi['district']}的平均挂牌单价（{unit_price(hi['avg_unit_price'])}）高于{lo['district']}"
            f"（{unit_price(lo['avg_unit_price'])}），高出约{r['gap_percent']:g}%。"
        )
    return lines


def market_lines(r: dict[str, Any]) -> list[str]:
    f = r["filters"]
    where = (
        r["city"]
        + (f.get("district") or "")
        + (f.get("bankuai") or "")
        + (f"{f['rooms']}室" if f.get("rooms") else "")
    )
    o = r["overall"]
    if not o["count"]:
        return [f"**{where}**：快照中没有符合条件的挂牌房源。"]
    lines = [
        f"**{where}挂牌行情**：共{o['count']}套，平均单价{unit_price(o['avg_unit_price'])}，单价中位数"
        f"{unit_price(o['median_unit_price'])}，平均总价{wan_amount(o['avg_total_price'])}，总价中位数{wan_amount(o['median_total_price'])}。"
    ]
    label = {"district": "区", "bankuai": "板块", "rooms": "户型", "age": "建成年代"}[r["group_by"]]
    lines += [f"| {label} | 套数 | 平均单价 | 总价中位数 |", "|---|---|---|---|"]
    for g in r["groups"][:8]:
        lines.append(
            f"| {g['name']} | {g['count']} | {unit_price(g['avg_unit_price'])} | "
            f"{wan_amount(g['median_total_price'])} |"
        )
    return lines


def trend_lines(r: dict[str, Any]) -> list[str]:
    where = r["city"] + (r.get("district") or "")
    lines = [
        f"**{where}按建成年代的挂牌价**（同一时点的对比，不是价格走势）：",
        "| 建成年代 | 套数 | 平均单价 |",
        "|---|---|---|",
    ]
    for b in r["by_build_year"]:
        lines.append(f"| {b['band']} | {b['count']} | {unit_price(b['avg_unit_price'])} |")
    return lines


def render_market(state: RoleState, calls: Sequence[ToolCallRecord]) -> str:
    lines: list[str] = []
    for r in _results(calls, "compare_districts"):
        lines += compare_lines(r)
    for r in _results(calls, "query_market"):
        lines += market_lines(r)
    for r in _results(calls, "query_trend"):
        lines += trend_lines(r)
    if any(c.ok for c in calls):
        lines.append(
            "注：数据为2019年6月链家挂牌快照（挂牌价，非成交价），只能做区域间的相对比较，不代表当前房价。"
        )
    return join_md(lines + _errors(calls) + _assumptions(state))


def render_synthesis(state: RoleState, calls: Sequence[ToolCallRecord]) -> str:
    points: list[str] = []
    loan, pressure = state.earlier("calc_loan"), state.earlier("assess_pressure")
    pressure = pressure or next(iter(_results(calls, "assess_pressure")), None)
    if loan:
        points.append(
            f"月供约{yuan(loan['monthly_payment'])}（{loan['method_name']}，{loan['years']}年），总利息{wan(loan['total_interest'])}。"
        )
    if pressure:
        points.append(
            f"还款压力{pressure['level']}：月供占收入{pct(pressure['ratio'])}。{pressure['advice']}"
        )
    if tax := state.earlier("calc_tax"):
        points.append(
            f"交易税费合计约{wan(tax['total'])}，请把税费和中介费计入首付之外的现金准备"
            f"（规则截至{tax['checked_on']}）。"
        )
    cmp = state.earlier("compare_districts")
    if cmp and cmp.get("highest") and cmp.get("lowest") and cmp["highest"] != cmp["lowest"]:
        points.append(
            f"按2019年挂牌快照，{cmp['highest']}的平均单价高于{cmp['lowest']}；实地看房时以当前成交价为准。"
        )
    faq = [h for r in _results(calls, "search_faq") for h in r.get("hits", [])]
    if not state.previous and faq:
        lines = ["以下是与您的问题最相关的购房常见问题："]
        for hit in faq[:3]:
            lines.append(f"**{hit['title']}** {hit_body(hit)[:300]}")
        return join_md(lines + _errors(calls))
    if faq:
        points.append(f"延伸阅读《{faq[0]['title']}》。")
    if not points:
        points.append("请补充总价或预算、首付、月收入和城市，我会为您测算月供、税费并比较区域价格。")
    points.append("以上测算仅供参考，实际以银行审批、税务核定和当地政策为准。")
    return join_md(["**综合建议**：", *(f"{i}. {p}" for i, p in enumerate(points, 1))])


RENDERERS: dict[str, Callable[[RoleState, Sequence[ToolCallRecord]], str]] = {
    "financial_advisor": render_financial,
    "policy_expert": render_policy,
    "market_analyst": render_market,
    "home_advisor": render_synthesis,
}


def render(role_key: str, state: RoleState, calls: Sequence[ToolCallRecord]) -> str:
    return RENDERERS[role_key](state, calls)
