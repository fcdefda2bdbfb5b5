"""Dated rules (tax rates, LPR, 公积金 rates, down-payment minimums) read from ``data/rules.toml``.

Rules are data with a source and an effective date, never constants in code: the calculators
ask the :class:`RuleBook` for the rule in force on a date (today by default) or for a rule by
id, and every result names the rule and the date the data was checked (``截至``).

Example::

    >>> book = get_rulebook()
    >>> book.deed_tax().id                                   # the rule in force today
    '2024-16'
    >>> book.deed_tax(on=date(2024, 6, 1)).area_threshold    # the earlier 90㎡ rule
    90.0
    >>> book.lpr().five_year
    3.5
"""

from __future__ import annotations

import tomllib
from datetime import date
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, Field

from zhiwen.errors import InvalidParameter

RULES_RESOURCE = "rules.toml"


class DeedTaxRule(BaseModel):
    id: str
    name: str
    source: str
    effective_from: date
    effective_to: date | None = None
    area_threshold: float = Field(gt=0)
    first_home_small: float
    first_home_large: float
    second_home_small: float
    second_home_large: float
    statutory_rate: float
    second_home_excluded_cities: list[str] = Field(default_factory=list)
    summary: str = ""

    def in_force(self, on: date) -> bool:
        return self.effective_from <= on and (self.effective_to is None or on <= self.effective_to)


class VatRule(BaseModel):
    id: str
    name: str
    source: str
    effective_from: date
    exempt_years: int
    rate: float
    base: str = "gross"  # gross: price × rate; net: price ÷ (1 + rate) × rate
    summary: str = ""


class IncomeTaxRule(BaseModel):
    id: str
    name: str
    source: str
    effective_from: date
    deemed_rate: float
    gain_rate: float
    exempt_min_years: int
    summary: str = ""


class AgentFee(BaseModel):
    rate: float = Field(ge=0, le=0.1)
    note: str = ""


class PressureBands(BaseModel):
    low_max: float
    medium_max: float
    source: str = ""


class DownPaymentRule(BaseModel):
    source: str
    effective_from: date
    first_home_min: float
    second_home_min: float
    summary: str = ""


class LprQuote(BaseModel):
    date: date
    one_year: float
    five_year: float


class ProvidentFundRates(BaseModel):
    date: date
    first_home_5y_or_less: float
    first_home_over_5y: float
    second_home_5y_or_less: float
    second_home_over_5y: float

    def rate(self, years: int, *, first_home: bool = True) -> float:
        if first_home:
            return self.first_home_5y_or_less if years <= 5 else self.first_home_over_5y
        return self.second_home_5y_or_less if years <= 5 else self.second_home_over_5y


class Meta(BaseModel):
    checked_on: date
    note: str = ""


class SourceNote(BaseModel):
    source: str
    note: str = ""


class RuleBook(BaseModel):
    meta: Meta
    deed_tax_rules: list[DeedTaxRule] = Field(alias="deed_tax")
    vat: VatRule
    income_tax: IncomeTaxRule
    agent_fee: AgentFee
    pressure: PressureBands
    down_payment_rules: list[DownPaymentRule] = Field(alias="down_payment")
    lpr_quotes: list[LprQuote] = Field(alias="lpr")
    lpr_meta: SourceNote
    provident_fund_rates: list[ProvidentFundRates] = Field(alias="provident_fund")
    provident_fund_meta: SourceNote

    @property
    def checked_on(self) -> date:
        return self.meta.checked_on

    def deed_tax(self, *, on: date | None = None, rule_id: str | None = None) -> DeedTaxRule:
        """The deed-tax rule ``rule_id``, else the one in force ``on`` (default: today)."""
        if rule_id:
            for rule in self.deed_tax_rules:
                if rule.id == rule_id:
                    return rule
            known = "、".join(r.id for r in self.deed_tax_rules)
            raise InvalidParameter(
                f"unknown deed tax rule {rule_id!r}", message=f"契税规则不存在：{rule_id}（可选：{known}）"
            )
        day = on or date.today()
        for rule in sorted(self.deed_tax_rules, key=lambda r: r.effective_from, reverse=True):
            if rule.in_force(day):
                return rule
        raise InvalidParameter(f"no deed tax rule in force on {day}", message=f"没有 {day} 适用的契税规则")

    def deed_tax_rule_ids(self) -> list[str]:
        return [r.id for r in self.deed_tax_rules]

    def lpr(self, on: date | None = None) -> LprQuote:
        return _latest(self.lpr_quotes, on, "date")

    def provident_fund(self, on: date | None = None) -> ProvidentFundRates:
        return _latest(self.provident_fund_rates, on, "date")

    def down_payment(self, on: date | None = None) -> DownPaymentRule:
        return _latest(self.down_payment_rules, on, "effective_from")

    def pressure_level(self, ratio: float) -> str:
        """月供/收入 → 低 / 中 / 高 (bounds inclusive)."""
        if ratio <= self.pressure.low_max:
            return "低"
        if ratio <= self.pressure.medium_max:
            return "中"
        return "高"


def _latest(items: list[Any], on: date | None, attr: str) -> Any:
    day = on or date.today()
    past = [i for i in items if getattr(i, attr) <= day]
    if not past:
        raise InvalidParameter(f"no rule dated on or before {day}", message=f"没有 {day} 之前公布的数据")
    return max(past, key=lambda i: getattr(i, attr))


def load_rulebook(text: str) -> RuleBook:
    return RuleBook.model_validate(tomllib.loads(text))


@lru_cache(maxsize=1)
def get_rulebook() -> RuleBook:
    """The rules shipped with the app (parsed once per process)."""
    text = resources.files("zhiwen.apps.advisor").joinpath(f"data/{RULES_RESOURCE}").read_text("utf-8")
    return load_rulebook(text)
