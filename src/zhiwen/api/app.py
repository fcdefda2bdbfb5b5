"""The FastAPI service: engine routes + every app router, one envelope, one error table.

Routes of the engine:

| method | path | what |
|--------|------|------|
| GET | ``/`` | web UI (static, Chinese) |
| GET | ``/healthz`` | liveness |
| GET | ``/metrics`` | Prometheus metrics |
| GET | ``/api/v1/kbs`` , ``/api/v1/kbs/{kb}`` | knowledge bases and their info |
| POST | ``/knowledge-base/search`` | adaptive search (rerank, thresholds, MMR) |
| GET/PUT/DELETE | ``/admin/settings`` | runtime settings (bearer token) |
| GET | ``/docs`` , ``/redoc`` , ``/openapi.json`` | OpenAPI (Swagger UI / ReDoc served from the
``fastapi-offline`` package: no CDN, works offline) |

| POST | ``/api/v1/qa`` | answers for any KB, by the KB's app or generic QA |
| POST | ``/api/v1/feedback`` | 👍/👎 on an answer by its ``answer_id`` (the question log) |
| GET/POST | ``/v1/models`` , ``/v1/chat/completions`` , ``/v1/embeddings`` | OpenAI-compatible front door |

Apps add theirs: every app in the registry (:mod:`zhiwen.appkit.registry`) with a ``router()``
has it mounted. A broken app stops the service at start with its name (never a silently missing
route). Reusable pieces for app routers live in :mod:`zhiwen.appkit`.

Who may call what: ``/healthz``, the web UI's page and files and the OpenAPI docs are public;
every other router carries the one access dependency (:func:`zhiwen.httpkit.deps.get_access`:
once a key or the admin token is configured, no valid bearer → 401), routes naming a KB check it
(403), each app's router also needs every KB the app declares, and ``/admin/settings`` needs the
admin token.

Middleware, outermost first: request context (id, metrics, access log, last-resort 500) → site
guard (foreign ``Host`` → 421, cross-site write → 403; :mod:`zhiwen.api.security`) → CORS →
body limit (413) → input hygiene (unencodable text → 3002, :mod:`zhiwen.api.hygiene`) →
admission (one deadline per request, bounded queues → 503 + ``Retry-After``, what degraded;
:mod:`zhiwen.api.admission`) → the routes.

What runs behind the routes is the app's own lifespan (:mod:`zhiwen.api.background`): the upload
worker of its :class:`~zhiwen.uploads.UploadService` and the vector filler, as ``background``
asks (``zhiwen serve`` asks for both), and the home's question log
(:class:`~zhiwen.questionlog.QuestionLog`, ``app.state.question_log``), closed at shutdown.

Example::

    >>> from fastapi.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.get("/healthz").json()["code"]
    0
"""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline

from zhiwen import __version__
from zhiwen.api import openai as openai_front
from zhiwen.api.admission import AdmissionMiddleware
from zhiwen.api.background import Background, app_lifespan
from zhiwen.api.handlers import install_exception_handlers
from zhiwen.api.hygiene import InputHygieneMiddleware
from zhiwen.api.middleware import BodyLimitMiddleware, RequestContextMiddleware
from zhiwen.api.routes import (
    admin,
    chunks,
    documents,
    faq,
    feedback,
    health,
    kbs,
    portable,
    qa,
    questions,
    search,
    sync,
    ui,
    words,
)
from zhiwen.api.security import SECURITY_RESPONSES, SiteGuardMiddleware
from zhiwen.appkit.registry import AppRegistry, load_apps
from zhiwen.config import Settings, get_settings
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.httpkit.deps import KBRegistry, get_access, require_app_kbs
from zhiwen.httpkit.envelope import ERROR_RESPONSES
from zhiwen.questionlog import open_question_log
from zhiwen.resilience import configure_resilience
from zhiwen.uploads import UploadService

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parents[1] / "webui"  # the web UI: an interface of its own, served here


