"""Listings in a conversation over the real Shanghai listings: follow-ups through the app, through
``POST /ask`` (with ``history`` and with a ``session_id``) and ``zhiwen listings ask --session``;
and the count of matching listings (issue #30)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from zhiwen.appkit import AskRequest
from zhiwen.appkit.context import build_context
from zhiwen.apps.listings import app as listings_app
from zhiwen.apps.listings.cli import changes_line
from zhiwen.apps.listings.extract import hard_filters
from zhiwen.apps.listings.followup import understand
from zhiwen.apps.listings.service import ListingsService, reset_services
from zhiwen.config import Settings, reset_settings_cache
from zhiwen.store.filters import parse_filters

api_app = pytest.importorskip("zhiwen.api.app")
from fastapi.testclient import TestClient  # noqa: E402

TURNS = ["上海浦东800万以内的两房，不要低楼层", "要南北通透的", "预算放宽到700万", "换成普陀，不限楼层了"]
SEED_KEYS = {"answer", "retrieved_properties", "llm_used", "requirements", "relaxed", "cached", "kb"}


def _history(turns: list[str]) -> list[dict[str, str]]:
    messages = []
    for t in turns:
        messages += [{"role": "user", "content": t}, {"role": "assistant", "content": "……"}]
    return messages


def _metas(kb: Any, props: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(c.metadata) for c in kb.get_chunks([p["id"] for p in props])]


@pytest.fixture(scope="module")
def client(sh_kb: Any, sh_settings: Settings) -> Iterator[TestClient]:
    reset_services()
    with TestClient(api_app.create_app(sh_settings)) as c:
        yield c


def test_four_turns_through_the_app(sh_kb: Any, sh_settings: Settings) -> None:
    ctx = build_context(sh_settings, llm=None)
    answers = []
    for i, q in enumerate(TURNS):
        request = AskRequest(question=q, history=_history(TURNS[:i]), options={"max_results": 5})
        answers.append(listings_app.ask(request, ctx))
    first, second, third, last = answers
    assert first.standalone_question is None  # a first question is answered as asked
    assert second.standalone_question == "上海浦东新区 800万以内 2室 南北通透 不要低楼层"
    assert third.data["merged_requirements"]["price_range"] == "0-700万"
    assert last.standalone_question == "上海普陀区 700万以内 2室 南北通透"
    assert last.data["conversation"]["removed"] == ["exclude_floor"]
    props = last.data["retrieved_properties"]
    assert props and not last.data["relaxed"]
    for meta in _metas(sh_kb, props):
        assert meta["district"] == "普陀区" and meta["rooms"] == 2 and meta["north_south"] is True
        assert meta["price"] <= 700


def test_each_turn_alone_fails_where_the_conversation_succeeds(sh_kb: Any, sh_settings: Settings) -> None:
    """The issue's "before": 「换成普陀，不限楼层了」 on its own is not a two-room search in 普陀."""
    svc = ListingsService(sh_kb, settings=sh_settings, llm=None)
    alone = svc.ask(TURNS[-1], 5)
    assert alone.requirements.get("rooms") is None and alone.standalone_question is None
    merged = svc.ask(TURNS[-1], 5, history=_history(TURNS[:-1]))
    assert merged.requirements["rooms"] == "2室" and merged.requirements["north_south"] is True
    assert svc.cached(TURNS[-1], 5) is not None
    assert svc.cached(TURNS[-1], 5, history=_history(TURNS[:1])) is None  # another conversation


def test_fresh_start_and_another_city(sh_kb: Any, sh_settings: Settings) -> None:
    svc = ListingsService(sh_kb, settings=sh_settings, llm=None)
    out = svc.ask("重新找，徐汇三房", 3, history=_history(TURNS[:3]))
    assert out.conversation["fresh_start"] is True and out.standalone_question is None
    assert out.requirements.get("price_range") is None and out.requirements["rooms"] == "3室"
    out = svc.ask("那北京呢", 3, history=_history(TURNS[:2]))
    assert out.retrieved_properties == [] and "北京" in out.standalone_question


