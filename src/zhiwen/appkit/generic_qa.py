"""Generic QA as an answerer: any KB that no app claims is answered by the engine's answer stage.

:class:`GenericQA` fulfils the app contract (its follow-up hook is the condenser over the KB's
titles, ``answer``/``answer_stream`` the engine's), so the interfaces treat it like an app:
:meth:`zhiwen.appkit.registry.AppRegistry.answering` hands it out for a KB without an app, and
REST, the OpenAI front door and the CLI run its turns through the conversation service. ``answer.answerable``
says whether the sources passed the KB's relevance floor; the stream's ``done`` event carries the
same :class:`~zhiwen.answer.model.Answer`.

Example::

    >>> answer = GENERIC_QA.ask(AskRequest(question="怎么创建知识库？", kb="demo"), ctx)
    >>> answer.route, answer.citations[0].title, answer.llm_used, answer.answerable
    ('general', '快速开始', False, True)
"""

from __future__ import annotations

from collections.abc import Iterator

from zhiwen.answer.events import AppEvent
from zhiwen.answer.model import Answer
from zhiwen.answer.qa import DEFAULT_TOP_K, answer_question, focus_for, stream_question
from zhiwen.appkit.app import AppContext, AskRequest, BaseApp, Standalone
from zhiwen.conversation.vocabulary import Vocabulary, kb_vocabulary
from zhiwen.errors import InvalidParameter


def _kb_name(request: AskRequest) -> str:
    if not request.kb:
        raise InvalidParameter("kb is required for generic QA", message="请指定知识库（kb）")
    return request.kb


class GenericQA(BaseApp):
    """Any KB: retrieve through the pipeline, then one LLM call or an extractive answer."""

    name = "qa"
    title = "知识库问答"
    description = "任意知识库的检索增强问答（带引用）"

    @property
    def app_name(self) -> str | None:
        return None  # not an app: interfaces report no app

    def vocabulary(self, request: AskRequest, ctx: AppContext) -> Vocabulary:
        """The KB's document titles: what a follow-up names or points back to."""
        return kb_vocabulary(ctx.open_kb(_kb_name(request)))

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        kb = ctx.open_kb(_kb_name(request))
        top_k = request.top_k or DEFAULT_TOP_K
        focus = focus_for(question.focus, ctx.settings)  # the conversation's topic steers retrieval
        return answer_question(
            kb, question.question, top_k=top_k, llm=ctx.llm, pipeline=ctx.pipeline, focus=focus
        )

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Iterator[AppEvent]:
        kb = ctx.open_kb(_kb_name(request))
        top_k = request.top_k or DEFAULT_TOP_K
        focus = focus_for(question.focus, ctx.settings)  # the conversation's topic steers retrieval
        return stream_question(
            kb, question.question, top_k=top_k, llm=ctx.llm, pipeline=ctx.pipeline, focus=focus
        )


#: the one generic answerer (it holds no state)
GENERIC_QA = GenericQA()
