"""Chat end to end: the done-when questions, follow-ups, discussion mode, and the LLM as writer
(a fake OpenAI-compatible server on loopback: scripted replies, counted calls)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from advisor_questions import DISCUSSION_QUESTION, DISTRICT_QUESTION, LOAN_QUESTION, TAX_QUESTION

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.apps.advisor.app import AdvisorApp
from zhiwen.apps.advisor.rules import get_rulebook
from zhiwen.chinese.number_check import allowed_numbers, check_numbers
from zhiwen.llm.client import OpenAIChatClient


def role(answer: Any, key: str) -> dict[str, Any]:
    return next(r for r in answer.data["roles"] if r["role"] == key)


def call(role_data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c["result"] for c in role_data["tool_calls"] if c["name"] == name and "result" in c)


def test_loan_question_from_the_financial_advisor(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question=LOAN_QUESTION), advisor_ctx)
    fin = role(answer, "financial_advisor")
    assert call(fin, "calc_loan")["monthly_payment"] == 8967.34
    assert call(fin, "assess_pressure")["level"] == "中"
    assert "8,967.34元" in fin["content"] and "还款压力：中" in fin["content"]
    # the facts used come first (#28), then the roles
    echo = "按总价300万元、首付三成（90万元）、贷款30年、利率3.1%、等额本息、月收入2万元计算："
    assert answer.answer.startswith(echo + "\n\n### 💰 财务顾问\n")
    assert answer.standalone_question == echo + LOAN_QUESTION
    assert answer.data["plan"]["roles"] == ["financial_advisor", "home_advisor"]
    assert answer.llm_used is False and answer.extractive_reason == "no_llm"
    assert set(answer.data) >= {"plan", "roles", "tool_calls", "discussion"}


def test_tax_question_from_the_policy_expert_with_the_rule_date(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question=TAX_QUESTION), advisor_ctx)
    policy = role(answer, "policy_expert")
    tax = call(policy, "calc_tax")
    assert (tax["deed_tax"], tax["vat"], tax["income_tax"]) == (30_000.0, 0.0, 0.0)  # 1 %, 满二, 满五唯一
    assert tax["rule"]["id"] == "2024-16"
    assert "2024-12-01起执行" in policy["content"] and "规则截至" in policy["content"]
    assert "公告2024年第16号" in policy["content"]
    assert any(c.kb == "advisor_policy" for c in answer.citations)
    for hit in call(policy, "search_policy")["hits"]:
        assert hit["city"] in ("上海", "全国")


def test_district_question_from_the_market_analyst(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question=DISTRICT_QUESTION), advisor_ctx)
    market = role(answer, "market_analyst")
    result = call(market, "compare_districts")
    assert [d["district"] for d in result["districts"]] == ["浦东", "闵行"]
    assert result["highest"] == "浦东"
    pudong = result["districts"][0]
    assert f"{pudong['avg_unit_price']:,}元/㎡" in market["content"]
    assert "2019年6月链家挂牌快照" in market["content"]


def test_follow_up_reuses_the_session(advisor_ctx: AppContext) -> None:
    app = AdvisorApp()
    app.ask(AskRequest(question=LOAN_QUESTION, session_id="s-follow"), advisor_ctx)
    answer = app.ask(AskRequest(question="那如果首付150万呢？", session_id="s-follow"), advisor_ctx)
    loan = call(role(answer, "financial_advisor"), "calc_loan")
    assert (loan["down_payment"], loan["loan_amount"], loan["rate"], loan["years"]) == (
        1_500_000,
        1_500_000,
        3.1,
        30,
    )
    assert loan["monthly_payment"] == 6405.25  # 8967.3444 × 150/210
    assert call(role(answer, "financial_advisor"), "assess_pressure")["level"] == "中"


def test_ask_with_client_history_instead_of_a_session(advisor_ctx: AppContext) -> None:
    history = [
        {"role": "user", "content": "总价300万，首付三成，贷款30年，利率3.1%"},
        {"role": "assistant", "content": "…"},
    ]
    answer = AdvisorApp().ask(
        AskRequest(question="我月收入2万，月供压力大吗？", history=history), advisor_ctx
    )
    assert call(role(answer, "financial_advisor"), "assess_pressure")["level"] == "中"


def test_missing_information_is_asked_for(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question="月供怎么算？"), advisor_ctx)
    assert "请告诉我" in role(answer, "financial_advisor")["content"]


def test_stream_events_in_order(advisor_ctx: AppContext) -> None:
    events = list(AdvisorApp().stream(AskRequest(question=LOAN_QUESTION), advisor_ctx))
    types = [e.type for e in events]
    assert types == ["facts", "role_start", "role_result", "role_start", "role_result", "done"]
    assert events.pop(0).data["facts"]["loan_years"] == 30  # the facts used come first (#28)
    assert events[0].to_dict() == {
        "type": "role_start",
        "role": "financial_advisor",
        "name": "财务顾问",
        "icon": "💰",
    }
    assert events[1].data["tool_calls"][0]["name"] == "calc_loan"


def test_offline_role_messages_pass_their_own_number_check(advisor_ctx: AppContext) -> None:
    for question in (LOAN_QUESTION, TAX_QUESTION, DISTRICT_QUESTION):
        answer = AdvisorApp().ask(AskRequest(question=question), advisor_ctx)
        for r in answer.data["roles"]:
            results = [c["result"] for c in r["tool_calls"] if "result" in c]
            results += [c["result"] for c in answer.data["tool_calls"] if "result" in c]
            rules = get_rulebook().model_dump(mode="json")  # dated rules data: a source, not a guess
            allowed = allowed_numbers([*results, rules], [question])
            assert check_numbers(r["content"], allowed).ok, r["content"]


def test_discussion_offline_reaches_the_seed_consensus(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(
        AskRequest(question=DISCUSSION_QUESTION, options={"mode": "discussion"}), advisor_ctx
    )
    talk = answer.data["discussion"]
    assert 3 <= len(talk) <= 8 and max(m["round"] for m in talk) <= 3
    assert all({"from", "to", "content"} <= set(m) for m in talk)
    assert talk[0]["from"] == "policy_expert" and talk[1]["to"] == "market_analyst"
    consensus = answer.data["consensus"]
    assert consensus["agreed"] is True
    assert (consensus["original"]["price"], consensus["original"]["level"]) == (2_000_000, "高")
    assert (consensus["final"]["price"], consensus["final"]["level"]) == (1_500_000, "中")
    assert consensus["final"]["down_payment"] == 400_000  # the user's cash stays fixed
    final = answer.data["roles"][-1]
    assert final["role"] == "home_advisor" and "由200万元调整为150万元" in final["content"]


def test_discussion_already_affordable_agrees_in_round_one(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(
        AskRequest(question="上海总价300万，首付三成，月收入5万，深度分析", options={"mode": "discussion"}),
        advisor_ctx,
    )
    consensus = answer.data["consensus"]
    assert consensus["agreed"] and consensus["rounds"] == 1 and consensus["final"]["level"] == "低"
    assert consensus["districts"]  # districts whose median listing price fits 300万


# -- with an LLM (fake endpoint) ---------------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def with_llm(ctx: AppContext, fake: FakeOpenAI) -> AppContext:
    client = OpenAIChatClient(base_url=fake.base_url, model="fake", max_retries=0, timeout_s=5)
    return dataclasses.replace(ctx, llm=client)


def test_llm_message_is_used_when_its_numbers_check_out(advisor_ctx: AppContext, fake: FakeOpenAI) -> None:
    good = (
        "按您的条件，等额本息月供约8,967元（0.90万元），占月收入2万元的44.84%，"
        "属于中等压力，建议预留应急资金。"
    )
    bad = "综合来看，建议把月供控制在9500元以内，并准备30万元应急资金，这样压力会小很多，也更稳妥一些。"
    fake.script(Reply(good), Reply(bad))
    answer = AdvisorApp().ask(AskRequest(question=LOAN_QUESTION), with_llm(advisor_ctx, fake))
    fin, final = answer.data["roles"]
    assert fin["content"] == good and fin["llm_used"] is True and fin["number_check"]["ok"]
    assert final["llm_used"] is False and final["fallback_reason"] == "number_mismatch"
    assert "9500" in final["number_check"]["unsupported"] and final["content"].startswith("**综合建议**")
    assert fake.calls == 2 == answer.data["llm_calls"]
    assert answer.llm_used is True


def test_llm_dropping_the_key_figure_falls_back(advisor_ctx: AppContext, fake: FakeOpenAI) -> None:
    fake.script(
        Reply("您的月供处于中等水平，压力不算太大，但也要注意预留一些应急资金，控制其他负债，量力而行。")
    )
    answer = AdvisorApp().ask(AskRequest(question=LOAN_QUESTION), with_llm(advisor_ctx, fake))
    fin = answer.data["roles"][0]
    assert fin["fallback_reason"] == "missing_key_numbers" and "8,967.34元" in fin["content"]


def test_llm_failure_falls_back_to_templates(advisor_ctx: AppContext, fake: FakeOpenAI) -> None:
    fake.script(Reply.fault("500"), Reply.fault("500"))
    answer = AdvisorApp().ask(AskRequest(question=LOAN_QUESTION), with_llm(advisor_ctx, fake))
    assert answer.llm_used is False and answer.data["roles"][0]["fallback_reason"] == "http_error"
    assert call(answer.data["roles"][0], "calc_loan")["monthly_payment"] == 8967.34


def test_llm_classifies_questions_no_keyword_matches(advisor_ctx: AppContext, fake: FakeOpenAI) -> None:
    fake.script(
        Reply(json.dumps({"roles": ["market_analyst"], "reason": "想了解上海的行情"}, ensure_ascii=False))
    )
    answer = AdvisorApp().ask(AskRequest(question="上海现在怎么样"), with_llm(advisor_ctx, fake))
    assert answer.data["plan"]["source"] == "llm"
    assert answer.data["plan"]["roles"] == ["market_analyst", "home_advisor"]
    assert fake.calls == 3 == answer.data["llm_calls"]  # classify + two role messages


def test_discussion_with_a_fake_llm(advisor_ctx: AppContext, fake: FakeOpenAI) -> None:
    answer = AdvisorApp().ask(
        AskRequest(question=DISCUSSION_QUESTION, options={"mode": "discussion"}), with_llm(advisor_ctx, fake)
    )
    talk = answer.data["discussion"]
    assert answer.data["consensus"]["final"]["price"] == 1_500_000
    assert fake.calls == len(talk) + 1 == answer.data["llm_calls"]  # one per message + the consensus
    assert all(m["fallback_reason"] == "too_short" for m in talk)  # "好的。" is not a message
