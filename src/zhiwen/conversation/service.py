"""The conversation service: one turn of a conversation, the same for every interface and answerer.

REST routes, SSE, the OpenAI front door and the CLI call :func:`ask` (or :func:`stream`) once
per question. A turn goes:

1. **load** the session once, when the request names one (:class:`~.store.SessionStore`, bound to
   the caller);
2. **reconcile** it with the history the client sent (:func:`~.reconcile.reconcile`: the
   client's is the truth; without one, the stored turns are the history);
3. the answerer's follow-up hook **resolves** the question ONCE (:meth:`FollowUps.resolve`: the
   condenser by default, :func:`condensed`; an app merges its own state — constraints, facts);
4. the answerer **answers** from that :class:`~.model.Standalone`;
5. the service **stamps** ``standalone_question`` (what was searched, when the question followed
   a conversation) and ``session_id`` on the answer and **stores** the turn once (the turns, and
   the answerer's state as :attr:`Standalone.state` holds it).

The service names no app and no interface: what it needs of them is declared here as Protocols
(:class:`TurnContext`, :class:`FollowUps`, :class:`Answerer`); the app kit's ``BaseApp`` and
``AppContext`` fulfil them.

Example::

    >>> answer = ask(answerer, AskRequest(question="要炖多久？", kb="recipes", session_id="s1"), ctx)
    >>> answer.standalone_question, answer.session_id
    ('红烧肉要炖多久？', 's1')
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer
from zhiwen.config import Settings
from zhiwen.conversation.condense import condense
from zhiwen.conversation.model import Standalone, user_questions
from zhiwen.conversation.reconcile import Reconciled, reconcile
from zhiwen.conversation.request import AskRequest
from zhiwen.conversation.store import Session, SessionStore, memory_for, turn_messages
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.llm.base import ChatModel
from zhiwen.metrics import CONDENSED_QUESTIONS

log = logging.getLogger(__name__)


class TurnContext(Protocol):
    """What a turn needs of the context it is answered in: the settings (the conversation
    section, the home whose sessions it reads) and the LLM, or None."""

    @property
    def settings(self) -> Settings: ...

    @property
    def llm(self) -> ChatModel | None: ...


Ctx = TypeVar("Ctx", bound=TurnContext, contravariant=True)
C = TypeVar("C", bound=TurnContext)


class FollowUps(Protocol[Ctx]):
    """The follow-up hook: a question read in its conversation, once per turn.

    ``request.history`` is the conversation so far (reconciled); ``state`` is what this answerer
    kept of it in the session ({} without a session). The returned ``Standalone.state`` is what
    it keeps after this turn (the service stores it).
    """

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: Ctx) -> Standalone: ...


class Answerer(FollowUps[Ctx], Protocol[Ctx]):
    """Who answers a turn: its follow-up hook, and an answer from the resolved question."""

    @property
    def session_key(self) -> str:
        """The key its state is kept under in a session."""
        ...

    def answer(self, request: AskRequest, question: Standalone, ctx: Ctx) -> Answer: ...

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: Ctx) -> Iterator[AppEvent]: ...


def condensed(
    history: Sequence[Mapping[str, Any]],
    question: str,
    ctx: TurnContext,
    vocabulary: Vocabulary | None = None,
) -> Standalone:
    """The default follow-up hook: ``question`` made standalone with ``history`` by the condenser
    (:func:`~.condense.condense`: the offline rules, and one bounded LLM call when the settings
    allow it), with the answerer's entities. Unchanged when ``conversation.enabled`` is off."""
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


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn under way: the request as answered (its history reconciled), the resolved
    question, and where the turn is kept."""

    request: AskRequest
    question: Standalone
    conversation: Reconciled
    key: str
    store: SessionStore | None

    @property
    def standalone_question(self) -> str | None:
        """What was searched when the question followed a conversation or was read anew (the
        Answer's convention: None is the question as asked)."""
        followed = bool(user_questions(self.request.history)) or self.question.changed
        return self.question.question if followed else None

    def stamped(self, answer: Answer) -> Answer:
        update = {"standalone_question": self.standalone_question, "session_id": self.request.session_id}
        return answer.model_copy(update=update)

    def keep(self, answer: Answer) -> None:
        """Store the turn once: the history it followed, this question and answer, and the
        answerers' states (this one's as the turn left it; the others' as they were)."""
        if self.store is None or not self.request.session_id:
            return
        states = dict(self.conversation.session.states) if self.conversation.kept else {}
        states[self.key] = dict(self.question.state)
        said = (
            {"role": "user", "content": self.request.question},
            {"role": "assistant", "content": answer.answer},
        )
        turns = turn_messages(self.request.history) + said
        self.store.save(self.request.caller, self.request.session_id, Session(turns, states))

    def close(self, answer: Answer) -> Answer:
        answer = self.stamped(answer)
        self.keep(answer)
        return answer

    def closing(self, events: Iterator[AppEvent]) -> Iterator[AppEvent]:
        """The answer's events; the closing one stamped, and the turn kept when it comes."""
        extra = {"standalone_question": self.standalone_question, "session_id": self.request.session_id}
        extra = {k: v for k, v in extra.items() if v is not None}
        for event in events:
            if event.answer is None:
                yield event
                continue
            answer = self.close(event.answer)
            yield AppEvent.done(answer, {**event.data, **extra})


def begin(answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None) -> Turn:
    """Steps 1–3: the session read once, reconciled, the question resolved once."""
    stored: Session | None = None
    if request.session_id:
        store = store if store is not None else memory_for(ctx.settings.home)
        stored = store.load(request.caller, request.session_id)
    conversation = reconcile(stored, request.history)
    if not conversation.kept:
        log.info("session %s disagrees with the client's history: started again from it", request.session_id)
    request = request.model_copy(update={"history": conversation.history})
    key = answerer.session_key
    question = answerer.resolve(request, conversation.state(key), ctx)
    return Turn(request, question, conversation, key, store)


def ask(answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None) -> Answer:
    """One answer in its conversation (``store``: the home's sessions by default)."""
    turn = begin(answerer, request, ctx, store)
    return turn.close(answerer.answer(turn.request, turn.question, ctx))


def stream(
    answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None
) -> Iterator[AppEvent]:
    """:func:`ask` as events; the turn is kept when the stream closes with its answer.

    The turn begins here and the answerer's stream starts here (their errors are the caller's
    to turn into an HTTP status); only reading the events goes on in the returned iterator.
    """
    turn = begin(answerer, request, ctx, store)
    return turn.closing(answerer.answer_stream(turn.request, turn.question, ctx))


__all__ = ["Answerer", "FollowUps", "Turn", "TurnContext", "ask", "begin", "condensed", "stream"]
