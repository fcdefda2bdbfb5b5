"""``GET /healthz`` (liveness and each dependency's state) and ``GET /metrics`` (Prometheus).

Both are ``async`` and touch nothing that can block: no thread-pool slot (a hung LLM or reranker
may hold many), no network, no model loading. ``/healthz`` reads in-memory state only — the
breakers, bulkheads and admission queues of :mod:`zhiwen.resilience`, whether the reranker's
model is on disk (a ``stat``, remembered) — plus the KB directory listing.

``status`` is ``ok``, or ``degraded`` when a breaker is open or an enabled reranker cannot run;
the HTTP status stays 200 (the process is alive and answers, degraded).

``/healthz`` is public (``router``: probes carry no key); ``/metrics`` (``metrics_router``) needs
a key like every other route once credentials are configured (Prometheus: ``bearer_token``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field

from zhiwen import __version__
from zhiwen.config import Settings
from zhiwen.httpkit.deps import get_dynamic_settings_dep, get_kb_registry, get_settings_dep
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.resilience import get_resilience
from zhiwen.resilience.breaker import STATE_OPEN
from zhiwen.retrieve.rerank import get_reranker

router = APIRouter(tags=["ops"])
metrics_router = APIRouter(tags=["ops"])


class Health(BaseModel):
    status: str = Field(description="ok；degraded：有熔断打开或重排模型不可用（仍可服务，已降级）")
    version: str
    kbs: int = Field(description="知识库数量")
    apps: list[str] = Field(default_factory=list, description="已安装的应用")
    dependencies: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="llm、rerank、embedding：是否配置、熔断状态、占用情况"
    )
    bulkheads: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="每类工作的并发上限、运行中、排队中与拒绝次数"
    )


def _breaker(kind: str, endpoint: str) -> dict[str, Any]:
    """The breaker of the configured endpoint (closed until the first call creates it)."""
    breaker = get_resilience().breakers_of(kind).get(endpoint)
    return breaker.snapshot() if breaker is not None else {"state": "closed", "failures": 0}


def _rerank(request: Request, settings: Settings) -> dict[str, Any]:
    cfg = get_dynamic_settings_dep(request).get().rerank
    out: dict[str, Any] = {"enabled": cfg.enabled, "backend": cfg.backend}
    if not cfg.enabled:
        return {**out, "state": "disabled"}
    out["model" if cfg.backend == "cross_encoder" else "endpoint"] = (
        cfg.model if cfg.backend == "cross_encoder" else cfg.endpoint
    )
    try:
        reranker = get_reranker(cfg, api_key=settings.rerank.api_key)
    except Exception as exc:  # a bad backend name: say so, never fail the health check
        return {**out, "state": "unavailable", "message": str(getattr(exc, "message", exc))}
    out.update(reranker.status())
    breaker = get_resilience().breakers_of("rerank").get(reranker.name)
    if breaker is not None:
        out["breaker"] = breaker.snapshot()
    return out


def dependencies(request: Request) -> dict[str, dict[str, Any]]:
    settings = get_settings_dep(request)
    llm: dict[str, Any] = {"configured": settings.llm.configured}
    if settings.llm.base_url:
        endpoint = settings.llm.base_url.rstrip("/").removesuffix("/chat/completions")
        llm.update(endpoint=endpoint, breaker=_breaker("llm", endpoint))
    embedding: dict[str, Any] = {"provider": settings.embedding.provider}
    if settings.embedding.provider == "openai" and settings.embedding.base_url:
        endpoint = settings.embedding.base_url.rstrip("/")
        embedding.update(endpoint=endpoint, breaker=_breaker("embedding", endpoint))
    return {"llm": llm, "rerank": _rerank(request, settings), "embedding": embedding}


def _degraded(deps: dict[str, dict[str, Any]]) -> bool:
    for dep in deps.values():
        if dep.get("state") == "unavailable":
            return True
        if (dep.get("breaker") or {}).get("state") == STATE_OPEN:
            return True
    return False


@router.get("/healthz", summary="存活检查与依赖状态", response_model=Envelope[Health])
async def healthz(request: Request) -> dict[str, Any]:
    apps = sorted(getattr(request.app.state, "apps", {}) or {})
    deps = dependencies(request)
    return ok(
        {
            "status": "degraded" if _degraded(deps) else "ok",
            "version": __version__,
            "kbs": len(get_kb_registry(request).names()),
            "apps": apps,
            "dependencies": deps,
            "bulkheads": get_resilience().snapshot(),
        }
    )


@metrics_router.get("/metrics", summary="Prometheus 指标", response_class=Response)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
