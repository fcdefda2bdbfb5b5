"""The one rule between a stored session and the history a client sends: the client's is the truth.

A session keeps only the last turns, so they must be the **tail** of the client's earlier user
turns. A stored turn the client does not have — a regenerated or edited answer, a new chat that
opens under the same id — means the session is another conversation now: its turns and every
answerer's state are dropped, and the conversation goes on from what the client sent. A client
that sends no history continues the stored session as it is.

Example::

    >>> stored = Session(turns=({"role": "user", "content": "问题一"},))
    >>> sent = [{"role": "user", "content": "问题一"}, {"role": "assistant", "content": "答"}]
    >>> reconcile(stored, sent).kept
    True
    >>> reconcile(stored, [{"role": "user", "content": "问题二"}]).kept       # another conversation
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiwen.conversation.model import user_questions
from zhiwen.conversation.store import Session


@dataclass(frozen=True, slots=True)
class Reconciled:
    """The conversation a turn goes on from: its history, and whether the stored session (its
    answerers' states) still belongs to it."""

    history: list[dict[str, Any]]
    session: Session = field(default_factory=Session)
    kept: bool = True  # False: the stored session disagreed with the client and was dropped

    def state(self, key: str) -> Mapping[str, Any]:
        """An answerer's own state in the session ({} when none, or when it was dropped)."""
        return self.session.states.get(key) or {}


def agrees(stored: Sequence[str], client: Sequence[str]) -> bool:
    """The stored user turns are the tail of the client's (compared without outer spaces)."""
    mine = [t.strip() for t in stored]
    theirs = [t.strip() for t in client]
    return len(mine) <= len(theirs) and mine == theirs[len(theirs) - len(mine) :]


def reconcile(stored: Session | None, client: Sequence[Mapping[str, Any]]) -> Reconciled:
    """The history to answer from: the client's when it sent one (the session kept only when it
    agrees), else the stored turns."""
    sent = [dict(m) for m in client]
    if stored is None:
        return Reconciled(sent)
    if not sent:
        return Reconciled([dict(m) for m in stored.turns], stored)
    if agrees(stored.user_texts(), user_questions(sent)):
        return Reconciled(sent, stored)
    return Reconciled(sent, kept=False)


__all__ = ["Reconciled", "agrees", "reconcile"]
