"""Reusable FastAPI dependencies and types for every router (engine and apps).

* :func:`get_settings_dep` — the app's static :class:`~zhiwen.config.Settings`.
* :func:`get_dynamic_settings_dep` — the runtime-editable :class:`DynamicSettingsService`.
* :func:`get_kb_registry` — the app's :class:`KBRegistry`; ``await registry.aget(name)`` opens a
  KB in the thread pool and raises :class:`~zhiwen.errors.KnowledgeBaseNotFound` (404 / 3004,
  naming the command that builds it: :func:`zhiwen.errors.kb_not_found`) for an unknown name.
  Tests override this dependency to inject a fake KB.
* :func:`app_dependency` — an app's routes get their app; :func:`app_set_up` also refuses (404,
  naming the setup command) while a KB the app requires is not built.
* :func:`get_kb` — dependency for routes with a ``{kb}`` path (or ``?kb=`` query) parameter.
* :func:`get_question_log` — the home's :class:`~zhiwen.questionlog.QuestionLog` (opened by the
  app factory, closed by its lifespan): every answer is recorded in it, feedback rated in it.
* :func:`get_access` — who calls and what they may do (:class:`~.auth.Access`, the rule in
  :mod:`.auth`): the one authentication dependency, applied to every router but ``/healthz`` and
  the web UI. A route that names a KB asks ``access.require_kb(kb, write=…)`` (403 / 3012), or
  declares :func:`require_kb_read` / :func:`require_kb_write` for a ``{kb}`` path parameter.

The request fields routes share (:data:`~.fields.Question`, :data:`~.fields.KBName`, the history)
are :mod:`.fields`'.

Example (an app router)::

    from zhiwen.httpkit.deps import KBRegistry, get_kb_registry
    from zhiwen.httpkit.fields import KBName, Question
    from zhiwen.httpkit.envelope import ok

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
from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from zhiwen.appkit.registry import HomeKBs
from zhiwen.config import Settings, get_settings
from zhiwen.errors import (
    Forbidden,
    KnowledgeBaseNotFound,
    SetupHints,
    Unauthorized,
    index_hint,
    setup_hinted,
)
from zhiwen.httpkit.auth import Access, resolve_access
from zhiwen.httpkit.fields import NAME_RE, KBName

if TYPE_CHECKING:
    from zhiwen.appkit.app import AppContext, BaseApp
    from zhiwen.appkit.registry import AppRegistry
    from zhiwen.config.runtime import DynamicSettingsService
    from zhiwen.kb import KnowledgeBase
    from zhiwen.questionlog import QuestionLog
    from zhiwen.retrieve.pipeline import RetrievalPipeline

class KBRegistry(HomeKBs):
    """The knowledge bases this app serves (``settings.home``), opened on demand.

    :func:`zhiwen.kb.open_kb` already shares one thread-safe instance per KB and process and
    re-opens it when ``kb.json`` changed on disk (``zhiwen index`` while the server runs), so
    this is a thin, overridable seam: tests replace it with fakes. ``setup_hints`` names the
    command that builds a KB that is not there (the server's apps: ``AppRegistry.setup_hint``).
    """

    def __init__(self, settings: Settings, setup_hints: SetupHints = index_hint) -> None:
        super().__init__(settings)
        self.setup_hints = setup_hints

    def get(self, name: str) -> KnowledgeBase:
        """Open ``name``; unknown → :class:`KnowledgeBaseNotFound` (404 / 3004)."""
        from zhiwen.kb import open_kb

        if not NAME_RE.match(name or ""):
            # no command would build a KB of that name: say which names are possible instead
            raise KnowledgeBaseNotFound(
                f"invalid knowledge base name {name!r}",
                message=f"知识库不存在：{name}（名称只能由字母、数字、_、- 和汉字组成，最长 64 个字符）",
                data={"kb": name, "app": None, "setup_command": None},
            )
        with setup_hinted(self.setup_hints):
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
        registry = request.app.state.kbs = KBRegistry(get_settings_dep(request), get_apps(request).setup_hint)
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
    """The server's apps (:class:`~zhiwen.appkit.registry.AppRegistry`), loaded at start; an
    app's router mounted on its own (a test's bare FastAPI) gets the installed apps."""
    apps: AppRegistry | None = getattr(request.app.state, "apps", None)  # app.state: Starlette's bag
    if apps is None:
        from zhiwen.appkit.registry import load_apps

        apps = load_apps()
    return apps


def app_dependency(name: str) -> Callable[[Request], BaseApp]:
    """A dependency giving an app's routes their own app object, from the server's registry
    (the routes live in the app's ``api.py``, which then need not import the app module back)."""

    def the_app(request: Request) -> BaseApp:
        return get_apps(request)[name]

    return the_app


def app_set_up(name: str) -> Callable[[Request], BaseApp]:
    """:func:`app_dependency`, refusing an app that is not ready — a KB it marks required is not
    built (:meth:`~zhiwen.appkit.registry.AppRegistry.ready`, as REST, ``/v1`` and the CLI):
    404 / 3004 naming its setup (``请先运行 zhiwen policy setup ../shared/data``, and
    ``data.extra.setup_command``)."""

    def the_app(request: Request) -> BaseApp:
        return get_apps(request).ready(name, get_kb_registry(request)).answerer

    return the_app


def get_question_log(request: Request) -> QuestionLog:
    """The home's question log (``app.state.question_log``, opened by ``create_app``); a router
    mounted on its own (a test's bare FastAPI) gets one opened on first use."""
    question_log: QuestionLog | None = getattr(request.app.state, "question_log", None)
    if question_log is None:
        from zhiwen.questionlog import open_question_log

        question_log = request.app.state.question_log = open_question_log(get_settings_dep(request))
    return question_log


def get_pipeline(request: Request) -> RetrievalPipeline:
    """The server's one :class:`RetrievalPipeline`, over the runtime settings (tests override it)."""
    pipeline = getattr(request.app.state, "pipeline", None)
    if pipeline is None:
        from zhiwen.appkit.context import build_pipeline

        pipeline = request.app.state.pipeline = build_pipeline(
            get_settings_dep(request), get_dynamic_settings_dep(request)
        )
    return pipeline


# -- access: who calls and what they may do (the rule: :mod:`.auth`) ----------------------------
_BEARER = HTTPBearer(
    auto_error=False,
    description="API Key（ZHIWEN_API__KEYS）或管理员令牌（ZHIWEN_API__ADMIN_TOKEN）；未配置任何凭据时不需要",
)


def get_access(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_BEARER)
) -> Access:
    """Dependency: the caller's :class:`Access` (resolved once per request; routes that need it
    declare it again and get the same object). Every router but the public ones carries it."""
    token = credentials.credentials.strip() if credentials is not None else None
    access = resolve_access(get_settings_dep(request), token, caller=get_caller(request))
    request.state.access = access
    return access


