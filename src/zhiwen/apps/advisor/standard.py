"""Standard mode: the planned roles run in order, each seeing the earlier roles' results.

Every role gets the question, the session's facts (budget, income, down payment, city … from
the whole conversation) and the tool calls of the roles before it; it calls its tools
(:mod:`~zhiwen.apps.advisor.actions`), its message is templated from the results
(:mod:`~zhiwen.apps.advisor.templates`) and, with an LLM, rewritten under the number check
(:mod:`~zhiwen.apps.advisor.writer`). The synthesis role (购房顾问) runs last.

Example::

    >>> run = ChatRun(question, facts, registry, llm=None, user_texts=[question])
    >>> events = list(run_standard(plan, run))
    >>> [e.type for e in events]
    ['role_start', 'role_result', 'role_start', 'role_result']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zhiwen.answer.events import AppEvent
from zhiwen.apps.advisor.actions import ACTIONS, RoleState
from zhiwen.apps.advisor.facts import UserFacts
from zhiwen.apps.advisor.plan import ExecutionPlan
from zhiwen.apps.advisor.roles import Role
from zhiwen.apps.advisor.templates import render
from zhiwen.apps.advisor.writer import Written, write_message
from zhiwen.llm.base import ChatModel
from zhiwen.tools import ToolCallRecord, ToolRegistry


@dataclass(slots=True)
class RoleResult:
    role: Role
    content: str
    calls: list[ToolCallRecord]
    assumptions: list[str] = field(default_factory=list)
    written: Written | None = None

    def event_data(self) -> dict[str, Any]:
        return {
            "role": self.role.key,
            "name": self.role.name,
            "icon": self.role.icon,
            "content": self.content,
            "tool_calls": [c.to_dict() for c in self.calls],
            "assumptions": self.assumptions,
            **(self.written.meta() if self.written else {}),
        }


@dataclass(slots=True)
class ChatRun:
    """One chat turn's inputs and everything it produced (filled while events are yielded)."""

    question: str
    facts: UserFacts
    registry: ToolRegistry
    llm: ChatModel | None = None
    user_texts: list[str] = field(default_factory=list)
    plan: ExecutionPlan | None = None
    results: list[RoleResult] = field(default_factory=list)
    discussion: list[dict[str, Any]] = field(default_factory=list)
    consensus: dict[str, Any] | None = None
    llm_calls: int = 0

    def all_calls(self) -> list[ToolCallRecord]:
        return [c for r in self.results for c in r.calls]

    def write(
        self,
        role: Role,
        template: str,
        results: list[Any],
        *,
        instruction: str = "",
        purpose: str = "advisor.role",
    ) -> Written:
        written = write_message(
            self.llm,
            role,
            template,
            results=results,
            user_texts=self.user_texts,
            question=self.question,
            instruction=instruction,
            purpose=purpose,
        )
        self.llm_calls += written.llm_calls
        return written


def role_start(role: Role) -> AppEvent:
    return AppEvent("role_start", {"role": role.key, "name": role.name, "icon": role.icon})


def run_role(role: Role, run: ChatRun, previous: list[ToolCallRecord]) -> RoleResult:
    """One role: tools → template → (LLM rewrite under the number check)."""
    state = RoleState(run.question, run.facts, run.registry, previous=list(previous))
    calls = ACTIONS[role.key](state)
    template = render(role.key, state, calls)
    context = [c.result for c in previous if c.ok] + [c.result for c in calls if c.ok]
    written = run.write(role, template, context)
    return RoleResult(role, written.text, calls, list(state.assumptions), written)


def run_standard(plan: ExecutionPlan, run: ChatRun) -> Iterator[AppEvent]:
    """``role_start`` / ``role_result`` for every role of the plan, in order."""
    previous: list[ToolCallRecord] = []
    for role in plan.roles:
        yield role_start(role)
        result = run_role(role, run, previous)
        run.results.append(result)
        previous += result.calls
        yield AppEvent("role_result", result.event_data())
