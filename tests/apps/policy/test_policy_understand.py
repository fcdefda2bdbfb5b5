"""Intent rules and classifier, rewrite (rules and LLM), the 10 + 10 selection, answer helpers."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.appkit.app import Citation
from zhiwen.apps.policy import answer as compose
from zhiwen.apps.policy.countries import default_gazetteer
from zhiwen.apps.policy.intent import INTENTS, build_intent_classifier, rule_intent, signals
from zhiwen.apps.policy.retrieval import select_halves
from zhiwen.apps.policy.rewrite import RewriteError, llm_rewrite, rewrite_question, rule_rewrite
from zhiwen.documents import Chunk, Document, SearchHit
from zhiwen.embed import get_embedder
from zhiwen.errors import LLMError, LLMTimeout
from zhiwen.llm.base import ChatResult, Message

GAZ = default_gazetteer()
CLF = build_intent_classifier(embedder=get_embedder("hash"))


class ScriptedLLM:
    model = "scripted"

    def __init__(self, *replies: Any, delay_s: float = 0.0) -> None:
        self.replies = list(replies)
        self.delay_s = delay_s
        self.calls: list[list[Message]] = []

    def chat(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        raise NotImplementedError

    def stream(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[str]:
        raise NotImplementedError

    def stream_events(self, messages: Sequence[Message], **kwargs: Any) -> Iterator[Any]:
        raise NotImplementedError

    def chat_json(self, messages: Sequence[Message], **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


# -- intent ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("关于塞尔维亚的机组人员入出境，下列说法正确的有", "airline_visa_free"),  # seed case 1
        ("中国公民去泰国需要签证吗？", "visa_free"),  # seed case 2
        ("法国公民来中国免签能待多久", "visa_free"),
        ("Can US citizens visit China without a visa?", "visa_free"),
        ("240小时过境免签有哪些口岸", "visa_free"),
        ("去海南旅游要签证吗", "visa_free"),
        ("国际航班机组人员需要办理C字签证吗", "airline_visa_free"),
        ("Do airline crew need a visa for a layover in Shanghai?", "airline_visa_free"),
        ("美国游客和机组人员入境的免签规定有什么不同", "both"),
        ("法国游客和法航机组人员入境中国分别需要什么手续？", "both"),  # passengers and crew side by side
        ("美国公民机组人员入境需要签证吗", "airline_visa_free"),  # crew of a nationality, not travellers
        ("航空公司载运了没有有效证件的旅客会受到什么处罚", "airline_visa_free"),
        ("上海口岸的通关服务有哪些规定", "airline_visa_free"),  # ports on their own
        ("哪些口岸可以240小时过境免签", "visa_free"),  # ports of the transit policy
        ("免签入境的日本人在上海买房要交契税吗", "both"),
        ("契税的税率是多少", "other"),
        ("住房公积金可以提取吗", "other"),
    ],
)
def test_rules(question: str, intent: str) -> None:
    assert rule_intent(question) == intent
    result = CLF.classify(question)
    assert (result.label, result.method) == (intent, "rules")


def test_seed_case_three_is_other_without_rules() -> None:
    question = "边检证件过期后流程是什么？"
    assert rule_intent(question) is None  # no keyword: the embedding stage or the default decides
    assert CLF.classify(question).label == "other"


def test_signals() -> None:
    s = signals("持泰国护照的乘客过境上海")
    assert (
        [c.iso2 for c in s.countries] == ["TH"] and s.transit and s.traveller and s.visa_side and not s.crew
    )


@given(st.text(max_size=50))
def test_any_question_gets_an_intent(text: str) -> None:
    assert CLF.classify(text).label in INTENTS


def test_llm_first_and_fallback() -> None:
    llm = ScriptedLLM({"label": "both", "confidence": 0.9}, LLMTimeout("slow"), {"label": "nonsense"})
    clf = build_intent_classifier(embedder=get_embedder("hash"), llm=llm, timeout_s=1.0)
    first = clf.classify("中国公民去泰国需要签证吗？")
    assert (first.label, first.method) == ("both", "llm")
    second = clf.classify("中国公民去泰国需要签证吗？")
    assert (second.label, second.method, second.fallback_reason) == ("visa_free", "rules", "llm_timeout")
    third = clf.classify("契税的税率是多少")
    assert (third.label, third.fallback_reason) == ("other", "llm_bad_output")
    assert "visa_free" in llm.calls[0][0]["content"]


def test_disabled() -> None:
    clf = build_intent_classifier(enabled=False)
    assert clf.classify("中国公民去泰国需要签证吗？").fallback_reason == "disabled"


# -- rewrite -----------------------------------------------------------------------------------
def test_rule_rewrite_adds_names_and_terms() -> None:
    text = rule_rewrite("关于塞尔维亚的机组人员入出境，下列说法正确的有", "airline_visa_free")
    assert text.startswith("关于塞尔维亚的机组人员入出境")
    for term in ("塞尔维亚 Serbia", "机组人员 crew", "免签 visa-free"):
        assert term in text
    us = rule_rewrite("Do Americans need a visa to transit through Beijing?", "visa_free")
    assert "美国 United States" in us and "过境 transit" in us
    assert "海南 Hainan" in rule_rewrite("去海南要签证吗", "visa_free")


def test_other_is_never_rewritten() -> None:
    llm = ScriptedLLM()
    for question in ("边检证件过期后流程是什么？", "契税的税率是多少"):
        rw = rewrite_question(question, "other", llm=llm)
        assert (rw.text, rw.method) == (question, "none")
        assert rule_rewrite(question, "other") == question
    assert llm.calls == []


def test_llm_rewrite_keeps_country_names() -> None:
    llm = ScriptedLLM({"rewritten": "中国与塞尔维亚之间是否有针对机组人员的免签协议？"})
    text = llm_rewrite("关于塞尔维亚的机组人员入出境", "airline_visa_free", llm, timeout_s=1.0)
    assert text.startswith("中国与塞尔维亚") and "Serbia" in text  # the model dropped the English name
    good = "塞尔维亚 Serbia 机组 crew 免签"
    echoed = llm_rewrite("塞尔维亚机组", "airline_visa_free", ScriptedLLM({"rewritten": good}), timeout_s=1.0)
    assert echoed == good
    scripted = ScriptedLLM({"rewritten": "x Serbia 塞尔维亚"})
    rw = rewrite_question("塞尔维亚机组", "airline_visa_free", llm=scripted)
    assert rw.method == "llm"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (LLMTimeout("t"), "rewrite_timeout"),
        (LLMError("5xx", data={"outcome": "http_error"}), "rewrite_error"),
        (LLMError("garbage", data={"outcome": "bad_json"}), "rewrite_bad_output"),
        (ValueError("adapter"), "rewrite_error"),
        ({"answer": "x"}, "rewrite_bad_output"),
        ({"rewritten": "   "}, "rewrite_bad_output"),
        ({"rewritten": "长" * 500}, "rewrite_bad_output"),
        ("plain text", "rewrite_bad_output"),
    ],
)
def test_llm_rewrite_failures(reply: Any, reason: str) -> None:
    with pytest.raises(RewriteError) as info:
        llm_rewrite("泰国免签", "visa_free", ScriptedLLM(reply), timeout_s=1.0)
    assert info.value.reason == reason


def test_llm_rewrite_timeout_is_enforced() -> None:
    with pytest.raises(RewriteError) as info:
        llm_rewrite("泰国免签", "visa_free", ScriptedLLM({"rewritten": "x"}, delay_s=2.0), timeout_s=0.2)
    assert info.value.reason == "rewrite_timeout"  # a reply after 2 s would have been accepted


# -- the 10 + 10 selection ---------------------------------------------------------------------
def hits(prefix: str, n: int, text: str | None = None) -> list[SearchHit]:
    return [
        SearchHit(Chunk(f"{prefix}{i}", f"{prefix}{i}", text or f"{prefix} text {i}"), 1.0 - i / 100)
        for i in range(n)
    ]


def test_select_halves_default_and_backfill() -> None:
    out = select_halves(hits("s", 30), hits("g", 30), 20)
    assert [h.id for h in out] == [f"s{i}" for i in range(10)] + [f"g{i}" for i in range(10)]
    few_spec = select_halves(hits("s", 3), hits("g", 30), 20)
    assert sum(h.id.startswith("s") for h in few_spec) == 3 and len(few_spec) == 20
    few_gen = select_halves(hits("s", 30), hits("g", 4), 20)
    assert sum(h.id.startswith("g") for h in few_gen) == 4 and len(few_gen) == 20
    assert len(select_halves(hits("s", 2), hits("g", 3), 20)) == 5
    odd = select_halves(hits("s", 30), hits("g", 30), 5)
    assert [h.id[0] for h in odd] == ["s", "s", "s", "g", "g"]


def test_select_halves_drops_the_same_article_found_twice() -> None:
    same = "第二十二条 外国人有下列情形之一的，可以免办签证"
    spec = [SearchHit(Chunk("airline#22", "a", same), 0.9)]
    gen = [SearchHit(Chunk("general#22", "g", same), 0.8), *hits("g", 5)]
    out = select_halves(spec, gen, 4)
    assert [h.id for h in out] == ["airline#22", "g0", "g1", "g2"]


@given(st.integers(0, 30), st.integers(0, 30), st.integers(1, 40))
def test_select_halves_properties(n_spec: int, n_gen: int, top_n: int) -> None:
    out = select_halves(hits("s", n_spec), hits("g", n_gen), top_n)
    assert len(out) == min(top_n, n_spec + n_gen)
    assert len({h.id for h in out}) == len(out)
    spec = [h for h in out if h.id.startswith("s")]
    gen = [h for h in out if h.id.startswith("g")]
    assert out == spec + gen
    assert len(spec) >= min(n_spec, top_n - top_n // 2) and len(gen) >= min(n_gen, top_n // 2)


# -- answer helpers ----------------------------------------------------------------------------
def row(iso2: str, end: str = "", policy_type: str = "unilateral") -> compose.TableRow:
    country = GAZ.lookup(iso2)
    assert country is not None
    doc = Document(
        id=f"country/{iso2}",
        title=f"{country.zh}（{country.en}）免签政策",
        text="政策类型 Policy type：单方面免签30天（Unilateral-30-2025-12）",
        metadata={
            "days": 30,
            "policy_type": policy_type,
            "end_date": end,
            "country_zh": country.zh,
            "policies_zh": "单方面免签30天、海南入境免签30天（仅限海南）",
        },
    )
    return compose.TableRow(country, doc, "policy_visa")


def test_date_notes() -> None:
    fr = row("FR", "2025-12-31")
    assert compose.date_notes([fr], [], date(2025, 12, 31)) == []
    (note,) = compose.date_notes([fr], [], date(2026, 1, 1))
    assert "法国（France）" in note and "2025-12-31" in note and "现行规定" in note
    meta = {"end_date": "2026-05-31", "country_zh": "巴西"}
    cited = Citation(id="country/BR#0", title="巴西", metadata=meta)
    assert len(compose.date_notes([fr], [cited], date(2026, 6, 1))) == 1  # a country was asked about
    (generic,) = compose.date_notes([], [cited], date(2026, 6, 1))
    assert "巴西" in generic and "2026-05-31" in generic
    assert compose.date_notes([row("RS", "", "mutual")], [], date(2030, 1, 1)) == []


def test_not_found_and_missing_notes() -> None:
    india = compose.TableRow(GAZ.lookup("IN"), None)  # type: ignore[arg-type]
    assert "未找到印度（India）的免签政策" in india.summary()
    notes = compose.date_notes([row("FR", "2025-12-31")], [], date(2026, 3, 1))
    text = compose.append_missing_notes("法国可免签30天。", [india, row("FR", "2025-12-31")], notes)
    assert "未找到印度" in text and "2025-12-31" in text
    kept = "法国免签截止2025-12-31，可能已到期，请核实。印度：免签政策表中未找到。"
    assert compose.append_missing_notes(kept, [india], notes) == kept


def test_outbound_notes() -> None:
    th = row("TH", "", "mutual")
    fr = row("FR", "2025-12-31")
    assert "互免签证" in compose.outbound_notes("中国公民去泰国需要签证吗？", [th])[0]
    assert "仍需按该国规定办理签证" in compose.outbound_notes("中国人去法国旅游需要签证吗", [fr])[0]
    assert compose.outbound_notes("法国公民来华免签吗", [fr]) == []


def test_extractive_body_leads_with_rows() -> None:
    fr = row("FR", "2025-12-31")
    sources = [
        Citation(id="country/FR#0", title="法国免签", text="…", metadata={"kind": "visa_country"}),
        Citation(id="country/DE#0", title="德国免签", text="…", metadata={"kind": "visa_country"}),
        Citation(id="出境入境管理法#第二十二条", title="出境入境管理法 第二十二条", text="第二十二条 …"),
    ]
    body = compose.extractive_body("法国人免签吗", "visa_free", [fr], sources, ["⚠️ 注意：…"])
    assert body.startswith("【免签政策表】\n法国（France）：免签停留 30 天")
    assert "[1]" in body and "[3] 出境入境管理法 第二十二条" in body and "德国" not in body