def test_post_ask_with_history_keeps_seed_000_fields(client: TestClient, sh_kb: Any) -> None:
    r = client.post("/ask", json={"question": TURNS[0], "max_results": 3})
    single = r.json()["data"]
    assert set(single) >= SEED_KEYS and single["standalone_question"] is None
    assert single["merged_requirements"] == single["requirements"]
    r = client.post("/ask", json={"question": TURNS[-1], "max_results": 3, "history": _history(TURNS[:-1])})
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert set(data) >= SEED_KEYS
    assert data["standalone_question"] == "上海普陀区 700万以内 2室 南北通透"
    assert data["merged_requirements"]["districts"] == ["普陀区"] and "understood" in data
    assert data["merged_constraints"] == {
        "city": "上海", "district": "普陀", "districts": ["普陀"], "max_price_wan": 700, "rooms": 2,
        "orientation": "南北通透",
    }  # fmt: skip
    assert {p["district"] for p in data["retrieved_properties"]} == {"普陀区"}


def test_post_ask_with_a_session_id(client: TestClient) -> None:
    last: dict[str, Any] = {}
    for q in TURNS:
        r = client.post("/ask", json={"question": q, "max_results": 3, "session_id": "listings-s1"})
        assert r.status_code == 200, r.text
        last = r.json()["data"]
    assert last["session_id"] == "listings-s1"
    assert last["standalone_question"] == "上海普陀区 700万以内 2室 南北通透"
    # another API key does not continue this session
    r = client.post(
        "/ask",
        json={"question": "要南北通透的", "session_id": "listings-s1"},
        headers={"Authorization": "Bearer another"},
    )
    assert r.json()["data"]["standalone_question"] is None


def test_post_ask_rejects_a_bad_history(client: TestClient) -> None:
    r = client.post("/ask", json={"question": "两房", "history": [{"role": "wizard", "content": "x"}]})
    assert r.status_code == 422


def test_total_matches_is_the_count_under_the_filters(
    sh_kb: Any, sh_settings: Settings, sh_corpus: Any
) -> None:
    svc = ListingsService(sh_kb, settings=sh_settings, llm=None)
    out = svc.ask("浦东两房", 3)
    d = understand("浦东两房", kb_cities={"上海"})
    condition = parse_filters(hard_filters(d.merged, tolerance=svc.listings.price_over_budget_tolerance))
    expected = sum(1 for doc in sh_corpus.documents if condition.matches(doc.metadata))
    assert out.total_matches == expected > 3
    assert f"共 {expected} 套，按匹配度为您展示前 3 套" in out.answer


def test_cli_session_across_runs(sh_kb: Any, sh_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_HOME", str(sh_settings.home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    reset_services()
    from zhiwen.cli.main import app as cli

    runner = CliRunner()
    for q in TURNS[:2]:
        r = runner.invoke(cli, ["listings", "ask", "--session", "cli-s1", "-n", "2", q])
        assert r.exit_code == 0, r.output
    assert "理解为：上海浦东新区 800万以内 2室 南北通透 不要低楼层" in r.output
    assert "本轮：新增 朝向" in r.output and "符合条件的房源" in r.output
    r = runner.invoke(cli, ["listings", "ask", "--session", "cli-s1", "--json", "预算放宽到700万"])
    assert json.loads(r.stdout)["merged_requirements"]["price_range"] == "0-700万"
    reset_services()


def test_changes_line() -> None:
    line = changes_line({"added": ["north_south", "special_requirements"], "replaced": ["price_range"]})
    assert line == "新增 朝向、特殊需求；替换 预算"


def test_a_long_session_keeps_its_first_question(client: TestClient) -> None:
    """The session keeps the last messages only; the first question (city, budget) still counts."""
    turns = [TURNS[0], *["要有电梯", "要南北通透的", "近地铁", "不要一楼"] * 3, "换成普陀"]
    data: dict[str, Any] = {}
    for q in turns:
        r = client.post("/ask", json={"question": q, "max_results": 2, "session_id": "listings-long"})
        assert r.status_code == 200, r.text
        data = r.json()["data"]
    assert data["conversation"]["turns"] == len(turns)
    c = data["merged_constraints"]
    assert c["max_price_wan"] == 800 and c["rooms"] == 2 and c["district"] == "普陀" and c["elevator"] is True