def create_app(
    settings: Settings | None = None,
    *,
    app_routers: bool = True,
    apps: AppRegistry | None = None,
    background: Background | None = None,
) -> FastAPI:
    """Build the service. ``settings`` default to :func:`zhiwen.config.get_settings`; ``apps``
    to the installed apps (:func:`zhiwen.appkit.registry.load_apps`, which raises on a broken app);
    ``background``: what runs behind the routes while the app runs (:mod:`zhiwen.api.background`:
    the upload worker, the vector filler; none by default, all of it for ``zhiwen serve``).
    """
    settings = settings or get_settings()
    registry = apps if apps is not None else load_apps()
    configure_resilience(settings)
    app = FastAPIOffline(
        lifespan=app_lifespan(settings, background or Background()),
        static_url="/static-offline-docs",
        title="知问 zhiwen",
        version=__version__,
        description=(
            "中文优先、离线优先的检索增强问答服务。"
            "所有 JSON 响应均为 `{code, message, data}`，code 0 表示成功。"
        ),
    )
    app.state.settings = settings
    app.state.kbs = KBRegistry(settings, registry.setup_hint)
    app.state.dynamic_settings = DynamicSettingsService(settings)
    app.state.apps = registry
    app.state.uploads = UploadService(settings)  # its queue opens on first use
    # the home's question log: opened here (its store on first record), closed by the lifespan
    app.state.question_log = open_question_log(settings)

    install_exception_handlers(app)
    # added first = innermost: admission holds a slot only for requests that passed every check
    app.add_middleware(AdmissionMiddleware, settings=settings)
    app.add_middleware(InputHygieneMiddleware, streams_own_body=_streams_own_body)
    # added last = outermost: the context middleware sees (and ids, counts) the 413s too
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.api.max_body_bytes,
        limits={"/v1/": settings.api.max_chat_body_bytes},
        streams_own_body=_streams_own_body,
    )
    if settings.api.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api.cors_origins,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["*"],
        )
    # outside CORS: a foreign Host or a cross-site write is refused before anything else runs
    app.add_middleware(SiteGuardMiddleware, settings=settings)
    app.add_middleware(RequestContextMiddleware, settings=settings)
    _include_routers(app, registry if app_routers else None)
    return app


def _streams_own_body(path: str) -> bool:
    """Routes that read and bound their own (large) bodies: document uploads, KB imports."""
    return documents.is_upload_path(path) or portable.is_import_path(path)


def _include_routers(app: FastAPI, registry: AppRegistry | None) -> None:
    """Every router behind the access dependency but ``/healthz`` and the web UI's files."""
    keyed = [Depends(get_access)]
    responses = {**ERROR_RESPONSES, **SECURITY_RESPONSES}
    app.include_router(health.router, responses=ERROR_RESPONSES)  # public: probes carry no key
    engine = (
        health.metrics_router,
        kbs.router,
        portable.router,  # KB export / import
        documents.router,
        search.router,
        qa.router,
        feedback.router,
        chunks.router,  # owners: chunks, the change log
        words.router,  # owners: dictionary, synonyms
        faq.router,  # owners: FAQ entries
        questions.router,  # owners: the question log, numbers
        sync.router,  # a KB's sources: sync status, start one
        admin.router,
    )
    for router in engine:
        app.include_router(router, responses=responses, dependencies=keyed)
    # OpenAI-shaped errors, documented by the router itself (not the envelope)
    app.include_router(openai_front.router, dependencies=keyed)
    mounted: list[str] = []
    for name, plugged in registry.items() if registry is not None else ():
        own = plugged.router()
        if own is not None:  # an app answers over its KBs: a key must be allowed them all
            app_keyed = [*keyed, Depends(require_app_kbs(plugged))]
            app.include_router(own, responses=responses, dependencies=app_keyed)
            mounted.append(name)
    app.state.app_routers = mounted
    ui.mount(app, STATIC_DIR, dependencies=keyed)
