"""One advisor turn end to end: the resolved facts → plan → standard or discussion mode → events.

The conversation service reads the session and the app's follow-up hook resolves the question
(:mod:`.followup`: facts merged, roles to re-run); :func:`chat` plans the turn and
returns its :class:`ChatRun` and an iterator of :class:`AppEvent` (``facts``, then
``role_start``, ``role_result``, ``discussion`` …, then ``done``) that fills the run as it is
consumed — the SSE route, the terminal chat and the OpenAI front door all go through it. The
``facts`` event (and the first line of the answer) echoes the facts used — 「按总价480万元、首付两成
（96万元）、贷款30年、利率3.1%、首套计算：」 — so a misreading is visible and can be corrected in the
next turn. The plan's roles join the state the service keeps (a follow-up re-runs them).

Example::

    >>> request = AskRequest(question="总价300万，首付三成，贷款30年，利率3.1%，月供多少？")
    >>> run, events = chat(ctx, request, app.resolve(request, {}, ctx))
    >>> [e.type for e in events][-1]
    'done'
    >>> run.results[0].calls[0].result["monthly_payment"]
    8967.34
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer, Citation
from zhiwen.apps.advisor.discussion import run_discussion
from zhiwen.apps.advisor.facts import UserFacts, facts_echo
from zhiwen.apps.advisor.followup import understood
from zhiwen.apps.advisor.plan import plan_execution
from zhiwen.apps.advisor.roles import load_roles
from zhiwen.apps.advisor.standard import ChatRun, run_standard
from zhiwen.apps.advisor.tools import build_registry
from zhiwen.conversation.model import Standalone, user_questions
from zhiwen.conversation.request import AskRequest
from zhiwen.documents import Chunk, SearchHit
from zhiwen.errors import InvalidParameter

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext

MODES = ("standard", "discussion")


def chat(
    ctx: AppContext | None, request: AskRequest, question: Standalone
) -> tuple[ChatRun, Iterator[AppEvent]]:
    """Plan the turn now (cheap) and return its run and the lazy event stream.

    ``question`` is the hook's reading (:func:`~.followup.resolve_advisor`): the facts to use
    and the roles to re-run; the plan's roles are added to its ``state``.
    """
    mode = str(request.options.get("mode") or "standard")
    if mode not in MODES:
        raise InvalidParameter(f"unknown mode {mode!r}", message=f"mode 取值无效，可选：{'、'.join(MODES)}")
    facts = question.carried.get("facts")
    if not isinstance(facts, UserFacts):
        facts = UserFacts.model_validate(question.state.get("facts") or {})
    llm = ctx.llm if ctx is not None else None
    user_texts = [*user_questions(request.history), request.question]
    run = ChatRun(request.question, facts, build_registry(ctx), llm=llm, user_texts=user_texts)
    carry = question.carried.get("carry", ())
    plan = plan_execution(request.question, load_roles(), llm=llm, mode=mode, carry=carry)
    question.state["roles"] = [r.key for r in plan.roles if not r.synthesis]
    run.plan = plan
    run.llm_calls += plan.llm_calls
    return run, _events(run, request.session_id)


def _events(run: ChatRun, session_id: str | None) -> Iterator[AppEvent]:
    assert run.plan is not None
    echo = facts_echo(run.facts)
    if echo:
        yield AppEvent("facts", {"text": echo, "facts": run.facts.known()})
    steps = run_discussion(run.plan, run) if run.plan.mode == "discussion" else run_standard(run.plan, run)
    yield from steps
    answer = to_answer(run, session_id)
    yield AppEvent.done(
        answer,
        {
            "session_id": session_id,
            "plan": run.plan.to_dict(),
            "llm_calls": run.llm_calls,
            "facts": answer.data["facts"],
            "facts_text": echo,
            "standalone_question": answer.standalone_question,
        },
    )


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


def to_answer(run: ChatRun, session_id: str | None) -> Answer:
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
        standalone_question=understood(run.facts, run.question),
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
