"""The conversation service: one turn of a conversation, the same for every interface and answerer.

REST routes, SSE, the OpenAI front door and the CLI call :func:`ask` (or :func:`stream`) once
per question. A turn goes:

1. **load** the session once, when the request names one (:class:`~.store.SessionStore`, bound to
   the caller);
2. **reconcile** it with the history the client sent (:func:`~.reconcile.reconcile`: the
   client's is the truth; without one, the stored turns are the history);
3. the answerer's follow-up hook **resolves** the question ONCE (:meth:`FollowUps.resolve`: the
   condenser by default, :func:`condensed`; an app merges its own state — constraints, facts);
4. the **FAQ step** (:mod:`.faq`): when the KB's FAQ answers the standalone question, that
   entry's answer word for word is the answer (no answerer, no LLM); a near miss keeps its
   closest questions as ``suggestions``;
5. else the answerer **answers** from that :class:`~.model.Standalone`;
6. the service **stamps** the answer — ``answer_id`` (one per answer), ``answer_type``
   (:func:`~zhiwen.answer.model.answer_type_of`), ``suggestions``, ``standalone_question`` (what
   was searched, when the question followed a conversation) and ``session_id`` — **stores** the
   turn once (the turns, and the answerer's state as :attr:`Standalone.state` holds it), and
   **records** it in the context's question log (:mod:`.record`: latency, and the LLM calls and
   tokens of the whole turn, tallied by :mod:`zhiwen.llm.usage`).

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
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from zhiwen.answer.events import AppEvent, events_of
from zhiwen.answer.model import Answer, answer_type_of
from zhiwen.config import Settings
from zhiwen.conversation.condense import condense
from zhiwen.conversation.faq import FAQCheck, check_faq, faq_answer
from zhiwen.conversation.model import Standalone, user_questions
from zhiwen.conversation.reconcile import Reconciled, reconcile
from zhiwen.conversation.record import GENERIC_APP, QuestionRecorder, logged_question
from zhiwen.conversation.request import AskRequest
from zhiwen.conversation.store import Session, SessionStore, memory_for, turn_messages
from zhiwen.conversation.vocabulary import Vocabulary
from zhiwen.llm.base import ChatModel
from zhiwen.llm.usage import LLMUsage, tallying
from zhiwen.metrics import CONDENSED_QUESTIONS
from zhiwen.questionlog.model import new_answer_id

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase

log = logging.getLogger(__name__)


class TurnContext(Protocol):
    """What a turn needs of the context it is answered in: the settings (the conversation
    section, the home whose sessions it reads), the LLM or None, the KB opener (the FAQ step
    reads the KB's entries through it, so a scoped key's limits hold), and where answered
    questions are recorded (None: nowhere)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def llm(self) -> ChatModel | None: ...

    @property
    def open_kb(self) -> Callable[[str], KnowledgeBase]: ...

    @property
    def question_log(self) -> QuestionRecorder | None: ...


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

    @property
    def app_name(self) -> str | None:
        """The app the question log files its turns under (None: generic QA)."""
        ...

    @property
    def default_kb(self) -> str | None:
        """The KB it answers from when the request names none (the question log files the
        turn under it)."""
        ...

    def faq_kb(self, request: AskRequest) -> str | None:
        """The KB whose FAQ may answer ``request`` word for word (None: no FAQ step)."""
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
    question, where the turn is kept, what the KB's FAQ said of it, and what it is logged as
    (KB, app, when it started, the LLM calls it made so far)."""

    request: AskRequest
    question: Standalone
    conversation: Reconciled
    key: str
    store: SessionStore | None
    kb: str = ""
    app: str = GENERIC_APP
    faq: FAQCheck | None = None
    usage: LLMUsage | None = None
    started: float = 0.0
    recorder: QuestionRecorder | None = None
    top_sources: int = 5

    @property
    def standalone_question(self) -> str | None:
        """What was searched when the question followed a conversation or was read anew (the
        Answer's convention: None is the question as asked)."""
        followed = bool(user_questions(self.request.history)) or self.question.changed
        return self.question.question if followed else None

    def faq_answer(self) -> Answer | None:
        """The FAQ entry's answer when the KB's FAQ answers this turn (step 4), else None."""
        return None if self.faq is None else faq_answer(self.faq)

    def stamped(self, answer: Answer) -> Answer:
        """``answer`` with its id (kept when the answerer set one), its type, the near-miss
        suggestions, the standalone question and the session id."""
        update: dict[str, Any] = {
            "standalone_question": self.standalone_question,
            "session_id": self.request.session_id,
            "answer_id": answer.answer_id or new_answer_id(),
            "answer_type": answer_type_of(answer),
        }
        if self.faq is not None and not answer.suggestions and answer.faq is None:
            update["suggestions"] = self.faq.suggestions
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

    def record(self, answer: Answer) -> None:
        """Hand the answered question to the question log (queued; never waits, never raises)."""
        if self.recorder is None:
            return
        latency_ms = (time.perf_counter() - self.started) * 1000.0 if self.started else 0.0
        q = logged_question(
            answer,
            kb=self.kb,
            app=self.app,
            request=self.request,
            latency_ms=latency_ms,
            usage=self.usage or LLMUsage(),
            top_sources=self.top_sources,
        )
        self.recorder.record(q)

    def close(self, answer: Answer) -> Answer:
        answer = self.stamped(answer)
        self.keep(answer)
        self.record(answer)
        return answer

    def closing(self, events: Iterable[AppEvent]) -> Iterator[AppEvent]:
        """The answer's events; the closing one stamped, and the turn kept and recorded when it
        comes. Each event is produced inside the turn's LLM tally (a stream is read wherever
        its consumer reads it)."""
        for event in tallied(events, self.usage):
            if event.answer is None:
                yield event
                continue
            answer = self.close(event.answer)
            extra = {"standalone_question": answer.standalone_question, "session_id": answer.session_id}
            extra = {k: v for k, v in extra.items() if v is not None}
            yield AppEvent.done(answer, {**event.data, **extra, **answer.identity_fields()})


def tallied(events: Iterable[AppEvent], usage: LLMUsage | None) -> Iterator[AppEvent]:
    """``events``, each one produced with ``usage`` as the open LLM tally."""
    it = iter(events)
    try:
        while True:
            with tallying(usage):
                event = next(it, None)
            if event is None:
                return
            yield event
    finally:
        if isinstance(it, Generator):  # a stream stopped early: let it clean up now
            it.close()


def begin(answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None) -> Turn:
    """Steps 1–4: the session read once, reconciled, the question resolved once, the KB's FAQ
    asked (the turn's clock and LLM tally start here)."""
    started = time.perf_counter()
    usage = LLMUsage()
    with tallying(usage):
        stored: Session | None = None
        if request.session_id:
            store = store if store is not None else memory_for(ctx.settings.home)
            stored = store.load(request.caller, request.session_id)
        conversation = reconcile(stored, request.history)
        if not conversation.kept:
            log.info(
                "session %s disagrees with the client's history: started again from it", request.session_id
            )
        request = request.model_copy(update={"history": conversation.history})
        key = answerer.session_key
        question = answerer.resolve(request, conversation.state(key), ctx)
        kb = request.kb or answerer.default_kb
        faq = check_faq(ctx.open_kb, answerer.faq_kb(request), question.question, ctx.settings.faq)
    return Turn(
        request,
        question,
        conversation,
        key,
        store,
        kb=kb or "",
        app=answerer.app_name or GENERIC_APP,
        faq=faq,
        usage=usage,
        started=started,
        recorder=ctx.question_log,
        top_sources=ctx.settings.log.top_sources,
    )


def ask(answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None) -> Answer:
    """One answer in its conversation (``store``: the home's sessions by default)."""
    turn = begin(answerer, request, ctx, store)
    answer = turn.faq_answer()
    if answer is None:
        with tallying(turn.usage):
            answer = answerer.answer(turn.request, turn.question, ctx)
    return turn.close(answer)


def stream(
    answerer: Answerer[C], request: AskRequest, ctx: C, store: SessionStore | None = None
) -> Iterator[AppEvent]:
    """:func:`ask` as events; the turn is kept when the stream closes with its answer.

    The turn begins here and the answerer's stream starts here (their errors are the caller's
    to turn into an HTTP status); only reading the events goes on in the returned iterator.
    """
    turn = begin(answerer, request, ctx, store)
    direct = turn.faq_answer()
    if direct is not None:
        return turn.closing(events_of(direct))
    with tallying(turn.usage):
        events = answerer.answer_stream(turn.request, turn.question, ctx)
    return turn.closing(events)


__all__ = ["Answerer", "FollowUps", "Turn", "TurnContext", "ask", "begin", "condensed", "stream"]
