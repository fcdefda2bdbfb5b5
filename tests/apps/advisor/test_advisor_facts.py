"""The facts extractor: Chinese amounts in every common spelling, and follow-up questions."""

from __future__ import annotations

from typing import Any

import cn2an
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.apps.advisor.facts import extract_facts, facts_from_messages, merge_facts

CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "总价300万，首付三成，贷款30年，利率3.1%，等额本息月供多少？我月收入2万，压力大吗？",
        {
            "price": 3e6,
            "down_payment_ratio": 0.3,
            "loan_years": 30,
            "rate": 3.1,
            "method": "equal_payment",
            "monthly_income": 20_000,
        },
    ),
    ("三百万的房子首付90万", {"price": 3e6, "down_payment": 9e5}),
    ("预算两百万，月薪两万五", {"budget": 2e6, "monthly_income": 25_000}),
    ("2万元月收入也行吧，总价300", {"price": 3e6}),
    ("首付30%，二十五年贷款", {"down_payment_ratio": 0.3, "loan_years": 25}),
    ("首付百分之二十，贷款二十五年", {"down_payment_ratio": 0.2, "loan_years": 25}),
    (
        "面积89平，满五唯一，首套",
        {"area": 89.0, "is_only_home": True, "house_age_years": 5, "is_first_home": True},
    ),
    (
        "二套，140平米，房龄1年，上海",
        {"area": 140.0, "is_first_home": False, "house_age_years": 1, "city": "上海"},
    ),
    (
        "年收入36万，想在浦东买两房",
        {"monthly_income": 30_000, "rooms": 2, "city": "上海", "districts": ["浦东"]},
    ),
    ("月收入2万一个月", {"monthly_income": 20_000}),
    ("3,000,000元的房子，等额本金", {"price": 3e6, "method": "equal_principal"}),
    ("利率三点一", {"rate": 3.1}),
    ("月供8000，月收入1.5万", {"monthly_payment": 8000, "monthly_income": 15_000}),
    ("莘庄的两居", {"city": "上海", "bankuai": ["莘庄"], "rooms": 2}),
    ("杭州西湖区和滨江哪个贵", {"city": "杭州", "districts": ["西湖区", "滨江"]}),
    ("用公积金贷款买首套", {"provident_fund": True, "is_first_home": True}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_extract_facts(text: str, expected: dict[str, Any]) -> None:
    known = extract_facts(text).known()
    for key, value in expected.items():
        assert known.get(key) == (pytest.approx(value) if isinstance(value, float) else value), (key, known)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=9999))
def test_chinese_and_digit_amounts_agree(wan: int) -> None:
    """总价N万 reads the same whether N is written in digits or Chinese numerals."""
    chinese = cn2an.an2cn(str(wan))
    assert extract_facts(f"总价{wan}万").price == extract_facts(f"总价{chinese}万").price == wan * 10_000


def test_follow_up_reuses_earlier_facts() -> None:
    first = extract_facts("总价300万，首付三成，贷款30年，利率3.1%，月收入2万")
    after = merge_facts(first, extract_facts("那如果首付150万呢？"))
    assert after.down_payment == 1_500_000 and after.down_payment_ratio is None
    assert after.effective_ratio() == 0.5
    assert (after.price, after.loan_years, after.rate, after.monthly_income) == (3e6, 30, 3.1, 20_000)
    back = merge_facts(after, extract_facts("还是首付三成吧"))
    assert back.down_payment is None and back.down_payment_ratio == 0.3


def test_facts_from_messages_reads_user_turns_only() -> None:
    facts = facts_from_messages(
        [
            {"role": "user", "content": "预算200万"},
            {"role": "assistant", "content": "总价500万的房子月供……"},
            {"role": "user", "content": "月收入1万"},
        ]
    )
    assert facts.budget == 2e6 and facts.price is None and facts.monthly_income == 10_000
    assert facts.target_price == 2e6
