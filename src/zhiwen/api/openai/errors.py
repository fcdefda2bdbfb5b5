"""Errors of the OpenAI front door in OpenAI's shape: ``{"error": {message, type, param, code}}``.

Every response under ``/v1/`` that is not a success has this shape, so the official SDKs raise
their usual exceptions (``NotFoundError`` for an unknown model, ``BadRequestError``,
``AuthenticationError`` …). The rest of the API keeps the ``{code, message, data}`` envelope;
:mod:`zhiwen.api.handlers` asks :func:`is_openai_path` which shape a request gets.

| cause | status | type | code |
|-------|--------|------|------|
| unknown model | 404 | invalid_request_error | model_not_found |
| app whose KBs are not built | 404 | invalid_request_error | model_not_ready |
| validation / bad JSON | 400 | invalid_request_error | missing_required_parameter, invalid_type, … |
| wrong or missing key | 401 | invalid_request_error | invalid_api_key |
| a model over a KB the key may not read | 403 | invalid_request_error | permission_denied |
| a cross-site request (foreign ``Origin``) | 403 | invalid_request_error | cross_site_request |
| an unknown ``Host`` | 421 | invalid_request_error | misdirected_request |
| unknown ``/v1/`` route | 404 | invalid_request_error | unknown_url |
| LLM / store failures | 429 / 5xx | rate_limit_error / server_error | … |

Messages are Chinese (the user reads them in the chat client).

Example::

    >>> raise ModelNotFound("no-such-kb")        # → 404 {"error": {"code": "model_not_found", …}}
    >>> openai_error_response(400, "messages 不能为空", param="messages").status_code
    400
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from zhiwen import errors as zerr

log = logging.getLogger(__name__)
T = TypeVar("T")

PREFIX = "/v1/"

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"
RATE_LIMIT = "rate_limit_error"


def is_openai_path(path: str) -> bool:
    """Whether a request path belongs to the OpenAI front door (its errors are OpenAI-shaped)."""
    return path.startswith(PREFIX) or path == PREFIX.rstrip("/")


class OpenAIError(zerr.ZhiwenError):
    """An error with an explicit OpenAI ``type`` / ``code`` / ``param``."""

    http_status = 400
    code = 3003
    error_type = INVALID_REQUEST
    error_code: str | None = "invalid_value"

    def __init__(
        self,
        detail: str = "",
        *,
        message: str | None = None,
        param: str | None = None,
        status: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(detail, message=message)
        self.param = param
        if status is not None:
            self.http_status = status
            if status >= 500:
                self.error_type = SERVER_ERROR
        if error_code is not None:
            self.error_code = error_code


class ModelNotFound(OpenAIError):
    http_status = 404
    code = 3004
    error_code = "model_not_found"

    def __init__(self, model: str) -> None:
        super().__init__(
            f"model {model!r} does not exist",
            message=f"模型不存在：{model}（可用模型见 GET /v1/models）",
            param="model",
        )


class ModelNotReady(OpenAIError):
    """An app model whose knowledge bases are not built yet."""

    http_status = 404
    code = 3004
    error_code = "model_not_ready"


class InternalError(OpenAIError):
    """An unexpected failure inside an app or a model, already logged with its traceback."""

    http_status = 500
    code = 1099
    error_type = SERVER_ERROR
    error_code = "internal_error"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail, message="服务暂时不可用，请稍后重试")


async def guarded(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``func`` in the thread pool; an unexpected exception becomes a logged 500 in OpenAI's shape.

    (The request middleware's last-resort 500 is the envelope, so the front door catches its
    own.) ZhiwenErrors and HTTP errors pass through to the handlers.
    """
    try:
        return await run_in_threadpool(func, *args, **kwargs)
    except (zerr.ZhiwenError, HTTPException):
        raise
    except Exception as exc:
        log.exception("OpenAI front door: %s failed", getattr(func, "__qualname__", func))
        raise InternalError(type(exc).__name__) from exc


class InvalidAPIKey(OpenAIError):
    http_status = 401
    code = 3006
    error_code = "invalid_api_key"


# -- the error body and its OpenAPI model ------------------------------------------------------
class ErrorDetail(BaseModel):
    message: str = Field(description="错误说明（中文）")
    type: str = Field(description="错误类别：invalid_request_error、rate_limit_error、server_error")
    param: str | None = Field(None, description="出错的参数")
    code: str | None = Field(None, description="错误代码，如 model_not_found、invalid_api_key")


class ErrorResponse(BaseModel):
    """OpenAI 格式的错误响应。"""

    error: ErrorDetail


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def openai_error_response(
    status: int,
    message: str,
    *,
    type_: str = INVALID_REQUEST,
    code: str | None = "invalid_value",
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_body(message, type_, code, param), status_code=status, headers=headers)


