"""A model that does not follow the tool protocol (#31: what Gemma 3 270M did on the bench) is
replaced by the rule planner, visibly; its text is never the answer unless tools ground it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel, Field

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.base import Message
from zhiwen.tools import PROTOCOL_NOTICE, PlannedCall, Tool, ToolRegistry, run_tool_loop

QUESTION: list[Message] = [{"role": "user", "content": "贷款210万，30年，利率3.1%，月供多少？"}]


class LoanArgs(BaseModel):
    principal: float = Field(gt=0, description="贷款金额（元）")
    years: int = Field(gt=0, le=30, description="贷款年限")
    rate: float = Field(gt=0, lt=20, description="年利率（%）")


class LoanTool(Tool[LoanArgs]):
    name = "calc_loan"
    description = "等额本息月供"
    args_model = LoanArgs

    def run(self, args: LoanArgs) -> dict[str, Any]:
        r, n = args.rate / 1200, args.years * 12
        return {"monthly_payment": round(args.principal * r * (1 + r) ** n / ((1 + r) ** n - 1), 2)}


REGISTRY = ToolRegistry([LoanTool()])
PLANNED = PlannedCall("calc_loan", {"principal": 2_100_000, "years": 30, "rate": 3.1})


def planner(_: Sequence[Message]) -> list[PlannedCall]:
    return [PLANNED]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm(fake: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    client = OpenAIChatClient(base_url=fake.base_url, model="fake", timeout_s=3.0, max_retries=0)
    yield client
    client.close()


@pytest.mark.parametrize(
    ("replies", "reason", "model_calls"),
    [
        ([Reply("月供大约是9000元。")], "tool_protocol", 0),  # answered without a tool
        (
            [Reply('```json\n{"name": "calc_loan", "arguments": {"principal": 2100000}}\n```')],
            "tool_protocol",
            0,
        ),
        # wrongly typed / missing arguments, then a text anyway
        (
            [Reply.tool_call("calc_loan", {"principal": "两百一十万", "years": 30}), Reply("月供8967元。")],
            "tool_protocol",
            1,
        ),
        ([Reply.tool_call("loan_calculator", {"amount": 2_100_000}), Reply("算好了。")], "tool_protocol", 1),
        # a good call, then a number the result does not hold
        (
            [
                Reply.tool_call("calc_loan", {"principal": 2_100_000, "years": 30, "rate": 3.1}),
                Reply("月供约9,500元。"),
            ],
            "numbers_not_from_tools",
            1,
        ),
    ],
)
def test_a_model_off_the_protocol_hands_over_to_the_planner(
    fake: FakeOpenAI, llm: OpenAIChatClient, replies: list[Reply], reason: str, model_calls: int
) -> None:
    fake.script(*replies)
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, planner=planner)
    assert result.fallback_reason == reason and not result.llm_used
    assert result.content == ""  # the model's text is not the answer
    assert result.notice == PROTOCOL_NOTICE == "本地模型未能正确调用工具，已改用规则计算。"
    assert [c.result for c in result.calls] == [{"monthly_payment": 8967.34}]  # the rules' numbers
    assert len(result.model_calls) == model_calls and result.steps == len(replies)


def test_a_grounded_answer_stands(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    fake.script(
        Reply.tool_call("calc_loan", {"principal": 2_100_000, "years": 30, "rate": 3.1}),
        Reply("贷款210万元、30年、利率3.1%，月供约8,967.34元（约0.90万元）。"),
    )
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, planner=planner)
    assert result.llm_used and result.fallback_reason is None and result.notice is None
    assert result.content.startswith("贷款210万元") and result.calls[0].ok


def test_other_fallbacks_carry_no_protocol_notice() -> None:
    result = run_tool_loop(REGISTRY, QUESTION, llm=None, planner=planner)
    assert result.fallback_reason == "no_llm" and result.notice is None
