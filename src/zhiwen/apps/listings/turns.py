"""A listings question in its conversation: the app's follow-up hook.

A property search is refined turn by turn (「要南北通透的」「预算放宽到700万」「换成普陀」), so a
follow-up is read by merging the constraints of every question the user asked
(:func:`~.followup.understand`), not by the condenser. The session keeps the questions asked (up
to :data:`MAX_ASKED`) as the app's state — the stored turns are only the last few messages, and a
long refinement would otherwise lose its first question (the city, the budget) — so the merge
covers the whole conversation. The conversation service has already reconciled the session with
the client's history, so the state and the history tell one conversation: the longer of them is
the whole of it.

Example::

    >>> state = {"asked": ["上海浦东800万以内的两房", "要南北通透的"]}
    >>> conversation_questions(state, [{"role": "user", "content": "要南北通透的"}])
    ['上海浦东800万以内的两房', '要南北通透的']
    >>> conversation_questions({}, [{"role": "user", "content": "徐汇两房"}])
    ['徐汇两房']
    >>> found = resolve_listings(AskRequest(question="预算放宽到700万", session_id="s1"), state, ctx, service)
    ... # doctest: +SKIP
    >>> found.question  # doctest: +SKIP
    '上海浦东新区 700万以内 2室 南北通透'
    >>> found.state["asked"][-1]  # doctest: +SKIP
    '预算放宽到700万'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zhiwen.appkit import AppContext, AskRequest, Standalone
from zhiwen.apps.listings.followup import understand
from zhiwen.apps.listings.service import ListingsService
from zhiwen.conversation.model import user_questions

MAX_ASKED = 50
#: how a follow-up was read: the constraints of the conversation merged into one request
METHOD = "constraints"


def conversation_questions(state: Mapping[str, Any], history: list[dict[str, Any]]) -> list[str]:
    """The questions asked before this one: the stored ones, or the history's when it holds more."""
    asked = [str(q) for q in state.get("asked") or []]
    sent = user_questions(history)
    return asked if len(asked) > len(sent) else sent


def resolve_listings(
    request: AskRequest, state: Mapping[str, Any], ctx: AppContext, service: ListingsService
) -> Standalone:
    """The question understood with every earlier question's constraints merged: the merged
    request as one sentence (the question itself when nothing carried over), the
    :class:`~.followup.Dialogue` in ``carried["dialogue"]`` for the answer, and the questions
    asked so far as the state to keep. ``conversation.enabled = false``: every question as asked."""
    question = request.question.strip()
    if not ctx.settings.conversation.enabled:
        dialogue = understand(question, (), kb_cities=service.kb_cities())
        return Standalone(question, question, carried={"dialogue": dialogue}, state=dict(state))
    earlier = conversation_questions(state, request.history)
    dialogue = understand(question, earlier, kb_cities=service.kb_cities())
    method = METHOD if dialogue.follow_up else "unchanged"
    kept = {"asked": [*earlier, question][-MAX_ASKED:]}
    return Standalone(dialogue.standalone, question, method, carried={"dialogue": dialogue}, state=kept)


__all__ = ["MAX_ASKED", "conversation_questions", "resolve_listings"]