# ZhiwenError class → (status, type, code); the first matching class wins
_ZHIWEN_MAP: tuple[tuple[type[zerr.ZhiwenError], int, str, str], ...] = (
    (zerr.KnowledgeBaseNotFound, 404, INVALID_REQUEST, "model_not_found"),
    (zerr.NotFound, 404, INVALID_REQUEST, "not_found"),
    (zerr.MissingParameter, 400, INVALID_REQUEST, "missing_required_parameter"),
    (zerr.WrongParameterType, 400, INVALID_REQUEST, "invalid_type"),
    (zerr.InvalidParameter, 400, INVALID_REQUEST, "invalid_value"),
    (zerr.ToolValidationError, 400, INVALID_REQUEST, "invalid_value"),
    (zerr.CalculationError, 400, INVALID_REQUEST, "invalid_value"),
    (zerr.IngestError, 400, INVALID_REQUEST, "invalid_value"),
    (zerr.PayloadTooLarge, 413, INVALID_REQUEST, "request_too_large"),
    (zerr.Unauthorized, 401, INVALID_REQUEST, "invalid_api_key"),
    (zerr.Forbidden, 403, INVALID_REQUEST, "permission_denied"),
    (zerr.CrossSiteRequest, 403, INVALID_REQUEST, "cross_site_request"),
    (zerr.MisdirectedHost, 421, INVALID_REQUEST, "misdirected_request"),
    (zerr.LLMRateLimited, 429, RATE_LIMIT, "rate_limit_exceeded"),
    (zerr.LLMTimeout, 504, SERVER_ERROR, "llm_timeout"),
    (zerr.LLMAuthError, 502, SERVER_ERROR, "llm_misconfigured"),
    (zerr.LLMError, 502, SERVER_ERROR, "llm_error"),
    (zerr.StoreUnavailable, 503, SERVER_ERROR, "service_unavailable"),
)


def describe_zhiwen_error(exc: zerr.ZhiwenError) -> tuple[int, dict[str, Any]]:
    """(status, OpenAI error body) for any :class:`ZhiwenError` (also used for in-stream errors)."""
    if isinstance(exc, OpenAIError):
        return exc.http_status, error_body(exc.message, exc.error_type, exc.error_code, exc.param)
    for cls, status, type_, code in _ZHIWEN_MAP:
        if isinstance(exc, cls):
            return status, error_body(exc.message, type_, code)
    status = exc.http_status if 400 <= exc.http_status < 600 else 500
    type_ = SERVER_ERROR if status >= 500 else INVALID_REQUEST
    return status, error_body(exc.message, type_, "internal_error" if status >= 500 else "invalid_value")


def zhiwen_error_response(exc: zerr.ZhiwenError) -> JSONResponse:
    status, body = describe_zhiwen_error(exc)
    if status >= 500:
        log.warning("request failed: %s", exc, extra={"code": exc.code})
    headers = dict(exc.headers)  # e.g. Retry-After of a 503
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(body, status_code=status, headers=headers or None)


_VALIDATION_CODES = {3001: "missing_required_parameter", 3002: "invalid_type", 3003: "invalid_value"}


def validation_error_response(
    errors: Sequence[dict[str, Any]], classify: Any, field_name: Any
) -> JSONResponse:
    """Request validation → 400 ``invalid_request_error`` naming the first (most basic) problem.

    ``classify`` / ``field_name`` are the envelope handlers' own helpers, so both shapes carry
    the same Chinese message.
    """
    if not errors:
        return openai_error_response(400, "参数取值无效")
    ranked = sorted(errors, key=lambda e: 0 if e.get("type") == "json_invalid" else classify(e)[1])
    first = ranked[0]
    _, zcode, message = classify(first)
    if first.get("type") == "json_invalid":
        return openai_error_response(400, message, code="invalid_json")
    code = _VALIDATION_CODES.get(zcode, "invalid_value")
    return openai_error_response(400, message, code=code, param=field_name(first.get("loc", ())))


def http_error_response(status: int, method: str, path: str, headers: dict[str, str] | None) -> JSONResponse:
    """Starlette's own errors (unknown route, wrong method, unparsable body) under ``/v1/``."""
    known = {
        404: (f"接口不存在：{method} {path}", "unknown_url"),
        405: (f"不支持的请求方法：{method} {path}", "method_not_allowed"),
        401: ("未授权：缺少或错误的 API Key", "invalid_api_key"),
        413: ("请求内容过大", "request_too_large"),
    }
    if status >= 500:
        return server_error_response()
    message, code = known.get(status, ("请求无效，请发送 UTF-8 编码的 JSON", "invalid_request"))
    return openai_error_response(status, message, code=code, headers=headers)


def server_error_response() -> JSONResponse:
    return openai_error_response(500, "服务暂时不可用，请稍后重试", type_=SERVER_ERROR, code="internal_error")


def _doc(description: str) -> dict[str, Any]:
    return {"model": ErrorResponse, "description": description}


#: the error responses of every ``/v1/`` route, for the OpenAPI spec. ``default`` covers the
#: rest (429, 5xx) and keeps FastAPI from documenting its envelope-less 422 (never sent here).
OPENAI_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _doc("请求无效：参数缺失、类型错误、取值无效或 JSON 无法解析（invalid_request_error）"),
    401: _doc("API Key 缺失或错误（invalid_api_key），仅在配置了 API Key 或管理员令牌时"),
    403: _doc("API Key 无权访问该模型的知识库（permission_denied），或跨站请求（cross_site_request）"),
    404: _doc("模型不存在（model_not_found）或应用的知识库尚未构建（model_not_ready）"),
    "default": _doc("其他错误：429 rate_limit_error，5xx server_error"),
}
