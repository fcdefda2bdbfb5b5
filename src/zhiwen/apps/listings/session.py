"""A listings conversation kept in its session: every question its user asked, beyond the window.

The session (:class:`~zhiwen.appkit.sessions.ConversationMemory`) keeps the last few messages; a
long refinement would lose its first question (the city, the budget) when it falls out of that
window. The app's state of the session keeps the user's questions (up to :data:`MAX_ASKED`), and
the earlier turns are read from it whenever the history the request carries is their tail, so
the constraints merge over the whole conversation. A history that is not their tail (a client
that sent its own, another conversation) is read as sent.

Example::

    >>> state = remember({}, ["上海浦东800万以内的两房"], "要南北通透的")
    >>> earlier_questions(state, ["要南北通透的"])
    ['上海浦东800万以内的两房', '要南北通透的']
    >>> earlier_questions(state, ["徐汇两房"])
    ['徐汇两房']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

STATE_KEY = "listings"
MAX_ASKED = 50


def earlier_questions(state: Mapping[str, Any], earlier: Sequence[str]) -> list[str]:
    """The conversation's earlier questions: the stored ones when ``earlier`` is their tail."""
    mine = state.get(STATE_KEY)
    asked = list(mine.get("asked") or []) if isinstance(mine, Mapping) else []
    if earlier and len(asked) > len(earlier) and asked[len(asked) - len(earlier) :] == list(earlier):
        return asked
    return list(earlier)


def remember(state: Mapping[str, Any], earlier: Sequence[str], question: str) -> dict[str, Any]:
    """The session's state after ``question`` (other apps' keys kept)."""
    asked = [*earlier, question][-MAX_ASKED:]
    return {**state, STATE_KEY: {"asked": asked}}


__all__ = ["MAX_ASKED", "STATE_KEY", "earlier_questions", "remember"]
