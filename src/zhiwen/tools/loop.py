"""The tool-calling loop: the LLM picks tools when there is one, a rule-based planner when not.

With an LLM, :func:`run_tool_loop` sends the conversation with the tools' OpenAI schemas, runs
every tool call the model makes (validated by the tool), feeds the results back as ``tool``
messages and repeats until the model answers in text or ``max_steps`` is reached. Without an
LLM — or when the LLM fails — the app's ``planner`` decides which tools to call from the
conversation, and the caller writes the message from the results (templates), so numbers always
come from tools, never from a guess.

A model that cannot follow the tool protocol (#31: Gemma 3 270M answered without calling a tool,
or with arguments no tool accepts) is not trusted either: when its final text comes with no
successful tool call, the planner takes over with ``fallback_reason="tool_protocol"``; when the
text states a number that no successful tool result nor the user's messages hold, the planner
takes over with ``numbers_not_from_tools``. Either way ``notice`` says so in Chinese
(「本地模型未能正确调用工具，已改用规则计算」) for the caller to show.

Example::

    def planner(messages):                         # offline: rules pick the calls
        return [PlannedCall("calc_loan", {"principal": 2_100_000, "years": 30, "rate": 3.1})]

    result = run_tool_loop(registry, messages, llm=get_llm(), planner=planner)
    result.calls[0].result["monthly_payment"], result.llm_used, result.fallback_reason
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiwen.chinese.number_check import allowed_numbers, check_numbers
from zhiwen.errors import LLMError, ZhiwenError
from zhiwen.llm.base import ChatModel, Message
from zhiwen.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PlannedCall:
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True)
class ToolCallRecord:
    name: str
    arguments: dict[str, Any]
    result: Any = None
    error: dict[str, Any] | None = None  # {"code", "message"} when the call failed

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.error is None:
            out["result"] = self.result
        else:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class ToolLoopResult:
    content: str  # the model's final text; "" when the planner chose the calls
    calls: list[ToolCallRecord] = field(default_factory=list)
    llm_used: bool = False
    steps: int = 0
    fallback_reason: str | None = None  # no_llm, timeout, error, tool_protocol, … when the planner ran
    model_calls: list[ToolCallRecord] = field(default_factory=list)  # the model's, when refused

    @property
    def notice(self) -> str | None:
        """What the user is told when the model was there but its tool use was not trusted."""
        return PROTOCOL_NOTICE if self.fallback_reason in PROTOCOL_REASONS else None


#: fallback reasons of a model that answered but did not follow the tool protocol
PROTOCOL_REASONS = ("tool_protocol", "numbers_not_from_tools")
PROTOCOL_NOTICE = "本地模型未能正确调用工具，已改用规则计算。"


Planner = Callable[[Sequence[Message]], Sequence[PlannedCall]]


def execute_call(registry: ToolRegistry, name: str, arguments: dict[str, Any]) -> ToolCallRecord:
    """Run one call; a bad name or bad arguments become an error record, not an exception."""
    record = ToolCallRecord(name=name, arguments=dict(arguments))
    try:
        result = registry.call(name, arguments)
        record.result = result.model_dump() if hasattr(result, "model_dump") else result
    except ZhiwenError as exc:
        record.error = {"code": exc.code, "message": exc.message}
    return record


def run_planned(registry: ToolRegistry, calls: Sequence[PlannedCall]) -> list[ToolCallRecord]:
    return [execute_call(registry, c.name, c.arguments) for c in calls]


def _tool_message(call_id: str, record: ToolCallRecord) -> Message:
    payload = record.result if record.ok else {"error": record.error}
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": json.dumps(payload, ensure_ascii=False, default=str),
    }


def run_tool_loop(
    registry: ToolRegistry,
    messages: Sequence[Message],
    *,
    llm: ChatModel | None,
    planner: Planner | None = None,
    tool_names: Sequence[str] | None = None,
    max_steps: int = 4,
    timeout_s: float | None = None,
) -> ToolLoopResult:
    """Let the LLM call tools until it answers; fall back to ``planner`` without/after an LLM."""
    if llm is None:
        return _planned(registry, messages, planner, "no_llm")
    schemas = registry.schemas(tool_names)
    convo: list[Message] = list(messages)
    records: list[ToolCallRecord] = []
    try:
        for step in range(1, max_steps + 1):
            reply = llm.chat(convo, tools=schemas, timeout_s=timeout_s)
            if not reply.tool_calls:
                final = ToolLoopResult(reply.content.strip(), records, llm_used=True, steps=step)
                return _trusted(final, registry, messages, planner)
            convo.append(
                {
                    "role": "assistant",
                    "content": reply.content or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": json.dumps(c.arguments, ensure_ascii=False),
                            },
                        }
                        for c in reply.tool_calls
                    ],
                }
            )
            for c in reply.tool_calls:
                record = execute_call(registry, c.name, c.arguments)
                records.append(record)
                convo.append(_tool_message(c.id, record))
        return ToolLoopResult("", records, llm_used=True, steps=max_steps, fallback_reason="max_steps")
    except LLMError as exc:
        from zhiwen.llm import error_outcome

        reason = error_outcome(exc)
    except Exception:  # a broken adapter must not take the answer down
        log.exception("tool loop: LLM adapter raised unexpectedly")
        reason = "error"
    log.warning("tool loop: LLM failed (%s); planning the calls by rules", reason)
    return _planned(registry, messages, planner, reason)


def _planned(
    registry: ToolRegistry, messages: Sequence[Message], planner: Planner | None, reason: str
) -> ToolLoopResult:
    calls = list(planner(messages)) if planner is not None else []
    return ToolLoopResult("", run_planned(registry, calls), llm_used=False, fallback_reason=reason)


def protocol_problem(result: ToolLoopResult, messages: Sequence[Message]) -> str | None:
    """Why the model's final text cannot stand, or None: no successful tool call behind it
    (``tool_protocol``), or a number no tool result nor the user holds (``numbers_not_from_tools``)."""
    results = [c.result for c in result.calls if c.ok]
    if not results:
        return "tool_protocol"
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    if not check_numbers(result.content, allowed_numbers(results, users)).ok:
        return "numbers_not_from_tools"
    return None


def _trusted(
    result: ToolLoopResult, registry: ToolRegistry, messages: Sequence[Message], planner: Planner | None
) -> ToolLoopResult:
    """``result`` when its text is grounded on tool results, else the planner's calls (the model's kept)."""
    reason = protocol_problem(result, messages)
    if reason is None:
        return result
    log.warning("tool loop: the model's answer is not grounded on tools (%s); planning by rules", reason)
    planned = _planned(registry, messages, planner, reason)
    planned.steps, planned.model_calls = result.steps, result.calls
    return planned
