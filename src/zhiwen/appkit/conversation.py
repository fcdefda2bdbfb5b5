"""Conversations for every answerer: the one place a follow-up becomes standalone, and the one
place a session's turns are kept.

* :func:`standalone` — what an answerer calls with its own entities (a KB's titles, an app's
  gazetteer): the engine's conversation stage (:func:`zhiwen.conversation.condense.condense`) with
  the context's LLM, if any, and the settings' deadline. Counted by method in ``/metrics``.
* :func:`ask` / :func:`stream` — what the interfaces call (REST, the OpenAI front door, the CLI):
  a request with a ``session_id`` and no history gets the session's turns
  (:class:`~zhiwen.appkit.sessions.ConversationMemory`, bound to the caller), the answerer
  answers, and the turn is kept. A client that sends its history (any chat client) is answered
  from what it sent.

Example::

    >>> answer = conversation.ask(answerer, AskRequest(question="要炖多久？", session_id="s1"), ctx)
    >>> answer.standalone_question
    '红烧肉要炖多久？'
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer
from zhiwen.appkit.app import AppContext, AskRequest, BaseApp
from zhiwen.appkit.sessions import memory_for
from zhiwen.conversation.condense import condense
from zhiwen.conversation.model import Standalone
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.metrics import CONDENSED_QUESTIONS

log = logging.getLogger(__name__)


def standalone(request: AskRequest, ctx: AppContext, vocabulary: Vocabulary | None = None) -> Standalone:
    """``request.question`` made standalone with ``request.history`` (unchanged without one)."""
    return standalone_of(request.history, request.question, ctx, vocabulary)


def standalone_of(
    history: Sequence[Mapping[str, Any]],
    question: str,
    ctx: AppContext,
    vocabulary: Vocabulary | None = None,
) -> Standalone:
    """``question`` made standalone with ``history`` (OpenAI messages), as the settings say."""
    cfg = ctx.settings.conversation
    if not cfg.enabled:
        return Standalone.unchanged(question)
    found = condense(
        history,
        question,
        vocabulary=vocabulary,
        llm=ctx.llm if cfg.llm_condense else None,
        timeout_s=cfg.condense_timeout_s,
    )
    if found.changed:
        CONDENSED_QUESTIONS.labels(method=found.method).inc()
        log.info("follow-up made standalone (%s): %r → %r", found.method, found.original, found.question)
    return found


def with_standalone(events: Iterator[AppEvent], question: str) -> Iterator[AppEvent]:
    """A stream whose closing answer (and ``done`` frame) says what was searched."""
    for event in events:
        if event.answer is not None:
            answer = event.answer.model_copy(update={"standalone_question": question})
            yield AppEvent.done(answer, {**event.data, "standalone_question": question})
        else:
            yield event


def with_history(request: AskRequest, ctx: AppContext) -> AskRequest:
    """The request with its session's turns when the client sent a ``session_id`` and no history."""
    if request.history or not request.session_id:
        return request
    turns = memory_for(ctx.settings.home).history(request.caller, request.session_id)
    return request.model_copy(update={"history": turns}) if turns else request


def remember(request: AskRequest, answer: Answer, ctx: AppContext) -> None:
    """Keep the turn in the request's session (when it names one)."""
    if not request.session_id:
        return
    memory_for(ctx.settings.home).append(
        request.caller,
        request.session_id,
        [{"role": "user", "content": request.question}, {"role": "assistant", "content": answer.answer}],
    )


def ask(answerer: BaseApp, request: AskRequest, ctx: AppContext) -> Answer:
    """One answer in its conversation: the session's history in, the turn kept."""
    request = with_history(request, ctx)
    answer = answerer.ask(request, ctx)
    remember(request, answer, ctx)
    return answer


def stream(answerer: BaseApp, request: AskRequest, ctx: AppContext) -> Iterator[AppEvent]:
    """:func:`ask` as events; the turn is kept when the stream closes with its answer.

    The answerer's stream starts here (its errors before the first event are the caller's to
    turn into an HTTP status); only reading it goes on in the returned iterator.
    """
    request = with_history(request, ctx)
    events = answerer.stream(request, ctx)

    def kept() -> Iterator[AppEvent]:
        for event in events:
            if event.answer is not None:
                remember(request, event.answer, ctx)
            yield event

    return kept()
