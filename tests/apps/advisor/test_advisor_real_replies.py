"""Role messages against what a small real model writes (#31): each failure falls back to the
template with its reason; a good rewrite is shown.

The replies are the kinds Gemma 3 270M gave on the bench (``bench/bench_llm_paths.py``): a JSON
blob with a stray ``0.9``, English, a ``<think>`` block, a rounded figure that is not the tool's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.apps.advisor.roles import role_by_key
from zhiwen.apps.advisor.writer import reply_problem, strip_think, write_message
from zhiwen.chinese.number_check import allowed_numbers, check_numbers
from zhiwen.llm import OpenAIChatClient

TEMPLATE = (
    "**贷款测算**（等额本息）：总价300万元，首付30%（90万元），贷款210万元，30年，年利率3.1%\n\n"
    "- 月供：**8,967.34元**（每月相同）\n"
    "- 还款总额：3,228,243.98元，其中利息1,128,243.98元（约112.82万元）"
)
QUESTION = "总价300万，首付三成，贷款30年，利率3.1%，月供多少？"
RESULTS = [{"monthly_payment": 8967.34, "loan": 2_100_000, "confidence_like": 0.9, "total": 3_228_243.98}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm(fake: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    client = OpenAIChatClient(base_url=fake.base_url, model="fake", timeout_s=3.0, max_retries=0)
    yield client
    client.close()


def write(fake: FakeOpenAI, llm: OpenAIChatClient, reply: str):  # type: ignore[no-untyped-def]
    fake.script(Reply(reply))
    role = role_by_key("financial_advisor")
    return write_message(llm, role, TEMPLATE, results=RESULTS, user_texts=[QUESTION], question=QUESTION)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        # the fake's and Gemma's JSON blob: its 0.9 passed before (90万 ÷ 100)
        ('{"label": "visa_free", "confidence": 0.9, "roles": ["financial_advisor"]}', "not_prose"),
        ("按您的条件，月供约8,967元，首付比例0.9。", "number_mismatch"),
        ("Your monthly payment is 8,967.34 yuan for a 30 year loan at 3.1% interest rate.", "not_chinese"),
        ("<think>先算月供，8,967.34元……", "think_unclosed"),
        ("月供约9,500元，总利息约112.82万元。", "number_mismatch"),
        ("按您的条件，贷款210万元，月供8,967.34元，利率31%。", "number_mismatch"),  # 3.1% is not 31%
        ("按您的条件，贷款210万元，月供8,967.34元，到2030年还清。", "number_mismatch"),  # a year nobody gave
        ("```\n月供8,967.34元\n```", "not_prose"),
        ("", "empty"),
        # what Gemma 3 270M wrote on the bench, shown before as the 购房顾问's message
        (
            "使用参考稿的数字，请确保数字的来源是参考稿中的数字。\n"
            + "参考稿的数字，请确保数字的来源是参考稿中的数字。\n" * 6,
            "repetitive",
        ),
        (
            "你是购房顾问团队中的财务顾问，负责贷款、月供、税费和还款压力的计算。月供8,967.34元。",
            "prompt_echo",
        ),
        ("按您的条件，月供每月相同，总利息不少，建议量力而行，保持充足的应急资金。", "missing_key_numbers"),
    ],
)
def test_a_bad_real_reply_falls_back_to_the_template(
    fake: FakeOpenAI, llm: OpenAIChatClient, reply: str, reason: str
) -> None:
    written = write(fake, llm, reply)
    assert written.text == TEMPLATE and not written.llm_used
    assert written.fallback_reason == reason
    assert written.meta()["fallback_reason"] == reason  # what the answer's data.roles[*] shows


@pytest.mark.parametrize(
    "reply",
    [
        "按总价300万元、首付三成计算，贷款210万元，30年，年利率3.1%，月供约**8,967.34元**，"
        "总利息约112.82万元。",
        "<think>月供在参考稿里是8,967.34元。</think>\n按您的条件，贷款210万元、30年、利率3.1%，"
        "月供约8,967元（约0.90万元），还款总额约322.82万元。",
    ],
)
def test_a_good_rewrite_is_shown_and_a_closed_think_block_is_dropped(
    fake: FakeOpenAI, llm: OpenAIChatClient, reply: str
) -> None:
    written = write(fake, llm, reply)
    assert written.llm_used and written.fallback_reason is None, written.number_check
    assert "<think>" not in written.text and written.text == strip_think(reply)


def test_a_tool_number_the_template_does_not_state_is_refused(
    fake: FakeOpenAI, llm: OpenAIChatClient
) -> None:
    """Only the template's figures and the user's: a tool number under another label is not shown."""
    written = write(fake, llm, "月供约8,967.34元，评分0.9，贷款210万元，30年，利率3.1%。")
    assert written.fallback_reason == "number_mismatch" and written.number_check is not None
    assert written.number_check.unsupported == ["0.9"]


def test_a_rewrite_of_figures_stating_none_falls_back(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    """The 购房顾问's template has no bold figure; a reply with none of its figures is no rewrite."""
    template = (
        "**综合建议**：\n\n1. 月供约8,967.34元（等额本息，30年），总利息112.82万元。\n2. 以上测算仅供参考。"
    )
    fake.script(
        Reply("综合来看，这套房的月供和利息都在可接受范围内，建议结合自身收入量力而行，注意预留应急资金。")
    )
    role = role_by_key("home_advisor")
    written = write_message(llm, role, template, results=RESULTS, user_texts=[QUESTION], question=QUESTION)
    assert written.fallback_reason == "no_figures" and written.text == template


def test_a_reply_cut_at_max_tokens_falls_back(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    fake.script(
        Reply("按您的条件，贷款210万元、30年、利率3.1%，月供约8,967.34元，总利息约", finish_reason="length")
    )
    role = role_by_key("financial_advisor")
    written = write_message(llm, role, TEMPLATE, results=RESULTS, user_texts=[QUESTION], question=QUESTION)
    assert written.fallback_reason == "truncated" and written.text == TEMPLATE


def test_values_are_strict_formatting_is_free() -> None:
    allowed = allowed_numbers([], ["首付90万元，利率3.1%，月供8,967.34元"])
    for ok in ("3.1%", "0.031", "90万", "900,000元", "8967.34", "0.90万", "8,967"):
        assert check_numbers(ok, allowed).ok, ok
    for bad in ("0.9", "31%", "9万", "9,000元", "2025年"):
        assert not check_numbers(bad, allowed).ok, bad


def test_reply_problem_reads_chinese_with_a_few_latin_letters_as_chinese() -> None:
    assert reply_problem("按LPR加点计算，月供约8,967元。") is None
    assert reply_problem("OK") == "not_chinese"
