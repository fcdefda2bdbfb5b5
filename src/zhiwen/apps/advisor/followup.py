"""An advisor question in its conversation: the app's follow-up hook.

The advisor reads a conversation as facts (总价, 首付, 年限, 利率, 面积 …): a follow-up
(「那如果首付150万呢？」「年限改成30年」) changes only what it restates
(:func:`~.facts.merge_facts`), and every number is computed again from the merged facts. The
facts are the app's state in the session, so they outlive the stored turns; a conversation the
session does not hold (the client sent its own history, or the session was started again) reads
them from the history. A follow-up that restates a fact re-runs the roles of the last answer
(the state's ``roles``), so every number is new.

Example::

    >>> found = resolve_advisor(AskRequest(question="年限改成30年"), {"facts": {"price": 2.5e6, …}})
    >>> found.question
    '按总价250万元、首付35%（87.5万元）、贷款30年、利率3%计算：年限改成30年'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zhiwen.appkit import AskRequest, Standalone
from zhiwen.apps.advisor.facts import UserFacts, extract_facts, facts_echo, facts_from_messages, merge_facts
from zhiwen.apps.advisor.roles import Role, load_roles, match_keywords
from zhiwen.conversation.model import user_questions

#: how a follow-up was read: the conversation's facts merged with the question's
METHOD = "facts"


def carried_roles(
    earlier: Sequence[str], last_roles: Sequence[str], message: str, roles: list[Role]
) -> list[str]:
    """The roles to re-run for a follow-up that restates a fact: the last answer's (or, for a
    conversation the client held, the roles its earlier questions asked for)."""
    if not earlier or not extract_facts(message).known():
        return []
    if last_roles:
        return list(last_roles)
    return [r.key for text in earlier for r, _ in match_keywords(text, roles) if not r.synthesis]


def understood(facts: UserFacts, question: str) -> str:
    """The question as the advisor understood it: the facts used, then the question."""
    echo = facts_echo(facts)
    return f"{echo}{question}" if echo else question


def resolve_advisor(request: AskRequest, state: Mapping[str, Any]) -> Standalone:
    """The conversation's facts with this question's merged in (``carried["facts"]``), the roles
    to re-run (``carried["carry"]``), and the facts and last roles as the state to keep."""
    stored = state.get("facts")
    before = UserFacts.model_validate(stored) if stored else facts_from_messages(request.history)
    last_roles = [str(r) for r in state.get("roles") or []]
    earlier = user_questions(request.history)
    carry = carried_roles(earlier, last_roles, request.question, load_roles())
    facts = merge_facts(before, extract_facts(request.question))
    kept = {"facts": facts.model_dump(mode="json"), "roles": last_roles}
    return Standalone(
        understood(facts, request.question),
        request.question,
        METHOD,
        carried={"facts": facts, "carry": carry},
        state=kept,
    )


__all__ = ["carried_roles", "resolve_advisor", "understood"]
