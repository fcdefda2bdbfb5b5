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

    from zhiwen.api.deps import KBName, KBRegistry, Question, get_kb_registry
    from zhiwen.api.envelope import ok

    class AskIn(BaseModel):
        kb: KBName = "recipes"
        question: Question

    @router.post("/api/v1/qa")
    async def qa(body: AskIn, kbs: KBRegistry = Depends(get_kb_registry)) -> dict[str, Any]:
        kb = await kbs.aget(body.kb)
        hits = await run_in_threadpool(kb.search, body.question, top_k=5)
        return ok({"answer": ..., "sources": ...})
"""

from __future__ import annotations

import contextlib
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from zhiwen.config import Settings, get_settings
from zhiwen.errors import KnowledgeBaseNotFound

if TYPE_CHECKING:
    from zhiwen.api.dynamic_settings import DynamicSettingsService
    from zhiwen.kb import KnowledgeBase

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
KBName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_\-\u4e00-\u9fff]{1,64}$")]


class KBRegistry:
    """Opened knowledge bases, cached per name and re-opened when ``kb.json`` changes on disk.

    A KB is re-indexed by the CLI in another process; the registry notices the changed
    ``kb.json`` (its revision) on the next request instead of serving a stale index.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._open: dict[str, tuple[float, KnowledgeBase]] = {}

    def _stamp(self, name: str) -> float | None:
        path = Path(self.settings.kb_root) / name / "kb.json"
        try:
            return path.stat().st_mtime
        except OSError:
            return None

    def names(self) -> list[str]:
        from zhiwen.kb import list_kbs

        return list_kbs(self.settings)

    def get(self, name: str) -> KnowledgeBase:
        from zhiwen.kb import open_kb

        stamp = self._stamp(name)
        with self._lock:
            cached = self._open.get(name)
            if cached is not None and stamp is not None and cached[0] == stamp:
                return cached[1]
            if cached is not None:
                self._open.pop(name, None)
                _close_quietly(cached[1])
            if stamp is None and self.settings.store == "embedded":
                raise KnowledgeBaseNotFound(f"no knowledge base named {name!r}", data={"kb": name})
            kb = open_kb(name, settings=self.settings)
            self._open[name] = (stamp or 0.0, kb)
            return kb

    async def aget(self, name: str) -> KnowledgeBase:
        """:meth:`get` in the thread pool (opening loads indexes and the embedder)."""
        return await run_in_threadpool(self.get, name)

    def close(self) -> None:
        with self._lock:
            for _, kb in self._open.values():
                _close_quietly(kb)
            self._open.clear()


def _close_quietly(kb: Any) -> None:
    # a KB that fails to close must not fail the request that replaces it
    with contextlib.suppress(Exception):
        kb.close()


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
        from zhiwen.api.dynamic_settings import DynamicSettingsService

        service = request.app.state.dynamic_settings = DynamicSettingsService(get_settings_dep(request))
    return service


async def get_kb(kb: KBName, registry: KBRegistry = Depends(get_kb_registry)) -> KnowledgeBase:
    """Dependency for ``/…/{kb}/…`` paths or a ``?kb=`` query parameter: unknown → 404 / 3004."""
    return await registry.aget(kb)
