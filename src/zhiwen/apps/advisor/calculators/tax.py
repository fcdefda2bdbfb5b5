"""Transaction taxes and fees of a second-hand home purchase, by dated rules (``rules.toml``).

* 契税 (buyer): rate by the deed-tax rule in force (default: 公告2024年第16号, 140㎡; the earlier
  90㎡ rule is ``rule_id="2016-23"``), by 首套/二套 and area.
* 增值税 (seller, usually passed on): exempt when the home is held ≥ 2 years, else 5 %.
* 个人所得税 (seller, usually passed on): 1 % of the price, or 20 % of the gain when the
  original price is known; 满五唯一 is exempt.
* 中介费: a configurable rate of the price.

Every result names its rules and the date the rules were checked (``截至``).

Example::

    >>> r = compute_tax(price=3_000_000, area=89, is_first_home=True, house_age_years=3)
    >>> r.deed_tax, r.vat, r.income_tax, r.agent_fee, r.total
    (30000.0, 0.0, 30000.0, 60000.0, 120000.0)
    >>> r.rule.id, r.checked_on
    ('2024-16', '2025-06-30')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from zhiwen.apps.advisor.calculators.loan import CENT, cents, to_decimal
from zhiwen.apps.advisor.rules import RuleBook, get_rulebook


@dataclass(slots=True)
class RuleRef:
    id: str
    name: str
    source: str
    effective_from: str


@dataclass(slots=True)
class TaxResult:
    price: float
    area: float
    is_first_home: bool
    house_age_years: int
    deed_tax: float
    deed_tax_rate: float
    vat: float
    income_tax: float
    agent_fee: float
    agent_fee_rate: float
    total: float
    rule: RuleRef
    checked_on: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def normalise_city(city: str | None) -> str | None:
    if not city:
        return None
    city = city.strip()
    return city[:-1] if city.endswith("市") and len(city) > 2 else city


def deed_tax_rate(
    book: RuleBook,
    *,
    area: float,
    home_number: int,
    city: str | None = None,
    rule_id: str | None = None,
    on: date | None = None,
) -> tuple[float, str]:
    """(rate, why) for the buyer's ``home_number``-th home (1 = 家庭唯一住房)."""
    rule = book.deed_tax(on=on, rule_id=rule_id)
    small = area <= rule.area_threshold
    size = f"{rule.area_threshold:g}㎡及以下" if small else f"{rule.area_threshold:g}㎡以上"
    if home_number <= 1:
        return (rule.first_home_small if small else rule.first_home_large), f"家庭唯一住房、{size}"
    excluded = normalise_city(city) in {normalise_city(c) for c in rule.second_home_excluded_cities}
    if home_number == 2 and not excluded:
        return (rule.second_home_small if small else rule.second_home_large), f"家庭第二套住房、{size}"
    if home_number == 2:
        return rule.statutory_rate, f"{normalise_city(city)}第二套住房不适用该规则的优惠，按法定税率"
    return rule.statutory_rate, "第三套及以上住房，按法定税率"


def compute_tax(
    *,
    price: float,
    area: float,
    is_first_home: bool,
    house_age_years: int,
    is_only_home: bool = False,
    home_number: int | None = None,
    city: str | None = None,
    original_price: float | None = None,
    agent_fee_rate: float | None = None,
    rule_id: str | None = None,
    on: date | None = None,
    book: RuleBook | None = None,
) -> TaxResult:
    """Deed tax, VAT, income tax, agent fee and their total, in 元 rounded to the cent."""
    book = book or get_rulebook()
    rule = book.deed_tax(on=on, rule_id=rule_id)
    buyer_home = home_number if home_number is not None else (1 if is_first_home else 2)
    price_d = to_decimal(price).quantize(CENT, rounding=ROUND_HALF_UP)
    notes: list[str] = []

    rate, why = deed_tax_rate(book, area=area, home_number=buyer_home, city=city, rule_id=rule.id)
    deed = price_d * to_decimal(rate)
    notes.append(f"契税：{why}，税率{_pct(rate)}（{rule.source}，{rule.effective_from}起执行）")

    vat_rule = book.vat
    if house_age_years >= vat_rule.exempt_years:
        vat = Decimal(0)
        notes.append(f"增值税：房产持有满{vat_rule.exempt_years}年，免征")
    else:
        vat_rate = to_decimal(vat_rule.rate)
        vat = price_d / (1 + vat_rate) * vat_rate if vat_rule.base == "net" else price_d * vat_rate
        notes.append(f"增值税：持有不满{vat_rule.exempt_years}年，按{_pct(vat_rule.rate)}征收")

    it_rule = book.income_tax
    if is_only_home and house_age_years >= it_rule.exempt_min_years:
        income = Decimal(0)
        notes.append("个人所得税：满五唯一，免征")
    elif original_price is not None:
        gain = max(price_d - to_decimal(original_price), Decimal(0))
        income = gain * to_decimal(it_rule.gain_rate)
        notes.append(f"个人所得税：按差额{_pct(it_rule.gain_rate)}计算")
    else:
        income = price_d * to_decimal(it_rule.deemed_rate)
        notes.append(f"个人所得税：按成交价{_pct(it_rule.deemed_rate)}核定征收（满五唯一可免）")

    fee_rate = book.agent_fee.rate if agent_fee_rate is None else agent_fee_rate
    agent = price_d * to_decimal(fee_rate)
    notes.append(f"中介费：按成交价{_pct(fee_rate)}估算（{book.agent_fee.note}）")

    parts = [_round(x) for x in (deed, vat, income, agent)]
    return TaxResult(
        price=float(price_d),
        area=float(area),
        is_first_home=buyer_home <= 1,
        house_age_years=int(house_age_years),
        deed_tax=float(parts[0]),
        deed_tax_rate=float(rate),
        vat=float(parts[1]),
        income_tax=float(parts[2]),
        agent_fee=float(parts[3]),
        agent_fee_rate=float(fee_rate),
        total=float(sum(parts, Decimal(0))),  # the sum of the rounded parts: Property 6
        rule=RuleRef(rule.id, rule.name, rule.source, rule.effective_from.isoformat()),
        checked_on=book.checked_on.isoformat(),
        notes=notes,
    )


def _round(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def _pct(rate: float) -> str:
    return f"{float(rate) * 100:g}%"


def total_cost(*, down_payment: float, total_interest: float, taxes: float, other: float = 0.0) -> float:
    """购房总成本 = 首付 + 贷款利息 + 税费 + 其他费用 (the parts add up exactly), to the cent."""
    parts = (down_payment, total_interest, taxes, other)
    return cents(sum((to_decimal(p) for p in parts), Decimal(0)))
