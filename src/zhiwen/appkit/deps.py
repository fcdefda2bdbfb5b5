"""Reusable FastAPI dependencies and types for every router (engine and apps).

* :func:`get_settings_dep` — the app's static :class:`~zhiwen.config.Settings`.
* :func:`get_dynamic_settings_dep` — the runtime-editable :class:`DynamicSettingsService`.
* :func:`get_kb_registry` — the app's :class:`KBRegistry`; ``await registry.aget(name)`` opens a
  KB in the thread pool and raises :class:`~zhiwen.errors.KnowledgeBaseNotFound` (404 / 3004
  ``知识库不存在``) for an unknown name. Tests override this dependency to inject a fake KB.
* :func:`get_kb` — dependency for routes with a ``{kb}`` path (or ``?kb=`` query) parameter.
* :data:`Question` — a ``str`` type for request models: stripped, non-empty, at most
  ``settings.api.max_question_chars`` characters (over → 422 / 3003 ``问题过长``).
* :data:`KBName` — a KB name type (same pattern as :class:`zhiwen.kb.KBConfig`).

Example (an app router)::

    from zhiwen.appkit.deps import KBName, KBRegistry, Question, get_kb_registry
    from zhiwen.appkit.envelope import ok

    class AskIn(BaseModel):
        kb: KBName = "manual"
        question: Question

    @router.post("/api/v1/qa")
    async def qa(body: AskIn, kbs: KBRegistry = Depends(get_kb_registry)) -> dict[str, Any]:
        kb = await kbs.aget(body.kb)
        hits = await run_in_threadpool(kb.search, body.question, top_k=5)
        return ok({"answer": ..., "sources": ...})
"""

from __future__ import annotations

import hashlib
import re
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request
from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from zhiwen.config import Settings, get_settings
from zhiwen.errors import KnowledgeBaseNotFound

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext
    from zhiwen.appkit.registry import AppRegistry
    from zhiwen.config.runtime import DynamicSettingsService
    from zhiwen.kb import KnowledgeBase
    from zhiwen.retrieve.pipeline import RetrievalPipeline

#: set by the request middleware to the serving app's settings (validators have no Request)
current_settings_var: ContextVar[Settings | None] = ContextVar("zhiwen_current_settings", default=None)


def current_settings() -> Settings:
    return current_settings_var.get() or get_settings()


def _check_question(value: str) -> str:
    text = value.strip()
    if not text:
        raise PydanticCustomError("zhiwen_empty", "问题不能为空")
    limit = current_settings().api.max_question_chars
    if len(text) > limit:
        raise PydanticCustomError(
            "zhiwen_too_long",
            "问题过长：{length} 个字符，最多 {limit} 个",
            {"length": len(text), "limit": limit},
        )
    return text


Question = Annotated[str, AfterValidator(_check_question)]
_NAME_PATTERN = r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$"
_NAME_RE = re.compile(_NAME_PATTERN)
KBName = Annotated[str, Field(pattern=_NAME_PATTERN)]


class KBRegistry:
    """The knowledge bases this app serves (``settings.home``), opened on demand.

    :func:`zhiwen.kb.open_kb` already shares one thread-safe instance per KB and process and
    re-opens it when ``kb.json`` changed on disk (``zhiwen index`` while the server runs), so
    this is a thin, overridable seam: tests replace it with fakes.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def names(self) -> list[str]:
        from zhiwen.kb import list_kbs

        return list_kbs(self.settings)

    def get(self, name: str) -> KnowledgeBase:
        """Open ``name``; unknown → :class:`KnowledgeBaseNotFound` (404 / 3004)."""
        from zhiwen.kb import open_kb

        if not _NAME_RE.match(name or ""):
            raise KnowledgeBaseNotFound(
                f"invalid knowledge base name {name!r}", message=f"知识库不存在：{name}"
            )
        return open_kb(name, settings=self.settings)

    async def aget(self, name: str) -> KnowledgeBase:
        """:meth:`get` in the thread pool (opening loads indexes)."""
        return await run_in_threadpool(self.get, name)


# -- dependencies ------------------------------------------------------------------------------
def get_settings_dep(request: Request) -> Settings:
    settings = getattr(request.app.state, "settings", None)
    return settings if isinstance(settings, Settings) else get_settings()


def get_kb_registry(request: Request) -> KBRegistry:
    registry = getattr(request.app.state, "kbs", None)
    if registry is None:
        registry = request.app.state.kbs = KBRegistry(get_settings_dep(request))
    return registry


def get_dynamic_settings_dep(request: Request) -> DynamicSettingsService:
    service = getattr(request.app.state, "dynamic_settings", None)
    if service is None:
        from zhiwen.config.runtime import DynamicSettingsService

        service = request.app.state.dynamic_settings = DynamicSettingsService(get_settings_dep(request))
    return service


async def get_kb(kb: KBName, registry: KBRegistry = Depends(get_kb_registry)) -> KnowledgeBase:
    """Dependency for ``/…/{kb}/…`` paths or a ``?kb=`` query parameter: unknown → 404 / 3004."""
    return await registry.aget(kb)


def get_caller(request: Request) -> str:
    """Who asks: a short, non-reversible fingerprint of the bearer key ("" when none was sent).

    Conversations are bound to it: a session asked with one key is not readable with another.
    """
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return ""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:16]


def get_apps(request: Request) -> AppRegistry:
    """The server's apps (:class:`~zhiwen.appkit.registry.AppRegistry`), loaded at start."""
    apps: AppRegistry = request.app.state.apps
    return apps


def get_pipeline(request: Request) -> RetrievalPipeline:
    """The server's one :class:`RetrievalPipeline`, over the runtime settings (tests override it)."""
    pipeline = getattr(request.app.state, "pipeline", None)
    if pipeline is None:
        from zhiwen.appkit.context import build_pipeline

        pipeline = request.app.state.pipeline = build_pipeline(
            get_settings_dep(request), get_dynamic_settings_dep(request)
        )
    return pipeline


def get_app_context(request: Request, pipeline: RetrievalPipeline = Depends(get_pipeline)) -> AppContext:
    """What an app answers with in this request: settings, the pipeline, the LLM, the KBs."""
    from zhiwen.appkit.context import build_context

    registry = get_kb_registry(request)
    ctx = build_context(get_settings_dep(request), pipeline=pipeline)
    ctx.open_kb = registry.get
    return ctx
