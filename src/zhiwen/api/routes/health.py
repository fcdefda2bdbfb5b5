"""``GET /healthz`` (liveness) and ``GET /metrics`` (Prometheus text format, default registry)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field

from zhiwen import __version__
from zhiwen.appkit.deps import KBRegistry, get_kb_registry
from zhiwen.appkit.envelope import Envelope, ok

router = APIRouter(tags=["ops"])


class Health(BaseModel):
    status: str = Field(description="ok")
    version: str
    kbs: int = Field(description="知识库数量")
    apps: list[str] = Field(default_factory=list, description="已安装的应用")


@router.get("/healthz", summary="存活检查", response_model=Envelope[Health])
def healthz(request: Request, kbs: KBRegistry = Depends(get_kb_registry)) -> dict[str, Any]:
    apps = sorted(getattr(request.app.state, "apps", {}) or {})
    return ok({"status": "ok", "version": __version__, "kbs": len(kbs.names()), "apps": apps})


@router.get("/metrics", summary="Prometheus 指标", response_class=Response)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
