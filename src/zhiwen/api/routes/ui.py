"""The web UI: ``GET /`` serves one static page (plain HTML, CSS and ES modules; no build step,
no CDN: everything is under ``static/`` and ships in the wheel).

``GET /api/v1/ui-config`` tells the page which endpoints exist (app routers may be missing),
the installed apps with their KBs, and whether an LLM is configured.

The page is served with a Content-Security-Policy that allows only this server's own scripts,
styles and connections: the answers it renders (markdown built as DOM nodes, never as HTML)
could not run a script even if a renderer bug let markup through.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from zhiwen import __version__
from zhiwen.appkit.deps import get_dynamic_settings_dep, get_settings_dep
from zhiwen.appkit.envelope import ERROR_RESPONSES, Envelope, ok

router = APIRouter(tags=["ui"])


#: the page loads only its own files; ``style-src`` admits no inline style attributes either
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
)


class UIAppKB(BaseModel):
    name: str
    description: str = ""


class UIApp(BaseModel):
    name: str
    title: str
    kbs: list[UIAppKB] = Field(default_factory=list, description="应用使用的知识库（默认名称与说明）")


class UIConfig(BaseModel):
    version: str
    endpoints: dict[str, bool] = Field(description="哪些接口可用")
    apps: list[UIApp] = Field(default_factory=list, description="已安装的应用（名称、标题、知识库）")
    llm_configured: bool
    rerank_enabled: bool
    max_question_chars: int
    max_top_k: int


@router.get("/api/v1/ui-config", summary="网页界面配置", response_model=Envelope[UIConfig])
def ui_config(request: Request) -> dict[str, Any]:
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
            "apps": [
                {
                    "name": a.name,
                    "title": a.title,
                    "kbs": [{"name": kb.name, "description": kb.description} for kb in getattr(a, "kbs", ())],
                }
                for a in (getattr(request.app.state, "apps", {}) or {}).values()
            ],
            "llm_configured": settings.llm.configured,
            "rerank_enabled": dynamic.rerank.enabled,
            "max_question_chars": settings.api.max_question_chars,
            "max_top_k": settings.retrieval.max_top_k,
        }
    )


def mount(app: FastAPI, static_dir: Path) -> None:
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

    app.include_router(router, responses=ERROR_RESPONSES)
    app.mount("/static", StaticFiles(directory=static_dir), name="static")
