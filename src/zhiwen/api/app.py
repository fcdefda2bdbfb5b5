"""The FastAPI service: engine routes + every app router, one envelope, one error table.

Routes of the engine:

| method | path | what |
|--------|------|------|
| GET | ``/`` | web UI (static, Chinese) |
| GET | ``/healthz`` | liveness |
| GET | ``/metrics`` | Prometheus metrics |
| GET | ``/api/v1/kbs`` , ``/api/v1/kbs/{kb}`` | knowledge bases and their info |
| POST | ``/knowledge-base/search`` | adaptive search (rerank, thresholds, MMR; seed 004) |
| GET/PUT/DELETE | ``/admin/settings`` | runtime settings (bearer token) |
| GET | ``/docs`` , ``/openapi.json`` | OpenAPI |

Apps add theirs through :data:`zhiwen.apps.registry.ROUTERS` (a router that fails to import is
logged and skipped). Reusable pieces for app routers: :mod:`zhiwen.appkit.envelope` (``ok``),
:mod:`zhiwen.appkit.deps` (settings, KB registry, ``Question``).

Example::

    >>> from fastapi.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.get("/healthz").json()["code"]
    0
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from zhiwen import __version__
from zhiwen.appkit.deps import KBRegistry
from zhiwen.config.runtime import DynamicSettingsService
from zhiwen.api.handlers import install_exception_handlers
from zhiwen.api.middleware import BodyLimitMiddleware, RequestContextMiddleware
from zhiwen.api.routes import admin, health, kbs, search, ui
from zhiwen.apps.registry import ROUTERS
from zhiwen.config import Settings, get_settings

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).parent / "static"


def load_app_routers(specs: tuple[str, ...] | list[str] = ROUTERS) -> list[tuple[str, APIRouter]]:
    """Import ``module:attribute`` routers; failures are logged and skipped (one broken app
    must not take the service down)."""
    out: list[tuple[str, APIRouter]] = []
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        try:
            router = getattr(importlib.import_module(module_name), attr or "router")
        except Exception as exc:
            log.warning("app router %s not mounted: %s: %s", spec, type(exc).__name__, exc)
            continue
        if not isinstance(router, APIRouter):
            log.warning("app router %s is not an APIRouter; skipped", spec)
            continue
        out.append((spec, router))
    return out


def create_app(settings: Settings | None = None, *, app_routers: bool = True) -> FastAPI:
    """Build the service. ``settings`` default to :func:`zhiwen.config.get_settings`."""
    settings = settings or get_settings()

    app = FastAPI(
        title="知问 zhiwen",
        version=__version__,
        description=(
            "中文优先、离线优先的检索增强问答服务。"
            "所有 JSON 响应均为 `{code, message, data}`，code 0 表示成功。"
        ),
    )
    app.state.settings = settings
    app.state.kbs = KBRegistry(settings)
    app.state.dynamic_settings = DynamicSettingsService(settings)

    install_exception_handlers(app)
    # added last = outermost: the context middleware sees (and ids, counts) the 413s too
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.api.max_body_bytes)
    if settings.api.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api.cors_origins,
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["*"],
        )
    app.add_middleware(RequestContextMiddleware, settings=settings)

    for module in (health, kbs, search, admin):
        app.include_router(module.router)
    mounted: list[str] = []
    if app_routers:
        for spec, router in load_app_routers():
            app.include_router(router)
            mounted.append(spec)
    app.state.app_routers = mounted
    ui.mount(app, STATIC_DIR)
    return app
