"""Slot follow-ups (「那2022年呢」「历史类的呢」): the previous question with one part changed,
through the offline condenser (over a KB of tables: tests/tables/test_table_followups.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.conversation.offline import OfflineCondenser
from zhiwen.conversation.slots import slot_followup
from zhiwen.conversation.vocabulary import Vocabulary

FIRST = "2021年四川省物理类金融学类最低分是多少？"


@pytest.mark.parametrize(
    ("followup", "standalone"),
    [
        ("那2022年呢", "2022年四川省物理类金融学类最低分是多少？"),
        ("二〇二三年的呢？", "2023年四川省物理类金融学类最低分是多少？"),
        ("历史类的呢", "2021年四川省历史类金融学类最低分是多少？"),
        ("那法学类呢", "2021年四川省物理类法学类最低分是多少？"),
        ("换成河南省呢", "2021年河南省物理类金融学类最低分是多少？"),
        ("那2022年甘肃省呢", "2022年甘肃省物理类金融学类最低分是多少？"),
    ],
)
def test_a_followup_changes_one_slot(followup: str, standalone: str) -> None:
    found = slot_followup(FIRST, followup)
    assert found is not None and found[0] == standalone


@pytest.mark.parametrize(
    "followup", ["那西班牙呢", "物理类的呢", "那2021年呢", "它在哪个校区？", "学费是多少"]
)
def test_what_is_no_slot_followup(followup: str) -> None:
    assert slot_followup(FIRST, followup) is None


@given(
    st.integers(1990, 2039).filter(lambda y: y != 2021),
    st.sampled_from(["那{}年呢", "{}年的呢？", "换成{}年"]),
)
def test_a_year_replaces_the_year_and_nothing_else(year: int, form: str) -> None:
    found = slot_followup(FIRST, form.format(year))
    assert found == (FIRST.replace("2021", str(year)), "2021年")


@given(st.text(max_size=30))
def test_any_followup_is_read_without_error(followup: str) -> None:
    found = slot_followup(FIRST, followup)
    assert found is None or found[0] != FIRST


def _turns(question: str, answer: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def test_the_condenser_chains_slot_followups_and_leaves_named_entities_to_substitution() -> None:
    condenser = OfflineCondenser()
    history = _turns(FIRST, "…是 **612**")
    second = condenser.condense(history, "那2022年呢")
    assert second.method == "slot" and second.question == "2022年四川省物理类金融学类最低分是多少？"
    third = condenser.condense([*history, *_turns("那2022年呢", "…")], "历史类的呢")
    assert third.question == "2022年四川省历史类金融学类最低分是多少？"
    visa = OfflineCondenser(Vocabulary({"泰国": "country", "西班牙": "country"}))
    assert visa.condense(_turns("中国公民去泰国需要签证吗？", "免签"), "那西班牙呢").method == "substitution"