def require_kb_read(kb: str, access: Access = Depends(get_access)) -> Access:
    """Route dependency for a ``{kb}`` path parameter: the caller may read it (else 403; the
    route itself still says 404 / 422 for an unknown or invalid name the key may reach)."""
    access.require_kb(kb)
    return access


def require_kb_write(kb: str, access: Access = Depends(get_access)) -> Access:
    """Route dependency for a ``{kb}`` path parameter: the caller may change it (else 403)."""
    access.require_kb(kb, write=True)
    return access


def require_admin(request: Request, access: Access = Depends(get_access)) -> Access:
    """Only the admin token: 401 / 3006 while none is configured, 403 / 3012 for a mere key."""
    if not get_settings_dep(request).api.admin_token:
        raise Unauthorized(
            "admin API disabled: set ZHIWEN_API__ADMIN_TOKEN", message="管理接口未启用：未配置访问令牌"
        )
    if not access.admin:
        raise Forbidden(
            "admin token required", message="无权修改设置：需要管理员令牌（ZHIWEN_API__ADMIN_TOKEN）"
        )
    return access


def require_app_kbs(app: BaseApp) -> Callable[..., Access]:
    """Router dependency for an app's routes: the caller may read every KB the app declares
    (``BaseApp.kbs``), else 403 — an app answers over all of them."""
    names = [spec.name for spec in app.kbs]
    what = f"应用「{app.title or app.name}」"

    def app_access(access: Access = Depends(get_access)) -> Access:
        access.require_kbs(names, what=what)
        return access

    return app_access


def get_app_context(
    request: Request,
    pipeline: RetrievalPipeline = Depends(get_pipeline),
    access: Access = Depends(get_access),
) -> AppContext:
    """What an app answers with in this request: settings, the pipeline, the LLM, the KBs the
    caller may read (any other → 403, also for a KB an app opens on its own), and the home's
    question log."""
    from zhiwen.appkit.context import build_context

    registry = get_kb_registry(request)
    ctx = build_context(get_settings_dep(request), pipeline=pipeline, setup_hints=registry.setup_hints)
    ctx.open_kb = access.guard(registry.get)
    ctx.question_log = get_question_log(request)  # every answer of this request is recorded
    return ctx
