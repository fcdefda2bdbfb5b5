"""Calculators against a second, independent implementation (exact fractions), to the cent.

Seed Properties 4 (annuity formula), 5 (deed tax by the seed's 90㎡ rule, and the current 140㎡
rule), 6 (totals are the sum of their parts).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from zhiwen.apps.advisor.calculators.loan import annuity_payment, compute_loan, max_principal, to_decimal
from zhiwen.apps.advisor.calculators.tax import compute_tax, total_cost
from zhiwen.apps.advisor.rules import get_rulebook

CENT = Fraction(1, 100)


def round_cents(x: Fraction) -> Fraction:
    """Round half up (away from zero for positives) to the cent, exactly."""
    scaled = x * 100
    whole = scaled.numerator // scaled.denominator
    if scaled - whole >= Fraction(1, 2):
        whole += 1
    return Fraction(whole, 100)


def reference_loan(price: Fraction, ratio: Fraction, years: int, rate: Fraction) -> dict[str, Fraction]:
    """The seed's formula in exact rational arithmetic (the convention: whole-cent loan)."""
    price_c = round_cents(price)
    down = round_cents(price_c * ratio)
    loan = price_c - down
    n = years * 12
    r = rate / 100 / 12
    if r == 0:
        monthly = loan / n
    else:
        growth = (1 + r) ** n
        monthly = loan * r * growth / (growth - 1)
    base = loan / n
    return {
        "down_payment": down,
        "loan_amount": loan,
        "monthly_payment": monthly,
        "total_interest": monthly * n - loan,
        "ep_first": base + loan * r,
        "ep_last": base + base * r,
        "ep_interest": r * loan * (n + 1) / 2,
    }


prices = st.integers(min_value=100_000, max_value=50_000_000)  # 元
ratios = st.integers(min_value=0, max_value=90)  # percent
rates = st.integers(min_value=0, max_value=800)  # hundredths of a percent: 0 – 8 %
years_st = st.integers(min_value=1, max_value=30)


@settings(max_examples=150, deadline=None)
@given(prices, ratios, years_st, rates)
def test_property4_equal_payment_matches_exact_formula(
    price: int, pct: int, years: int, rate_bp: int
) -> None:
    ratio, rate = Fraction(pct, 100), Fraction(rate_bp, 100)
    got = compute_loan(price=price, down_payment_ratio=pct / 100, years=years, rate=rate_bp / 100)
    ref = reference_loan(Fraction(price), ratio, years, rate)
    assert Fraction(str(got.down_payment)) == ref["down_payment"]
    assert Fraction(str(got.loan_amount)) == ref["loan_amount"]
    assert Fraction(str(got.monthly_payment)) == round_cents(ref["monthly_payment"])
    assert Fraction(str(got.total_interest)) == round_cents(ref["total_interest"])
    # Property 6 within the loan: 首付 + 贷款 = 房价, 贷款 + 利息 = 还款总额, to the cent
    assert Fraction(str(got.down_payment)) + Fraction(str(got.loan_amount)) == Fraction(price)
    assert Fraction(str(got.loan_amount)) + Fraction(str(got.total_interest)) == Fraction(
        str(got.total_payment)
    )


@settings(max_examples=100, deadline=None)
@given(prices, ratios, years_st, rates)
@example(price=100000, pct=5, years=20, rate_bp=439)  # exactly 743.375 → 743.38, not 743.37
def test_equal_principal_matches_exact_formula(price: int, pct: int, years: int, rate_bp: int) -> None:
    got = compute_loan(
        price=price, down_payment_ratio=pct / 100, years=years, rate=rate_bp / 100, method="equal_principal"
    )
    ref = reference_loan(Fraction(price), Fraction(pct, 100), years, Fraction(rate_bp, 100))
    assert Fraction(str(got.first_month_payment)) == round_cents(ref["ep_first"])
    assert Fraction(str(got.last_month_payment)) == round_cents(ref["ep_last"])
    assert Fraction(str(got.total_interest)) == round_cents(ref["ep_interest"])
    assert got.monthly_payment == got.first_month_payment
    assert got.first_month_payment >= got.last_month_payment


def test_done_when_loan_figure() -> None:
    r = compute_loan(price=3_000_000, down_payment_ratio=0.3, years=30, rate=3.1)
    assert (r.monthly_payment, r.loan_amount, r.down_payment) == (8967.34, 2_100_000.0, 900_000.0)
    assert r.total_interest == 1_128_243.98
    assert r.total_payment == 3_228_243.98


def test_zero_rate_and_one_year() -> None:
    r = compute_loan(price=1_200_000, down_payment_ratio=0.0, years=1, rate=0)
    assert r.monthly_payment == 100_000.0 and r.total_interest == 0.0


@pytest.mark.parametrize("method", ["equal_payment", "equal_principal"])
def test_schedule_sums_to_the_loan(method: str) -> None:
    r = compute_loan(
        price=3_000_000, down_payment_ratio=0.3, years=30, rate=3.1, method=method, schedule="monthly"
    )  # type: ignore[arg-type]
    assert len(r.schedule) == 360
    # cumulative rounding: the cents of each column add up to the exact totals
    assert round(sum(row.principal for row in r.schedule), 2) == r.loan_amount
    assert round(sum(row.interest for row in r.schedule), 2) == r.total_interest
    assert r.schedule[-1].remaining == 0.0
    yearly = compute_loan(
        price=3_000_000, down_payment_ratio=0.3, years=30, rate=3.1, method=method, schedule="yearly"
    )  # type: ignore[arg-type]
    assert len(yearly.schedule) == 30 and yearly.schedule[-1].remaining == 0.0


