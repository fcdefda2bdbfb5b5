"""The app contract: a domain app is one object the top layers (API, CLI) find in a registry.

An app names the knowledge bases it needs, builds them from a data directory (``setup``),
answers a question (``ask``, optionally ``stream``), and may add its own HTTP routes and CLI
commands. Every app answers through the same :class:`AppContext`, so runtime settings (rerank,
MMR, thresholds) and the LLM (or its absence) apply to every entry point alike.

Apps are registered as Python entry points in the group ``zhiwen.apps`` (a third party can
``pip install`` one); :mod:`zhiwen.appkit.registry` loads them and fails loudly, with the app's
name, when one is broken.

Example (a minimal app)::

    from zhiwen.appkit import AppAnswer, AppContext, AskRequest, BaseApp, KBSpec

    class GlossaryApp(BaseApp):
        name = "glossary"
        title = "术语表"
        description = "公司术语问答"
        kbs = (KBSpec("glossary", "术语表知识库"),)

        def ask(self, request: AskRequest, ctx: AppContext) -> AppAnswer:
            kb = ctx.open_kb(request.kb or "glossary")
            result = ctx.pipeline.search(kb, request.question, top_k=3)
            return AppAnswer(answer=result.hits[0].chunk.text if result.hits else "未找到",
                             citations=[Citation.from_hit(h, kb=kb.name) for h in result.hits],
                             params=result.params)

    app = GlossaryApp()   # pyproject: [project.entry-points."zhiwen.apps"] glossary = "pkg:app"
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from zhiwen.appkit.events import AppEvent
from zhiwen.config import Settings
from zhiwen.documents import SearchHit

if TYPE_CHECKING:
    import typer
    from fastapi import APIRouter

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


class Citation(BaseModel):
    """One source an answer stands on, in the shape every app and route shares.

    ``source``/``page``/``page_end``/``section`` come from the chunk's metadata (every document
    loader sets them); ``label`` is the human form, e.g. ``《出境入境管理法》第12页``.
    """

    kb: str | None = Field(None, description="知识库")
    id: str = Field(description="文档或片段 ID")
    title: str = Field("", description="标题")
    text: str = Field("", description="相关片段（截断）")
    score: float | None = Field(None, description="检索得分")
    rerank_score: float | None = Field(None, description="重排得分")
    metadata: dict[str, Any] = Field(default_factory=dict, description="元数据")
    source: str | None = Field(None, description="来源文件名")
    page: int | None = Field(None, description="起始页码（PDF 页、PPT 幻灯片序号）")
    page_end: int | None = Field(None, description="结束页码")
    section: str | None = Field(None, description="章节路径，如「第三章 > 第一节」")
    label: str = Field("", description="引用标注，如《出境入境管理法》第12页")

    @model_validator(mode="after")
    def _provenance(self) -> Citation:
        """Fill the provenance fields from ``metadata`` when the caller did not set them."""
        meta = self.metadata
        if self.source is None and meta.get("source"):
            self.source = str(meta["source"])
        if self.page is None:
            self.page = _as_int(meta.get("page"))
        if self.page_end is None:
            self.page_end = _as_int(meta.get("page_end"))
        if self.section is None and meta.get("section"):
            self.section = str(meta["section"])
        if not self.label:
            self.label = citation_label(
                self.title or self.id, self.page, self.page_end, str(meta.get("format") or "")
            )
        return self

    @classmethod
    def from_hit(cls, hit: SearchHit, *, kb: str | None = None, max_chars: int = 300) -> Citation:
        c = hit.chunk
        return cls(
            kb=kb,
            id=c.id,
            title=c.title or c.doc_id,
            text=c.text[:max_chars],
            score=round(float(hit.score), 6),
            rerank_score=None if hit.rerank_score is None else round(float(hit.rerank_score), 6),
            metadata=dict(c.metadata),
        )


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def citation_label(title: str, page: int | None, page_end: int | None, fmt: str = "") -> str:
    """``《出境入境管理法》第12页``, ``第12–13页`` across pages, ``第3张幻灯片`` for slides."""
    name = title.strip().strip("《》") or "未命名文档"
    label = f"《{name}》"
    if page is None:
        return label
    if fmt == "pptx":
        return label + f"第{page}张幻灯片"
    if fmt == "xlsx":
        return label + f"第{page}个工作表"
    if page_end is not None and page_end != page:
        return label + f"第{page}–{page_end}页"
    return label + f"第{page}页"


class AskRequest(BaseModel):
    """A question to an app, with the conversation so far (OpenAI message format)."""

    question: str
    history: list[dict[str, Any]] = Field(default_factory=list)
    session_id: str | None = None
    kb: str | None = None  # None: the app's own default KB
    top_k: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # app-specific (mode, as_of, …)


class AppAnswer(BaseModel):
    """An app's answer: text, citations, how it was made, and the app's own payload."""

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    llm_used: bool = False
    extractive_reason: str | None = None  # why no LLM wrote it: no_llm, timeout, no_results …
    params: dict[str, Any] = Field(default_factory=dict)  # effective retrieval parameters
    data: dict[str, Any] = Field(default_factory=dict)  # app-specific fields (route, intent …)


class SetupReport(BaseModel):
    """What ``app.setup(data_dir)`` built: KB name → chunks indexed, plus notes."""

    app: str
    kbs: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0


@dataclass(slots=True)
class AppContext:
    """What an app gets for every call: settings, the retrieval pipeline, the LLM, KBs.

    ``pipeline`` reads the runtime settings at each search, so an admin change applies to the
    next question everywhere. ``llm`` is ``None`` when no LLM is configured.
    """

    settings: Settings
    pipeline: RetrievalPipeline
    llm: ChatModel | None
    open_kb: Callable[[str], KnowledgeBase]
    extras: dict[str, Any] = field(default_factory=dict)


class BaseApp:
    """Defaults for the optional parts of an app; subclass and set the class attributes."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""  # Chinese display name
    description: ClassVar[str] = ""
    kbs: ClassVar[Sequence[KBSpec]] = ()

    @property
    def default_kb(self) -> str | None:
        return self.kbs[0].name if self.kbs else None

    def formats(self) -> Mapping[str, Loader]:
        """Ingest formats this app adds to ``zhiwen index --format``."""
        return {}

    def sniff(self, path: Path) -> str | None:
        """The format name when ``path`` holds this app's data (detected by content), else None."""
        return None

    def serves(self, kb_app: str | None) -> bool:
        """Whether this app answers for a KB whose ``kb.json`` names app ``kb_app``."""
        return kb_app == self.name

    def setup(self, data_dir: Path, ctx: AppContext, *, progress: bool = True) -> SetupReport:
        raise NotImplementedError(f"app {self.name} has no setup")

    def ask(self, request: AskRequest, ctx: AppContext) -> AppAnswer:
        raise NotImplementedError

    def stream(self, request: AskRequest, ctx: AppContext) -> Iterator[AppEvent]:
        """Events of one answer: ``sources``, ``delta`` …, ``done``. Default: from :meth:`ask`."""
        answer = self.ask(request, ctx)
        yield AppEvent("sources", {"sources": [c.model_dump() for c in answer.citations]})
        yield AppEvent("delta", {"text": answer.answer})
        yield AppEvent("done", done_payload(answer))

    def render(self, answer: AppAnswer) -> bool:
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


def done_payload(answer: AppAnswer) -> dict[str, Any]:
    """The ``done`` event's fields for an answer (everything except text and sources)."""
    return {
        "llm_used": answer.llm_used,
        "extractive_reason": answer.extractive_reason,
        "params": answer.params,
        **answer.data,
    }
