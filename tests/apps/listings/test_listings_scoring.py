"""The price score (hypothesis properties) and the structured re-score."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.apps.listings.extract import extract_rules
from zhiwen.apps.listings.scoring import Weights, negation_hits, price_score, score_listing, violations

prices = st.floats(min_value=0.0, max_value=50_000.0, allow_nan=False, allow_infinity=False)
bounds = st.floats(min_value=10.0, max_value=20_000.0, allow_nan=False, allow_infinity=False)
tols = st.floats(min_value=0.01, max_value=0.5)


@st.composite
def ranges(draw: Any) -> tuple[float, float]:
    lo = draw(bounds)
    width = draw(st.floats(min_value=1.0, max_value=5_000.0))
    return lo, lo + width


@given(prices, st.one_of(st.none(), bounds), st.one_of(st.none(), bounds), tols)
def test_price_score_bounded(p: float, lo: float | None, hi: float | None, tol: float) -> None:
    assert 0.0 <= price_score(p, lo, hi, tol) <= 1.0


@given(ranges(), prices, tols)
def test_price_score_peaks_at_midpoint(rng: tuple[float, float], p: float, tol: float) -> None:
    lo, hi = rng
    mid = (lo + hi) / 2
    assert price_score(mid, lo, hi, tol) == pytest.approx(1.0)
    assert price_score(p, lo, hi, tol) <= price_score(mid, lo, hi, tol) + 1e-12


@given(ranges(), prices, prices, tols)
def test_price_score_monotone_outside(rng: tuple[float, float], a: float, b: float, tol: float) -> None:
    lo, hi = rng
    x1, x2 = sorted((a, b))
    if x2 <= lo:  # below the range: closer (higher) is better
        assert price_score(x1, lo, hi, tol) <= price_score(x2, lo, hi, tol) + 1e-12
    if x1 >= hi:  # above the range: further (higher) is worse
        assert price_score(x1, lo, hi, tol) >= price_score(x2, lo, hi, tol) - 1e-12


@given(ranges(), st.floats(min_value=0.0, max_value=1.0), tols)
def test_price_score_monotone_inside_towards_midpoint(
    rng: tuple[float, float], frac: float, tol: float
) -> None:
    lo, hi = rng
    p = lo + frac * (hi - lo)
    mid = (lo + hi) / 2
    q = (p + mid) / 2  # halfway to the midpoint
    assert price_score(q, lo, hi, tol) >= price_score(p, lo, hi, tol) - 1e-12
    assert price_score(p, lo, hi, tol) >= 0.5 - 1e-12  # inside the budget is never worse than 0.5


@given(ranges(), tols, st.floats(min_value=0.0, max_value=10.0))
def test_small_credit_over_budget_none_beyond(rng: tuple[float, float], tol: float, k: float) -> None:
    lo, hi = rng
    over = hi * (1 + tol * (1 + k) + 1e-9)
    assert price_score(over, lo, hi, tol) == 0.0
    slightly = hi * (1 + tol / 2)
    assert 0.0 < price_score(slightly, lo, hi, tol) < price_score(hi, lo, hi, tol)


def test_price_score_one_sided() -> None:
    # "800万以内": the ideal is the upper half of the budget; cheaper is still fine (0.5)
    assert price_score(600, None, 800) == pytest.approx(1.0)
    assert price_score(100, None, 800) == pytest.approx(0.5)
    assert price_score(850, None, 800) > 0 and price_score(900, None, 800) == 0.0
    # "500万以上"
    assert price_score(625, 500, None) == pytest.approx(1.0)
    assert price_score(5000, 500, None) == pytest.approx(0.5)
    assert price_score(400, 500, None) == 0.0
    assert price_score(123, None, None) == 0.0


META: dict[str, Any] = {
    "city": "上海",
    "district": "浦东新区",
    "bankuai": "三林",
    "xiaoqu": "永泰花苑",
    "title": "近地铁11号线 精装两房 满五唯一 不临街",
    "price": 700.0,
    "area": 80.0,
    "rooms": 2,
    "halls": 1,
    "layout": "2室1厅",
    "elevator": True,
    "decoration": "精装",
    "floor_level": "中楼层",
    "total_floors": 11,
    "build_year": 2005,
    "facing_south": True,
    "north_south": False,
    "near_metro": True,
    "man_wu": True,
    "is_villa": False,
    "property_type": "普通住宅",
}


def test_score_listing_reasons_and_bounds() -> None:
    req = extract_rules("浦东三林800万以内的两房，要有电梯，近地铁", kb_cities={"上海"})
    s = score_listing(META, req, rrf_norm=1.0, weights=Weights())
    assert 0.0 <= s.score <= 1.0
    assert "价格符合预算 0-800万" in s.reasons
    assert any(r.startswith("位置匹配: 浦东新区·三林") for r in s.reasons)
    assert any("满足特殊需求" in r and "地铁" in r and "电梯" in r for r in s.reasons)
    assert any(r.startswith("户型符合") for r in s.reasons)
    assert violations(META, req) == []


def test_negation_penalty_and_not_prefix() -> None:
    req = extract_rules("不要临街的，远离高架", kb_cities={"上海"})
    assert negation_hits(req, META) == []  # "不临街" is not 临街
    bad = {**META, "title": "临街两房 靠近高架"}
    assert set(negation_hits(req, bad)) == {"临街", "高架"}
    good = score_listing(META, req, rrf_norm=0.5)
    worse = score_listing(bad, req, rrf_norm=0.5)
    assert worse.score == pytest.approx(good.score * (1 - Weights().negation_penalty))
    assert any("排除条件" in r for r in worse.reasons)


def test_top_floor_negation_uses_floor_fields() -> None:
    # 高楼层 may be the top floor whatever the height; the penalty, not the hit, scales with it
    req = extract_rules("不要顶楼")
    assert negation_hits(req, {**META, "floor_level": "高楼层", "total_floors": 6}) == ["顶楼"]
    assert negation_hits(req, {**META, "floor_level": "高楼层", "total_floors": 30}) == ["顶楼"]
    assert negation_hits(req, {**META, "floor_level": "中楼层", "total_floors": 30}) == []
    six = score_listing({**META, "floor_level": "高楼层", "total_floors": 6}, req, rrf_norm=0.5)
    thirty = score_listing({**META, "floor_level": "高楼层", "total_floors": 30}, req, rrf_norm=0.5)
    assert thirty.score > six.score


def test_unit_price_and_building_type_reasons() -> None:
    req = extract_rules("浦东三林两房，单价8万以下，板楼", kb_cities={"上海"})
    meta = {**META, "unit_price": 75000, "building_type": "板楼"}
    s = score_listing(meta, req, rrf_norm=0.5)
    assert "单价符合要求 8万元/㎡以下（75000元/㎡）" in s.reasons
    assert "楼型符合: 板楼" in s.reasons
    assert s.components["price"] > 0 and s.components["type"] == pytest.approx(1.0)
    over = score_listing({**meta, "unit_price": 95000, "building_type": "塔楼"}, req, rrf_norm=0.5)
    assert "单价超出要求 8万元/㎡以下（95000元/㎡）" in over.reasons
    assert not any(r.startswith("楼型符合") for r in over.reasons)
    assert over.score < s.score
    unknown = score_listing({**meta, "unit_price": None}, req, rrf_norm=0.5)
    assert "单价未知，无法确认是否8万元/㎡以下" in unknown.reasons


def test_weights_defaults_come_from_the_settings_class(monkeypatch: pytest.MonkeyPatch) -> None:
    from zhiwen.apps.listings.settings import listings_settings
    from zhiwen.config import Settings

    monkeypatch.setenv("ZHIWEN_LISTINGS__WEIGHT_PRICE", "0.9")
    assert Weights().price == pytest.approx(0.25)  # the code default, not the environment
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert Weights.from_settings(listings_settings(settings)).price == pytest.approx(0.9)


def test_relaxed_reason_and_price_out_of_budget() -> None:
    req = extract_rules("600万以内的两房")
    s = score_listing({**META, "price": 640.0}, req, rrf_norm=0.5, relaxed=["价格条件(放宽10%)"])
    assert "已放宽: 价格条件(放宽10%)" in s.reasons
    assert any(r.startswith("价格接近预算") for r in s.reasons)
    assert violations({**META, "price": 640.0}, req) == ["price_max"]


@given(st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=20_000))
def test_score_always_in_unit_interval(rrf_norm: float, price: float) -> None:
    req = extract_rules("浦东800-1000万的三房，100平以上，不要毛坯，远离高架，近地铁学区", kb_cities={"上海"})
    s = score_listing({**META, "price": price, "title": "高架旁 学区"}, req, rrf_norm=rrf_norm)
    assert 0.0 <= s.score <= 1.0