def test_max_principal_inverts_the_annuity() -> None:
    rate = to_decimal(3.5) / 100 / 12
    loan = max_principal(to_decimal(5000), rate, 360)
    again = compute_loan(price=float(loan), down_payment_ratio=0, years=30, rate=3.5)
    assert abs(again.monthly_payment - 5000) <= 0.01


# -- taxes ------------------------------------------------------------------------------------
areas = st.floats(min_value=20, max_value=400, allow_nan=False).map(lambda a: round(a, 2))


@settings(max_examples=200, deadline=None)
@given(prices, areas, st.booleans())
def test_property5_seed_deed_tax_rule(price: int, area: float, first: bool) -> None:
    """The seed's rule (90㎡): 首套 ≤90 1 %, >90 1.5 %; 二套 ≤90 1 %, >90 2 %."""
    r = compute_tax(price=price, area=area, is_first_home=first, house_age_years=3, rule_id="2016-23")
    if first:
        rate = Fraction(1, 100) if area <= 90 else Fraction(15, 1000)
    else:
        rate = Fraction(1, 100) if area <= 90 else Fraction(2, 100)
    assert Fraction(str(r.deed_tax)) == round_cents(Fraction(price) * rate)
    assert r.rule.id == "2016-23"


@settings(max_examples=200, deadline=None)
@given(prices, areas, st.booleans(), st.sampled_from([None, "上海", "北京", "成都"]))
def test_current_deed_tax_rule_is_the_default(price: int, area: float, first: bool, city: str | None) -> None:
    """公告2024年第16号 (140㎡), for every city: the default rule from 2024-12-01."""
    r = compute_tax(price=price, area=area, is_first_home=first, house_age_years=3, city=city)
    small = area <= 140
    rate = Fraction(1, 100) if small else (Fraction(15, 1000) if first else Fraction(2, 100))
    assert Fraction(str(r.deed_tax)) == round_cents(Fraction(price) * rate)
    assert r.rule.id == "2024-16" and r.rule.effective_from == "2024-12-01"
    assert r.checked_on == get_rulebook().checked_on.isoformat()


def test_rule_by_date_and_city_exclusion() -> None:
    before = compute_tax(
        price=2_000_000, area=100, is_first_home=True, house_age_years=3, on=date(2024, 6, 1)
    )
    assert before.rule.id == "2016-23" and before.deed_tax == 30_000.0  # >90㎡ under the old rule
    after = compute_tax(price=2_000_000, area=100, is_first_home=True, house_age_years=3, on=date(2025, 1, 1))
    assert after.rule.id == "2024-16" and after.deed_tax == 20_000.0
    beijing_2016 = compute_tax(
        price=2_000_000, area=100, is_first_home=False, house_age_years=3, city="北京市", rule_id="2016-23"
    )
    assert beijing_2016.deed_tax_rate == 0.03  # 财税〔2016〕23号: no second-home discount in 北上广深
    third = compute_tax(price=2_000_000, area=100, is_first_home=False, home_number=3, house_age_years=3)
    assert third.deed_tax_rate == 0.03


@settings(max_examples=150, deadline=None)
@given(
    prices,
    st.integers(min_value=0, max_value=30),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 60_000_000)),
)
def test_vat_income_tax_and_agent_fee(price: int, age: int, only: bool, original: int | None) -> None:
    r = compute_tax(
        price=price,
        area=89,
        is_first_home=True,
        house_age_years=age,
        is_only_home=only,
        original_price=original,
    )
    p = Fraction(price)
    assert Fraction(str(r.vat)) == (0 if age >= 2 else round_cents(p * Fraction(5, 100)))
    if only and age >= 5:
        expected_it = Fraction(0)
    elif original is not None:
        expected_it = round_cents(max(p - original, Fraction(0)) * Fraction(20, 100))
    else:
        expected_it = round_cents(p / 100)
    assert Fraction(str(r.income_tax)) == expected_it
    assert Fraction(str(r.agent_fee)) == round_cents(p * Fraction(2, 100))
    # Property 6: the total is the sum of the parts, to the cent
    parts = (r.deed_tax, r.vat, r.income_tax, r.agent_fee)
    assert Fraction(str(r.total)) == sum((Fraction(str(x)) for x in parts), Fraction(0))


@settings(max_examples=100, deadline=None)
@given(*(st.integers(min_value=0, max_value=10**9).map(lambda c: c / 100) for _ in range(4)))
def test_property6_total_cost_is_the_sum(down: float, interest: float, taxes: float, other: float) -> None:
    got = total_cost(down_payment=down, total_interest=interest, taxes=taxes, other=other)
    assert Fraction(str(got)) == sum((Fraction(str(x)) for x in (down, interest, taxes, other)), Fraction(0))


def test_agent_fee_rate_is_configurable() -> None:
    r = compute_tax(price=1_000_000, area=80, is_first_home=True, house_age_years=5, agent_fee_rate=0.01)
    assert r.agent_fee == 10_000.0 and r.agent_fee_rate == 0.01


def test_a_rate_too_small_to_move_the_growth_factor_is_a_zero_rate() -> None:
    # found by schemathesis: rate 5e-324 gave (1 + r)^n == 1 and a DivisionByZero (HTTP 500)
    tiny = Decimal("5e-324") / 1200
    assert annuity_payment(Decimal(1200), tiny, 12) == Decimal(100)
    assert max_principal(Decimal(100), tiny, 12) == Decimal(1200)
