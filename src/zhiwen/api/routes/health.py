"""``GET /healthz`` (liveness) and ``GET /metrics`` (Prometheus text format, default registry)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from zhiwen import __version__
from zhiwen.appkit.deps import KBRegistry, get_kb_registry
from zhiwen.appkit.envelope import ok

router = APIRouter(tags=["ops"])


@router.get("/healthz", summary="存活检查")
def healthz(kbs: KBRegistry = Depends(get_kb_registry)) -> dict[str, Any]:
    return ok({"status": "ok", "version": __version__, "kbs": len(kbs.names())})


@router.get("/metrics", summary="Prometheus 指标", response_class=Response)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
