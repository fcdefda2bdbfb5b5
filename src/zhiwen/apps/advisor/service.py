"""One chat turn end to end: session facts → plan → standard or discussion mode → events.

:class:`AdvisorService` holds the sessions (durable under ``ZHIWEN_HOME`` by default, keyed by
caller and id); :meth:`AdvisorService.chat` returns the turn's :class:`ChatRun` and an iterator
of :class:`AppEvent` (``facts``, then ``role_start``, ``role_result``, ``discussion`` …, then
``done``) that fills the run as it is consumed — the SSE route, the terminal chat and
:meth:`AdvisorApp.ask` all go through it. The ``facts`` event (and the first line of the answer)
echoes the facts used — 「按总价480万元、首付两成（96万元）、贷款30年、利率3.1%、首套计算：」 — so a
misreading is visible and can be corrected in the next turn; the session is saved at ``done``.

Example::

    >>> service = AdvisorService()
    >>> question = "总价300万，首付三成，贷款30年，利率3.1%，月供多少？"
    >>> run, events = service.chat(ctx, question, session_id="s1")
    >>> [e.type for e in events][-1]
    'done'
    >>> run.results[0].calls[0].result["monthly_payment"]
    8967.34
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zhiwen.answer.events import AppEvent, collect_stream
from zhiwen.answer.model import Answer, Citation
from zhiwen.apps.advisor.discussion import run_discussion
from zhiwen.apps.advisor.facts import extract_facts, facts_echo
from zhiwen.apps.advisor.plan import plan_execution
from zhiwen.apps.advisor.roles import Role, load_roles, match_keywords
from zhiwen.apps.advisor.sessions import AdvisorSessions, DurableSessionStore, Session
from zhiwen.apps.advisor.standard import ChatRun, run_standard
from zhiwen.apps.advisor.tools import build_registry
from zhiwen.documents import Chunk, SearchHit
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext

MODES = ("standard", "discussion")


class AdvisorService:
    def __init__(self, sessions: AdvisorSessions | None = None) -> None:
        self.sessions: AdvisorSessions = sessions or DurableSessionStore()

    def chat(
        self,
        ctx: AppContext | None,
        message: str,
        *,
        session_id: str | None = None,
        mode: str = "standard",
        history: Sequence[Mapping[str, Any]] = (),
        caller: str = "",
    ) -> tuple[ChatRun, Iterator[AppEvent]]:
        """Plan the turn now (cheap) and return its run and the lazy event stream.

        ``history`` (a client that holds the conversation) is the truth: the stored session is
        kept when it agrees with it, else started again from it. ``caller`` binds the session.
        """
        if mode not in MODES:
            raise InvalidParameter(
                f"unknown mode {mode!r}", message=f"mode 取值无效，可选：{'、'.join(MODES)}"
            )
        if ctx is not None:
            self.sessions.bind(ctx.settings.home)
        session = self.sessions.get(session_id or uuid.uuid4().hex, caller)
        if history:
            session.follow(history)
        roles = load_roles()
        carry = carried_roles(session, message, roles)
        facts = session.add_user(message)
        llm = ctx.llm if ctx is not None else None
        run = ChatRun(message, facts, build_registry(ctx), llm=llm, user_texts=session.user_texts())
        plan = plan_execution(message, roles, llm=llm, mode=mode, carry=carry)
        session.roles = [r.key for r in plan.roles if not r.synthesis]
        run.plan = plan
        run.llm_calls += plan.llm_calls
        return run, self._events(run, session)

    def _events(self, run: ChatRun, session: Session) -> Iterator[AppEvent]:
        assert run.plan is not None
        echo = facts_echo(run.facts)
        if echo:
            yield AppEvent("facts", {"text": echo, "facts": run.facts.known()})
        steps = (
            run_discussion(run.plan, run) if run.plan.mode == "discussion" else run_standard(run.plan, run)
        )
        yield from steps
        session.add_assistant(answer_text(run))
        self.sessions.save(session)
        answer = to_answer(run, session.id)
        yield AppEvent.done(
            answer,
            {
                "session_id": session.id,
                "plan": run.plan.to_dict(),
                "llm_calls": run.llm_calls,
                "facts": answer.data["facts"],
                "facts_text": echo,
                "standalone_question": answer.standalone_question,
            },
        )

    def answer(self, ctx: AppContext | None, message: str, **kwargs: Any) -> tuple[ChatRun, Answer]:
        run, events = self.chat(ctx, message, **kwargs)
        return run, collect_stream(events)


def carried_roles(session: Session, message: str, roles: list[Role]) -> list[str]:
    """The roles to re-run for a follow-up that restates a fact: the last answer's (or, for a
    conversation the client held, the roles its earlier questions asked for)."""
    earlier = session.user_texts()
    if not earlier or not extract_facts(message).known():
        return []
    if session.roles:
        return list(session.roles)
    return [r.key for text in earlier for r, _ in match_keywords(text, roles) if not r.synthesis]


def answer_text(run: ChatRun) -> str:
    """The facts used (one line), then the role messages as readable sections ("### 💰 财务顾问\\n…")."""
    echo = facts_echo(run.facts)
    parts: list[str] = [echo] if echo else []
    if run.discussion:
        lines = [
            f"- **{m['from_name']} → {m['to_name']}**（第{m['round']}轮）：{m['content']}"
            for m in run.discussion
        ]
        parts.append("### 💬 专家讨论\n\n" + "\n".join(lines))
    parts += [f"### {r.role.icon} {r.role.name}\n{r.content}" for r in run.results]
    return "\n\n".join(parts)


def citations(run: ChatRun) -> list[Citation]:
    out: list[Citation] = []
    seen: set[str] = set()
    for call in run.all_calls():
        if call.name not in ("search_policy", "search_faq") or not call.ok:
            continue
        for hit in call.result.get("hits", []):
            if hit["id"] in seen:
                continue
            seen.add(hit["id"])
            chunk = Chunk(
                id=hit["id"],
                doc_id=hit["id"].split("#")[0],
                text=hit["text"],
                title=hit["title"],
                metadata={k: hit[k] for k in ("city", "source", "article") if hit.get(k)},
            )
            out.append(
                Citation.from_hit(SearchHit(chunk=chunk, score=hit["score"]), kb=call.result.get("kb"))
            )
    return out


def understood(run: ChatRun) -> str:
    """The question as the advisor understood it: the facts used, then the question."""
    echo = facts_echo(run.facts)
    return f"{echo}{run.question}" if echo else run.question


def to_answer(run: ChatRun, session_id: str) -> Answer:
    written = [r.written for r in run.results if r.written is not None]
    llm_used = any(w.llm_used for w in written)
    reasons = [w.fallback_reason for w in written if w.fallback_reason]
    params = next(
        (c.result.get("params") or {} for c in run.all_calls() if c.name == "search_policy" and c.ok), {}
    )
    return Answer(
        answer=answer_text(run),
        citations=citations(run),
        llm_used=llm_used,
        extractive_reason=None if llm_used else (reasons[0] if reasons else "no_llm"),
        params=params,
        session_id=session_id,
        standalone_question=understood(run),
        data={
            "session_id": session_id,
            "plan": run.plan.to_dict() if run.plan else None,
            "roles": [r.event_data() for r in run.results],
            "tool_calls": [c.to_dict() for c in run.all_calls()],
            "discussion": run.discussion,
            "consensus": run.consensus,
            "facts": run.facts.known(),
            "llm_calls": run.llm_calls,
        },
    )
