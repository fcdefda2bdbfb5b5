"""The app contract: a domain app is one object the top layers (API, CLI) find in a registry.

An app names the knowledge bases it needs, builds them from a data directory (``setup``),
answers a question made standalone (``answer``, optionally ``answer_stream``), reads a follow-up
in its conversation (``resolve``: the condenser by default, with the app's ``vocabulary``), and
may add its own HTTP routes and CLI commands. ``ask`` / ``stream`` run one whole turn through
the conversation service (:mod:`zhiwen.conversation.service`: the session read, the follow-up
resolved once, the turn kept), as every interface does. Every app answers through the same
:class:`AppContext`, so runtime settings (rerank, MMR, thresholds) and the LLM (or its absence)
apply to every entry point alike.

Apps are registered as Python entry points in the group ``zhiwen.apps`` (a third party can
``pip install`` one); :mod:`zhiwen.appkit.registry` loads them and fails loudly, with the app's
name, when one is broken.

Example (a minimal app)::

    from zhiwen.appkit import Answer, AppContext, AskRequest, BaseApp, Citation, KBSpec, Standalone

    class GlossaryApp(BaseApp):
        name = "glossary"
        title = "术语表"
        description = "公司术语问答"
        kbs = (KBSpec("glossary", "术语表知识库"),)

        def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
            kb = ctx.open_kb(request.kb or "glossary")
            result = ctx.pipeline.search(kb, question.question, top_k=3)
            return Answer(answer=result.hits[0].chunk.text if result.hits else "未找到",
                          citations=[Citation.from_hit(h, kb=kb.name) for h in result.hits],
                          params=result.params)

    app = GlossaryApp()   # pyproject: [project.entry-points."zhiwen.apps"] glossary = "pkg:app"
    app.ask(AskRequest(question="什么是 RAG"), ctx)   # one turn: resolved, answered, kept
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field

from zhiwen.answer.events import AppEvent, events_of
from zhiwen.answer.model import Answer, Citation
from zhiwen.config import Settings
from zhiwen.conversation import service as conversation
from zhiwen.conversation.model import Standalone
from zhiwen.conversation.record import QuestionRecorder
from zhiwen.conversation.request import AskRequest

if TYPE_CHECKING:
    import typer
    from fastapi import APIRouter

    from zhiwen.conversation.vocabulary import Vocabulary
    from zhiwen.ingest import Corpus
    from zhiwen.kb import KnowledgeBase
    from zhiwen.llm.base import ChatModel
    from zhiwen.retrieve.pipeline import RetrievalPipeline

Loader = Callable[..., "Corpus"]  # (path, **options) -> Corpus: an ingest format an app adds


@dataclass(frozen=True, slots=True)
class KBSpec:
    """A knowledge base an app needs: its default name and what it holds."""

    name: str
    description: str
    required: bool = True
    #: whether setup computes this KB's vectors by default; False declares a text-only KB (BM25),
    #: for an app whose own question set answers as well without them (measured, see the app)
    vectors: bool = True


class SetupReport(BaseModel):
    """What ``app.setup(data_dir)`` built: KB name → chunks indexed, plus notes and timings.

    A setup builds every KB's text index first (``text_ready_seconds``: from then on every KB
    answers, BM25 over the text); the vectors follow, in the setup (``wait``) or later, filled
    by ``zhiwen serve`` (``vectors_missing`` when it returned). ``eta_seconds`` is what the
    setup estimated for the whole job at its start (text + vectors, from the passages' length
    and this machine's measured or known rates, :mod:`zhiwen.kb.rates`); ``vectors_eta_seconds``
    what the missing vectors still need. ``text_only``: KBs the app declares without vectors.
    """

    app: str
    kbs: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    text_ready_seconds: float = 0.0
    vectors_missing: int = 0
    eta_seconds: float = 0.0
    vectors_eta_seconds: float = 0.0
    text_only: list[str] = Field(default_factory=list)
    waited: bool = False  # the vectors were filled before the setup returned


@dataclass(slots=True)
class AppContext:
    """What an app gets for every call: settings, the retrieval pipeline, the LLM, KBs.

    ``pipeline`` reads the runtime settings at each search, so an admin change applies to the
    next question everywhere. ``llm`` is ``None`` when no LLM is configured. ``question_log``:
    where the conversation service records each answered question (the server's or the CLI
    process's :class:`~zhiwen.questionlog.QuestionLog`; None: not recorded).
    """

    settings: Settings
    pipeline: RetrievalPipeline
    llm: ChatModel | None
    open_kb: Callable[[str], KnowledgeBase]
    extras: dict[str, Any] = field(default_factory=dict)
    question_log: QuestionRecorder | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        # a context serves one request or command: each KB is opened once in it, however many
        # steps (choosing the answerer, answering, numbering citations) ask for it
        if name == "open_kb" and not isinstance(value, OpenedOnce):
            value = OpenedOnce(value)
        object.__setattr__(self, name, value)


class OpenedOnce:
    """``open_kb`` that opens each name once per context and then hands out the same handle."""

    __slots__ = ("_open", "_opened")

    def __init__(self, open_kb: Callable[[str], KnowledgeBase]) -> None:
        self._open = open_kb
        self._opened: dict[str, KnowledgeBase] = {}

    def __call__(self, name: str) -> KnowledgeBase:
        kb = self._opened.get(name)
        if kb is None:
            kb = self._opened[name] = self._open(name)
        return kb


EventText = Callable[[AppEvent], str]  # one stream event → the text it adds to the answer


def delta_text(event: AppEvent) -> str:
    """The default :meth:`BaseApp.event_text`: only ``delta`` events carry text."""
    return event.text


class BaseApp:
    """Defaults for the optional parts of an app; subclass and set the class attributes.

    The hooks the interfaces read are declared here, so no interface names an app:
    ``options_model`` (the app's own request options, validated by the OpenAI front door),
    ``resolve`` (how a follow-up is read in its conversation; its state is kept in the session
    under ``session_key``), ``event_text`` (how the app's own stream events read as plain text)
    and ``render`` (its terminal view). It fulfils the conversation service's
    :class:`~zhiwen.conversation.service.Answerer`.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""  # Chinese display name
    description: ClassVar[str] = ""
    kbs: ClassVar[Sequence[KBSpec]] = ()
    #: the app's options (``AskRequest.options``) with their schema; None: the app takes none
    options_model: ClassVar[type[BaseModel] | None] = None

    @property
    def default_kb(self) -> str | None:
        return self.kbs[0].name if self.kbs else None

    @property
    def app_name(self) -> str | None:
        """The name interfaces report as the answering app (None: generic QA)."""
        return self.name

    @property
    def session_key(self) -> str:
        """The key this app's state is kept under in a session."""
        return self.name

    def formats(self) -> Mapping[str, Loader]:
        """Ingest formats this app adds to ``zhiwen index --format``."""
        return {}

    def sniff(self, path: Path) -> str | None:
        """The format name when ``path`` holds this app's data (detected by content), else None."""
        return None

    def serves(self, kb_app: str | None) -> bool:
        """Whether this app answers for a KB whose ``kb.json`` names app ``kb_app``."""
        return kb_app == self.name

    def setup(
        self, data_dir: Path, ctx: AppContext, *, progress: bool = True, wait: bool = True
    ) -> SetupReport:
        """Build the app's KBs from ``data_dir``: text indexes first, then (``wait``) the vectors;
        ``wait=False`` returns once every KB answers (``zhiwen serve`` fills the vectors).
        :func:`zhiwen.appkit.setup.run_setup` does it for a list of KBs."""
        raise NotImplementedError(f"app {self.name} has no setup")

    # -- a turn of a conversation -----------------------------------------------------------------
    def vocabulary(self, request: AskRequest, ctx: AppContext) -> Vocabulary | None:
        """The entities a follow-up may name or point back to (the default hook's): none."""
        return None

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: AppContext) -> Standalone:
        """The follow-up hook (:class:`~zhiwen.conversation.service.FollowUps`), once per turn:
        by default the condenser over ``request.history`` with :meth:`vocabulary`; the app keeps
        no state. An app that carries its own (constraints, facts) reads ``state`` and returns
        the new one in ``Standalone.state``."""
        return conversation.condensed(request.history, request.question, ctx, self.vocabulary(request, ctx))

    def faq_kb(self, request: AskRequest) -> str | None:
        """The KB whose FAQ entries answer this app's questions word for word (the conversation
        service's FAQ step): the KB asked, else the app's first. None: the app's answers are not
        text an FAQ could stand in for (a listing search)."""
        return request.kb or self.default_kb

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        """The answer to ``question`` (the turn's question as :meth:`resolve` read it)."""
        raise NotImplementedError(f"app {self.name} has no answer")

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Iterator[AppEvent]:
        """Events of one answer: ``sources``, ``delta`` …, ``done``. Default: from :meth:`answer`
        (run when the stream is read, so its errors become the stream's in-band error)."""
        yield from events_of(self.answer(request, question, ctx))

    def ask(self, request: AskRequest, ctx: AppContext) -> Answer:
        """One turn through the conversation service: the session's history in (when the
        request names a session), the follow-up resolved, the answer, the turn kept."""
        return conversation.ask(self, request, ctx)

    def stream(self, request: AskRequest, ctx: AppContext) -> Iterator[AppEvent]:
        """:meth:`ask` as events (the turn is kept when the stream closes with its answer)."""
        return conversation.stream(self, request, ctx)

    def event_text(self) -> EventText:
        """A fresh renderer of this app's stream events as text, for one answer (it may keep
        state, e.g. a heading written once); the default reads ``delta`` events only."""
        return delta_text

    def render(self, answer: Answer) -> bool:
        """Print ``answer`` on the terminal in the app's own way; False: use the generic view."""
        return False

    def router(self) -> APIRouter | None:
        """The app's own HTTP routes, mounted by the API."""
        return None

    def cli(self) -> typer.Typer | None:
        """The app's own command group, mounted as ``zhiwen <name> …``."""
        return None

    def __repr__(self) -> str:
        return f"<app {self.name}>"


__all__ = [
    "Answer",
    "AppContext",
    "AppEvent",
    "AskRequest",
    "BaseApp",
    "Citation",
    "KBSpec",
    "SetupReport",
    "Standalone",
]
