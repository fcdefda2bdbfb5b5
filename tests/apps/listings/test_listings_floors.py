"""Floors (:mod:`zhiwen.apps.listings.floors`): bands are hard, exact floors (一楼 / 顶楼) soft.

The data knows only 低/中/高楼层 and the total floors, so "不要一楼" / "不要顶楼" must not
exclude whole bands; listings in the risky band rank lower and say what could not be checked.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from req_check import run_case

from zhiwen.apps.listings.describe import describe_requirements
from zhiwen.apps.listings.extract import extract_rules, hard_filters
from zhiwen.apps.listings.floors import check_floor
from zhiwen.apps.listings.scoring import Weights, negation_hits, score_listing
from zhiwen.apps.listings.vocabulary import AVOIDABLE_FLOORS

CASES: list[tuple[str, dict[str, Any]]] = [
    # -- band words: hard ------------------------------------------------------------------
    ("不要低楼层", {"floor_exclude": ["低楼层"], "negations": []}),
    ("虹口区不要低楼层的两房", {"floor_exclude": ["低楼层"], "rooms": (2, 2), "districts": ["虹口区"]}),
    ("中间楼层", {"floor_in": ["中楼层"]}),
    ("不要高楼层，要朝南", {"floor_exclude": ["高楼层"], "facing_south": True}),
    ("要中高楼层的房子", {"floor_in": ["中楼层", "高楼层"]}),
    ("中低楼层就好", {"floor_in": ["低楼层", "中楼层"]}),
    ("楼层不要太低，杨浦三房", {"floor_exclude": ["低楼层"], "districts": ["杨浦区"], "rooms": (3, 3)}),
    ("楼层别太高", {"floor_exclude": ["高楼层"]}),
    ("高层住宅的两房", {"floor_in": [], "rooms": (2, 2)}),  # a high-rise, not a band
    # -- defect 4: exact floors are soft negations, no band is excluded -----------------------
    ("不要一楼", {"floor_exclude": [], "negations+": ["一楼"]}),
    ("不要顶楼", {"floor_exclude": [], "negations+": ["顶楼"]}),
    ("不要底楼", {"floor_exclude": [], "negations+": ["一楼"]}),
    ("不要一层", {"floor_exclude": [], "negations+": ["一楼"]}),
    ("不要顶层", {"floor_exclude": [], "negations+": ["顶楼"]}),
    ("不要最高层", {"floor_exclude": [], "floor_in": [], "negations+": ["顶楼"]}),
    ("一楼二楼都不要", {"floor_in": [], "negations+": ["一楼"]}),
    ("顶楼不考虑，其他都行", {"floor_in": [], "negations+": ["顶楼"]}),
    ("一楼不要太吵就行", {"negations-": ["一楼"]}),
    ("不要一二楼", {"floor_exclude": [], "negations+": ["一楼"]}),
    ("不要一楼也不要顶楼", {"floor_exclude": [], "negations+": ["一楼", "顶楼"]}),
    ("家里有老人，不要顶楼，杨浦两房", {"floor_exclude": [], "negations+": ["顶楼"], "rooms": (2, 2)}),
    ("高楼层，但不要顶楼", {"negations+": ["顶楼"], "floor_in": ["高楼层"], "floor_exclude": []}),
    (
        "嘉定区的房子，至少两个卧室，不要一楼",
        {"districts": ["嘉定区"], "rooms": (2, None), "floor_exclude": [], "negations+": ["一楼"]},
    ),
    ("不要低楼层，也不要顶楼", {"floor_exclude": ["低楼层"], "negations+": ["顶楼"]}),
    # a wanted exact floor is read as its band (a superset of what was asked)
    ("老人住，最好一楼", {"floor_in": ["低楼层"], "negations-": ["一楼"]}),
    ("想要底楼带花园的", {"floor_in": ["低楼层"]}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_floors(question: str, expected: dict[str, Any]) -> None:
    run_case(question, expected)


@pytest.mark.parametrize("question", ["不要一楼", "不要顶楼", "宝山300万以内，不要一楼", "不要底层和顶层"])
def test_exact_floors_never_exclude_a_band(question: str) -> None:
    f = hard_filters(extract_rules(question, kb_cities={"上海"}))
    assert "floor_level" not in f


def test_bands_stay_hard_exclusions() -> None:
    assert hard_filters(extract_rules("不要低楼层"))["floor_level"] == {"nin": ["低楼层"]}
    assert hard_filters(extract_rules("不要高楼层，不要一楼"))["floor_level"] == {"nin": ["高楼层"]}


# (avoided floor, floor_level, total_floors, title) → status, likelihood
CHECKS: list[tuple[str, str | None, int | None, str, str, float]] = [
    ("顶楼", "高楼层", 6, "", "possible", 0.5),  # 高楼层 of 6 floors = floor 5 or 6
    ("顶楼", "高楼层", 30, "", "possible", 0.1),  # floors 21–30: one in ten
    ("顶楼", "中楼层", 18, "", "clear", 0.0),
    ("顶楼", "低楼层", 6, "", "clear", 0.0),
    ("顶楼", "高楼层", 3, "", "certain", 1.0),  # a band one floor high
    ("顶楼", "中楼层", 1, "", "certain", 1.0),  # 共1层: both the first and the top floor
    ("顶楼", "中楼层", 18, "顶楼复式 送露台", "certain", 1.0),  # the title says so
    ("顶楼", "高楼层", 6, "非顶楼 采光好", "possible", 0.5),  # "非顶楼" is not a claim of 顶楼
    ("顶楼", None, 6, "", "unknown", 0.5),
    ("顶楼", "上叠", 4, "", "possible", 0.5),
    ("顶楼", "下叠", 4, "", "clear", 0.0),
    ("一楼", "低楼层", 6, "", "possible", 0.5),
    ("一楼", "低楼层", 33, "", "possible", 1 / 11),
    ("一楼", "低楼层", 2, "", "certain", 1.0),
    ("一楼", "高楼层", 6, "", "clear", 0.0),
    ("一楼", None, 1, "", "certain", 1.0),
    ("一楼", "中楼层", 6, "一楼带花园", "certain", 1.0),
]


@pytest.mark.parametrize(("avoid", "level", "total", "title", "status", "likelihood"), CHECKS)
def test_check_floor(
    avoid: str, level: str | None, total: int | None, title: str, status: str, likelihood: float
) -> None:
    check = check_floor(avoid, {"floor_level": level, "total_floors": total, "title": title})
    assert check.status == status
    assert check.likelihood == pytest.approx(likelihood)
    assert check.risky is (status != "clear")


def test_check_floor_reasons_say_what_could_not_be_checked() -> None:
    possible = check_floor("顶楼", {"floor_level": "高楼层", "total_floors": 6})
    assert possible.reason == "数据仅有楼层区间（高楼层，共6层），无法确认是否顶楼"
    clear = check_floor("一楼", {"floor_level": "中楼层", "total_floors": 18})
    assert clear.reason == "楼层符合: 中楼层，共18层，不是一楼"
    assert "共1层" in check_floor("一楼", {"floor_level": None, "total_floors": 1}).reason
    assert set(AVOIDABLE_FLOORS) == {"一楼", "顶楼"}


META: dict[str, Any] = {
    "city": "上海",
    "district": "杨浦区",
    "bankuai": "五角场",
    "title": "精装两房 满五唯一",
    "price": 500.0,
    "rooms": 2,
    "halls": 1,
    "floor_level": "中楼层",
    "total_floors": 18,
}


def test_soft_floor_ranking_and_match_reasons() -> None:
    req = extract_rules("杨浦两房，不要顶楼", kb_cities={"上海"})
    clear = score_listing(META, req, rrf_norm=0.8)
    walkup = score_listing({**META, "floor_level": "高楼层", "total_floors": 6}, req, rrf_norm=0.8)
    tower = score_listing({**META, "floor_level": "高楼层", "total_floors": 30}, req, rrf_norm=0.8)
    assert clear.negations == [] and "楼层符合: 中楼层，共18层，不是顶楼" in clear.reasons
    # in the risky band: a hit (ranked after clean listings), penalised by the likelihood only
    assert walkup.negations == ["顶楼"] and tower.negations == ["顶楼"]
    penalty = Weights().negation_penalty
    assert walkup.score == pytest.approx(clear.score * (1 - penalty * 0.5))
    assert tower.score == pytest.approx(clear.score * (1 - penalty * 0.1))
    assert clear.score > tower.score > walkup.score
    assert "数据仅有楼层区间（高楼层，共6层），无法确认是否顶楼" in walkup.reasons
    assert not any("可能不符合排除条件" in r for r in walkup.reasons)


def test_negation_hits_for_floors() -> None:
    req = extract_rules("不要一楼")
    assert negation_hits(req, {**META, "floor_level": "低楼层", "total_floors": 6}) == ["一楼"]
    assert negation_hits(req, {**META, "floor_level": "中楼层", "total_floors": 6}) == []


def test_describe_is_honest_about_exact_floors() -> None:
    text = describe_requirements(extract_rules("不要一楼，不要顶楼"))
    assert "一楼" in text and "顶楼" in text and "无法精确确认" in text
    assert "无法精确确认" not in describe_requirements(extract_rules("不要低楼层"))


@given(
    st.sampled_from(["一楼", "顶楼"]),
    st.sampled_from(["低楼层", "中楼层", "高楼层", "上叠", "下叠", None]),
    st.one_of(st.none(), st.integers(min_value=1, max_value=60)),
)
def test_check_floor_is_consistent(avoid: str, level: str | None, total: int | None) -> None:
    check = check_floor(avoid, {"floor_level": level, "total_floors": total, "title": ""})
    assert 0.0 <= check.likelihood <= 1.0
    assert (check.status == "clear") is (check.likelihood == 0.0)
    assert (check.status == "certain") is (check.likelihood == 1.0)
    if level in ("低楼层", "中楼层", "高楼层") and (total or 0) > 1 and level != AVOIDABLE_FLOORS[avoid]:
        assert check.status == "clear"  # another band is never the avoided floor
    assert check.reason
