"""The advisor's tools (OpenAI function schemas, pydantic-validated arguments) and their registry.

Calculators (``calc_loan``, ``calc_tax``, ``assess_pressure``) are pure; the search tools
(``search_policy``, ``search_faq``) go through ``ctx.pipeline`` over the KBs ``setup`` built;
the market tools read the tables ``setup`` saved under the app's home folder.

Example::

    >>> registry = build_registry(ctx)            # ctx: AppContext (None: no KB search)
    >>> registry.call("calc_loan", {"price": 3e6, "down_payment_ratio": 0.3, "years": 30,
    ...                             "rate": 3.1})["monthly_payment"]
    8967.34
    >>> registry.call("assess_pressure", {"monthly_payment": 8967.34, "monthly_income": 20000})["level"]
    '中'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from zhiwen.apps.advisor.calculators.loan import compute_loan, to_decimal
from zhiwen.apps.advisor.calculators.tax import compute_tax
from zhiwen.apps.advisor.calculators.unit_guards import (
    AgentFeeRate,
    DealPrice,
    DownPaymentRatio,
    HomePrice,
    LoanYears,
    MonthlyIncome,
    MonthlyPayment,
    OriginalPrice,
    PercentRate,
)
from zhiwen.apps.advisor.market import load_market
from zhiwen.apps.advisor.rules import get_rulebook
from zhiwen.errors import StoreUnavailable, ToolValidationError
from zhiwen.tools import Tool, ToolRegistry
from zhiwen.validation import Day

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext

POLICY_KB = "advisor_policy"
FAQ_KB = "advisor_faq"
NATIONAL = "全国"


# -- calculators --------------------------------------------------------------------------------
class LoanArgs(BaseModel):
    price: HomePrice = Field(gt=0, le=1e10, description="房价（元），如 300 万元填 3000000")
    down_payment_ratio: DownPaymentRatio = Field(ge=0, lt=1, description="首付比例（小数），如 0.3 表示三成")
    years: LoanYears = Field(ge=1, le=30, description="贷款年限（年），最长 30")
    rate: PercentRate = Field(ge=0, le=24, description="年利率（百分数），如 3.1 表示 3.1%")
    method: Literal["equal_payment", "equal_principal"] = Field(
        "equal_payment", description="还款方式：equal_payment 等额本息，equal_principal 等额本金"
    )
    schedule: Literal["none", "yearly", "monthly"] = Field("none", description="还款计划表：不要/按年/按月")


class CalcLoanTool(Tool[LoanArgs]):
    name = "calc_loan"
    description = "计算房贷：首付、贷款额、月供（等额本金给出首月和末月）、还款总额、总利息和还款计划"
    args_model = LoanArgs

    def run(self, args: LoanArgs) -> dict[str, Any]:
        return compute_loan(**args.model_dump()).to_dict()


class TaxArgs(BaseModel):
    price: DealPrice = Field(gt=0, le=1e10, description="成交价（元），如 300 万元填 3000000")
    area: float = Field(gt=0, le=10000, description="面积（㎡）")
    is_first_home: bool = Field(description="买方是否首套（家庭唯一住房）")
    house_age_years: int = Field(ge=0, le=100, description="卖方持有年限（年）")
    is_only_home: bool = Field(False, description="卖方是否家庭唯一住房（满五唯一免个税）")
    home_number: int | None = Field(None, ge=1, le=10, description="买方第几套住房（优先于 is_first_home）")
    city: str | None = Field(None, max_length=20, description="城市")
    original_price: OriginalPrice | None = Field(
        None, ge=0, le=1e10, description="卖方原购入价（元），给出时个税按差额20%"
    )
    agent_fee_rate: AgentFeeRate | None = Field(
        None, ge=0, le=0.1, description="中介费率（小数），如 0.02 表示 2%"
    )
    rule: str | None = Field(None, max_length=20, description="契税规则 ID（默认按交易日期取现行规则）")
    as_of: Day | None = Field(None, description="交易日期（默认今天），如 2026-01-15")


class CalcTaxTool(Tool[TaxArgs]):
    name = "calc_tax"
    description = "计算二手房交易税费：契税、增值税、个人所得税、中介费及合计，注明所用规则和日期"
    args_model = TaxArgs

    def run(self, args: TaxArgs) -> dict[str, Any]:
        a = args
        if a.rule is not None and a.rule not in get_rulebook().deed_tax_rule_ids():
            known = "、".join(get_rulebook().deed_tax_rule_ids())
            raise ToolValidationError(message=f"输入参数有误：rule（可选：{known}）", data={"field": "rule"})
        result = compute_tax(
            price=a.price,
            area=a.area,
            is_first_home=a.is_first_home,
            house_age_years=a.house_age_years,
            is_only_home=a.is_only_home,
            home_number=a.home_number,
            city=a.city,
            original_price=a.original_price,
            agent_fee_rate=a.agent_fee_rate,
            rule_id=a.rule,
            on=a.as_of,
        )
        return result.to_dict()


class PressureArgs(BaseModel):
    monthly_payment: MonthlyPayment = Field(ge=0, le=1e8, description="月供（元）")
    monthly_income: MonthlyIncome = Field(gt=0, le=1e8, description="月收入（元），如 2 万元填 20000")


LEVEL_NAMES = {"低": "压力较小", "中": "压力中等", "高": "压力较大"}
LEVEL_ADVICE = {
    "低": "月供占收入比例较低，还款压力小，可保留一定应急资金后正常安排生活支出。",
    "中": "月供占收入比例适中，建议预留至少6个月月供的应急资金，并控制其他负债。",
    "高": "月供占收入比例偏高，建议降低总价、提高首付或延长贷款年限，避免影响生活质量。",
}


def assess_pressure(monthly_payment: float, monthly_income: float) -> dict[str, Any]:
    """月供/收入 → 低 (≤30 %) / 中 (≤50 %) / 高, compared exactly (decimal) at the bounds."""
    book = get_rulebook()
    ratio = to_decimal(monthly_payment) / to_decimal(monthly_income)
    bands = book.pressure
    if ratio <= to_decimal(bands.low_max):
        level = "低"
    elif ratio <= to_decimal(bands.medium_max):
        level = "中"
    else:
        level = "高"
    return {
        "monthly_payment": float(monthly_payment),
        "monthly_income": float(monthly_income),
        "ratio": float(round(ratio, 4)),
        "ratio_percent": float(round(ratio * 100, 2)),
        "level": level,
        "level_name": LEVEL_NAMES[level],
        "thresholds": {"low_max": bands.low_max, "medium_max": bands.medium_max},
        "advice": LEVEL_ADVICE[level],
        "max_payment_for_medium": float(round(to_decimal(monthly_income) * to_decimal(bands.medium_max), 2)),
        "max_payment_for_low": float(round(to_decimal(monthly_income) * to_decimal(bands.low_max), 2)),
        "source": bands.source,
        "checked_on": book.checked_on.isoformat(),
    }


class AssessPressureTool(Tool[PressureArgs]):
    name = "assess_pressure"
    description = "评估还款压力：月供/月收入 ≤30% 低，≤50% 中，否则高"
    args_model = PressureArgs

    def run(self, args: PressureArgs) -> dict[str, Any]:
        return assess_pressure(args.monthly_payment, args.monthly_income)


# -- retrieval ----------------------------------------------------------------------------------
class PolicyArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="检索内容")
    city: str | None = Field(None, max_length=20, description="城市（只返回该城市及全国性的法规）")
    top_k: int = Field(3, ge=1, le=10, description="返回条数")
    include_national: bool = Field(True, description="城市过滤时是否包含全国性法规")


class FaqArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="检索内容")
    top_k: int = Field(3, ge=1, le=10, description="返回条数")


def _hit_dict(hit: Any) -> dict[str, Any]:
    c = hit.chunk
    meta = dict(c.metadata)
    return {
        "id": c.id,
        "title": c.title or c.doc_id,
        "text": c.text[:400],
        "score": round(float(hit.score), 4),
        "city": meta.get("city"),
        "source": meta.get("source") or meta.get("law"),
        "article": meta.get("article"),
    }


class _KBTool(Tool[Any]):
    kb_name: str = ""

    def __init__(self, ctx: AppContext | None) -> None:
        self.ctx = ctx

    def _search(self, query: str, top_k: int, filters: dict[str, Any] | None) -> dict[str, Any]:
        if self.ctx is None:
            raise StoreUnavailable("no app context", message="知识库检索不可用：请通过 API 或 CLI 调用")
        kb = self.ctx.open_kb(self.kb_name)
        result = self.ctx.pipeline.search(kb, query, top_k=top_k, filters=filters)
        return {
            "kb": self.kb_name,
            "query": query,
            "hits": [_hit_dict(h) for h in result.hits],
            "params": dict(result.params or {}),
        }


class SearchPolicyTool(_KBTool):
    name = "search_policy"
    description = "检索购房相关法规条文（契税法、增值税法、个人所得税法、住房公积金管理条例等），可按城市过滤"
    args_model = PolicyArgs
    kb_name = POLICY_KB

    def run(self, args: PolicyArgs) -> dict[str, Any]:
        filters = None
        city = (args.city or "").strip().removesuffix("市") or None
        if city:
            filters = {"city": {"in": [city, NATIONAL]}} if args.include_national else {"city": city}
        out = self._search(args.query, args.top_k, filters)
        out["city"] = city
        return out


class SearchFaqTool(_KBTool):
    name = "search_faq"
    description = "检索购房常见问题（流程、贷款、税费、交易风险等）"
    args_model = FaqArgs
    kb_name = FAQ_KB

    def run(self, args: FaqArgs) -> dict[str, Any]:
        return self._search(args.query, args.top_k, None)


# -- market -------------------------------------------------------------------------------------
class MarketArgs(BaseModel):
    city: str = Field(min_length=1, max_length=20, description="城市：上海、深圳、广州、杭州、成都")
    district: str | None = Field(None, max_length=20, description="区，如 浦东、闵行")
    bankuai: str | None = Field(None, max_length=20, description="板块，如 莘庄")
    rooms: int | None = Field(None, ge=1, le=10, description="居室数")
    group_by: Literal["district", "bankuai", "rooms", "age"] = Field("district", description="分组方式")
    limit: int = Field(20, ge=1, le=100, description="最多返回的分组数")


class TrendArgs(BaseModel):
    city: str = Field(min_length=1, max_length=20, description="城市")
    district: str | None = Field(None, max_length=20, description="区")
    rooms: int | None = Field(None, ge=1, le=10, description="居室数")


class CompareArgs(BaseModel):
    city: str = Field(min_length=1, max_length=20, description="城市")
    districts: list[str] = Field(min_length=1, max_length=10, description='要比较的区，如 ["浦东", "闵行"]')
    rooms: int | None = Field(None, ge=1, le=10, description="居室数")


class _MarketTool(Tool[Any]):
    def __init__(self, home: Path) -> None:
        self.home = home


class QueryMarketTool(_MarketTool):
    name = "query_market"
    description = "查询二手房挂牌行情：按区、板块、居室、楼龄统计套数和均价/中位价（2019年6月链家快照）"
    args_model = MarketArgs

    def run(self, args: MarketArgs) -> dict[str, Any]:
        market = load_market(self.home)
        return market.query(
            args.city,
            district=args.district,
            bankuai=args.bankuai,
            rooms=args.rooms,
            group_by=args.group_by,
            limit=args.limit,
        )


class QueryTrendTool(_MarketTool):
    name = "query_trend"
    description = "按建成年代比较同一时点的挂牌价（数据只有2019年6月一个时点，不是时间序列）"
    args_model = TrendArgs

    def run(self, args: TrendArgs) -> dict[str, Any]:
        return load_market(self.home).trend(args.city, district=args.district, rooms=args.rooms)


class CompareDistrictsTool(_MarketTool):
    name = "compare_districts"
    description = "比较同一城市几个区的挂牌套数、平均单价、平均总价和单价中位数"
    args_model = CompareArgs

    def run(self, args: CompareArgs) -> dict[str, Any]:
        return load_market(self.home).compare(args.city, args.districts, rooms=args.rooms)


TOOL_NAMES = (
    "calc_loan",
    "calc_tax",
    "assess_pressure",
    "search_policy",
    "search_faq",
    "query_market",
    "query_trend",
    "compare_districts",
)


def build_registry(ctx: AppContext | None = None, *, home: Path | None = None) -> ToolRegistry:
    """Every advisor tool. Without ``ctx`` the search tools answer 2002 (no retrieval service);
    the market tools read ``home`` (default: the context's or the configured ``ZHIWEN_HOME``)."""
    if home is None:
        if ctx is not None:
            home = ctx.settings.home
        else:
            from zhiwen.config import get_settings

            home = get_settings().home
    return ToolRegistry(
        [
            CalcLoanTool(),
            CalcTaxTool(),
            AssessPressureTool(),
            SearchPolicyTool(ctx),
            SearchFaqTool(ctx),
            QueryMarketTool(home),
            QueryTrendTool(home),
            CompareDistrictsTool(home),
        ]
    )
