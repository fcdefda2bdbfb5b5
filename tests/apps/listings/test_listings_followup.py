"""Constraint merging across turns (:mod:`zhiwen.apps.listings.followup`): add, replace, remove,
start over, over 3-4 turn conversations; and properties of the merge (hypothesis)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.apps.listings.extract import extract_rules
from zhiwen.apps.listings.followup import (
    SLOTS,
    Dialogue,
    merge,
    read_turn,
    requirements_from_dict,
    sentence,
    slot_set,
    understand,
)
from zhiwen.apps.listings.requirements import Requirements

KB_CITIES = {"上海", "广州", "深圳", "成都", "杭州"}


def _after(turns: list[str]) -> Dialogue:
    return understand(turns[-1], turns[:-1], kb_cities=KB_CITIES)


def _summary(turns: list[str]) -> dict[str, Any]:
    return _after(turns).merged.summary()


# -- the follow-ups -----------------------------------------------------------------------
def test_add_replace_remove_over_four_turns() -> None:
    turns = ["上海浦东800万以内的两房，不要低楼层", "要南北通透的", "预算放宽到700万", "换成普陀"]
    turns.append("不限楼层了")
    s = _summary(turns[:2])  # add
    assert s["north_south"] is True and s["price_range"] == "0-800万" and s["districts"] == ["浦东新区"]
    s = _summary(turns[:3])  # replace the budget
    assert s["price_range"] == "0-700万" and s["north_south"] is True and s["rooms"] == "2室"
    s = _summary(turns[:4])  # replace the district, the rest stays
    assert s["districts"] == ["普陀区"] and s["cities"] == ["上海"] and s["price_range"] == "0-700万"
    assert s["exclude_floor"] == ["低楼层"]
    s = _summary(turns)  # remove the floor constraint
    assert "exclude_floor" not in s and s["districts"] == ["普陀区"] and s["north_south"] is True
    assert _after(turns).standalone == "上海普陀区 700万以内 2室 南北通透"


@pytest.mark.parametrize(
    ("lift", "gone"),
    [
        ("不限楼层了", "exclude_floor"),
        ("楼层无所谓", "exclude_floor"),
        ("不要求朝向了", "north_south"),
        ("朝向无所谓了", "north_south"),
        ("预算不限", "price_range"),
        ("价格随便", "price_range"),
        ("电梯无所谓", "elevator"),
        ("户型不限", "rooms"),
        ("面积不限", "area"),
        ("装修都可以", "exclude_decoration"),
        ("不限区域", "districts"),
    ],
)
def test_remove_lifts_the_slot(lift: str, gone: str) -> None:
    first = "上海浦东800万以内的两房，90平以上，要有电梯，南北通透，不要低楼层，不要毛坯"
    assert gone in _summary([first])
    after = _summary([first, lift])
    assert gone not in after
    assert len(after) >= 4, after  # everything else stays


def test_a_lifting_clause_is_not_read_as_a_wish() -> None:
    """「电梯无所谓」 names 电梯 but asks for none; 「不要求朝向了」 is not a soft negation."""
    assert read_turn("电梯无所谓").req.elevator is None
    assert read_turn("不要求朝向了").req.negations == []


@pytest.mark.parametrize(
    ("turns", "key", "value"),
    [
        (["上海浦东两房，学区", "不要求学区了"], "special_requirements", None),
        (["上海浦东两房", "不要一楼"], "negations", ["一楼"]),
        (["上海浦东两房", "不要一楼", "一楼也行"], "negations", None),
        (["徐汇两房，不要毛坯", "毛坯也可以"], "exclude_decoration", None),
        (["徐汇两房", "不要塔楼", "塔楼也行"], "exclude_building_type", None),
        (["徐汇两房", "近地铁", "学区"], "special_requirements", ["地铁", "学区"]),
    ],
)
def test_wishes_accumulate_and_are_lifted_by_their_word(
    turns: list[str], key: str, value: list[str] | None
) -> None:
    assert _summary(turns).get(key) == value


def test_places_replace_add_and_exclude() -> None:
    assert _summary(["徐汇两房", "换成普陀"])["districts"] == ["普陀区"]
    assert _summary(["徐汇两房", "普陀也可以"])["districts"] == ["徐汇区", "普陀区"]
    s = _summary(["上海两房", "不要浦东"])
    assert s["exclude_locations"] == ["浦东新区"] and s["cities"] == ["上海"]
    s = _summary(["上海两房", "不要浦东", "浦东也可以"])
    assert "exclude_locations" not in s and "districts" not in s  # the exclusion is lifted, no more
    s = _summary(["浦东闵行两房", "不要闵行了"])
    assert s["districts"] == ["浦东新区"] and s["exclude_locations"] == ["闵行区"]


@pytest.mark.parametrize(
    ("turns", "fresh"),
    [
        (["上海浦东800万以内两房", "重新找，杭州西湖区300万"], True),
        (["上海浦东800万以内两房", "换个需求，徐汇一室"], True),
        (["上海浦东800万以内两房", "杭州西湖300万的三房"], True),  # another city, a search of its own
        (["上海浦东800万以内两房", "那杭州呢"], False),  # another city alone keeps the rest
        (["上海浦东800万以内两房", "徐汇500万的三房"], False),  # same city: replace slot by slot
    ],
)
def test_fresh_start(turns: list[str], fresh: bool) -> None:
    d = _after(turns)
    assert d.fresh is fresh
    s = d.merged.summary()
    if fresh:
        assert s.get("rooms") != "2室"
        assert d.standalone == turns[-1]  # a new search is answered as asked
    else:
        assert s["cities"] == ["上海"] or s["rooms"] == "2室"


def test_another_city_alone_keeps_the_rest_and_drops_the_places() -> None:
    s = _summary(["上海浦东800万以内两房", "那杭州呢"])
    assert s["cities"] == ["杭州"] and "districts" not in s
    assert s["price_range"] == "0-800万" and s["rooms"] == "2室"


def test_a_first_question_is_understood_exactly_as_before() -> None:
    q = "浦东三林800万以内的两室，不要毛坯，要有电梯"
    d = understand(q, kb_cities=KB_CITIES)
    assert d.merged == extract_rules(q, kb_cities=KB_CITIES)
    assert d.standalone == q and not d.follow_up and d.base is None


def test_changes_name_the_added_replaced_and_removed() -> None:
    turns = ["上海浦东800万以内的两房，不要低楼层", "要南北通透的，预算700万以内，不限楼层了"]
    d = _after(turns)
    assert "north_south" in d.changes["added"]
    assert d.changes["replaced"] == ["price_range"]
    assert d.changes["removed"] == ["exclude_floor"]
    assert d.to_dict()["turns"] == 2 and d.to_dict()["follow_up"] is True


def test_sentence_reads_back_to_the_same_request() -> None:
    d = _after(["上海浦东800万以内的两房，要有电梯", "要南北通透的", "换成普陀", "不要毛坯"])
    again = extract_rules(d.standalone, kb_cities=KB_CITIES)
    keys = ("cities", "districts", "price_range", "rooms", "elevator", "north_south", "exclude_decoration")
    for key in keys:
        assert again.summary().get(key) == d.merged.summary().get(key), key


def test_stored_requirements_read_back() -> None:
    req = _after(["浦东三林两房", "不要闵行"]).merged
    assert requirements_from_dict(req.to_dict()) == req


# -- properties -----------------------------------------------------------------------------------
FRAGMENTS = [
    "上海", "浦东", "徐汇", "普陀", "三林", "不要闵行", "800万以内", "500-700万", "预算放宽到700万",
    "单价6万以下", "两房", "三室两厅", "90平以上", "要有电梯", "不要毛坯", "精装", "高楼层",
    "不要低楼层", "2000年以后", "南北通透", "朝南", "板楼", "不要塔楼", "学区", "近地铁", "不要一楼",
    "远离高架", "别墅",
]  # fmt: skip
LIFTS = [
    "不限楼层了", "不要求朝向了", "预算不限", "电梯无所谓", "户型不限", "面积不限", "装修都可以",
    "不限区域", "楼型无所谓", "房龄不限",
]  # fmt: skip
questions = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map("，".join)
bases = st.lists(questions, min_size=0, max_size=3)


def _fold(texts: list[str]) -> Requirements | None:
    base: Requirements | None = None
    for t in texts:
        base = merge(base, read_turn(t, kb_cities=KB_CITIES))
    return base


@settings(max_examples=60, deadline=None)
@given(bases, questions)
def test_merging_a_turn_twice_changes_nothing_more(earlier: list[str], q: str) -> None:
    turn = read_turn(q, kb_cities=KB_CITIES)
    once = merge(_fold(earlier), turn)
    assert merge(copy.deepcopy(once), turn) == once


@settings(max_examples=60, deadline=None)
@given(questions)
def test_merging_a_turn_with_itself_changes_nothing(q: str) -> None:
    turn = read_turn(q, kb_cities=KB_CITIES)
    assert merge(None, turn) == turn.req
    assert merge(copy.deepcopy(turn.req), turn) == turn.req


@settings(max_examples=60, deadline=None)
@given(bases, st.sampled_from(LIFTS))
def test_removal_removes(earlier: list[str], lift: str) -> None:
    turn = read_turn(lift, kb_cities=KB_CITIES)
    assert len(turn.cleared) == 1, lift
    after = merge(_fold(earlier), turn)
    for slot in SLOTS:
        if slot.name in turn.cleared:
            assert not slot_set(after, slot), (lift, slot.name)


@settings(max_examples=60, deadline=None)
@given(bases, questions)
def test_slots_the_turn_does_not_name_stay(earlier: list[str], q: str) -> None:
    base = _fold(earlier)
    turn = read_turn(q, kb_cities=KB_CITIES)
    after = merge(base, turn)
    if base is None or turn.fresh or after.cities != base.cities:
        return  # a new search, or another city: the places go with it
    for slot in SLOTS:
        if not turn.sets(slot) and slot.name not in turn.cleared:
            assert all(getattr(after, f) == getattr(base, f) for f in slot.fields), slot.name


@settings(max_examples=60, deadline=None)
@given(bases, questions)
def test_the_turn_wins_in_every_slot_it_names(earlier: list[str], q: str) -> None:
    turn = read_turn(q, kb_cities=KB_CITIES)
    after = merge(_fold(earlier), turn)
    for slot in SLOTS:
        if turn.sets(slot) and not (slot.name == "place" and turn.widen):
            fields_now = {f: getattr(after, f) for f in slot.fields if f != "places"}
            assert fields_now == {f: getattr(turn.req, f) for f in slot.fields if f != "places"}


@settings(max_examples=40, deadline=None)
@given(bases, questions)
def test_the_sentence_is_never_empty_for_a_request(earlier: list[str], q: str) -> None:
    d = understand(q, earlier, kb_cities=KB_CITIES)
    if d.follow_up:
        assert d.standalone and d.standalone == (sentence(d.merged) or q)
