"""The whole pipeline over the mini KBs: seed cases, dates, fallbacks, streaming, the fake LLM."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from policy_fixtures import make_settings
from prometheus_client import REGISTRY

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.appkit import AskRequest
from zhiwen.appkit.app import AppContext
from zhiwen.appkit.context import build_context
from zhiwen.apps.policy import app
from zhiwen.apps.policy.service import ask_policy, stream_policy
from zhiwen.apps.policy.settings import PolicySettings
from zhiwen.config import Settings
from zhiwen.errors import InvalidParameter
from zhiwen.llm import clear_llm_cache

SEED_1 = "关于塞尔维亚的机组人员入出境，下列说法正确的有"
SEED_2 = "中国公民去泰国需要签证吗？"
SEED_3 = "边检证件过期后流程是什么？"


def fallbacks(reason: str) -> float:
    return REGISTRY.get_sample_value("zhiwen_policy_fallbacks_total", {"reason": reason}) or 0.0


# -- seed cases ------------------------------------------------------------------------------
def test_seed_case_1_crew_of_serbia(mini_ctx: AppContext) -> None:
    r = ask_policy(SEED_1, mini_ctx)
    d = r.data()
    assert (d["intent"], d["strategy"], d["fallback_reason"]) == ("airline_visa_free", "dual", None)
    assert "Serbia" in d["rewritten_question"] and "crew" in d["rewritten_question"]
    ids = [s["id"] for s in d["sources"]]
    assert "country/RS#0" in ids  # the Serbia row of the visa-free table
    assert "外国人入境出境管理条例#第六条" in ids  # C visa for aircrew
    kbs = {s["kb"] for s in d["sources"]}
    assert {"policy_visa", "policy_airline", "policy_general"} <= kbs
    assert r.answer.startswith("（未配置大模型") and "塞尔维亚（Serbia）：免签停留 30 天" in r.answer
    assert d["llm_used"] is False and "[" in r.answer


def test_seed_case_2_thailand(mini_ctx: AppContext) -> None:
    d = ask_policy(SEED_2, mini_ctx).data()
    assert (d["intent"], d["strategy"]) == ("visa_free", "dual")
    assert d["sources"][0]["id"] == "country/TH#0"
    assert "泰国（Thailand）" in d["answer"] and "互免签证" in d["answer"]
    assert "Thailand" in d["rewritten_question"]


def test_seed_case_3_single_without_rewrite(mini_ctx: AppContext) -> None:
    d = ask_policy(SEED_3, mini_ctx).data()
    assert (d["intent"], d["strategy"], d["rewritten_question"], d["fallback_reason"]) == (
        "other",
        "single",
        None,
        None,
    )
    assert {s["kb"] for s in d["sources"]} == {"policy_general"}
    assert any("边防检查条例" in s["id"] for s in d["sources"])


@pytest.mark.parametrize("question", ["契税的税率是多少", "住房公积金可以提取吗", SEED_3])
def test_general_questions_are_never_rewritten(mini_ctx: AppContext, question: str) -> None:
    d = ask_policy(question, mini_ctx).data()
    assert d["intent"] == "other" and d["rewritten_question"] is None and d["strategy"] == "single"


# -- dates, unknown countries, sizes ----------------------------------------------------------
def test_expired_policy_is_flagged(mini_ctx: AppContext) -> None:
    q = "法国公民免签入境中国可以停留多久？"
    before = ask_policy(q, mini_ctx, as_of="2025-06-01")
    assert "2025-12-31" in before.answer and "⚠️ 注意" not in before.answer
    after = ask_policy(q, mini_ctx, as_of=date(2026, 1, 2))
    assert "⚠️ 注意：法国（France）" in after.answer and "现行规定" in after.answer
    assert after.answer.index("【免签政策表】") < after.answer.index("⚠️")
    today = ask_policy(q, mini_ctx)  # default: today
    assert today.data()["as_of"] == date.today().isoformat()


def test_country_without_row_gets_an_honest_answer(mini_ctx: AppContext) -> None:
    d = ask_policy("印度公民可以免签来中国吗？", mini_ctx).data()
    assert d["intent"] == "visa_free"
    assert "免签政策表中未找到印度（India）的免签政策" in d["answer"]
    assert not any(s["id"] == "country/IN#0" for s in d["sources"])


def test_top_n_and_halves(mini_ctx: AppContext) -> None:
    r = ask_policy(SEED_1, mini_ctx, top_n=4)
    out = r.prepared.retrieval
    assert len(out.hits) <= 4 and len(out.specialist) >= 2
    assert r.params["top_n"] == 4
    for bad in (0, 1001, "x", True):
        with pytest.raises(InvalidParameter):
            ask_policy(SEED_1, mini_ctx, top_n=bad)
    with pytest.raises(InvalidParameter):
        ask_policy(SEED_1, mini_ctx, as_of="2025-13-40")
    with pytest.raises(InvalidParameter):
        ask_policy("   ", mini_ctx)


def test_settings_rerank_top_n(mini_ctx: AppContext) -> None:
    r = ask_policy(SEED_1, mini_ctx, settings=PolicySettings(rerank_top_n=6))
    assert r.prepared.top_n == 6 and len(r.prepared.retrieval.hits) <= 6


# -- fallbacks without an LLM -----------------------------------------------------------------
def test_classifier_switched_off(mini_ctx: AppContext) -> None:
    before = fallbacks("classifier_disabled")
    d = ask_policy(SEED_2, mini_ctx, settings=PolicySettings(enable_intent_classifier=False)).data()
    assert (d["strategy"], d["fallback_reason"], d["rewritten_question"]) == (
        "single",
        "classifier_disabled",
        None,
    )
    assert "policy_visa" in {s["kb"] for s in d["sources"]}  # nothing says which KBs: all are searched
    assert fallbacks("classifier_disabled") == before + 1


def test_missing_kb_falls_back(mini_ctx: AppContext) -> None:
    before = fallbacks("kb_missing")
    d = ask_policy(SEED_1, mini_ctx, settings=PolicySettings(airline_kb="no_such_kb")).data()
    assert (d["strategy"], d["fallback_reason"]) == ("single", "kb_missing")
    assert "no_such_kb" in d["kb_errors"] and d["sources"]
    assert fallbacks("kb_missing") == before + 1


def test_failing_kb_falls_back(mini_ctx: AppContext, monkeypatch: pytest.MonkeyPatch) -> None:
    airline = mini_ctx.open_kb("policy_airline")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(airline, "search", broken)
    monkeypatch.setattr(airline, "search_detailed", broken)
    d = ask_policy(SEED_1, mini_ctx).data()
    assert (d["strategy"], d["fallback_reason"]) == ("single", "kb_error")
    assert "policy_airline" in d["kb_errors"] and {s["kb"] for s in d["sources"]} <= {
        "policy_visa",
        "policy_general",
    }


def test_app_object(mini_ctx: AppContext) -> None:
    assert (app.name, app.title) == ("policy", "政策问答")
    answer = app.ask(AskRequest(question=SEED_2, options={"top_n": 6, "as_of": "2026-01-01"}), mini_ctx)
    assert answer.data["intent"] == "visa_free" and answer.citations[0].id == "country/TH#0"
    assert answer.extractive_reason == "no_llm" and answer.params["top_n"] == 6
    events = list(app.stream(AskRequest(question=SEED_3), mini_ctx))
    assert [e.type for e in events][:2] == ["meta", "sources"] and events[-1].type == "done"


def test_stream_events(mini_ctx: AppContext) -> None:
    events = list(stream_policy("法国公民免签入境中国可以停留多久？", mini_ctx, as_of="2026-02-01"))
    types = [e.type for e in events]
    assert types[0] == "meta" and types[1] == "sources" and types[-1] == "done" and "delta" in types
    text = "".join(e.data["text"] for e in events if e.type == "delta")
    assert "⚠️" in text
    done = events[-1].data
    assert done["intent"] == "visa_free" and done["strategy"] == "dual" and "sources" not in done


# -- with a fake OpenAI-compatible LLM --------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server
    clear_llm_cache()


def llm_ctx(mini_settings: Settings, fake: FakeOpenAI) -> AppContext:
    llm = {"base_url": fake.base_url, "model": "fake", "max_retries": 0, "timeout_s": 5.0}
    settings = make_settings(mini_settings.home, llm=llm)
    return build_context(settings)


FAST = PolicySettings(intent_classifier_timeout=0.5, rewrite_timeout=0.5)


def test_llm_happy_path(mini_settings: Settings, fake: FakeOpenAI) -> None:
    fake.script(
        '{"label": "airline_visa_free", "confidence": 0.9}',
        '{"rewritten": "中国与塞尔维亚 Serbia 之间是否有针对机组人员 crew 的免签协议？"}',
        "根据免签政策表，塞尔维亚与中国互免签证 [1]。机组人员可持C字签证 [2]。",
    )
    r = ask_policy(SEED_1, llm_ctx(mini_settings, fake), settings=FAST)
    d = r.data()
    assert (d["intent"], d["strategy"], d["fallback_reason"], d["llm_used"]) == (
        "airline_visa_free",
        "dual",
        None,
        True,
    )
    assert d["classification"]["method"] == "llm"
    assert d["rewritten_question"].startswith("中国与塞尔维亚 Serbia")
    assert r.answer.startswith("根据免签政策表")
    assert fake.calls == 3
    prompt = fake.requests[2]["messages"][1]["content"]
    assert "塞尔维亚（Serbia）：免签停留 30 天" in prompt


def test_llm_answer_gets_the_missing_date_note(mini_settings: Settings, fake: FakeOpenAI) -> None:
    fake.script(
        '{"label": "visa_free"}',
        '{"rewritten": "法国 France 免签 visa-free 停留天数"}',
        "法国公民可免签停留30天 [1]。",
    )
    r = ask_policy(
        "法国公民免签入境中国可以停留多久？", llm_ctx(mini_settings, fake), settings=FAST, as_of="2026-03-01"
    )
    assert (
        r.llm_used and r.answer.startswith("法国公民可免签停留30天") and "⚠️ 注意：法国（France）" in r.answer
    )


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("hang", "classifier_timeout"), ("bad_json", "classifier_bad_output"), ("500", "classifier_error")],
)
def test_classifier_faults_fall_back_visibly(
    mini_settings: Settings, fake: FakeOpenAI, fault: str, reason: str
) -> None:
    fake.script(Reply.fault(fault, delay_s=5.0), "答案 [1]")
    before = fallbacks(reason)
    d = ask_policy(SEED_1, llm_ctx(mini_settings, fake), settings=FAST).data()
    assert (d["strategy"], d["fallback_reason"], d["rewritten_question"]) == ("single", reason, None)
    assert d["intent"] == "airline_visa_free"  # the offline classifier's answer
    assert d["sources"] and d["llm_used"] is True and fallbacks(reason) == before + 1
    assert d["timings_ms"]["classify"] < 4000  # the 0.5 s timeout, not the 5 s fault


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("hang", "rewrite_timeout"), ("bad_json", "rewrite_bad_output"), ("503", "rewrite_error")],
)
def test_rewrite_faults_fall_back_visibly(
    mini_settings: Settings, fake: FakeOpenAI, fault: str, reason: str
) -> None:
    fake.script('{"label": "visa_free"}', Reply.fault(fault, delay_s=5.0), Reply.fault("500"))
    d = ask_policy(SEED_2, llm_ctx(mini_settings, fake), settings=FAST).data()
    assert (d["intent"], d["strategy"], d["fallback_reason"]) == ("visa_free", "single", reason)
    # the answer call failed too: extractive, still with the table row and citations
    assert d["llm_used"] is False and d["extractive_reason"] and "泰国（Thailand）" in d["answer"]


def test_llm_other_is_not_rewritten(mini_settings: Settings, fake: FakeOpenAI) -> None:
    fake.script('{"label": "other"}', "答案 [1]")
    d = ask_policy(SEED_3, llm_ctx(mini_settings, fake), settings=FAST).data()
    assert (d["intent"], d["strategy"], d["rewritten_question"]) == ("other", "single", None)
    assert fake.calls == 2  # classify + answer, no rewrite call


def test_stream_with_llm(mini_settings: Settings, fake: FakeOpenAI) -> None:
    fake.script('{"label": "visa_free"}', '{"rewritten": "泰国 Thailand 免签"}', "泰国与中国互免签证 [1]。")
    events = list(stream_policy(SEED_2, llm_ctx(mini_settings, fake), settings=FAST))
    text = "".join(e.data["text"] for e in events if e.type == "delta")
    assert text.startswith("泰国与中国互免签证") and events[-1].data["llm_used"] is True


def test_setup_report(tmp_path: Path, mini_data: Path) -> None:
    ctx = build_context(make_settings(tmp_path / "home"), llm=None)
    report = app.setup(mini_data, ctx, progress=False)
    assert set(report.kbs) == {"policy_visa", "policy_airline", "policy_general"}
    assert all(n > 0 for n in report.kbs.values()) and any("6 个国家" in n for n in report.notes)
    assert ctx.open_kb("policy_visa").config.app == "policy"
    again = app.setup(mini_data, ctx, progress=False)  # idempotent
    assert again.kbs == report.kbs
    from zhiwen.errors import IngestError

    with pytest.raises(IngestError):
        app.setup(tmp_path / "nowhere", ctx, progress=False)


def test_as_of_default_is_today(mini_ctx: AppContext) -> None:
    tomorrow = date.today() + timedelta(days=1)
    assert ask_policy(SEED_2, mini_ctx, as_of=tomorrow).data()["as_of"] == tomorrow.isoformat()
