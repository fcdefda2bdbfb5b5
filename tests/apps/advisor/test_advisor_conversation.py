"""The advisor in a conversation (#28): facts read with their unit and role, follow-ups that
change one fact and recompute everything to the cent, the facts used echoed first, and sessions
that persist under ZHIWEN_HOME (CLI runs, API calls) and stay with their caller.

Every expected number is computed here by the calculators themselves (and the issue's figures
are pinned: 25 → 30 years on a 162.5万 loan at 3 %: 7,705.93 → 6,851.07 元/月).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from zhiwen.api.app import create_app
from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.appkit.registry import AppRegistry
from zhiwen.apps.advisor.app import AdvisorApp
from zhiwen.apps.advisor.calculators.loan import compute_loan
from zhiwen.apps.advisor.calculators.tax import compute_tax
from zhiwen.config import reset_settings_cache
from zhiwen.conversation import service as conversation
from zhiwen.conversation.store import ConversationMemory, forget_memories, memory_for

FIRST = "总价250万，首付35%，贷款25年，利率3%，月供多少？"
THIRTY = "如果贷款年限改成30年呢？"


def tool(answer: Any, name: str) -> dict[str, Any]:
    return next(c["result"] for c in answer.data["tool_calls"] if c["name"] == name and "result" in c)


def assumptions(answer: Any) -> list[str]:
    return [a for r in answer.data["roles"] for a in r["assumptions"]]


def ask(app: AdvisorApp, ctx: AppContext, question: str, sid: str, caller: str = "") -> Any:
    return app.ask(AskRequest(question=question, session_id=sid, caller=caller), ctx)


# -- the three failure kinds ------------------------------------------------------------
def test_a_follow_up_that_changes_the_years_recomputes_the_payment(advisor_ctx: AppContext) -> None:
    app = AdvisorApp()
    first = ask(app, advisor_ctx, FIRST, "conv-years")
    assert tool(first, "calc_loan")["monthly_payment"] == 7705.93
    after = ask(app, advisor_ctx, THIRTY, "conv-years")
    loan = tool(after, "calc_loan")
    assert (loan["loan_amount"], loan["years"], loan["rate"]) == (1_625_000, 30, 3.0)
    assert loan["monthly_payment"] == 6851.07  # the right answer (it returned 7,705.93)
    assert loan == compute_loan(price=2.5e6, down_payment_ratio=0.35, years=30, rate=3.0).to_dict()
    assert after.answer.startswith("按总价250万元、首付35%（87.5万元）、贷款30年、利率3%计算：")
    assert after.standalone_question == "按总价250万元、首付35%（87.5万元）、贷款30年、利率3%计算：" + THIRTY
    assert not [a for a in assumptions(after) if a.startswith("未说明")]


def test_a_loan_amount_without_a_total_price_is_computed_directly(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question="贷款200万，30年，利率3.1%，月供多少？"), advisor_ctx)
    loan = tool(answer, "calc_loan")
    expected = compute_loan(price=2e6, down_payment_ratio=0, years=30, rate=3.1)
    assert (loan["loan_amount"], loan["monthly_payment"]) == (2e6, expected.monthly_payment) == (2e6, 8540.33)
    fin = next(r for r in answer.data["roles"] if r["role"] == "financial_advisor")
    assert "请告诉我" not in fin["content"] and "按贷款额直接计算" in fin["content"]
    assert "总价" not in fin["content"].split("\n")[0]  # no invented price
    assert answer.answer.startswith("按贷款额200万元、贷款30年、利率3.1%计算：")
    assert not assumptions(answer)


def test_a_loan_amount_with_a_down_payment_gives_the_price(advisor_ctx: AppContext) -> None:
    answer = AdvisorApp().ask(AskRequest(question="首付90万，贷款210万，30年，利率3.1%"), advisor_ctx)
    loan = tool(answer, "calc_loan")
    assert (loan["price"], loan["down_payment"], loan["loan_amount"], loan["monthly_payment"]) == (
        3e6,
        9e5,
        2.1e6,
        8967.34,
    )


@pytest.mark.parametrize(
    "question",
    [
        "买一套95㎡、480万的首套房，房东满二，契税多少？",
        "这套房子95平，总价480万，首套，满二，契税多少？",
        "95㎡ 480万 首套 满二 契税多少",
        "480万，95平米，首套，满二，要交多少税",
    ],
)
def test_an_area_beside_a_price_is_the_area(advisor_ctx: AppContext, question: str) -> None:
    answer = AdvisorApp().ask(AskRequest(question=question), advisor_ctx)
    tax = tool(answer, "calc_tax")
    expected = compute_tax(price=4.8e6, area=95, is_first_home=True, house_age_years=2)
    assert (
        (tax["price"], tax["area"], tax["deed_tax"]) == (4.8e6, 95, expected.deed_tax) == (4.8e6, 95, 48_000)
    )
    assert answer.answer.startswith("按总价480万元、95㎡、首套、房产持有2年计算：")


# -- corrections, one fact at a time -----------------------------------------------------------
CHAIN = [
    ("总价480万，首付三成，贷款30年，利率3.1%，95㎡，二套，月供和契税多少？", (0.3, 30, 3.1, False)),
    ("首付改成两成", (0.2, 30, 3.1, False)),
    ("利率换成3.5%", (0.2, 30, 3.5, False)),
    ("年限改成20年", (0.2, 20, 3.5, False)),
    ("不是二套，是首套，契税呢？", (0.2, 20, 3.5, True)),
]


def test_each_correction_changes_one_fact_and_everything_is_recomputed(advisor_ctx: AppContext) -> None:
    app = AdvisorApp()
    for question, (ratio, years, rate, first_home) in CHAIN:
        answer = ask(app, advisor_ctx, question, "conv-chain")
        loan = tool(answer, "calc_loan")
        expected = compute_loan(price=4.8e6, down_payment_ratio=ratio, years=years, rate=rate)
        assert loan["monthly_payment"] == expected.monthly_payment, question
        assert loan["total_interest"] == expected.total_interest, question
        assert answer.data["facts"]["is_first_home"] is first_home, question
        if "契税" in question:
            tax = tool(answer, "calc_tax")
            want = compute_tax(
                price=4.8e6,
                area=95,
                is_first_home=first_home,
                house_age_years=2,
                home_number=None if first_home else 2,
            )
            assert tax["deed_tax"] == want.deed_tax, question
    assert answer.answer.startswith("按总价480万元、首付两成（96万元）、贷款20年、利率3.5%、95㎡、首套计算：")


def test_a_restated_loan_amount_replaces_the_down_payment_and_back(advisor_ctx: AppContext) -> None:
    app = AdvisorApp()
    ask(app, advisor_ctx, "总价300万，首付三成，30年，利率3.1%", "conv-split")
    loan = tool(ask(app, advisor_ctx, "贷款额改成180万", "conv-split"), "calc_loan")
    assert (loan["down_payment"], loan["loan_amount"]) == (1.2e6, 1.8e6)
    assert (
        loan["monthly_payment"]
        == compute_loan(price=1.8e6, down_payment_ratio=0, years=30, rate=3.1).monthly_payment
    )
    loan = tool(ask(app, advisor_ctx, "还是首付两成吧", "conv-split"), "calc_loan")
    assert (loan["down_payment"], loan["loan_amount"]) == (6e5, 2.4e6)


@pytest.mark.parametrize(
    "question",
    [
        "首付三成、30年、利率3.1%、总价300万，月供多少",
        "总价300万，首付三成，按揭三十年，利率3.1%，等额本息",
        "300万的房子，首付三成，贷款期限30年，3.1%的利率",
    ],
)
def test_a_stated_fact_is_never_called_unstated(advisor_ctx: AppContext, question: str) -> None:
    answer = AdvisorApp().ask(AskRequest(question=question), advisor_ctx)
    assert tool(answer, "calc_loan")["monthly_payment"] == 8967.34
    assert "未说明" not in answer.answer, assumptions(answer)


# -- sessions: durable, bounded, expiring, bound to the caller ----------------------------------
@pytest.fixture
def cli_env(advisor_ctx: AppContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("ZHIWEN_HOME", str(advisor_ctx.settings.home))
    monkeypatch.setenv("ZHIWEN_EMBEDDING__PROVIDER", "hash")
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    reset_settings_cache()
    yield
    reset_settings_cache()


def cli(*args: str) -> str:
    """One ``zhiwen advisor …`` run as a new process would make it: a new app, no memory cached."""
    forget_memories()
    result = CliRunner().invoke(AdvisorApp().cli(), list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_session_continues_across_runs(cli_env: None) -> None:
    first = cli("chat", "--session", "cli-s1", "-m", FIRST)
    assert "7,705.93元" in first and "按总价250万元、首付35%（87.5万元）、贷款25年、利率3%计算：" in first
    second = cli("chat", "--session", "cli-s1", "-m", THIRTY)
    assert "6,851.07元" in second and "贷款30年" in second and "未说明贷款年限" not in second
    data = json.loads(cli("chat", "--session", "cli-s1", "-m", "利率换成3.5%", "--json"))
    want = compute_loan(price=2.5e6, down_payment_ratio=0.35, years=30, rate=3.5).monthly_payment
    assert data["data"]["tool_calls"][0]["result"]["monthly_payment"] == want
    other = cli("chat", "--session", "cli-s2", "-m", THIRTY)  # another session knows nothing
    assert "6,851.07元" not in other and "请告诉我" in other


@pytest.fixture
def client(advisor_ctx: AppContext) -> Iterator[TestClient]:
    app = create_app(advisor_ctx.settings, apps=AppRegistry([AdvisorApp()]))
    with TestClient(app) as c:
        yield c


def sse(client: TestClient, body: dict[str, Any], key: str | None = None) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with client.stream("POST", "/api/v1/chat", json=body, headers=headers) as resp:
        assert resp.status_code == 200
        return [json.loads(line[5:]) for line in resp.iter_lines() if line.startswith("data:")]


def sse_loan(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    for e in events:
        if e["type"] == "role_result":
            for c in e["tool_calls"]:
                if c["name"] == "calc_loan":
                    return dict(c["result"])
    return None


def test_api_follow_up_in_one_session_and_another_key_cannot_read_it(client: TestClient) -> None:
    first = sse(client, {"session_id": "api-s1", "message": FIRST}, key="sk-a")
    assert first[0] == {
        "type": "facts",
        "text": "按总价250万元、首付35%（87.5万元）、贷款25年、利率3%计算：",
        "facts": {"price": 2.5e6, "down_payment_ratio": 0.35, "loan_years": 25, "rate": 3.0},
    }
    follow = sse(client, {"session_id": "api-s1", "message": THIRTY}, key="sk-a")
    assert (sse_loan(follow) or {})["monthly_payment"] == 6851.07
    done = follow[-1]
    assert done["type"] == "done" and done["facts"]["loan_years"] == 30
    assert done["standalone_question"].startswith("按总价250万元") and done["standalone_question"].endswith(
        THIRTY
    )
    # the same session id under another key: nothing of sk-a's session is seen
    stranger = sse(client, {"session_id": "api-s1", "message": THIRTY}, key="sk-b")
    assert sse_loan(stranger) is None and stranger[0]["facts"] == {"loan_years": 30}
    # and sk-a's session is intact
    again = sse(client, {"session_id": "api-s1", "message": "利率换成3.5%"}, key="sk-a")
    want = compute_loan(price=2.5e6, down_payment_ratio=0.35, years=30, rate=3.5).monthly_payment
    assert (sse_loan(again) or {})["monthly_payment"] == want


def test_store_load_and_drop_are_bound_to_the_caller(advisor_ctx: AppContext) -> None:
    app = AdvisorApp()
    ask(app, advisor_ctx, FIRST, "bound", caller="key-a")
    store = memory_for(advisor_ctx.settings.home)
    assert store.load("key-b", "bound") is None
    held = store.load("key-a", "bound")
    assert held is not None and held.user_texts() == [FIRST]
    assert held.states["advisor"]["facts"]["price"] == 2.5e6  # the facts: the advisor's state
    store.drop("key-b", "bound")  # another caller cannot drop it either
    assert store.load("key-a", "bound") is not None
    store.drop("key-a", "bound")
    assert store.load("key-a", "bound") is None


def test_client_history_is_the_truth(advisor_ctx: AppContext) -> None:
    """A client that holds the conversation (OpenAI chat clients) wins over a stale session."""
    app = AdvisorApp()
    ask(app, advisor_ctx, "总价300万，首付三成，贷款30年，利率3.1%", "hist")
    history = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": "…"}]
    answer = app.ask(AskRequest(question=THIRTY, session_id="hist", history=history), advisor_ctx)
    assert tool(answer, "calc_loan")["monthly_payment"] == 6851.07
    agreeing = [*history, {"role": "user", "content": THIRTY}, {"role": "assistant", "content": "…"}]
    answer = app.ask(AskRequest(question="利率换成3.5%", session_id="hist", history=agreeing), advisor_ctx)
    want = compute_loan(price=2.5e6, down_payment_ratio=0.35, years=30, rate=3.5).monthly_payment
    assert tool(answer, "calc_loan")["monthly_payment"] == want


def test_durable_sessions_are_bounded_and_expire(advisor_ctx: AppContext, tmp_path: Path) -> None:
    now = [1000.0]
    memory = ConversationMemory(
        tmp_path / "s.sqlite", max_sessions=2, ttl_s=60, max_turns=4, clock=lambda: now[0]
    )
    app = AdvisorApp()

    def turn(question: str, sid: str) -> None:
        conversation.ask(app, AskRequest(question=question, session_id=sid), advisor_ctx, memory)

    for sid in ("a", "b"):
        turn(FIRST, sid)
        now[0] += 1
    for question in ("月收入2万", THIRTY):  # 3 turns = 6 messages; the file keeps the last 4
        turn(question, "a")
        now[0] += 1
    held = memory.load("", "a")
    assert held is not None and held.user_texts() == ["月收入2万", THIRTY]
    facts = held.states["advisor"]["facts"]
    assert facts["price"] == 2.5e6 and facts["loan_years"] == 30  # facts outlive the trim
    turn(FIRST, "c")  # a third session: the oldest (b) goes
    assert memory.load("", "b") is None and len(memory) == 2
    now[0] += 61
    assert memory.load("", "a") is None and len(memory) == 0


def test_discussion_on_a_loan_amount_alone_invents_no_down_payment(advisor_ctx: AppContext) -> None:
    request = AskRequest(question="贷款200万，月收入1万，帮我深度分析一下", options={"mode": "discussion"})
    answer = AdvisorApp().ask(request, advisor_ctx)
    assert answer.answer.startswith("按贷款额200万元、月收入1万元计算：")
    assert "首付0" not in answer.answer and "（0%）" not in answer.answer
    original = answer.data["consensus"]["original"]
    want = compute_loan(price=2e6, down_payment_ratio=0, years=30, rate=original["rate"]).monthly_payment
    assert (original["loan_amount"], original["monthly_payment"]) == (2e6, want)


def test_api_follow_up_from_the_history_a_client_sends(client: TestClient) -> None:
    history = [{"role": "user", "content": FIRST}, {"role": "assistant", "content": "月供7,705.93元"}]
    follow = sse(client, {"session_id": "fresh-session", "message": THIRTY, "history": history})
    assert (sse_loan(follow) or {})["monthly_payment"] == 6851.07
