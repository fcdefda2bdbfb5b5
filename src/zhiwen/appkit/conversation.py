"""The conversation service under the names scripts and benchmarks were written against.

A turn of a conversation is :mod:`zhiwen.conversation.service`'s (load, reconcile, the
answerer's follow-up hook once, answer, stamp, keep); this module only hands its entry points
on: :func:`ask` / :func:`stream` (one turn), :func:`standalone` / :func:`standalone_of` (the
default follow-up hook, the condenser, for a request or a history).

Example::

    >>> answer = conversation.ask(answerer, AskRequest(question="要炖多久？", session_id="s1"), ctx)
    >>> answer.standalone_question
    '红烧肉要炖多久？'
"""

from __future__ import annotations

from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.conversation.model import Standalone
from zhiwen.conversation.service import ask, condensed, stream
from zhiwen.conversation.vocabulary import Vocabulary

standalone_of = condensed


def standalone(request: AskRequest, ctx: AppContext, vocabulary: Vocabulary | None = None) -> Standalone:
    """``request.question`` made standalone with ``request.history`` (unchanged without one)."""
    return condensed(request.history, request.question, ctx, vocabulary)


__all__ = ["ask", "standalone", "standalone_of", "stream"]
