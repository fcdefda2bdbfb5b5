"""The tool-calling loop against the fake OpenAI server: the model picks tools, results go back as
``tool`` messages, bad arguments become error records, and every LLM fault falls back to the
rule-based planner with its reason.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel, Field

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.llm import OpenAIChatClient
from zhiwen.llm.base import Message
from zhiwen.tools import PlannedCall, Tool, ToolCallRecord, ToolRegistry, run_tool_loop

QUESTION: list[Message] = [{"role": "user", "content": "3 加 4 等于多少？"}]


class AddArgs(BaseModel):
    a: int = Field(description="第一个加数")
    b: int = Field(ge=0, description="第二个加数（非负）")


class AddTool(Tool[AddArgs]):
    name = "add"
    description = "两个整数相加"
    args_model = AddArgs

    def run(self, args: AddArgs) -> dict[str, int]:
        return {"sum": args.a + args.b}


class EchoArgs(BaseModel):
    text: str


class EchoResult(BaseModel):
    echoed: str


class EchoTool(Tool[EchoArgs]):
    name = "echo"
    description = "原样返回文本"
    args_model = EchoArgs

    def run(self, args: EchoArgs) -> EchoResult:
        return EchoResult(echoed=args.text)


REGISTRY = ToolRegistry([AddTool(), EchoTool()])


class RecordingPlanner:
    def __init__(self, *calls: PlannedCall) -> None:
        self.calls = list(calls)
        self.seen: list[Sequence[Message]] = []

    def __call__(self, messages: Sequence[Message]) -> list[PlannedCall]:
        self.seen.append(messages)
        return self.calls


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm(fake: FakeOpenAI) -> Iterator[OpenAIChatClient]:
    client = OpenAIChatClient(
        base_url=fake.base_url,
        model="fake",
        api_key="sk-test",
        timeout_s=3.0,
        max_retries=0,
        backoff_base_s=0.01,
    )
    yield client
    client.close()


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def test_model_calls_a_tool_gets_the_result_then_answers(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    fake.script(Reply.tool_call("add", {"a": 3, "b": 4}, call_id="call_add"), Reply("3 加 4 等于 7。"))
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, planner=RecordingPlanner())
    assert result.llm_used and result.fallback_reason is None and result.steps == 2
    assert result.content == "3 加 4 等于 7。"
    assert [c.to_dict() for c in result.calls] == [
        {"name": "add", "arguments": {"a": 3, "b": 4}, "result": {"sum": 7}}
    ]

    first, second = fake.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["add", "echo"]
    assert first["tools"][0] == AddTool().to_openai_schema()
    assert first["messages"] == QUESTION
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_add"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"a": 3, "b": 4}
    (tool_msg,) = tool_messages(second)
    assert tool_msg["tool_call_id"] == "call_add" and json.loads(tool_msg["content"]) == {"sum": 7}


def test_tool_names_limit_the_schemas_and_pydantic_results_are_dumped(
    fake: FakeOpenAI, llm: OpenAIChatClient
) -> None:
    fake.script(Reply.tool_call("echo", {"text": "你好"}), Reply("已回显。"))
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, tool_names=["echo"])
    assert [t["function"]["name"] for t in fake.requests[0]["tools"]] == ["echo"]
    assert result.calls[0].result == {"echoed": "你好"}
    assert json.loads(tool_messages(fake.requests[1])[0]["content"]) == {"echoed": "你好"}


@pytest.mark.parametrize(
    ("name", "arguments", "code", "message"),
    [
        ("add", {"a": 3}, 3001, "缺少必需参数：b（第二个加数）"),
        ("add", {"a": "三", "b": 4}, 3002, "参数类型错误：a（第一个加数，应为整数）"),
        ("add", {"a": 3, "b": -4}, 2001, "输入参数有误：b（第二个加数，必须大于等于 0）"),
        ("multiply", {"a": 3, "b": 4}, 3004, "工具不存在：multiply"),
    ],
)
def test_a_bad_call_is_an_error_record_fed_back_to_the_model(
    fake: FakeOpenAI, llm: OpenAIChatClient, name: str, arguments: dict[str, Any], code: int, message: str
) -> None:
    fake.script(
        Reply.tool_call(name, arguments), Reply.tool_call("add", {"a": 3, "b": 4}, "call_2"), Reply("是 7。")
    )
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm)
    assert result.llm_used and result.content == "是 7。" and result.fallback_reason is None
    bad, good = result.calls
    assert not bad.ok and bad.error == {"code": code, "message": message} and bad.result is None
    assert bad.to_dict() == {"name": name, "arguments": arguments, "error": bad.error}
    assert good.ok and good.result == {"sum": 7}
    assert json.loads(tool_messages(fake.requests[1])[0]["content"]) == {"error": bad.error}


def test_several_tool_calls_in_one_reply_each_get_a_tool_message(
    fake: FakeOpenAI, llm: OpenAIChatClient
) -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": '{"text": "x"}'}},
    ]
    fake.script(Reply(content="", tool_calls=calls), Reply("好了。"))
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm)
    assert [c.name for c in result.calls] == ["add", "echo"]
    assert [m["tool_call_id"] for m in tool_messages(fake.requests[1])] == ["c1", "c2"]


def test_without_an_llm_the_planner_picks_the_calls() -> None:
    planner = RecordingPlanner(PlannedCall("add", {"a": 1, "b": 2}), PlannedCall("add", {"a": 1}))
    result = run_tool_loop(REGISTRY, QUESTION, llm=None, planner=planner)
    assert not result.llm_used and result.fallback_reason == "no_llm" and result.content == ""
    assert planner.seen == [QUESTION]
    assert result.calls[0].result == {"sum": 3}
    assert result.calls[1].error == {"code": 3001, "message": "缺少必需参数：b（第二个加数）"}  # never raised


def test_without_an_llm_or_a_planner_nothing_is_called() -> None:
    result = run_tool_loop(REGISTRY, QUESTION, llm=None)
    assert result.calls == [] and result.fallback_reason == "no_llm" and not result.llm_used


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([Reply.fault("500")], "http_error"),
        ([Reply.fault("401")], "auth"),
        ([Reply.fault("malformed")], "bad_reply"),
        ([Reply.fault("empty")], "empty"),
        ([Reply.tool_call("add", "这不是 JSON")], "bad_json"),
        ([Reply.tool_call("add", "[1, 2]")], "bad_json"),  # JSON, but not an object
        ([Reply.tool_call("add", {"a": 3, "b": 4}), Reply.fault("503")], "http_error"),  # fails mid-loop
    ],
)
def test_llm_faults_fall_back_to_the_planner_with_the_reason(
    fake: FakeOpenAI, llm: OpenAIChatClient, replies: list[Reply], reason: str
) -> None:
    fake.script(*replies)
    planner = RecordingPlanner(PlannedCall("add", {"a": 10, "b": 5}))
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, planner=planner)
    assert not result.llm_used and result.fallback_reason == reason and result.content == ""
    assert [c.to_dict() for c in result.calls] == [
        {"name": "add", "arguments": {"a": 10, "b": 5}, "result": {"sum": 15}}
    ]
    assert planner.seen == [QUESTION]  # the planner sees the user's conversation, not the LLM's turns


def test_a_hanging_llm_times_out_into_the_planner(fake: FakeOpenAI, llm: OpenAIChatClient) -> None:
    fake.script(Reply.fault("hang", delay_s=10))
    planner = RecordingPlanner(PlannedCall("add", {"a": 1, "b": 1}))
    t0 = time.perf_counter()
    result = run_tool_loop(REGISTRY, QUESTION, llm=llm, planner=planner, timeout_s=0.3)
    assert time.perf_counter() - t0 < 8.0  # the 0.3 s timeout fired, not the 10 s hang
    assert result.fallback_reason == "timeout" and not result.llm_used
    assert result.calls[0].result == {"sum": 2}


def test_a_broken_adapter_falls_back_with_reason_error() -> None:
    class BrokenModel:
        def chat(self, messages: Sequence[Message], **kwargs: Any) -> Any:
            raise RuntimeError("adapter bug")

    planner = RecordingPlanner(PlannedCall("echo", {"text": "兜底"}))
    result = run_tool_loop(REGISTRY, QUESTION, llm=BrokenModel(), planner=planner)  # type: ignore[arg-type]
    assert result.fallback_reason == "error" and result.calls[0].result == {"echoed": "兜底"}


def test_max_steps_bounds_a_model_that_keeps_calling_tools() -> None:
    with FakeOpenAI(default=Reply.tool_call("add", {"a": 1, "b": 1})) as fake:
        client = OpenAIChatClient(base_url=fake.base_url, model="fake", timeout_s=3.0, max_retries=0)
        try:
            result = run_tool_loop(REGISTRY, QUESTION, llm=client, max_steps=3)
        finally:
            client.close()
        assert fake.calls == 3
        assert result.llm_used and result.steps == 3 and result.fallback_reason == "max_steps"
        assert result.content == "" and len(result.calls) == 3 and all(c.ok for c in result.calls)
        assert len(tool_messages(fake.requests[2])) == 2  # the results so far went back each step


def test_record_helpers() -> None:
    ok = ToolCallRecord("add", {"a": 1}, result={"sum": 1})
    failed = ToolCallRecord("add", {"a": 1}, error={"code": 3001, "message": "缺少必需参数：b"})
    assert ok.ok and not failed.ok
    assert "result" not in failed.to_dict() and "error" not in ok.to_dict()
