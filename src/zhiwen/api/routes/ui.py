"""The web UI: ``GET /`` serves one static page (plain HTML, CSS and ES modules; no build step,
no CDN: everything is under ``static/`` and ships in the wheel).

``GET /api/v1/ui-config`` tells the page which endpoints exist (app routers may be missing),
the installed apps with their KBs (those the caller's key may use) and the command that builds
them (each tab names it while they are missing), and whether an LLM is configured. The page and
its files are public; ``ui-config`` and every API call need a key once credentials are
configured: the page asks for one on a 401 and keeps it for the tab (``sessionStorage``),
sending ``Authorization: Bearer …`` with every call (``js/auth.js``).

The page is served with a Content-Security-Policy that allows only this server's own scripts,
styles and connections: the answers it renders (markdown built as DOM nodes, never as HTML)
could not run a script even if a renderer bug let markup through.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.params import Depends as DependsParam
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from zhiwen import __version__
from zhiwen.appkit.app import BaseApp
from zhiwen.appkit.registry import setup_command
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_dynamic_settings_dep, get_settings_dep
from zhiwen.httpkit.envelope import ERROR_RESPONSES, Envelope, ok

router = APIRouter(tags=["ui"])


#: the page loads only its own files; ``style-src`` admits no inline style attributes either
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
)


class UIAppKB(BaseModel):
    name: str
    description: str = ""
    required: bool = Field(True, description="应用需要它才能回答（false：可选）")


class UIApp(BaseModel):
    name: str
    title: str
    kbs: list[UIAppKB] = Field(default_factory=list, description="应用使用的知识库（默认名称与说明）")
    setup_command: str = Field("", description="建立这些知识库的命令（页面在它们缺失时提示）")


class UIConfig(BaseModel):
    version: str
    endpoints: dict[str, bool] = Field(description="哪些接口可用")
    apps: list[UIApp] = Field(default_factory=list, description="已安装的应用（名称、标题、知识库）")
    llm_configured: bool
    rerank_enabled: bool
    max_question_chars: int
    max_top_k: int


@router.get("/api/v1/ui-config", summary="网页界面配置", response_model=Envelope[UIConfig])
def ui_config(request: Request, access: Access = Depends(get_access)) -> dict[str, Any]:
    paths = set(request.app.openapi().get("paths", {}))  # cached by FastAPI after the first call
    settings = get_settings_dep(request)
    dynamic = get_dynamic_settings_dep(request).get()
    return ok(
        {
            "version": __version__,
            "endpoints": {
                "qa": "/api/v1/qa" in paths,
                "ask": "/ask" in paths,
                "search": "/knowledge-base/search" in paths,
            },
            "apps": [_app(a) for a in _usable_apps(request, access)],
            "llm_configured": settings.llm.configured,
            "rerank_enabled": dynamic.rerank.enabled,
            "max_question_chars": settings.api.max_question_chars,
            "max_top_k": settings.retrieval.max_top_k,
        }
    )


def _usable_apps(request: Request, access: Access) -> list[BaseApp]:
    """The installed apps whose KBs the caller may all read (the others answer 403)."""
    apps = (getattr(request.app.state, "apps", {}) or {}).values()
    return [a for a in apps if all(access.can_read(kb.name) for kb in getattr(a, "kbs", ()))]


def _app(a: BaseApp) -> dict[str, Any]:
    kbs = [
        {"name": kb.name, "description": kb.description, "required": kb.required}
        for kb in getattr(a, "kbs", ())
    ]
    return {"name": a.name, "title": a.title, "kbs": kbs, "setup_command": setup_command(a)}


def mount(app: FastAPI, static_dir: Path, *, dependencies: list[DependsParam] | None = None) -> None:
    """The page and its files (public) and ``ui-config`` (behind ``dependencies``)."""
    index = static_dir / "index.html"
    # ES modules must come as JavaScript; some systems map .js to text/plain (Windows registry)
    mimetypes.add_type("text/javascript", ".js")

    @app.get("/", include_in_schema=False)
    def home() -> FileResponse:
        return FileResponse(
            index,
            media_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"},
        )

    app.include_router(router, responses=ERROR_RESPONSES, dependencies=dependencies)
    app.mount("/static", StaticFiles(directory=static_dir), name="static")
