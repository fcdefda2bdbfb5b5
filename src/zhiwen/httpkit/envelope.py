"""The response envelope ``{code, message, data}``: code 0 = success.

Every JSON response of the API, errors included, has this shape. Routers of the apps build
their success responses with :func:`ok` and raise :class:`zhiwen.errors.ZhiwenError` subclasses
for failures (the app's exception handlers turn them into the envelope).

Example::

    from zhiwen.httpkit.envelope import Envelope, ok

    @router.get("/thing", response_model=Envelope[ThingOut])
    def thing() -> dict[str, Any]:
        return ok({"name": "x"})          # {"code": 0, "message": "success", "data": {...}}
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from fastapi.responses import JSONResponse
from pydantic import BaseModel

T = TypeVar("T")


class Envelope(BaseModel, Generic[T]):
    """The response model of every JSON endpoint (use ``Envelope[MyData]`` for OpenAPI docs)."""

    code: int = 0
    message: str = "success"
    data: T | None = None


def ok(data: Any = None, message: str = "success") -> dict[str, Any]:
    """A success envelope (a plain dict, so FastAPI serialises ``data`` with its encoder)."""
    return {"code": 0, "message": message, "data": data}


def error_body(code: int, message: str, data: Any = None) -> dict[str, Any]:
    return {"code": code, "message": message, "data": data}


def error_response(
    status: int, code: int, message: str, data: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, data), status_code=status, headers=headers)


class ErrorEnvelope(BaseModel):
    """Every error response: an error code (≠ 0), a Chinese message, optional details."""

    code: int
    message: str
    data: Any = None


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorEnvelope, "description": description}


#: the error responses every route may give, for the OpenAPI spec (``include_router(responses=…)``)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _error("请求格式错误（如 JSON 无法解析）"),
    401: _error("未授权"),
    404: _error("不存在（知识库、文档、工具）"),
    413: _error("请求内容过大"),
    422: _error("参数缺失、类型错误或取值无效（3001/3002/3003/2001）"),
    429: _error("请求过于频繁"),
    503: _error("依赖暂时不可用（如数据库），可稍后重试"),
}
