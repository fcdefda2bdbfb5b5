"""Properties of the fact reader (#28): every amount keeps its unit and its role, corrections
change one fact, and the echo of the facts reads back as the same facts."""

from __future__ import annotations

import cn2an
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.apps.advisor.facts import UserFacts, extract_facts, facts_echo, merge_facts

BASE = extract_facts("总价480万，首付三成，贷款30年，利率3.1%，95㎡，二套，月收入2万")
areas = st.integers(min_value=20, max_value=300)
prices = st.integers(min_value=50, max_value=5000)  # 万
LAYOUTS = (
    "{a}㎡ {p}万",
    "{p}万，{a}平",
    "买一套{a}平米、{p}万的房子",
    "这套房子{a}平，总价{p}万",
    "{a}平方米，{p}万元",
)


@settings(max_examples=120, deadline=None)
@given(areas, prices, st.sampled_from(LAYOUTS))
def test_an_area_beside_a_price_keeps_its_role(area: int, price: int, layout: str) -> None:
    facts = extract_facts(layout.format(a=area, p=price))
    assert (facts.area, facts.price) == (area, price * 10_000)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(min_value=10, max_value=2000),
    st.sampled_from(("贷款{}万", "商贷{}万", "贷款额{}万", "需要贷款{}万")),
)
def test_a_loan_amount_is_not_a_price(amount: int, layout: str) -> None:
    facts = extract_facts(layout.format(amount) + "，30年")
    assert (facts.loan_amount, facts.price, facts.loan_years) == (amount * 10_000, None, 30)


VERBS = ("改成", "改为", "换成", "调整为", "变成")


def _others(facts: UserFacts, *fields: str) -> dict[str, object]:
    return {k: v for k, v in facts.model_dump().items() if k not in fields}


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=1, max_value=30), st.sampled_from(VERBS), st.booleans())
def test_a_years_correction_changes_only_the_years(years: int, verb: str, chinese: bool) -> None:
    number = cn2an.an2cn(str(years)) if chinese else str(years)
    after = merge_facts(BASE, extract_facts(f"年限{verb}{number}年"))
    assert after.loan_years == years and _others(after, "loan_years") == _others(BASE, "loan_years")


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=100, max_value=999), st.sampled_from(VERBS))
def test_a_rate_correction_changes_only_the_rate(hundredths: int, verb: str) -> None:
    rate = hundredths / 100
    after = merge_facts(BASE, extract_facts(f"利率{verb}{rate}%"))
    assert after.rate == rate and _others(after, "rate") == _others(BASE, "rate")


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=9), st.sampled_from(VERBS))
def test_a_down_payment_correction_replaces_the_split(tenths: int, verb: str) -> None:
    word = "两" if tenths == 2 else cn2an.an2cn(str(tenths))
    with_loan = merge_facts(BASE, extract_facts("贷款额300万"))
    after = merge_facts(with_loan, extract_facts(f"首付{verb}{word}成"))
    assert (after.down_payment_ratio, after.down_payment, after.loan_amount) == (tenths / 10, None, None)
    assert _others(after, "down_payment_ratio", "loan_amount") == _others(
        BASE, "down_payment_ratio", "loan_amount"
    )


def test_first_and_second_home_corrections() -> None:
    for text, first in (("不是二套，是首套", True), ("不是首套，是二套", False), ("首套改成二套", False)):
        assert merge_facts(BASE, extract_facts(text)).is_first_home is first, text


@settings(max_examples=80, deadline=None)
@given(
    prices,
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=5, max_value=30),
    st.integers(200, 600),
    areas,
)
def test_the_echo_reads_back_as_the_same_facts(
    price: int, tenths: int, years: int, bp: int, area: int
) -> None:
    rate = bp / 100
    facts = extract_facts(f"总价{price}万，首付{tenths}成，贷款{years}年，利率{rate}%，{area}㎡，首套")
    echo = facts_echo(facts)
    assert echo is not None and echo.startswith(f"按总价{price:,}万元、") and echo.endswith("首套计算：")
    again = extract_facts(echo)
    keys = ("price", "down_payment_ratio", "loan_years", "rate", "area", "is_first_home")
    assert {k: getattr(again, k) for k in keys} == {k: getattr(facts, k) for k in keys}
