"""Exception handlers: every failure becomes a 4xx/5xx ``{code, message, data}`` envelope.

* :class:`~zhiwen.errors.ZhiwenError` → its ``http_status`` / ``code`` / ``message``; ``detail``
  (technical, English) and ``data`` go under ``data``.
* request validation → 422 with 3001 (missing field, ``缺少必需参数：top_k``), 3002 (wrong type,
  ``参数类型错误：top_k``) or 3003 (value out of range / invalid); malformed JSON → 400 / 3002.
* Starlette HTTP errors (unknown route 404, wrong method 405, body parse error 400) → envelope.
* anything else → 500 / 1099, logged with the request id (the request middleware also catches
  errors that escape the app, so this is a second net).

Requests under ``/v1/`` (the OpenAI front door, :mod:`zhiwen.api.openai`) get OpenAI's shape
instead, ``{"error": {message, type, param, code}}``: validation errors → 400
``invalid_request_error``, a ZhiwenError → its mapped status / type / code (an unknown model →
404 ``model_not_found``), so the official SDKs raise their usual exceptions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from zhiwen.api.openai import errors as openai_errors
from zhiwen.errors import ZhiwenError, with_setup_hint
from zhiwen.httpkit.deps import get_apps
from zhiwen.httpkit.envelope import error_response
from zhiwen.validation import describe, kind_of, predicate, raw_errors

log = logging.getLogger(__name__)

MISSING = 3001
WRONG_TYPE = 3002
INVALID = 3003

def field_name(loc: Sequence[Any]) -> str:
    """``("body", "filters", "price")`` → ``filters.price``; the body itself → ``body``."""
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:] if len(parts) > 1 else parts
    return ".".join(parts) or "body"


def classify_validation_error(err: dict[str, Any]) -> tuple[int, int, str]:
    """One pydantic error → (http status, error code, Chinese message).

    The wording comes from :mod:`zhiwen.validation` (one table for every interface); a custom
    ``zhiwen_*`` error (a unit guard, an empty question) is shown as it is.
    """
    loc = tuple(err.get("loc", ()))
    kind = kind_of(err)
    if kind == "json":
        pos = loc[1] if len(loc) > 1 else "?"
        return 400, WRONG_TYPE, f"请求体不是合法的 JSON（位置 {pos}）"
    name = field_name(loc)
    if kind == "missing":
        if name == "body":
            return 422, MISSING, "缺少必需参数：请求体（JSON）"
        return 422, MISSING, f"缺少必需参数：{name}"
    if kind == "type":
        if name == "body":
            return 422, WRONG_TYPE, "参数类型错误：请求体应为 JSON 对象"
        text = predicate(err)
        return 422, WRONG_TYPE, f"参数类型错误：{name}" + (f"（{text}）" if text else "")
    return 422, INVALID, describe(err, name)


def _errors_data(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """pydantic's raw errors for ``data.errors``, each field named as the message names it."""
    out = raw_errors(errors)
    for item, err in zip(out, errors, strict=False):
        item["field"] = "body" if err.get("type") == "json_invalid" else field_name(err.get("loc", ()))
    return out


async def zhiwen_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ZhiwenError)
    exc = with_setup_hint(exc, get_apps(request).setup_hint)  # a KB raised missing below the apps
    if openai_errors.is_openai_path(request.url.path):
        return openai_errors.zhiwen_error_response(exc)
    if exc.http_status >= 500:
        log.warning("request failed: %s", exc, extra={"code": exc.code})
    data: dict[str, Any] = {}
    if exc.detail:
        data["detail"] = exc.detail
    if exc.data is not None:
        data["extra"] = jsonable_encoder(exc.data)
        if isinstance(exc.data, dict) and "errors" in exc.data:  # bad rows: where a 422's field errors are
            data["errors"] = data["extra"]["errors"]
    headers = dict(exc.headers)  # e.g. Retry-After of a 503
    if exc.http_status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return error_response(exc.http_status, exc.code, exc.message, data or None, headers or None)


async def validation_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    if openai_errors.is_openai_path(request.url.path):
        return openai_errors.validation_error_response(errors, classify_validation_error, field_name)
    if not errors:
        return error_response(422, INVALID, "参数取值无效")
    # the most basic problem first: JSON syntax, then a missing field, then types, then values
    ranked = sorted(
        errors, key=lambda e: classify_validation_error(e)[1] if e.get("type") != "json_invalid" else 0
    )
    status, code, message = classify_validation_error(ranked[0])
    return error_response(status, code, message, {"errors": _errors_data(errors)})


_HTTP_CODES = {
    401: (3006, "未授权：缺少或错误的访问令牌"),
    404: (3004, "资源不存在"),
    413: (3005, "请求内容过大"),
}


async def http_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    if openai_errors.is_openai_path(request.url.path):
        headers = dict(exc.headers or {})
        return openai_errors.http_error_response(status, request.method, request.url.path, headers)
    if status in _HTTP_CODES:
        code, message = _HTTP_CODES[status]
    elif status == 405:
        code, message = INVALID, f"不支持的请求方法：{request.method}"
    elif status == 400:
        code, message = WRONG_TYPE, "请求体无法解析，请发送 UTF-8 编码的 JSON"
    elif status < 500:
        code, message = INVALID, "请求无效"
    else:
        code, message = 1099, "服务暂时不可用，请稍后重试"
    detail = exc.detail if isinstance(exc.detail, str) else None
    return error_response(
        status, code, message, {"detail": detail} if detail else None, dict(exc.headers or {})
    )


async def unexpected_error_handler(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    if openai_errors.is_openai_path(request.url.path):
        return openai_errors.server_error_response()
    return error_response(500, 1099, "服务暂时不可用，请稍后重试")


def install_exception_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ZhiwenError, zhiwen_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(Exception, unexpected_error_handler)
