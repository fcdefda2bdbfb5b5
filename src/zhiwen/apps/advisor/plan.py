"""Intent recognition and the execution plan: keywords first, the LLM only as a fallback.

:func:`plan_execution` picks the roles whose trigger keywords occur in the question; when none
match and an LLM is configured, the LLM classifies the question (one call); otherwise the
购房顾问 answers alone. The synthesis role always runs last.

Example::

    >>> plan = plan_execution("总价300万，首付三成，月供多少？", load_roles())
    >>> [r.name for r in plan.roles], plan.mode, plan.source
    (['财务顾问', '购房顾问'], 'sequential', 'keywords')
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zhiwen.apps.advisor.roles import Role, match_keywords, synthesis_role
from zhiwen.errors import LLMError
from zhiwen.llm import llm_purpose
from zhiwen.llm.base import ChatModel

log = logging.getLogger(__name__)

PlanMode = Literal["sequential", "discussion"]


@dataclass(slots=True)
class ExecutionPlan:
    """Roles in execution order, how they run, and why (intent recognition and the execution plan)."""

    roles: list[Role]
    mode: PlanMode
    reason: str
    source: str = "keywords"  # keywords | llm | conversation | default
    llm_calls: int = 0  # 1 when the LLM was asked to classify

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": [r.key for r in self.roles],
            "role_names": [r.name for r in self.roles],
            "mode": self.mode,
            "reason": self.reason,
            "source": self.source,
        }


_CLASSIFY_PROMPT = """你是购房咨询的意图分类器。可选角色：
{catalogue}
请判断回答用户问题需要哪些角色，只输出 JSON：{{"roles": ["角色key", ...], "reason": "一句话理由"}}。"""


def classify_with_llm(question: str, roles: Sequence[Role], llm: ChatModel) -> tuple[list[Role], str] | None:
    """The roles the LLM picks for ``question``; None when it fails or picks nothing valid."""
    specialists = [r for r in roles if not r.synthesis]
    catalogue = "\n".join(f"- {r.key}：{r.name}（{'、'.join(r.keywords[:8])}）" for r in specialists)
    messages = [
        {"role": "system", "content": _CLASSIFY_PROMPT.format(catalogue=catalogue)},
        {"role": "user", "content": question},
    ]
    try:
        with llm_purpose("advisor.plan"):
            data = llm.chat_json(messages, temperature=0.0)
    except LLMError as exc:
        log.warning("advisor: LLM intent classification failed (%s)", exc)
        return None
    except Exception:  # a broken adapter must not take the answer down
        log.exception("advisor: LLM intent classification raised")
        return None
    keys = data.get("roles") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        return None
    chosen = [r for r in specialists if r.key in {str(k) for k in keys}]
    if not chosen:
        return None
    return chosen, str(data.get("reason") or "").strip()


def plan_execution(
    question: str,
    roles: Sequence[Role],
    *,
    llm: ChatModel | None = None,
    mode: str = "standard",
    carry: Sequence[str] = (),
) -> ExecutionPlan:
    """The plan for ``question``: matched roles in order, the synthesis role last.

    ``carry``: the roles of the conversation's last answer, re-run when a follow-up restates a
    fact (「不是二套，是首套」 recomputes the loan as well as the taxes), so every number is new.
    """
    final = synthesis_role(roles)
    if mode == "discussion":
        team = [r for r in roles if not r.synthesis] + [final]
        return ExecutionPlan(
            team,
            "discussion",
            "深度分析：政策专家、市场分析师、财务顾问多轮协商，购房顾问总结共识",
            "default",
        )
    matched = match_keywords(question, roles)
    specialists = [r for r, _ in matched if not r.synthesis]
    carried = [r for r in roles if r.key in carry and not r.synthesis and r not in specialists]
    if matched:
        reason = "关键词匹配：" + "；".join(f"{r.name}（{'、'.join(hits[:4])}）" for r, hits in matched)
        source = "keywords"
    elif carried:
        reason, source = "追问更新了已知信息", "conversation"
    else:
        picked = classify_with_llm(question, roles, llm) if llm is not None else None
        if picked is not None:
            specialists, why = picked
            reason, source = f"LLM 意图分类：{why or '、'.join(r.name for r in specialists)}", "llm"
        else:
            reason, source = "未匹配到专项角色，由购房顾问直接解答", "default"
    if carried:
        reason += f"；重新计算上一轮的{'、'.join(r.name for r in carried)}"
    ordered = sorted([*specialists, *carried], key=lambda r: r.order)
    if ordered:
        reason += f"；按 {' → '.join(r.name for r in ordered)} 的顺序执行，{final.name}汇总"
    asked_llm = int(not matched and not carried and llm is not None)
    return ExecutionPlan([*ordered, final], "sequential", reason, source, llm_calls=asked_llm)
